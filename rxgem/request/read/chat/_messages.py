"""The Chat Completions reader: OpenAI ``messages`` → the conversation (``rxgem.request.form``).

- ``system`` / ``developer`` messages → the system texts (all of them, in order:
  Gemini has one system instruction, so a later one is appended to it).
- ``user`` → a ``user`` turn: text, images (``data:`` URLs inline, other URLs by
  reference), ``input_audio``, ``file``.
- ``assistant`` → a ``model`` turn: its text, the parts rxgem kept in
  ``extra_content.google.parts`` back where they stood in the text (code, images,
  built-in tool parts, each with its signature), the text signature on the last
  text part, then one call per tool call (with its signature).
- ``tool`` → results, all results of one assistant turn in one ``user`` turn, in the
  order of its calls, each named after the call its ``tool_call_id`` names.

Adjacent turns of one role are merged, except that text is never merged into a turn of
function results (Gemini 3 answers such a turn with an empty candidate).

The translation is linear in the size of the messages: each message is read once, each
content merged in place, each image restored once. Tool-call arguments and the parts kept in
``extra_content`` nested deeper than ``MAX_JSON_DEPTH`` (``_json``) levels are
refused (Gemini would be sent what Python cannot even copy); a tool result that deep is sent
as text.
"""

from __future__ import annotations

import base64
import binascii
import json
import mimetypes
from typing import Any

import msgspec

from ....core import InvalidRequestError
from ....core.gemini import Part as GeminiPart
from ....core.openai import render_code
from ..._json import MAX_JSON_DEPTH, JSONObject, check_depth, loads, quoted
from ..._signatures import call_signature, calls_signatures, message_signature, split_id
from ...form import (
    Call,
    Conversation,
    Kept,
    Media,
    Part,
    Result,
    Text,
    Turn,
    merge_turns,
)

__all__ = ["call_arguments", "file_part", "read_messages", "response_object"]


def _data_url(url: str, where: str) -> tuple[str, str] | None:
    """``(mime_type, base64)`` of a ``data:…;base64,…`` URL, ``None`` for another URL."""
    if not url.startswith("data:"):
        return None
    head, comma, data = url[5:].partition(",")
    mime, _, encoding = head.partition(";")
    if not comma or encoding != "base64":
        raise InvalidRequestError(
            "a data: URL must be base64 (data:<type>;base64,<data>)", where=where
        )
    return mime or "application/octet-stream", data


def file_part(url: str, where: str, default_mime: str | None = None) -> Media:
    """A file by URL: a ``data:`` URL inline, another by reference (its type guessed)."""
    inline = _data_url(url, where)
    if inline is not None:
        return Media(inline[0], data=inline[1])
    mime = mimetypes.guess_type(url.split("?", 1)[0])[0] or default_mime
    return Media(mime, uri=url)


def _user_parts(content: Any, where: str) -> list[Text | Media]:
    if type(content) is str:
        return [Text(content)]
    if type(content) is not list:
        raise InvalidRequestError("content must be a string or a list of parts", where=where)
    parts: list[Text | Media] = []
    for i, item in enumerate(content):
        at = f"{where}[{i}]"
        kind = item.get("type") if type(item) is dict else None
        if kind == "text":
            parts.append(Text(_string(item.get("text"), f"{at}.text")))
        elif kind == "image_url":
            image = item.get("image_url")
            url = image.get("url") if type(image) is dict else image
            parts.append(file_part(_string(url, f"{at}.image_url.url"), f"{at}.image_url.url"))
        elif kind == "input_audio":
            audio = item.get("input_audio")
            audio = audio if type(audio) is dict else {}
            fmt = _string(audio.get("format"), f"{at}.input_audio.format")
            data = _string(audio.get("data"), f"{at}.input_audio.data")
            parts.append(Media(f"audio/{fmt}", data=data))
        elif kind == "file":
            file = item.get("file")
            file = file if type(file) is dict else {}
            if type(file.get("file_data")) is str:
                url = file["file_data"]
                if not url.startswith("data:"):
                    guessed = mimetypes.guess_type(str(file.get("filename") or ""))[0]
                    url = f"data:{guessed or 'application/octet-stream'};base64,{url}"
                parts.append(file_part(url, f"{at}.file.file_data"))
            elif type(file.get("file_id")) is str:
                parts.append(file_part(file["file_id"], f"{at}.file.file_id"))
            else:
                raise InvalidRequestError(
                    "a file part needs file_data or file_id", where=f"{at}.file"
                )
        else:
            raise InvalidRequestError(
                f"unknown content part type {quoted(kind)}", where=f"{at}.type"
            )
    return parts


def _string(value: Any, where: str) -> str:
    if type(value) is not str:
        raise InvalidRequestError(f"must be a string, not {type(value).__name__}", where=where)
    return value


def _text(content: Any, where: str) -> str:
    """The text of an assistant, system or tool message's content."""
    if content is None:
        return ""
    if type(content) is str:
        return content
    if type(content) is list:
        pieces = []
        for i, item in enumerate(content):
            kind = item.get("type") if type(item) is dict else None
            if kind not in ("text", "refusal"):
                raise InvalidRequestError(
                    f"this message takes text parts, not {quoted(kind)}", where=f"{where}[{i}].type"
                )
            pieces.append(_string(item.get(kind), f"{where}[{i}].{kind}"))
        return "".join(pieces)
    raise InvalidRequestError("content must be a string or a list of parts", where=where)


def _restore(
    part: JSONObject, entry: JSONObject, message: JSONObject, where: str, restored: set[int]
) -> JSONObject | None:
    """The part as Gemini sent it: an image's base64 is back from ``images``.

    Each image goes back once (``restored`` holds the indexes already sent): a part per
    image is what rxgem emits, and parts naming one big image over and over would make the
    request grow with their product.
    """
    index = entry.get("image_index")
    inline = part.get("inlineData")
    if type(index) is int and type(inline) is dict and "data" not in inline:
        if index in restored:
            raise InvalidRequestError(
                f"images[{index}] was already sent back for an earlier part",
                where=f"{where}.image_index",
            )
        images = message.get("images")
        image = images[index] if type(images) is list and 0 <= index < len(images) else None
        url = image.get("image_url", {}).get("url") if type(image) is dict else None
        at = f"{where.rpartition('.extra_content')[0]}.images[{index}].image_url.url"
        found = _data_url(url, at) if type(url) is str else None
        if found is None:
            return None  # the client kept no image: nothing to send
        restored.add(index)
        part = {**part, "inlineData": {**inline, "data": found[1]}}
    return part


def _audio_clips(message: JSONObject, entries: list[Any]) -> list[str | None]:
    """Each audio entry's own clip (base64), cut from the message's whole ``audio.data``.

    ``None`` for every clip when the client kept no audio data (OpenAI's own history
    keeps only the audio's id): such parts are not sent back.
    """
    found = [e.get("audio_bytes") for e in entries if type(e) is dict and "audio_bytes" in e]
    sizes = [size for size in found if type(size) is int]
    audio = message.get("audio")
    data = audio.get("data") if type(audio) is dict else None
    if not sizes or len(sizes) != len(found) or type(data) is not str:
        return [None] * len(found)
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return [None] * len(found)
    if sum(sizes) != len(raw):
        return [None] * len(found)
    clips: list[str | None] = []
    start = 0
    for size in sizes:
        clips.append(base64.b64encode(raw[start : start + size]).decode("ascii"))
        start += size
    return clips


def _assistant_parts(message: JSONObject, where: str) -> list[Part]:
    content = _text(message.get("content"), f"{where}.content")
    google = (
        message.get("extra_content", {}).get("google")
        if type(message.get("extra_content")) is dict
        else None
    )
    entries = google.get("parts") if type(google) is dict else None
    entries = entries if type(entries) is list else []
    clips = iter(_audio_clips(message, entries))
    parts: list[Part] = []
    restored: set[int] = set()
    position = 0
    for n, entry in enumerate(entries):
        at = f"{where}.extra_content.google.parts[{n}]"
        part = entry.get("part") if type(entry) is dict else None
        if type(part) is not dict:
            raise InvalidRequestError("an entry needs its Gemini part", where=f"{at}.part")
        check_depth(part, f"{at}.part")
        index = entry.get("content_index")
        if type(index) is int and position <= index <= len(content):
            if index > position:
                parts.append(Text(content[position:index]))
            position = index
            rendered = _rendered(part, content, position)
            if rendered:
                position += len(rendered)  # the code shown as Markdown is the part itself
        if "audio_bytes" in entry:
            clip = next(clips)
            inline = part.get("inlineData")
            if clip is not None and type(inline) is dict:
                parts.append(Kept({**part, "inlineData": {**inline, "data": clip}}))
            continue  # without its data, a clip cannot be sent back
        back = _restore(part, entry, message, at, restored)
        if back is not None:
            parts.append(Kept(back))
    if position < len(content):
        parts.append(Text(content[position:]))
    signature = message_signature(message)
    if signature is not None and signature not in calls_signatures(message):
        last = next((p for p in reversed(parts) if _is_text(p)), None)
        if isinstance(last, Text):
            last.signature = signature
        elif isinstance(last, Kept):
            last.part = {**last.part, "thoughtSignature": signature}
        else:
            parts.append(Text("", signature=signature))
    return parts


def _is_text(part: Part) -> bool:
    return isinstance(part, Text) or (isinstance(part, Kept) and "text" in part.part)


def _rendered(part: JSONObject, content: str, position: int) -> str:
    """The Markdown rxgem showed for a code part at ``position``, if the content has it."""
    if "executableCode" not in part and "codeExecutionResult" not in part:
        return ""
    try:
        typed = msgspec.convert(part, GeminiPart)
    except msgspec.ValidationError:
        return ""
    first = position == 0 or content[position - 1] == "\n"
    shown = render_code(typed, first=first)
    return shown if shown and content.startswith(shown, position) else ""


def call_arguments(value: Any, where: str) -> JSONObject:
    if value is None or value == "":
        return {}
    if type(value) is dict:
        check_depth(value, where)
        return value
    if type(value) is not str:
        raise InvalidRequestError("arguments must be a JSON string", where=where)
    try:
        args = loads(value, where)
    except json.JSONDecodeError as exc:
        raise InvalidRequestError(
            f"arguments are not valid JSON ({exc.msg})", where=where
        ) from None
    if type(args) is not dict:
        raise InvalidRequestError("arguments must be a JSON object", where=where)
    return args


def response_object(content: Any, where: str) -> JSONObject:
    """A tool result as Gemini's ``functionResponse.response`` (always an object): its JSON
    object, or ``{"output": text}`` for any other text (also for JSON nested deeper than
    ``MAX_JSON_DEPTH`` levels: the model still reads it, and nothing is lost)."""
    text = _text(content, where)
    try:
        value = loads(text, where, MAX_JSON_DEPTH)
    except (json.JSONDecodeError, InvalidRequestError):
        value = None
    return value if type(value) is dict else {"output": text}


def _tool_media(content: Any, where: str, gemini3: bool) -> tuple[Any, list[Media]]:
    """A tool result's text, and its images and files as Gemini 3's
    ``functionResponse.parts`` (Gemini 2.x refuses the field)."""
    if type(content) is not list:
        return content, []
    texts = [item for item in content if type(item) is dict and item.get("type") == "text"]
    if len(texts) == len(content):
        return content, []
    if not gemini3:
        raise InvalidRequestError(
            "images and files in a tool result need Gemini 3 (Gemini 2.x takes text only)",
            where=where,
        )
    media = [item for item in content if not (type(item) is dict and item.get("type") == "text")]
    return texts, [part for part in _user_parts(media, where) if isinstance(part, Media)]


class _Call:
    __slots__ = ("id", "name", "position", "turn")

    def __init__(self, id: str, name: str, turn: int, position: int) -> None:
        self.id = id
        self.name = name
        self.turn = turn
        self.position = position


def read_messages(messages: Any, *, media_results: bool) -> Conversation:
    """The conversation of a Chat Completions ``messages`` list.

    Args:
        media_results: take images and files in tool results (Gemini 3; Gemini 2.x
            refuses them).
    """
    if type(messages) is not list or not messages:
        raise InvalidRequestError("messages must be a non-empty list", where="messages")
    system: list[str] = []
    turns: list[Turn] = []
    calls: dict[str, _Call] = {}
    # the assistant message (index) whose calls await results → the results in call order
    pending: dict[int, list[Result | None]] = {}
    for i, message in enumerate(messages):
        where = f"messages[{i}]"
        if type(message) is not dict:
            raise InvalidRequestError("a message must be an object", where=where)
        role = message.get("role")
        if role in ("system", "developer"):
            system.append(_text(message.get("content"), f"{where}.content"))
        elif role == "user":
            _flush(pending, turns)
            parts: list[Part] = [*_user_parts(message.get("content"), f"{where}.content")]
            if not parts:
                raise InvalidRequestError("a user message needs content", where=f"{where}.content")
            turns.append(Turn("user", parts))
        elif role == "assistant":
            _flush(pending, turns)
            parts = _assistant_parts(message, where)
            results = _calls(message, where, i, parts, calls)
            if results:
                pending[i] = results
            if parts:
                turns.append(Turn("model", parts))
        elif role == "tool":
            raw = message.get("tool_call_id")
            call_id = split_id(_string(raw, f"{where}.tool_call_id"))[0]
            known = calls.get(call_id)
            if known is None or known.turn not in pending:
                raise InvalidRequestError(
                    f"no assistant tool call with id {quoted(call_id)} awaits a result",
                    where=f"{where}.tool_call_id",
                )
            at = f"{where}.content"
            content, media = _tool_media(message.get("content"), at, media_results)
            result = Result(known.name, response_object(content, at), call_id, media)
            pending[known.turn][known.position] = result
        else:
            raise InvalidRequestError(f"unknown role {quoted(role)}", where=f"{where}.role")
    _flush(pending, turns)
    if not turns:
        raise InvalidRequestError(
            "Gemini needs a user or assistant message, not only system messages", where="messages"
        )
    return Conversation(system, merge_turns(turns))


def _calls(
    message: JSONObject, where: str, turn: int, parts: list[Part], calls: dict[str, _Call]
) -> list[Result | None]:
    """An assistant message's tool calls onto ``parts``; a slot per call for its result."""
    tool_calls = message.get("tool_calls") or []
    if type(tool_calls) is not list:
        raise InvalidRequestError("tool_calls must be a list", where=f"{where}.tool_calls")
    results: list[Result | None] = []
    for n, call in enumerate(tool_calls):
        at = f"{where}.tool_calls[{n}]"
        if type(call) is not dict:
            raise InvalidRequestError("a tool call must be an object", where=at)
        function = call.get("function")
        if type(function) is not dict:
            raise InvalidRequestError("a tool call needs a function", where=f"{at}.function")
        name = _string(function.get("name"), f"{at}.function.name")
        if not name:
            raise InvalidRequestError("a tool call needs a name", where=f"{at}.function.name")
        raw_id = call.get("id")
        call_id = split_id(raw_id)[0] if type(raw_id) is str else None
        args = call_arguments(function.get("arguments"), f"{at}.function.arguments")
        parts.append(Call(name, args, call_id or None, call_signature(call)))
        if call_id:
            calls[call_id] = _Call(call_id, name, turn, n)
        results.append(None)
    return results


def _flush(pending: dict[int, list[Result | None]], turns: list[Turn]) -> None:
    """The results of earlier assistant turns, as one turn per turn, in call order."""
    for turn in sorted(pending):
        results = pending[turn]
        done = [result for result in results if result is not None]
        if len(done) != len(results):
            missing = next(n for n, result in enumerate(results) if result is None)
            raise InvalidRequestError(
                "this tool call has no tool message with its result (Gemini needs one"
                " response per call, in the turn right after the calls)",
                where=f"messages[{turn}].tool_calls[{missing}]",
            )
        turns.append(Turn("user", [*done]))
    pending.clear()
