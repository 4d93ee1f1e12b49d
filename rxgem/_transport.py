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
  Jupyter, where ``Observable.run()`` would deadlock: consume with
  ``rxgem.aiterate()`` or ``await obs.pipe(ops.to_list())``.

Disposing of the subscription (``dispose()``, ``take(n)``, an error downstream) closes
the HTTP response at once: the socket is shut down under a blocked read, the asyncio
task is cancelled, and nothing keeps running.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import json
import os
import re
import socket
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx
from httpx import USE_CLIENT_DEFAULT
from httpx._client import UseClientDefault  # the type of USE_CLIENT_DEFAULT
from reactivex import Observable, abc
from reactivex.disposable import Disposable
from reactivex.scheduler.eventloop import AsyncIOScheduler

from ._errors import GeminiAPIError, GeminiTransportError, MissingCredentialsError

__all__ = [
    "DEFAULT_BASE_URL",
    "DEFAULT_TIMEOUT",
    "RetryPolicy",
    "from_gemini",
    "http_error",
    "resolve_headers",
    "stream_chat",
    "stream_url",
]

DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com/v1beta"
DEFAULT_TIMEOUT = httpx.Timeout(10.0, read=120.0)
_ENV_KEYS = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)s\s*$")


@dataclass(frozen=True)
class RetryPolicy:
    """Retries for failures before the first byte of the body; never after.

    A request is retried when Gemini answers with one of ``statuses`` or the
    connection cannot be made, at most ``attempts - 1`` times, waiting
    ``backoff * 2**n`` seconds (at most ``max_backoff``), or the server's
    ``retry_after`` when it gave one (at most ``max_retry_after``; a longer
    requested wait is not retried but reported).
    """

    attempts: int = 3
    backoff: float = 0.5
    max_backoff: float = 8.0
    max_retry_after: float = 60.0
    statuses: frozenset[int] = field(default_factory=lambda: frozenset({429, 500, 503}))

    def delay(self, attempt: int, error: BaseException) -> float | None:
        """Seconds to wait before attempt ``attempt + 1``, or ``None`` not to retry."""
        if attempt + 1 >= self.attempts:
            return None
        if isinstance(error, GeminiAPIError):
            if error.http_status not in self.statuses:
                return None
            if error.retry_after is not None:
                return error.retry_after if error.retry_after <= self.max_retry_after else None
        elif not isinstance(error, GeminiTransportError) or not isinstance(
            error.cause, httpx.ConnectError | httpx.ConnectTimeout
        ):
            return None
        return float(min(self.max_backoff, self.backoff * 2**attempt))


def stream_url(base_url: str | None, model: str) -> str:
    """``{base_url}/models/{model}:streamGenerateContent?alt=sse``."""
    base = (base_url or DEFAULT_BASE_URL).rstrip("/")
    name = model.removeprefix("models/")
    return f"{base}/models/{name}:streamGenerateContent?alt=sse"


def resolve_headers(
    api_key: str | None,
    access_token: str | None,
    headers: Mapping[str, str] | None,
    environ: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The request headers: credentials, JSON content type, and ``headers`` on top.

    The API key comes from ``api_key``, else ``GEMINI_API_KEY``, else
    ``GOOGLE_API_KEY``, and is sent as ``x-goog-api-key``; an ``access_token``
    (Vertex AI) is sent as a bearer token instead.
    """
    env = os.environ if environ is None else environ
    out = {"content-type": "application/json", "accept": "text/event-stream"}
    if access_token:
        out["authorization"] = f"Bearer {access_token}"
    else:
        key = api_key or next((env[name] for name in _ENV_KEYS if env.get(name)), None)
        if not key:
            raise MissingCredentialsError(
                "no Gemini API key: pass api_key=..., or set GEMINI_API_KEY or GOOGLE_API_KEY"
                " (for Vertex AI, pass access_token=...)"
            )
        out["x-goog-api-key"] = key
    out.update({k.lower(): v for k, v in (headers or {}).items()})
    return out


def _retry_after(headers: Mapping[str, str], details: list[Any]) -> float | None:
    value = headers.get("retry-after")
    if value:
        try:
            return max(0.0, float(value))
        except ValueError:
            when = email.utils.parsedate_to_datetime(value) if value else None
            if when is not None:
                return max(0.0, when.timestamp() - time.time())
    for detail in details:
        if isinstance(detail, dict) and str(detail.get("@type", "")).endswith("RetryInfo"):
            match = _DURATION.match(str(detail.get("retryDelay", "")))
            if match:
                return float(match.group(1))
    return None


def http_error(
    status: int, headers: Mapping[str, str], body: bytes, reason: str = ""
) -> GeminiAPIError:
    """A :class:`GeminiAPIError` from a non-200 response.

    The body may be ``{"error": {...}}``, the same in a one-element array, or not
    JSON at all (then the message is the first 500 characters of its text).
    """
    try:
        data: Any = json.loads(body)
    except ValueError:
        data = None
    if isinstance(data, list) and len(data) == 1:
        data = data[0]
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict):
        details = error.get("details")
        details = details if isinstance(details, list) else []
        code = error.get("code")
        return GeminiAPIError(
            str(error.get("message") or reason or "(no message)"),
            code=code if isinstance(code, int) else status,
            status=error.get("status") if isinstance(error.get("status"), str) else None,
            details=details,
            http_status=status,
            retry_after=_retry_after(headers, details),
        )
    text = body.decode("utf-8", "replace").strip()[:500]
    return GeminiAPIError(
        text or reason or f"HTTP {status}",
        code=status,
        status=reason.upper().replace(" ", "_") or None,
        http_status=status,
        retry_after=_retry_after(headers, []),
    )


def _transport_error(exc: httpx.HTTPError, url: str) -> GeminiTransportError:
    kind = type(exc).__name__
    text = str(exc) or kind
    return GeminiTransportError(f"{kind} while streaming from {url}: {text}", cause=exc)


def _shutdown(response: httpx.Response | None) -> None:
    """Wake a thread blocked reading ``response`` by shutting its socket down."""
    if response is None:
        return
    stream = response.extensions.get("network_stream")
    sock = stream.get_extra_info("socket") if stream is not None else None
    if isinstance(sock, socket.socket):
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


class _Run:
    """One subscription's request: its cancellation state and the open response."""

    def __init__(self) -> None:
        self.cancelled = threading.Event()
        self.response: httpx.Response | None = None
        self.lock = threading.Lock()


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

    Raises:
        MissingCredentialsError: at call time, when no key or token can be found.

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
    exchange = _Exchange(url, send_headers, body, timeout, policy)

    def subscribe(
        observer: abc.ObserverBase[bytes], default: abc.SchedulerBase | None = None
    ) -> abc.DisposableBase:
        chosen = scheduler or default
        if isinstance(client, httpx.AsyncClient):
            return exchange.run_async(observer, client, _loop_of(chosen, required=True))
        if client is None:
            loop = _loop_of(chosen, required=False)
            if loop is not None:
                return exchange.run_async(observer, None, loop)
        return exchange.run_sync(observer, client, scheduler)

    return Observable(subscribe)


def _loop_of(
    scheduler: abc.SchedulerBase | None, *, required: bool
) -> asyncio.AbstractEventLoop | None:
    if isinstance(scheduler, AsyncIOScheduler):
        return scheduler._loop  # reactivex keeps the loop private
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        if required:
            raise RuntimeError(
                "an httpx.AsyncClient needs an event loop: subscribe from async code, or pass"
                " scheduler=AsyncIOScheduler(loop)"
            ) from None
        return None


class _Exchange:
    """The request, its retries, and the two ways of running it."""

    def __init__(
        self,
        url: str,
        headers: dict[str, str],
        body: dict[str, Any],
        timeout: httpx.Timeout | float | UseClientDefault | None,
        policy: RetryPolicy | None,
    ) -> None:
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.policy = policy

    def _retry_delay(self, attempt: int, error: BaseException) -> float | None:
        return self.policy.delay(attempt, error) if self.policy is not None else None

    # -- sync -------------------------------------------------------------------------

    def run_sync(
        self,
        observer: abc.ObserverBase[bytes],
        client: httpx.Client | None,
        scheduler: abc.SchedulerBase | None,
    ) -> abc.DisposableBase:
        run = _Run()

        def work(*_: Any) -> None:
            own = client is None
            http = httpx.Client(timeout=DEFAULT_TIMEOUT) if client is None else client
            try:
                self._sync_attempts(observer, http, run)
            finally:
                if own:
                    http.close()

        if scheduler is not None:
            scheduled = scheduler.schedule(work)
        else:
            threading.Thread(target=work, name="rxgem-from-gemini", daemon=True).start()
            scheduled = None

        def cancel() -> None:
            run.cancelled.set()
            with run.lock:
                _shutdown(run.response)
            if scheduled is not None:
                scheduled.dispose()

        return Disposable(cancel)

    def _sync_attempts(
        self, observer: abc.ObserverBase[bytes], http: httpx.Client, run: _Run
    ) -> None:
        attempt = 0
        while not run.cancelled.is_set():
            started = False
            try:
                with http.stream(
                    "POST", self.url, json=self.body, headers=self.headers, timeout=self.timeout
                ) as response:
                    with run.lock:
                        run.response = response
                    if run.cancelled.is_set():
                        return
                    if response.status_code != 200:
                        error: Exception = http_error(
                            response.status_code,
                            response.headers,
                            response.read(),
                            response.reason_phrase,
                        )
                    else:
                        for chunk in response.iter_bytes():
                            if run.cancelled.is_set():
                                return
                            started = True
                            observer.on_next(chunk)
                        if not run.cancelled.is_set():
                            observer.on_completed()
                        return
            except httpx.HTTPError as exc:
                if run.cancelled.is_set():
                    return
                error = _transport_error(exc, self.url)
            except Exception as exc:  # raised downstream, inside on_next
                observer.on_error(exc)
                return
            finally:
                with run.lock:
                    run.response = None
            delay = None if started else self._retry_delay(attempt, error)
            if delay is None:
                if not run.cancelled.is_set():
                    observer.on_error(error)
                return
            attempt += 1
            if run.cancelled.wait(delay):
                return

    # -- async ------------------------------------------------------------------------

    def run_async(
        self,
        observer: abc.ObserverBase[bytes],
        client: httpx.AsyncClient | None,
        loop: asyncio.AbstractEventLoop | None,
    ) -> abc.DisposableBase:
        assert loop is not None

        async def work() -> None:
            own = client is None
            http = httpx.AsyncClient(timeout=DEFAULT_TIMEOUT) if client is None else client
            try:
                await self._async_attempts(observer, http)
            finally:
                if own:
                    await http.aclose()

        task = asyncio.run_coroutine_threadsafe(work(), loop) if not _on_loop(loop) else None
        local = loop.create_task(work()) if task is None else None

        def cancel() -> None:
            # cancelling a finished task or future does nothing
            if local is not None:
                if local.done():
                    return
                if _on_loop(loop):
                    local.cancel()
                else:
                    loop.call_soon_threadsafe(local.cancel)
            elif task is not None:
                task.cancel()

        return Disposable(cancel)

    async def _async_attempts(
        self, observer: abc.ObserverBase[bytes], http: httpx.AsyncClient
    ) -> None:
        attempt = 0
        while True:
            started = False
            try:
                async with http.stream(
                    "POST", self.url, json=self.body, headers=self.headers, timeout=self.timeout
                ) as response:
                    if response.status_code != 200:
                        error: Exception = http_error(
                            response.status_code,
                            response.headers,
                            await response.aread(),
                            response.reason_phrase,
                        )
                    else:
                        async for chunk in response.aiter_bytes():
                            started = True
                            observer.on_next(chunk)
                        observer.on_completed()
                        return
            except httpx.HTTPError as exc:
                error = _transport_error(exc, self.url)
            except Exception as exc:  # raised downstream, inside on_next
                observer.on_error(exc)
                return
            delay = None if started else self._retry_delay(attempt, error)
            if delay is None:
                observer.on_error(error)
                return
            attempt += 1
            await asyncio.sleep(delay)


def _on_loop(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False


def stream_chat(request: Mapping[str, Any], *, model: str, **options: Any) -> Observable[Any]:
    """``from_gemini(request, model=model, ...)`` piped through ``gemini_to_openai(...)``.

    Options of :func:`from_gemini` (``api_key``, ``access_token``, ``base_url``,
    ``client``, ``timeout``, ``headers``, ``retry``, ``scheduler``) go to the request;
    the others (``include_usage``, ``reasoning_field``, ``slot_policy``, ...) to
    :func:`~rxgem.gemini_to_openai`. ``model`` is both the Gemini model and the
    ``model`` of every chunk.

    Returns:
        ``Observable[ChatCompletionChunk]``.
    """
    from ._pipeline import gemini_to_openai

    transport = {k: options.pop(k) for k in _TRANSPORT_OPTIONS if k in options}
    source = from_gemini(request, model=model, **transport)
    return source.pipe(gemini_to_openai(model=model.removeprefix("models/"), **options))


_TRANSPORT_OPTIONS = (
    "api_key",
    "access_token",
    "base_url",
    "client",
    "timeout",
    "headers",
    "retry",
    "scheduler",
)
