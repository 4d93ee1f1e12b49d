"""What :class:`~rxgem.core.ChunkBuilder` keeps of each choice of a stream, and the entries
it writes into a choice's delta."""

from __future__ import annotations

from typing import Any

from ..openai import AudioStream, ContentMap, MetadataMerger

__all__ = ["ChoiceState", "image_entry", "merge", "signature_extra"]


def signature_extra(signature: str) -> dict[str, dict[str, str]]:
    return {"google": {"thought_signature": signature}}


def image_entry(index: int, url: str) -> dict[str, Any]:
    """A ``delta.images`` entry; its running ``index`` keeps two images apart in the SDK."""
    return {"index": index, "type": "image_url", "image_url": {"url": url}}


class ChoiceState:
    """What the builder keeps of one choice."""

    __slots__ = (
        "audio",
        "audio_id",
        "citation",
        "content",
        "entries",
        "grounding",
        "images",
        "urls",
    )

    def __init__(self) -> None:
        self.content = ContentMap()
        self.entries = 0  # extra_content.google.parts entries sent
        self.images = 0  # delta.images entries sent
        self.audio: AudioStream | None = None
        self.audio_id: str | None = None
        self.grounding: MetadataMerger | None = None
        self.citation: MetadataMerger | None = None
        self.urls: MetadataMerger | None = None


def merge(merger: MetadataMerger | None, piece: dict[str, Any]) -> MetadataMerger:
    if merger is None:
        merger = MetadataMerger()
    merger.add(piece)
    return merger
