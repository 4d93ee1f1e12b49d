"""from_gemini / stream_chat over a real loopback server (FakeGemini), sync and async."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from typing import Any

import httpx
import pytest
import reactivex
from pipeline_harness import check_protocol, collect_sync, counter_ids, run, sdk_validate
from reactivex import operators as ops
from reactivex.scheduler import ThreadPoolScheduler

import rxgem
from rxgem import samples
from rxgem.testing import FakeGemini, FakeResponse
from rxgem.transport._http import http_error, resolve_headers, stream_url

MODEL = "gemini-2.5-flash"
REQUEST = {"contents": [{"role": "user", "parts": [{"text": "Hi"}]}]}
KEY = "test-key"
QUOTA = {
    "code": 429,
    "message": "Quota exceeded.",
    "status": "RESOURCE_EXHAUSTED",
    "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "0.2s"}],
}


def options() -> dict[str, Any]:
    return {"id_factory": counter_ids(), "clock": lambda: 1_700_000_000.0}


def dicts(chunks: list[rxgem.ChatCompletionChunk]) -> list[dict[str, Any]]:
    return [c.to_dict() for c in chunks]


# -- URL, headers and HTTP error bodies (no network) ---------------------------------------


def test_stream_url() -> None:
    assert stream_url(None, "gemini-2.5-flash") == (
        "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash"
        ":streamGenerateContent?alt=sse"
    )
    vertex = (
        "https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/l/publishers/google/"
    )
    assert stream_url(vertex, "models/gemini-2.5-pro") == (
        vertex.rstrip("/") + "/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
    )


def test_api_key_precedence() -> None:
    env = {"GEMINI_API_KEY": "gem", "GOOGLE_API_KEY": "goo"}
    assert resolve_headers("arg", None, None, env)["x-goog-api-key"] == "arg"
    assert resolve_headers(None, None, None, env)["x-goog-api-key"] == "gem"
    assert resolve_headers(None, None, None, {"GOOGLE_API_KEY": "goo"})["x-goog-api-key"] == "goo"
    bearer = resolve_headers(None, "tok", {"X-Extra": "1"}, {})
    assert bearer["authorization"] == "Bearer tok"
    assert "x-goog-api-key" not in bearer
    assert bearer["x-extra"] == "1"


def test_missing_key_is_a_clear_error_at_call_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    with pytest.raises(rxgem.MissingCredentialsError) as info:
        rxgem.from_gemini(REQUEST, model=MODEL)
    assert "GEMINI_API_KEY" in str(info.value)
    assert "GOOGLE_API_KEY" in str(info.value)


def test_request_building_with_mock_transport() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, content=samples.read("text"))

    client = httpx.Client(transport=httpx.MockTransport(handler))
    chunks, error = collect_sync(
        rxgem.stream_chat(
            REQUEST,
            model="models/gemini-2.5-flash",
            api_key="k",
            client=client,
            headers={"X-A": "b"},
        )
    )
    assert error is None
    assert chunks
    [request] = seen
    assert str(request.url) == stream_url(None, MODEL)
    assert request.headers["x-goog-api-key"] == "k"
    assert request.headers["x-a"] == "b"
    assert request.headers["content-type"] == "application/json"
    assert json.loads(request.content) == REQUEST
    assert {c.model for c in chunks} == {MODEL}


@pytest.mark.parametrize(
    ("body", "message", "status"),
    [
        (json.dumps({"error": QUOTA}).encode(), "Quota exceeded.", "RESOURCE_EXHAUSTED"),
        (json.dumps([{"error": QUOTA}]).encode(), "Quota exceeded.", "RESOURCE_EXHAUSTED"),
        (b"<html>" + b"x" * 1000 + b"</html>", "<html>" + "x" * 494, "TOO_MANY_REQUESTS"),
    ],
    ids=["object", "one-element-array", "not-json"],
)
def test_http_error_bodies(body: bytes, message: str, status: str) -> None:
    error = http_error(429, {}, body, "Too Many Requests")
    assert error.http_status == 429
    assert error.code == 429
    assert error.status == status
    assert error.message == message
    assert len(error.message) <= 500


def test_retry_after_from_header_and_retry_info() -> None:
    body = json.dumps({"error": QUOTA}).encode()
    assert http_error(429, {"retry-after": "7"}, body).retry_after == 7.0
    assert http_error(429, {}, body).retry_after == pytest.approx(0.2)
    date = "Wed, 21 Oct 2099 07:28:00 GMT"
    assert http_error(503, {"retry-after": date}, b"busy").retry_after > 1e6


# -- sync client over loopback ------------------------------------------------------------

SAMPLES = ["text.sse", "thinking_tools.sse", "vertex_partial_args.sse", "multi_candidate.sse"]


@pytest.mark.parametrize("name", SAMPLES)
def test_sync_stream_equals_converting_the_file(name: str) -> None:
    capture = samples.read(name)
    expected, expected_error = run(capture, **options())
    response = FakeResponse(body=capture, chunk_size=211, pause=0.001)
    with FakeGemini(response) as fake, httpx.Client() as client:
        chunks, error = collect_sync(
            rxgem.stream_chat(
                REQUEST,
                model=MODEL,
                api_key=KEY,
                base_url=fake.base_url,
                client=client,
                **options(),
            )
        )
    assert error is expected_error is None
    # stream_chat sets the chunk model to the requested model
    assert dicts(chunks) == [dict(c, model=MODEL) for c in dicts(expected)]


def test_request_sent_over_the_wire() -> None:
    with FakeGemini(samples.read("text")) as fake:
        collect_sync(rxgem.from_gemini(REQUEST, model=MODEL, api_key=KEY, base_url=fake.base_url))
        [request] = fake.requests
    assert request.method == "POST"
    assert request.path == f"/v1beta/models/{MODEL}:streamGenerateContent"
    assert request.query == {"alt": "sse"}
    assert request.headers["x-goog-api-key"] == KEY
    assert request.headers["content-type"] == "application/json"
    assert request.json == REQUEST


def test_the_body_sent_is_the_bytes_json_dumps_would_write() -> None:
    """The body is encoded by msgspec (several times faster on large ones); the bytes
    are httpx's own ``json=`` encoding (compact, not ASCII-escaped, the same escapes),
    but for a float's exponent, written ``1e300`` rather than ``1e+300``."""
    text = 'é😀\u2028\u2029\x00\x1f\x7f"\\/<>&' * 3
    body = {"contents": [{"role": "user", "parts": [{"text": text}]}], "n": [0.1, -0, 2.5]}
    exponent = {**body, "n": [1e300, 1e-300]}
    with FakeGemini(samples.read("text"), samples.read("text")) as fake:
        for sent in (body, exponent):
            collect_sync(rxgem.from_gemini(sent, model=MODEL, api_key=KEY, base_url=fake.base_url))
        plain, exponents = fake.requests
    expected = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    assert plain.body == expected.encode()
    assert exponents.json == exponent
    assert exponents.body.endswith(b'"n":[1e300,1e-300]}')


def test_without_a_client_outside_a_loop_runs_on_a_thread_and_closes_its_client() -> None:
    capture = samples.read("thinking_tools")
    with FakeGemini(capture) as fake:
        main = threading.get_ident()
        threads: set[int] = set()
        source = rxgem.from_gemini(REQUEST, model=MODEL, api_key=KEY, base_url=fake.base_url)
        pieces, error = collect_sync(
            source.pipe(ops.do_action(lambda _: threads.add(threading.get_ident())))
        )
    assert error is None
    assert b"".join(pieces) == capture
    assert main not in threads


def test_a_scheduler_you_choose_runs_the_request() -> None:
    pool = ThreadPoolScheduler(1)
    with FakeGemini(samples.read("text")) as fake, httpx.Client() as client:
        names: set[str] = set()
        source = rxgem.from_gemini(
            REQUEST, model=MODEL, api_key=KEY, base_url=fake.base_url, client=client, scheduler=pool
        )
        _, error = collect_sync(
            source.pipe(ops.do_action(lambda _: names.add(threading.current_thread().name)))
        )
    assert error is None
    assert names
    assert not any(n.startswith("rxgem-from-gemini") for n in names)
    pool.executor.shutdown()


@pytest.mark.parametrize("status", [400, 404, 429, 500, 503])
def test_http_error_status(status: int) -> None:
    error_body = dict(QUOTA, code=status, status="SOMETHING")
    with FakeGemini(
        FakeResponse(status=status, error=error_body, headers={"Retry-After": "3"})
    ) as fake:
        chunks, error = collect_sync(
            rxgem.stream_chat(REQUEST, model=MODEL, api_key=KEY, base_url=fake.base_url)
        )
    assert chunks == []
    assert isinstance(error, rxgem.GeminiAPIError)
    assert error.http_status == status
    assert error.status == "SOMETHING"
    assert error.message == "Quota exceeded."
    assert error.retry_after == 3.0
    assert error.details


def test_non_json_error_body() -> None:
    page = b"<html><body><h1>502 Bad Gateway</h1></body></html>"
    with FakeGemini(FakeResponse(status=502, body=page, content_type="text/html")) as fake:
        _, error = collect_sync(
            rxgem.from_gemini(REQUEST, model=MODEL, api_key=KEY, base_url=fake.base_url)
        )
    assert isinstance(error, rxgem.GeminiAPIError)
    assert error.http_status == 502
    assert "502 Bad Gateway" in error.message


def test_read_timeout_is_a_transport_error() -> None:
    with FakeGemini(FakeResponse(body=samples.read("text"), delay=2.0)) as fake:
        _, error = collect_sync(
            rxgem.from_gemini(
                REQUEST, model=MODEL, api_key=KEY, base_url=fake.base_url, timeout=0.3
            )
        )
    assert isinstance(error, rxgem.GeminiTransportError)
    assert isinstance(error.cause, httpx.ReadTimeout)


def test_connect_error_is_a_transport_error() -> None:
    with FakeGemini() as fake:
        base = fake.base_url
    # the server is closed: nothing listens on that port any more
    _, error = collect_sync(rxgem.from_gemini(REQUEST, model=MODEL, api_key=KEY, base_url=base))
    assert isinstance(error, rxgem.GeminiTransportError)
    assert isinstance(error.cause, httpx.ConnectError)


def test_connection_drop_mid_body_delivers_what_arrived_first() -> None:
    capture = samples.read("thinking_tools")
    cut = capture.index(b'"name": "search"')  # after the three read_file calls
    with FakeGemini(FakeResponse(body=capture, drop_after=cut, chunk_size=300)) as fake:
        chunks, error = collect_sync(
            rxgem.stream_chat(
                REQUEST, model=MODEL, api_key=KEY, base_url=fake.base_url, **options()
            )
        )
    assert isinstance(error, rxgem.GeminiTransportError)
    sdk_validate(chunks)
    check_protocol(chunks)
    calls = rxgem.assemble(chunks)["choices"][0]["message"]["tool_calls"]
    assert [c["function"]["name"] for c in calls] == ["read_file"] * 3  # flushed before the error
    assert all(ch.finish_reason is None for c in chunks for ch in c.choices)


def test_raw_error_appended_after_the_events() -> None:
    capture = samples.read("text").split(b"\r\n\r\n")[0] + b"\r\n\r\n"
    raw = {"code": 499, "message": "The operation was cancelled.", "status": "CANCELLED"}
    with FakeGemini(FakeResponse(body=capture, raw_error=raw)) as fake:
        chunks, error = collect_sync(
            rxgem.stream_chat(REQUEST, model=MODEL, api_key=KEY, base_url=fake.base_url)
        )
    assert isinstance(error, rxgem.GeminiAPIError)
    assert (error.code, error.status) == (499, "CANCELLED")
    assert rxgem.assemble(chunks)["choices"][0]["message"]["content"]


def test_keepalive_comments_and_slow_trickle_change_nothing() -> None:
    capture = samples.read("gemini3_ids")
    expected, _ = run(capture, **options())
    slow = FakeResponse(body=capture, chunk_size=97, pause=0.03, keepalive=0.01)
    with FakeGemini(slow) as fake:
        chunks, error = collect_sync(
            rxgem.stream_chat(
                REQUEST, model=MODEL, api_key=KEY, base_url=fake.base_url, **options()
            )
        )
    assert error is None
    assert dicts(chunks) == [dict(c, model=MODEL) for c in dicts(expected)]


# -- retries ----------------------------------------------------------------------------


def test_retry_before_the_first_byte_honours_retry_after() -> None:
    quota = FakeResponse(status=429, error=QUOTA)  # RetryInfo says 0.2 s
    with FakeGemini(quota, samples.read("text")) as fake:
        started = time.monotonic()
        chunks, error = collect_sync(
            rxgem.stream_chat(REQUEST, model=MODEL, api_key=KEY, base_url=fake.base_url, retry=3)
        )
        elapsed = time.monotonic() - started
        assert len(fake.requests) == 2
    assert error is None
    assert chunks
    assert elapsed >= 0.2


def test_retry_is_off_by_default() -> None:
    with FakeGemini(
        FakeResponse(status=503, error=dict(QUOTA, code=503)), samples.read("text")
    ) as fake:
        _, error = collect_sync(
            rxgem.from_gemini(REQUEST, model=MODEL, api_key=KEY, base_url=fake.base_url)
        )
        assert len(fake.requests) == 1
    assert isinstance(error, rxgem.GeminiAPIError)


def test_retry_gives_up_after_the_attempts() -> None:
    fail = FakeResponse(status=500, error={"code": 500, "message": "x", "status": "INTERNAL"})
    with FakeGemini(fail) as fake:
        policy = rxgem.RetryPolicy(attempts=3, backoff=0.01)
        _, error = collect_sync(
            rxgem.from_gemini(
                REQUEST, model=MODEL, api_key=KEY, base_url=fake.base_url, retry=policy
            )
        )
        assert len(fake.requests) == 3
    assert isinstance(error, rxgem.GeminiAPIError)


def test_no_retry_for_client_errors() -> None:
    bad = FakeResponse(
        status=400, error={"code": 400, "message": "bad", "status": "INVALID_ARGUMENT"}
    )
    with FakeGemini(bad, samples.read("text")) as fake:
        _, error = collect_sync(
            rxgem.from_gemini(REQUEST, model=MODEL, api_key=KEY, base_url=fake.base_url, retry=5)
        )
        assert len(fake.requests) == 1
    assert isinstance(error, rxgem.GeminiAPIError)


def test_never_retries_once_bytes_were_emitted() -> None:
    capture = samples.read("text")
    with FakeGemini(FakeResponse(body=capture, drop_after=len(capture) // 2), capture) as fake:
        pieces, error = collect_sync(
            rxgem.from_gemini(REQUEST, model=MODEL, api_key=KEY, base_url=fake.base_url, retry=5)
        )
        assert len(fake.requests) == 1
    assert isinstance(error, rxgem.GeminiTransportError)
    assert b"".join(pieces) == capture[: len(capture) // 2]


# -- cancellation ---------------------------------------------------------------------------


def slow_capture() -> FakeResponse:
    """The first event at once, then a long pause before each of the others."""
    body = samples.read("thinking_tools")
    ends = [i + 4 for i in range(len(body)) if body.startswith(b"\r\n\r\n", i)]
    return FakeResponse(body=body, split_at=ends[:-1], pause=5.0)


def test_dispose_closes_the_connection_promptly() -> None:
    with FakeGemini(slow_capture()) as fake:
        first = threading.Event()
        subscription = rxgem.from_gemini(
            REQUEST, model=MODEL, api_key=KEY, base_url=fake.base_url
        ).subscribe(lambda _: first.set())
        assert first.wait(5)
        started = time.monotonic()
        subscription.dispose()
        assert fake.wait_for_disconnect(1.0)
        assert time.monotonic() - started < 1.0


def test_take_closes_the_connection_promptly() -> None:
    with FakeGemini(slow_capture()) as fake:
        items, error = collect_sync(
            rxgem.stream_chat(REQUEST, model=MODEL, api_key=KEY, base_url=fake.base_url).pipe(
                ops.take(1)
            )
        )
        assert error is None
        assert len(items) == 1
        assert fake.wait_for_disconnect(1.0)


def test_error_downstream_closes_the_connection() -> None:
    def boom(_: Any) -> None:
        raise ValueError("downstream failure")

    with FakeGemini(slow_capture()) as fake:
        _, error = collect_sync(
            rxgem.from_gemini(REQUEST, model=MODEL, api_key=KEY, base_url=fake.base_url).pipe(
                ops.do_action(boom)
            )
        )
        assert isinstance(error, ValueError)
        assert fake.wait_for_disconnect(1.0)


def test_iterate_stops_the_stream_when_the_consumer_breaks() -> None:
    with FakeGemini(slow_capture()) as fake:
        for _chunk in rxgem.iterate(
            rxgem.stream_chat(REQUEST, model=MODEL, api_key=KEY, base_url=fake.base_url)
        ):
            break
        assert fake.wait_for_disconnect(1.0)


def test_iterate_raises_the_stream_error() -> None:
    texts: list[str] = []

    def consume(url: str) -> None:
        for chunk in rxgem.iterate(
            rxgem.stream_chat(REQUEST, model=MODEL, api_key=KEY, base_url=url)
        ):
            texts.extend(c.delta.content or "" for c in chunk.choices)

    with FakeGemini(samples.read("error_mid_stream")) as fake:
        with pytest.raises(rxgem.GeminiAPIError):
            consume(fake.base_url)
        assert "".join(texts).startswith("The Fibonacci sequence")


# -- async ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", SAMPLES)
def test_async_stream_equals_converting_the_file(name: str) -> None:
    capture = samples.read(name)
    expected, _ = run(capture, **options())

    async def main() -> list[rxgem.ChatCompletionChunk]:
        async with (
            FakeGemini(FakeResponse(body=capture, chunk_size=157)) as fake,
            httpx.AsyncClient() as client,
        ):
            source = rxgem.stream_chat(
                REQUEST,
                model=MODEL,
                api_key=KEY,
                base_url=fake.base_url,
                client=client,
                **options(),
            )
            return [chunk async for chunk in rxgem.aiterate(source)]

    chunks = asyncio.run(main())
    assert dicts(chunks) == [dict(c, model=MODEL) for c in dicts(expected)]


def test_async_without_a_client_uses_the_running_loop() -> None:
    capture = samples.read("text")

    async def main() -> tuple[bytes, set[int]]:
        loop_thread = threading.get_ident()
        async with FakeGemini(capture) as fake:
            threads: set[int] = set()
            source = rxgem.from_gemini(REQUEST, model=MODEL, api_key=KEY, base_url=fake.base_url)
            pieces = [
                p
                async for p in rxgem.aiterate(
                    source.pipe(ops.do_action(lambda _: threads.add(threading.get_ident())))
                )
            ]
            return b"".join(pieces), threads - {loop_thread}

    body, other_threads = asyncio.run(main())
    assert body == capture
    assert other_threads == set()  # every item was emitted on the loop itself


def test_await_to_list_in_async_code() -> None:
    async def main() -> list[rxgem.ChatCompletionChunk]:
        async with FakeGemini(samples.read("text")) as fake, httpx.AsyncClient() as client:
            source = rxgem.stream_chat(
                REQUEST, model=MODEL, api_key=KEY, base_url=fake.base_url, client=client
            )
            result: list[rxgem.ChatCompletionChunk] = await source.pipe(ops.to_list())
            return result

    chunks = asyncio.run(main())
    check_protocol(chunks)


def test_async_consumer_breaking_out_closes_the_connection() -> None:
    async def main() -> bool:
        async with FakeGemini(slow_capture()) as fake, httpx.AsyncClient() as client:
            source = rxgem.stream_chat(
                REQUEST, model=MODEL, api_key=KEY, base_url=fake.base_url, client=client
            )
            async for _chunk in rxgem.aiterate(source):
                break
            return await asyncio.to_thread(fake.wait_for_disconnect, 1.0)

    assert asyncio.run(main())


def test_async_errors_reach_the_consumer() -> None:
    async def main() -> Exception:
        error = FakeResponse(status=429, error=QUOTA)
        async with FakeGemini(error) as fake, httpx.AsyncClient() as client:
            source = rxgem.stream_chat(
                REQUEST, model=MODEL, api_key=KEY, base_url=fake.base_url, client=client
            )
            with pytest.raises(rxgem.GeminiAPIError) as info:
                async for _chunk in rxgem.aiterate(source):
                    pass
            return info.value

    error = asyncio.run(main())
    assert isinstance(error, rxgem.GeminiAPIError)
    assert error.retry_after == pytest.approx(0.2)


def test_async_client_without_a_loop_is_a_clear_error() -> None:
    client = httpx.AsyncClient()
    source = rxgem.from_gemini(REQUEST, model=MODEL, api_key=KEY, client=client)
    with pytest.raises(RuntimeError, match="event loop"):
        source.subscribe(lambda _: None)


def test_hundred_concurrent_async_streams_each_get_their_own_output() -> None:
    bodies = []
    for n in range(100):
        event = {
            "candidates": [
                {"content": {"parts": [{"text": f"stream {n} says hello"}]}, "finishReason": "STOP"}
            ],
            "responseId": f"resp{n:03d}",
            "modelVersion": MODEL,
        }
        bodies.append(
            FakeResponse(body=b"data: " + json.dumps(event).encode() + b"\r\n\r\n", chunk_size=16)
        )

    async def main() -> list[tuple[str, str]]:
        async with FakeGemini(*bodies) as fake:
            limits = httpx.Limits(max_connections=100)
            async with httpx.AsyncClient(limits=limits, timeout=30) as client:

                async def one() -> tuple[str, str]:
                    source = rxgem.stream_chat(
                        REQUEST, model=MODEL, api_key=KEY, base_url=fake.base_url, client=client
                    )
                    chunks = [c async for c in rxgem.aiterate(source)]
                    message = rxgem.assemble(chunks)
                    return message["id"], message["choices"][0]["message"]["content"]

                return await asyncio.gather(*(one() for _ in range(100)))

    results = asyncio.run(main())
    assert len(results) == 100
    assert len(set(results)) == 100
    for completion_id, content in results:
        n = int(completion_id.removeprefix("chatcmpl-resp"))
        assert content == f"stream {n} says hello"


FIRST_EVENT = samples.read("text").split(b"\r\n\r\n")[0] + b"\r\n\r\n"


@pytest.mark.parametrize(
    ("response", "error_type", "delivered"),
    [
        (FakeResponse(status=503, error={"code": 503, "message": "busy"}), rxgem.GeminiAPIError, 0),
        (FakeResponse(body=samples.read("text"), delay=2.0), rxgem.GeminiTransportError, 0),
        (
            FakeResponse(body=samples.read("text"), split_at=[900], drop_after=900),
            rxgem.GeminiTransportError,
            1,
        ),
        (
            FakeResponse(body=FIRST_EVENT, raw_error={"code": 499, "status": "CANCELLED"}),
            rxgem.GeminiAPIError,
            1,
        ),
    ],
    ids=["http-error", "read-timeout", "drop", "raw-error"],
)
def test_async_faults(response: FakeResponse, error_type: type[Exception], delivered: int) -> None:
    async def main() -> tuple[list[rxgem.ChatCompletionChunk], BaseException | None]:
        chunks: list[rxgem.ChatCompletionChunk] = []
        async with FakeGemini(response) as fake, httpx.AsyncClient(timeout=0.5) as client:
            source = rxgem.stream_chat(
                REQUEST, model=MODEL, api_key=KEY, base_url=fake.base_url, client=client
            )
            try:
                async for chunk in rxgem.aiterate(source):
                    chunks.append(chunk)
            except rxgem.RxGemError as exc:
                return chunks, exc
        return chunks, None

    chunks, error = asyncio.run(main())
    assert isinstance(error, error_type)
    assert len(chunks) >= delivered
    if delivered:
        assert rxgem.assemble(chunks)["choices"][0]["message"]["content"]


@pytest.mark.parametrize("key", ["AIzaSECRET-key\n", "AIza SECRET", "AIzaSÉCRET"])
def test_a_key_a_header_cannot_carry_is_refused_without_quoting_it(key: str) -> None:
    request = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    with pytest.raises(rxgem.MissingCredentialsError) as caught:
        rxgem.stream_chat(
            request, model="gemini-2.5-flash", api_key=key, base_url="http://127.0.0.1:9"
        )
    assert "SECRET" not in str(caught.value)
    assert "SÉCRET" not in str(caught.value)


@pytest.mark.parametrize("mode", ["sync", "async", "aiohttp"])
def test_a_compressed_body_is_decoded_and_a_plain_one_passes_as_is(mode: str) -> None:
    """A gzip body is decoded by httpx, also through the server's aiohttp transport (which
    leaves decoding to httpx); a plain one passes as it came."""
    import gzip

    from rxgem.transport import AiohttpTransport

    capture = samples.read("text")
    packed = FakeResponse(body=gzip.compress(capture), headers={"Content-Encoding": "gzip"})
    plain = FakeResponse(body=capture, split_at=[len(capture) // 2])
    request = {"contents": [{"role": "user", "parts": [{"text": "Hi"}]}]}

    def source(client: httpx.Client | httpx.AsyncClient, url: str) -> reactivex.Observable[bytes]:
        return rxgem.from_gemini(
            request, model="gemini-2.5-flash", api_key="k", base_url=url, client=client
        )

    async def read_async(url: str) -> list[bytes]:
        transport = AiohttpTransport() if mode == "aiohttp" else None
        async with httpx.AsyncClient(transport=transport) as client:
            return [
                b"".join([piece async for piece in rxgem.aiterate(source(client, url))])
                for _ in range(2)
            ]

    with FakeGemini(packed, plain) as fake:
        if mode == "sync":
            with httpx.Client() as client:
                bodies = [b"".join(rxgem.iterate(source(client, fake.base_url))) for _ in range(2)]
        else:
            bodies = asyncio.run(read_async(fake.base_url))
    assert bodies == [capture, capture]
