"""What signature memory costs per request: a chat tool-call round trip with it on and off.

Three servers run side by side in this process (uvicorn threads, as ``rxgem serve`` runs
one worker), in front of one FakeGemini (Gemini 3, strict, the ``tool-call`` scenario):
``sqlite`` (the default store, a temporary file), ``redis`` (``--redis URL``, when given)
and ``no-store``. Each round, on each server in turn, a client asks a question with a tool
(the answer is a tool call with its signature: the server remembers it), then sends the
result back with the assistant message rebuilt without ``extra_content`` (the server
recalls the signature; without a store Google's placeholder goes). The table gives the
median and 90th percentile of each request's wall time, over the rounds, and the
difference from ``no-store``'s medians; then the store's own ``remember_signatures`` and
``recall_signatures`` on SQLite, timed alone.

Standalone: ``python -m benchmarks.signatures [--rounds N] [--redis URL]``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import uvicorn

from rxgem.server import ServerSettings, create_app
from rxgem.server.run._runner import uvicorn_config
from rxgem.store import SQLiteStore
from rxgem.testing import FakeGemini

MODEL = "gemini-3-flash-preview"
TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}
USER = {"role": "user", "content": "What is the weather in Paris?"}


@contextlib.contextmanager
def _serving(settings: ServerSettings) -> Iterator[str]:
    app = create_app(settings)
    config = uvicorn_config(app, settings, host="127.0.0.1", port=0, log_config=None)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.005)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


def _round_trip(client: httpx.Client, url: str) -> tuple[float, float]:
    """Seconds of the tool call asked for, and of the result sent back without the
    signature."""
    began = time.perf_counter()
    first = client.post(
        f"{url}/v1/chat/completions", json={"model": MODEL, "messages": [USER], "tools": [TOOL]}
    )
    asked = time.perf_counter()
    message = first.json()["choices"][0]["message"]
    calls = [
        {"id": c["id"], "type": "function", "function": c["function"]}
        for c in message["tool_calls"]
    ]
    messages: list[Any] = [USER, {"role": "assistant", "tool_calls": calls}]
    messages += [{"role": "tool", "tool_call_id": c["id"], "content": "clear"} for c in calls]
    second = client.post(
        f"{url}/v1/chat/completions", json={"model": MODEL, "messages": messages, "tools": [TOOL]}
    )
    assert first.status_code == second.status_code == 200, second.text
    return asked - began, time.perf_counter() - asked


def _ms(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    return statistics.median(ordered) * 1000, ordered[int(len(ordered) * 0.9)] * 1000


async def _store_ops(path: Path, rounds: int) -> tuple[float, float]:
    """Median µs of one ``remember_signatures`` (one signature) and one
    ``recall_signatures`` (one key) on a SQLite store."""
    store = SQLiteStore(path)
    owner = await store.owner("benchmark-token")
    signature = "s" * 1024
    remembers, recalls = [], []
    for i in range(rounds):
        began = time.perf_counter()
        await store.remember_signatures(owner, {f"call:{MODEL}:call_{i}": signature})
        middle = time.perf_counter()
        await store.recall_signatures(owner, [f"call:{MODEL}:call_{i}"])
        recalls.append(time.perf_counter() - middle)
        remembers.append(middle - began)
    await store.aclose()
    return statistics.median(remembers) * 1e6, statistics.median(recalls) * 1e6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.signatures")
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--redis", metavar="URL", help="also measure a Redis store")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder, FakeGemini(strict=True) as fake:
        common: dict[str, Any] = {"upstream": fake.base_url, "api_key": "k", "log_level": "error"}
        variants: dict[str, dict[str, Any]] = {
            "no-store": {"no_store": True},
            "sqlite": {"store": str(Path(folder) / "s.sqlite3")},
        }
        if args.redis:
            variants["redis"] = {"store": args.redis}
        with contextlib.ExitStack() as stack:
            urls = {
                name: stack.enter_context(_serving(ServerSettings(**common, **extra)))
                for name, extra in variants.items()
            }
            client = stack.enter_context(httpx.Client(timeout=30))
            for url in urls.values():  # warm up: connections, the store's first open
                for _ in range(5):
                    _round_trip(client, url)
            times: dict[str, tuple[list[float], list[float]]] = {n: ([], []) for n in urls}
            for _ in range(args.rounds):
                for name, url in urls.items():
                    ask, replay = _round_trip(client, url)
                    times[name][0].append(ask)
                    times[name][1].append(replay)
        base_ask = _ms(times["no-store"][0])[0]
        base_replay = _ms(times["no-store"][1])[0]
        print(f"chat tool-call round trip, {args.rounds} rounds, median / p90 ms per request")
        print("| server | ask (remembers) | replay (recalls) | Δ ask | Δ replay |")
        print("|---|---|---|---|---|")
        for name, (asks, replays) in times.items():
            ask_median, ask_p90 = _ms(asks)
            replay_median, replay_p90 = _ms(replays)
            print(
                f"| {name} | {ask_median:.2f} / {ask_p90:.2f} | {replay_median:.2f} /"
                f" {replay_p90:.2f} | {ask_median - base_ask:+.2f} |"
                f" {replay_median - base_replay:+.2f} |"
            )
        remember, recall = asyncio.run(_store_ops(Path(folder) / "ops.sqlite3", args.rounds))
        print(
            f"SQLite alone: remember_signatures {remember:.0f} µs,"
            f" recall_signatures {recall:.0f} µs"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
