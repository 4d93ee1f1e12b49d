"""The Responses reader: a Responses ``input`` (and the history before it) → the
conversation (``rxgem.request.form``).

- A string is one user message.
- Messages (with or without ``"type": "message"``): ``system`` and ``developer`` →
  the system texts (after ``instructions``, in order); ``user`` → a ``user`` turn;
  ``assistant`` → texts of a ``model`` turn.
- The items of one model turn (``reasoning``, ``assistant`` messages, ``function_call``
  items, in a row) → ONE ``model`` turn, parts in order; the ``function_call_output``
  items after them → one ``user`` turn of results, in the order of the calls (Gemini
  wants a step's responses together), each named after its call.
- ``reasoning`` items give their thought signatures back (:mod:`._responses_signatures`).
- ``item_reference`` → the stored item the caller's ``resolve`` returns for its id; no
  lookup happens here (sans-IO).
- ``code_interpreter_call`` items (Gemini's code execution, as rxgem's output shows it)
  → the model turn's ``executableCode`` and ``codeExecutionResult`` parts (kept), where the item
  stands (:mod:`._code`).
- ``web_search_call`` items are records of a search Gemini ran: nothing to send back.

Linear in the size of the items: each item is read once, each content merged in place.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ....core import InvalidRequestError
from ..._json import JSONObject, quoted
from ..._policy import Unsupported, unsupported
from ..._signatures import split_id
from ...form import Call, Conversation, Part, Result, Text, Turn, merge_turns
from ..chat import call_arguments
from ._code import code_parts
from ._content import function_output, message_parts, string
from ._signatures import Signatures

__all__ = ["Resolve", "gemini_name", "item_references", "read_input"]

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
        "media_results",
        "model",
        "policy",
        "results",
        "signatures",
        "system",
    )

    def __init__(self, media_results: bool, policy: Unsupported) -> None:
        self.media_results = media_results
        self.policy = policy
        self.system: list[str] = []
        self.contents: list[Turn] = []
        self.model: list[Part] | None = None  # the open model turn's parts
        self.signatures = Signatures()
        # call id → (name, position) among the calls awaiting their outputs
        self.calls: dict[str, tuple[str, int]] = {}
        self.results: list[Result | None] = []
        self.awaiting: list[str] = []  # where each awaiting call was sent

    def open_model(self) -> list[Part]:
        if self.model is None:
            self.flush()
            self.model = []
        return self.model

    def close_model(self) -> None:
        if self.model is not None:
            parts = self.signatures.close_turn(self.model)
            if parts:
                self.contents.append(Turn("model", parts))
            self.model = None

    def flush(self) -> None:
        """The outputs of the last model turn, as one ``user`` content in call order."""
        if not self.results:
            return
        done: list[Part] = [result for result in self.results if result is not None]
        if len(done) != len(self.results):
            missing = next(n for n, result in enumerate(self.results) if result is None)
            raise InvalidRequestError(
                "this function call has no function_call_output with its result (Gemini"
                " needs one output per call, right after the calls)",
                where=self.awaiting[missing],
            )
        self.contents.append(Turn("user", done))
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
            self.system.append("".join(part.text for part in parts if isinstance(part, Text)))
        elif role == "user":
            self.close_model()
            self.flush()
            parts = message_parts(content, at, self.policy)
            if not parts:
                raise InvalidRequestError("a user message needs content", where=at)
            self.contents.append(Turn("user", [*parts]))
        elif role == "assistant":
            model = self.open_model()
            read = message_parts(content, at, self.policy, media=False)
            texts = [p for p in read if isinstance(p, Text) and p.text]
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
        args = call_arguments(item.get("arguments"), f"{where}.arguments")
        part = Call(name, args, call_id, signature)
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
            item.get("output"), f"{where}.output", gemini3=self.media_results, policy=self.policy
        )
        self.results[position] = Result(name, response, call_id, media)


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


def read_input(
    instructions: Any,
    sources: Sequence[tuple[str, Any]],
    *,
    media_results: bool,
    policy: Unsupported,
    resolve: Resolve | None,
) -> Conversation:
    """The conversation of the items of ``sources``, in order.

    Args:
        instructions: the request's ``instructions`` (``None`` or a string), first in
            the system texts.
        sources: ``(where, items)`` pairs: the history (``"history"``, a list) then
            the request's ``input`` (``"input"``, a string or a list); ``where`` names
            the field in errors (``input[3].content[0].image_url``).
        media_results: take images and files in function outputs (Gemini 3).
        policy: ``"error"`` or ``"warn"`` for what Gemini cannot take.
        resolve: answers ``item_reference`` ids.
    """
    turn = _Turn(media_results, policy)
    if instructions is not None:
        turn.system.append(string(instructions, "instructions"))
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
    return Conversation(turn.system, merge_turns(turn.contents))
