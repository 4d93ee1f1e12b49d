"""Several ``rxgem serve`` instances behind one address: chat completions are stateless.

A round-robin TCP balancer (one new backend per connection) stands in front of two
servers, each its own app and upstream pool; an agent loop whose every request opens
a new connection runs through it, each turn answered by the other instance, and the
thought signatures of one instance's answer are accepted by the other (they travel in
the conversation, not in the server). What does hold state per instance: the
concurrency limit, the connection cap and the metrics (one series per process, or per
host: sum them in Prometheus), never a conversation.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import openai
from server_harness import MODEL, TOKEN, serving, settings_for, strict_tool

from rxgem.testing import FakeGemini, call, event, finish, gemini_request_problems, text, usage

SIG_PARALLEL = base64.b64encode(b"signature of the parallel step").decode()
SIG_SEQUENTIAL = base64.b64encode(b"signature of the sequential step").decode()
WEATHER = strict_tool("get_weather", city="string")
GAP = strict_tool("temperature_gap", a="number", b="number")
CELSIUS = {"Paris": 18, "Tokyo": 24}


class RoundRobin:
    """A TCP balancer on 127.0.0.1: each connection goes to the next backend port."""

    def __init__(self, ports: list[int]) -> None:
        self.ports = ports
        self.connections = [0] * len(ports)
        self._next = 0
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._started = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        server = self._loop.run_until_complete(asyncio.start_server(self._serve, "127.0.0.1", 0))
        self.port = server.sockets[0].getsockname()[1]
        self._started.set()
        self._loop.run_forever()
        server.close()
        self._loop.run_until_complete(server.wait_closed())

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        index = self._next
        self._next = (index + 1) % len(self.ports)
        self.connections[index] += 1
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.ports[index])

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            with contextlib.suppress(ConnectionError):
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            with contextlib.suppress(ConnectionError, RuntimeError):
                dst.close()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

    def __enter__(self) -> RoundRobin:
        self._thread.start()
        self._started.wait(5)
        return self

    def __exit__(self, *exc: object) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)


@contextlib.contextmanager
def two_instances(fake: FakeGemini) -> Iterator[tuple[str, RoundRobin]]:
    with serving(settings_for(fake)) as one, serving(settings_for(fake)) as two:
        ports = [int(url.rsplit(":", 1)[1]) for url in (one, two)]
        with RoundRobin(ports) as balancer:
            yield f"http://127.0.0.1:{balancer.port}", balancer


def test_an_agent_loop_moves_between_instances_with_its_signatures() -> None:
    g3 = "gemini-3-pro-preview"
    answers = [
        event(
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
    # no kept-alive connections: every request is a new connection, the next instance
    fresh = httpx.Client(limits=httpx.Limits(max_keepalive_connections=0))
    with (
        FakeGemini(*answers, strict=True) as fake,
        two_instances(fake) as (url, balancer),
        openai.OpenAI(
            base_url=f"{url}/v1", api_key=TOKEN, max_retries=0, http_client=fresh
        ) as client,
    ):
        for _ in range(4):
            with client.chat.completions.stream(
                model=g3, messages=history, tools=[WEATHER, GAP]
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
                history.append(
                    {"role": "tool", "tool_call_id": tool_call.id, "content": json.dumps(result)}
                )
        requests = [r.json for r in fake.requests if r.method == "POST"]
    assert history[-1]["content"] == "Tokyo is 6 °C warmer than Paris."
    assert len(requests) == 3  # strict FakeGemini refused none
    assert all(gemini_request_problems(r, model=g3) == [] for r in requests)
    signed = [p.get("thoughtSignature") for c in requests[2]["contents"] for p in c["parts"]]
    assert SIG_PARALLEL in signed
    assert SIG_SEQUENTIAL in signed
    assert min(balancer.connections) >= 1  # both instances answered turns
    assert sum(balancer.connections) >= 3


def test_a_model_list_and_a_completion_from_either_instance_agree() -> None:
    with FakeGemini() as fake, two_instances(fake) as (url, balancer):
        fresh = httpx.Client(limits=httpx.Limits(max_keepalive_connections=0))
        with openai.OpenAI(
            base_url=f"{url}/v1", api_key=TOKEN, max_retries=0, http_client=fresh
        ) as client:
            answers = {
                client.chat.completions.create(
                    model=MODEL, messages=[{"role": "user", "content": "Hi"}]
                )
                .choices[0]
                .message.content
                for _ in range(4)
            }
    assert len(answers) == 1
    assert balancer.connections == [2, 2]
