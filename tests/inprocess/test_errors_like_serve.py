"""``rxgem.OpenAITransport`` answers errors as ``rxgem serve`` does: the same status, OpenAI
error object and retry headers for the same request and the same Gemini answer, never a
traceback, never the key; the ``openai`` SDK raises the class the status says.

Each case sends one raw request to the transport and to a real ``rxgem serve`` (uvicorn on
127.0.0.1) in front of the same FakeGemini, and compares what comes back.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import httpx
import openai
import pytest
from server_harness import KEY, MODEL, TOKEN, serving, settings_for

import rxgem
from rxgem.testing import FakeGemini, FakeResponse, event, text

HI = [{"role": "user", "content": "Hi"}]
RETRY_INFO = {
    "@type": "type.googleapis.com/google.rpc.RetryInfo",
    "retryDelay": "7s",
}


def _google(code: int, status: str, message: str, details: list[Any] | None = None) -> FakeResponse:
    error = {"code": code, "message": message, "status": status}
    if details:
        error["details"] = details
    return FakeResponse(status=code, error=error)


UPSTREAM_ERRORS = {
    "quota": _google(429, "RESOURCE_EXHAUSTED", "Quota exceeded.", [RETRY_INFO]),
    "key-echoed": _google(400, "INVALID_ARGUMENT", f"API key not valid: {KEY}. Please pass one."),
    "denied": _google(403, "PERMISSION_DENIED", "The caller does not have permission"),
    "unavailable": _google(503, "UNAVAILABLE", "The model is overloaded."),
}

REQUESTS: dict[str, tuple[str, Any]] = {
    "chat": ("/v1/chat/completions", {"model": MODEL, "messages": HI}),
    "chat-stream": ("/v1/chat/completions", {"model": MODEL, "messages": HI, "stream": True}),
    "responses": ("/v1/responses", {"model": MODEL, "input": "Hi", "store": False}),
    "responses-stream": (
        "/v1/responses",
        {"model": MODEL, "input": "Hi", "stream": True, "store": False},
    ),
}

BAD_INPUT: dict[str, tuple[str, Any]] = {
    "tools-not-a-list": ("/v1/chat/completions", {"model": MODEL, "messages": HI, "tools": 5}),
    "message-without-role": ("/v1/chat/completions", {"model": MODEL, "messages": [{"x": 1}]}),
    "stream-not-boolean": (
        "/v1/chat/completions",
        {"model": MODEL, "messages": HI, "stream": "yes"},
    ),
    "input-a-number": ("/v1/responses", {"model": MODEL, "input": 5, "store": False}),
    "not-a-model-name": ("/v1/chat/completions", {"model": "../etc", "messages": HI}),
    "not-json": ("/v1/chat/completions", b"{not json"),
    "not-an-object": ("/v1/chat/completions", [1, 2]),
}

_COMPARED_HEADERS = ("retry-after", "retry-after-ms", "x-should-retry")


def _shape(response: httpx.Response) -> tuple[int, dict[str, str], Any]:
    headers = {k: response.headers[k] for k in _COMPARED_HEADERS if k in response.headers}
    return response.status_code, headers, response.json()


def _without_message(response: httpx.Response) -> httpx.Response:
    body = response.json()
    del body["error"]["message"]
    return httpx.Response(response.status_code, headers=response.headers, json=body)


def _send(client: httpx.Client, url: str, path: str, body: Any) -> httpx.Response:
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    headers = {"content-type": "application/json", "authorization": f"Bearer {TOKEN}"}
    return client.post(f"{url}{path}", content=content, headers=headers)


def _both(fake: FakeGemini, path: str, body: Any) -> tuple[httpx.Response, httpx.Response]:
    transport = rxgem.OpenAITransport(api_key=KEY, base_url=fake.base_url)
    with httpx.Client(transport=transport) as client:
        ours = _send(client, "http://rxgem.local", path, body)
    with serving(settings_for(fake)) as url, httpx.Client(timeout=30) as client:
        theirs = _send(client, url, path, body)
    return ours, theirs


@pytest.mark.parametrize("request_name", sorted(REQUESTS))
@pytest.mark.parametrize("error_name", sorted(UPSTREAM_ERRORS))
def test_an_upstream_error_is_answered_as_rxgem_serve_answers_it(
    error_name: str, request_name: str
) -> None:
    path, body = REQUESTS[request_name]
    with FakeGemini(UPSTREAM_ERRORS[error_name]) as fake:
        ours, theirs = _both(fake, path, body)
    assert _shape(ours) == _shape(theirs)
    assert ours.status_code >= 400
    assert KEY not in ours.text


@pytest.mark.parametrize("case", sorted(BAD_INPUT))
def test_bad_input_is_answered_as_rxgem_serve_answers_it(case: str) -> None:
    path, body = BAD_INPUT[case]
    with FakeGemini() as fake:
        ours, theirs = _both(fake, path, body)
        assert fake.requests == []  # refused before Gemini was asked
    error = ours.json()["error"]
    if case == "not-a-model-name":  # rxgem serve also names agents, which it alone runs
        assert theirs.json()["error"]["message"].startswith(error["message"])
        ours, theirs = _without_message(ours), _without_message(theirs)
    assert _shape(ours) == _shape(theirs)
    assert ours.status_code == 400
    assert error["type"] == "invalid_request_error"
    assert "Traceback" not in error["message"]


def test_bad_input_names_where_it_is() -> None:
    with FakeGemini() as fake:
        transport = rxgem.OpenAITransport(api_key=KEY, base_url=fake.base_url)
        with httpx.Client(transport=transport) as client:
            refused = _send(client, "http://rxgem.local", *BAD_INPUT["tools-not-a-list"])
    assert refused.json()["error"]["param"] == "tools"


def test_a_failure_after_the_stream_began_ends_it_as_rxgem_serve_does() -> None:
    body = event(text("Hello")) + event(text(" there"))
    broken = FakeResponse(
        body=body, raw_error={"code": 500, "message": "boom", "status": "INTERNAL"}
    )
    path, request = REQUESTS["chat-stream"]
    with FakeGemini(broken) as fake:
        ours, theirs = _both(fake, path, request)
    assert ours.status_code == theirs.status_code == 200
    last = ours.text.strip().rsplit("\n\n", 1)[-1]
    assert last == theirs.text.strip().rsplit("\n\n", 1)[-1]
    assert json.loads(last.removeprefix("data: "))["error"]["code"] == "internal"


def test_an_unknown_route_is_an_openai_404_naming_the_routes() -> None:
    transport = rxgem.OpenAITransport(api_key=KEY)
    with httpx.Client(transport=transport) as client:
        missing = client.post("http://rxgem.local/v1/embeddings", json={})
        wrong = client.get("http://rxgem.local/v1/chat/completions")
    assert missing.status_code == 404
    assert "/v1/chat/completions" in missing.json()["error"]["message"]
    assert wrong.status_code == 405
    assert wrong.json()["error"]["code"] == "method_not_allowed"


SDK_CLASSES: dict[str, type[openai.APIStatusError]] = {
    "quota": openai.RateLimitError,
    "key-echoed": openai.BadRequestError,
    "denied": openai.PermissionDeniedError,
    "unavailable": openai.InternalServerError,
}


def _calls(client: Any) -> list[Callable[[], Any]]:
    return [
        lambda: client.chat.completions.create(model=MODEL, messages=HI),
        lambda: client.chat.completions.create(model=MODEL, messages=HI, stream=True),
        lambda: client.responses.create(model=MODEL, input="Hi"),
        lambda: client.responses.create(model=MODEL, input="Hi", stream=True),
    ]


@pytest.mark.parametrize("upstream", ["generateContent", "interactions"])
@pytest.mark.parametrize("error_name", sorted(SDK_CLASSES))
def test_an_upstream_error_reaches_the_sdk_as_its_exception_class(
    error_name: str, upstream: str
) -> None:
    answer = UPSTREAM_ERRORS[error_name]
    with FakeGemini(answer, interactions=[answer]) as fake:
        transport = rxgem.OpenAITransport(upstream=upstream, api_key=KEY, base_url=fake.base_url)
        client = openai.OpenAI(
            api_key="unused",
            base_url="http://rxgem.local/v1",
            http_client=httpx.Client(transport=transport),
            max_retries=0,
        )
        for call in _calls(client):
            with pytest.raises(SDK_CLASSES[error_name]) as raised:
                call()
            assert KEY not in str(raised.value.body)

        async def main() -> None:
            aclient = openai.AsyncOpenAI(
                api_key="unused",
                base_url="http://rxgem.local/v1",
                http_client=httpx.AsyncClient(transport=transport),
                max_retries=0,
            )
            with pytest.raises(SDK_CLASSES[error_name]):
                await aclient.chat.completions.create(model=MODEL, messages=HI, stream=True)
            with pytest.raises(SDK_CLASSES[error_name]):
                await aclient.responses.create(model=MODEL, input="Hi")
            await aclient.close()

        asyncio.run(main())


def _failed_error(answer: httpx.Response) -> dict[str, Any]:
    last = answer.text.strip().rsplit("\n\n", 1)[-1]
    assert last.startswith("event: response.failed\n"), last
    error: dict[str, Any] = json.loads(last.partition("data: ")[2])["response"]["error"]
    return error


def test_a_failed_response_is_built_scrubbed_as_rxgem_serve_builds_it() -> None:
    echoed = {"code": 500, "message": f"backend saw {KEY} and SIDE-NOTE", "status": "INTERNAL"}
    broken = FakeResponse(body=event(text("Hello")), raw_error=echoed)
    path, request = REQUESTS["responses-stream"]
    with FakeGemini(broken, broken) as fake:
        ours, theirs = _both(fake, path, request)
        # a scrub of one's own (an option of the pipeline) runs first, the key is still removed
        own = rxgem.OpenAITransport(
            api_key=KEY, base_url=fake.base_url, scrub=lambda t: t.replace("SIDE-NOTE", "[x]")
        )
        with httpx.Client(transport=own) as client:
            mine = _send(client, "http://rxgem.local", path, request)
    assert _failed_error(ours) == _failed_error(theirs)
    assert _failed_error(ours) == {
        "code": "server_error",
        "message": "backend saw [redacted] and SIDE-NOTE",
        "type": "server_error",
    }
    assert _failed_error(mine)["message"] == "backend saw [redacted] and [x]"
