"""rxgem over HTTP/2 (h2c with prior knowledge) to FakeGemini(http2=True), sync and async.

Skipped without the ``h2`` package (``pip install 'rxgem[http2]'``).
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import httpx
import pytest

import rxgem
from rxgem import samples
from rxgem.testing import FakeGemini, FakeResponse

pytest.importorskip("h2", reason="h2 is missing (pip install 'rxgem[http2]')")

MODEL = "gemini-2.5-flash"
REQUEST = {"contents": [{"role": "user", "parts": [{"text": "Hi"}]}]}
KEY = "test-key"
CHAT = {
    "model": MODEL,
    "messages": [{"role": "user", "content": "Hi"}],
    "stream": True,
    "stream_options": {"include_usage": True},
}
OPTIONS: dict[str, Any] = {"clock": lambda: 1_700_000_000.0, "id_factory": lambda: "fixed"}


def _pieces(body: bytes, size: int) -> FakeResponse:
    return FakeResponse(body=body, chunk_size=size)


def _dicts(chunks: list[Any]) -> list[dict[str, Any]]:
    return [chunk.to_dict() for chunk in chunks]


async def _chunks(fake: FakeGemini, client: httpx.AsyncClient) -> list[dict[str, Any]]:
    source = rxgem.stream_chat(
        REQUEST, model=MODEL, client=client, api_key=KEY, base_url=fake.base_url, **OPTIONS
    )
    return _dicts([chunk async for chunk in rxgem.aiterate(source)])


@pytest.mark.parametrize("name", ["text", "thinking_tools", "multi_candidate"])
def test_async_stream_chat_gives_the_same_chunks_as_http11(name: str) -> None:
    response = _pieces(samples.read(name), 97)

    async def main() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        with FakeGemini(response) as h1, FakeGemini(response, http2=True) as h2:
            async with (
                httpx.AsyncClient() as c1,
                httpx.AsyncClient(http2=True, http1=False) as c2,
            ):
                return await _chunks(h1, c1), await _chunks(h2, c2)

    over_h1, over_h2 = asyncio.run(main())
    assert over_h2 == over_h1
    assert over_h2


def test_async_chat_completions_gives_the_same_chunks_as_http11() -> None:
    response = _pieces(samples.read("thinking_tools"), 64)

    async def one(fake: FakeGemini, client: httpx.AsyncClient) -> list[dict[str, Any]]:
        source = rxgem.chat_completions(
            CHAT, base_url=fake.base_url, api_key=KEY, client=client, **OPTIONS
        )
        return _dicts([chunk async for chunk in rxgem.aiterate(source)])

    async def main() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        with FakeGemini(response) as h1, FakeGemini(response, http2=True) as h2:
            async with (
                httpx.AsyncClient() as c1,
                httpx.AsyncClient(http2=True, http1=False) as c2,
            ):
                return await one(h1, c1), await one(h2, c2)

    over_h1, over_h2 = asyncio.run(main())
    assert over_h2 == over_h1
    assert over_h2[-1]["usage"] is not None


def test_sync_client_gives_the_same_chunks_as_http11() -> None:
    response = _pieces(samples.read("thinking_tools"), 128)

    def one(fake: FakeGemini, client: httpx.Client) -> list[dict[str, Any]]:
        source = rxgem.stream_chat(
            REQUEST, model=MODEL, client=client, api_key=KEY, base_url=fake.base_url, **OPTIONS
        )
        return _dicts(list(rxgem.iterate(source)))

    with (
        FakeGemini(response) as h1,
        FakeGemini(response, http2=True) as h2,
        httpx.Client() as c1,
        httpx.Client(http2=True, http1=False) as c2,
    ):
        assert one(h2, c2) == one(h1, c1)
        assert len(h2.requests) == 1


def test_the_server_speaks_http2_and_records_requests() -> None:
    body = samples.read("text")
    quota = FakeResponse(
        status=429, headers={"Retry-After": "2"}, error={"code": 429, "message": "Quota."}
    )
    with (
        FakeGemini(_pieces(body, 50), quota, http2=True) as fake,
        httpx.Client(http2=True, http1=False) as client,
    ):
        url = f"{fake.base_url}/models/{MODEL}:streamGenerateContent"
        with client.stream("POST", url, params={"alt": "sse"}, json=REQUEST) as response:
            assert response.http_version == "HTTP/2"
            assert response.headers["content-type"] == "text/event-stream"
            assert "content-length" not in response.headers
            pieces = list(response.iter_raw())
        assert b"".join(pieces) == body
        refused = client.post(url, json=REQUEST)
        assert refused.status_code == 429
        assert refused.headers["retry-after"] == "2"
        assert refused.json()["error"]["message"] == "Quota."
        missing = client.get(f"{fake.base_url}/files")  # not a route: 404
        assert missing.status_code == 404
        assert fake.requests[0].query == {"alt": "sse"}
        assert fake.requests[0].json == REQUEST
        assert fake.completed == 3


def test_concurrent_streams_multiplex_on_one_connection() -> None:
    body = samples.read("text")
    paced = FakeResponse(body=body, chunk_size=len(body) // 5 + 1, pause=0.05)
    seen: list[tuple[int, int | None]] = []

    async def hook(response: httpx.Response) -> None:
        extensions = response.extensions
        seen.append((id(extensions["network_stream"]), extensions.get("stream_id")))

    async def main(fake: FakeGemini) -> list[list[dict[str, Any]]]:
        async with httpx.AsyncClient(
            http2=True, http1=False, event_hooks={"response": [hook]}
        ) as client:
            return await asyncio.gather(*(_chunks(fake, client) for _ in range(40)))

    with FakeGemini(paced, http2=True) as fake:
        results = asyncio.run(main(fake))
        assert fake.completed == 40
    assert all(result == results[0] for result in results)
    assert len({connection for connection, _ in seen}) == 1  # one connection
    assert len({stream for _, stream in seen}) == 40  # forty streams on it


def test_async_disposal_mid_stream_leaves_the_other_streams_alone() -> None:
    body = samples.read("text")
    paced = FakeResponse(body=body, chunk_size=len(body) // 8 + 1, pause=0.1)

    async def main(fake: FakeGemini) -> tuple[list[Any], ...]:
        async with httpx.AsyncClient(http2=True, http1=False) as client:

            async def early() -> list[dict[str, Any]]:
                source = rxgem.stream_chat(
                    REQUEST, model=MODEL, client=client, api_key=KEY, base_url=fake.base_url
                )
                async with rxgem.aiterate(source) as chunks:
                    async for chunk in chunks:
                        return [chunk.to_dict()]
                return []

            return tuple(
                await asyncio.gather(_chunks(fake, client), early(), _chunks(fake, client))
            )

    with FakeGemini(paced, http2=True) as fake:
        first, cut, last = asyncio.run(main(fake))
    assert len(cut) == 1
    assert first == last
    assert [c["choices"][0]["finish_reason"] for c in first if c["choices"]][-1] == "stop"


def test_sync_disposal_mid_stream_leaves_the_other_streams_alone() -> None:
    # the socket every HTTP/2 stream of the connection shares is not shut down
    body = samples.read("text")
    paced = FakeResponse(body=body, chunk_size=len(body) // 8 + 1, pause=0.1)
    results: dict[str, Any] = {}

    with (
        FakeGemini(paced, http2=True) as fake,
        httpx.Client(http2=True, http1=False) as client,
    ):

        def source() -> Any:
            return rxgem.stream_chat(
                REQUEST, model=MODEL, client=client, api_key=KEY, base_url=fake.base_url
            )

        def full(name: str) -> None:
            try:
                results[name] = len(list(rxgem.iterate(source())))
            except Exception as exc:
                results[name] = exc

        def early() -> None:
            with rxgem.iterate(source()) as chunks:
                next(chunks)

        threads = [
            threading.Thread(target=full, args=("first",)),
            threading.Thread(target=early),
            threading.Thread(target=full, args=("last",)),
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
    assert results["first"] == results["last"]
    assert isinstance(results["first"], int)


def test_drop_after_resets_the_stream_not_the_connection() -> None:
    body = samples.read("text")
    dropped = FakeResponse(body=body, chunk_size=100, drop_after=250)

    async def main(fake: FakeGemini) -> tuple[Any, list[dict[str, Any]]]:
        async with httpx.AsyncClient(http2=True, http1=False) as client:
            source = rxgem.stream_chat(
                REQUEST, model=MODEL, client=client, api_key=KEY, base_url=fake.base_url
            )
            with pytest.raises(rxgem.GeminiTransportError) as caught:
                async for _ in rxgem.aiterate(source):
                    pass
            return caught.value, await _chunks(fake, client)

    good = _pieces(body, 100)
    with FakeGemini(dropped, good, http2=True) as fake:
        error, after = asyncio.run(main(fake))
    assert "RemoteProtocolError" in str(error)
    assert after
