"""The shared store: Redis, for several ``rxgem serve`` instances behind a load balancer.

Keys, all under ``prefix`` (``rxgem:resp:``) and the owner's hash tag, so that one
owner's keys share a cluster slot and another owner's are never named::

    <prefix>secret                      the owner secret (no expiry)
    <prefix>{<owner>}:t:<turn id>       hash: created_at, document, previous, items
                                        (the turn's item ids), ancestors, interaction
                                        (absent in turns saved before it), and
                                        a:<item id> → position of each input item
    <prefix>{<owner>}:t:<turn id>:in    list: the input items, in order
    <prefix>{<owner>}:t:<turn id>:out   list: the output items, in order
    <prefix>{<owner>}:i:<item id>       the latest stored item of that id (for
                                        ``item_reference``), tagged with its turn
    <prefix>{<owner>}:s:<key>           a remembered thought signature
    <prefix>{<owner>}:signatures        sorted set: the owner's signature keys, the
                                        oldest first (for ``max_signatures``)

Each expires ``ttl`` after the save (``PEXPIRE``); saving a turn extends the turns it
continues. A save is one ``MULTI``/``EXEC`` round trip, a lookup one round trip, a page
after a cursor and a chain two; input items are paged with ``LRANGE`` on the page's
bounds, never loaded whole. A signature expires ``signature_ttl`` after it was
remembered, the index as long after the owner's latest; remembering is one script
(``REMEMBER``), recalling one round trip (an ``MGET`` per 500 keys). Ids are validated
before they reach a key, and no command takes a pattern (no ``KEYS``, no ``SCAN``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

import msgspec

from ._errors import (
    ChainTooLongError,
    InvalidPageError,
    StoreError,
    StoreTimeoutError,
    StoreUnavailableError,
)
from ._ids import valid_item_id, valid_turn_id
from ._limits import (
    DEFAULT_MAX_CHAIN,
    DEFAULT_MAX_ITEMS,
    DEFAULT_MAX_RECORD_BYTES,
    DEFAULT_TIMEOUT,
    check_owner,
    check_page,
    check_turn,
)
from ._owner import derive_owner, new_secret
from ._records import ItemsPage, Order, StoredItem, StoredTurn
from ._redis_scripts import DELETE, LINK, REMEMBER
from ._signatures import (
    DEFAULT_MAX_SIGNATURES,
    DEFAULT_SIGNATURE_TTL,
    check_signature_options,
    keys_to_recall,
    signatures_to_keep,
)

if TYPE_CHECKING:
    from redis.asyncio import Redis
    from redis.typing import EncodableT, FieldT

__all__ = ["DEFAULT_PREFIX", "RedisStore"]

T = TypeVar("T")

DEFAULT_PREFIX = "rxgem:resp:"
_BATCH = 500
_ENCODER = msgspec.msgpack.Encoder()
_DECODER = msgspec.msgpack.Decoder(tuple[str, bytes, bytes | None])


class RedisStore:
    """A :class:`ResponseStore` in Redis (``pip install 'rxgem[server]'`` brings the client).

    Args:
        url: ``redis://[[user]:password@]host:port/db``, ``rediss://...`` (TLS) or
            ``unix:///path/to/redis.sock?db=0``.
        ttl: seconds a turn is kept after it is saved; ``None`` keeps it until deleted.
        secret: the owner secret (at least 16 bytes); by default one is created under
            ``<prefix>secret`` on first use (see :mod:`rxgem.store` on owner ids).
        prefix: the start of every key.
        timeout: seconds an operation may take (connecting included) before
            :class:`StoreTimeoutError`.
        max_record_bytes: the largest turn :meth:`save` accepts.
        max_items: the most items a turn may have.
        max_chain: the most turns :meth:`chain` reads (:class:`ChainTooLongError`
            beyond). A turn saved past it is marked so when it is saved: a larger
            ``max_chain`` later does not bring its conversation back.
        signature_ttl: seconds a remembered signature is kept.
        max_signatures: the most signatures an owner keeps (the oldest go beyond;
            :data:`~rxgem.store.DEFAULT_MAX_SIGNATURES` says what that costs).
    """

    def __init__(
        self,
        url: str,
        *,
        ttl: float | None = None,
        secret: bytes | None = None,
        prefix: str = DEFAULT_PREFIX,
        timeout: float = DEFAULT_TIMEOUT,
        max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES,
        max_items: int = DEFAULT_MAX_ITEMS,
        max_chain: int = DEFAULT_MAX_CHAIN,
        signature_ttl: float = DEFAULT_SIGNATURE_TTL,
        max_signatures: int = DEFAULT_MAX_SIGNATURES,
    ) -> None:
        from redis.asyncio import Redis

        if ttl is not None and not ttl > 0:
            raise ValueError("ttl is a positive number of seconds, or None")
        if not timeout > 0:
            raise ValueError("timeout is a positive number of seconds")
        check_signature_options(signature_ttl, max_signatures)
        if secret is not None:
            derive_owner(secret, "")  # rejects a short secret now, not on first use
        if any(c in prefix for c in "{}*?[]\\ "):
            raise ValueError("a key prefix has no braces, spaces or pattern characters")
        self.ttl = ttl
        self.prefix = prefix
        self.timeout = timeout
        self.max_record_bytes = max_record_bytes
        self.max_items = max_items
        self.max_chain = max_chain
        self.signature_ttl = signature_ttl
        self.max_signatures = max_signatures
        self._secret = secret
        self._ttl_ms = 0 if ttl is None else max(1, round(ttl * 1000))
        self._signature_ttl_ms = max(1, round(signature_ttl * 1000))
        self._redis: Redis = Redis.from_url(
            url, socket_timeout=timeout, socket_connect_timeout=timeout
        )

    def __repr__(self) -> str:
        return f"RedisStore(prefix={self.prefix!r}, ttl={self.ttl!r})"

    async def __aenter__(self) -> RedisStore:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    # -- the ResponseStore interface

    async def owner(self, token: str) -> str:
        if self._secret is None:
            self._secret = await self._run(self._load_secret)
        return derive_owner(self._secret, token)

    async def save(self, turn: StoredTurn) -> None:
        check_turn(turn, max_record_bytes=self.max_record_bytes, max_items=self.max_items)
        await self._run(lambda: self._save(turn))

    async def get(self, turn_id: str, owner: str) -> StoredTurn | None:
        check_owner(owner)
        if not valid_turn_id(turn_id):
            return None
        return await self._run(lambda: self._get(turn_id, owner))

    async def delete(self, turn_id: str, owner: str) -> bool:
        check_owner(owner)
        if not valid_turn_id(turn_id):
            return False
        key = self._turn_key(owner, turn_id)
        found = await self._run(
            lambda: self._redis.eval(DELETE, 1, key, self._base(owner), turn_id)
        )
        return bool(found)

    async def input_items(
        self,
        turn_id: str,
        owner: str,
        *,
        after: str | None = None,
        limit: int = 20,
        order: Order = "desc",
    ) -> ItemsPage | None:
        check_owner(owner)
        check_page(limit, order)
        if not valid_turn_id(turn_id):
            return None
        if after is not None and not valid_item_id(after):
            raise InvalidPageError("after is not an input item of this response")
        return await self._run(lambda: self._input_items(turn_id, owner, after, limit, order))

    async def items(self, item_ids: Sequence[str], owner: str) -> dict[str, StoredItem]:
        check_owner(owner)
        wanted = [item_id for item_id in dict.fromkeys(item_ids) if valid_item_id(item_id)]
        if not wanted:
            return {}
        return await self._run(lambda: self._items(wanted, owner))

    async def chain(self, turn_id: str, owner: str) -> list[StoredTurn] | None:
        check_owner(owner)
        if not valid_turn_id(turn_id):
            return None
        return await self._run(lambda: self._chain(turn_id, owner))

    async def remember_signatures(self, owner: str, signatures: Mapping[str, str]) -> None:
        check_owner(owner)
        kept = signatures_to_keep(signatures, self.max_signatures)
        if kept:
            base = self._base(owner)
            args: list[EncodableT] = [base, self._signature_ttl_ms, self.max_signatures]
            args += [text for pair in kept.items() for text in pair]
            key = f"{base}signatures"
            await self._run(lambda: self._redis.eval(REMEMBER, 1, key, *args))

    async def recall_signatures(self, owner: str, keys: Sequence[str]) -> dict[str, str]:
        check_owner(owner)
        wanted = keys_to_recall(keys)
        if not wanted:
            return {}
        return await self._run(lambda: self._recall(wanted, owner))

    async def aclose(self) -> None:
        await self._redis.aclose()

    # -- keys and errors

    def _base(self, owner: str) -> str:
        return f"{self.prefix}{{{owner}}}:"

    def _turn_key(self, owner: str, turn_id: str) -> str:
        return f"{self._base(owner)}t:{turn_id}"

    async def _run(self, operation: Callable[[], Awaitable[T]]) -> T:
        from redis.exceptions import RedisError
        from redis.exceptions import TimeoutError as RedisTimeoutError

        try:
            async with asyncio.timeout(self.timeout):
                return await operation()
        except StoreError:
            raise
        except (TimeoutError, RedisTimeoutError) as exc:
            raise StoreTimeoutError(f"the store took longer than {self.timeout} s") from exc
        except (RedisError, OSError) as exc:
            raise StoreUnavailableError(f"redis: {exc}") from exc

    # -- the operations

    async def _load_secret(self) -> bytes:
        key = f"{self.prefix}secret"
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.setnx(key, new_secret())
            pipe.get(key)
            _, secret = await pipe.execute()
        if not isinstance(secret, bytes) or len(secret) < 16:
            raise StoreUnavailableError(f"redis: {key} does not hold an owner secret")
        return secret

    async def _save(self, turn: StoredTurn) -> None:
        base = self._base(turn.owner)
        key = self._turn_key(turn.owner, turn.id)
        positions: dict[FieldT, EncodableT] = {}
        for position, item in enumerate(turn.input):
            positions.setdefault(f"a:{item.id}", position)
        fields: dict[FieldT, EncodableT] = {
            "created_at": repr(turn.created_at),
            "document": turn.document,
            "previous": turn.previous_id or "",
            "interaction": turn.interaction_id or "",
            "items": " ".join(item.id for item in (*turn.input, *turn.output)),
            "ancestors": "",
            **positions,
        }
        keys = (key, f"{key}:in", f"{key}:out")
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.delete(*keys)
            pipe.hset(key, mapping=fields)
            if turn.input:
                pipe.rpush(keys[1], *(_encode(item) for item in turn.input))
            if turn.output:
                pipe.rpush(keys[2], *(_encode(item) for item in turn.output))
            mark = turn.id.encode() + b"\n"
            for item in (*turn.input, *turn.output):
                pipe.set(f"{base}i:{item.id}", mark + _encode(item), px=self._ttl_ms or None)
            if turn.previous_id is not None:
                pipe.eval(LINK, 1, key, base, turn.previous_id, self._ttl_ms, self.max_chain)
            if self._ttl_ms:
                for each in keys:
                    pipe.pexpire(each, self._ttl_ms)
            await pipe.execute()

    def _read_turn(self, pipe: Any, owner: str, turn_id: str) -> None:
        key = self._turn_key(owner, turn_id)
        pipe.hmget(key, ["created_at", "document", "previous", "ancestors", "interaction"])
        pipe.lrange(f"{key}:in", 0, -1)
        pipe.lrange(f"{key}:out", 0, -1)

    async def _get(self, turn_id: str, owner: str) -> StoredTurn | None:
        async with self._redis.pipeline(transaction=True) as pipe:
            self._read_turn(pipe, owner, turn_id)
            head, inputs, outputs = await pipe.execute()
        return _turn(owner, turn_id, head, inputs, outputs)

    async def _input_items(
        self, turn_id: str, owner: str, after: str | None, limit: int, order: Order
    ) -> ItemsPage | None:
        key = self._turn_key(owner, turn_id)
        if after is None:
            first, last = (0, limit) if order == "asc" else (-limit - 1, -1)
            async with self._redis.pipeline(transaction=True) as pipe:
                pipe.exists(key)
                pipe.lrange(f"{key}:in", first, last)
                exists, rows = await pipe.execute()
            if not exists:
                return None
        else:
            found, position = await self._redis.hmget(key, ["created_at", f"a:{after}"])
            if found is None:
                return None
            if position is None:
                raise InvalidPageError("after is not an input item of this response")
            at = int(position)
            if order == "asc":
                rows = await self._redis.lrange(f"{key}:in", at + 1, at + 1 + limit)
            elif at == 0:
                rows = []
            else:
                rows = await self._redis.lrange(f"{key}:in", max(0, at - 1 - limit), at - 1)
        if order == "desc":
            rows = rows[::-1]
        page = tuple(_decode(row) for row in rows[:limit])
        return ItemsPage(items=page, has_more=len(rows) > limit)

    async def _items(self, item_ids: Sequence[str], owner: str) -> dict[str, StoredItem]:
        base = self._base(owner)
        async with self._redis.pipeline(transaction=False) as pipe:
            for start in range(0, len(item_ids), _BATCH):
                pipe.mget([f"{base}i:{item_id}" for item_id in item_ids[start : start + _BATCH]])
            batches = await pipe.execute()
        found: dict[str, StoredItem] = {}
        for values in batches:
            for value in values:
                if value is not None:
                    item = _decode(value.partition(b"\n")[2])
                    found[item.id] = item
        return found

    async def _recall(self, keys: Sequence[str], owner: str) -> dict[str, str]:
        base = self._base(owner)
        async with self._redis.pipeline(transaction=False) as pipe:
            for start in range(0, len(keys), _BATCH):
                pipe.mget([f"{base}s:{key}" for key in keys[start : start + _BATCH]])
            batches = await pipe.execute()
        values = (value for batch in batches for value in batch)
        found = zip(keys, values, strict=True)
        return {key: value.decode() for key, value in found if value is not None}

    async def _chain(self, turn_id: str, owner: str) -> list[StoredTurn] | None:
        async with self._redis.pipeline(transaction=True) as pipe:
            self._read_turn(pipe, owner, turn_id)
            head, inputs, outputs = await pipe.execute()
        last = _turn(owner, turn_id, head, inputs, outputs)
        if last is None:
            return None
        ancestors = head[3].decode().split() if head[3] else []
        if ancestors == ["!"] or len(ancestors) + 1 > self.max_chain:
            raise ChainTooLongError(self.max_chain)
        if not ancestors:
            return [last] if last.previous_id is None else None
        async with self._redis.pipeline(transaction=True) as pipe:
            for ancestor in ancestors:
                self._read_turn(pipe, owner, ancestor)
            replies = await pipe.execute()
        turns: list[StoredTurn] = []
        for index, ancestor in enumerate(ancestors):
            turn = _turn(owner, ancestor, *replies[3 * index : 3 * index + 3])
            expected = ancestors[index - 1] if index else None
            if turn is None or turn.previous_id != expected:
                return None  # deleted, expired, or replaced since
            turns.append(turn)
        if last.previous_id != ancestors[-1]:
            return None
        return [*turns, last]


def _encode(item: StoredItem) -> bytes:
    return _ENCODER.encode((item.id, item.data, item.opaque))


def _decode(value: bytes) -> StoredItem:
    item_id, data, opaque = _DECODER.decode(value)
    return StoredItem(item_id, data, opaque)


def _turn(
    owner: str, turn_id: str, head: list[Any], inputs: list[bytes], outputs: list[bytes]
) -> StoredTurn | None:
    created_at, document, previous, _, interaction = head
    if document is None:
        return None
    return StoredTurn(
        id=turn_id,
        owner=owner,
        created_at=float(created_at),
        document=document,
        input=tuple(_decode(row) for row in inputs),
        output=tuple(_decode(row) for row in outputs),
        previous_id=previous.decode() or None,
        interaction_id=(interaction or b"").decode() or None,
    )
