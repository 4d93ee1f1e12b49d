"""``rxgem serve`` called from a web page: CORS on the wire, then in a real browser.

A browser calls the API from another origin (a chat UI on its own host) only if the
server answers CORS: a preflight ``OPTIONS`` for the ``authorization`` and JSON
``content-type`` headers, then ``Access-Control-Allow-Origin`` on the answer itself,
with ``x-request-id`` exposed to the page's script. ``cors_origins`` turns that on.

The first tests check the headers with ``httpx``. The others load a page from a
second origin (a small ``http.server`` on another port) in Debian's Chromium, driven
by Playwright, whose script streams a completion with ``fetch`` and
``response.body.getReader()`` and writes what it read into the page. They skip,
saying why, where ``/usr/bin/chromium`` or the ``playwright`` package is missing
(``.ci/run`` installs Chromium with apt).
"""

from __future__ import annotations

import contextlib
import json
import shutil
import sqlite3
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest
from server_harness import HELLO, MODEL, TOKEN, expected_content, serving, settings_for

from rxgem import samples
from rxgem.testing import FakeGemini

ENDPOINT = "/v1/chat/completions"
PREFLIGHT = {
    "access-control-request-method": "POST",
    "access-control-request-headers": "authorization, content-type",
}
ELSEWHERE = "https://chat.example.com"  # an allowed origin that is not the page's

# --------------------------------------------------------------------------- CORS on the wire


def _preflight(url: str, origin: str) -> httpx.Response:
    return httpx.options(f"{url}{ENDPOINT}", headers={"origin": origin, **PREFLIGHT})


def test_preflight_from_an_allowed_origin_is_answered() -> None:
    origin = "http://127.0.0.1:5173"
    with (
        FakeGemini() as fake,
        serving(settings_for(fake, cors_origins=(ELSEWHERE, origin))) as url,
    ):
        r = _preflight(url, origin)
        assert fake.requests == []  # a preflight never goes upstream
    assert r.status_code == 200
    assert r.headers["access-control-allow-origin"] == origin  # echoed, not "*"
    assert "POST" in _tokens(r.headers["access-control-allow-methods"])
    assert {"authorization", "content-type"} <= _tokens(r.headers["access-control-allow-headers"])
    assert int(r.headers["access-control-max-age"]) > 0
    assert "origin" in _tokens(r.headers.get("vary", "").lower())  # caches keep origins apart


def test_preflight_from_another_origin_gets_no_allow_origin() -> None:
    with (
        FakeGemini() as fake,
        serving(settings_for(fake, cors_origins=(ELSEWHERE,))) as url,
    ):
        r = _preflight(url, "http://127.0.0.1:5173")
        assert fake.requests == []
    assert r.status_code >= 400  # Starlette answers 400 "Disallowed CORS origin"
    assert "access-control-allow-origin" not in r.headers


def test_without_cors_origins_a_preflight_is_refused() -> None:
    with FakeGemini() as fake, serving(settings_for(fake)) as url:
        r = _preflight(url, ELSEWHERE)
        assert fake.requests == []
    assert r.status_code == 405  # the route takes POST only, as before CORS existed
    assert not any(name.startswith("access-control-") for name in r.headers)


def test_a_streaming_answer_carries_allow_origin_and_exposes_the_request_id() -> None:
    origin = "http://127.0.0.1:5173"
    body = {"model": MODEL, "messages": HELLO, "stream": True}
    headers = {"authorization": f"Bearer {TOKEN}", "origin": origin}
    with (
        FakeGemini(samples.read("text")) as fake,
        serving(settings_for(fake, cors_origins=(origin,))) as url,
        httpx.stream("POST", f"{url}{ENDPOINT}", json=body, headers=headers) as r,
    ):
        raw = r.read()
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/event-stream")
    assert r.headers["access-control-allow-origin"] == origin
    exposed = _tokens(r.headers["access-control-expose-headers"].lower())
    assert {"x-request-id", "retry-after"} <= exposed
    assert r.headers["x-request-id"].startswith("req_")
    assert raw.endswith(b"data: [DONE]\n\n")
    assert len(fake.requests) == 1


def test_an_answer_to_another_origin_has_no_allow_origin() -> None:
    # CORS is the browser's to enforce: the server answers, but without the header
    # the page's script is not given the response.
    body = {"model": MODEL, "messages": HELLO}
    headers = {"authorization": f"Bearer {TOKEN}", "origin": "http://127.0.0.1:5173"}
    with (
        FakeGemini(samples.read("text")) as fake,
        serving(settings_for(fake, cors_origins=(ELSEWHERE,))) as url,
    ):
        r = httpx.post(f"{url}{ENDPOINT}", json=body, headers=headers)
    assert r.status_code == 200
    assert "access-control-allow-origin" not in r.headers


def _tokens(header: str) -> set[str]:
    return {part.strip() for part in header.split(",") if part.strip()}


# --------------------------------------------------------------------------- in a browser

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    # The network is closed: without these Chromium keeps trying Google's services.
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>rxgem chat</title><link rel="icon" href="data:,"></head>
<body>
<pre id="text"></pre>
<p>finish_reason: <span id="finish"></span></p>
<p>x-request-id: <span id="request-id"></span></p>
<p>error: <span id="error"></span></p>
<script>
(async () => {
  const params = new URLSearchParams(location.search);
  const SERVER = params.get("server");
  const TOKEN = params.get("token");
  const model = params.get("model");
  const messages = [{role: "user", content: "Say good morning."}];
  const show = (id, value) => { document.getElementById(id).textContent = value; };
  let text = "";
  let finish = "";
  try {
    const response = await fetch(SERVER + "/v1/chat/completions", {
      method: "POST",
      headers: {authorization: "Bearer " + TOKEN, "content-type": "application/json"},
      body: JSON.stringify({model, messages, stream: true}),
    });
    show("request-id", response.headers.get("x-request-id") || "");
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffered = "";
    for (;;) {
      const {value, done} = await reader.read();
      buffered += decoder.decode(value || new Uint8Array(), {stream: !done});
      const lines = buffered.split("\\n");
      buffered = done ? "" : lines.pop();
      for (const line of lines) {
        if (!line.startsWith("data: ") || line === "data: [DONE]") continue;
        const chunk = JSON.parse(line.slice(6));
        for (const choice of chunk.choices) {
          text += choice.delta.content || "";
          if (choice.finish_reason) finish = choice.finish_reason;
        }
        show("text", text);
      }
      if (done) break;
    }
    show("finish", finish);
    document.body.dataset.state = "done";
  } catch (error) {
    show("error", error.name + ": " + error.message);
    document.body.dataset.state = "failed";
  }
})();
</script>
</body></html>
"""


class _PageHandler(BaseHTTPRequestHandler):
    """Serves :attr:`page` (:data:`PAGE`) at ``/`` (any query string) and nothing else."""

    protocol_version = "HTTP/1.1"
    page = PAGE

    def do_GET(self) -> None:
        if self.path.split("?")[0] != "/":
            self.send_error(404)
            return
        body = self.page.encode()
        self.send_response(200)
        self.send_header("content-type", "text/html; charset=utf-8")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def playwright() -> Iterator[Any]:
    if not shutil.which(CHROMIUM):
        pytest.skip(
            f"no {CHROMIUM}: install Debian's Chromium (apt-get install chromium;"
            " .ci/run does) to run the browser tests"
        )
    sync_api = pytest.importorskip(
        "playwright.sync_api",
        reason="the playwright package is missing (pip install playwright; it is in '.[dev]')",
    )
    with sync_api.sync_playwright() as playwright:
        yield playwright


@contextlib.contextmanager
def _chromium(playwright: Any, *args: str) -> Iterator[Any]:
    browser = playwright.chromium.launch(
        executable_path=CHROMIUM, headless=True, args=[*CHROMIUM_ARGS, *args], timeout=15_000
    )
    try:
        yield browser
    finally:
        browser.close()


@pytest.fixture(scope="module")
def browser(playwright: Any) -> Iterator[Any]:
    with _chromium(playwright) as browser:
        yield browser


@pytest.fixture
def page_origin() -> Iterator[str]:
    """The page's own origin: ``http://127.0.0.1:<port>``, another port than the server's."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _PageHandler)
    thread = threading.Thread(target=server.serve_forever, name="page", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def _chat_in_page(browser: Any, page_origin: str, url: str) -> tuple[dict[str, str], list[str]]:
    """Open the page, let its script stream a completion from ``url``; what it showed
    and what the browser logged to the console."""
    context = browser.new_context()
    try:
        page = context.new_page()
        console: list[str] = []
        page.on("console", lambda message: console.append(message.text))
        query = urlencode({"server": url, "token": TOKEN, "model": MODEL})
        page.goto(f"{page_origin}/?{query}", timeout=10_000)
        page.wait_for_function("document.body.dataset.state", timeout=10_000)
        shown = {
            name: page.text_content(f"#{name}") or ""
            for name in ("text", "finish", "request-id", "error")
        }
        shown["state"] = page.evaluate("document.body.dataset.state")
        shown["origin"] = page.evaluate("location.origin")
        return shown, console
    finally:
        context.close()


def test_a_page_from_an_allowed_origin_streams_a_completion(browser: Any, page_origin: str) -> None:
    with (
        FakeGemini(samples.read("text")) as fake,
        serving(settings_for(fake, cors_origins=(page_origin,))) as url,
    ):
        shown, console = _chat_in_page(browser, page_origin, url)
        received = fake.requests
    assert shown["origin"] == page_origin != url  # a cross-origin call, with a preflight
    assert shown["state"] == "done", (shown, console)
    assert shown["error"] == ""
    assert shown["text"] == expected_content("text.sse")
    assert shown["finish"] == "stop"
    assert shown["request-id"].startswith("req_")  # readable: the header is exposed
    assert console == []  # no CORS complaint, no failed load
    assert len(received) == 1
    assert received[0].path == f"/v1beta/models/{MODEL}:streamGenerateContent"


def test_a_page_from_another_origin_is_refused_before_anything_goes_upstream(
    browser: Any, page_origin: str
) -> None:
    with (
        FakeGemini(samples.read("text")) as fake,
        serving(settings_for(fake, cors_origins=(ELSEWHERE,))) as url,
    ):
        shown, console = _chat_in_page(browser, page_origin, url)
        received = fake.requests
    assert shown["state"] == "failed", (shown, console)
    assert shown["error"].startswith("TypeError")  # fetch's network error: "Failed to fetch"
    assert shown["text"] == ""
    assert any("CORS policy" in line for line in console), console  # the preflight failed
    assert received == []  # refused at the preflight: the POST was never sent


# --------------------------------------------------------------------------- pages that attack

SIMPLE_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><link rel="icon" href="data:,"></head><body>
<script>
(async () => {
  const server = new URLSearchParams(location.search).get("server");
  const send = (path, body) => fetch(server + path, {
    method: "POST", mode: "no-cors", headers: {"content-type": "text/plain"},
    body: JSON.stringify(body),
  }).then(r => r.type, e => e.name);
  const model = "MODEL";
  const sent = await Promise.all([
    send("/v1/chat/completions", {model, messages: [{role: "user", content: "Hi"}]}),
    send("/v1/responses", {model, input: "Hi", store: true}),
  ]);
  document.body.dataset.sent = sent.join(",");
  document.body.dataset.state = "done";
})();
</script></body></html>
""".replace("MODEL", MODEL)


class _SimplePageHandler(_PageHandler):
    page = SIMPLE_PAGE


def test_a_simple_request_from_a_page_on_another_origin_reaches_nothing(
    browser: Any, tmp_path: Any
) -> None:
    """A "simple" cross-origin POST (``text/plain``, ``no-cors``: no preflight) to an open
    local server. Before: it reached Gemini with the server's key, and the Responses one
    was stored in the shared anonymous store."""
    store = tmp_path / "store.sqlite3"
    page_server = ThreadingHTTPServer(("127.0.0.1", 0), _SimplePageHandler)
    thread = threading.Thread(target=page_server.serve_forever, name="page", daemon=True)
    thread.start()
    try:
        with (
            FakeGemini(samples.read("text"), samples.read("text")) as fake,
            serving(settings_for(fake, client_tokens=(), store=str(store))) as url,
        ):
            context = browser.new_context()
            try:
                page = context.new_page()
                origin = f"http://127.0.0.1:{page_server.server_address[1]}"
                page.goto(f"{origin}/?{urlencode({'server': url})}", timeout=10_000)
                page.wait_for_function("document.body.dataset.state", timeout=10_000)
                sent = page.evaluate("document.body.dataset.sent")
            finally:
                context.close()
            received = fake.requests
    finally:
        page_server.shutdown()
        page_server.server_close()
        thread.join(5)
    assert sent == "opaque,opaque"  # the browser sent both (the page cannot see answers)
    assert received == []
    assert _stored_turns(store) == 0


def _stored_turns(path: Any) -> int:
    """How many turns the SQLite store at ``path`` holds (0: never made)."""
    if not path.exists():
        return 0
    with contextlib.closing(sqlite3.connect(path)) as db:
        tables = db.execute("SELECT name FROM sqlite_master WHERE name = 'turns'").fetchall()
        return int(db.execute("SELECT count(*) FROM turns").fetchone()[0]) if tables else 0


REBOUND_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><link rel="icon" href="data:,"></head><body>
<script>
(async () => {
  try {
    const response = await fetch("/v1/chat/completions", {
      method: "POST", headers: {"content-type": "application/json"},
      body: JSON.stringify({model: "MODEL", messages: [{role: "user", content: "Hi"}]}),
    });
    document.body.dataset.status = String(response.status);
    document.body.dataset.read = await response.text();
  } catch (error) {
    document.body.dataset.read = "error: " + error.name;
  }
  document.body.dataset.state = "done";
})();
</script></body></html>
""".replace("MODEL", MODEL)


@pytest.fixture(scope="module")
def rebinding_browser(playwright: Any) -> Iterator[Any]:
    """Chromium where ``evil.example`` resolves to 127.0.0.1: a page of that name, once
    loaded, sends same-origin requests to a local server (a DNS rebinding). Chromium's own
    Local (formerly Private) Network Access checks are off: other browsers have none, and
    the server must not rely on them."""
    with _chromium(
        playwright,
        "--host-resolver-rules=MAP evil.example 127.0.0.1",
        "--disable-features=PrivateNetworkAccessSendPreflights,"
        "PrivateNetworkAccessRespectPreflightResults,BlockInsecurePrivateNetworkRequests,"
        "LocalNetworkAccessChecks",
    ) as browser:
        yield browser


def test_a_rebound_page_cannot_read_an_answer(rebinding_browser: Any) -> None:
    """The page is loaded as ``http://evil.example:PORT/`` (from the attacker), then its
    name resolves to 127.0.0.1 and its same-origin ``fetch`` reaches the local server
    with ``Host: evil.example:PORT``. Before: answered, and the page read the answer."""
    with (
        FakeGemini(samples.read("text")) as fake,
        serving(settings_for(fake, client_tokens=())) as url,
    ):
        origin = f"http://evil.example:{url.rsplit(':', 1)[1]}"
        context = rebinding_browser.new_context()
        try:
            page = context.new_page()
            page.route(
                f"{origin}/",  # the attacker's page; everything else goes to the network
                lambda route: route.fulfill(
                    status=200, content_type="text/html", body=REBOUND_PAGE
                ),
            )
            page.goto(f"{origin}/", timeout=10_000)
            page.wait_for_function("document.body.dataset.state", timeout=10_000)
            status = page.evaluate("document.body.dataset.status")
            read = page.evaluate("document.body.dataset.read")
        finally:
            context.close()
        received = fake.requests
    assert received == []
    assert status == "421", read
    assert expected_content("text.sse") not in read
    assert json.loads(read)["error"]["code"] == "misdirected_request"
