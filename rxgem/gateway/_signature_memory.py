"""Signature memory: the thought signatures rxgem hands out, kept in the response store so
that a client that echoes an id without its signature gets it back to Gemini.

Most chat clients rebuild the assistant message without ``extra_content``, and stateless
Responses clients send ``function_call`` items by ``call_id`` alone: Gemini 3 then gets
Google's placeholder and loses its reasoning. The server remembers each signature under
its owner (the client's bearer token, as the store derives it) and a key of the model and
the echoed id (:mod:`._signature_keys`); a request's missing signatures are recalled
before it is translated. One store round trip each way, and only when there is something
to remember or recall; what the client sent always wins.

The store failing never fails a request: the answer goes on without memory, with a
warning in the log. A call that still lacks its signature when the request is translated
gets Google's placeholder (:class:`~rxgem.request.PlaceholderWarning`): each such request
is logged as a warning and counted (``rxgem_signature_placeholders_total``).
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from ..core import ChatCompletion, ChatCompletionChunk
from ..request import PlaceholderWarning
from ..store import ResponseStore, StoreError
from ._chat_signatures import ChatSignatures
from ._signature_keys import model_of
from ._trace import Trace

__all__ = ["ChatWatch", "MemorySession", "SignatureMemory", "caught_placeholders"]

T = TypeVar("T")

_NO_STORE_HINT = (
    "with --no-store the server remembers no signature a client drops; --signature-in-id"
    " carries them in the tool-call ids"
)


class SignatureMemory:
    """The app's signature memory, on its store (set by the app's lifespan; ``None``:
    no store, no memory)."""

    def __init__(self, logger: logging.Logger) -> None:
        self.logger = logger
        self.store: ResponseStore | None = None

    async def session(
        self, token: str, body: Mapping[str, Any], record: Trace
    ) -> MemorySession | None:
        """One request's memory (its owner, from ``token``, and model), or ``None``: no
        store, no model, or the store failing (logged)."""
        store = self.store
        model = model_of(body)
        if store is None or model is None:
            return None
        try:
            owner = await store.owner(token)
        except (StoreError, TimeoutError, OSError) as exc:
            self.failed(record, "not read", exc)
            return None
        return MemorySession(self, store, owner, model, record)

    def session_of(
        self, store: ResponseStore, owner: str, model: Any, record: Trace
    ) -> MemorySession | None:
        """The memory of a request on a stored response (its owner and model known)."""
        name = model_of({"model": model})
        if name is None:
            return None
        return MemorySession(self, store, owner, name, record)

    def failed(self, record: Trace, what: str, error: BaseException) -> None:
        self.logger.warning(
            "request %s: thought signatures %s: the store failed (%s)",
            record.request_id,
            what,
            type(error).__name__,
        )

    def placeholders(self, record: Trace, count: int) -> None:
        """``count`` calls of the request went to Gemini with Google's placeholder."""
        if count <= 0:
            return
        hint = _NO_STORE_HINT if self.store is None else "no signature was kept for them"
        self.logger.warning(
            "request %s: %d tool call(s) of the current turn came back without their thought"
            " signature; Google's placeholder was sent, and the model loses its reasoning"
            " (%s)",
            record.request_id,
            count,
            hint,
        )
        if record.telemetry is not None:
            record.telemetry.signatures(placeholders=count)


class MemorySession:
    """One request's side of the memory: its store, owner, model and access record."""

    __slots__ = ("memory", "model", "owner", "record", "store")

    def __init__(
        self,
        memory: SignatureMemory,
        store: ResponseStore,
        owner: str,
        model: str,
        record: Trace,
    ) -> None:
        self.memory = memory
        self.store = store
        self.owner = owner
        self.model = model
        self.record = record

    async def recall(self, keys: Sequence[str]) -> dict[str, str]:
        """The signatures kept under ``keys`` (nothing when the store fails: logged)."""
        if not keys:
            return {}
        try:
            return await self.store.recall_signatures(self.owner, keys)
        except (StoreError, TimeoutError, OSError) as exc:
            self.memory.failed(self.record, "not recalled", exc)
            return {}

    def restored(self, count: int) -> None:
        if count and self.record.telemetry is not None:
            self.record.telemetry.signatures(restored=count)

    async def remember(self, signatures: Mapping[str, str]) -> None:
        """Keep ``signatures`` (nothing to do for none; a store failure is logged)."""
        if not signatures:
            return
        try:
            await self.store.remember_signatures(self.owner, signatures)
        except (StoreError, TimeoutError, OSError) as exc:
            self.memory.failed(self.record, "not remembered", exc)
            return
        if self.record.telemetry is not None:
            self.record.telemetry.signatures(remembered=len(signatures))


class ChatWatch:
    """What a chat answer hands out, collected as it goes out and remembered before its
    end (``[DONE]``, or the JSON) is sent: the client may ask again the moment it has it."""

    __slots__ = ("chunk", "collector", "session")

    def __init__(self, session: MemorySession) -> None:
        self.session = session
        self.collector = ChatSignatures(session.model)
        self.chunk: Callable[[ChatCompletionChunk], None] = self.collector.chunk
        """Reads each streamed chunk: the collector's own (no call in between, per chunk)."""

    def completion(self, completion: ChatCompletion) -> None:
        self.collector.completion(completion)

    async def done(self) -> None:
        await self.session.remember(self.collector.signatures())


def caught_placeholders(work: Callable[[], T]) -> Callable[[], tuple[T, int]]:
    """``work`` made to count the placeholders its translation sent (catching warnings is
    process-wide: run it alone, ``Offload.run_alone``); other warnings are issued again."""

    def counted() -> tuple[T, int]:
        caught: list[warnings.WarningMessage] = []
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                result = work()
        finally:
            for warning in caught:
                if not issubclass(warning.category, PlaceholderWarning):
                    warnings.warn_explicit(
                        warning.message, warning.category, warning.filename, warning.lineno
                    )
        count = sum(1 for w in caught if issubclass(w.category, PlaceholderWarning))
        return result, count

    return counted
