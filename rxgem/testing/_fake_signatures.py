"""FakeGemini's thought signatures: the ones it issues, how it judges those that come back.

Issuing. A signature the fake makes (scenario answers: a call, a text, a thought) is
unforgeable and names what it signs: base64 (as Google's) of a kind byte, a random
nonce, a digest of the part (a call: its name and canonical arguments; a text or a
thought: its text), a tag of the model, and an HMAC of all that under a key drawn per
fake. Signatures in scripted bodies (queued responses, Interactions scripts, cassettes,
scenario files) are remembered as issued when the fake serves them, for any part and
model: the fake did not make them and cannot know what they sign.

Judging (every ``generateContent`` request and stateless Interactions create):

- Google's two dummy values (:data:`DUMMY_SIGNATURES`) are accepted anywhere; each call
  that carries one counts as a placeholder.
- A call the fake signed that comes back without a signature counts as lost, on any
  turn (Google accepts a bare call on an earlier turn, but the model loses its reasoning).
- Any other signature must be one the fake issued, for this model; on a call, for that
  call (same name and arguments; on Interactions, the signature of the nearest signed
  thought step before the step's first call). Otherwise Gemini fails to decode it and
  answers ``400 INVALID_ARGUMENT`` with :data:`CORRUPTED`, on any turn: that is the
  error reports quote verbatim for a signature from another model, or a made-up or
  altered one, in earlier turns as well as the current one (Google's documentation
  names no wording). A text or thought signature is bound to the model, not to its
  text: clients join and split texts, and Google does not require text signatures back.
- A current-turn call without a signature (generateContent: the validation module's
  rule; Interactions, without ``previous_interaction_id``: a step's first
  ``function_call`` with no signed ``thought`` step before it in its step) is refused
  with Google's missing-signature sentence.

Only Gemini 3 (and later) models are refused for these; counting works for every
model, strict or not. Memory is bounded: the remembered scripted signatures and the
signed calls are capped (oldest forgotten first), and so is the list of problems.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Final

from ._fake_response import FakeResponse
from ._gemini_validation import gemini_request_problems

__all__ = ["CORRUPTED", "DUMMY_SIGNATURES", "SignatureBook", "signature_check"]

DUMMY_SIGNATURES: Final = frozenset(
    {"skip_thought_signature_validator", "context_engineering_is_the_way_to_go"}
)
"""The values Google documents for calls Gemini did not make: accepted, and counted."""
CORRUPTED: Final = "Corrupted thought signature."
"""Google's message for a signature it cannot decode (another model's, made up, altered)."""
_MISSING: Final = (
    "Function call is missing a thought_signature in functionCall parts. This is required"
    " for tools to work correctly, and missing thought_signature may lead to degraded model"
    " performance. Additional data, function call `default_api:{name}` , position {position}."
    " Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more"
    " details."
)
_MAJOR: Final = re.compile(r"(?:models/)?gemini-(\d+)")
_CALL: Final = b"c"
_TEXT: Final = b"t"
_THOUGHT: Final = b"h"
_SIZE: Final = 1 + 8 + 16 + 8 + 16  # kind, nonce, digest, model tag, mac
_KEEP: Final = 100_000
_PROBLEMS_KEPT: Final = 1_000
_BODIES_KEPT: Final = 64


def _canonical(value: Any) -> Any:
    """``value`` as a JSON client gives it back (``1.0`` becomes ``1``, as in JavaScript)."""
    if type(value) is float and value.is_integer():
        return int(value)
    if type(value) is dict:
        return {str(k): _canonical(v) for k, v in value.items()}
    if type(value) is list:
        return [_canonical(v) for v in value]
    return value


def _digest(*pieces: Any) -> bytes:
    data = json.dumps(_canonical(list(pieces)), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(data.encode()).digest()[:16]


def _call_digest(name: Any, args: Any) -> bytes:
    return _digest("call", name, args if args is not None else {})


def _tag(model: str) -> bytes:
    return hashlib.sha256(model.removeprefix("models/").encode()).digest()[:8]


def is_gemini_3(model: str) -> bool:
    """Whether ``model`` gets Gemini 3's signature rules (``gemini-3...`` or later)."""
    found = _MAJOR.match(model)
    return found is not None and int(found.group(1)) >= 3


def _dict(value: Any) -> dict[str, Any]:
    return value if type(value) is dict else {}


def _list(value: Any) -> list[Any]:
    return value if type(value) is list else []


def _signature(part: Mapping[str, Any]) -> str | None:
    found = part.get("thoughtSignature", part.get("thought_signature"))
    return found if type(found) is str and found else None


def _json_objects(body: bytes) -> Iterator[Any]:
    """The JSON values of an SSE body's ``data:`` lines, or of a JSON body."""
    if body.lstrip()[:1] in (b"{", b"["):
        try:
            yield json.loads(body)
            return
        except (ValueError, RecursionError):
            pass
    for line in body.splitlines():
        if line.startswith(b"data:"):
            try:
                yield json.loads(line[5:])
            except (ValueError, RecursionError):
                continue


class SignatureBook:
    """One fake's signatures: issues them, remembers scripted ones, judges and counts.

    Thread-safe: the fake's connection threads share it.
    """

    def __init__(self, key: bytes | None = None) -> None:
        self._key = os.urandom(32) if key is None else key
        self._lock = threading.Lock()
        self._scripted: OrderedDict[str, None] = OrderedDict()
        self._signed: OrderedDict[bytes, None] = OrderedDict()
        self._bodies: OrderedDict[int, bytes] = OrderedDict()
        self._placeholders = 0
        self._lost = 0
        self._problems: list[str] = []

    # -- counts

    @property
    def placeholders(self) -> int:
        with self._lock:
            return self._placeholders

    @property
    def lost(self) -> int:
        with self._lock:
            return self._lost

    @property
    def problems(self) -> list[str]:
        with self._lock:
            return list(self._problems)

    # -- issuing

    def call(self, model: str, name: str, args: Mapping[str, Any] | None) -> str:
        """The signature of a call the fake makes (it is remembered as signed)."""
        digest = _call_digest(name, dict(args or {}))
        with self._lock:
            _keep(self._signed, digest)
        return self._issue(_CALL, model, digest)

    def text(self, model: str, value: str) -> str:
        """The signature of a text part the fake sends."""
        return self._issue(_TEXT, model, _digest("text", value))

    def thought(self, model: str, value: str) -> str:
        """The signature of a thought (a summary) the fake sends."""
        return self._issue(_THOUGHT, model, _digest("thought", value))

    def _mac(self, signed: bytes) -> bytes:
        return hmac.new(self._key, signed, hashlib.sha256).digest()[:16]

    def _issue(self, kind: bytes, model: str, digest: bytes) -> str:
        signed = kind + os.urandom(8) + digest + _tag(model)
        return base64.b64encode(signed + self._mac(signed)).decode()

    def _open(self, signature: str) -> tuple[bytes, bytes, bytes] | None:
        """``(kind, digest, model tag)`` of a signature this book issued, else None."""
        try:
            raw = base64.b64decode(signature, validate=True)
        except (binascii.Error, ValueError):
            return None
        if len(raw) != _SIZE or not hmac.compare_digest(raw[-16:], self._mac(raw[:-16])):
            return None
        return raw[:1], raw[9:25], raw[25:33]

    # -- remembering what the fake serves

    def served(self, body: bytes) -> None:
        """Remember the signatures of a body the fake sends (scripted ones as issued; a
        signed call as one whose signature must come back)."""
        if b"ignature" not in body:
            return
        with self._lock:
            if id(body) in self._bodies:
                return
            self._bodies[id(body)] = body  # kept, so that its id is not reused
            while len(self._bodies) > _BODIES_KEPT:
                self._bodies.popitem(last=False)
        for value in _json_objects(body):
            self._walk(value)

    def served_steps(self, steps: Sequence[Mapping[str, Any]]) -> None:
        """Remember the output steps of an Interactions run the fake starts."""
        signed = False
        for step in steps:
            kind = step.get("type")
            signature = step.get("signature")
            if kind == "thought" and type(signature) is str and signature:
                self._remember(signature)
                signed = True
            elif kind == "function_call":
                if signed:
                    with self._lock:
                        _keep(self._signed, _call_digest(step.get("name"), step.get("arguments")))
                signed = False

    def _walk(self, value: Any) -> None:
        stack = [value]
        while stack:
            item = stack.pop()
            if type(item) is list:
                stack.extend(item)
                continue
            if type(item) is not dict:
                continue
            signature = _signature(item)
            if item.get("type") in ("thought", "thought_signature"):
                found = item.get("signature")
                signature = found if type(found) is str and found else signature
            if signature is not None:
                self._remember(signature)
                call = item.get("functionCall", item.get("function_call"))
                if type(call) is dict and "args" in call:
                    with self._lock:
                        _keep(self._signed, _call_digest(call.get("name"), call["args"]))
            stack.extend(v for v in item.values() if type(v) in (dict, list))

    def _remember(self, signature: str) -> None:
        if signature in DUMMY_SIGNATURES or self._open(signature) is not None:
            return  # the fake's own are checked by their mac
        with self._lock:
            _keep(self._scripted, signature)

    # -- judging

    def _bad(self, signature: str, model: str, call: tuple[Any, Any] | None) -> str | None:
        """Why ``signature`` is not this part's (None: it is)."""
        with self._lock:
            if signature in self._scripted:
                return None
        opened = self._open(signature)
        if opened is None:
            return "a signature the fake did not issue"
        kind, digest, tag = opened
        if tag != _tag(model):
            return "a signature issued for another model"
        if call is not None and (kind != _CALL or digest != _call_digest(*call)):
            return "a signature issued for another part"
        return None

    def _note(self, problem: str, *, placeholder: bool = False, lost: bool = False) -> None:
        with self._lock:
            self._placeholders += placeholder
            self._lost += lost
            if len(self._problems) < _PROBLEMS_KEPT:
                self._problems.append(problem)

    def _was_signed(self, name: Any, args: Any) -> bool:
        with self._lock:
            return _call_digest(name, args) in self._signed

    def _judge_call(
        self, signature: str | None, model: str, name: Any, args: Any, where: str, first: bool
    ) -> str | None:
        """Count a call's signature; return why it is bad (None: it is fine or missing).
        Only a step's ``first`` call can have lost one: the others never carry one."""
        if signature is None:
            if first and self._was_signed(name, args):
                self._note(f"{where}: call `{name}` came back without its signature", lost=True)
            return None
        if signature in DUMMY_SIGNATURES:
            self._note(f"{where}: call `{name}` came back with {signature!r}", placeholder=True)
            return None
        bad = self._bad(signature, model, (name, args))
        if bad is not None:
            self._note(f"{where}: call `{name}` came back with {bad} ({model})")
        return bad

    def judge_contents(self, body: Any, model: str) -> bool:
        """Count what a ``generateContent`` body's signatures say; True if one is bad."""
        bad = False
        for i, content in enumerate(_list(_dict(body).get("contents"))):
            if _dict(content).get("role") != "model":
                continue
            first = True
            for j, part in enumerate(_list(_dict(content).get("parts"))):
                part = _dict(part)
                where = f"{model}: contents[{i}].parts[{j}]"
                signature = _signature(part)
                call = part.get("functionCall", part.get("function_call"))
                if type(call) is dict:
                    name, args = call.get("name"), call.get("args", {})
                    why = self._judge_call(signature, model, name, args, where, first)
                    bad |= why is not None
                    first = False
                elif signature is not None and signature not in DUMMY_SIGNATURES:
                    why = self._bad(signature, model, None)
                    if why is not None:
                        self._note(f"{where}: {why} ({model})")
                        bad = True
        return bad

    def judge_steps(self, body: Any) -> list[str]:
        """Count what an Interactions create body's signatures say; return what a Gemini 3
        model refuses (the missing signatures of the current turn, without a previous
        interaction; then :data:`CORRUPTED`)."""
        body = _dict(body)
        model = body.get("model")
        steps = _list(body.get("input"))
        if type(model) is not str or not all(type(s) is dict and "type" in s for s in steps):
            return []
        model = model.removeprefix("models/")
        stateless = body.get("previous_interaction_id") is None
        turn = max((i + 1 for i, s in enumerate(steps) if s["type"] == "user_input"), default=0)
        missing: list[str] = []
        bad = False
        signed: tuple[int, str] | None = None  # the step's nearest signed thought
        first = True  # the next function_call is its step's first
        for i, step in enumerate(steps):
            kind, where = step["type"], f"{model}: input[{i}]"
            signature = step.get("signature")
            if kind in ("user_input", "function_result"):
                if signed is not None:
                    bad |= self._judge_thought(signed, model)
                signed, first = None, True
            elif kind == "thought" and type(signature) is str and signature:
                if signed is not None:
                    bad |= self._judge_thought(signed, model)
                signed = (i, signature)
            elif kind == "function_call" and first:
                first = False
                name, args = step.get("name"), step.get("arguments", {})
                carried = signed[1] if signed is not None else None
                signed = None
                if carried is None and not stateless:
                    continue  # Google holds the signatures of a stored interaction
                bad |= self._judge_call(carried, model, name, args, where, True) is not None
                if carried is None and i >= turn:
                    missing.append(f"input[{i}]: " + _MISSING.format(name=name, position=i + 1))
        if signed is not None:
            bad |= self._judge_thought(signed, model)
        if not is_gemini_3(model):
            return []
        return missing + ([CORRUPTED] if bad else [])

    def _judge_thought(self, signed: tuple[int, str], model: str) -> bool:
        at, signature = signed
        if signature in DUMMY_SIGNATURES:
            return False
        why = self._bad(signature, model, None)
        if why is not None:
            self._note(f"{model}: input[{at}]: {why}")
        return why is not None

    def refusal(self, raw: bytes, model: str, *, strict: bool) -> FakeResponse | None:
        """Judge a ``generateContent`` body (counting); with ``strict``, Google's 400 for a
        bad signature on a Gemini 3 model, unless Gemini refuses the body for something
        else first (the caller's own checks answer that)."""
        if b"ignature" not in raw and b"unctionCall" not in raw and b"unction_call" not in raw:
            return None  # no call and no signature: nothing to judge or count
        try:
            body = json.loads(raw)
        except (ValueError, RecursionError):
            return None
        bad = self.judge_contents(body, model)
        if not (bad and strict and is_gemini_3(model)):
            return None
        if gemini_request_problems(body, model=model):
            return None
        return FakeResponse(
            status=400, error={"code": 400, "message": CORRUPTED, "status": "INVALID_ARGUMENT"}
        )


def signature_check(
    check: Callable[[Any], Sequence[str]] | None, book: SignatureBook, *, strict: bool
) -> Callable[[Any], Sequence[str]]:
    """An Interactions create check: ``check``'s problems first, then (counting always)
    what the book refuses, when ``strict``."""

    def checked(body: Any) -> Sequence[str]:
        problems = list(check(body)) if check is not None else []
        if problems:
            return problems
        refused = book.judge_steps(body)
        return refused if strict else []

    return checked


def _keep(kept: OrderedDict[Any, None], key: Any) -> None:
    kept[key] = None
    kept.move_to_end(key)
    while len(kept) > _KEEP:
        kept.popitem(last=False)
