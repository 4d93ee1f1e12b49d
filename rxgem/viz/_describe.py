"""Compact descriptions of the values that flow through the pipeline.

Used by :mod:`rxgem.viz` (marble labels, hover text, legends). Every function takes
any value: the pipeline's own (``bytes``, ``SSEEvent``, ``GenerateContentResponse``,
batches of :mod:`rxgem.items`, ``ChatCompletionChunk``), an exception, or anything
else (shown through ``repr``).

- :func:`describe`: one line, up to ~150 characters (the ``rxgem demo`` style).
- :func:`label`: a few words for a marble (``"thought"``, ``"call#0 usage"``).
- :func:`category`: what a value mostly is, for a marble's colour.
- :func:`jsonable`: plain JSON data of the full value, for hover text.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import msgspec

from .. import items
from ..core import ChatCompletionChunk, GenerateContentResponse, SSEEvent
from ..core.gemini import Part
from ._describe_interactions import describe_event, event_category, event_label, is_event

__all__ = ["category", "describe", "describe_item", "jsonable", "label", "short", "to_json"]

ItemT = TypeVar("ItemT")


def short(value: Any, limit: int = 110) -> str:
    """``value`` (or its ``repr``) on one line, cut to ``limit`` characters with ``…``."""
    text = value if isinstance(value, str) else repr(value)
    text = text.replace("\r", "\\r").replace("\n", "\\n")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _args(args: Any) -> str:
    return short(json.dumps(args, ensure_ascii=False, separators=(",", ":")), 60)


@dataclass(frozen=True)
class _ItemKind(Generic[ItemT]):
    """How to show one item type: a one-liner, a marble word, a colour (or ``None``)."""

    describe: Callable[[ItemT], str]
    label: Callable[[ItemT], str]
    category: Callable[[ItemT], str | None]


def _no_category(_: object) -> None:
    return None


def _part_kind(part: Part) -> str:
    """The data field a part carries, by its wire name (``executableCode``, ...)."""
    for key in msgspec.to_builtins(part):
        if key not in ("thought", "thoughtSignature"):
            return str(key)
    return "part"


def _describe_sources(item: items.Sources) -> str:
    kinds = [
        name
        for name, value in (
            ("grounding", item.grounding),
            ("citations", item.citation),
            ("url_context", item.url_context),
        )
        if value
    ]
    return f"Sources(c{item.candidate} {', '.join(kinds) or 'empty'})"


def _text_kind(item: items.Text) -> str:
    return "thought" if item.thought else "text"


def _describe_text(item: items.Text) -> str:
    sig = ", sig" if item.signature else ""
    return f"Text(c{item.candidate} {_text_kind(item)} {_args(item.text[:40])}{sig})"


def _describe_call_part(item: items.CallPart) -> str:
    call = item.call
    what = call.name or ("partialArgs" if call.partial_args else "…")
    if call.args is not None:
        what += _args(call.args)
    return f"CallPart(c{item.candidate} slot {item.slot}: {what})"


def _describe_slot(item: items.SlotUpdate | items.ToolCall) -> str:
    sig = ", sig" if item.signature else ""
    return (
        f"{type(item).__name__}(c{item.candidate} slot {item.slot}:"
        f" {item.name}{_args(item.args)}{sig})"
    )


def _describe_usage(item: items.Usage) -> str:
    u = item.usage
    return (
        f"Usage(prompt={u.prompt_token_count}, candidates={u.candidates_token_count},"
        f" thoughts={u.thoughts_token_count}, total={u.total_token_count})"
    )


def _describe_end(item: items.End) -> str:
    return f"End(c{item.candidate} {item.reason}{', has calls' if item.has_calls else ''})"


# Every item type once, in pipeline order; a new item type gets one entry here.
_ITEMS: dict[type[Any], _ItemKind[Any]] = {
    items.Meta: _ItemKind[items.Meta](
        describe=lambda i: f"Meta({i.response_id}, {i.model_version})",
        label=lambda _: "meta",
        category=_no_category,
    ),
    items.Text: _ItemKind[items.Text](
        describe=_describe_text, label=_text_kind, category=_text_kind
    ),
    items.CallPart: _ItemKind[items.CallPart](
        describe=_describe_call_part,
        label=lambda i: f"call#{i.slot}",
        category=lambda _: "call",
    ),
    items.DataPart: _ItemKind[items.DataPart](
        describe=lambda i: (
            f"DataPart(c{i.candidate} {_part_kind(i.part)}"
            + (", sig)" if i.part.thought_signature else ")")
        ),
        label=lambda i: _part_kind(i.part),
        category=lambda i: "thought" if i.part.thought else "text",
    ),
    items.Sources: _ItemKind[items.Sources](
        describe=_describe_sources, label=lambda _: "sources", category=_no_category
    ),
    items.Logprobs: _ItemKind[items.Logprobs](
        describe=lambda i: f"Logprobs(c{i.candidate})",
        label=lambda _: "logprobs",
        category=_no_category,
    ),
    items.Details: _ItemKind[items.Details](
        describe=lambda i: f"Details(c{i.candidate} {', '.join(sorted(i.details))})",
        label=lambda _: "details",
        category=_no_category,
    ),
    items.Feedback: _ItemKind[items.Feedback](
        describe=lambda i: f"Feedback({', '.join(sorted(i.feedback))})",
        label=lambda _: "feedback",
        category=_no_category,
    ),
    items.Finish: _ItemKind[items.Finish](
        describe=lambda i: f"Finish(c{i.candidate} {i.reason})",
        label=lambda i: i.reason,
        category=lambda _: "finish",
    ),
    items.Usage: _ItemKind[items.Usage](
        describe=_describe_usage, label=lambda _: "usage", category=lambda _: "usage"
    ),
    items.Blocked: _ItemKind[items.Blocked](
        describe=lambda i: f"Blocked({i.reason})",
        label=lambda _: "blocked",
        category=lambda _: "finish",
    ),
    items.SlotUpdate: _ItemKind[items.SlotUpdate](
        describe=_describe_slot, label=lambda i: f"slot#{i.slot}", category=lambda _: "call"
    ),
    items.ToolCallHeader: _ItemKind[items.ToolCallHeader](
        describe=lambda i: f"ToolCallHeader(c{i.candidate} slot {i.slot}: {i.name})",
        label=lambda i: f"head#{i.slot}",
        category=lambda _: "call",
    ),
    items.ToolCall: _ItemKind[items.ToolCall](
        describe=_describe_slot, label=lambda i: f"tool#{i.slot}", category=lambda _: "call"
    ),
    items.TextSignature: _ItemKind[items.TextSignature](
        describe=lambda i: f"TextSignature(c{i.candidate})",
        label=lambda _: "sig",
        category=_no_category,
    ),
    items.End: _ItemKind[items.End](
        describe=_describe_end,
        label=lambda i: f"end:{i.reason or '-'}",
        category=lambda _: "finish",
    ),
    items.ArgsDelta: _ItemKind[items.ArgsDelta](
        describe=lambda i: f"ArgsDelta(c{i.candidate} slot {i.slot}: {short(i.text, 40)})",
        label=lambda i: f"args#{i.slot}",
        category=lambda _: "call",
    ),
    items.UnknownStep: _ItemKind[items.UnknownStep](
        describe=lambda i: f"UnknownStep(c{i.candidate} {i.kind})",
        label=lambda i: i.kind,
        category=_no_category,
    ),
}


Kinds = Mapping[type[Any], _ItemKind[Any]]
"""How to show each item type (a :class:`~rxgem.viz.Labeller` adds the user's own)."""


def _is_item(value: Any, kinds: Kinds = _ITEMS) -> bool:
    return type(value) in kinds


def describe_item(item: Any, kinds: Kinds = _ITEMS) -> str:
    """One pipeline item (:mod:`rxgem.items`) as a compact one-liner."""
    kind = kinds.get(type(item))
    return kind.describe(item) if kind is not None else short(item, 60)


def _response_kinds(value: GenerateContentResponse) -> list[str]:
    kinds: list[str] = []
    for candidate in value.candidates or ():
        for part in (candidate.content.parts if candidate.content else None) or ():
            if part.function_call is not None:
                kinds.append(f"functionCall({part.function_call.name or '…'})")
            elif part.text is not None:
                kinds.append("thought" if part.thought else "text")
            else:
                kinds.append(_part_kind(part))
        if candidate.finish_reason:
            kinds.append(f"finishReason={candidate.finish_reason}")
    if value.prompt_feedback is not None and value.prompt_feedback.block_reason:
        kinds.append(f"blockReason={value.prompt_feedback.block_reason}")
    if value.usage_metadata is not None:
        kinds.append("usage")
    return kinds


def _is_batch(value: Any, kinds: Kinds = _ITEMS) -> bool:
    return isinstance(value, list) and all(_is_item(item, kinds) for item in value)


def describe(value: Any, kinds: Kinds = _ITEMS) -> str:
    """Any pipeline value (or exception) as one line."""
    if _is_item(value, kinds):
        return describe_item(value, kinds)
    if isinstance(value, bytes | bytearray):
        return f"bytes[{len(value)}] {short(bytes(value).decode('utf-8', 'replace'), 90)}"
    if isinstance(value, SSEEvent):
        return f"SSEEvent({value.event}) {short(value.data, 90)}"
    if isinstance(value, GenerateContentResponse):
        return f"GenerateContentResponse [{', '.join(_response_kinds(value))}]"
    if is_event(value):
        return short(describe_event(value), 110)
    if isinstance(value, ChatCompletionChunk):
        data = value.to_dict()
        shown = {"choices": data["choices"]} if data["choices"] else {"usage": data.get("usage")}
        return short(json.dumps(shown, ensure_ascii=False, separators=(",", ":")), 150)
    if isinstance(value, BaseException):
        return short(f"{type(value).__name__}: {value}", 150)
    if _is_batch(value, kinds):
        return "[" + ", ".join(describe_item(item, kinds) for item in value) + "]"
    return short(value, 110)


def _batch_label(batch: list[Any], kinds: Kinds) -> str:
    """Item words; Meta and Usage only when alone; numbered runs joined (``tool#0-3``)."""
    if not batch:
        return "[]"
    shown = [i for i in batch if not isinstance(i, items.Meta | items.Usage)] or batch
    parts: list[list[Any]] = []  # [word] or [prefix, first, last]
    for item in shown:
        prefix, hash_, number = kinds[type(item)].label(item).partition("#")
        if not (hash_ and number.isdigit()):
            parts.append([prefix])
        elif (
            parts
            and len(parts[-1]) == 3
            and parts[-1][0] == prefix
            and (parts[-1][2] + 1 == int(number))
        ):
            parts[-1][2] = int(number)
        else:
            parts.append([prefix, int(number), int(number)])
    words = [
        p[0] if len(p) == 1 else f"{p[0]}#{p[1]}" + (f"-{p[2]}" if p[2] != p[1] else "")
        for p in parts
    ]
    return " ".join(words)


def _response_label(value: GenerateContentResponse) -> list[str]:
    words: list[str] = []
    for candidate in value.candidates or ():
        prefix = f"c{candidate.index}:" if candidate.index else ""
        for part in (candidate.content.parts if candidate.content else None) or ():
            call = part.function_call
            if call is not None:
                if call.name:
                    words.append(f"{prefix}{call.name}()")
                elif call.partial_args:
                    words.append(f"{prefix}partial")
                else:
                    words.append(f"{prefix}call")
            elif part.text is not None:
                if part.text or not candidate.finish_reason:
                    words.append(prefix + ("thought" if part.thought else "text"))
            else:
                words.append(prefix + "other")
        if candidate.finish_reason:
            words.append(prefix + candidate.finish_reason)
    if value.prompt_feedback is not None and value.prompt_feedback.block_reason:
        words.append("blocked")
    if value.error is not None:
        words.append("error")
    return words or (["usage"] if value.usage_metadata is not None else ["empty"])


def _chunk_label(value: ChatCompletionChunk) -> list[str]:
    if not value.choices:
        return ["usage"] if value.usage is not None else ["empty"]
    words: list[str] = []
    for choice in value.choices:
        prefix = f"c{choice.index}:" if choice.index else ""
        delta = choice.delta
        if delta.content:
            words.append(prefix + "content")
        if delta.reasoning_content or delta.reasoning:
            words.append(prefix + "reasoning")
        for call in delta.tool_calls or ():
            arguments = call.function.arguments if call.function is not None else None
            if call.id is not None and arguments:
                words.append(f"{prefix}tool#{call.index}")
            elif call.id is not None:
                words.append(f"{prefix}head#{call.index}")
            else:
                words.append(f"{prefix}args#{call.index}")
        if delta.extra_content:
            words.append(prefix + "sig")
        if choice.finish_reason is not None:
            words.append(prefix + choice.finish_reason)
        if not words and delta.role:
            words.append(prefix + "role")
    return words or ["empty"]


def label(value: Any, limit: int = 18, kinds: Kinds = _ITEMS) -> str:
    """A few words for a marble: what the value holds, at most ``limit`` characters."""
    if _is_item(value, kinds):
        text = kinds[type(value)].label(value)
    elif isinstance(value, bytes | bytearray):
        text = f"{len(value)}B"
    elif isinstance(value, SSEEvent):
        text = "data" if value.event == "message" else value.event
    elif isinstance(value, GenerateContentResponse):
        text = " ".join(_response_label(value))
    elif is_event(value):
        text = event_label(value)
    elif isinstance(value, ChatCompletionChunk):
        text = " ".join(_chunk_label(value))
    elif isinstance(value, BaseException):
        text = type(value).__name__
    elif _is_batch(value, kinds):
        text = _batch_label(value, kinds)
    elif isinstance(value, str):
        text = value
    else:
        text = repr(value)
    return short(text, limit)


def _categories(value: Any, kinds: Kinds) -> set[str]:
    if isinstance(value, BaseException):
        return {"error"}
    if isinstance(value, bytes | bytearray | SSEEvent):
        return {"raw"}
    found: set[str] = set()
    if is_event(value):
        named = event_category(value)
        return {named} if named is not None else found
    if isinstance(value, GenerateContentResponse):
        if value.error is not None:
            found.add("error")
        if value.prompt_feedback is not None and value.prompt_feedback.block_reason:
            found.add("finish")
        for candidate in value.candidates or ():
            if candidate.finish_reason:
                found.add("finish")
            for part in (candidate.content.parts if candidate.content else None) or ():
                if part.function_call is not None:
                    found.add("call")
                elif part.text:
                    found.add("thought" if part.thought else "text")
        if value.usage_metadata is not None:
            found.add("usage")
        return found
    if isinstance(value, ChatCompletionChunk):
        if value.usage is not None:
            found.add("usage")
        for choice in value.choices:
            if choice.finish_reason is not None:
                found.add("finish")
            if choice.delta.tool_calls:
                found.add("call")
            if choice.delta.reasoning_content or choice.delta.reasoning:
                found.add("thought")
            if choice.delta.content:
                found.add("text")
        return found
    batch = value if _is_batch(value, kinds) else [value] if _is_item(value, kinds) else []
    for item in batch:
        name = kinds[type(item)].category(item)
        if name is not None:
            found.add(name)
    return found


_PRIORITY = ("error", "call", "finish", "thought", "text", "usage", "raw")
CATEGORIES = (*_PRIORITY, "other")
"""The colours of marbles, by what a value mostly is."""


def category(value: Any, kinds: Kinds = _ITEMS) -> str:
    """``"error"``, ``"call"``, ``"finish"``, ``"thought"``, ``"text"``, ``"usage"``,
    ``"raw"`` (bytes, SSE events) or ``"other"``: the most telling thing in ``value``."""
    found = _categories(value, kinds)
    for name in _PRIORITY:
        if name in found:
            return name
    return "other"


def jsonable(value: Any) -> Any:
    """Plain JSON data of ``value``: items as ``{"Text": {...}}``, bytes as text."""
    if isinstance(value, bytes | bytearray):
        return bytes(value).decode("utf-8", "replace")
    if isinstance(value, BaseException):
        data: dict[str, Any] = {"error": type(value).__name__, "message": str(value)}
        for name in ("code", "status", "event", "reason", "candidates"):
            attribute = getattr(value, name, None)
            if attribute is not None:
                data[name] = jsonable(attribute)
        return data
    if _is_item(value):
        return {type(value).__name__: msgspec.to_builtins(value)}
    if isinstance(value, SSEEvent):
        return {"data": value.data, "event": value.event, "id": value.id, "retry": value.retry}
    if isinstance(value, list | tuple):
        return [jsonable(entry) for entry in value]
    try:
        return msgspec.to_builtins(value, str_keys=True)
    except (TypeError, msgspec.EncodeError):
        return repr(value)


def to_json(value: Any, limit: int = 4000) -> str:
    """:func:`jsonable` as indented JSON text, cut to ``limit`` characters."""
    text = json.dumps(jsonable(value), ensure_ascii=False, indent=1, default=repr)
    return text if len(text) <= limit else text[: limit - 1] + "…"
