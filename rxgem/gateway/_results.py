"""What the gateway answers: typed results for the edge (the server, the in-process
transport) to frame; failures are raised (:class:`~rxgem.replies.Refusal` for what the
client asked wrong, ``RxGemError`` for Gemini's and the translation's)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from reactivex import Observable

from ..core import ChatCompletion, ChatCompletionChunk
from ..core.responses import Response, ResponsesEvent

__all__ = ["ChatRun", "Document", "OnResponse", "ResponsesRun"]

OnResponse = Callable[[Response], Awaitable[None]]
"""Awaited with a Responses answer's final response before it goes out (never raises)."""


@dataclass(frozen=True, slots=True)
class ChatRun:
    """A chat completion under way (not subscribed yet).

    Attributes:
        source: the chunks (``stream``), or the one completion.
        stream: whether the client asked for ``stream``.
        send_usage: whether the usage chunk (``choices: []``) goes to the client; the
            gateway asked for it for the caller's count if not (``count_usage``).
        watch: what sees the answer go out (signature memory), if anything: each
            ``chunk``/``completion`` before it is sent, and ``done()`` awaited before
            its end.
    """

    source: Observable[ChatCompletionChunk] | Observable[ChatCompletion]
    stream: bool
    send_usage: bool = True
    watch: Any = None


@dataclass(frozen=True, slots=True)
class ResponsesRun:
    """A Responses answer under way: its events (not subscribed yet), and what keeps it."""

    events: Observable[ResponsesEvent]
    on_response: OnResponse
    stream: bool


@dataclass(frozen=True, slots=True)
class Document:
    """A JSON answer, ready as it is (a stored response, a background run's state)."""

    body: bytes
