"""FakeGemini judges thought signatures as Gemini does, and counts what came back.

Its scenarios sign with signatures bound to the part and the model (an HMAC under a key
of each fake); on a Gemini 3 model a strict fake refuses a made-up, moved or another
model's signature with Google's ``Corrupted thought signature.``, and a current-turn call
without one with Google's missing-signature 400. Strict or not, it counts the calls that
came back with Google's dummy (``placeholder_signatures``) and the calls it signed that
came back bare (``lost_signatures``).
"""

from __future__ import annotations

import base64
import copy
import json
from typing import Any

import httpx
import pytest

from rxgem.testing import FakeGemini, FakeInteraction, FakeResponse, call, event
from rxgem.testing._fake_signatures import CORRUPTED, DUMMY_SIGNATURES
from rxgem.testing._interaction_script import call_step, thought_step

G3 = "gemini-3-flash-preview"
G3_PRO = "gemini-3-pro-preview"
G25 = "gemini-2.5-flash"
KEY = {"x-goog-api-key": "test-key"}
CITY = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
    "required": ["city", "days"],
}
TOOLS = [
    {
        "functionDeclarations": [
            {"name": "weather", "parameters": CITY},
            {"name": "time", "parameters": CITY},
        ]
    }
]
ASK = {"role": "user", "parts": [{"text": "Weather in Paris?"}]}
THANKS = {"role": "user", "parts": [{"text": "Thanks. And tomorrow?"}]}


def post(fake: FakeGemini, model: str, body: dict[str, Any]) -> httpx.Response:
    url = f"{fake.base_url}/models/{model}:streamGenerateContent?alt=sse"
    return httpx.post(url, json=body, headers=KEY, timeout=10)


def parts_of(response: httpx.Response) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for line in response.content.splitlines():
        if line.startswith(b"data:"):
            for candidate in json.loads(line[5:]).get("candidates") or ():
                parts += candidate["content"]["parts"]
    return parts


def answered(call_part: dict[str, Any]) -> list[dict[str, Any]]:
    """The model's call part and the user's answer to it, as a client sends them back."""
    name = call_part["functionCall"]["name"]
    result = {"functionResponse": {"name": name, "response": {"ok": True}}}
    if "id" in call_part["functionCall"]:
        result["functionResponse"]["id"] = call_part["functionCall"]["id"]
    return [{"role": "model", "parts": [call_part]}, {"role": "user", "parts": [result]}]


def first_call(fake: FakeGemini, model: str = G3, tools: Any = TOOLS) -> dict[str, Any]:
    """The fake's scenario call (with its signature) to a first question."""
    reply = post(fake, model, {"contents": [ASK], "tools": tools})
    assert reply.status_code == 200, reply.text
    (part,) = parts_of(reply)
    assert "functionCall" in part
    return part


def error_of(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 400, response.text
    error: dict[str, Any] = response.json()["error"]
    assert (error["code"], error["status"]) == (400, "INVALID_ARGUMENT")
    return error


# -------------------------------------------------------------------- issuing


def test_scenario_signatures_are_base64_distinct_per_part_and_per_fake() -> None:
    with FakeGemini() as one, FakeGemini() as other:
        signatures = [first_call(one)["thoughtSignature"] for _ in range(2)]
        signatures.append(first_call(other)["thoughtSignature"])
        config = {"thinkingConfig": {"includeThoughts": True}}
        body = {"contents": [ASK], "generationConfig": config}
        text = next(p for p in parts_of(post(one, G3, body)) if "thoughtSignature" in p)
    signatures.append(text["thoughtSignature"])
    assert len(set(signatures)) == 4
    for signature in signatures:
        assert len(base64.b64decode(signature, validate=True)) >= 32


# -------------------------------------------------------------------- generateContent


def test_the_signature_it_issued_comes_back_and_nothing_is_counted() -> None:
    with FakeGemini(strict=True) as fake:
        call = first_call(fake)
        reply = post(fake, G3, {"contents": [ASK, *answered(call)], "tools": TOOLS})
        assert reply.status_code == 200, reply.text
        assert (fake.placeholder_signatures, fake.lost_signatures) == (0, 0)
        assert fake.signature_problems == []


def test_arguments_given_back_as_javascript_writes_numbers_still_match() -> None:
    with FakeGemini(strict=True) as fake:
        call = first_call(fake)
        args = call["functionCall"]["args"]
        args["days"] = float(args["days"])  # 2.0 in Python, 2 in JavaScript
        args = dict(reversed(list(args.items())))  # key order is no part of the call
        call["functionCall"]["args"] = args
        reply = post(fake, G3, {"contents": [ASK, *answered(call)], "tools": TOOLS})
        assert reply.status_code == 200, reply.text
        assert fake.signature_problems == []


@pytest.mark.parametrize("dummy", sorted(DUMMY_SIGNATURES))
def test_googles_dummies_are_accepted_and_counted(dummy: str) -> None:
    with FakeGemini(strict=True) as fake:
        call = first_call(fake)
        call["thoughtSignature"] = dummy
        reply = post(fake, G3, {"contents": [ASK, *answered(call)], "tools": TOOLS})
        assert reply.status_code == 200, reply.text
        assert (fake.placeholder_signatures, fake.lost_signatures) == (1, 0)
        (problem,) = fake.signature_problems
        assert "call `weather`" in problem
        assert dummy in problem


def test_a_call_it_signed_coming_back_bare_is_refused_now_and_counted_later() -> None:
    with FakeGemini(strict=True) as fake:
        call = first_call(fake)
        del call["thoughtSignature"]
        current = {"contents": [ASK, *answered(call)], "tools": TOOLS}
        assert "missing a thought_signature" in error_of(post(fake, G3, current))["message"]
        assert fake.lost_signatures == 1
        earlier = {"contents": [ASK, *answered(call), THANKS], "tools": TOOLS}
        reply = post(fake, G3, earlier)  # an earlier turn: Gemini accepts it bare
        assert reply.status_code == 200, reply.text
        assert (fake.placeholder_signatures, fake.lost_signatures) == (0, 2)
        assert all("without its signature" in p for p in fake.signature_problems)


def test_counting_works_without_strict_and_on_gemini_2() -> None:
    with FakeGemini() as fake:
        for model in (G3, G25):
            call = first_call(fake, model)
            bare = copy.deepcopy(call)
            del bare["thoughtSignature"]
            dummy = {**call, "thoughtSignature": "skip_thought_signature_validator"}
            contents = [ASK, *answered(bare), THANKS, *answered(dummy)]
            reply = post(fake, model, {"contents": contents, "tools": TOOLS})
            assert reply.status_code == 200, reply.text
        assert (fake.placeholder_signatures, fake.lost_signatures) == (2, 2)


def _forged(call: dict[str, Any]) -> None:
    call["thoughtSignature"] = "c2NlbmFyaW8tc2lnbmF0dXJl"


def _altered(call: dict[str, Any]) -> None:
    raw = bytearray(base64.b64decode(call["thoughtSignature"]))
    raw[12] ^= 1
    call["thoughtSignature"] = base64.b64encode(raw).decode()


def _other_arguments(call: dict[str, Any]) -> None:
    call["functionCall"]["args"]["city"] += " (not what was signed)"


def _other_function(call: dict[str, Any]) -> None:
    call["functionCall"]["name"] = "time"


BAD = [_forged, _altered, _other_arguments, _other_function]


@pytest.mark.parametrize("spoil", BAD, ids=[f.__name__.strip("_") for f in BAD])
@pytest.mark.parametrize("turn", ["current", "earlier"])
def test_a_signature_not_issued_for_that_call_is_corrupted_on_any_turn(
    spoil: Any, turn: str
) -> None:
    with FakeGemini(strict=True) as fake:
        call = first_call(fake)
        spoil(call)
        contents = [ASK, *answered(call)] + ([THANKS] if turn == "earlier" else [])
        assert error_of(post(fake, G3, {"contents": contents, "tools": TOOLS})) == {
            "code": 400,
            "message": CORRUPTED,
            "status": "INVALID_ARGUMENT",
        }
        assert len(fake.signature_problems) == 1
        good = first_call(fake)
        assert post(fake, G3, {"contents": [ASK, *answered(good)], "tools": TOOLS}).is_success


def test_a_signature_of_another_model_is_corrupted() -> None:
    with FakeGemini(strict=True) as fake:
        call = first_call(fake, G3_PRO)
        reply = post(fake, G3, {"contents": [ASK, *answered(call)], "tools": TOOLS})
        assert error_of(reply)["message"] == CORRUPTED
        assert fake.signature_problems == [
            f"{G3}: contents[1].parts[0]: call `weather` came back with a signature issued"
            f" for another model ({G3})"
        ]


def test_a_text_signature_is_bound_to_the_model_not_the_text() -> None:
    thinking = {"generationConfig": {"thinkingConfig": {"includeThoughts": True}}}
    with FakeGemini(strict=True) as fake:
        parts = parts_of(post(fake, G3, {"contents": [ASK], **thinking}))
        signature = next(p["thoughtSignature"] for p in parts if "thoughtSignature" in p)
        said = "".join(p["text"] for p in parts if not p.get("thought"))
        model = {"role": "model", "parts": [{"text": said, "thoughtSignature": signature}]}
        assert post(fake, G3, {"contents": [ASK, model, THANKS]}).is_success
        assert error_of(post(fake, G3_PRO, {"contents": [ASK, model, THANKS]}))["message"] == (
            CORRUPTED
        )


def test_forged_signatures_are_refused_only_on_gemini_3_and_only_when_strict() -> None:
    call = {
        "functionCall": {"name": "weather", "args": {"city": "Paris", "days": 1}},
        "thoughtSignature": "bm90LWlzc3VlZA==",
    }
    body = {"contents": [ASK, *answered(call)], "tools": TOOLS}
    with FakeGemini(strict=True) as strict, FakeGemini() as lenient:
        assert post(strict, G25, body).is_success
        assert post(lenient, G3, body).is_success
        assert error_of(post(strict, G3, body))["message"] == CORRUPTED
        assert lenient.signature_problems == [
            f"{G3}: contents[1].parts[0]: call `weather` came back with a signature the fake"
            f" did not issue ({G3})"
        ]


def test_signatures_in_scripted_bodies_count_as_issued_once_sent() -> None:
    scripted = event(call("weather", sig="c2NyaXB0ZWQ=", city="Oslo", days=2), model=G3)
    back = {
        "functionCall": {"name": "weather", "args": {"city": "Oslo", "days": 2}},
        "thoughtSignature": "c2NyaXB0ZWQ=",
    }
    body = {"contents": [ASK, *answered(back)], "tools": TOOLS}
    with FakeGemini(FakeResponse(body=scripted), strict=True) as fake:
        assert error_of(post(fake, G3, body))["message"] == CORRUPTED  # not sent yet
        assert post(fake, G3, {"contents": [ASK], "tools": TOOLS}).is_success
        assert post(fake, G3, body).is_success
        del back["thoughtSignature"]
        post(fake, G3, {"contents": [ASK, *answered(back), THANKS], "tools": TOOLS})
        assert fake.lost_signatures == 1


# -------------------------------------------------------------------- Interactions


def interaction_input(*model_steps: dict[str, Any]) -> list[dict[str, Any]]:
    ask = {"type": "user_input", "content": [{"type": "text", "text": "Weather in Paris?"}]}
    calls = [s for s in model_steps if s["type"] == "function_call"]
    results = [
        {"type": "function_result", "call_id": s["id"], "name": s["name"], "result": "sunny"}
        for s in calls
    ]
    return [ask, *model_steps, *results]


def create(fake: FakeGemini, body: dict[str, Any]) -> httpx.Response:
    return httpx.post(f"{fake.base_url}/interactions", json=body, headers=KEY, timeout=10)


ITOOLS = [{"type": "function", "name": "weather", "parameters": CITY}]


def first_steps(fake: FakeGemini, model: str = G3) -> list[dict[str, Any]]:
    reply = create(fake, {"model": model, "input": "Weather in Paris?", "tools": ITOOLS})
    assert reply.status_code == 200, reply.text
    steps: list[dict[str, Any]] = reply.json()["steps"]
    assert [s["type"] for s in steps] == ["thought", "function_call"]
    return steps


def test_interactions_thought_signs_the_call_after_it() -> None:
    with FakeGemini(strict=True) as fake:
        thought, call = first_steps(fake)
        body = {"model": G3, "input": interaction_input(thought, call), "tools": ITOOLS}
        reply = create(fake, body)
        assert reply.status_code == 200, reply.text
        assert (fake.placeholder_signatures, fake.lost_signatures) == (0, 0)


def test_interactions_a_stateless_call_without_its_thought_is_refused() -> None:
    with FakeGemini(strict=True) as fake:
        _, call = first_steps(fake)
        body = {"model": G3, "input": interaction_input(call), "tools": ITOOLS}
        error = error_of(create(fake, body))
        assert error["message"].startswith("input[1]: Function call is missing a thought_sig")
        assert fake.lost_signatures == 1


def test_interactions_a_wrong_or_dummy_thought_signature() -> None:
    with FakeGemini(strict=True) as fake:
        thought, call = first_steps(fake)
        other_thought, _ = first_steps(fake, G3_PRO)
        for signed_by in (other_thought, {"type": "thought", "signature": "Zm9yZ2Vk"}):
            body = {"model": G3, "input": interaction_input(signed_by, call), "tools": ITOOLS}
            assert error_of(create(fake, body))["message"] == CORRUPTED
        moved = {**call, "arguments": {**call["arguments"], "days": 99}}
        body = {"model": G3, "input": interaction_input(thought, moved), "tools": ITOOLS}
        assert error_of(create(fake, body))["message"] == CORRUPTED
        dummy = {"type": "thought", "signature": "skip_thought_signature_validator"}
        body = {"model": G3, "input": interaction_input(dummy, call), "tools": ITOOLS}
        assert create(fake, body).status_code == 200
        assert fake.placeholder_signatures == 1


def test_interactions_with_a_previous_interaction_google_holds_them() -> None:
    with FakeGemini(strict=True) as fake:
        reply = create(fake, {"model": G3, "input": "Weather in Paris?", "tools": ITOOLS})
        _, call = reply.json()["steps"]
        result = {"type": "function_result", "call_id": call["id"], "result": "sunny"}
        body = {
            "model": G3,
            "previous_interaction_id": reply.json()["id"],
            "input": [call, result],
            "tools": ITOOLS,
        }
        assert create(fake, body).status_code == 200
        assert (fake.lost_signatures, fake.signature_problems) == (0, [])


def test_interactions_scripted_thought_signatures_count_as_issued_once_sent() -> None:
    script = FakeInteraction(
        steps=(thought_step(signature="c2NyaXB0"), call_step("weather", {"city": "Rome"}, id="k"))
    )
    call = {"type": "function_call", "id": "k", "name": "weather", "arguments": {"city": "Rome"}}
    thought = {"type": "thought", "signature": "c2NyaXB0"}
    body = {"model": G3, "input": interaction_input(thought, call), "tools": ITOOLS}
    with FakeGemini(interactions=[script], strict=True) as fake:
        assert error_of(create(fake, body))["message"] == CORRUPTED
        assert create(fake, {"model": G3, "input": "Hi", "tools": ITOOLS}).status_code == 200
        assert create(fake, body).status_code == 200
        body["input"] = interaction_input(call)
        body["previous_interaction_id"] = "v1_fake-1"
        assert create(fake, body).status_code == 200  # Google holds them: no lost count
        assert fake.lost_signatures == 0


def test_the_unsigned_calls_of_a_parallel_step_are_not_lost() -> None:
    with FakeGemini(scenario="parallel-calls", strict=True) as fake:
        weather = [{"functionDeclarations": [{"name": "weather", "parameters": CITY}]}]
        first, second = parts_of(post(fake, G3, {"contents": [ASK], "tools": weather}))
        assert first["functionCall"] == second["functionCall"]  # the same call, twice
        assert "thoughtSignature" not in second
        results = [answered(part)[1]["parts"][0] for part in (first, second)]
        model = {"role": "model", "parts": [first, second]}
        contents = [ASK, model, {"role": "user", "parts": results}]
        assert post(fake, G3, {"contents": contents, "tools": weather}).is_success
        assert (fake.lost_signatures, fake.signature_problems) == (0, [])
