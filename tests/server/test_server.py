"""``rxgem.server`` in real uvicorn, in front of FakeGemini, driven by the ``openai`` SDK.

Each test starts the app in a background thread (``uvicorn.Server`` on an ephemeral
port) with its own FakeGemini upstream, and talks to it as an application would: the
sync and async ``openai`` clients, ``client.chat.completions.stream(...)``, and raw
``httpx`` where the bytes on the wire matter.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import json
import logging
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import httpx
import openai
import pytest
from openai.types.chat import ChatCompletionChunk as SDKChunk
from server_harness import (
    EXPECTED,
    HELLO,
    KEY,
    MODEL,
    QUOTA_PER_DAY,
    QUOTA_PER_MINUTE,
    TOKEN,
    async_sdk,
    event_ends,
    expected_content,
    gateway,
    sdk,
    serving,
    settings_for,
    strict_tool,
)

from rxgem import samples
from rxgem.cli.serve import add_serve_parser, run_serve
from rxgem.core.openai._error import is_daily_quota
from rxgem.server import ServerSettings, SettingsError, settings_from_env
from rxgem.testing import (
    FakeGemini,
    FakeResponse,
    call,
    event,
    finish,
    gemini_request_problems,
    text,
    thought,
    usage,
)

# --------------------------------------------------------------------------- answers


def test_non_streaming_text_with_the_sync_sdk() -> None:
    with FakeGemini(samples.read("text")) as fake, serving(settings_for(fake)) as url:
        with sdk(url) as client:
            completion = client.chat.completions.create(model=MODEL, messages=HELLO)
        (sent,) = fake.requests
    assert completion.object == "chat.completion"
    assert completion.choices[0].message.content == expected_content("text.sse")
    assert completion.choices[0].finish_reason == "stop"
    assert completion.usage is not None
    assert completion.usage.total_tokens == 320
    assert (completion._request_id or "").startswith("req_")
    assert sent.path == f"/v1beta/models/{MODEL}:streamGenerateContent"
    assert sent.headers["x-goog-api-key"] == KEY
    assert sent.json["contents"] == [{"role": "user", "parts": [{"text": HELLO[0]["content"]}]}]


def test_streaming_text_with_the_async_sdk() -> None:
    async def run(url: str) -> list[SDKChunk]:
        async with async_sdk(url) as client:
            stream = await client.chat.completions.create(
                model=MODEL,
                messages=HELLO,
                stream=True,
            )
            return [chunk async for chunk in stream]

    capture = samples.read("text")
    slow = FakeResponse(body=capture, split_at=event_ends(capture), pause=0.01)
    with FakeGemini(slow) as fake, serving(settings_for(fake)) as url:
        chunks = asyncio.run(run(url))
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == expected_content("text.sse")
    assert chunks[-1].choices[0].finish_reason == "stop"
    assert all(c.usage is None for c in chunks)  # no usage chunk unless asked


def test_stream_framing_and_headers_on_the_wire() -> None:
    with FakeGemini(samples.read("text")) as fake, serving(settings_for(fake)) as url:
        body = {"model": MODEL, "messages": HELLO, "stream": True}
        headers = {"authorization": f"Bearer {TOKEN}"}
        with httpx.stream("POST", f"{url}/v1/chat/completions", json=body, headers=headers) as r:
            raw = r.read()
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/event-stream")
    assert r.headers["cache-control"] == "no-cache"
    assert r.headers["x-accel-buffering"] == "no"
    assert r.headers["x-request-id"].startswith("req_")
    frames = raw.decode().split("\n\n")
    assert frames[-1] == ""
    assert frames[-2] == "data: [DONE]"
    for frame in frames[:-2]:
        assert frame.startswith("data: {")
        assert json.loads(frame.removeprefix("data: "))["object"] == "chat.completion.chunk"


def test_usage_with_stream_options() -> None:
    with gateway(samples.read("text")) as (_, _, client):
        chunks = list(
            client.chat.completions.create(
                model=MODEL,
                messages=HELLO,
                stream=True,
                stream_options={"include_usage": True},
            )
        )
    *deltas, last = chunks
    assert last.choices == []
    assert last.usage is not None
    assert (last.usage.prompt_tokens, last.usage.total_tokens) == (16, 320)
    assert all(c.usage is None for c in deltas)


def test_parallel_tool_calls_with_strict_tools_through_the_stream_helper() -> None:
    tools = [strict_tool("read_file", path="string"), strict_tool("search", query="string")]
    with FakeGemini(samples.read("thinking_tools")) as fake, serving(settings_for(fake)) as url:
        with (
            sdk(url) as client,
            client.chat.completions.stream(
                model=MODEL,
                messages=[{"role": "user", "content": "How do the operators fit together?"}],
                tools=tools,
            ) as stream,
        ):
            kinds = {event.type for event in stream}
            completion = stream.get_final_completion()
        sent = fake.requests[0].json
    assert "tool_calls.function.arguments.done" in kinds
    message = completion.choices[0].message
    assert completion.choices[0].finish_reason == "tool_calls"
    calls = message.tool_calls or []
    assert [(c.function.name, c.function.parsed_arguments) for c in calls] == [
        ("read_file", {"path": "rxgem/_sse.py"}),
        ("read_file", {"path": "rxgem/_slots.py"}),
        ("read_file", {"path": "rxgem/_chunks.py"}),
        ("search", {"query": "rxgem operators"}),
    ]
    assert len({c.id for c in calls}) == 4
    assert message.content == expected_content("thinking_tools.sse")
    declared = [f["name"] for t in sent["tools"] for f in t.get("functionDeclarations", [])]
    assert declared == ["read_file", "search"]


def test_n_2_streaming_and_not() -> None:
    capture = samples.read("multi_candidate")
    tools = [strict_tool("get_time", timezone="string")]
    with FakeGemini(capture) as fake, serving(settings_for(fake)) as url, sdk(url) as client:
        whole = client.chat.completions.create(model=MODEL, messages=HELLO, n=2, tools=tools)
        with client.chat.completions.stream(
            model=MODEL,
            messages=HELLO,
            n=2,
            tools=tools,
        ) as stream:
            streamed = stream.get_final_completion()
        assert [r.json["generationConfig"]["candidateCount"] for r in fake.requests] == [2, 2]
    for completion in (whole, streamed):
        first, second = completion.choices
        assert (first.index, second.index) == (0, 1)
        assert first.message.content == expected_content("multi_candidate.sse", 0)
        assert second.message.content == expected_content("multi_candidate.sse", 1)
        assert [c.function.name for c in second.message.tool_calls or []] == ["get_time"]
        assert (first.finish_reason, second.finish_reason) == ("stop", "tool_calls")


# --------------------------------------------------------------------------- agent loop

SIG_PARALLEL = base64.b64encode(b"signature of the parallel step").decode()
SIG_SEQUENTIAL = base64.b64encode(b"signature of the sequential step").decode()
WEATHER = strict_tool("get_weather", city="string")
GAP = strict_tool("temperature_gap", a="number", b="number")
CELSIUS = {"Paris": 18, "Tokyo": 24}


def test_three_turn_agent_loop_round_trips_signatures_through_the_server() -> None:
    g3 = "gemini-3-pro-preview"
    answers = [
        event(thought("Both cities at once."))
        + event(
            call("get_weather", city="Paris", id="fc-paris", sig=SIG_PARALLEL),
            call("get_weather", city="Tokyo", id="fc-tokyo"),
        )
        + event(finish("STOP"), usage(31, 18)),
        event(call("temperature_gap", a=18, b=24, id="fc-gap", sig=SIG_SEQUENTIAL))
        + event(finish("STOP"), usage(70, 9)),
        event(text("Tokyo is 6 °C warmer than Paris.")) + event(finish("STOP"), usage(90, 11)),
    ]
    history: list[dict[str, Any]] = [
        {"role": "user", "content": "How much warmer is Tokyo than Paris right now?"}
    ]
    with FakeGemini(*answers, strict=True) as fake, serving(settings_for(fake)) as url:
        with sdk(url) as client:
            for _ in range(4):
                with client.chat.completions.stream(
                    model=g3,
                    messages=history,
                    tools=[WEATHER, GAP],
                ) as stream:
                    message = stream.get_final_completion().choices[0].message
                entry = message.model_dump(exclude_none=True)
                entry.pop("parsed", None)
                for tool_call in entry.get("tool_calls") or []:
                    tool_call["function"].pop("parsed_arguments", None)
                history.append(entry)
                if not message.tool_calls:
                    break
                for tool_call in message.tool_calls:
                    args = json.loads(tool_call.function.arguments)
                    result = (
                        {"celsius": CELSIUS[args["city"]]}
                        if tool_call.function.name == "get_weather"
                        else {"degrees": args["b"] - args["a"]}
                    )
                    content = json.dumps(result)
                    history.append(
                        {"role": "tool", "tool_call_id": tool_call.id, "content": content}
                    )
        requests = [r.json for r in fake.requests]
    assert len(requests) == 3  # strict FakeGemini refused none
    assert all(gemini_request_problems(r, model=g3) == [] for r in requests)
    assert history[-1]["content"] == "Tokyo is 6 °C warmer than Paris."
    last_contents = requests[2]["contents"]
    signed = [p.get("thoughtSignature") for c in last_contents for p in c["parts"]]
    assert SIG_PARALLEL in signed
    assert SIG_SEQUENTIAL in signed


# --------------------------------------------------------------------------- errors

ERROR_CASES = [
    (400, "INVALID_ARGUMENT", openai.BadRequestError, "invalid_request_error"),
    (401, "UNAUTHENTICATED", openai.AuthenticationError, "authentication_error"),
    (403, "PERMISSION_DENIED", openai.PermissionDeniedError, "permission_error"),
    (404, "NOT_FOUND", openai.NotFoundError, "not_found_error"),
    (429, "RESOURCE_EXHAUSTED", openai.RateLimitError, "rate_limit_error"),
    (500, "INTERNAL", openai.InternalServerError, "server_error"),
    (503, "UNAVAILABLE", openai.InternalServerError, "server_error"),
    (504, "DEADLINE_EXCEEDED", openai.InternalServerError, "server_error"),
]


@pytest.mark.parametrize(("status", "google", "exception", "kind"), ERROR_CASES)
def test_gemini_status_becomes_the_sdk_exception(
    status: int, google: str, exception: type[openai.APIStatusError], kind: str
) -> None:
    error = {"code": status, "message": f"Gemini says {google}.", "status": google}
    if status == 429:
        error = {**QUOTA_PER_MINUTE}
    with gateway(FakeResponse(error=error)) as (_, _, client):
        for stream in (False, True):
            with pytest.raises(exception) as caught:
                client.chat.completions.create(model=MODEL, messages=HELLO, stream=stream)
            raised = caught.value
            assert raised.status_code == status
            assert raised.body == {
                "message": error["message"],
                "type": kind,
                "param": None,
                "code": google.lower(),
            }
            headers = raised.response.headers
            if status == 429:
                assert headers["retry-after"] == "35"
                assert headers["retry-after-ms"] == "34400"
                assert "x-should-retry" not in headers  # a per-minute quota: retry later
            elif status < 500:
                assert headers["x-should-retry"] == "false"
            else:
                assert "x-should-retry" not in headers


def test_a_daily_quota_says_do_not_retry() -> None:
    assert is_daily_quota(QUOTA_PER_DAY["details"])
    assert not is_daily_quota(QUOTA_PER_MINUTE["details"])
    with (
        gateway(FakeResponse(error=QUOTA_PER_DAY)) as (_, _, client),
        pytest.raises(openai.RateLimitError) as caught,
    ):
        client.chat.completions.create(model=MODEL, messages=HELLO)
    assert caught.value.response.headers["x-should-retry"] == "false"


def test_requests_that_cannot_be_translated_are_400_with_param() -> None:
    with FakeGemini() as fake, serving(settings_for(fake)) as url, sdk(url) as client:
        with pytest.raises(openai.BadRequestError) as caught:
            client.chat.completions.create(
                model=MODEL,
                messages=[{"role": "wizard", "content": "hi"}],
            )
        assert caught.value.body["param"] == "messages[0].role"
        assert caught.value.body["type"] == "invalid_request_error"
        with pytest.raises(openai.BadRequestError) as caught:
            client.chat.completions.create(model="../files", messages=HELLO)
        assert caught.value.body["param"] == "model"
        headers = {"authorization": f"Bearer {TOKEN}", "content-type": "application/json"}
        response = httpx.post(f"{url}/v1/chat/completions", content=b"{not json", headers=headers)
        assert response.status_code == 400
        assert response.json()["error"]["type"] == "invalid_request_error"
        assert httpx.get(f"{url}/v1/nothing").json()["error"]["type"] == "not_found_error"
        assert fake.requests == []  # nothing reached Gemini


@pytest.mark.parametrize("upstream_client", ["aiohttp", "httpx"])
def test_transport_failures_are_502_and_504(upstream_client: str) -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    nowhere = settings_for(f"http://127.0.0.1:{port}/v1beta", upstream_client=upstream_client)
    with (
        serving(nowhere) as url,
        sdk(url) as client,
        pytest.raises(openai.InternalServerError) as caught,
    ):
        client.chat.completions.create(model=MODEL, messages=HELLO, stream=True)
    assert caught.value.status_code == 502
    assert caught.value.body["code"] == "bad_gateway"
    assert str(port) not in caught.value.message  # the upstream stays private
    late = FakeResponse(body=samples.read("text"), delay=2)
    with (
        gateway(late, read_timeout=0.3, upstream_client=upstream_client) as (_, _, client),
        pytest.raises(openai.InternalServerError) as caught,
    ):
        client.chat.completions.create(model=MODEL, messages=HELLO)
    assert caught.value.status_code == 504


def test_a_mid_stream_error_is_one_error_frame_then_the_end() -> None:
    with FakeGemini(samples.read("error_mid_stream")) as fake, serving(settings_for(fake)) as url:
        with sdk(url) as client:
            stream = client.chat.completions.create(model=MODEL, messages=HELLO, stream=True)
            received: list[str] = []

            def read_all() -> None:
                for chunk in stream:
                    received.append(chunk.choices[0].delta.content or "")

            with pytest.raises(openai.APIError) as caught:
                read_all()
        headers = {"authorization": f"Bearer {TOKEN}"}
        body = {"model": MODEL, "messages": HELLO, "stream": True}
        raw = httpx.post(f"{url}/v1/chat/completions", json=body, headers=headers).text
    assert "".join(received) == expected_content("error_mid_stream.sse")
    assert caught.value.body == {
        "message": "The operation was cancelled.",
        "type": "server_error",
        "param": None,
        "code": "cancelled",
    }
    frames = raw.split("\n\n")
    assert frames[-1] == ""
    assert json.loads(frames[-2].removeprefix("data: "))["error"]["code"] == "cancelled"
    assert "[DONE]" not in raw


# --------------------------------------------------------------------------- auth


def test_client_tokens_are_checked() -> None:
    with FakeGemini() as fake, serving(settings_for(fake, client_tokens=("a", TOKEN))) as url:
        for wrong in ("nope", TOKEN + "x", TOKEN[:-1]):
            with sdk(url, api_key=wrong) as client, pytest.raises(openai.AuthenticationError):
                client.chat.completions.create(model=MODEL, messages=HELLO)
        missing = httpx.post(f"{url}/v1/chat/completions", json={"model": MODEL})
        assert missing.status_code == 401
        assert missing.json()["error"]["code"] == "invalid_api_key"
        with sdk(url, api_key="a") as client:
            assert client.chat.completions.create(model=MODEL, messages=HELLO).choices
        assert len(fake.requests) == 1


def test_pass_through_sends_the_clients_key_to_gemini(caplog: pytest.LogCaptureFixture) -> None:
    own = "AIza-CLIENT-OWN-KEY-93ab"
    caplog.set_level(logging.DEBUG)
    refusal = {"code": 400, "message": f"API key {own} not valid.", "status": "INVALID_ARGUMENT"}
    with FakeGemini(samples.read("text"), FakeResponse(error=refusal)) as fake:
        settings = ServerSettings(upstream=fake.base_url, pass_through_auth=True, log_level="debug")
        with serving(settings) as url, sdk(url, api_key=own) as client:
            client.chat.completions.create(model=MODEL, messages=HELLO)
            with pytest.raises(openai.BadRequestError) as caught:
                client.chat.completions.create(model=MODEL, messages=HELLO)
            assert httpx.post(f"{url}/v1/chat/completions", json={}).status_code == 401
        first, _ = fake.requests
    assert first.headers["x-goog-api-key"] == own
    assert caught.value.message.endswith("API key [redacted] not valid.")
    assert own not in caplog.text


# --------------------------------------------------------------------------- models, health


GENERATE = "generateContent"


class _ModelsApi(BaseHTTPRequestHandler):
    """Gemini's ``models.list`` (two pages) and ``models.get``."""

    PAGES: ClassVar[dict[str, Any]] = {
        "": {
            "models": [
                {"name": "models/gemini-2.5-flash", "supportedGenerationMethods": [GENERATE]},
                {"name": "models/text-embedding-004", "supportedGenerationMethods": ["embed"]},
            ],
            "nextPageToken": "page-2",
        },
        "page-2": {
            "models": [{"name": "models/gemini-2.5-pro", "supportedGenerationMethods": [GENERATE]}]
        },
    }
    seen: ClassVar[list[tuple[str, str | None]]] = []

    def do_GET(self) -> None:
        _ModelsApi.seen.append((self.path, self.headers.get("x-goog-api-key")))
        path, _, query = self.path.partition("?")
        params = dict(p.split("=", 1) for p in query.split("&") if "=" in p)
        if path == "/v1beta/models":
            self._answer(200, self.PAGES[params.get("pageToken", "")])
        elif path == "/v1beta/models/gemini-2.5-pro":
            self._answer(200, {"name": "models/gemini-2.5-pro", "displayName": "Gemini 2.5 Pro"})
        else:
            error = {"code": 404, "message": "Model not found.", "status": "NOT_FOUND"}
            self._answer(404, {"error": error})

    def _answer(self, status: int, data: Any) -> None:
        body = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def test_models_list_and_retrieve() -> None:
    api = ThreadingHTTPServer(("127.0.0.1", 0), _ModelsApi)
    threading.Thread(target=api.serve_forever, daemon=True).start()
    try:
        upstream = f"http://127.0.0.1:{api.server_address[1]}/v1beta"
        with serving(settings_for(upstream)) as url, sdk(url) as client:
            models = list(client.models.list())
            one = client.models.retrieve("gemini-2.5-pro")
            with pytest.raises(openai.NotFoundError):
                client.models.retrieve("gemini-0")
            with pytest.raises(openai.NotFoundError):
                client.models.retrieve("../tunedModels")
            with sdk(url, api_key="wrong") as stranger, pytest.raises(openai.AuthenticationError):
                stranger.models.list()
    finally:
        api.shutdown()
        api.server_close()
    assert [(m.id, m.object, m.owned_by) for m in models] == [
        ("gemini-2.5-flash", "model", "google"),
        ("gemini-2.5-pro", "model", "google"),
    ]
    assert (one.id, one.object, one.owned_by) == ("gemini-2.5-pro", "model", "google")
    assert all(key == KEY for _, key in _ModelsApi.seen)
    assert not any("tunedModels" in path for path, _ in _ModelsApi.seen)


def test_healthz_needs_no_token() -> None:
    with FakeGemini() as fake, serving(settings_for(fake)) as url:
        response = httpx.get(f"{url}/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}
    assert fake.requests == []


# --------------------------------------------------------------------------- cancellation


@pytest.mark.parametrize("upstream_client", ["aiohttp", "httpx"])
def test_a_client_leaving_before_the_first_byte_cancels_the_upstream_request(
    upstream_client: str,
) -> None:
    late = FakeResponse(body=samples.read("text"), delay=10)
    settings = {"upstream_client": upstream_client}
    with FakeGemini(late) as fake, serving(settings_for(fake, **settings)) as url:
        with sdk(url, timeout=0.5) as client, pytest.raises(openai.APITimeoutError):
            client.chat.completions.create(model=MODEL, messages=HELLO, stream=True)
        left = time.monotonic()
        assert fake.wait_for_disconnect(1.0)
        assert time.monotonic() - left < 1.0
        assert fake.completed == 0


@pytest.mark.parametrize("upstream_client", ["aiohttp", "httpx"])
def test_a_client_leaving_mid_stream_cancels_the_upstream_request(upstream_client: str) -> None:
    capture = samples.read("thinking_tools")
    slow = FakeResponse(body=capture, split_at=event_ends(capture), pause=0.5)
    with (
        FakeGemini(slow) as fake,
        serving(settings_for(fake, upstream_client=upstream_client)) as url,
        sdk(url) as client,
    ):
        stream = client.chat.completions.create(model=MODEL, messages=HELLO, stream=True)
        next(iter(stream))
        stream.close()
        left = time.monotonic()
        assert fake.wait_for_disconnect(1.0)
        assert time.monotonic() - left < 1.0


def test_keep_alive_comments_while_gemini_is_silent() -> None:
    capture = samples.read("text")
    cut = event_ends(capture)[0]
    slow = FakeResponse(body=capture, split_at=[cut], pause=0.3, delay=0.25)
    with FakeGemini(slow) as fake, serving(settings_for(fake, keep_alive=0.1)) as url:
        headers = {"authorization": f"Bearer {TOKEN}"}
        body = {"model": MODEL, "messages": HELLO, "stream": True}
        with httpx.Client() as raw:  # made first: its TLS context takes tens of ms
            started = time.monotonic()
            with raw.stream("POST", f"{url}/v1/chat/completions", json=body, headers=headers) as r:
                to_headers = time.monotonic() - started
                frames = [f for f in r.read().decode().split("\n\n") if f]
        with sdk(url) as client:  # the SDK skips the comments
            content = "".join(
                c.choices[0].delta.content or ""
                for c in client.chat.completions.create(model=MODEL, messages=HELLO, stream=True)
            )
    assert to_headers < 0.3  # headers after one keep-alive interval, not after the delay
    first_data = next(i for i, f in enumerate(frames) if f.startswith("data:"))
    assert first_data >= 2
    assert set(frames[:first_data]) == {": keep-alive"}
    between = frames[first_data + 1 : frames.index("data: [DONE]")]
    assert ": keep-alive" in between  # during the pause between events too
    assert content == expected_content("text.sse")


@pytest.mark.parametrize("upstream_client", ["aiohttp", "httpx"])
def test_a_slow_client_slows_the_upstream_read(upstream_client: str) -> None:
    piece = "x" * 65536
    big = b"".join(event(text(piece)) for _ in range(600)) + event(finish("STOP"), usage(1, 1))
    assert len(big) > 32_000_000  # far beyond the socket buffers on the way
    request = json.dumps({"model": MODEL, "messages": HELLO, "stream": True}).encode()
    with gateway(FakeResponse(body=big, chunk_size=65536), upstream_client=upstream_client) as (
        fake,
        url,
        _,
    ):
        port = int(url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port)) as client:
            client.sendall(
                b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                b"Authorization: Bearer " + TOKEN.encode() + b"\r\n"
                b"Content-Type: application/json\r\n"
                b"Content-Length: %d\r\n\r\n" % len(request) + request
            )
            time.sleep(1.0)  # the client reads nothing
            assert fake.completed == 0  # so the server stopped reading Gemini
            received = bytearray()
            while data := client.recv(1 << 20):
                received += data
        assert fake.completed == 1
    assert received.count(piece.encode()) == 600
    assert received.rstrip(b"\r\n0").endswith(b"data: [DONE]")


# --------------------------------------------------------------------------- logs and secrets


def test_no_secret_and_no_prompt_in_anything_the_server_writes(
    caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    prompt = [{"role": "user", "content": "PROMPT-TEXT-NOT-FOR-LOGS"}]
    leaky = {"code": 400, "message": f"API key {KEY} not valid.", "status": "INVALID_ARGUMENT"}
    answers = [samples.read("text"), FakeResponse(error=leaky), samples.read("error_mid_stream")]
    written: list[str] = []
    caplog.set_level(logging.DEBUG)
    with gateway(*answers, log_level="debug") as (_, url, client):
        client.chat.completions.create(model=MODEL, messages=prompt)
        with pytest.raises(openai.BadRequestError) as caught:
            client.chat.completions.create(model=MODEL, messages=prompt, stream=True)
        written.append(json.dumps(caught.value.body))
        assert caught.value.body["message"] == "API key [redacted] not valid."
        with pytest.raises(openai.APIError) as mid:
            list(client.chat.completions.create(model=MODEL, messages=prompt, stream=True))
        written.append(json.dumps(mid.value.body))
        with sdk(url, api_key="wrong") as stranger, pytest.raises(openai.AuthenticationError):
            stranger.chat.completions.create(model=MODEL, messages=prompt)

        # a bug in the server: a bare 500, the traceback (scrubbed) only in the log
        def broken(*args: Any, **kwargs: Any) -> Any:
            raise RuntimeError(f"bug while holding {KEY}")

        monkeypatch.setattr("rxgem.gateway._gateway.chat_completions_on", broken)
        response = httpx.post(
            f"{url}/v1/chat/completions",
            json={"model": MODEL, "messages": prompt},
            headers={"authorization": f"Bearer {TOKEN}"},
        )
        assert response.status_code == 500
        assert response.json()["error"]["type"] == "api_error"
        assert "Traceback" not in response.text
        written.append(response.text + str(response.headers))
    out, err = capfd.readouterr()
    written += [caplog.text, out, err]
    everything = "\n".join(written)
    assert "RuntimeError: bug while holding [redacted]" in caplog.text
    assert KEY not in everything
    assert TOKEN not in everything
    assert "PROMPT-TEXT-NOT-FOR-LOGS" not in everything
    access = [r for r in caplog.records if r.name == "rxgem.server" and hasattr(r, "access")]
    assert [(r.access["status"], r.access["model"]) for r in access] == [
        (200, MODEL),
        (400, MODEL),
        (200, MODEL),
        (401, None),
        (500, MODEL),
    ]
    lines = [r.getMessage() for r in access]
    assert lines[0].startswith(f"POST /v1/chat/completions 200 model={MODEL} duration_ms=")
    assert " tokens=320 " in lines[0]
    assert "error=invalid_request_error:invalid_argument" in lines[1]
    assert "error=server_error:cancelled" in lines[2]


def test_a_client_gone_before_the_response_is_logged_as_499(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="rxgem.server")
    with gateway(FakeResponse(body=samples.read("text"), delay=10)) as (fake, _, client):
        with pytest.raises(openai.APITimeoutError):
            client.chat.completions.create(model=MODEL, messages=HELLO, timeout=0.3)
        assert fake.wait_for_disconnect(1.0)
    (line,) = [r.getMessage() for r in caplog.records if r.name == "rxgem.server"]
    assert line.startswith("POST /v1/chat/completions 499 ")
    assert line.endswith(" client_gone")


# --------------------------------------------------------------------------- settings and command


def test_settings_are_checked_and_keep_secrets_out_of_repr() -> None:
    settings = settings_for("http://127.0.0.1:1/v1beta")
    assert KEY not in repr(settings)
    assert TOKEN not in repr(settings)
    assert settings.auth_mode == "tokens"
    with pytest.raises(SettingsError, match="no Gemini API key"):
        ServerSettings(upstream="http://127.0.0.1:1/v1beta")
    with pytest.raises(SettingsError, match="cannot be combined"):
        ServerSettings(pass_through_auth=True, client_tokens=("t",))
    with pytest.raises(SettingsError, match="http"):
        ServerSettings(upstream="ftp://x", api_key="k")
    env = {"GEMINI_API_KEY": "k1", "RXGEM_CLIENT_TOKENS": "a, b,", "RXGEM_KEEP_ALIVE": "2.5"}
    from_env = settings_from_env(env)
    assert from_env.api_key == "k1"
    assert from_env.client_tokens == ("a", "b")
    assert from_env.keep_alive == 2.5
    assert settings_from_env(from_env.to_env()) == from_env
    through = settings_from_env({"GEMINI_API_KEY": "k1", "RXGEM_PASS_THROUGH_AUTH": "1"})
    assert through.auth_mode == "pass-through"
    assert through.api_key is None


def _serve_args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="rxgem")
    add_serve_parser(parser.add_subparsers(dest="command"))
    return parser.parse_args(["serve", *argv])


def test_serve_startup_errors_are_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "RXGEM_API_KEY", "RXGEM_CLIENT_TOKENS"):
        monkeypatch.delenv(name, raising=False)
    args = _serve_args("--port", "0")
    assert args.run is run_serve
    assert (args.host, args.port, args.workers) == ("127.0.0.1", 0, None)  # None: the cores
    assert run_serve(args) == 2
    assert capsys.readouterr().err.count("\n") == 1
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        assert run_serve(_serve_args("--port", port, "--api-key", KEY)) == 2
    err = capsys.readouterr().err
    assert err.startswith("rxgem serve: error: cannot listen on 127.0.0.1:")
    assert err.count("\n") == 1
    assert KEY not in err
    both = _serve_args("--pass-through-auth", "--client-token", "t")
    assert run_serve(both) == 2
    assert "cannot be combined" in capsys.readouterr().err


SERVE = (
    "import argparse, sys\n"
    "from rxgem.cli.serve import add_serve_parser\n"
    "parser = argparse.ArgumentParser(prog='rxgem')\n"
    "add_serve_parser(parser.add_subparsers(dest='command'))\n"
    "args = parser.parse_args(sys.argv[1:])\n"
    "sys.exit(args.run(args))\n"
)


@pytest.mark.parametrize("workers", [1, 2])
def test_serve_runs_uvicorn_with_one_or_several_workers(workers: int) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith("RXGEM_")}
    env["GEMINI_API_KEY"] = KEY  # the key from the environment; the token as an argument
    url = f"http://127.0.0.1:{port}"
    with FakeGemini(samples.read("text")) as fake:
        argv = ["serve", "--port", str(port), "--workers", str(workers)]
        argv += ["--upstream", fake.base_url, "--client-token", TOKEN]
        process = subprocess.Popen(
            [sys.executable, "-c", SERVE, *argv],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            deadline = time.monotonic() + 20
            while True:
                assert process.poll() is None, process.communicate()
                assert time.monotonic() < deadline, "rxgem serve did not start"
                with contextlib.suppress(httpx.TransportError):
                    if httpx.get(f"{url}/healthz").status_code == 200:
                        break
                time.sleep(0.05)
            with sdk(url) as client:
                for _ in range(2):
                    completion = client.chat.completions.create(model=MODEL, messages=HELLO)
                    assert completion.choices[0].message.content == expected_content("text.sse")
        finally:
            process.send_signal(signal.SIGINT)
            out, err = process.communicate(timeout=20)
        assert {r.headers["x-goog-api-key"] for r in fake.requests} == {KEY}
    assert process.returncode == 0, err
    assert err.count("POST /v1/chat/completions 200 model=gemini-2.5-flash") == 2
    assert KEY not in out + err
    assert TOKEN not in out + err


# --------------------------------------------------------------------------- the README


def _readme_block(marker: str, language: str) -> str:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    found = re.search(rf"<!-- {marker}[^>]*-->\n```{language}\n(.*?)```", readme, re.DOTALL)
    assert found, f"README has no {marker} block"
    return found.group(1)


def test_the_readme_curl_example_works_against_a_live_server() -> None:
    curl = _readme_block("curl-example", "sh")  # the SDK block: tests/meta/test_readme.py
    with (
        FakeGemini(samples.read("text.sse")) as fake,
        serving(settings_for(fake, client_tokens=("my-token",))) as url,
    ):
        command = curl.replace("http://127.0.0.1:8000", url)
        result = subprocess.run(
            ["bash", "-c", command], capture_output=True, text=True, timeout=30, check=False
        )
        assert result.returncode == 0, result.stderr
        frames = [line for line in result.stdout.splitlines() if line.startswith("data: ")]
        assert frames[-1] == "data: [DONE]"
        content = "".join(
            chunk["choices"][0]["delta"].get("content") or ""
            for chunk in (json.loads(f[6:]) for f in frames[:-1])
            if chunk["choices"]
        )
        assert content == EXPECTED["text.sse"]["choices"][0]["content"]
