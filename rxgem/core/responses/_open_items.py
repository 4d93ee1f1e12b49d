"""The state of the output items a Responses stream has open: what each one holds
until its ``output_item.done`` (:class:`~rxgem.core.responses._output_items.OutputItems`
makes their events)."""

from __future__ import annotations

from typing import Any

__all__ = ["Call", "Code", "Message", "Reasoning"]


class Message:
    __slots__ = ("id", "index", "logprobs", "parts", "pieces", "start", "text_index")

    def __init__(self, item_id: str, index: int, start: int) -> None:
        self.id = item_id
        self.index = index
        self.start = start  # where its text starts in the content, for annotations
        self.text_index: int | None = None  # the output_text part's index, once open
        self.pieces: list[str] = []
        self.logprobs: list[dict[str, Any]] = []
        self.parts: list[dict[str, Any]] = []  # extra_content.google.parts entries


class Reasoning:
    __slots__ = ("id", "index", "pieces")

    def __init__(self, item_id: str, index: int) -> None:
        self.id = item_id
        self.index = index
        self.pieces: list[str] | None = None  # the summary's text, once its part is open


class Call:
    __slots__ = ("call_id", "id", "index", "name")

    def __init__(self, item_id: str, index: int, call_id: str, name: str) -> None:
        self.id = item_id
        self.index = index
        self.call_id = call_id
        self.name = name


class Code:
    __slots__ = ("code", "id", "index", "parts")

    def __init__(self, item_id: str, index: int, code: str | None, part: dict[str, Any]) -> None:
        self.id = item_id
        self.index = index
        self.code = code
        self.parts = [part]
