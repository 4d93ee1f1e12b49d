"""Media (and Gemini ``inlineData``/``fileData`` parts kept as sent) → Interactions contents.

Interactions types each medium (``image``, ``audio``, ``video``, ``document``) and takes a
listed set of media types for each; a file of another type (``text/plain``,
``application/zip``, ...) is refused here, by its type, rather than sent to a 400.
"""

from __future__ import annotations

from typing import Final

from ....core import InvalidRequestError
from ..._json import JSONObject, quoted
from ...form import Media

__all__ = ["MIME_TYPES", "kept_media", "media_content"]


MIME_TYPES: Final[dict[str, frozenset[str]]] = {
    "image": frozenset(
        f"image/{t}" for t in ("png", "jpeg", "webp", "heic", "heif", "gif", "bmp", "tiff")
    ),
    "audio": frozenset(
        f"audio/{t}"
        for t in (
            *("wav", "mp3", "aiff", "aac", "ogg", "flac", "mpeg"),
            *("m4a", "l16", "opus", "alaw", "mulaw", "webm"),
        )
    ),
    "video": frozenset(
        f"video/{t}" for t in ("mp4", "mpeg", "mpg", "mov", "avi", "x-flv", "webm", "wmv", "3gpp")
    ),
    "document": frozenset(
        {
            "application/pdf",
            "text/csv",
            "application/msword",
            "application/vnd.ms-excel",
            "application/vnd.ms-powerpoint",
            "application/vnd.oasis.opendocument.presentation",
            "application/vnd.oasis.opendocument.spreadsheet",
            "application/vnd.oasis.opendocument.text",
            "application/vnd.openxmlformats-officedocument.presentationml.presentation",
            "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
            "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
            "application/vnd.openxmlformats-officedocument.wordprocessingml.template",
        }
    ),
}
"""The media types Interactions takes, per content type."""

_KINDS: Final = {"image": "image", "audio": "audio", "video": "video"}


def _kind(mime: str | None, where: str) -> str:
    """The content type of a media type (``image`` when unknown: only an ``image_url``
    without a telling extension comes without one)."""
    if mime is None:
        return "image"
    kind = _KINDS.get(mime.partition("/")[0], "document")
    if mime not in MIME_TYPES[kind]:
        raise InvalidRequestError(
            f"Interactions takes no {quoted(mime)} {kind}s (it takes"
            f" {', '.join(sorted(MIME_TYPES[kind]))})",
            where=where,
        )
    return kind


def media_content(media: Media, where: str) -> JSONObject:
    """The Interactions content of an image, a clip or a file."""
    kind = _kind(media.mime, where)
    if media.data is not None:
        return {"type": kind, "data": media.data, "mime_type": media.mime}
    content: JSONObject = {"type": kind, "uri": media.uri}
    if media.mime is not None:
        content["mime_type"] = media.mime
    return content


def kept_media(part: JSONObject, where: str) -> JSONObject | None:
    """The Interactions content of a Gemini ``inlineData``/``fileData`` part, else ``None``."""
    inline = part.get("inlineData")
    if type(inline) is dict:
        mime = inline.get("mimeType")
        return {"type": _kind(mime, where), "data": inline.get("data", ""), "mime_type": mime}
    file = part.get("fileData")
    if type(file) is dict:
        mime = file.get("mimeType")
        content: JSONObject = {"type": _kind(mime, where), "uri": file.get("fileUri", "")}
        if mime is not None:
            content["mime_type"] = mime
        return content
    return None
