"""Application Default Credentials for Vertex AI: found as google-auth finds them, refreshed
before they expire (one refresh at a time, off the event loop, within a timeout), and every
failure a typed error that says what failed and nothing secret.

Against a real fake token endpoint on 127.0.0.1 (tests/token_endpoint.py): a service
account whose JSON key file points its ``token_uri`` there, with a key made for the test.
"""

from __future__ import annotations

import asyncio
import logging
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from google.oauth2 import credentials as user_credentials
from google.oauth2 import service_account
from token_endpoint import (
    CLIENT_SECRET,
    EMAIL,
    PROJECT,
    REFRESH_TOKEN,
    SCOPE,
    TokenEndpoint,
    token_endpoint,
)

from rxgem.core import GeminiTransportError, MissingCredentialsError
from rxgem.upstreams.vertex._adc import AccessTokens, find_adc


def _tokens(endpoint: TokenEndpoint, folder: Path, **options: Any) -> AccessTokens:
    path = endpoint.service_account(folder)
    credentials = service_account.Credentials.from_service_account_file(  # type: ignore[no-untyped-call]
        str(path), scopes=[SCOPE]
    )
    return AccessTokens(credentials, **options)


def _authorized_user(path: Path, endpoint: TokenEndpoint) -> Any:
    # google-auth sends an authorized user to Google's endpoint whatever its file says
    found = user_credentials.Credentials.from_authorized_user_file(str(path))  # type: ignore[no-untyped-call]
    return found.with_token_uri(endpoint.token_uri)


def _secrets(endpoint: TokenEndpoint) -> list[str]:
    key_body = endpoint.pem.splitlines()[5]
    return [key_body, REFRESH_TOKEN, CLIENT_SECRET, *endpoint.issued]


def test_a_token_that_expires_is_refreshed_before_the_next_request(tmp_path: Path) -> None:
    with token_endpoint(expires_in=1) as endpoint:
        tokens = _tokens(endpoint, tmp_path)
        first = tokens.token()
        second = tokens.token()
    assert (first, second) == ("tok-1", "tok-2")
    assert endpoint.problems == []  # each assertion signed with the key, for cloud-platform
    assert endpoint.grants == ["urn:ietf:params:oauth:grant-type:jwt-bearer"] * 2


def test_a_token_far_from_expiry_is_sent_as_it_is(tmp_path: Path) -> None:
    with token_endpoint(expires_in=3600) as endpoint:
        tokens = _tokens(endpoint, tmp_path)
        assert [tokens.token() for _ in range(5)] == ["tok-1"] * 5
    assert len(endpoint.grants) == 1


def test_within_the_margin_the_token_is_sent_while_it_is_refreshed(tmp_path: Path) -> None:
    # 120 s left: inside the 5-minute margin, yet long enough to be sent meanwhile
    with token_endpoint(expires_in=120) as endpoint:
        tokens = _tokens(endpoint, tmp_path)
        assert tokens.token() == "tok-1"
        endpoint.delay = 0.3
        started = time.monotonic()
        assert tokens.token() == "tok-1"  # not waiting for the refresh it started
        assert time.monotonic() - started < 0.25
        deadline = time.monotonic() + 10
        while len(endpoint.issued) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.05)
        assert tokens.token() == "tok-2"
    assert len(endpoint.grants) == 2


def test_many_threads_share_one_refresh(tmp_path: Path) -> None:
    with token_endpoint(expires_in=1) as endpoint:
        endpoint.delay = 0.3
        tokens = _tokens(endpoint, tmp_path)
        got: list[str] = []
        threads = [threading.Thread(target=lambda: got.append(tokens.token())) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(10)
    assert got == ["tok-1"] * 8
    assert len(endpoint.grants) == 1


def test_many_tasks_share_one_refresh_off_the_event_loop(tmp_path: Path) -> None:
    async def main(tokens: AccessTokens) -> tuple[list[str], int]:
        ticks = 0
        done = asyncio.Event()

        async def tick() -> None:  # runs only while the loop is free
            nonlocal ticks
            while not done.is_set():
                ticks += 1
                await asyncio.sleep(0.01)

        ticker = asyncio.create_task(tick())
        got = await asyncio.gather(*(tokens.atoken() for _ in range(8)))
        done.set()
        await ticker
        return list(got), ticks

    with token_endpoint(expires_in=1) as endpoint:
        endpoint.delay = 0.3
        got, ticks = asyncio.run(main(_tokens(endpoint, tmp_path)))
    assert got == ["tok-1"] * 8
    assert len(endpoint.grants) == 1
    assert ticks >= 5  # the loop went on during the 0.3 s refresh


def test_an_authorized_user_refreshes_with_its_refresh_token(tmp_path: Path) -> None:
    with token_endpoint(expires_in=1) as endpoint:
        path = endpoint.authorized_user(tmp_path)
        credentials = _authorized_user(path, endpoint)
        tokens = AccessTokens(credentials)
        assert [tokens.token(), tokens.token()] == ["tok-1", "tok-2"]
    assert endpoint.grants == ["refresh_token"] * 2
    assert endpoint.problems == []


def test_a_refused_refresh_is_a_typed_error_that_names_what_failed_and_no_secret(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    with token_endpoint() as endpoint:
        endpoint.behave = "refuse"  # its description quotes the refresh token and secret
        tokens = _tokens(endpoint, tmp_path)
        with pytest.raises(MissingCredentialsError) as caught:
            tokens.token()
        message = str(caught.value)
        assert EMAIL in message
        assert "127.0.0.1" in message
        assert "HTTP 400 (invalid_grant)" in message
        for secret in _secrets(endpoint):
            assert secret not in message
            assert secret not in caplog.text


def test_an_authorized_user_refused_says_so_without_its_refresh_token(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    with token_endpoint() as endpoint:
        endpoint.behave = "refuse"
        path = endpoint.authorized_user(tmp_path)
        credentials = _authorized_user(path, endpoint)
        with pytest.raises(MissingCredentialsError, match=r"authorized user.*refused: HTTP 400"):
            AccessTokens(credentials).token()
    assert REFRESH_TOKEN not in caplog.text
    assert CLIENT_SECRET not in caplog.text


def test_a_failing_endpoint_is_a_transport_error(tmp_path: Path) -> None:
    with token_endpoint() as endpoint:
        endpoint.behave = "fail"
        tokens = _tokens(endpoint, tmp_path)
        with pytest.raises(GeminiTransportError, match=r"answered HTTP 503") as caught:
            tokens.token()
    assert "try later" not in str(caught.value)


def test_an_unreachable_endpoint_is_a_transport_error_with_its_cause(tmp_path: Path) -> None:
    with token_endpoint() as endpoint:
        tokens = _tokens(endpoint, tmp_path)
    # the endpoint is closed now: nothing listens on its port
    with pytest.raises(GeminiTransportError, match="ConnectError") as caught:
        tokens.token()
    assert type(caught.value.cause).__name__ == "ConnectError"


def test_a_slow_endpoint_times_out_sync_and_async(tmp_path: Path) -> None:
    with token_endpoint() as endpoint:
        endpoint.delay = 3.0
        tokens = _tokens(endpoint, tmp_path, timeout=0.5)
        started = time.monotonic()
        with pytest.raises(GeminiTransportError, match=r"longer than 0.5 s") as caught:
            tokens.token()
        assert isinstance(caught.value.cause, httpx.TimeoutException)
        # the refresh the first call started, still in flight or timed out by now
        with pytest.raises(GeminiTransportError, match=r"longer than 0.5 s|ReadTimeout") as caught:
            asyncio.run(tokens.atoken())
        assert isinstance(caught.value.cause, httpx.TimeoutException)
        assert time.monotonic() - started < 2.5  # generous: two waits of 0.5 s


def test_a_refresh_that_failed_is_tried_again_by_the_next_request(tmp_path: Path) -> None:
    with token_endpoint(expires_in=1) as endpoint:
        endpoint.behave = "fail"
        tokens = _tokens(endpoint, tmp_path)
        with pytest.raises(GeminiTransportError):
            tokens.token()
        endpoint.behave = "ok"
        assert tokens.token() == "tok-1"


def test_the_repr_shows_no_token(tmp_path: Path) -> None:
    with token_endpoint() as endpoint:
        tokens = _tokens(endpoint, tmp_path)
        tokens.token()
    assert "tok-1" not in repr(tokens)
    assert EMAIL in repr(tokens)


# ------------------------------------------------------------------ finding the credentials


def test_google_application_credentials_names_the_service_account(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with token_endpoint(expires_in=1) as endpoint:
        monkeypatch.setenv(
            "GOOGLE_APPLICATION_CREDENTIALS", str(endpoint.service_account(tmp_path))
        )
        monkeypatch.delenv("GOOGLE_CLOUD_PROJECT", raising=False)
        tokens, project = find_adc()
        assert project == PROJECT
        assert [tokens.token(), tokens.token()] == ["tok-1", "tok-2"]


def test_a_missing_credentials_file_is_a_typed_error_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = tmp_path / "nowhere.json"
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(missing))
    with pytest.raises(MissingCredentialsError, match="no Application Default Credentials") as e:
        find_adc()
    assert str(missing) in str(e.value)


def _python(code: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("GOOGLE_", "GCE_"))}
    return subprocess.run(
        [sys.executable, "-c", code],
        env={**keep, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_gcloud_s_file_is_found(tmp_path: Path) -> None:
    code = "from rxgem.upstreams.vertex._adc import find_adc\nprint(find_adc()[0])\n"
    with token_endpoint() as endpoint:
        endpoint.authorized_user(tmp_path)
    found = _python(code, {"CLOUDSDK_CONFIG": str(tmp_path), "NO_GCE_CHECK": "true"})
    assert found.returncode == 0, found.stderr
    assert found.stdout.strip() == "AccessTokens(an authorized user's (gcloud))"


def test_the_metadata_server_is_found_and_refreshes(tmp_path: Path) -> None:
    code = (
        "from rxgem.upstreams.vertex._adc import find_adc\n"
        "tokens, project = find_adc()\n"
        "print(project, tokens.token(), tokens.token())\n"
    )
    with token_endpoint(expires_in=1) as endpoint:
        metadata = {
            "CLOUDSDK_CONFIG": str(tmp_path / "empty"),
            "GCE_METADATA_HOST": endpoint.host,
            "GCE_METADATA_IP": endpoint.host,
        }
        found = _python(code, metadata)
        assert found.returncode == 0, found.stderr
        assert found.stdout.split() == [PROJECT, "tok-1", "tok-2"]
    assert endpoint.grants == ["metadata", "metadata"]


def test_no_credentials_anywhere_is_a_typed_error_saying_where_to_put_them(
    tmp_path: Path,
) -> None:
    code = (
        "from rxgem.core import MissingCredentialsError\n"
        "from rxgem.upstreams.vertex._adc import find_adc\n"
        "try:\n    find_adc()\nexcept MissingCredentialsError as e:\n    print(e)\n"
    )
    found = _python(code, {"CLOUDSDK_CONFIG": str(tmp_path), "NO_GCE_CHECK": "true"})
    assert found.returncode == 0, found.stderr
    assert "GOOGLE_APPLICATION_CREDENTIALS" in found.stdout
    assert "gcloud auth application-default login" in found.stdout
