"""The sans-IO parts of ``rxgem.server``: errors, auth, models, settings, logs."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from rxgem import (
    GeminiAPIError,
    GeminiTransportError,
    InvalidRequestError,
    MalformedStreamError,
    TruncatedStreamError,
)
from rxgem.replies._errors import ErrorReply, error_reply, redact
from rxgem.replies._model_list import openai_model_list, valid_model_name
from rxgem.server import ServerSettings, SettingsError, settings_from_env
from rxgem.server.guard._auth import Credentials, authorize, bearer_token
from rxgem.server.observe._access import clean

VERTEX = "https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/l/publishers/google"


def reply(error: BaseException, secrets: tuple[str, ...] = ()) -> ErrorReply:
    return error_reply(error, secrets)


@pytest.mark.parametrize(
    ("error", "status", "kind", "code"),
    [
        (GeminiAPIError("m", code=400, status="INVALID_ARGUMENT", http_status=400), 400,
         "invalid_request_error", "invalid_argument"),
        (GeminiAPIError("m", code=429, status="RESOURCE_EXHAUSTED"), 429, "rate_limit_error",
         "resource_exhausted"),
        (GeminiAPIError("m", code=499, status="CANCELLED"), 502, "server_error", "cancelled"),
        (GeminiAPIError("m", code=503, status="UNAVAILABLE"), 503, "server_error", "unavailable"),
        (GeminiAPIError("m", code=500), 500, "server_error", None),
        (GeminiAPIError("m"), 502, "server_error", None),
        (GeminiAPIError("m", code=418, http_status=418), 418, "invalid_request_error", None),
        (GeminiTransportError("x", cause=httpx.ConnectError("no")), 502, "server_error",
         "bad_gateway"),
        (GeminiTransportError("x", cause=httpx.ReadTimeout("slow")), 504, "server_error",
         "timeout"),
        (MalformedStreamError("bad"), 502, "server_error", "bad_upstream_response"),
        (TruncatedStreamError("cut"), 502, "server_error", "bad_upstream_response"),
        (RuntimeError("a bug"), 500, "api_error", None),
    ],
)  # fmt: skip
def test_error_mapping(error: BaseException, status: int, kind: str, code: str | None) -> None:
    result = reply(error)
    assert (result.status, result.type, result.code) == (status, kind, code)
    assert set(result.body()["error"]) == {"message", "type", "param", "code"}
    assert "a bug" not in result.message  # a bug says nothing about itself


def test_invalid_request_names_the_param_and_says_do_not_retry() -> None:
    result = reply(InvalidRequestError("unknown role", where="messages[2].role"))
    assert (result.status, result.param, result.message) == (
        400,
        "messages[2].role",
        "unknown role",
    )
    assert ("x-should-retry", "false") in result.headers
    assert reply(InvalidRequestError("not an object")).param is None


def test_retry_after_is_rounded_up_and_given_in_ms() -> None:
    headers = dict(reply(GeminiAPIError("m", code=429, http_status=429, retry_after=1.2)).headers)
    assert headers == {"retry-after": "2", "retry-after-ms": "1200"}
    assert "retry-after" not in dict(reply(GeminiAPIError("m", http_status=429)).headers)


def test_secrets_are_scrubbed_longest_first() -> None:
    assert redact("key abc and abcdef", ["abc", "abcdef", ""]) == "key [redacted] and [redacted]"
    result = reply(GeminiAPIError("key SECRET is bad", http_status=400), ("SECRET",))
    assert result.message == "key [redacted] is bad"
    assert b"SECRET" not in result.json() + result.frame()
    assert result.frame().startswith(b'data: {"error":{')


def test_bearer_tokens() -> None:
    assert bearer_token("Bearer abc") == "abc"
    assert bearer_token("bearer   abc  ") == "abc"
    assert bearer_token("Basic abc") is None
    assert bearer_token("Bearer a b") is None
    assert bearer_token(None) is None


def test_authorize_in_each_mode() -> None:
    tokens = ServerSettings(api_key="k", client_tokens=("t1", "t2"))
    assert authorize("Bearer t2", tokens) == Credentials(api_key="k")
    for header in ("Bearer t3", "Bearer t", None, "t1"):
        denied = authorize(header, tokens)
        assert isinstance(denied, ErrorReply)
        assert denied.status == 401
        assert "t1" not in denied.message
    open_ = ServerSettings(api_key="k")
    assert authorize(None, open_) == Credentials(api_key="k")
    through = ServerSettings(pass_through_auth=True)
    assert authorize("Bearer own", through) == Credentials(api_key="own", client_secret="own")
    assert isinstance(authorize("Bearer \x7fown", through), ErrorReply)
    vertex = ServerSettings(upstream=VERTEX, pass_through_auth=True)
    assert authorize("Bearer ya29.x", vertex) == Credentials(
        access_token="ya29.x", client_secret="ya29.x"
    )
    assert "k" not in repr(Credentials(api_key="k"))


def test_model_list_keeps_chat_models_once() -> None:
    pages: list[dict[str, Any]] = [
        {
            "models": [
                {"name": "models/a", "supportedGenerationMethods": ["generateContent"]},
                {"name": "models/embed", "supportedGenerationMethods": ["embedContent"]},
                {"name": "models/b"},
                {"displayName": "no name"},
                "not a model",
            ]
        },
        {"models": [{"name": "models/a"}]},
        {"nothing": True},
    ]
    listed = openai_model_list(pages)
    assert listed["object"] == "list"
    assert [m["id"] for m in listed["data"]] == ["a", "b"]
    assert listed["data"][0] == {"id": "a", "object": "model", "created": 0, "owned_by": "google"}


@pytest.mark.parametrize(
    ("name", "ok"),
    [
        ("gemini-2.5-flash", True),
        ("models/gemini-2.5-flash", True),
        ("claude-3@20240229", True),
        ("../files", False),
        ("models/../x", False),
        ("a/b", False),
        ("", False),
        ("x?alt=json", False),
        (7, False),
    ],
)
def test_model_names_the_server_forwards(name: object, ok: bool) -> None:
    assert valid_model_name(name) is ok


def test_settings_from_env_rejects_malformed_values() -> None:
    with pytest.raises(SettingsError, match="RXGEM_PASS_THROUGH_AUTH"):
        settings_from_env({"RXGEM_PASS_THROUGH_AUTH": "maybe"})
    with pytest.raises(SettingsError, match="RXGEM_KEEP_ALIVE"):
        settings_from_env({"GEMINI_API_KEY": "k", "RXGEM_KEEP_ALIVE": "soon"})
    with pytest.raises(SettingsError, match="keep_alive"):
        settings_from_env({"GEMINI_API_KEY": "k", "RXGEM_KEEP_ALIVE": "0"})
    with pytest.raises(SettingsError, match="log level"):
        settings_from_env({"GEMINI_API_KEY": "k", "RXGEM_LOG_LEVEL": "loud"})
    token = settings_from_env({"GEMINI_API_KEY": "k", "RXGEM_ACCESS_TOKEN": "ya29"})
    assert (token.api_key, token.access_token) == (None, "ya29")  # the token, not the env key


def test_log_values_are_cleaned() -> None:
    assert clean("a\nb\r\x1bc", ()) == "a?b??c"
    assert clean("x" * 300, (), limit=10) == "x" * 9 + "…"
    assert clean("/v1/models/SECRET", ["SECRET"]) == "/v1/models/[redacted]"


def test_vertex_publisher_models_list_the_same_way() -> None:
    page = {
        "publisherModels": [
            {"name": "publishers/google/models/gemini-2.5-flash"},
            {"name": "publishers/google/models/gemini-2.5-pro"},
        ]
    }
    assert [m["id"] for m in openai_model_list([page])["data"]] == [
        "gemini-2.5-flash",
        "gemini-2.5-pro",
    ]
