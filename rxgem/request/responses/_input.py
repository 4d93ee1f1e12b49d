"""A Responses ``input`` (and the history before it) → Gemini ``systemInstruction`` and
``contents``.

- A string is one user message.
- Messages (with or without ``"type": "message"``): ``system`` and ``developer`` →
  ``systemInstruction`` (after ``instructions``, in order); ``user`` → a ``user``
  content; ``assistant`` → text parts of a ``model`` content.
- The items of one model turn (``reasoning``, ``assistant`` messages, ``function_call``
  items, in a row) → ONE ``model`` content, parts in order; the ``function_call_output``
  items after them → one ``user`` content of ``functionResponse`` parts, in the order of
  the calls (Gemini wants a step's responses together), each named after its call.
- ``reasoning`` items give their thought signatures back (:mod:`._responses_signatures`).
- ``item_reference`` → the stored item the caller's ``resolve`` returns for its id; no
  lookup happens here (sans-IO).
- ``code_interpreter_call`` items (Gemini's code execution, as rxgem's output shows it)
  → the model turn's ``executableCode`` and ``codeExecutionResult`` parts, where the item
  stands (:mod:`._code`).
- ``web_search_call`` items are records of a search Gemini ran: nothing to send back.

Linear in the size of the items: each item is read once, each content merged in place.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ...core import InvalidRequestError
from .._json import JSONObject, quoted
from .._messages import call_arguments, merge_turns, place_signatures
from .._params import Unsupported, unsupported
from .._signatures import split_id
from ._code import code_parts
from ._content import function_output, message_parts, string
from ._signatures import Signatures

__all__ = ["Resolve", "gemini_name", "input_to_contents", "item_references"]

Resolve = Callable[[str], Mapping[str, Any] | None]
"""``resolve(item_id)``: the stored item an ``item_reference`` names, ``None`` if unknown."""

_MODEL_ITEMS = frozenset({"reasoning", "function_call"})
_SKIPPED = frozenset({"web_search_call"})


def gemini_name(namespace: Any, name: str) -> str:
    """The Gemini function name of a function (in a namespace: ``namespace.name``)."""
    return f"{namespace}.{name}" if type(namespace) is str and namespace else name


def item_references(body: Mapping[str, Any]) -> list[str]:
    """The ids the ``item_reference`` items of a request's ``input`` name, in order (what a
    server fetches from its store before translating, to answer ``resolve``)."""
    items = body.get("input")
    if type(items) is not list:
        return []
    return [
        item["id"]
        for item in items
        if type(item) is dict
        and item.get("type") == "item_reference"
        and type(item.get("id")) is str
    ]


class _Turn:
    """The input walk's state: the open model turn and the calls awaiting their outputs."""

    __slots__ = (
        "awaiting",
        "calls",
        "contents",
        "model",
        "policy",
        "results",
        "send_ids",
        "signatures",
        "system",
    )

    def __init__(self, send_ids: bool, policy: Unsupported) -> None:
        self.send_ids = send_ids
        self.policy = policy
        self.system: list[JSONObject] = []
        self.contents: list[JSONObject] = []
        self.model: list[JSONObject] | None = None  # the open model turn's parts
        self.signatures = Signatures()
        # call id → (name, position) among the calls awaiting their outputs
        self.calls: dict[str, tuple[str, int]] = {}
        self.results: list[JSONObject | None] = []
        self.awaiting: list[str] = []  # where each awaiting call was sent

    def open_model(self) -> list[JSONObject]:
        if self.model is None:
            self.flush()
            self.model = []
        return self.model

    def close_model(self) -> None:
        if self.model is not None:
            parts = self.signatures.close_turn(self.model)
            if parts:
                self.contents.append({"role": "model", "parts": parts})
            self.model = None

    def flush(self) -> None:
        """The outputs of the last model turn, as one ``user`` content in call order."""
        if not self.results:
            return
        if None in self.results:
            raise InvalidRequestError(
                "this function call has no function_call_output with its result (Gemini"
                " needs one output per call, right after the calls)",
                where=self.awaiting[self.results.index(None)],
            )
        self.contents.append({"role": "user", "parts": self.results})
        self.results = []
        self.awaiting = []
        self.calls = {}

    def item(self, item: Any, where: str, resolve: Resolve | None) -> None:
        if type(item) is not dict:
            raise InvalidRequestError("an input item must be an object", where=where)
        kind = item.get("type")
        if kind == "item_reference":
            item = _resolved(item, where, resolve)
            kind = item.get("type")
        if kind == "message" or (kind is None and "role" in item):
            self.message(item, where)
        elif type(kind) is not str:
            raise InvalidRequestError("an input item needs a type (or a role)", where=where)
        elif kind == "reasoning":
            self.signatures.reasoning(item, where, self.open_model())
        elif kind == "function_call":
            self.call(item, where)
        elif kind == "function_call_output":
            self.output(item, where)
        elif kind == "code_interpreter_call":
            parts = code_parts(item, where, self.policy)
            if parts:
                self.open_model().extend(parts)
        elif kind in _SKIPPED:
            pass
        else:
            unsupported(
                self.policy,
                f"input item type {quoted(kind)} has no Gemini counterpart",
                f"{where}.type",
                f"drop {where} from the input",
            )

    def message(self, item: JSONObject, where: str) -> None:
        role = item.get("role")
        content = item.get("content")
        at = f"{where}.content"
        if role in ("system", "developer"):
            parts = message_parts(content, at, self.policy, media=False)
            self.system.append({"text": "".join(part["text"] for part in parts)})
        elif role == "user":
            self.close_model()
            self.flush()
            parts = message_parts(content, at, self.policy)
            if not parts:
                raise InvalidRequestError("a user message needs content", where=at)
            self.contents.append({"role": "user", "parts": parts})
        elif role == "assistant":
            model = self.open_model()
            texts = [p for p in message_parts(content, at, self.policy, media=False) if p["text"]]
            self.signatures.message(texts)
            model.extend(texts)
        else:
            raise InvalidRequestError(f"unknown role {quoted(role)}", where=f"{where}.role")

    def call(self, item: JSONObject, where: str) -> None:
        model = self.open_model()
        name = string(item.get("name"), f"{where}.name")
        if not name:
            raise InvalidRequestError("a function call needs a name", where=f"{where}.name")
        name = gemini_name(item.get("namespace"), name)
        call_id, signature = split_id(string(item.get("call_id"), f"{where}.call_id"))
        if not call_id:
            raise InvalidRequestError("a function call needs a call_id", where=f"{where}.call_id")
        body: JSONObject = {
            "name": name,
            "args": call_arguments(item.get("arguments"), f"{where}.arguments"),
        }
        if self.send_ids:
            body["id"] = call_id
        part: JSONObject = {"functionCall": body}
        if signature is not None:
            part["thoughtSignature"] = signature
        model.append(part)
        self.signatures.call(call_id, part)
        self.calls[call_id] = (name, len(self.results))
        self.results.append(None)
        self.awaiting.append(where)

    def output(self, item: JSONObject, where: str) -> None:
        self.close_model()
        call_id = split_id(string(item.get("call_id"), f"{where}.call_id"))[0]
        known = self.calls.get(call_id)
        if known is None:
            raise InvalidRequestError(
                f"no function_call with call_id {quoted(call_id)} awaits an output (the output"
                " must follow the model turn that made the call)",
                where=f"{where}.call_id",
            )
        name, position = known
        response, media = function_output(
            item.get("output"), f"{where}.output", gemini3=self.send_ids, policy=self.policy
        )
        body: JSONObject = {"name": name, "response": response}
        if media:
            body["parts"] = media
        if self.send_ids:
            body["id"] = call_id
        self.results[position] = {"functionResponse": body}


def _resolved(reference: JSONObject, where: str, resolve: Resolve | None) -> JSONObject:
    item_id = reference.get("id")
    at = f"{where}.id"
    if type(item_id) is not str or not item_id:
        raise InvalidRequestError("an item_reference needs an id", where=at)
    found = resolve(item_id) if resolve is not None else None
    if found is None:
        raise InvalidRequestError(f"no stored item has the id {quoted(item_id)}", where=at)
    if not isinstance(found, Mapping) or found.get("type") == "item_reference":
        raise InvalidRequestError(
            f"the stored item {quoted(item_id)} is not an input item", where=at
        )
    return dict(found)


def input_to_contents(
    instructions: Any,
    sources: Sequence[tuple[str, Any]],
    *,
    send_ids: bool,
    current_turn_signatures: bool,
    policy: Unsupported,
    resolve: Resolve | None,
) -> tuple[JSONObject | None, list[JSONObject]]:
    """``(systemInstruction, contents)`` of the items of ``sources``, in order.

    Args:
        instructions: the request's ``instructions`` (``None`` or a string), first in
            the system instruction.
        sources: ``(where, items)`` pairs: the history (``"history"``, a list) then
            the request's ``input`` (``"input"``, a string or a list); ``where`` names
            the field in errors (``input[3].content[0].image_url``).
        send_ids: put call ids on ``functionCall``/``functionResponse`` (Gemini 3).
        current_turn_signatures: Gemini 3: a step of the current turn whose calls lost
            their signature gets Google's placeholder (with a ``SignatureWarning``).
        policy: ``"error"`` or ``"warn"`` for what Gemini cannot take.
        resolve: answers ``item_reference`` ids.
    """
    turn = _Turn(send_ids, policy)
    if instructions is not None:
        turn.system.append({"text": string(instructions, "instructions")})
    for where, items in sources:
        if type(items) is str:
            turn.message({"role": "user", "content": items}, where)
            continue
        if type(items) is not list:
            raise InvalidRequestError("must be a string or a list of items", where=where)
        for i, item in enumerate(items):
            turn.item(item, f"{where}[{i}]", resolve)
    turn.close_model()
    turn.flush()
    if not turn.contents:
        raise InvalidRequestError(
            "Gemini needs a user message or a model turn, not only instructions", where="input"
        )
    turn.signatures.sign_calls()
    contents = merge_turns(turn.contents)
    if current_turn_signatures:
        place_signatures(contents)
    return ({"parts": turn.system} if turn.system else None), contents
