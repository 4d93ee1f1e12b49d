"""``assert_openai_stream``: every rule of an OpenAI ``chat.completion.chunk`` stream.

The rules are the ones README's "What the OpenAI consumer sees" lists, which the
``openai`` SDK's stream accumulator depends on; each has a short name
(:data:`RULES`). A broken rule raises :class:`StreamRuleError` (an
``AssertionError``) whose message names the rule and the chunk. When the
``openai`` package is importable, every chunk also goes through
``openai.types.chat.ChatCompletionChunk.model_validate`` and the whole stream
through ``openai.lib.streaming.chat.ChatCompletionStreamState`` (with strict tool
definitions for the ``tools`` named), and the SDK's message must equal
:func:`rxgem.assemble`'s.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import msgspec

from ..core import ChatCompletionChunk
from ..core.chat import assemble

__all__ = ["RULES", "StreamRuleError", "assert_openai_stream"]

RULES: Mapping[str, str] = {
    "not-empty": "a complete stream has at least one choice",
    "object": 'every chunk has object "chat.completion.chunk"',
    "constant-fields": "id, created and model are the same on every chunk",
    "choice-order": "choices open in index order 0, 1, 2…",
    "role-first": 'a choice\'s first delta carries role "assistant"',
    "role-once": "no later delta of a choice carries a role",
    "after-finish": "nothing of a choice follows its finish_reason",
    "finish-once": "exactly one finish_reason per choice",
    "finish-value": "finish_reason is stop, length, tool_calls, content_filter or function_call",
    "finish-missing": "every choice of a complete stream gets a finish_reason",
    "finish-tool-calls": "a choice that made tool calls does not finish with stop,"
    " and tool_calls only finishes a choice that made calls",
    "tool-index-dense": "a choice's tool-call indices are dense 0, 1, 2… in order of appearance",
    "tool-index-reopened": "a tool call gets no delta once a later index appeared",
    "tool-header-first": 'a tool call\'s first delta carries id, type "function" and function.name',
    "tool-header-once": "id, type and function.name appear once per tool call",
    "tool-arguments-json": "a tool call's concatenated arguments are exactly one JSON object",
    "tool-name-known": "tool calls name one of the tools given",
    "signature-once": "a thought signature appears at most once per tool call and per choice",
    "usage-shape": "the usage chunk has choices: []",
    "usage-last": "the usage chunk is the last chunk",
    "chunk-shape": "a chunk has the shape of a ChatCompletionChunk",
    "sdk-validate": "openai.types.chat.ChatCompletionChunk.model_validate accepts every chunk",
    "sdk-accumulate": "the openai SDK's ChatCompletionStreamState accumulates the stream",
    "sdk-agrees": "the openai SDK assembles the same message as rxgem.assemble",
}
"""Every rule checked, by name."""

_FINISH_VALUES = frozenset({"stop", "length", "tool_calls", "content_filter", "function_call"})


class StreamRuleError(AssertionError):
    """A broken rule of the OpenAI stream: ``rule`` (a key of :data:`RULES`), ``index``
    (the chunk's position, ``None`` for the stream as a whole) and ``detail``."""

    def __init__(self, rule: str, index: int | None, detail: str) -> None:
        where = f"chunks[{index}]" if index is not None else "the stream"
        super().__init__(f"OpenAI stream rule {rule!r} broken at {where}: {detail} ({RULES[rule]})")
        self.rule = rule
        self.index = index
        self.detail = detail


def _as_dict(value: Any) -> dict[str, Any]:
    if isinstance(value, Mapping):
        return json.loads(json.dumps(value))  # type: ignore[no-any-return]
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):
        data: dict[str, Any] = to_dict()
        return data
    model_dump = getattr(value, "model_dump", None)
    if callable(model_dump):
        dumped: dict[str, Any] = model_dump(mode="json", exclude_unset=True)
        return dumped
    raise TypeError(f"not a chunk: {type(value).__name__}")


def _signature(extra: Any) -> str | None:
    if not isinstance(extra, Mapping):
        return None
    google = extra.get("google")
    if not isinstance(google, Mapping):
        return None
    signature = google.get("thought_signature")
    return signature if isinstance(signature, str) else None


class _Checker:
    def __init__(self, tools: set[str] | None) -> None:
        self.tools = tools
        self.header: tuple[Any, Any, Any] | None = None
        self.opened: list[int] = []
        self.finished: dict[int, str] = {}
        self.finish_at: dict[int, int] = {}
        self.tool_order: dict[int, list[int]] = {}
        self.arguments: dict[tuple[int, int], list[str]] = {}
        self.call_signatures: set[tuple[int, int]] = set()
        self.choice_signatures: set[int] = set()
        self.usage_at: int | None = None

    def chunk(self, i: int, data: dict[str, Any]) -> None:
        if self.usage_at is not None:
            raise StreamRuleError(
                "usage-last", i, f"a chunk follows the usage chunk {self.usage_at}"
            )
        if data.get("object") != "chat.completion.chunk":
            raise StreamRuleError("object", i, f"object is {data.get('object')!r}")
        header = (data.get("id"), data.get("created"), data.get("model"))
        if self.header is None:
            self.header = header
        elif header != self.header:
            raise StreamRuleError(
                "constant-fields", i, f"(id, created, model) {header!r} after {self.header!r}"
            )
        choices = data.get("choices")
        if not isinstance(choices, list):
            raise StreamRuleError("chunk-shape", i, "choices is missing or not a list")
        if data.get("usage") is not None:
            if choices:
                raise StreamRuleError(
                    "usage-shape", i, f"the usage chunk has {len(choices)} choice(s)"
                )
            self.usage_at = i
        for choice in choices:
            self.choice(i, choice)

    def choice(self, i: int, choice: Any) -> None:
        if not isinstance(choice, Mapping) or not isinstance(choice.get("index"), int):
            raise StreamRuleError("chunk-shape", i, f"a choice without an index: {choice!r}")
        index: int = choice["index"]
        delta = choice.get("delta")
        if not isinstance(delta, Mapping):
            raise StreamRuleError("chunk-shape", i, f"choice {index} has no delta")
        if index in self.finished:
            finish = choice.get("finish_reason")
            rule = "finish-once" if finish is not None else "after-finish"
            raise StreamRuleError(
                rule,
                i,
                f"choice {index} continues after its finish_reason at chunks"
                f"[{self.finish_at[index]}]",
            )
        if index not in self.opened:
            if index != len(self.opened):
                raise StreamRuleError(
                    "choice-order", i, f"choice {index} opens after {len(self.opened)} choice(s)"
                )
            if delta.get("role") != "assistant":
                raise StreamRuleError(
                    "role-first", i, f"choice {index}'s first delta has role {delta.get('role')!r}"
                )
            self.opened.append(index)
        elif delta.get("role") is not None:
            raise StreamRuleError(
                "role-once", i, f"choice {index} has role {delta['role']!r} in a later delta"
            )
        signature = _signature(delta.get("extra_content"))
        if signature is not None:
            if index in self.choice_signatures:
                raise StreamRuleError(
                    "signature-once", i, f"choice {index} sends a thought signature again"
                )
            self.choice_signatures.add(index)
        for call in delta.get("tool_calls") or ():
            self.tool_call(i, index, call)
        finish = choice.get("finish_reason")
        if finish is not None:
            if finish not in _FINISH_VALUES:
                raise StreamRuleError("finish-value", i, f"choice {index} finish_reason {finish!r}")
            self.finished[index] = finish
            self.finish_at[index] = i

    def tool_call(self, i: int, choice: int, call: Any) -> None:
        if not isinstance(call, Mapping) or not isinstance(call.get("index"), int):
            raise StreamRuleError("chunk-shape", i, f"a tool call without an index: {call!r}")
        index: int = call["index"]
        order = self.tool_order.setdefault(choice, [])
        function = call.get("function") or {}
        name = function.get("name") if isinstance(function, Mapping) else None
        key = (choice, index)
        if not order or order[-1] != index:
            if index in order:
                raise StreamRuleError(
                    "tool-index-reopened",
                    i,
                    f"choice {choice} tool index {index} gets a delta after index {order[-1]}",
                )
            if index != len(order):
                raise StreamRuleError(
                    "tool-index-dense",
                    i,
                    f"choice {choice} opens tool index {index} after {len(order)} call(s)",
                )
            order.append(index)
            if call.get("id") is None or call.get("type") != "function" or not name:
                raise StreamRuleError(
                    "tool-header-first",
                    i,
                    f"choice {choice} tool {index} starts with id={call.get('id')!r},"
                    f" type={call.get('type')!r}, name={name!r}",
                )
            if self.tools is not None and name not in self.tools:
                raise StreamRuleError(
                    "tool-name-known", i, f"tool {name!r} is not among {sorted(self.tools)}"
                )
            self.arguments[key] = []
        elif call.get("id") is not None or call.get("type") is not None or name is not None:
            raise StreamRuleError(
                "tool-header-once", i, f"choice {choice} tool {index} sends id/type/name again"
            )
        arguments = function.get("arguments") if isinstance(function, Mapping) else None
        if arguments is not None:
            if not isinstance(arguments, str):
                raise StreamRuleError("chunk-shape", i, f"arguments {arguments!r} is not a string")
            self.arguments[key].append(arguments)
        if _signature(call.get("extra_content")) is not None:
            if key in self.call_signatures:
                raise StreamRuleError(
                    "signature-once", i, f"choice {choice} tool {index} sends its signature again"
                )
            self.call_signatures.add(key)

    def end(self, complete: bool, count: int) -> None:
        for (choice, index), pieces in self.arguments.items():
            text = "".join(pieces)
            try:
                value = json.loads(text)
            except ValueError:
                value = None
            if not isinstance(value, dict):
                raise StreamRuleError(
                    "tool-arguments-json",
                    None,
                    f"choice {choice} tool {index} arguments {text[:120]!r}"
                    " are not one JSON object",
                )
        if complete:
            if not self.opened:
                raise StreamRuleError(
                    "not-empty", None, f"{count} chunk(s) and no choice" if count else "no chunks"
                )
            for choice in self.opened:
                if choice not in self.finished:
                    raise StreamRuleError(
                        "finish-missing", None, f"choice {choice} never got a finish_reason"
                    )
        for choice, finish in self.finished.items():
            made_calls = bool(self.tool_order.get(choice))
            if (finish == "stop" and made_calls) or (finish == "tool_calls" and not made_calls):
                raise StreamRuleError(
                    "finish-tool-calls",
                    self.finish_at[choice],
                    f"choice {choice} finishes with {finish!r} after"
                    f" {len(self.tool_order.get(choice, []))} tool call(s)",
                )


def _tool_names(tools: Iterable[str | Mapping[str, Any]]) -> set[str]:
    names: set[str] = set()
    for tool in tools:
        if isinstance(tool, str):
            names.add(tool)
        else:
            names.add(tool["function"]["name"])
    return names


def _strict_tools(names: set[str]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": name,
                "parameters": {"type": "object", "additionalProperties": True},
                "strict": True,
            },
        }
        for name in sorted(names)
    ]


def _sdk_check(
    dicts: Sequence[dict[str, Any]],
    names: set[str] | None,
    complete: bool,
    ours: dict[str, Any],
) -> None:
    try:
        from openai.lib.streaming.chat import ChatCompletionStreamState
        from openai.types.chat import ChatCompletionChunk as SDKChunk
    except ImportError:  # the checks above are all there is without the SDK
        return
    parsed = []
    for i, data in enumerate(dicts):
        try:
            parsed.append(SDKChunk.model_validate(data))
        except Exception as exc:
            raise StreamRuleError("sdk-validate", i, f"{type(exc).__name__}: {exc}") from exc
    if not parsed:
        return
    state: ChatCompletionStreamState[Any] = (
        ChatCompletionStreamState(input_tools=_strict_tools(names))  # type: ignore[arg-type]
        if names
        else ChatCompletionStreamState()
    )
    for i, sdk_chunk in enumerate(parsed):
        try:
            for _event in state.handle_chunk(sdk_chunk):
                pass
        except Exception as exc:
            raise StreamRuleError("sdk-accumulate", i, f"{type(exc).__name__}: {exc}") from exc
    snapshot = state.current_completion_snapshot
    final: Any = snapshot
    cut = any(c.finish_reason in ("length", "content_filter") for c in snapshot.choices)
    if complete and snapshot.choices and not cut:
        try:
            final = state.get_final_completion()
        except Exception as exc:
            raise StreamRuleError(
                "sdk-accumulate", None, f"get_final_completion: {type(exc).__name__}: {exc}"
            ) from exc
    theirs = {
        c.index: (
            c.message.content or None,
            [
                (t.id, t.function.name, t.function.arguments)
                for t in c.message.tool_calls or ()
                if t.type == "function"
            ],
            c.finish_reason,
        )
        for c in final.choices
    }
    mine = {
        c["index"]: (
            c["message"].get("content") or None,
            [
                (t.get("id"), t["function"].get("name"), t["function"].get("arguments", ""))
                for t in c["message"].get("tool_calls") or ()
            ],
            c["finish_reason"],
        )
        for c in ours["choices"]
    }
    if theirs != mine:
        raise StreamRuleError("sdk-agrees", None, f"the SDK made {theirs!r}, rxgem {mine!r}")


def assert_openai_stream(
    chunks: Iterable[ChatCompletionChunk | Mapping[str, Any] | Any],
    tools: Iterable[str | Mapping[str, Any]] | None = None,
    *,
    complete: bool = True,
) -> dict[str, Any]:
    """Check every rule of an OpenAI chunk stream; return the assembled completion.

    .. code::

        result = assert_openai_stream(chunks, tools=["search"])
        assert result["choices"][0]["finish_reason"] == "tool_calls"

    Args:
        chunks: ``rxgem.ChatCompletionChunk`` objects, their ``to_dict()`` dicts, or
            ``openai`` SDK chunk objects.
        tools: the tool names (or OpenAI tool definitions) the calls may use; the
            SDK then accumulates with strict definitions of them, which parses each
            call's arguments as soon as the next index appears.
        complete: the stream ended normally, so every choice must have finished;
            pass ``False`` for a stream that ended with an error.

    Returns:
        :func:`rxgem.assemble` of the chunks: ``{"id", "model", "choices", "usage"}``.

    Raises:
        StreamRuleError: an ``AssertionError`` naming the rule (see :data:`RULES`)
            and the chunk (``chunks[i]``) that broke it.
    """
    dicts = [_as_dict(c) for c in chunks]
    names = _tool_names(tools) if tools is not None else None
    checker = _Checker(names)
    for i, data in enumerate(dicts):
        checker.chunk(i, data)
    checker.end(complete, len(dicts))
    typed: list[ChatCompletionChunk] = []
    for i, data in enumerate(dicts):
        for choice in data["choices"]:
            choice.setdefault("finish_reason", None)
        try:
            typed.append(msgspec.convert(data, type=ChatCompletionChunk))
        except msgspec.ValidationError as exc:
            raise StreamRuleError("chunk-shape", i, str(exc)) from exc
    result = assemble(typed)
    _sdk_check(dicts, names, complete, result)
    return result
