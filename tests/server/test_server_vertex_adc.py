"""``rxgem serve`` on Vertex AI with Application Default Credentials: each request goes up
with a fresh access token (a token that expires mid-run is refreshed before the next
request), and a token endpoint that refuses, fails or stalls is a clear error to the client
and the operator, never a traceback or a secret.

The service account's key file points at the fake token endpoint (tests/token_endpoint.py);
FakeGemini stands for Vertex AI (``api: vertex`` chooses the Vertex upstream).
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import openai
import pytest
from server_harness import TOKEN, sdk, serving
from token_endpoint import CLIENT_SECRET, EMAIL, REFRESH_TOKEN, TokenEndpoint, token_endpoint

from rxgem.server import ServerSettings, settings_from_env
from rxgem.testing import FakeGemini

HELLO: list[dict[str, str]] = [{"role": "user", "content": "Hi"}]


def _settings(fake: FakeGemini) -> ServerSettings:
    return ServerSettings(
        upstream=fake.base_url, client_tokens=(TOKEN,), pipeline={"api": "vertex"}
    )


@pytest.fixture
def adc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> TokenEndpoint:
    for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "RXGEM_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    with token_endpoint(expires_in=1) as endpoint:
        path = endpoint.service_account(tmp_path)
        monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(path))
        yield endpoint


def _secrets(endpoint: TokenEndpoint) -> list[str]:
    return [endpoint.pem.splitlines()[5], REFRESH_TOKEN, CLIENT_SECRET, *endpoint.issued]


def test_each_request_goes_up_with_a_fresh_token(adc: TokenEndpoint) -> None:
    with FakeGemini() as fake, serving(_settings(fake)) as url, sdk(url) as client:
        for _ in range(2):
            reply = client.chat.completions.create(model="gemini-2.5-flash", messages=HELLO)
            assert reply.choices[0].message.content
        sent = [request.headers for request in fake.requests]
    # the token expires within a second: the second request has a new one
    assert [headers.get("authorization") for headers in sent] == ["Bearer tok-1", "Bearer tok-2"]
    assert all("x-goog-api-key" not in headers for headers in sent)


@pytest.mark.parametrize(
    ("behave", "status", "said", "wait"),
    [
        pytest.param("refuse", 401, "no Gemini credentials", 10.0, id="refused"),
        pytest.param("fail", 502, "server_error", 10.0, id="failing"),
        pytest.param("slow", 504, "timeout", 0.5, id="slow"),
    ],
)
def test_a_token_endpoint_that_fails_is_a_clear_error_without_secrets(
    adc: TokenEndpoint,
    caplog: pytest.LogCaptureFixture,
    behave: str,
    status: int,
    said: str,
    wait: float,
) -> None:
    settings = ServerSettings(
        upstream="http://127.0.0.1:9/v1beta",  # never reached
        client_tokens=(TOKEN,),
        pipeline={"api": "vertex"},
        connect_timeout=wait,
    )
    with caplog.at_level(logging.DEBUG), serving(settings) as url, sdk(url) as client:
        adc.behave = behave
        if behave == "slow":
            adc.behave, adc.delay = "ok", 3.0
        started = time.monotonic()
        with pytest.raises(openai.APIStatusError) as caught:
            client.chat.completions.create(model="gemini-2.5-flash", messages=HELLO)
        took = time.monotonic() - started
    assert caught.value.status_code == status
    body = str(caught.value.body)
    assert said in body or said in str(caught.value)
    logged = caplog.text
    assert "Traceback" not in logged
    assert "refreshing the Vertex AI access token" in logged  # the operator is told what
    assert EMAIL in logged
    for secret in _secrets(adc):
        assert secret not in body
        assert secret not in logged
    if behave == "slow":
        assert took < 2.5  # the 0.5 s wait, not the endpoint's 3 s


# ------------------------------------------------------------------------------ the command


def _serve(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    keep = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("GOOGLE_", "GCE_", "RXGEM_", "GEMINI_"))
    }
    return subprocess.run(
        [sys.executable, "-m", "rxgem.cli", "serve", "--port", "0", *args],
        env={**keep, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_serve_stops_at_startup_when_the_credentials_are_refused(tmp_path: Path) -> None:
    with token_endpoint() as endpoint:
        endpoint.behave = "refuse"
        path = endpoint.service_account(tmp_path)
        done = _serve(
            "--vertex", "my-proj/us-central1", env={"GOOGLE_APPLICATION_CREDENTIALS": str(path)}
        )
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert "rxgem serve: error: refreshing the Vertex AI access token" in done.stderr
    assert "refused: HTTP 400 (invalid_grant)" in done.stderr
    for secret in _secrets(endpoint):
        assert secret not in done.stderr


def test_serve_without_credentials_says_where_to_put_them(tmp_path: Path) -> None:
    env = {"CLOUDSDK_CONFIG": str(tmp_path), "NO_GCE_CHECK": "true"}
    done = _serve("--vertex", "my-proj/us-central1", env=env)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert "GOOGLE_APPLICATION_CREDENTIALS" in done.stderr
    # no project anywhere: neither given, nor in the environment, nor in credentials
    done = _serve("--vertex", env=env)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert "--vertex:" in done.stderr


def test_serve_vertex_takes_project_and_location_from_the_environment(tmp_path: Path) -> None:
    # a malformed location is refused before anything is looked up, naming both
    env = {"GOOGLE_CLOUD_PROJECT": "my-proj", "GOOGLE_CLOUD_LOCATION": "us central"}
    done = _serve("--vertex", env=env)
    assert done.returncode == 2
    assert "my-proj/us central" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_gemini_api_s_key_variables_are_not_vertex_s_credentials() -> None:
    vertex = (
        "https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/l/publishers/google"
    )
    keys = {"GEMINI_API_KEY": "AIza-gemini", "GOOGLE_API_KEY": "AIza-google"}
    on_vertex = settings_from_env({"RXGEM_UPSTREAM": vertex, **keys})
    assert on_vertex.api_key is None  # Application Default Credentials, found at startup
    assert on_vertex.finds_credentials == "Application Default Credentials"
    assert settings_from_env(keys).api_key == "AIza-gemini"  # the Gemini API's, as before
    given = settings_from_env({"RXGEM_UPSTREAM": vertex, "RXGEM_API_KEY": "AIza-express"})
    assert given.api_key == "AIza-express"  # a key given for Vertex is sent as given


# ------------------------------------------------------------------------------ rxgem chat


def _chat(*args: str, env: dict[str, str], stdin: str) -> subprocess.CompletedProcess[str]:
    keep = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("GOOGLE_", "GCE_", "RXGEM_", "GEMINI_"))
    }
    return subprocess.run(
        [sys.executable, "-m", "rxgem.cli", "chat", *args],
        env={**keep, **env},
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_chat_on_vertex_takes_a_token_from_the_credentials(tmp_path: Path) -> None:
    # Vertex AI itself is out of reach here (or refuses the fake's token): the turn fails
    # in one line, after a token was taken from the credentials, and the token is not shown
    with token_endpoint() as endpoint:
        path = endpoint.service_account(tmp_path)
        env = {"GOOGLE_APPLICATION_CREDENTIALS": str(path), "GEMINI_API_KEY": "AIza-not-vertex"}
        done = _chat("--vertex", "my-proj/us-central1", "Hi", env=env, stdin="")
    assert endpoint.issued == ["tok-1"]
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    assert "tok-1" not in done.stdout + done.stderr
    assert "AIza-not-vertex" not in done.stdout + done.stderr


# Vertex AI's address answered by FakeGemini: its host and its model path put on the fake's
REDIRECT = """
import os, re
import httpx

_port = int(os.environ["RXGEM_TEST_VERTEX_PORT"])
_send = httpx.HTTPTransport.handle_request
_MODEL = re.compile(r"/v1/projects/[^/]+/locations/[^/]+/publishers/google(/models/.*)")


def _handle_request(self, request):
    if request.url.host.endswith("aiplatform.googleapis.com"):
        path = _MODEL.sub(r"/v1beta\\1", request.url.path)
        request.url = request.url.copy_with(scheme="http", host="127.0.0.1", port=_port, path=path)
    return _send(self, request)


httpx.HTTPTransport.handle_request = _handle_request
"""


def test_a_chat_on_vertex_sends_each_turn_a_fresh_token(tmp_path: Path) -> None:
    # a conversation can outlast its token: each turn takes one, refreshed when it expires
    (tmp_path / "sitecustomize.py").write_text(REDIRECT, encoding="utf-8")
    with token_endpoint(expires_in=1) as endpoint, FakeGemini() as fake:
        env = {
            "GOOGLE_APPLICATION_CREDENTIALS": str(endpoint.service_account(tmp_path)),
            "PYTHONPATH": str(tmp_path),
            "RXGEM_TEST_VERTEX_PORT": str(fake.port),
        }
        done = _chat("--vertex", "my-proj/us-central1", env=env, stdin="Hi\nAgain\n")
        sent = [request.headers for request in fake.requests]
    assert done.returncode == 0, done.stderr
    # tok-1 came at startup, to check the credentials; it expired before the first turn
    assert endpoint.issued == ["tok-1", "tok-2", "tok-3"]
    assert [headers.get("authorization") for headers in sent] == ["Bearer tok-2", "Bearer tok-3"]
    assert all(headers["host"] == "us-central1-aiplatform.googleapis.com" for headers in sent)
    assert "tok-" not in done.stdout + done.stderr


def test_chat_on_vertex_without_credentials_says_so_in_one_line(tmp_path: Path) -> None:
    env = {"CLOUDSDK_CONFIG": str(tmp_path), "NO_GCE_CHECK": "true"}
    done = _chat("--vertex", "my-proj/us-central1", "Hi", env=env, stdin="")
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert "no Application Default Credentials for Vertex AI" in done.stderr


# ------------------------------------------------------------------------------ readiness


def test_readyz_asks_vertex_with_the_found_credential(adc: TokenEndpoint) -> None:
    with FakeGemini() as fake, serving(_settings(fake)) as url:
        answer = httpx.get(f"{url}/readyz", timeout=10)
        sent = [request for request in fake.requests if "/models" in request.path]
    assert answer.status_code == 200, answer.text
    # without it, Vertex refuses any caller alike and a broken credential looked ready
    assert [request.headers.get("authorization") for request in sent] == ["Bearer tok-1"]


def test_readyz_is_unavailable_while_the_credential_cannot_be_had(adc: TokenEndpoint) -> None:
    with FakeGemini() as fake, serving(_settings(fake)) as url:
        adc.behave = "refuse"
        answer = httpx.get(f"{url}/readyz", timeout=10)
        asked = [request for request in fake.requests if "/models" in request.path]
    assert answer.status_code == 503
    assert answer.json()["checks"]["upstream"] == "no credentials (MissingCredentialsError)"
    assert asked == []  # Gemini is not asked without one
    for secret in _secrets(adc):
        assert secret not in answer.text
