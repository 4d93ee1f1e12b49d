"""Signature memory, end to end: a client that drops the thought signatures rxgem handed
out (most chat clients rebuild the assistant message without ``extra_content``; stateless
Responses clients send ``function_call`` items by ``call_id`` alone) still gets them back
to Gemini, through the response store, on both upstreams, streamed or not, across
workers sharing a SQLite file and servers sharing Redis. What the client kept wins;
another client, another model or an expired signature restores nothing; a store that
fails never fails the request; and with ``--no-store`` a lost signature is logged and
counted, not silent.

Every assertion is on what reached the (strict, Gemini 3) fake upstream: the signature on
the replayed call is the one the fake issued, read from the first answer.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest
from redis_server import redis_url  # noqa: F401  (the fixture)
from server_harness import TOKEN, serving, settings_for, strict_tool

from rxgem import assemble
from rxgem.core import ChatCompletionChunk
from rxgem.core.responses import decode_signatures
from rxgem.request._signatures import PLACEHOLDER
from rxgem.testing import FakeGemini, call, event, finish, text

G3 = "gemini-3-flash-preview"
OTHER_G3 = "gemini-3-pro-preview"
WEATHER = strict_tool("get_weather", city="string")
RESPONSES_WEATHER = {"type": "function", **WEATHER["function"]}
QUESTION = "What is the weather in Paris?"
UPSTREAMS = ("generate-content", "interactions")
OTHER_TOKEN = "tok-OTHER-0a9b8c"


def _headers(token: str = TOKEN) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


def _sse(body: str) -> list[Any]:
    return [
        json.loads(line[6:])
        for line in body.splitlines()
        if line.startswith("data: ") and line != "data: [DONE]"
    ]


def chat(url: str, body: dict[str, Any], *, stream: bool, token: str = TOKEN) -> dict[str, Any]:
    """The assistant message of a chat completion (streamed ones assembled)."""
    response = httpx.post(
        f"{url}/v1/chat/completions",
        json={**body, "stream": stream},
        headers=_headers(token),
        timeout=30,
    )
    assert response.status_code == 200, response.text
    if not stream:
        message: dict[str, Any] = response.json()["choices"][0]["message"]
        return message
    chunks = [msgspec.convert(c, ChatCompletionChunk) for c in _sse(response.text)]
    assembled: dict[str, Any] = assemble(chunks)["choices"][0]["message"]
    return assembled


def issued(message: dict[str, Any]) -> tuple[str, str]:
    """The id and signature of the first tool call of an answer."""
    first = message["tool_calls"][0]
    return first["id"], first["extra_content"]["google"]["thought_signature"]


def dropped(message: dict[str, Any]) -> list[dict[str, Any]]:
    """The turn as a client that drops ``extra_content`` sends it back."""
    calls = [
        {"id": c["id"], "type": "function", "function": c["function"]}
        for c in message["tool_calls"]
    ]
    return [
        {"role": "assistant", "content": message.get("content"), "tool_calls": calls},
        *({"role": "tool", "tool_call_id": c["id"], "content": '{"sky":"clear"}'} for c in calls),
    ]


def sent_signatures(fake: FakeGemini, index: int = -1) -> list[str | None]:
    """The signatures that reached Gemini with the replayed calls of one request: each
    ``functionCall`` part's (generateContent), each thought step's (Interactions)."""
    posts = [r.json for r in fake.requests if r.method == "POST"]
    body = posts[index]
    if "contents" in body:
        return [
            part.get("thoughtSignature")
            for content in body["contents"]
            for part in content["parts"]
            if "functionCall" in part
        ]
    return [step.get("signature") for step in body["input"] if step.get("type") == "thought"]


@contextlib.contextmanager
def server(tmp_path: Path, api: str = "generate-content", **overrides: Any) -> Iterator[Any]:
    values: dict[str, Any] = {"store": str(tmp_path / "responses.sqlite3"), "upstream_api": api}
    with (
        FakeGemini(strict=True) as fake,
        serving(settings_for(fake, **{**values, **overrides})) as url,
    ):
        yield fake, url


def chat_round_trip(
    url: str, *, stream: bool, model: str = G3, replay_model: str | None = None, **options: Any
) -> str:
    """A tool call asked for, then its result sent back by a client that dropped the
    signature; the signature the first answer issued."""
    user = {"role": "user", "content": QUESTION}
    message = chat(url, {"model": model, "messages": [user], "tools": [WEATHER]}, stream=stream)
    _, signature = issued(message)
    body = {
        "model": replay_model or model,
        "messages": [user, *dropped(message)],
        "tools": [WEATHER],
    }
    chat(url, body, stream=stream, **options)
    return signature


# -- chat ---------------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("api", UPSTREAMS)
def test_a_chat_client_that_drops_extra_content_gets_the_signature_back(
    tmp_path: Path, api: str, stream: bool
) -> None:
    with server(tmp_path, api) as (fake, url):
        signature = chat_round_trip(url, stream=stream)
        assert sent_signatures(fake) == [signature]


def test_the_text_signature_comes_back_by_the_message_text(tmp_path: Path) -> None:
    answer = event(text("Sunny", sig="dGV4dCBzaWduYXR1cmU=")) + event(text(" today."), finish())
    store = str(tmp_path / "responses.sqlite3")
    with FakeGemini(answer, strict=True) as fake, serving(settings_for(fake, store=store)) as url:
        user = {"role": "user", "content": QUESTION}
        message = chat(url, {"model": G3, "messages": [user]}, stream=True)
        signature = message["extra_content"]["google"]["thought_signature"]
        again = [user, {"role": "assistant", "content": message["content"]}]
        again.append({"role": "user", "content": "Thanks!"})
        chat(url, {"model": G3, "messages": again}, stream=False)
        replayed = fake.requests[-1].json["contents"][1]["parts"]
    assert signature == "dGV4dCBzaWduYXR1cmU="
    assert replayed == [{"text": "Sunny today.", "thoughtSignature": signature}]


def ask(url: str, *, token: str = TOKEN) -> dict[str, Any]:
    """The first turn: a tool call asked for."""
    user = {"role": "user", "content": QUESTION}
    return chat(
        url, {"model": G3, "messages": [user], "tools": [WEATHER]}, stream=False, token=token
    )


def replay(
    url: str, message: dict[str, Any], *, model: str = G3, token: str = TOKEN, kept: str = ""
) -> None:
    """The second turn, its signature dropped (or ``kept``: the client's own)."""
    turn = dropped(message)
    if kept:
        turn[0]["tool_calls"][0]["extra_content"] = {"google": {"thought_signature": kept}}
    messages = [{"role": "user", "content": QUESTION}, *turn]
    chat(url, {"model": model, "messages": messages, "tools": [WEATHER]}, stream=False, token=token)


def test_what_the_client_kept_wins(tmp_path: Path) -> None:
    # two answers calling the same tool alike, each signed its own way: the client keeps
    # the second one's signature on the first call, which memory knows by the first's
    first, second = "Zmlyc3Qgc2lnbmF0dXJl", "c2Vjb25kIHNpZ25hdHVyZQ=="
    answers = [
        event(call("get_weather", sig=first, city="Paris"), finish()),
        event(call("get_weather", sig=second, city="Paris"), finish()),
        event(text("Clear skies."), finish()),
    ]
    store = str(tmp_path / "responses.sqlite3")
    with FakeGemini(*answers, strict=True) as fake, serving(settings_for(fake, store=store)) as url:
        message = ask(url)
        assert issued(message)[1] == first
        assert issued(ask(url))[1] == second
        replay(url, message, kept=second)
        assert sent_signatures(fake) == [second]
        replay(url, message)
        assert sent_signatures(fake) == [first]


def test_another_clients_ids_restore_nothing(tmp_path: Path) -> None:
    with server(tmp_path, client_tokens=(TOKEN, OTHER_TOKEN)) as (fake, url):
        message = ask(url, token=OTHER_TOKEN)
        replay(url, message)
        assert sent_signatures(fake) == [PLACEHOLDER]
        replay(url, message, token=OTHER_TOKEN)
        assert sent_signatures(fake) == [issued(message)[1]]


def test_another_model_restores_nothing(tmp_path: Path) -> None:
    with server(tmp_path, metrics=True) as (fake, url):
        message = ask(url)
        replay(url, message, model=OTHER_G3)
        assert sent_signatures(fake) == [PLACEHOLDER]
        replay(url, message)
        assert sent_signatures(fake) == [issued(message)[1]]
        metrics = httpx.get(f"{url}/metrics").text
    assert 'rxgem_signatures_total{outcome="remembered"} 1.0' in metrics
    assert 'rxgem_signatures_total{outcome="restored"} 1.0' in metrics
    assert "rxgem_signature_placeholders_total 1.0" in metrics


def test_an_expired_signature_restores_nothing(tmp_path: Path) -> None:
    with server(tmp_path, signature_ttl=1.0) as (fake, url):
        message = ask(url)
        replay(url, message)
        assert sent_signatures(fake) == [issued(message)[1]]  # within its time
        time.sleep(1.5)
        replay(url, message)
        assert sent_signatures(fake) == [PLACEHOLDER]


def test_workers_sharing_a_sqlite_file_restore_each_others(tmp_path: Path) -> None:
    store = str(tmp_path / "shared.sqlite3")
    with (
        FakeGemini(strict=True) as fake,
        serving(settings_for(fake, store=store)) as one,
        serving(settings_for(fake, store=store)) as two,
    ):
        user = {"role": "user", "content": QUESTION}
        message = chat(one, {"model": G3, "messages": [user], "tools": [WEATHER]}, stream=True)
        _, signature = issued(message)
        chat(
            two,
            {"model": G3, "messages": [user, *dropped(message)], "tools": [WEATHER]},
            stream=True,
        )
        assert sent_signatures(fake) == [signature]


def test_servers_sharing_redis_restore_each_others(redis_url: str) -> None:  # noqa: F811
    with (
        FakeGemini(strict=True) as fake,
        serving(settings_for(fake, store=redis_url, upstream_api="interactions")) as one,
        serving(settings_for(fake, store=redis_url, upstream_api="interactions")) as two,
    ):
        user = {"role": "user", "content": QUESTION}
        message = chat(one, {"model": G3, "messages": [user], "tools": [WEATHER]}, stream=False)
        _, signature = issued(message)
        chat(
            two,
            {"model": G3, "messages": [user, *dropped(message)], "tools": [WEATHER]},
            stream=False,
        )
        assert sent_signatures(fake) == [signature]


def test_a_store_that_is_down_fails_no_request(caplog: pytest.LogCaptureFixture) -> None:
    dead = f"redis://127.0.0.1:{_closed_port()}/0"
    caplog.set_level(logging.WARNING, logger="rxgem.server")
    with (
        FakeGemini(strict=True) as fake,
        serving(settings_for(fake, store=dead, store_timeout=2.0)) as url,
    ):
        chat_round_trip(url, stream=True)  # both answered (chat() checks the 200s)
        assert sent_signatures(fake) == [PLACEHOLDER]
    failed = [r.getMessage() for r in caplog.records if "the store failed" in r.getMessage()]
    assert failed
    assert all(TOKEN not in line for line in failed)


def _closed_port() -> int:
    from redis_server import free_port

    return free_port()


# -- --no-store: not silent ----------------------------------------------------------------


def test_without_a_store_a_lost_signature_is_logged_and_counted(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="rxgem.server")
    with (
        FakeGemini(strict=True) as fake,
        serving(settings_for(fake, no_store=True, metrics=True)) as url,
    ):
        chat_round_trip(url, stream=False)
        assert sent_signatures(fake) == [PLACEHOLDER]
        metrics = httpx.get(f"{url}/metrics").text
    (line,) = [r.getMessage() for r in caplog.records if "placeholder" in r.getMessage()]
    assert "1 tool call(s)" in line
    assert "--signature-in-id" in line
    assert "rxgem_signature_placeholders_total 1.0" in metrics


# -- Responses ----------------------------------------------------------------------------


def responses(
    url: str, body: dict[str, Any], *, stream: bool, token: str = TOKEN
) -> dict[str, Any]:
    """A response (a streamed one's from its terminal event)."""
    reply = httpx.post(
        f"{url}/v1/responses", json={**body, "stream": stream}, headers=_headers(token), timeout=30
    )
    assert reply.status_code == 200, reply.text
    if not stream:
        found: dict[str, Any] = reply.json()
        return found
    (completed,) = [e for e in _sse(reply.text) if e.get("type") == "response.completed"]
    response: dict[str, Any] = completed["response"]
    return response


def issued_in(response: dict[str, Any]) -> dict[str, str]:
    """The call signatures a response issued (its reasoning items' ``encrypted_content``,
    asked for with ``include``), by ``call_id``."""
    found: dict[str, str] = {}
    for item in response["output"]:
        if item["type"] == "reasoning" and item.get("encrypted_content"):
            for carried in decode_signatures(item["encrypted_content"]) or ():
                if carried.kind == "call" and carried.call_id:
                    found[carried.call_id] = carried.signature
    return found


def stateless_replay(response: dict[str, Any]) -> list[dict[str, Any]]:
    """The conversation as a stateless client sends it back: ``function_call`` items by
    ``call_id`` (no item id, no reasoning item), then their outputs."""
    calls = [item for item in response["output"] if item["type"] == "function_call"]
    replay: list[dict[str, Any]] = [{"role": "user", "content": QUESTION}]
    replay += [{k: item[k] for k in ("type", "call_id", "name", "arguments")} for item in calls]
    replay += [
        {"type": "function_call_output", "call_id": item["call_id"], "output": "clear"}
        for item in calls
    ]
    return replay


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("api", UPSTREAMS)
def test_a_stateless_responses_replay_by_call_id_gets_the_signature_back(
    tmp_path: Path, api: str, stream: bool
) -> None:
    with server(tmp_path, api) as (fake, url):
        first = {
            "model": G3,
            "input": QUESTION,
            "tools": [RESPONSES_WEATHER],
            "store": False,
            "include": ["reasoning.encrypted_content"],
        }
        response = responses(url, first, stream=stream)
        signatures = issued_in(response)
        assert len(signatures) == 1
        second = {"model": G3, "input": stateless_replay(response), "tools": [RESPONSES_WEATHER]}
        responses(url, {**second, "store": False}, stream=stream)
        assert sent_signatures(fake) == list(signatures.values())


def test_a_background_runs_signatures_come_back_by_call_id(tmp_path: Path) -> None:
    with server(tmp_path, "interactions", interactions_store=True) as (fake, url):
        first = {
            "model": G3,
            "input": QUESTION,
            "tools": [RESPONSES_WEATHER],
            "background": True,
        }
        response = responses(url, first, stream=True)
        (run,) = [fake.interaction(i) for i in fake.interaction_ids]
        assert run is not None
        signatures = {
            str(n): step["signature"]
            for n, step in enumerate(run["steps"])
            if step.get("type") == "thought" and step.get("signature")
        }
        assert len(signatures) == 1
        second = {"model": G3, "input": stateless_replay(response), "tools": [RESPONSES_WEATHER]}
        responses(url, {**second, "store": False}, stream=False)
        assert sent_signatures(fake) == list(signatures.values())


def test_the_ttl_and_bound_are_flags_and_variables_the_workers_read() -> None:
    from rxgem.cli.serve import _environment, add_serve_parser
    from rxgem.server import settings_from_env

    parser = add_serve_parser(argparse.ArgumentParser().add_subparsers())
    args = parser.parse_args(["--signature-ttl", "90", "--max-signatures", "50"])
    env = {**_environment(args), "RXGEM_API_KEY": "k"}
    assert env["RXGEM_SIGNATURE_TTL"] == "90.0"
    settings = settings_from_env(env)
    assert (settings.signature_ttl, settings.max_signatures) == (90.0, 50)
    assert settings_from_env({"RXGEM_API_KEY": "k"}).signature_ttl == 86_400.0


def test_without_a_store_a_responses_replay_that_lost_it_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="rxgem.server")
    with (
        FakeGemini(strict=True) as fake,
        serving(settings_for(fake, no_store=True)) as url,
    ):
        first = {"model": G3, "input": QUESTION, "tools": [RESPONSES_WEATHER], "store": False}
        response = responses(url, first, stream=True)
        second = {"model": G3, "input": stateless_replay(response), "tools": [RESPONSES_WEATHER]}
        responses(url, {**second, "store": False}, stream=True)
        assert sent_signatures(fake) == [PLACEHOLDER]
    (line,) = [r.getMessage() for r in caplog.records if "placeholder" in r.getMessage()]
    assert line.startswith("request req_")
    assert "1 tool call(s)" in line


def test_a_flood_of_unsigned_calls_is_answered_in_time(tmp_path: Path) -> None:
    # An attacker's replay: thousands of unsigned tool calls with long ids. The recall reads
    # at most MAX_RECALL keys and hashes each id once: the request is answered, not stuck.
    calls = [
        {
            "id": f"c{i}" + "x" * 200,
            "type": "function",
            "function": {"name": "f", "arguments": "{}"},
        }
        for i in range(20_000)
    ]
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "y" * 1000, "tool_calls": calls},
        *({"role": "tool", "tool_call_id": c["id"], "content": "ok"} for c in calls),
    ]
    tool = {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}
    body = {"model": "gemini-3-flash-preview", "messages": messages, "tools": [tool]}
    with (
        FakeGemini() as fake,
        serving(settings_for(fake, store=str(tmp_path / "s.sqlite3"))) as url,
    ):
        started = time.perf_counter()
        chat(url, body, stream=False)
        assert time.perf_counter() - started < 20  # 1.5 s measured on two cores
