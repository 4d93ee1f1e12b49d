"""The transport layer: Gemini's streaming endpoint over httpx, as an ``Observable[bytes]``.

``from_gemini()`` POSTs a ``GenerateContentRequest`` to
``{base_url}/models/{model}:streamGenerateContent?alt=sse`` and emits the response
body's byte chunks as they arrive, ready for ``gemini_to_openai()``.

Where the request runs:

- ``client=httpx.Client(...)`` (or no client outside a running event loop): on a
  worker thread, or on the ``scheduler`` you pass (e.g. a ``ThreadPoolScheduler``).
  Items are emitted on that thread.
- ``client=httpx.AsyncClient(...)`` (or no client inside a running event loop): as an
  asyncio task on the running loop (or on the loop of an ``AsyncIOScheduler`` you
  pass). Items are emitted on the loop. This is the mode for ``async def`` code and
  Jupyter, where ``Observable.run()`` would deadlock (it and ``rxgem.iterate()`` on
  the loop's thread get a ``RuntimeError`` at once): consume with
  ``rxgem.aiterate()`` or ``await obs.pipe(ops.to_list())``.

Backpressure: the worker thread of a sync client reads the next piece of the body
only once ``on_next`` returns, so a consumer that blocks it (``rxgem.iterate`` does
when it holds too many items) holds back the read. The task of an async client
waits before each read while the :class:`~rxgem.bridge.FlowGate` that was
in :data:`~rxgem.bridge.current_gate` at subscription is held
(``rxgem.aiterate`` sets one). Either way TCP then slows Gemini down.

Disposing of the subscription (``dispose()``, ``take(n)``, an error downstream) closes
the HTTP response at once: the socket is shut down under a blocked read, the asyncio
task is cancelled, and nothing keeps running.

What an observer raises is not sent back to it with ``on_error``: it propagates out of
the worker (to ``threading.excepthook``, the scheduler, or the event loop's exception
handler), as reactivex's own sources let it propagate since 6.1.1. Sent back down, it would
reach observers already stopped and vanish: a stream's error given to a subscriber without
``on_error`` is raised by that subscriber, inside an ``on_next`` upstream. The response is
closed either way.

A line of the body longer than ``max_line_bytes`` (64 MiB by default) ends the stream
with a :class:`~rxgem.MalformedStreamError` before any of the chunk that makes it so
is emitted: the SSE decoder downstream holds a line until its end, so an endless one
would otherwise grow in memory until the process dies. Each chunk costs one ``rfind``
(in C); a closer look happens only when the chunk could take a line past the limit.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypedDict

import httpx
from httpx import USE_CLIENT_DEFAULT
from httpx._client import UseClientDefault  # the type of USE_CLIENT_DEFAULT
from reactivex import Observable, abc

from ._cassette import CassetteSink, sink_of
from ._drivers import exchange_source
from ._http import RetryPolicy, resolve_headers, stream_url
from ._machine import ExchangeMachine, Target
from ._strategies import GENERATE_CONTENT

__all__ = ["DEFAULT_MAX_LINE_BYTES", "TransportOptions", "from_gemini"]

DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024
"""The longest line of a response body :func:`from_gemini` lets through by default (64 MiB)."""


class TransportOptions(TypedDict, total=False):
    """The keyword options of :func:`from_gemini` besides the request and the model."""

    api_key: str | None
    access_token: str | None
    base_url: str | None
    client: httpx.Client | httpx.AsyncClient | None
    timeout: httpx.Timeout | float | UseClientDefault | None
    headers: Mapping[str, str] | None
    retry: RetryPolicy | int | None
    scheduler: abc.SchedulerBase | None
    max_line_bytes: int | None
    record: CassetteSink | None


def from_gemini(
    request: Mapping[str, Any],
    *,
    model: str,
    api_key: str | None = None,
    access_token: str | None = None,
    base_url: str | None = None,
    client: httpx.Client | httpx.AsyncClient | None = None,
    timeout: httpx.Timeout | float | UseClientDefault | None = USE_CLIENT_DEFAULT,
    headers: Mapping[str, str] | None = None,
    retry: RetryPolicy | int | None = None,
    scheduler: abc.SchedulerBase | None = None,
    max_line_bytes: int | None = DEFAULT_MAX_LINE_BYTES,
    record: CassetteSink | None = None,
) -> Observable[bytes]:
    """Stream a Gemini response body as byte chunks.

    .. code::

        from_gemini({"contents": [...]}, model="gemini-2.5-flash")
        ---b"data: {…}\\r\\n\\r\\n"---b"data: {…}"---b"…"---|

    Args:
        request: a ``GenerateContentRequest`` as a dict (``contents``,
            ``systemInstruction``, ``tools``, ``generationConfig``, ...).
        model: the model name, with or without ``models/``.
        api_key: the key; default ``GEMINI_API_KEY``, then ``GOOGLE_API_KEY``.
        access_token: an OAuth bearer token (Vertex AI) used instead of a key.
        base_url: default Google AI Studio ``v1beta``; a Vertex AI base such as
            ``https://LOCATION-aiplatform.googleapis.com/v1/projects/P/locations/L/publishers/google``
            works with ``access_token``.
        client: an ``httpx.Client`` (request on a worker thread or ``scheduler``) or an
            ``httpx.AsyncClient`` (request as a task on the event loop). Without one,
            rxgem makes and closes its own: async when subscribed inside a running
            event loop, else sync on a worker thread. A client you pass is never closed.
        timeout: the httpx timeout of the request; by default the timeout of the
            client you pass, or ``DEFAULT_TIMEOUT`` (10 s to connect, 120 s between
            reads, for long thinking pauses) for a client rxgem makes.
        headers: extra request headers.
        retry: a :class:`RetryPolicy` (or a number of attempts) for failures before the
            first byte: 429/500/503 and connect errors, with exponential backoff that
            honours ``retry_after``. Off by default; never retries once bytes were emitted.
        scheduler: for a sync client, where the request runs (default: a new thread);
            for an async client, an ``AsyncIOScheduler`` whose loop runs the task.
        max_line_bytes: the longest line the body may hold, in bytes between two
            ``\\n`` (64 MiB by default, :data:`DEFAULT_MAX_LINE_BYTES`: each Gemini
            event is one line, and one with an image or audio can be tens of MB). A longer
            line stops the read: the response is closed and the Observable errors with
            :class:`MalformedStreamError` ("an upstream line is longer than
            max_line_bytes=N bytes"), after emitting every chunk before the one that
            took the line past the limit, and none of that one. Nothing is buffered
            here, so the SSE decoder downstream never holds more than about this much
            of a line. ``None``: no limit.
        record: record each HTTP exchange as a cassette (docs/testing.md): a file path
            (written when the exchange ends, each time) or a callable given the cassette
            dict. Credentials never reach it; a recording that fails is logged, the
            stream goes on.

    Raises:
        ValueError: at call time, for ``max_line_bytes`` not a positive int or None.
        MissingCredentialsError: at call time, when no key or token can be found.
        InvalidRequestError: at call time, when ``model`` is not a model id (one path
            segment under ``models/``; see :func:`~rxgem.transport.model_segment`).

    The Observable errors with :class:`GeminiAPIError` for a non-200 response (with
    ``http_status``, ``status``, ``message``, ``details``, ``retry_after``) and with
    :class:`GeminiTransportError` when the connection fails, after everything that
    had already arrived was emitted.
    """
    url = stream_url(base_url, model)
    send_headers = resolve_headers(api_key, access_token, headers)
    body = dict(request)
    policy = RetryPolicy(attempts=retry) if isinstance(retry, int) else retry
    if policy is not None and policy.attempts < 1:
        raise ValueError("retry attempts must be at least 1")
    if max_line_bytes is not None and (
        type(max_line_bytes) is not int or max_line_bytes < 1  # not a bool either
    ):
        raise ValueError(f"max_line_bytes must be a positive int or None, not {max_line_bytes!r}")
    target = Target(url, send_headers, body)
    return exchange_source(
        lambda: ExchangeMachine(GENERATE_CONTENT, target, policy=policy, max_bytes=max_line_bytes),
        client=client,
        scheduler=scheduler,
        timeout=timeout,
        sink=sink_of(record),
        source="from_gemini",
    )
