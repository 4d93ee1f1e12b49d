"""A Responses message's content and a function's output → parts of the conversation.

- ``input_text`` (and ``output_text``, ``refusal`` in an assistant message of the
  history) → text;
- ``input_image``: a ``data:`` URL → ``inlineData``, another URL → ``fileData`` (as
  Chat Completions' ``image_url``); a ``file_id`` names a file in OpenAI's storage,
  which Gemini cannot read: unsupported;
- ``input_file``: ``file_data`` (base64, or a ``data:`` URL) → ``inlineData`` (its type
  guessed from ``filename``), ``file_url`` → ``fileData``; a ``file_id``: unsupported.

A ``function_call_output``'s ``output`` is a string or a list of these parts: its text
becomes ``functionResponse.response`` (the JSON object it holds, else
``{"output": text}``), its images and files ``functionResponse.parts`` (Gemini 3 only).
"""

from __future__ import annotations

import mimetypes
from typing import Any

from ....core import InvalidRequestError
from ..._json import JSONObject, quoted
from ..._policy import Unsupported, unsupported
from ...form import Media, Text
from ..chat import file_part, response_object

__all__ = ["function_output", "message_parts", "string"]


_TEXT_KINDS = frozenset({"input_text", "output_text", "text", "refusal", "summary_text"})


def string(value: Any, where: str) -> str:
    """``value`` if it is a string, else an :class:`InvalidRequestError` naming ``where``."""
    if type(value) is not str:
        raise InvalidRequestError(f"must be a string, not {type(value).__name__}", where=where)
    return value


def _text_of(part: JSONObject, kind: str, where: str) -> str:
    key = "refusal" if kind == "refusal" and "refusal" in part else "text"
    return string(part.get(key), f"{where}.{key}")


def _image(part: JSONObject, where: str, policy: Unsupported) -> Media | None:
    url = part.get("image_url")
    if url is not None:
        return file_part(string(url, f"{where}.image_url"), f"{where}.image_url")
    if part.get("file_id") is not None:
        unsupported(
            policy,
            "an image by file_id lives in OpenAI's file storage, which Gemini cannot read",
            f"{where}.file_id",
            "send the image as image_url (a data: URL or an https URL)",
        )
        return None
    raise InvalidRequestError("an input_image needs image_url or file_id", where=where)


def _file(part: JSONObject, where: str, policy: Unsupported) -> Media | None:
    data = part.get("file_data")
    if data is not None:
        data = string(data, f"{where}.file_data")
        if not data.startswith("data:"):
            filename = part.get("filename")
            guessed = mimetypes.guess_type(filename)[0] if type(filename) is str else None
            data = f"data:{guessed or 'application/octet-stream'};base64,{data}"
        return file_part(data, f"{where}.file_data")
    url = part.get("file_url")
    if url is not None:
        return file_part(string(url, f"{where}.file_url"), f"{where}.file_url")
    if part.get("file_id") is not None:
        unsupported(
            policy,
            "a file by file_id lives in OpenAI's file storage, which Gemini cannot read",
            f"{where}.file_id",
            "send the file as file_data (base64, with its filename) or file_url",
        )
        return None
    raise InvalidRequestError("an input_file needs file_data, file_url or file_id", where=where)


def _media(part: JSONObject, kind: str, where: str, policy: Unsupported) -> Media | None:
    return _image(part, where, policy) if kind == "input_image" else _file(part, where, policy)


def message_parts(
    content: Any, where: str, policy: Unsupported, *, media: bool = True
) -> list[Text | Media]:
    """The parts of a message's ``content`` (a string or a list of parts).

    ``media=False`` (system, developer and assistant messages) takes text parts only.
    """
    if type(content) is str:
        return [Text(content)]
    if type(content) is not list:
        raise InvalidRequestError("content must be a string or a list of parts", where=where)
    parts: list[Text | Media] = []
    for i, part in enumerate(content):
        at = f"{where}[{i}]"
        kind = part.get("type") if type(part) is dict else None
        if type(part) is not dict:
            raise InvalidRequestError("a content part must be an object", where=at)
        if kind in _TEXT_KINDS:
            parts.append(Text(_text_of(part, kind, at)))
            continue
        if not media or kind not in ("input_image", "input_file"):
            raise InvalidRequestError(
                f"this message takes {'text ' if not media else ''}parts, not {quoted(kind)}",
                where=f"{at}.type",
            )
        made = _media(part, kind, at, policy)
        if made is not None:
            parts.append(made)
    return parts


def function_output(
    output: Any, where: str, *, gemini3: bool, policy: Unsupported
) -> tuple[JSONObject, list[Media]]:
    """A ``function_call_output``'s ``output`` → ``(response, parts)`` of a
    ``functionResponse``: the text as Gemini's response object, the media as its parts."""
    if type(output) is str:
        return response_object(output, where), []
    if type(output) is not list:
        raise InvalidRequestError("output must be a string or a list of parts", where=where)
    texts: list[str] = []
    media: list[Media] = []
    for i, part in enumerate(output):
        at = f"{where}[{i}]"
        kind = part.get("type") if type(part) is dict else None
        if kind in _TEXT_KINDS:
            texts.append(_text_of(part, str(kind), at))
        elif kind in ("input_image", "input_file"):
            if not gemini3:
                raise InvalidRequestError(
                    "images and files in a function output need Gemini 3 (Gemini 2.x takes"
                    " text only)",
                    where=at,
                )
            made = _media(part, kind, at, policy)
            if made is not None:
                media.append(made)
        else:
            raise InvalidRequestError(
                f"unknown output part type {quoted(kind)}", where=f"{at}.type"
            )
    return response_object("".join(texts), where), media
