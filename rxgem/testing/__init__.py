"""Test helpers for code that streams from Gemini: a fake server, marbles, an OpenAI checker.

Three kits:

- :class:`FakeGemini`: a fake ``streamGenerateContent`` and Interactions server (below).
- Marbles (for tests of your own operators): short constructors of Gemini events
  (:func:`event` of :func:`text`, :func:`thought`, :func:`call`, :func:`finish`,
  :func:`usage`, …; :func:`response` for the typed form) and of OpenAI chunks
  (:func:`chunk`, :func:`tool_delta`, :func:`usage_chunk`), :func:`run_marbles`
  to run an operator on a marble source under virtual time (it returns a
  :class:`MarbleOutput`, a list of :class:`Marble`), and
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
(:func:`text_step`, :func:`thought_step`, :func:`call_step`, :func:`search_steps`,
:func:`code_steps`), with its status, usage, error event and faults (``cut_after``,
``clean_cuts``, ``pace``, ``delay``); :func:`interaction_stream` is the body it streams.

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

from typing import Any

from ..transport import CASSETTE_FORMAT, cassette_bytes, cassette_json, read_cassette
from ._assert import RULES, StreamRuleError, assert_openai_stream
from ._cassettes import CassetteShelf, cassette_events, cassette_marbles
from ._fake_gemini import FakeGemini, ReceivedRequest
from ._fake_interactions import InteractionCall
from ._fake_response import FakeResponse
from ._fake_scenarios import SCENARIOS, choose_scenario, schema_value
from ._gemini_builders import (
    MODEL,
    RESPONSE_ID,
    Piece,
    api_error,
    blocked,
    call,
    call_end,
    call_start,
    candidate,
    candidate_fields,
    code,
    code_result,
    event,
    event_json,
    file,
    finish,
    media,
    partial_args,
    response,
    text,
    thought,
    usage,
)
from ._gemini_validation import gemini_request_problems, invalid_argument
from ._interaction_script import (
    THOUGHT_SIGNATURE,
    FakeInteraction,
    ScriptedStep,
    call_step,
    code_steps,
    interaction_frame,
    interaction_object,
    interaction_stream,
    interaction_stream_events,
    interaction_usage,
    search_steps,
    text_step,
    thought_step,
    url_citation,
)
from ._interactions_validation import check_interaction_body
from ._marbles import Marble, MarbleOutput, expect_marbles, run_marbles
from ._openai_builders import CHUNK_ID, chunk, tool_delta, usage_chunk

__all__ = [
    "CASSETTE_FORMAT",
    "CHUNK_ID",
    "MODEL",
    "RESPONSE_ID",
    "RULES",
    "SCENARIOS",
    "THOUGHT_SIGNATURE",
    "CassetteShelf",
    "FakeGemini",
    "FakeInteraction",
    "FakeResponse",
    "InteractionCall",
    "Marble",
    "MarbleOutput",
    "Piece",
    "ReceivedRequest",
    "ScriptedStep",
    "StreamRuleError",
    "api_error",
    "assert_openai_stream",
    "blocked",
    "call",
    "call_end",
    "call_start",
    "call_step",
    "candidate",
    "candidate_fields",
    "cassette_bytes",
    "cassette_events",
    "cassette_json",
    "cassette_marbles",
    "check_interaction_body",
    "choose_scenario",
    "chunk",
    "code",
    "code_result",
    "code_steps",
    "event",
    "event_json",
    "expect_marbles",
    "file",
    "finish",
    "gemini_request_problems",
    "interaction_frame",
    "interaction_object",
    "interaction_stream",
    "interaction_stream_events",
    "interaction_usage",
    "invalid_argument",
    "media",
    "partial_args",
    "read_cassette",
    "response",
    "run_marbles",
    "schema_value",
    "search_steps",
    "text",
    "text_step",
    "thought",
    "thought_step",
    "tool_delta",
    "url_citation",
    "usage",
    "usage_chunk",
]


def __getattr__(name: str) -> Any:
    # The old name of interaction_stream_events, kept for one release:
    # `rxgem.converter.interaction_events` is an Interaction object's Responses events,
    # and one public name has one meaning.
    if name == "interaction_events":
        import warnings

        warnings.warn(
            "rxgem.testing.interaction_events is deprecated:"
            " it is now rxgem.testing.interaction_stream_events",
            DeprecationWarning,
            stacklevel=2,
        )
        return interaction_stream_events
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
