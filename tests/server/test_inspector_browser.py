"""The live inspector's page in headless Chromium (Playwright, as test_server_browser.py).

A stream started after the page opened shows on it, diagram and all, within a second,
while it is still streaming; what Gemini or a model name says is shown as text, never
run as markup; a page of another origin cannot read it, though the browser holds
its cookie; against ``rxgem serve`` with two workers, the page shows, diagram and all,
every request either worker answered. Skips, saying why, without ``/usr/bin/chromium``
or ``playwright``.
"""

from __future__ import annotations

import shutil
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest
from server_harness import HELLO, MODEL, TOKEN, event_ends, serve_process
from test_inspector import AUTH, CHAT, inspecting, serving_app
from test_inspector_workers import until_workers_answered

from rxgem import samples
from rxgem.testing import FakeGemini, FakeResponse

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
HOSTILE = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>'


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not shutil.which(CHROMIUM):
        pytest.skip(f"no {CHROMIUM}: install Debian's Chromium (apt-get install chromium)")
    sync_api = pytest.importorskip(
        "playwright.sync_api",
        reason="the playwright package is missing (pip install playwright; it is in '.[dev]')",
    )
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS, timeout=15_000
        )
        try:
            yield browser
        finally:
            browser.close()


def _open(browser: Any, url: str) -> Any:
    """The inspector page, opened once with the token (then held in its cookie), live."""
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(f"{url}/inspect?token={TOKEN}")
    assert page.url == f"{url}/inspect"  # the token left the address
    page.wait_for_selector("body[data-state=live]", timeout=15_000)
    page.errors = errors
    return page


def test_a_stream_started_after_the_page_opened_appears_within_a_second(browser: Any) -> None:
    body = samples.read("text")
    slow = FakeResponse(body=body, split_at=event_ends(body), pause=0.6)
    with FakeGemini(slow) as fake, serving_app(inspecting(fake)) as (url, _):
        request = {"model": MODEL, "messages": HELLO, "stream": True}
        # a first request warms the server (imports, the upstream pool), not the inspector
        assert httpx.post(f"{url}{CHAT}", json=request, headers=AUTH).status_code == 200
        page = _open(browser, url)
        page.wait_for_selector("section.exchange[data-done=true]", timeout=5_000)
        assert page.locator("section.exchange").count() == 1
        answers: list[int] = []
        started = time.monotonic()
        thread = threading.Thread(
            target=lambda: answers.append(
                httpx.post(f"{url}{CHAT}", json=request, headers=AUTH, timeout=30).status_code
            )
        )
        thread.start()
        new = page.locator("section.exchange").first
        page.wait_for_selector("section.exchange[data-id='2'] .diagram svg", timeout=1_000)
        seen = time.monotonic() - started
        streaming = new.get_attribute("data-done")
        lanes = new.locator(".diagram svg").inner_html()
        thread.join(30)
        page.wait_for_selector("section.exchange[data-id='2'][data-done=true]", timeout=5_000)
        text = new.locator(".head").inner_text()
        final = new.locator(".diagram svg").inner_html()
        assert page.errors == []
        page.close()
    assert answers == [200]
    assert seen < 1.0
    assert streaming == "false"  # shown while it was still streaming
    assert ">decode_sse<" in lanes
    assert MODEL in text
    assert "HTTP 200" in text
    for lane in ("bytes", "decode_sse", "parse", "to_openai"):
        assert f">{lane}<" in final


def test_model_names_and_content_are_shown_as_text(browser: Any) -> None:
    said = (
        b'data: {"candidates":[{"content":{"role":"model","parts":[{"text":'
        + httpx.Response(200, json=HOSTILE).content
        + b'}]},"finishReason":"STOP"}]}\r\n\r\n'
    )
    with FakeGemini(said) as fake, serving_app(inspecting(fake)) as (url, app):
        assert (
            httpx.post(
                f"{url}{CHAT}", json={"model": MODEL, "messages": HELLO}, headers=AUTH
            ).status_code
            == 200
        )
        # no client can send such a model name (400): put one in as if Gemini's URL said it
        inspector = app.state.inspector
        inspector.begin(httpx.Request("POST", f"{fake.base_url}/models/{HOSTILE}:generate"))
        page = _open(browser, url)
        page.wait_for_function("document.querySelectorAll('section.exchange').length == 2")
        page.wait_for_timeout(300)
        pwned = page.evaluate("window.__pwned === undefined ? null : window.__pwned")
        models = page.locator("section.exchange .model").all_inner_texts()
        scripts = page.locator("section.exchange script").count()
        images = page.locator("section.exchange img").count()
        svg = page.locator("section.exchange .diagram svg").first.inner_html()
        page.close()
    assert pwned is None
    assert scripts == 0
    assert images == 0
    assert HOSTILE in models
    assert "&lt;img" in svg or "&lt;script" in svg or "onerror" not in svg


def test_the_page_shows_every_worker_s_requests(browser: Any) -> None:
    argv = ["--fake", "--inspect", "--client-token", TOKEN, "--workers", "2"]
    with serve_process(*argv) as (url, _):
        summaries = until_workers_answered(url, 2)
        page = _open(browser, url)
        # a selector, not a predicate: polling a predicate is an eval the page's CSP refuses
        drawn = page.locator("section.exchange .diagram svg")
        drawn.nth(len(summaries) - 1).wait_for(timeout=30_000)  # generous: a loaded machine
        shown = page.locator("section.exchange").evaluate_all("all => all.map(e => e.dataset.id)")
        assert page.errors == []
        page.close()
    assert sorted(int(n) for n in shown) == sorted(s["id"] for s in summaries)
    assert len({s["worker"] for s in summaries}) == 2


READER = """<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,">
</head><body><script>
(async () => {
  const server = new URLSearchParams(location.search).get("server");
  const out = [];
  for (const path of ["/inspect/exchanges/1.json", "/inspect"]) {
    try {
      const r = await fetch(server + path, {credentials: "include"});
      out.push(path + " read " + r.status + " " + (await r.text()).length);
    } catch (error) {
      out.push(path + " blocked " + error.name);
    }
  }
  document.body.dataset.result = out.join("; ");
})();
</script></body></html>
"""


class _ReaderPage(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        body = READER.encode()
        self.send_response(200)
        self.send_header("content-type", "text/html; charset=utf-8")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def test_a_page_of_another_origin_cannot_read_the_inspector(browser: Any) -> None:
    # the inspector's cookie is in the browser (same host, another port: same site), yet
    # without CORS the other page's script is never given an answer
    other = ThreadingHTTPServer(("127.0.0.1", 0), _ReaderPage)
    threading.Thread(target=other.serve_forever, daemon=True).start()
    try:
        with FakeGemini() as fake, serving_app(inspecting(fake)) as (url, _):
            request = {"model": MODEL, "messages": HELLO}
            assert httpx.post(f"{url}{CHAT}", json=request, headers=AUTH).status_code == 200
            context = browser.new_context()
            mine = context.new_page()
            mine.goto(f"{url}/inspect?token={TOKEN}")
            mine.wait_for_selector("section.exchange", timeout=5_000)
            theirs = context.new_page()
            theirs.goto(f"http://127.0.0.1:{other.server_address[1]}/?server={url}")
            theirs.wait_for_selector("body[data-result]", state="attached", timeout=5_000)
            result = theirs.locator("body").get_attribute("data-result")
            context.close()
    finally:
        other.shutdown()
        other.server_close()
    assert result == ("/inspect/exchanges/1.json blocked TypeError; /inspect blocked TypeError")
