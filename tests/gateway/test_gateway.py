"""The gateway alone (no server, no transport in front of it): a chat completion answered
as a typed result against FakeGemini, the usage chunk asked for in one place, and a
request it cannot run refused as a typed error before anything is counted or asked."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from rxgem import iterate
from rxgem.core import ChatCompletionChunk
from rxgem.gateway import Gateway, GatewayOptions
from rxgem.gateway._results import ChatRun
from rxgem.gateway._usage import usage_asked
from rxgem.replies import Refusal
from rxgem.testing import FakeGemini

MODEL = "gemini-2.5-flash"


@dataclass
class Request:
    body_bytes: int = 100
    request_id: str = "req_test"
    telemetry: None = None


@dataclass
class Keys:
    api_key: str | None = "gemini-key"
    access_token: str | None = None


def test_a_stream_asks_for_the_usage_chunk_when_the_edge_counts_tokens() -> None:
    body = {"model": MODEL, "stream": True, "stream_options": {"other": 1}}
    asked, send = usage_asked(body, True)
    assert asked["stream_options"] == {"other": 1, "include_usage": True}
    assert send is False
    assert body["stream_options"] == {"other": 1}  # the client's body is not changed


@pytest.mark.parametrize(
    ("body", "send"),
    [
        ({"stream": True, "stream_options": {"include_usage": True}}, True),
        ({"stream": False}, False),
        ({"stream": True, "stream_options": "bad"}, False),
    ],
)
def test_what_goes_to_the_client_is_what_it_asked(body: dict[str, Any], send: bool) -> None:
    asked, sent = usage_asked(body, True)
    assert sent is send
    if body.get("stream_options") == "bad":
        assert asked is body  # left for the translation to refuse


def test_an_edge_that_counts_nothing_sends_the_clients_body_as_it_is() -> None:
    body = {"stream": True}
    assert usage_asked(body, False) == (body, True)


def _answer(gateway: Gateway, body: dict[str, Any], **options: Any) -> ChatRun:
    async def main() -> ChatRun:
        try:
            return await gateway.chat(body, Keys(), "token", Request(), **options)
        finally:
            await gateway.aclose()

    return asyncio.run(main())


def test_a_chat_completion_is_a_typed_run_with_the_usage_chunk_for_the_count() -> None:
    body = {"model": MODEL, "stream": True, "messages": [{"role": "user", "content": "Hi"}]}
    with FakeGemini() as fake, httpx.Client() as client:
        gateway = Gateway(GatewayOptions(upstream=fake.base_url))
        run = _answer(gateway, body, count_usage=True, client=client)
        chunks = list(iterate(run.source))
    assert (run.stream, run.send_usage, run.watch) == (True, False, None)  # no store: no memory
    assert all(isinstance(chunk, ChatCompletionChunk) for chunk in chunks)
    assert chunks[-1].choices == []
    assert chunks[-1].usage is not None


def test_an_agent_is_refused_for_chat_before_it_is_counted() -> None:
    counted: list[bool] = []
    gateway = Gateway(GatewayOptions(upstream="http://127.0.0.1:9/v1beta"))
    with pytest.raises(Refusal) as refused:
        _answer(
            gateway,
            {"model": "agent:deep-research", "messages": []},
            counted=lambda: counted.append(True),
        )
    assert refused.value.reply.code == "agent_needs_background"
    assert counted == []
