"""One error vocabulary on every route: no upstream fault shows the upstream's address.

Each fault FakeGemini (or a closed port) can give, on each route it can reach (chat
streamed and not, Responses streamed and not, the stored record of a failed response,
the model routes): the answer (status, headers, body) and the stored record hold no
upstream host or port, no upstream path, no Vertex project or location, whatever the
upstream's text echoed. The server's log keeps the detail (the URL), without secrets.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from server_harness import KEY, MODEL, TOKEN, free_port, serving, settings_for

from rxgem import samples
from rxgem.replies._errors import hide_upstream
from rxgem.testing import FakeGemini, FakeResponse

PROJECT = "acme-prod-7781"
LOCATION = "europe-west9"
VERTEX_PATH = f"/v1/projects/{PROJECT}/locations/{LOCATION}/publishers/google"
TEXT = samples.read("text")
FIRST_EVENT = TEXT.split(b"\r\n\r\n")[0] + b"\r\n\r\n"
AUTH = {"authorization": f"Bearer {TOKEN}"}

Echo = Callable[[str], str]
"""The upstream's base URL → the text an upstream error echoes."""


def echo_everything(base_url: str) -> str:
    netloc = base_url.split("/")[2]
    return (
        f"backend {base_url}/models/{MODEL}:streamGenerateContent?alt=sse failed on {netloc}"
        f" (projects/{PROJECT}/locations/{LOCATION}, path {VERTEX_PATH}/models/{MODEL})"
    )


@dataclass
class Fault:
    """An upstream fault: what FakeGemini sends (``None``: nothing listens)."""

    response: Callable[[dict[str, Any]], FakeResponse] | None
    routes: tuple[str, ...]
    settings: dict[str, Any] = field(default_factory=dict)
    vertex: bool = False  # the upstream is a Vertex-shaped path (FakeGemini 404s it, echoing it)
    echo: Echo | None = None  # filled into the mutable error dict once the port is known


STARTED = ("chat-stream", "chat", "responses-stream", "responses", "stored")
BEFORE = ("chat-stream", "chat", "responses-stream", "responses", "models", "model")

FAULTS: dict[str, Fault] = {
    "connect-refused": Fault(None, BEFORE),
    "read-cut-mid-stream": Fault(
        lambda _: FakeResponse(
            body=TEXT, split_at=[len(FIRST_EVENT)], drop_after=len(FIRST_EVENT) + 40
        ),
        STARTED,
    ),
    "timeout-mid-stream": Fault(
        lambda _: FakeResponse(body=TEXT, split_at=[len(FIRST_EVENT)], pause=1.5),
        STARTED,
        settings={"read_timeout": 0.3},
    ),
    "malformed-stream": Fault(
        lambda _: FakeResponse(body=FIRST_EVENT + b'data: {"candidates": [oops\r\n\r\n'),
        STARTED,
    ),
    "truncated-stream": Fault(lambda _: FakeResponse(body=FIRST_EVENT), STARTED),
    "error-mid-stream-echoing-the-url": Fault(
        lambda error: FakeResponse(body=FIRST_EVENT, raw_error=error),
        STARTED,
        echo=echo_everything,
    ),
    "http-status-echoing-the-url": Fault(
        lambda error: FakeResponse(status=503, error=error), BEFORE[:4], echo=echo_everything
    ),
    "http-status-non-json-echoing-the-url": Fault(
        None,  # set below: its body is bytes, made once the port is known
        BEFORE[:4],
    ),
    "http-404-echoing-a-vertex-path": Fault(None, BEFORE, vertex=True),
}


@dataclass
class Setup:
    name: str
    base_url: str
    settings: dict[str, Any]


@pytest.fixture
def upstream(request: pytest.FixtureRequest) -> Iterator[Setup]:
    """The upstream of the fault named by the test's parameter."""
    name: str = request.param
    fault = FAULTS[name]
    if name == "connect-refused":
        yield Setup(name, f"http://127.0.0.1:{free_port()}/v1beta", fault.settings)
        return
    error: dict[str, Any] = {"code": 500, "status": "INTERNAL", "message": "(set below)"}
    if fault.response is not None:
        response = fault.response(error)
    elif fault.vertex:
        response = FakeResponse(body=TEXT)
    else:  # a proxy's HTML page, made once the port is known
        response = FakeResponse(status=502, body=b"<html></html>", content_type="text/html")
    with FakeGemini(response) as fake:
        if fault.echo is not None:
            error["message"] = fault.echo(fake.base_url)
        if name == "http-status-non-json-echoing-the-url":
            page = f"<html><p>502: {echo_everything(fake.base_url)}</p></html>".encode()
            object.__setattr__(response, "body", page)  # a frozen dataclass: the port came late
        base = fake.base_url
        if fault.vertex:
            base = base.removesuffix("/v1beta") + VERTEX_PATH
        yield Setup(name, base, fault.settings)


def _forbidden(base_url: str) -> list[str]:
    netloc = base_url.split("/")[2]
    return [
        netloc,
        "127.0.0.1",
        ":" + netloc.rpartition(":")[2],  # the port
        "/v1beta",
        "streamGenerateContent",
        PROJECT,
        LOCATION,
        "/publishers/",
    ]


def _seen(answer: httpx.Response) -> str:
    headers = "\n".join(f"{k}: {v}" for k, v in answer.headers.items())
    return f"{answer.status_code}\n{headers}\n\n{answer.text}"


def _response_id(body: str) -> str | None:
    for line in body.splitlines():
        if line.startswith("data: "):
            response = json.loads(line[6:]).get("response")
            if isinstance(response, dict) and "id" in response:
                return str(response["id"])
    return None


def _ask(url: str, route: str) -> list[str]:
    """What a client sees of ``route`` (and, for ``stored``, the record it reads back)."""
    with httpx.Client(base_url=url, headers=AUTH, timeout=30) as client:
        if route == "models":
            return [_seen(client.get("/v1/models"))]
        if route == "model":
            return [_seen(client.get(f"/v1/models/{MODEL}"))]
        stream = route in ("chat-stream", "responses-stream", "stored")
        if route.startswith("chat"):
            messages = [{"role": "user", "content": "Hi"}]
            body: dict[str, Any] = {"model": MODEL, "messages": messages, "stream": stream}
            return [_seen(client.post("/v1/chat/completions", json=body))]
        body = {"model": MODEL, "input": "Hi", "stream": stream}
        answer = client.post("/v1/responses", json=body)
        seen = [_seen(answer)]
        if route == "stored":
            response_id = _response_id(answer.text)
            assert response_id is not None, answer.text
            kept = client.get(f"/v1/responses/{response_id}")
            assert kept.status_code == 200, kept.text  # a record was made: it is checked too
            assert kept.json()["status"] == "failed"
            seen.append(_seen(kept))
        return seen


CASES = [
    pytest.param(name, route, id=f"{name}-{route}")
    for name, fault in FAULTS.items()
    for route in fault.routes
]


@pytest.mark.parametrize(("upstream", "route"), CASES, indirect=["upstream"])
def test_no_fault_shows_the_upstreams_address(
    upstream: Setup, route: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    name = upstream.name
    settings = settings_for(
        upstream.base_url,
        store=str(tmp_path / "store.sqlite3"),
        log_level="debug",
        **upstream.settings,
    )
    with caplog.at_level(logging.DEBUG, logger="rxgem.server"), serving(settings) as url:
        seen = _ask(url, route)
    everything = "\n".join(seen)
    assert "error" in everything, everything  # the fault is reported
    for text in _forbidden(upstream.base_url):
        assert text not in everything, (text, everything)
    assert KEY not in caplog.text
    assert TOKEN not in caplog.text
    details = [r.getMessage() for r in caplog.records if "; detail: " in r.getMessage()]
    if route not in ("models", "model"):  # the model routes answer without a stream
        assert details, caplog.text  # the operator's log keeps what the client is not told
        assert all("\n" not in line for line in details)
    if name in ("connect-refused", "read-cut-mid-stream", "timeout-mid-stream"):
        assert any(upstream.base_url in line for line in details), details


# --------------------------------------------------------------------------- hide_upstream

VERTEX = f"https://{LOCATION}-aiplatform.googleapis.com{VERTEX_PATH}"


@pytest.mark.parametrize(
    ("upstream", "text", "expected"),
    [
        pytest.param(
            "http://127.0.0.1:19001/v1beta",
            "ReadError while streaming from http://127.0.0.1:19001/v1beta/models/m:x?alt=sse: x",
            "ReadError while streaming from [upstream]: x",
            id="the-url",
        ),
        pytest.param(
            VERTEX,
            f"Publisher model `projects/{PROJECT}/locations/{LOCATION}/publishers/google/"
            "models/m` not found.",
            "Publisher model `projects/[upstream]/locations/[upstream]/publishers/google/"
            "models/m` not found.",
            id="a-vertex-resource-name",
        ),
        pytest.param(
            "https://generativelanguage.googleapis.com/v1beta",
            "<p>The requested URL <code>/v1beta/models/m:streamGenerateContent</code> was not"
            " found.</p>",
            "<p>The requested URL <code>[upstream]</code> was not found.</p>",
            id="a-path-in-an-html-page",
        ),
        pytest.param(
            "https://generativelanguage.googleapis.com/v1beta",
            "Quota exceeded, see https://ai.google.dev/gemini-api/docs/rate-limits. Or and/or"
            " 1/2 models/m.",
            "Quota exceeded, see https://ai.google.dev/gemini-api/docs/rate-limits. Or and/or"
            " 1/2 models/m.",
            id="documentation-links-and-model-names-stay",
        ),
    ],
)
def test_hide_upstream(upstream: str, text: str, expected: str) -> None:
    assert hide_upstream(text, upstream) == expected


def test_hide_upstream_is_linear() -> None:
    shapes = ["a" * 1_000_000, "http://" + "." * 1_000_000, " /" + "." * 1_000_000, "/a" * 500_000]
    for text in shapes:
        started = time.perf_counter()
        hide_upstream(text, VERTEX)
        assert time.perf_counter() - started < 1.0
