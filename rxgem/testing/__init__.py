"""Test helpers for code that streams from Gemini: a fake ``streamGenerateContent`` server.

:class:`FakeGemini` is a real HTTP/1.1 server on ``127.0.0.1`` (an ephemeral port)
that answers ``POST /v1beta/models/{model}:streamGenerateContent`` with capture
bytes, the way Gemini does: ``Transfer-Encoding: chunked``, one HTTP chunk per
piece, with optional delays, slow trickles, dropped connections, HTTP errors and
raw mid-stream errors (see :class:`FakeResponse`). It records every request
(:class:`RecordedRequest`) and notices clients that go away mid-stream. It uses
only the standard library, and ``close()`` (or leaving the ``with`` /
``async with`` block) stops it and joins all its threads.

Example (a complete pytest test)::

    import httpx

    from rxgem import samples
    from rxgem.testing import FakeGemini, FakeResponse


    def test_streams_a_capture() -> None:
        capture = samples.read("text")
        slow = FakeResponse(body=capture, chunk_size=64, pause=0.01)
        quota = FakeResponse(
            status=429,
            headers={"Retry-After": "2"},
            error={"code": 429, "message": "Quota exceeded.", "status": "RESOURCE_EXHAUSTED"},
        )
        with FakeGemini(slow, quota) as fake, httpx.Client(base_url=fake.base_url) as client:
            url = "/models/gemini-2.5-flash:streamGenerateContent"
            request = {"contents": [{"role": "user", "parts": [{"text": "Hi"}]}]}
            with client.stream(
                "POST",
                url,
                params={"alt": "sse"},
                headers={"x-goog-api-key": "test-key"},
                json=request,
            ) as response:
                assert response.headers["content-type"] == "text/event-stream"
                pieces = list(response.iter_raw())
            assert b"".join(pieces) == capture
            assert len(pieces) > 1

            second = client.post(url, params={"alt": "sse"}, json=request)
            assert second.status_code == 429
            assert second.headers["retry-after"] == "2"
            assert second.json()["error"]["status"] == "RESOURCE_EXHAUSTED"

            first = fake.requests[0]
            assert first.path == "/v1beta/models/gemini-2.5-flash:streamGenerateContent"
            assert first.query == {"alt": "sse"}
            assert first.headers["x-goog-api-key"] == "test-key"
            assert first.json == request
            assert fake.completed == 2
"""

from ._fake_gemini import FakeGemini, FakeResponse, RecordedRequest

__all__ = ["FakeGemini", "FakeResponse", "RecordedRequest"]
