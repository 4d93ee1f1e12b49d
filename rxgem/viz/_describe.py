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
from typing import Any

import msgspec

from ..core import ChatCompletionChunk, GenerateContentResponse, SSEEvent
from ..core import _items as items

__all__ = ["category", "describe", "describe_item", "jsonable", "label", "short", "to_json"]

_ITEM_TYPES = (
    items.Meta,
    items.Text,
    items.CallPart,
    items.Finish,
    items.Usage,
    items.Blocked,
    items.SlotUpdate,
    items.ToolCallHeader,
    items.ToolCall,
    items.TextSignature,
    items.End,
)


def short(value: Any, limit: int = 110) -> str:
    """``value`` (or its ``repr``) on one line, cut to ``limit`` characters with ``…``."""
    text = value if isinstance(value, str) else repr(value)
    text = text.replace("\r", "\\r").replace("\n", "\\n")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _args(args: Any) -> str:
    return short(json.dumps(args, ensure_ascii=False, separators=(",", ":")), 60)


def describe_item(item: Any) -> str:
    """One pipeline item (:mod:`rxgem.items`) as a compact one-liner."""
    kind = type(item).__name__
    if isinstance(item, items.Meta):
        return f"Meta({item.response_id}, {item.model_version})"
    if isinstance(item, items.Text):
        what = "thought" if item.thought else "text"
        sig = ", sig" if item.signature else ""
        return f"Text(c{item.candidate} {what} {_args(item.text[:40])}{sig})"
    if isinstance(item, items.CallPart):
        call = item.call
        what = call.name or ("partialArgs" if call.partial_args else "…")
        if call.args is not None:
            what += _args(call.args)
        return f"CallPart(c{item.candidate} slot {item.slot}: {what})"
    if isinstance(item, items.SlotUpdate | items.ToolCall):
        sig = ", sig" if item.signature else ""
        return f"{kind}(c{item.candidate} slot {item.slot}: {item.name}{_args(item.args)}{sig})"
    if isinstance(item, items.ToolCallHeader):
        return f"ToolCallHeader(c{item.candidate} slot {item.slot}: {item.name})"
    if isinstance(item, items.Finish):
        return f"Finish(c{item.candidate} {item.reason})"
    if isinstance(item, items.End):
        return f"End(c{item.candidate} {item.reason}{', has calls' if item.has_calls else ''})"
    if isinstance(item, items.Usage):
        u = item.usage
        return (
            f"Usage(prompt={u.prompt_token_count}, candidates={u.candidates_token_count},"
            f" thoughts={u.thoughts_token_count}, total={u.total_token_count})"
        )
    if isinstance(item, items.TextSignature):
        return f"TextSignature(c{item.candidate})"
    if isinstance(item, items.Blocked):
        return f"Blocked({item.reason})"
    return short(item, 60)


def _response_kinds(value: GenerateContentResponse) -> list[str]:
    kinds: list[str] = []
    for candidate in value.candidates or ():
        for part in (candidate.content.parts if candidate.content else None) or ():
            if part.function_call is not None:
                kinds.append(f"functionCall({part.function_call.name or '…'})")
            elif part.text is not None:
                kinds.append("thought" if part.thought else "text")
            else:
                kinds.append("other")
        if candidate.finish_reason:
            kinds.append(f"finishReason={candidate.finish_reason}")
    if value.prompt_feedback is not None and value.prompt_feedback.block_reason:
        kinds.append(f"blockReason={value.prompt_feedback.block_reason}")
    if value.usage_metadata is not None:
        kinds.append("usage")
    return kinds


def _is_batch(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, _ITEM_TYPES) for item in value)


def describe(value: Any) -> str:
    """Any pipeline value (or exception) as one line."""
    if isinstance(value, bytes | bytearray):
        return f"bytes[{len(value)}] {short(bytes(value).decode('utf-8', 'replace'), 90)}"
    if isinstance(value, SSEEvent):
        return f"SSEEvent({value.event}) {short(value.data, 90)}"
    if isinstance(value, GenerateContentResponse):
        return f"GenerateContentResponse [{', '.join(_response_kinds(value))}]"
    if isinstance(value, ChatCompletionChunk):
        data = value.to_dict()
        shown = {"choices": data["choices"]} if data["choices"] else {"usage": data.get("usage")}
        return short(json.dumps(shown, ensure_ascii=False, separators=(",", ":")), 150)
    if isinstance(value, BaseException):
        return short(f"{type(value).__name__}: {value}", 150)
    if _is_batch(value):
        return "[" + ", ".join(describe_item(item) for item in value) + "]"
    if isinstance(value, _ITEM_TYPES):
        return describe_item(value)
    return short(value, 110)


def _item_label(item: Any) -> str:
    if isinstance(item, items.Meta):
        return "meta"
    if isinstance(item, items.Text):
        return "thought" if item.thought else "text"
    if isinstance(item, items.CallPart):
        return f"call#{item.slot}"
    if isinstance(item, items.SlotUpdate):
        return f"slot#{item.slot}"
    if isinstance(item, items.ToolCallHeader):
        return f"head#{item.slot}"
    if isinstance(item, items.ToolCall):
        return f"tool#{item.slot}"
    if isinstance(item, items.Finish):
        return item.reason
    if isinstance(item, items.End):
        return f"end:{item.reason or '-'}"
    if isinstance(item, items.Usage):
        return "usage"
    if isinstance(item, items.TextSignature):
        return "sig"
    if isinstance(item, items.Blocked):
        return "blocked"
    return type(item).__name__


def _batch_label(batch: list[Any]) -> str:
    """Item words; Meta and Usage only when alone; numbered runs joined (``tool#0-3``)."""
    if not batch:
        return "[]"
    shown = [i for i in batch if not isinstance(i, items.Meta | items.Usage)] or batch
    parts: list[list[Any]] = []  # [word] or [prefix, first, last]
    for item in shown:
        prefix, hash_, number = _item_label(item).partition("#")
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


def label(value: Any, limit: int = 18) -> str:
    """A few words for a marble: what the value holds, at most ``limit`` characters."""
    if isinstance(value, bytes | bytearray):
        text = f"{len(value)}B"
    elif isinstance(value, SSEEvent):
        text = "data" if value.event == "message" else value.event
    elif isinstance(value, GenerateContentResponse):
        text = " ".join(_response_label(value))
    elif isinstance(value, ChatCompletionChunk):
        text = " ".join(_chunk_label(value))
    elif isinstance(value, BaseException):
        text = type(value).__name__
    elif _is_batch(value):
        text = _batch_label(value)
    elif isinstance(value, _ITEM_TYPES):
        text = _item_label(value)
    elif isinstance(value, str):
        text = value
    else:
        text = repr(value)
    return short(text, limit)


def _categories(value: Any) -> set[str]:
    if isinstance(value, BaseException):
        return {"error"}
    if isinstance(value, bytes | bytearray | SSEEvent):
        return {"raw"}
    found: set[str] = set()
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
    batch = value if _is_batch(value) else [value] if isinstance(value, _ITEM_TYPES) else []
    for item in batch:
        if isinstance(item, items.Text):
            found.add("thought" if item.thought else "text")
        elif isinstance(
            item, items.CallPart | items.SlotUpdate | items.ToolCallHeader | items.ToolCall
        ):
            found.add("call")
        elif isinstance(item, items.Finish | items.End | items.Blocked):
            found.add("finish")
        elif isinstance(item, items.Usage):
            found.add("usage")
    return found


_PRIORITY = ("error", "call", "finish", "thought", "text", "usage", "raw")


def category(value: Any) -> str:
    """``"error"``, ``"call"``, ``"finish"``, ``"thought"``, ``"text"``, ``"usage"``,
    ``"raw"`` (bytes, SSE events) or ``"other"``: the most telling thing in ``value``."""
    found = _categories(value)
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
    if isinstance(value, _ITEM_TYPES):
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
