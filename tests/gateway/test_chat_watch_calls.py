"""Signature memory's watch sees every streamed chunk a server relays: it hands each one
straight to its collector, with no Python call in between (counted with ``sys.setprofile``,
not timed)."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from types import FrameType
from typing import Any

import msgspec

from rxgem.core.chat import ChatCompletionChunk
from rxgem.gateway._signature_memory import ChatWatch, MemorySession, SignatureMemory


def python_calls(work: Callable[[], object]) -> list[str]:
    """The Python functions ``work`` entered (itself left out), in order."""
    entered: list[str] = []

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event == "call":
            entered.append(frame.f_code.co_qualname)

    sys.setprofile(profile)
    try:
        work()
    finally:
        sys.setprofile(None)
    return [name for name in entered if not name.startswith("python_calls")][1:]


def test_signature_memory_s_watch_hands_each_chunk_to_its_collector() -> None:
    memory = SignatureMemory(logging.getLogger("test"))
    session = MemorySession(memory, None, "owner", "gemini-3-pro", None)  # type: ignore[arg-type]
    watch = ChatWatch(session)
    chunk = msgspec.convert(
        {
            "id": "c",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "gemini-3-pro",
            "choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": None}],
        },
        ChatCompletionChunk,
    )
    calls = python_calls(lambda: watch.chunk(chunk))
    assert calls == ["ChatSignatures.chunk"]
