"""Vertex AI's OAuth access token from Application Default Credentials, refreshed before
it expires (google-auth: the ``vertex`` extra).

google-auth finds the credentials as every Google client does: the JSON file that
``GOOGLE_APPLICATION_CREDENTIALS`` names (a service account, an authorized user, workload
identity federation), gcloud's (``gcloud auth application-default login``), else the
metadata server (Cloud Run, GKE, Compute Engine).

google-auth is sync and does network I/O: a refresh runs on a thread of its own, over
httpx with this module's timeout, and every caller (threads, event loops) shares the one
refresh in flight, waiting for it at most ``timeout`` seconds. A token with less than
``margin`` left is refreshed while it is still sent; one with less than ``_LEAST`` left (or
none) waits for its refresh. No error says a token, a key or the token endpoint's answer.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import datetime
import logging
import re
import threading
import time
from collections.abc import Mapping
from typing import Any, Final
from urllib.parse import urlsplit

import httpx

from ...core import GeminiTransportError, MissingCredentialsError

__all__ = ["AccessTokens", "find_adc"]

SCOPE: Final = "https://www.googleapis.com/auth/cloud-platform"
_LEAST: Final = 30.0
"""Seconds a token must have left to be sent without waiting for its refresh."""
_PAUSE: Final = 10.0
"""Seconds between refreshes that failed while the token still lasted."""
_OAUTH_CODE: Final = re.compile(r"[A-Za-z0-9_.-]{1,64}")

_log = logging.getLogger("rxgem.vertex")

_NONE_FOUND: Final = (
    "no Application Default Credentials for Vertex AI: set GOOGLE_APPLICATION_CREDENTIALS to"
    " a service account's JSON key file, run `gcloud auth application-default login`, or run"
    " on Google Cloud (Cloud Run, GKE, Compute Engine); or pass an access token"
)


def _google_auth() -> Any:
    try:
        import google.auth
        import google.auth.exceptions
    except ImportError:
        raise MissingCredentialsError(
            "Application Default Credentials need google-auth: pip install 'rxgem[vertex]'"
            " (or pass an access token)"
        ) from None
    return google.auth


class _Answer:
    """An HTTP response as google-auth's transport reads one."""

    def __init__(self, status: int, headers: Mapping[str, str], data: bytes) -> None:
        self.status = status
        self.headers = headers
        self.data = data


class _Http:
    """google-auth's ``Request`` over one ``httpx.Client``, every wait bounded by
    ``timeout``; keeps where it last went and what it answered, for error messages."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.host = "the token endpoint"
        self.status: int | None = None
        self._client = httpx.Client(timeout=timeout, follow_redirects=False)

    def __call__(
        self,
        url: str,
        method: str = "GET",
        body: bytes | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = None,
        **_: Any,
    ) -> _Answer:
        self.host = urlsplit(url).hostname or self.host
        wait = self.timeout if timeout is None else min(float(timeout), self.timeout)
        try:
            response = self._client.request(
                method, url, content=body, headers=dict(headers or {}), timeout=wait
            )
        except httpx.HTTPError as exc:
            errors = _google_auth().exceptions
            raise errors.TransportError(type(exc).__name__) from exc
        self.status = response.status_code
        return _Answer(response.status_code, response.headers, response.content)

    def close(self) -> None:
        self._client.close()


def _kind(credentials: Any) -> str:
    """What the credentials are, for a message (a service account's email is no secret)."""
    module = type(credentials).__module__
    if module.endswith("service_account"):
        email = getattr(credentials, "service_account_email", None)
        return f"service account {email}" if isinstance(email, str) else "a service account"
    if module.endswith("compute_engine.credentials"):
        return "the metadata server's"
    if module.endswith("oauth2.credentials"):
        return "an authorized user's (gcloud)"
    if "external_account" in module or module.endswith(("identity_pool", "aws", "pluggable")):
        return "workload identity federation's"
    return type(credentials).__name__


def _refreshing(credentials: Any) -> str:
    return f"refreshing the Vertex AI access token ({_kind(credentials)} credentials)"


def _http_cause(exc: BaseException) -> httpx.HTTPError | None:
    """The httpx error under ``exc`` (google-auth wraps it once or twice), if any."""
    seen: BaseException | None = exc
    for _ in range(4):
        if seen is None or isinstance(seen, httpx.HTTPError):
            return seen
        seen = seen.__cause__
    return None


def _failure(exc: BaseException, credentials: Any, http: _Http) -> Exception:
    """The typed error for a refresh that raised ``exc``: what failed, never what was sent
    or answered (google-auth's messages quote the token endpoint's body)."""
    errors = _google_auth().exceptions
    what = f"{_refreshing(credentials)} at {http.host}"
    cause = _http_cause(exc)
    if cause is not None:
        return GeminiTransportError(f"{what} failed: {type(cause).__name__}", cause=cause)
    if not isinstance(exc, errors.RefreshError):
        return MissingCredentialsError(f"{what} failed: {type(exc).__name__}")
    status = f"HTTP {http.status}" if http.status is not None else "an error"
    details = exc.args[1] if len(exc.args) > 1 else None
    code = details.get("error") if isinstance(details, dict) else None
    said = f" ({code})" if isinstance(code, str) and _OAUTH_CODE.fullmatch(code) else ""
    if getattr(exc, "retryable", False) or (http.status or 0) >= 500:
        return GeminiTransportError(f"{what} failed: the endpoint answered {status}{said}")
    return MissingCredentialsError(f"{what} was refused: {status}{said}")


def _expiry(credentials: Any) -> float | None:
    """When the token expires (epoch seconds), if it says (google-auth's naive UTC)."""
    expiry = getattr(credentials, "expiry", None)
    if not isinstance(expiry, datetime.datetime):
        return None
    if expiry.tzinfo is None:
        expiry = expiry.replace(tzinfo=datetime.UTC)
    return expiry.timestamp()


class AccessTokens:
    """A fresh access token from google-auth ``credentials``, sync (:meth:`token`) or
    async (:meth:`atoken`).

    ``margin``: seconds before expiry from which the token is refreshed (5 minutes);
    ``timeout``: the longest wait for a refresh, and for each of its HTTP steps.

    Raises (both methods): :class:`MissingCredentialsError` when the credentials are
    refused or cannot be read; :class:`GeminiTransportError` when the token endpoint (or
    the metadata server) cannot be reached, fails, or does not answer within ``timeout``.
    """

    def __init__(self, credentials: Any, *, margin: float = 300.0, timeout: float = 10.0) -> None:
        self.credentials = credentials
        self.margin = margin
        self.timeout = timeout
        self._lock = threading.Lock()
        self._refresh: concurrent.futures.Future[str] | None = None
        self._failed_at = float("-inf")

    def __repr__(self) -> str:
        return f"AccessTokens({_kind(self.credentials)})"

    def _ready(self) -> tuple[str | None, concurrent.futures.Future[str] | None]:
        """The token to send now, or the refresh to wait for (started if need be)."""
        now = time.time()
        with self._lock:
            token = getattr(self.credentials, "token", None)
            expiry = _expiry(self.credentials)
            left = float("inf") if expiry is None else expiry - now
            if token and left > self.margin:
                return token, None
            lasts = bool(token) and left > _LEAST
            if lasts and (self._refresh is not None or now - self._failed_at < _PAUSE):
                return token, None
            if self._refresh is None:
                self._refresh = self._start()
            return (token, None) if lasts else (None, self._refresh)

    def _start(self) -> concurrent.futures.Future[str]:
        future: concurrent.futures.Future[str] = concurrent.futures.Future()
        future.set_running_or_notify_cancel()  # no waiter can cancel the shared refresh
        threading.Thread(
            target=self._run, args=(future,), name="rxgem-adc-refresh", daemon=True
        ).start()
        return future

    def _run(self, future: concurrent.futures.Future[str]) -> None:
        http = _Http(self.timeout)
        try:
            self.credentials.refresh(http)
            token = self.credentials.token
            if not isinstance(token, str) or not token:
                raise MissingCredentialsError(
                    f"{_refreshing(self.credentials)} at {http.host} gave no token"
                )
        except MissingCredentialsError as exc:
            self._finish(future, exc, None)
        except Exception as exc:
            self._finish(future, _failure(exc, self.credentials, http), None)
        else:
            self._finish(future, None, token)
        finally:
            http.close()

    def _finish(
        self, future: concurrent.futures.Future[str], error: Exception | None, token: str | None
    ) -> None:
        with self._lock:
            self._refresh = None
            if error is not None:
                self._failed_at = time.time()
        if error is not None:
            _log.warning("%s", error)
            future.set_exception(error)
        else:
            future.set_result(token or "")

    def _late(self) -> GeminiTransportError:
        error = GeminiTransportError(
            f"{_refreshing(self.credentials)} took longer than {self.timeout:g} s",
            cause=httpx.TimeoutException("the token refresh timed out"),
        )
        _log.warning("%s", error)
        return error

    def token(self) -> str:
        """The token to send, refreshed first if it is about to expire (blocks)."""
        token, refresh = self._ready()
        if refresh is None:
            return token or ""
        try:
            return refresh.result(timeout=self.timeout)
        except concurrent.futures.TimeoutError:
            raise self._late() from None

    async def atoken(self) -> str:
        """The token to send; a refresh runs off the event loop."""
        token, refresh = self._ready()
        if refresh is None:
            return token or ""
        try:
            return await asyncio.wait_for(asyncio.wrap_future(refresh), self.timeout)
        except TimeoutError:
            raise self._late() from None


def find_adc(*, margin: float = 300.0, timeout: float = 10.0) -> tuple[AccessTokens, str | None]:
    """The Application Default Credentials (google-auth's ``default``, for the
    ``cloud-platform`` scope) and the project they name, if any. Blocks: the metadata
    server may be asked whether it is there.

    Raises:
        MissingCredentialsError: google-auth is not installed, no credentials were found,
            or the file found cannot be read (the message says which; never its content).
    """
    google_auth = _google_auth()
    http = _Http(timeout)
    try:
        credentials, project = google_auth.default(scopes=[SCOPE], request=http)
    except google_auth.exceptions.DefaultCredentialsError as exc:
        raise MissingCredentialsError(f"{_NONE_FOUND} ({_first_line(exc)})") from None
    finally:
        http.close()
    return AccessTokens(credentials, margin=margin, timeout=timeout), (
        project if isinstance(project, str) and project else None
    )


def _first_line(exc: BaseException) -> str:
    """google-auth's discovery message (a file name, what is wrong with it), bounded."""
    text = str(exc.args[0] if exc.args else exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text[:300]
