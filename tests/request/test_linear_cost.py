"""Translating a request costs time linear in its size, whatever its shape.

Each test translates one shape of request at N and at 10N and asserts that the time grew
less than 25 times: linear work grows about 10 times, quadratic work about 100 times (a
security review found 100,000 one-word user messages taking 37 s when merging same-role
messages copied the growing content each time). N is chosen so that the smaller run takes
milliseconds, not microseconds, and fixed costs do not decide the ratio.

A timing is the best of 3 runs (``time.perf_counter``), with the garbage collector off (its
full collections scan every live object, which is the interpreter's cost, not rxgem's); a
ratio that looks bad is measured again, up to three times, before the test fails, so that a
busy machine does not fail it (a quadratic step fails every attempt).
"""

from __future__ import annotations

import gc
import time
import warnings
from collections.abc import Callable
from typing import Any

import pytest

from rxgem.request import to_gemini_request
from rxgem.request.schema._convert import to_gemini_schema

LIMIT = 25.0
"""Largest accepted time(10N) / time(N): linear is about 10, quadratic about 100."""

Build = Callable[[int], Callable[[], object]]
"""``build(n)``: a translation of a request of size ``n``, ready to time (built outside it)."""


def _best_of_3(run: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best


def _ratio(build: Build, n: int) -> tuple[float, float, float]:
    small, large = build(n), build(10 * n)
    gc.collect()
    gc.disable()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t_small, t_large = _best_of_3(small), _best_of_3(large)
    finally:
        gc.enable()
    return t_large / t_small, t_small, t_large


def assert_linear(build: Build, n: int) -> None:
    seen = []
    for _ in range(3):
        ratio, t_small, t_large = _ratio(build, n)
        if ratio < LIMIT:
            return
        seen.append(f"{ratio:.0f} ({t_small * 1e3:.1f} ms → {t_large * 1e3:.1f} ms)")
    pytest.fail(f"time(10N)/time(N) for N={n} was {', '.join(seen)}; linear is about 10")


def translate(body: dict[str, Any], **options: Any) -> Callable[[], object]:
    return lambda: to_gemini_request(body, unsupported="warn", **options)


def request(messages: list[dict[str, Any]], **fields: Any) -> dict[str, Any]:
    return {"model": "gemini-3-flash-preview", "messages": messages, **fields}


def schema_only(schema: dict[str, Any], target: str = "openapi") -> Callable[[], object]:
    """A schema conversion with budgets out of the way (the budgets bound the work; this
    measures how the work grows inside them)."""
    return lambda: to_gemini_schema(
        schema,
        where="tools[0].function.parameters",
        target=target,  # type: ignore[arg-type]
        notes=[],
        max_nodes=10**9,
        max_size=10**12,
    )


# -- messages ---------------------------------------------------------------------------------


def test_many_same_role_user_messages() -> None:
    def build(n: int) -> Callable[[], object]:
        return translate(request([{"role": "user", "content": "word"} for _ in range(n)]))

    assert_linear(build, 5_000)


def test_many_alternating_tool_calls_and_results() -> None:
    def build(n: int) -> Callable[[], object]:
        messages: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
        for i in range(n):
            call = {"id": f"c{i}", "type": "function"}
            call["function"] = {"name": "look", "arguments": f'{{"q": {i}}}'}  # type: ignore[assignment]
            messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
            messages.append({"role": "tool", "tool_call_id": f"c{i}", "content": '{"ok": 1}'})
        return translate(request(messages))

    assert_linear(build, 500)


def test_many_parallel_calls_in_one_turn() -> None:
    def build(n: int) -> Callable[[], object]:
        calls = [
            {"id": f"c{i}", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            for i in range(n)
        ]
        results = [{"role": "tool", "tool_call_id": f"c{i}", "content": "ok"} for i in range(n)]
        messages = [{"role": "user", "content": "go"}, {"role": "assistant", "tool_calls": calls}]
        return translate(request([*messages, *results]))

    assert_linear(build, 1_000)


def test_many_image_parts() -> None:
    def build(n: int) -> Callable[[], object]:
        parts: list[dict[str, Any]] = []
        for i in range(n):
            url = f"data:image/png;base64,iVBO{i}" if i % 2 else f"https://x.example/{i}.jpg"
            parts.append({"type": "image_url", "image_url": {"url": url}})
            parts.append({"type": "text", "text": f"picture {i}"})
        return translate(request([{"role": "user", "content": parts}]))

    assert_linear(build, 2_000)


def test_many_images_given_back_in_assistant_history() -> None:
    def build(n: int) -> Callable[[], object]:
        images = [
            {"type": "image_url", "image_url": {"url": f"data:image/png;base64,iVBO{i}"}}
            for i in range(n)
        ]
        entries = [
            {"part": {"inlineData": {"mimeType": "image/png"}}, "image_index": i} for i in range(n)
        ]
        assistant = {
            "role": "assistant",
            "content": "here",
            "images": images,
            "extra_content": {"google": {"parts": entries}},
        }
        return translate(request([{"role": "user", "content": "draw"}, assistant]))

    assert_linear(build, 2_000)


def test_many_messages_with_long_text() -> None:
    """Long texts, some cut around a code part rxgem kept (the text is sliced, once)."""
    text = "lorem ipsum " * 200  # about 2 kB
    code = {"executableCode": {"language": "PYTHON", "code": "print(1)"}}

    def build(n: int) -> Callable[[], object]:
        messages: list[dict[str, Any]] = []
        for i in range(n):
            if i % 4 == 1:
                entry = {"part": code, "content_index": len(text) // 2}
                extra = {"google": {"parts": [entry]}}
                messages.append({"role": "assistant", "content": text, "extra_content": extra})
            else:
                messages.append({"role": ("system", "user")[i % 2], "content": f"{i} {text}"})
        return translate(request(messages))

    assert_linear(build, 1_000)


# -- tools and schemas ------------------------------------------------------------------------


def _tool(i: int) -> dict[str, Any]:
    parameters = {
        "type": "object",
        "properties": {
            "q": {"type": "string", "description": "what to look up"},
            "n": {"type": "integer", "minimum": 1, "exclusiveMaximum": 10},
            "at": {"anyOf": [{"type": "string", "format": "date-time"}, {"type": "null"}]},
        },
        "required": ["q"],
        "additionalProperties": False,
    }
    return {"type": "function", "function": {"name": f"tool_{i}", "parameters": parameters}}


@pytest.mark.parametrize("api", ["gemini", "vertex"])
def test_many_tools(api: str) -> None:
    def build(n: int) -> Callable[[], object]:
        tools = [_tool(i) for i in range(n)]
        response_format = {
            "type": "json_schema",
            "json_schema": {"name": "r", "schema": _tool(0)["function"]["parameters"]},
        }
        body = request(
            [{"role": "user", "content": "hi"}], tools=tools, response_format=response_format
        )
        return translate(body, api=api)

    assert_linear(build, 300)


@pytest.mark.parametrize("target", ["json_schema", "openapi"])
def test_a_big_schema(target: str) -> None:
    """Properties with descriptions, enums, a pattern, a keyword Gemini lacks (a note each),
    and ``required`` naming them all."""

    def build(n: int) -> Callable[[], object]:
        properties = {
            f"p{i}": {
                "type": "string",
                "description": f"field {i}",
                "enum": ["a", "b", str(i)],
                "pattern": "^[a-z0-9]+$",
                "contentSchema": {"type": "string"},
            }
            for i in range(n)
        }
        schema = {"type": "object", "properties": properties, "required": list(properties)}
        return schema_only(schema, target)

    assert_linear(build, 1_000)


def test_schema_with_a_long_required_list() -> None:
    def build(n: int) -> Callable[[], object]:
        names = [f"p{i}" for i in range(n)]
        properties = {name: {"type": "string"} for name in names}
        return schema_only({"type": "object", "properties": properties, "required": names * 2})

    assert_linear(build, 1_000)


def test_schema_with_a_long_enum() -> None:
    def build(n: int) -> Callable[[], object]:
        return schema_only({"type": "string", "enum": [f"v{i}" for i in range(n)] * 2})

    assert_linear(build, 2_000)


def test_schema_with_many_all_of_branches() -> None:
    def build(n: int) -> Callable[[], object]:
        branches = [
            {"properties": {f"p{i}": {"type": "string"}}, "required": [f"p{i}"], "minimum": i}
            for i in range(n)
        ]
        return schema_only({"type": "object", "allOf": branches})

    assert_linear(build, 300)


def test_schema_with_a_long_ref_chain() -> None:
    def build(n: int) -> Callable[[], object]:
        defs: dict[str, Any] = {f"a{i}": {"$ref": f"#/$defs/a{i + 1}"} for i in range(n)}
        defs[f"a{n}"] = {"type": "string"}
        return schema_only({"$defs": defs, "properties": {"x": {"$ref": "#/$defs/a0"}}})

    assert_linear(build, 500)


def test_schema_with_a_long_tuple() -> None:
    def build(n: int) -> Callable[[], object]:
        items = [{"type": "string", "description": f"position {i}"} for i in range(n)]
        return schema_only({"type": "array", "prefixItems": items})

    assert_linear(build, 300)


def test_schema_union_with_many_branches_and_keywords() -> None:
    """A union's own keywords go into each branch: unknown ones are noted once, not copied
    into every branch (that was keywords × branches)."""

    def build(n: int) -> Callable[[], object]:
        unknown = {f"k{i}": i for i in range(n)}
        branches = [{"type": "string", "description": f"{i}"} for i in range(n)]
        return schema_only({"type": "object", **unknown, "anyOf": branches})

    assert_linear(build, 200)


def test_schema_with_many_notes() -> None:
    def build(n: int) -> Callable[[], object]:
        return schema_only({"type": "string", **{f"unknown{i}": i for i in range(n)}})

    assert_linear(build, 2_000)


def test_json_schema_target_with_many_nodes() -> None:
    def build(n: int) -> Callable[[], object]:
        properties = {f"p{i}": {"type": "string", "default": [i, {"a": i}]} for i in range(n)}
        return schema_only({"type": "object", "properties": properties}, "json_schema")

    assert_linear(build, 1_000)


# -- Responses requests -----------------------------------------------------------------------


def responses(items: list[dict[str, Any]], **fields: Any) -> Callable[[], object]:
    from rxgem.request import responses_to_gemini_request

    body = {"model": "gemini-3-flash-preview", "input": items, **fields}
    return lambda: responses_to_gemini_request(body, unsupported="warn", resolve=_STORED.get)


def _carrier(i: int) -> str:
    from rxgem.core.responses import CarriedSignature, encode_signatures

    signatures = [CarriedSignature("call", f"c{i}", "sig"), CarriedSignature("text", None, "t")]
    return encode_signatures(signatures)


_STORED = {f"msg_{i}": {"role": "user", "content": "stored"} for i in range(20_000)}


def test_responses_many_same_role_items() -> None:
    def build(n: int) -> Callable[[], object]:
        text = [{"type": "input_text", "text": "word"}]
        items = [{"type": "message", "role": "user", "content": text} for _ in range(n)]
        return responses([*items, *({"role": "developer", "content": "rule"} for _ in range(n))])

    assert_linear(build, 3_000)


def test_responses_many_steps_with_reasoning_calls_and_outputs() -> None:
    def build(n: int) -> Callable[[], object]:
        items: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
        for i in range(n):
            items.append(
                {
                    "type": "reasoning",
                    "id": f"rs_{i}",
                    "summary": [],
                    "encrypted_content": _carrier(i),
                }
            )
            items.append({"role": "assistant", "content": "looking"})
            items.append(
                {"type": "function_call", "call_id": f"c{i}", "name": "f", "arguments": "{}"}
            )
            items.append({"type": "function_call_output", "call_id": f"c{i}", "output": "ok"})
        return responses(items)

    assert_linear(build, 300)


def test_responses_many_parallel_calls_answered_in_reverse() -> None:
    def build(n: int) -> Callable[[], object]:
        calls = [
            {"type": "function_call", "call_id": f"c{i}", "name": "f", "arguments": "{}"}
            for i in range(n)
        ]
        outputs = [
            {"type": "function_call_output", "call_id": f"c{i}", "output": "ok"}
            for i in reversed(range(n))
        ]
        reasoning = {
            "type": "reasoning",
            "id": "rs",
            "summary": [],
            "encrypted_content": _carrier(0),
        }
        return responses([{"role": "user", "content": "go"}, reasoning, *calls, *outputs])

    assert_linear(build, 1_000)


def test_responses_many_item_references() -> None:
    def build(n: int) -> Callable[[], object]:
        return responses([{"type": "item_reference", "id": f"msg_{i}"} for i in range(n)])

    assert_linear(build, 2_000)


def test_responses_many_namespaced_tools_and_allowed_tools() -> None:
    def build(n: int) -> Callable[[], object]:
        functions = [{"type": "function", "name": f"f{i}"} for i in range(n)]
        allowed = [{"type": "function", "name": f"ns.f{i}"} for i in range(n)]
        return responses(
            [{"role": "user", "content": "go"}],
            tools=[{"type": "namespace", "name": "ns", "description": "", "tools": functions}],
            tool_choice={"type": "allowed_tools", "mode": "auto", "tools": allowed},
        )

    assert_linear(build, 1_000)
