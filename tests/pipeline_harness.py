"""Shared helpers: run the pipeline synchronously, and judge output with the real openai SDK.

Kept out of ``conftest.py``: each folder's ``conftest`` is imported under that one name, so
``from conftest import`` would find whichever folder's was collected last.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import reactivex
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.types.chat import ChatCompletionChunk as SDKChunk
from reactivex import Observable
from reactivex import operators as ops

import rxgem
from rxgem import samples
from rxgem.operators import pipeline_stages

SHARED_CAPTURES = Path(
    os.environ.get(
        "RXGEM_SHARED_CAPTURES", Path(__file__).resolve().parents[2] / "shared" / "captures"
    )
)


def collect_sync(source: Observable[Any], timeout: float = 60) -> tuple[list[Any], Any]:
    """Subscribe and wait for the end (on whatever thread it comes): ``(items, error or
    None)``."""
    items: list[Any] = []
    errors: list[Exception] = []
    done = threading.Event()

    def on_error(error: Exception) -> None:
        errors.append(error)
        done.set()

    source.subscribe(items.append, on_error, done.set)
    assert done.wait(timeout), "the stream did not end"
    return items, errors[0] if errors else None


def counter_ids() -> Callable[[], str]:
    """A deterministic id factory: id0001, id0002, …"""
    numbers = itertools.count(1)
    return lambda: f"id{next(numbers):04d}"


Outcome = tuple[list[rxgem.ChatCompletionChunk], Exception | None]
"""The chunks of a run and the error it ended with (``None``: it completed)."""


def _deterministic(options: dict[str, Any]) -> dict[str, Any]:
    """``options`` with counter ids and a fixed clock unless given (fresh ones per call)."""
    options.setdefault("id_factory", counter_ids())
    options.setdefault("clock", lambda: 1_700_000_000.0)
    return options


def _pieces(data: bytes | Sequence[bytes]) -> list[bytes]:
    return [data] if isinstance(data, bytes) else list(data)


def run_rx(
    operator: Callable[[Observable[bytes]], Observable[Any]],
    data: bytes | Sequence[bytes],
    *,
    fail: Exception | None = None,
) -> Outcome:
    """Subscribe ``operator`` to ``data`` (bytes, or byte pieces), then ``fail`` if given."""
    source: Observable[bytes] = reactivex.from_iterable(_pieces(data))
    if fail is not None:
        source = reactivex.concat(source, reactivex.throw(fail))
    chunks: list[rxgem.ChatCompletionChunk] = []
    errors: list[Exception] = []
    completed: list[bool] = []
    source.pipe(operator).subscribe(chunks.append, errors.append, lambda: completed.append(True))
    assert len(errors) + len(completed) == 1, "the stream must end exactly once"
    return chunks, errors[0] if errors else None


def run(data: bytes | Sequence[bytes], *, fail: Exception | None = None, **options: Any) -> Outcome:
    """Run ``gemini_to_openai`` over ``data`` (bytes, or a list of byte pieces), then ``fail``."""
    return run_rx(rxgem.gemini_to_openai(**_deterministic(options)), data, fail=fail)


def _identity(value: Any) -> Any:
    return value


def stages_apart(**options: Any) -> Callable[[Observable[bytes]], Observable[Any]]:
    """The six operators of ``pipeline_stages`` with an Rx ``map`` between each two."""
    steps: list[Callable[[Observable[Any]], Observable[Any]]] = []
    for _name, operator in pipeline_stages(**_deterministic(options)):
        steps += [operator, ops.map(_identity)]
    return reactivex.compose(*steps)


def run_stages(
    data: bytes | Sequence[bytes], *, fail: Exception | None = None, **options: Any
) -> Outcome:
    """Run the six operators of ``pipeline_stages`` (apart, see :func:`stages_apart`)."""
    return run_rx(stages_apart(**options), data, fail=fail)


def run_converter(
    data: bytes | Sequence[bytes], *, fail: Exception | None = None, **options: Any
) -> Outcome:
    """Feed ``data`` to an ``rxgem.Converter`` as its documentation says; with ``fail``, the
    body breaks off with that error after the pieces (``close(fail)``) unless the stream
    ended first."""
    converter = rxgem.Converter(**_deterministic(options))
    chunks: list[rxgem.ChatCompletionChunk] = []
    try:
        for piece in _pieces(data):
            chunks += converter.feed(piece)
            if converter.done:
                break
        else:
            if fail is not None:
                chunks += converter.close(fail)
                return chunks, fail
        chunks += converter.close()
    except Exception as error:  # anything else too: the callers judge it
        return chunks + list(getattr(error, "chunks", ())), error
    return chunks, converter.error


def jsonl_to_sse(text: str, newline: str = "\r\n") -> bytes:
    """A JSON-lines capture (one response per line) as the SSE bytes Gemini sends."""
    lines = [line for line in text.splitlines() if line.strip()]
    return "".join(f"data: {line}{newline}{newline}" for line in lines).encode()


def strict_tools(names: Iterable[str]) -> list[dict[str, Any]]:
    """``tools`` declaring each name as a strict function (what the SDK's accumulator needs)."""
    return [
        {
            "type": "function",
            "function": {
                "name": name,
                "parameters": {"type": "object", "additionalProperties": True},
                "strict": True,
            },
        }
        for name in sorted(set(names))
    ]


def sdk_validate(chunks: Sequence[rxgem.ChatCompletionChunk]) -> list[SDKChunk]:
    """Every chunk through ``openai.types.chat.ChatCompletionChunk.model_validate``."""
    return [SDKChunk.model_validate(chunk.to_dict()) for chunk in chunks]


def sdk_accumulate(chunks: Sequence[rxgem.ChatCompletionChunk], tools: Iterable[str] = ()) -> Any:
    """The SDK's final completion, accumulated with strict tool definitions."""
    names = list(tools)
    state: ChatCompletionStreamState[Any] = (
        ChatCompletionStreamState(input_tools=strict_tools(names))  # type: ignore[arg-type]
        if names
        else ChatCompletionStreamState()
    )
    for chunk in sdk_validate(chunks):
        for _event in state.handle_chunk(chunk):
            pass
    snapshot = state.current_completion_snapshot
    if any(c.finish_reason in ("length", "content_filter") for c in snapshot.choices):
        return snapshot  # get_final_completion() raises for these finishes, by design
    return state.get_final_completion()


def check_protocol(chunks: Sequence[rxgem.ChatCompletionChunk]) -> None:
    """The structural rules of the OpenAI stream that the SDK depends on."""
    assert chunks, "no chunks"
    assert len({(c.id, c.created, c.model) for c in chunks}) == 1, "id/created/model must not vary"
    assert all(c.object == "chat.completion.chunk" for c in chunks)
    opened: list[int] = []
    finished: set[int] = set()
    tool_order: dict[int, list[int]] = {}
    headers: dict[tuple[int, int], int] = {}
    usage_seen = False
    for chunk in chunks:
        assert not usage_seen, "the usage chunk must be the last chunk"
        if chunk.usage is not None:
            assert chunk.choices == [], "the usage chunk has choices: []"
            usage_seen = True
        for choice in chunk.choices:
            assert choice.index not in finished, f"choice {choice.index} continued after finish"
            if choice.index not in opened:
                assert choice.index == len(opened), "choices must open in index order"
                assert choice.delta.role == "assistant", "a choice's first delta carries the role"
                opened.append(choice.index)
            else:
                assert choice.delta.role is None, "role only in a choice's first delta"
            for call in choice.delta.tool_calls or ():
                order = tool_order.setdefault(choice.index, [])
                if not order or order[-1] != call.index:
                    assert call.index not in order, (
                        f"tool index {call.index} reopened after a later index appeared"
                    )
                    assert call.index == len(order), "tool indices must be dense 0,1,2…"
                    order.append(call.index)
                if call.id is not None:
                    key = (choice.index, call.index)
                    headers[key] = headers.get(key, 0) + 1
                    assert headers[key] == 1, "id/type/name appear once per tool call"
                    assert call.type == "function"
                    assert call.function is not None
                    assert call.function.name
                else:
                    assert call.type is None
                    assert call.function is None or call.function.name is None
            if choice.finish_reason is not None:
                assert choice.finish_reason in ("stop", "length", "tool_calls", "content_filter")
                finished.add(choice.index)


def expected_for(name: str) -> dict[str, Any]:
    data: dict[str, Any] = samples.expected()[name]
    return data


def sample_names() -> list[str]:
    return samples.names()


def load_shared(name: str) -> str:
    """A recorded capture (only in tests marked ``shared_captures``)."""
    return (SHARED_CAPTURES / "vercel-ai" / name).read_text(encoding="utf-8")


def dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


# Google's 429 error body, as the API sends it (the shape of a quota error).
QUOTA_ERROR: dict[str, Any] = {
    "code": 429,
    "message": "You exceeded your current quota, please check your plan.",
    "status": "RESOURCE_EXHAUSTED",
    "details": [
        {
            "@type": "type.googleapis.com/google.rpc.QuotaFailure",
            "violations": [{"quotaId": "GenerateRequestsPerMinutePerProjectPerModel-FreeTier"}],
        },
        {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "34.4s"},
    ],
}


MINTED = re.compile(r"\b(chatcmpl-|call_|resp_|msg_|rs_|fc_|ci_|ig_)[A-Za-z0-9_-]+")
SEALED = re.compile(r'"encrypted_content":"[^"]*"')  # holds minted call ids, encoded


def normalised_frames(stream: bytes) -> list[Any]:
    """The SSE frames of an OpenAI stream (Responses: event name and payload) with
    ``created``/``created_at`` dropped, minted ids renamed in order of appearance, and
    ``encrypted_content`` shown as present: what two runs of one conversion share."""
    minted: dict[str, str] = {}

    def rename(match: re.Match[str]) -> str:
        return minted.setdefault(match[0], f"{match[1]}{len(minted)}")

    out: list[Any] = []
    for frame in stream.split(b"\n\n")[:-1]:
        event, _, data = frame.decode().rpartition("\n")
        payload = data.removeprefix("data: ")
        if payload == "[DONE]":
            out.append(payload)
            continue
        payload = SEALED.sub('"encrypted_content":"sealed"', payload)
        value = json.loads(MINTED.sub(rename, payload))
        value.pop("created", None)
        value.get("response", {}).pop("created_at", None)
        out.append((event, value))
    return out
