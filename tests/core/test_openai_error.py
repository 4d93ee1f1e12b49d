"""The one error vocabulary: each of rxgem's exceptions → OpenAI's error object and status.

:func:`rxgem.core.openai.openai_error` is the one mapping; every output says an error with it:
the chat SSE error frame, the chat JSON error body (the server's reply), the Responses
``error`` event and a failed response's ``error``. Each must give the same ``type``,
``code`` (a failed response: the Responses API's nearest) and ``param`` for one error,
and what Gemini said goes through the caller's ``scrub`` in every one.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import msgspec
import pytest

from rxgem import (
    GeminiAPIError,
    GeminiTransportError,
    InvalidRequestError,
    MalformedStreamError,
    MissingCredentialsError,
    RxGemError,
    TruncatedStreamError,
)
from rxgem.core import SSEEncoder
from rxgem.core.chat._sse import error_payload
from rxgem.core.openai import openai_error
from rxgem.core.openai._error import RESPONSES_CODES, OpenAIError
from rxgem.core.responses import ResponsesBuilder
from rxgem.core.responses._sse import ResponsesSSEEncoder, encode_stream_error
from rxgem.items import End, Text
from rxgem.operators import gemini_to_responses
from rxgem.replies import error_event, error_reply, scrubber
from rxgem.request._policy import UnsupportedFieldError
from rxgem.store._errors import StoreError

# (error, status, type, code, param)
TABLE: list[tuple[BaseException, int, str, str | None, str | None]] = [
    (InvalidRequestError("unknown role", where="messages[2].role"), 400,
     "invalid_request_error", None, "messages[2].role"),
    (InvalidRequestError("not an object"), 400, "invalid_request_error", None, None),
    (UnsupportedFieldError("not supported", where="logit_bias"), 400,
     "invalid_request_error", None, "logit_bias"),
    (GeminiAPIError("m", code=429, status="RESOURCE_EXHAUSTED", event=3), 429,
     "rate_limit_error", "resource_exhausted", None),
    (GeminiAPIError("m", code=500), 500, "server_error", None, None),
    (GeminiAPIError("m"), 502, "server_error", None, None),
    (GeminiAPIError("m", code=418, http_status=418), 418, "invalid_request_error", None, None),
    (GeminiTransportError("x", cause=httpx.ConnectError("no")), 502, "server_error",
     "bad_gateway", None),
    (GeminiTransportError("x"), 502, "server_error", "bad_gateway", None),
    (GeminiTransportError("x", cause=httpx.ReadTimeout("slow")), 504, "server_error",
     "timeout", None),
    (GeminiTransportError("x", cause=httpx.ConnectTimeout("slow")), 504, "server_error",
     "timeout", None),
    (GeminiTransportError("x", cause=TimeoutError()), 504, "server_error", "timeout", None),
    (MalformedStreamError("bad", event=2, snippet="'{oops'"), 502, "server_error",
     "bad_upstream_response", None),
    (TruncatedStreamError("cut"), 502, "server_error", "bad_upstream_response", None),
    (MissingCredentialsError("none"), 401, "authentication_error", "invalid_api_key", None),
    (StoreError("disk"), 500, "api_error", None, None),
    (RxGemError("base"), 500, "api_error", None, None),
    (RuntimeError("a bug"), 500, "api_error", None, None),
]  # fmt: skip

# Google's status name (inside a 200 stream: no HTTP status) → (status, type)
GOOGLE: dict[str, tuple[int, str]] = {
    "INVALID_ARGUMENT": (400, "invalid_request_error"),
    "FAILED_PRECONDITION": (400, "invalid_request_error"),
    "OUT_OF_RANGE": (400, "invalid_request_error"),
    "UNAUTHENTICATED": (401, "authentication_error"),
    "PERMISSION_DENIED": (403, "permission_error"),
    "NOT_FOUND": (404, "not_found_error"),
    "ALREADY_EXISTS": (409, "conflict_error"),
    "ABORTED": (409, "conflict_error"),
    "RESOURCE_EXHAUSTED": (429, "rate_limit_error"),
    "CANCELLED": (502, "server_error"),
    "UNKNOWN": (500, "server_error"),
    "INTERNAL": (500, "server_error"),
    "DATA_LOSS": (500, "server_error"),
    "UNIMPLEMENTED": (501, "server_error"),
    "UNAVAILABLE": (503, "server_error"),
    "DEADLINE_EXCEEDED": (504, "server_error"),
}


@pytest.mark.parametrize(
    ("error", "status", "kind", "code", "param"),
    TABLE,
    ids=[f"{type(row[0]).__name__}-{i}" for i, row in enumerate(TABLE)],
)
def test_each_exception_maps_to_one_openai_error(
    error: BaseException, status: int, kind: str, code: str | None, param: str | None
) -> None:
    mapped = openai_error(error)
    assert (mapped.status, mapped.type, mapped.code, mapped.param) == (status, kind, code, param)
    assert mapped.body() == {
        "error": {"message": mapped.message, "type": kind, "param": param, "code": code}
    }
    assert mapped.responses_code in RESPONSES_CODES


def test_every_exception_class_of_rxgem_is_in_the_table() -> None:
    def subclasses(kind: type[BaseException]) -> set[type[BaseException]]:
        found = {kind}
        for sub in kind.__subclasses__():
            found |= subclasses(sub)
        return found

    # a store's errors are answered by the server's routes (a 503, a 404), never end a
    # stream: one that did would be a bug (the StoreError row)
    tabled = {type(row[0]) for row in TABLE}
    kinds = {k for k in subclasses(RxGemError) if not k.__module__.startswith("rxgem.store")}
    assert kinds - tabled == set()


@pytest.mark.parametrize(("name", "expected"), GOOGLE.items())
def test_googles_status_names_map_to_openais_status_type_and_code(
    name: str, expected: tuple[int, str]
) -> None:
    mapped = openai_error(GeminiAPIError("m", status=name))
    assert (mapped.status, mapped.type) == expected
    assert mapped.code == name.lower()
    # the HTTP status Gemini answered with wins over the name
    assert openai_error(GeminiAPIError("m", status=name, http_status=503)).status == 503


def test_a_retry_is_final_for_a_clients_mistake_and_a_daily_quota() -> None:
    per_day = {
        "@type": "type.googleapis.com/google.rpc.QuotaFailure",
        "violations": [{"quotaId": "GenerateRequestsPerDayPerProjectPerModel-FreeTier"}],
    }
    assert openai_error(InvalidRequestError("x")).final
    assert openai_error(GeminiAPIError("m", status="PERMISSION_DENIED")).final
    assert openai_error(GeminiAPIError("m", status="RESOURCE_EXHAUSTED", details=[per_day])).final
    assert not openai_error(GeminiAPIError("m", status="RESOURCE_EXHAUSTED")).final
    assert not openai_error(GeminiAPIError("m", status="UNAVAILABLE")).final
    waited = openai_error(GeminiAPIError("m", status="UNAVAILABLE", retry_after=2.5))
    assert waited.retry_after == 2.5
    assert openai_error(GeminiAPIError("m", http_status=400, retry_after=2.5)).retry_after is None


def test_a_failed_responses_code_is_from_the_responses_apis_set() -> None:
    quota = GeminiAPIError("m", status="RESOURCE_EXHAUSTED")
    assert openai_error(quota).responses_code == "rate_limit_exceeded"
    assert openai_error(GeminiAPIError("m", status="INTERNAL")).responses_code == "server_error"
    assert openai_error(InvalidRequestError("x")).responses_code == "server_error"
    own = OpenAIError(400, "invalid_request_error", "m", code="invalid_image")
    assert own.responses_code == "invalid_image"


def test_the_message_never_quotes_gemini_nor_a_bug_nor_a_url() -> None:
    malformed = openai_error(MalformedStreamError("bad JSON", event=2, snippet="'{SNIP'"))
    said = "Gemini's response could not be read: malformed stream at event 2: bad JSON"
    assert malformed.message == said
    cause = httpx.ConnectError("http://10.0.0.7:9/v1beta failed")
    transport = openai_error(GeminiTransportError("http://10.0.0.7:9/v1beta", cause=cause))
    assert transport.message == "the connection to Gemini failed (ConnectError)"
    assert "secret" not in openai_error(RuntimeError("secret state")).message
    assert openai_error(GeminiAPIError("")).message == "Gemini reported an error"
    long = openai_error(InvalidRequestError("x" * 5000, where="y" * 5000))
    assert len(long.message) == 1000
    assert long.param is not None
    assert len(long.param) == 256


SECRET = "AIzaSECRET-key-123"
LEAKY = GeminiAPIError(f"API key {SECRET} not valid", status="INVALID_ARGUMENT", event=4)


def _scrub(text: str) -> str:
    return text.replace(SECRET, "[redacted]")


def test_scrub_goes_over_what_gemini_said_and_nothing_else() -> None:
    seen: list[str] = []

    def scrub(text: str) -> str:
        seen.append(text)
        return _scrub(text)

    assert openai_error(LEAKY, scrub).message == "API key [redacted] not valid"
    assert openai_error(TruncatedStreamError(f"cut {SECRET}"), scrub).message.endswith(
        "cut [redacted]"
    )
    seen.clear()
    # the client's own words are never compared with a secret (no answer confirms one)
    assert openai_error(InvalidRequestError(SECRET, where="model"), scrub).message == SECRET
    assert seen == []
    assert SECRET in openai_error(LEAKY).message  # no scrub given: the message as it is


def _chat_sse(error: BaseException) -> dict[str, Any]:
    (frame,) = SSEEncoder(_scrub).close(error)  # type: ignore[arg-type]
    assert frame.startswith(b"data: ")
    assert frame.endswith(b"\n\n")
    payload: dict[str, Any] = json.loads(frame[6:])["error"]
    return payload


def _chat_json(error: BaseException) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(error_reply(error, [SECRET]).json())["error"]
    return body


def _named(frame: bytes) -> dict[str, Any]:
    head, _, data = frame.partition(b"\ndata: ")
    assert head == b"event: error"
    payload: dict[str, Any] = json.loads(data)
    return payload


def _responses_event(error: BaseException) -> dict[str, Any]:
    (frame,) = ResponsesSSEEncoder(_scrub).close(error)  # type: ignore[arg-type]
    return _named(frame)


def _server_event(error: BaseException) -> dict[str, Any]:
    return _named(error_event(error_reply(error, [SECRET]), 7))


def _failed_response(error: BaseException) -> dict[str, Any]:
    builder = ResponsesBuilder(model="m", scrub=_scrub)
    builder.feed([Text(0, "Hello")])
    *_, failed = builder.close(error)  # type: ignore[arg-type]
    document: dict[str, Any] = msgspec.to_builtins(failed)
    assert document["type"] == "response.failed"
    assert document["response"]["status"] == "failed"
    error_object: dict[str, Any] = document["response"]["error"]
    return error_object


@pytest.mark.parametrize(
    "error", [row[0] for row in TABLE] + [LEAKY], ids=lambda e: type(e).__name__
)
def test_every_output_says_one_error_alike(error: BaseException) -> None:
    mapped = openai_error(error, _scrub)
    chat_sse, chat_json = _chat_sse(error), _chat_json(error)
    if isinstance(error, MissingCredentialsError):  # the server asks for its own token
        assert chat_json["code"] == mapped.code
    assert chat_sse == chat_json == mapped.body()["error"]
    expected_event = {"code": mapped.code or mapped.type, "message": mapped.message}
    for event in (_responses_event(error), _server_event(error)):
        assert event.pop("sequence_number") in (0, 7)
        assert event == {"type": "error", **expected_event, "param": mapped.param}
    failed = _failed_response(error)
    assert failed == {
        "code": mapped.responses_code,
        "message": mapped.message,
        "type": mapped.type,
        **({"param": mapped.param} if mapped.param is not None else {}),
    }


def test_a_secret_in_geminis_message_is_scrubbed_in_every_output() -> None:
    outputs = [
        json.dumps(_chat_sse(LEAKY)),
        json.dumps(_chat_json(LEAKY)),
        json.dumps(_responses_event(LEAKY)),
        json.dumps(_server_event(LEAKY)),
        json.dumps(_failed_response(LEAKY)),
        error_reply(LEAKY, [SECRET]).frame().decode(),
        encode_stream_error(LEAKY, 0, _scrub).decode(),
        json.dumps(error_payload(LEAKY, _scrub)),
    ]
    for output in outputs:
        assert SECRET not in output
        assert "[redacted]" in output


def test_the_servers_scrubber_hides_the_upstream_and_redacts_the_secrets() -> None:
    scrub = scrubber([SECRET, ""], "https://gemini.internal:8443/v1beta")
    said = f"{SECRET} refused by https://gemini.internal:8443/v1beta/models/x"
    assert scrub(said) == "[redacted] refused by [upstream]"


def test_a_blocked_prompts_reason_goes_through_scrub() -> None:
    builder = ResponsesBuilder(model="m", scrub=_scrub)
    builder.feed([End(0, "SAFETY", blocked=True, message=f"blocked {SECRET}")])
    *_, failed = builder.close()
    assert failed.response.error is not None  # type: ignore[union-attr]
    message = failed.response.error.message  # type: ignore[union-attr]
    assert message == "the prompt was blocked (SAFETY): blocked [redacted]"


def test_the_builder_takes_scrub_as_a_checked_pipeline_option() -> None:
    with pytest.raises(TypeError, match="scrub must be callable"):
        gemini_to_responses(scrub="no")  # type: ignore[arg-type]
