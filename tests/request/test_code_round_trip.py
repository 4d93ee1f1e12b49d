"""Code Gemini ran → rxgem's ``code_interpreter_call`` output item → the openai SDK's
final Response → the client's next request (a stateless client sends ``output`` back).

On ``generateContent`` the item goes back as the model turn's ``executableCode`` and
``codeExecutionResult`` parts as Gemini sent them, signatures included, in their place;
on Interactions as its ``code_execution_call``/``_result`` steps when the parts have
Google's ids (the Interactions upstream's), judged by google-genai's strict types."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest
from interactions_judge import strict_problems
from pipeline_harness import run_converter as run_chat
from pipeline_harness import sdk_accumulate
from responses_judge import run_converter, sdk_final

from rxgem import InvalidRequestError
from rxgem.request import (
    UnsupportedWarning,
    chat_to_interaction,
    responses_to_gemini_request,
    responses_to_interaction,
)
from rxgem.samples import read
from rxgem.testing import (
    FakeInteraction,
    check_interaction_body,
    event,
    finish,
    gemini_request_problems,
    interaction_stream,
    text,
    text_step,
)
from rxgem.testing._gemini_builders import code, code_result
from rxgem.testing._interaction_script import ScriptedStep

types = pytest.importorskip(
    "google.genai.types", reason="google-genai is missing (pip install google-genai)"
)

RECORDED = Path(__file__).resolve().parents[1] / "data" / "interactions" / "own"
G3 = "gemini-3-flash-preview"
SIG_CODE = "c2lnLWNvZGU="
SIG_RESULT = "c2lnLXJlc3VsdA=="
SIG_CE = "c2lnLWNl"
SIG_CR = "c2lnLWNy"


def output_of(data: bytes, **options: Any) -> list[dict[str, Any]]:
    """The final Response's ``output`` the openai SDK accumulated, as the client keeps it."""
    events, error = run_converter(data, **options)
    assert error is None
    return [item.to_dict() for item in sdk_final(events).output]


def turn(output: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"role": "user", "content": "Go."}, *output, {"role": "user", "content": "More."}]


def model_parts(body: dict[str, Any], model: str) -> list[dict[str, Any]]:
    """The one model content of ``body``, after checking that Gemini would take it."""
    assert gemini_request_problems(body, model=model) == []
    for content in body["contents"]:
        types.Content.model_validate(content)  # every field one Gemini has (extra: forbid)
    roles = [content["role"] for content in body["contents"]]
    assert roles == ["user", "model", "user"]
    parts: list[dict[str, Any]] = body["contents"][1]["parts"]
    return parts


def valid_steps(body: dict[str, Any]) -> list[dict[str, Any]]:
    assert strict_problems(body) == []
    assert check_interaction_body(body) == []
    steps: list[dict[str, Any]] = body["input"]
    return steps


@pytest.mark.parametrize("carrier", [False, True])
def test_a_recorded_code_execution_goes_back_to_gemini_as_it_came(carrier: bool) -> None:
    output = output_of(read("code_execution.sse"), include_encrypted_reasoning=carrier)
    assert "code_interpreter_call" in [item["type"] for item in output]
    body = responses_to_gemini_request({"model": "gemini-2.5-pro", "input": turn(output)}).gemini
    parts = model_parts(body, "gemini-2.5-pro")
    code_part, result_part, said = parts
    assert code_part["executableCode"]["language"] == "PYTHON"
    assert code_part["executableCode"]["code"].startswith("limit = 10_000\n")
    assert code_part["thoughtSignature"].startswith("CiIBIZhdU4iS")
    assert result_part == {
        "codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "1229 9973\n"}
    }
    assert said["text"].startswith("There are **1,229** prime numbers")


def test_gemini_3_code_between_texts_keeps_its_place_and_signatures() -> None:
    stream = b"".join(
        [
            event(text("Let me run it.\n")),
            event(code("print(6 * 7)\n", sig=SIG_CODE)),
            event(code_result("Traceback: boom\n", outcome="OUTCOME_FAILED", sig=SIG_RESULT)),
            event(text("It failed."), finish("STOP")),
        ]
    )
    output = output_of(stream, include_encrypted_reasoning=True)
    assert [item["type"] for item in output] == [
        "reasoning",
        "message",
        "code_interpreter_call",
        "message",
    ]
    assert output[2]["status"] == "failed"
    body = responses_to_gemini_request({"model": G3, "input": turn(output)}).gemini
    assert model_parts(body, G3) == [
        {"text": "Let me run it.\n"},
        {
            "executableCode": {"language": "PYTHON", "code": "print(6 * 7)\n"},
            "thoughtSignature": SIG_CODE,
        },
        {
            "codeExecutionResult": {"outcome": "OUTCOME_FAILED", "output": "Traceback: boom\n"},
            "thoughtSignature": SIG_RESULT,
        },
        {"text": "It failed."},
    ]


def test_interactions_code_steps_go_back_as_steps_with_their_ids() -> None:
    output = output_of(
        (RECORDED / "code-execution.chunks.txt").read_bytes(),
        upstream="interactions",
        include_encrypted_reasoning=True,
    )
    request = responses_to_interaction({"model": G3, "input": turn(output)})
    assert request.warnings == ()
    steps = valid_steps(request.body)
    assert [step["type"] for step in steps] == [
        "user_input",
        "model_output",
        "code_execution_call",
        "code_execution_result",
        "model_output",
        "user_input",
    ]
    assert steps[2] == {
        "type": "code_execution_call",
        "id": "ce1",
        "arguments": {"code": "print(2**10)", "language": "python"},
    }
    assert steps[3] == {"type": "code_execution_result", "call_id": "ce1", "result": "1024\n"}
    # the same history on generateContent: the parts keep Google's ids
    body = responses_to_gemini_request({"model": G3, "input": turn(output)}).gemini
    assert model_parts(body, G3)[1:3] == [
        {"executableCode": {"language": "PYTHON", "code": "print(2**10)", "id": "ce1"}},
        {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "1024\n", "id": "ce1"}},
    ]


def test_a_chat_history_sends_the_code_steps_back_too() -> None:
    chunks, error = run_chat(
        (RECORDED / "code-execution.chunks.txt").read_bytes(), upstream="interactions"
    )
    assert error is None
    message = sdk_accumulate(chunks).choices[0].message.model_dump(exclude_none=True)
    message.pop("parsed", None)
    assert "```python" in message["content"]  # rendered, and still sent back once
    history = [{"role": "user", "content": "Go."}, message, {"role": "user", "content": "More."}]
    steps = valid_steps(chat_to_interaction({"model": G3, "messages": history}))
    assert [step["type"] for step in steps] == [
        "user_input",
        "model_output",
        "code_execution_call",
        "code_execution_result",
        "model_output",
        "user_input",
    ]
    assert steps[1]["content"] == [{"type": "text", "text": "Let me compute it.\n"}]
    assert steps[2]["id"] == steps[3]["call_id"] == "ce1"


def test_a_signed_failed_interactions_code_step_keeps_its_signature_and_error() -> None:
    call = {
        "type": "code_execution_call",
        "id": "ce9",
        "arguments": {"code": "ls /nope", "language": "bash"},
        "signature": SIG_CE,
    }
    result = {"type": "code_execution_result", "call_id": "ce9", "result": "no such file\n"}
    result_signed = {**result, "is_error": True, "signature": SIG_CR}
    script = FakeInteraction(
        steps=[
            ScriptedStep(call, (), call),
            ScriptedStep(result_signed, (), result_signed),
            text_step("It is not there."),
        ]
    )
    output = output_of(interaction_stream(script), upstream="interactions")
    steps = valid_steps(responses_to_interaction({"model": G3, "input": turn(output)}).body)
    assert steps[1:4] == [
        call,
        {**result, "is_error": True, "signature": SIG_CR},
        {"type": "model_output", "content": [{"type": "text", "text": "It is not there."}]},
    ]


def test_code_without_google_ids_is_left_out_of_interactions_with_a_warning() -> None:
    stream = event(code("print(1)\n"), code_result("1\n"), text("One."), finish("STOP"))
    output = output_of(stream)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        request = responses_to_interaction({"model": G3, "input": turn(output)})
    assert [type(w) for w in request.warnings] == [UnsupportedWarning, UnsupportedWarning]
    assert "without Google's id" in str(request.warnings[0])
    steps = valid_steps(request.body)
    assert [step["type"] for step in steps] == ["user_input", "model_output", "user_input"]


def test_continued_at_google_the_code_records_are_not_sent_again() -> None:
    output = output_of(
        (RECORDED / "code-execution.chunks.txt").read_bytes(), upstream="interactions"
    )
    request = responses_to_interaction(
        {"model": G3, "input": turn(output)}, store=True, previous_interaction_id="v1_prev"
    )
    types_sent = [step["type"] for step in valid_steps(request.body)]
    assert "code_execution_call" not in types_sent
    assert request.warnings == ()


# -- items without rxgem's parts (OpenAI's fields only) ------------------------------------


def openai_item(**fields: Any) -> dict[str, Any]:
    return {
        "type": "code_interpreter_call",
        "id": "ci_1",
        "container_id": "cntr_1",
        "code": "print(2)",
        "status": "completed",
        "outputs": [{"type": "logs", "logs": "2\n"}],
        **fields,
    }


def parts_of(item: dict[str, Any], **options: Any) -> list[dict[str, Any]]:
    body = responses_to_gemini_request({"model": G3, "input": turn([item])}, **options).gemini
    return model_parts(body, G3)


def test_an_item_with_only_openai_fields_is_rebuilt_from_its_code_and_logs() -> None:
    assert parts_of(openai_item()) == [
        {"executableCode": {"language": "PYTHON", "code": "print(2)"}},
        {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "2\n"}},
    ]
    assert parts_of(openai_item(status="failed"))[1] == {
        "codeExecutionResult": {"outcome": "OUTCOME_FAILED", "output": "2\n"}
    }
    unfinished = openai_item(status="in_progress", outputs=None)
    assert parts_of(unfinished) == [{"executableCode": {"language": "PYTHON", "code": "print(2)"}}]


def test_an_image_output_is_refused_by_default_and_left_out_on_warn() -> None:
    image = {"type": "image", "url": "https://example.com/plot.png"}
    item = openai_item(outputs=[{"type": "logs", "logs": "2\n"}, image])
    with pytest.raises(InvalidRequestError, match="no Gemini counterpart") as caught:
        parts_of(item)
    assert caught.value.where == "input[1].outputs[1].type"
    with pytest.warns(UnsupportedWarning, match=r"input\[1\]\.outputs\[1\]\.type"):
        assert parts_of(item, unsupported="warn") == parts_of(openai_item())


@pytest.mark.parametrize(
    ("fields", "where"),
    [
        ({"code": 3}, "input[1].code"),
        ({"outputs": "2"}, "input[1].outputs"),
        ({"outputs": [{"logs": "2"}]}, "input[1].outputs[0]"),
        ({"outputs": [{"type": "logs", "logs": 2}]}, "input[1].outputs[0].logs"),
        (
            {"extra_content": {"google": {"parts": [{"part": {"text": "x"}}]}}},
            "input[1].extra_content.google.parts[0].part",
        ),
    ],
)
def test_a_malformed_item_is_refused_where_it_is_wrong(fields: dict[str, Any], where: str) -> None:
    with pytest.raises(InvalidRequestError) as caught:
        parts_of(openai_item(**fields))
    assert caught.value.where == where
