"""Every recorded Interactions stream and object, converted to chat chunks and to Responses
events, judged by the real ``openai`` SDK (each chunk through ``ChatCompletionChunk``, each
event through the strict ``ResponseStreamEvent`` validation, the answers through its
accumulators), with the same text, calls, finish and usage as the steps say.

The expectation is read from the capture's own JSON (:func:`steps_say`), not from rxgem.
"""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from openai.types.chat import ChatCompletion as SDKCompletion
from openai.types.responses import Response as SDKResponse
from pipeline_harness import check_protocol, run, run_converter, sdk_accumulate
from responses_judge import check_sequence, sdk_final, sdk_validate
from responses_judge import run_converter as run_responses

import rxgem
from rxgem.converter import interaction_completion, interaction_response

DATA = Path(__file__).resolve().parents[1] / "data" / "interactions"
STREAMS = sorted(DATA.rglob("*.chunks.txt")) + sorted(DATA.rglob("*.sse"))
OBJECTS = sorted(DATA.rglob("*.json"))
FAILED = ("failed", "cancelled")
FINISH = {
    "requires_action": "tool_calls",
    "incomplete": "length",
    "budget_exceeded": "length",
}
RESPONSE_STATUS = {"completed": "completed", "requires_action": "completed"}

pytestmark = [
    pytest.mark.skipif(not DATA.is_dir(), reason="no recorded Interactions data"),
    pytest.mark.filterwarnings("ignore:rxgem does not know the Interactions type"),
]


def _name(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"


@dataclass
class Said:
    """What a capture's steps say: the answer's text, its calls, its status and usage."""

    text: str = ""
    calls: list[tuple[str | None, str, Any]] = field(default_factory=list)
    status: str | None = None
    total_tokens: int | None = None
    old: bool = False
    error: bool = False

    @property
    def finish(self) -> str:
        if self.status == "completed":
            return "tool_calls" if self.calls else "stop"
        return FINISH[self.status or ""]


def _texts(contents: list[dict[str, Any]] | None) -> str:
    return "".join(c.get("text") or "" for c in contents or () if c.get("type") == "text")


def _interaction(said: Said, interaction: dict[str, Any]) -> None:
    said.status = interaction.get("status")
    usage = interaction.get("usage") or (interaction.get("metadata") or {}).get("total_usage")
    said.total_tokens = (usage or {}).get("total_tokens")
    if interaction.get("outputs") is not None and interaction.get("steps") is None:
        said.old = True


def steps_say(path: Path) -> Said:
    """What the capture at ``path`` says, read from its JSON alone."""
    said = Said()
    if path.suffix == ".json":
        body = json.loads(path.read_bytes())
        _interaction(said, body)
        for step in body.get("steps") or ():
            if step["type"] == "model_output":
                said.text += _texts(step.get("content"))
            elif step["type"] == "function_call":
                said.calls.append((step.get("id"), step["name"], step.get("arguments") or {}))
        said.error = said.status in FAILED
        return said
    kinds: dict[int, str] = {}
    arguments: dict[int, str] = {}
    for line in path.read_text("utf-8").splitlines():
        data = line.removeprefix("data: ").strip()
        if not data.startswith("{"):
            continue
        event = json.loads(data)
        kind = event.get("event_type")
        if kind in ("interaction.start", "content.delta", "interaction.complete"):
            said.old = True
        elif kind == "error":
            said.error = True
        elif kind == "step.start":
            step = event["step"]
            kinds[event["index"]] = step["type"]
            if step["type"] == "model_output":
                said.text += _texts(step.get("content"))
            elif step["type"] == "function_call":
                said.calls.append((step.get("id"), step["name"], step.get("arguments") or {}))
        elif kind == "step.delta":
            delta = event["delta"]
            if delta["type"] == "text" and kinds.get(event["index"]) == "model_output":
                said.text += delta["text"]
            elif delta["type"] == "arguments_delta":
                arguments[event["index"]] = arguments.get(event["index"], "") + delta["arguments"]
        elif kind == "interaction.completed":
            _interaction(said, event["interaction"])
    fragments = iter(arguments[index] for index in sorted(arguments))
    said.calls = [
        (id_, name, json.loads(next(fragments)) if arguments and not args else args)
        for id_, name, args in said.calls
    ]
    said.error = said.error or said.status in FAILED
    return said


def test_the_recorded_data_is_here() -> None:
    assert len(STREAMS) >= 10
    assert len(OBJECTS) >= 4


@pytest.mark.parametrize("path", STREAMS, ids=_name)
def test_each_stream_converts_to_the_chunks_its_steps_say(path: Path) -> None:
    said = steps_say(path)
    body = path.read_bytes()
    options: dict[str, Any] = {"upstream": "interactions", "render_code": False}
    chunks, error = run_converter(body, **options)
    pieces = [body[i : i + 7] for i in range(0, len(body), 7)]
    for other, failure in (run(body, **options), run(pieces, **options)):  # the operator
        assert other == chunks
        assert repr(failure) == repr(error)
    if said.old:
        assert isinstance(error, rxgem.MalformedStreamError)
        assert "June 2026" in str(error)
        return
    if said.error:
        assert isinstance(error, rxgem.RxGemError)
    else:
        assert error is None
    check_protocol(chunks)
    final = sdk_accumulate(chunks, [name for _, name, _ in said.calls])
    message = final.choices[0].message
    assert (message.content or "") == said.text
    calls = [
        (c.id, c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls or ()
    ]
    assert calls == said.calls
    if said.error:
        return
    assert final.choices[0].finish_reason == said.finish
    assert final.usage is not None
    assert final.usage.total_tokens == said.total_tokens


@pytest.mark.parametrize("path", STREAMS, ids=_name)
def test_each_stream_converts_to_the_responses_events_its_steps_say(path: Path) -> None:
    said = steps_say(path)
    events, error = run_responses(path.read_bytes(), upstream="interactions")
    if said.old:
        assert isinstance(error, rxgem.MalformedStreamError)
        return
    sdk_validate(events)
    terminal = check_sequence(events)
    final = sdk_final(events)
    text = "".join(
        part.text
        for item in final.output
        if item.type == "message"
        for part in item.content
        if part.type == "output_text"
    )
    assert text == said.text
    calls = [
        (item.call_id, item.name, json.loads(item.arguments))
        for item in final.output
        if item.type == "function_call"
    ]
    assert calls == said.calls
    if said.error:
        assert isinstance(error, rxgem.RxGemError)
        assert terminal["status"] == "failed"
        return
    assert error is None
    assert terminal["status"] == RESPONSE_STATUS.get(said.status or "", "incomplete")
    assert terminal["usage"]["total_tokens"] == said.total_tokens


@pytest.mark.parametrize("path", OBJECTS, ids=_name)
def test_each_object_assembles_into_what_its_steps_say(path: Path) -> None:
    said = steps_say(path)
    body = path.read_bytes()
    if said.old:
        for convert in (interaction_completion, interaction_response):
            with pytest.raises(rxgem.MalformedStreamError, match="June 2026"):
                convert(body)
        return
    if said.error:
        with pytest.raises(rxgem.RxGemError):
            interaction_completion(body)
        assert interaction_response(body).status == "failed"
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        completion = interaction_completion(body, model="m")
        response = interaction_response(body)
    sdk = SDKCompletion.model_validate(completion.to_dict())
    assert sdk.model == "m"
    assert (sdk.choices[0].message.content or "") == said.text
    calls = [
        (c.id, c.function.name, json.loads(c.function.arguments))
        for c in sdk.choices[0].message.tool_calls or ()
    ]
    assert calls == said.calls
    assert sdk.choices[0].finish_reason == said.finish
    assert sdk.usage is not None
    assert sdk.usage.total_tokens == said.total_tokens
    answer = SDKResponse.model_validate(response.to_dict())
    assert answer.output_text == said.text
    assert answer.status == RESPONSE_STATUS.get(said.status or "", "incomplete")
    assert [(i.call_id, i.name) for i in answer.output if i.type == "function_call"] == [
        (id_, name) for id_, name, _ in said.calls
    ]


def _ended_badly(status: str) -> bytes:
    """An Interaction object that ``failed`` (or was ``cancelled``) after some output."""
    body = {
        "id": "v1_bad",
        "object": "interaction",
        "status": status,
        "model": "gemini-3-flash-preview",
        "created": "2026-12-01T00:00:00Z",
        "steps": [
            {"type": "thought", "signature": "c2ln"},
            {"type": "model_output", "content": [{"type": "text", "text": "Partial answer"}]},
            {"type": "function_call", "id": "c1", "name": "lookup", "arguments": {"q": 1}},
        ],
        "errors": [{"code": "INTERNAL", "message": "the model stopped"}],
    }
    return json.dumps(body).encode()


@pytest.mark.parametrize("status", ["failed", "cancelled"])
def test_a_failed_object_is_a_response_of_that_status_with_its_output(status: str) -> None:
    response = interaction_response(_ended_badly(status))
    sdk = SDKResponse.model_validate(response.to_dict())
    assert sdk.status == status
    output = [item.to_dict() for item in response.output]
    texts = [
        part["text"] for item in output if item["type"] == "message" for part in item["content"]
    ]
    assert texts == ["Partial answer"]
    assert [(i["call_id"], i["arguments"]) for i in output if i["type"] == "function_call"] == [
        ("c1", '{"q":1}')
    ]
    if status == "failed":
        assert sdk.error is not None
        assert "the model stopped" in sdk.error.message
    else:
        assert sdk.error is None


@pytest.mark.parametrize("status", ["failed", "cancelled"])
def test_a_failed_object_as_chat_raises_its_error_after_its_chunks(status: str) -> None:
    with pytest.raises(rxgem.GeminiAPIError) as caught:
        interaction_completion(_ended_badly(status))
    assert caught.value.status == status
    with pytest.raises(rxgem.GeminiAPIError) as owed:
        rxgem.converter.interaction_chunks(_ended_badly(status))
    chunks = list(owed.value.chunks)
    content = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert content == "Partial answer"
    check_protocol(chunks)


def test_a_failed_object_with_no_output_raises_its_error() -> None:
    body = {"id": "v1", "status": "failed", "steps": [], "errors": [{"message": "boom"}]}
    with pytest.raises(rxgem.GeminiAPIError, match="boom"):
        interaction_response(json.dumps(body).encode())
