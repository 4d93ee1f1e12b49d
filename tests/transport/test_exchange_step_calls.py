"""The per-chunk step of a stream costs no more Python calls than it must: it runs once per
chunk of every stream a server relays, so a call in between is paid per chunk.

Counted, not timed: ``sys.setprofile`` sees each Python function entered. A generateContent
chunk through the exchange machine enters the machine's step and the framer's, nothing else
(the line limit's check is one ``rfind`` in the framer).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import FrameType
from typing import Any

from rxgem.transport._machine import ExchangeMachine, Target
from rxgem.transport._strategies import GENERATE_CONTENT

URL = "https://gemini.test/v1beta/models/m:streamGenerateContent?alt=sse"
EVENT = b'data: {"candidates": [{"content": {"parts": [{"text": "hi"}]}}]}\r\n\r\n'


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


def body_machine(max_bytes: int | None) -> ExchangeMachine:
    machine = ExchangeMachine(GENERATE_CONTENT, Target(URL, {}, b"{}"), max_bytes=max_bytes)
    machine.connect()
    machine.response(200, {})
    return machine


def test_a_chunk_under_the_line_limit_enters_the_machine_and_the_framer_only() -> None:
    machine = body_machine(64 * 1024 * 1024)
    out: list[bytes] = []
    calls = python_calls(lambda: out.append(machine.data(EVENT)))
    assert out == [EVENT]
    assert calls == ["ExchangeMachine.data", "LineFramer.feed"]


def test_the_line_is_still_followed_across_chunks_on_the_short_path() -> None:
    machine = body_machine(10)
    assert machine.data(b"12345") == b"12345"  # a line of 5 in progress
    assert machine.data(b"678\n1234") == b"678\n1234"  # 8 ended; 4 in progress
    assert machine.data(b"567890") == b"567890"  # 10: at the limit, not past it
    assert not machine.stopped
    assert machine.data(b"1") == b""  # 11: past it
    assert machine.stopped
    assert machine.framer.failure is not None
