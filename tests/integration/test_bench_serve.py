"""The serve benchmark's two upstreams say the same thing (``--serve-upstream-api``), and
its plain upstream (``--serve-upstream plain``) says what its fake says.

``python -m benchmarks --only serve --serve-upstream-api generate-content,interactions``
compares ``rxgem serve`` on each upstream API against one fake answering both: the
comparison is like for like only if the Interactions answer is the ``generateContent``
answer's text, event for event, and only if each server is started on the API it is
named for. These tests check both; the figures themselves are in benchmarks/README.md.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx

import rxgem
from rxgem.testing import FakeGemini, FakeResponse

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # ``benchmarks`` lives at the root, beside ``rxgem``

from benchmarks import serve  # noqa: E402
from benchmarks._plain import PlainGemini  # noqa: E402
from benchmarks._server import _stats  # noqa: E402
from benchmarks.captures import interactions_answer, text_answer  # noqa: E402


def _chat(pieces: list[bytes], upstream: str) -> list[dict[str, Any]]:
    chunks: list[Any] = []
    rxgem.from_body(pieces).pipe(rxgem.gemini_to_openai(upstream=upstream)).subscribe(
        on_next=chunks.append
    )
    return [chunk.to_dict() for chunk in chunks]


def _content(chunks: list[dict[str, Any]]) -> list[str]:
    return [
        choice["delta"]["content"]
        for chunk in chunks
        for choice in chunk.get("choices", ())
        if choice["delta"].get("content")
    ]


def _finish(chunks: list[dict[str, Any]]) -> list[str]:
    return [
        choice["finish_reason"]
        for chunk in chunks
        for choice in chunk.get("choices", ())
        if choice.get("finish_reason")
    ]


def _usage(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    usage = [chunk["usage"] for chunk in chunks if chunk.get("usage")][-1]
    return {k: usage[k] for k in ("prompt_tokens", "completion_tokens", "total_tokens")}


def test_the_interactions_answer_is_the_text_answer_event_for_event() -> None:
    capture = text_answer(50)
    twin = interactions_answer(capture)
    assert len(twin.events) == len(capture.events)  # the same pieces, paced the same
    assert twin.events[-1].endswith(b"data: [DONE]\n\n")

    generate = _chat(list(capture.events), "generate-content")
    interactions = _chat(list(twin.events), "interactions")

    assert _content(interactions) == _content(generate)  # one chunk per event, same text
    assert len(_content(generate)) == 50
    assert _finish(interactions) == _finish(generate) == ["stop"]
    assert _usage(interactions) == _usage(generate)


def test_the_benchmark_fake_answers_both_apis_with_the_same_text() -> None:
    capture = text_answer(5)
    twin = interactions_answer(capture)
    with FakeGemini(
        FakeResponse(body=capture.body), interactions=[FakeResponse(body=twin.body)]
    ) as fake:
        prompt = "Write a long answer. #1#"
        streamed = httpx.post(
            f"{fake.base_url}/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
            headers={"x-goog-api-key": "k"},
            json={"contents": [{"role": "user", "parts": [{"text": prompt}]}]},
        )
        created = httpx.post(
            f"{fake.base_url}/interactions",
            headers={"x-goog-api-key": "k"},
            json={"model": "gemini-2.5-flash", "input": prompt, "stream": True},
        )
        plain = httpx.post(
            f"{fake.base_url}/interactions",
            json={"model": "gemini-2.5-flash", "input": "Hi", "stream": False},
        )
        stats = _stats(fake, "k")
    assert streamed.content == capture.body
    assert created.content == twin.body
    assert plain.status_code == 200
    assert stats["paths"] == {
        serve.STREAM_PATH: 1,
        serve.UPSTREAM_PATHS["interactions"]: 2,
    }
    assert (stats["keyed"], stats["prompted"], stats["sse"]) == (2, 2, 2)


def test_each_server_is_started_on_the_api_it_is_named_for() -> None:
    def argv(api: str, args: list[str]) -> list[str]:
        spec = serve.RxgemSpec("rxgem", "/healthz", "t", 1.0, args=args, upstream_api=api)
        return spec.command(1, 2, ROOT)[0]

    default = argv("generate-content", [])
    assert "--upstream-api" not in default  # a checkout from before the option still starts
    chosen = argv("interactions", ["--workers", "2"])
    at = chosen.index("--upstream-api")
    assert chosen[at + 1] == "interactions"
    assert chosen[-2:] == ["--workers", "2"]  # the variant's own arguments still come last


def test_the_upstream_check_expects_the_interactions_route() -> None:
    path = serve.UPSTREAM_PATHS["interactions"]
    good = serve.UpstreamCheck("rxgem-interactions", 3, 3, {path: 3}, 3, 3, 3, path)
    assert good.ok
    assert f'{path} with "stream": true' in good.describe()
    wrong = serve.UpstreamCheck("rxgem-interactions", 3, 3, {serve.STREAM_PATH: 3}, 3, 3, 3, path)
    assert not wrong.ok
    assert "MISMATCH" in wrong.describe()


def test_the_command_line_takes_both_upstream_apis() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--only", "serve", "--serve-upstream-api", "x"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2
    assert "--serve-upstream-api" in done.stderr
    assert "generate-content, interactions" in done.stderr


def test_the_plain_upstream_answers_and_counts_as_the_fake_does() -> None:
    capture = text_answer(5)
    twin = interactions_answer(capture)
    prompt = "Write a long answer. #1#"
    for whole in (False, True):
        plain = PlainGemini(list(capture.events), list(twin.events), whole=whole, key="k")
        try:
            url = f"http://127.0.0.1:{plain.port}/v1beta"
            with httpx.Client() as client:  # one kept-alive connection, as the servers use
                streamed = client.post(
                    f"{url}/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
                    headers={"x-goog-api-key": "k"},
                    json={"contents": [{"role": "user", "parts": [{"text": prompt}]}]},
                )
                created = client.post(
                    f"{url}/interactions",
                    params={"key": "k"},
                    json={"model": "gemini-2.5-flash", "input": prompt, "stream": True},
                )
                missing = client.get(f"{url}/models")
            stats = plain.stats()
        finally:
            plain.close()
        assert streamed.content == capture.body
        assert created.content == twin.body
        assert ("content-length" in streamed.headers) is whole
        assert missing.status_code == 404
        assert stats["paths"] == {
            serve.STREAM_PATH: 1,
            serve.UPSTREAM_PATHS["interactions"]: 1,
            "GET /v1beta/models": 1,
        }
        assert (stats["keyed"], stats["prompted"], stats["sse"], stats["completed"]) == (2, 2, 2, 2)


def test_the_command_line_refuses_answers_without_events() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--only", "serve", "--serve-events", "0"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2
    assert "--serve-events: at least 1" in done.stderr
