"""Test helpers for code that streams from Gemini: a fake server, marbles, an OpenAI checker.

Three kits:

- :class:`FakeGemini`: a fake ``streamGenerateContent`` and Interactions server (below).
- Marbles (for tests of your own operators): short constructors of Gemini events
  (:func:`event` of :func:`text`, :func:`thought`, :func:`call`, :func:`finish`,
  :func:`usage`, …; :func:`response` for the typed form) and of OpenAI chunks
  (:func:`chunk`), :func:`run_marbles` to run an operator on a marble source under
  virtual time (it returns a list of marbles that can explain a difference), and
  :func:`expect_marbles` for the expected side.
- :func:`assert_openai_stream`: checks every rule of an OpenAI chunk stream (and
  feeds it to the ``openai`` SDK when installed); a failure names the rule.

Beside them, :func:`gemini_request_problems` and :func:`check_interaction_body` say what
Google refuses in a ``generateContent`` request and an Interactions create body (sans-IO).

Example (a complete pytest test of the marble kit)::

    import rxgem
    from rxgem.testing import (
        assert_openai_stream, call, event, finish, run_marbles, text, usage
    )


    def test_a_resent_call_stays_one_call() -> None:
        lookup = {
            "a": event(text("Looking.")),
            "b": event(call("search", q="rx")),
            "c": event(call("search", q="rx operators")),  # the same call, grown
            "z": event(finish("STOP"), usage(12, 9)),
        }
        output = run_marbles(rxgem.gemini_to_openai(), "-a-b-c-z-|", lookup)
        assert output.completed
        result = assert_openai_stream(output.values, tools=["search"])
        (call_,) = result["choices"][0]["message"]["tool_calls"]
        assert call_["function"]["arguments"] == '{"q":"rx operators"}'

The fake server:

:class:`FakeGemini` is a real HTTP/1.1 server on ``127.0.0.1`` (an ephemeral port)
that answers ``POST /v1beta/models/{model}:streamGenerateContent`` with capture
bytes, the way Gemini does: ``Transfer-Encoding: chunked``, one HTTP chunk per
piece, with optional delays, slow trickles, dropped connections, HTTP errors and
raw mid-stream errors (see :class:`FakeResponse`). It records every request
(:class:`ReceivedRequest`) and notices clients that go away mid-stream. It uses
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

The Interactions API:

``FakeGemini(interactions=[...])`` also serves Google's Interactions API: ``POST
/v1beta/interactions`` (an SSE stream of ``event:``/``id:``/``data:`` frames ending with
``data: [DONE]``, or the Interaction object), ``GET /v1beta/interactions/{id}`` (the
object; ``?stream=true&last_event_id=X`` replays the events after X), ``POST
.../{id}/cancel``, ``DELETE``, background runs, ``store: false`` and
``previous_interaction_id``. Each run is a :class:`FakeInteraction` made of steps
(:func:`text_step`, :func:`thought_step`, :func:`call_step`), with its status, usage, error
event and faults (``cut_after``, ``clean_cuts``, ``pace``, ``delay``); :func:`interaction_stream`
is the body it streams.

Example (a complete pytest test of the Interactions fake)::

    import httpx

    from rxgem.testing import FakeGemini, FakeInteraction, call_step, interaction_stream
    from rxgem.testing import text_step


    def test_a_cut_stream_is_read_again_after_its_last_event() -> None:
        run = FakeInteraction(
            steps=(text_step("Let me look.", pieces=2), call_step("lookup", {"q": "rx"}, id="c1")),
            cut_after=(3,),  # the first stream stops after three events
            clean_cuts=True,  # as a body that just ends (the default drops the connection)
        )
        with FakeGemini(interactions=[run]) as fake, httpx.Client(base_url=fake.base_url) as http:
            body = {"model": "gemini-3-flash-preview", "input": "Hi", "stream": True}
            first = http.post("/interactions", json=body).text
            last_id = [line for line in first.splitlines() if line.startswith("id: ")][-1][4:]
            params = {"stream": "true", "last_event_id": last_id}
            rest = http.get("/interactions/v1_fake-1", params=params).text
            assert (first + rest).encode() == interaction_stream(run)
            stored = fake.interaction("v1_fake-1")
            assert stored is not None and stored["status"] == "requires_action"
"""

import importlib
from typing import Any

from ._assert import assert_openai_stream
from ._cassettes import cassette_marbles
from ._fake_gemini import FakeGemini, ReceivedRequest
from ._fake_response import FakeResponse
from ._fake_scenarios import SCENARIOS, schema_value
from ._gemini_builders import (
    api_error,
    blocked,
    call,
    call_end,
    call_start,
    event,
    finish,
    partial_args,
    response,
    text,
    thought,
    usage,
)
from ._gemini_validation import gemini_request_problems
from ._interaction_script import (
    FakeInteraction,
    call_step,
    interaction_stream,
    text_step,
    thought_step,
)
from ._interactions_validation import check_interaction_body

# `Marble` and `MarbleOutput`, not in `__all__`: the types of what `run_marbles` returns,
# for rxgem's pytest plugin.
from ._marbles import Marble as Marble
from ._marbles import MarbleOutput as MarbleOutput
from ._marbles import expect_marbles, run_marbles
from ._openai_builders import chunk

__all__ = [
    "SCENARIOS",
    "FakeGemini",
    "FakeInteraction",
    "FakeResponse",
    "ReceivedRequest",
    "api_error",
    "assert_openai_stream",
    "blocked",
    "call",
    "call_end",
    "call_start",
    "call_step",
    "cassette_marbles",
    "check_interaction_body",
    "chunk",
    "event",
    "expect_marbles",
    "finish",
    "gemini_request_problems",
    "interaction_stream",
    "partial_args",
    "response",
    "run_marbles",
    "schema_value",
    "text",
    "text_step",
    "thought",
    "thought_step",
    "usage",
]

_RETIRED = {
    "CASSETTE_FORMAT": "..transport",
    "cassette_bytes": "..transport",
    "cassette_json": "..transport",
    "read_cassette": "..transport",
    "RULES": "._assert",
    "StreamRuleError": "._assert",
    "CassetteShelf": "._cassettes",
    "cassette_events": "._cassettes",
    "InteractionCall": "._fake_interactions",
    "choose_scenario": "._fake_scenarios",
    "MODEL": "._gemini_builders",
    "RESPONSE_ID": "._gemini_builders",
    "Piece": "._gemini_builders",
    "candidate": "._gemini_builders",
    "candidate_fields": "._gemini_builders",
    "code": "._gemini_builders",
    "code_result": "._gemini_builders",
    "event_json": "._gemini_builders",
    "file": "._gemini_builders",
    "media": "._gemini_builders",
    "invalid_argument": "._gemini_validation",
    "THOUGHT_SIGNATURE": "._interaction_script",
    "ScriptedStep": "._interaction_script",
    "code_steps": "._interaction_script",
    "interaction_frame": "._interaction_script",
    "interaction_object": "._interaction_script",
    "interaction_stream_events": "._interaction_script",
    "interaction_usage": "._interaction_script",
    "search_steps": "._interaction_script",
    "url_citation": "._interaction_script",
    "CHUNK_ID": "._openai_builders",
    "tool_delta": "._openai_builders",
    "usage_chunk": "._openai_builders",
}
"""Names that left the public surface (CHANGELOG.md): still found here, with a warning, for
one release. ``interaction_events`` is the old name of ``interaction_stream_events``."""


def __getattr__(name: str) -> Any:
    if name in _RETIRED or name == "interaction_events":
        import warnings

        home = "interaction_stream_events" if name == "interaction_events" else name
        warnings.warn(
            f"rxgem.testing.{name} is deprecated: it leaves rxgem's public names"
            " in the next release (see CHANGELOG.md)",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module(_RETIRED[home], __name__), home)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
