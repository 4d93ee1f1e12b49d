"""Reading the recorded Interactions data (``tests/data/interactions``) through the cores,
and what each recording's steps say, computed from its JSON alone (the expectations)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rxgem.core import ChunkBuilder, InteractionsParser, SSEDecoder, StepReader
from rxgem.core.responses import ResponsesBuilder
from rxgem.items import Batch

DATA = Path(__file__).resolve().parent / "data" / "interactions"
STREAMS = sorted(DATA.glob("*/*.chunks.txt"))
OBJECTS = sorted(DATA.glob("*/*.json"))

FAILING = {"status-failed", "status-cancelled", "error-event"}
"""Project-own streams that end in an error (after valid output)."""
OLD = {"tool-call-step2.old-schema", "old-schema"}
"""Recordings of the schema before June 2026, which the reader refuses."""


def name(path: Path) -> str:
    return path.name.removesuffix(".chunks.txt").removesuffix(".json")


def events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def sse(path: Path, *, done: bool = True) -> bytes:
    """The recording as Google frames it: ``event:`` lines, ``data:`` JSON, ``[DONE]``."""
    frames = [
        f"event: {event.get('event_type', 'message')}\ndata: {json.dumps(event)}\n\n"
        for event in events(path)
    ]
    if done:
        frames.append("data: [DONE]\n\n")
    return "".join(frames).encode()


def read(pieces: Sequence[bytes], **options: Any) -> tuple[list[Batch], Exception | None]:
    """Bytes → batches through decoder, parser and reader, as the core protocol says:
    what came before an error is kept, the error returned beside it."""
    decoder, parser, reader = SSEDecoder(), InteractionsParser(), StepReader(**options)
    batches: list[Batch] = []
    try:
        for piece in pieces:
            for event in decoder.feed(piece):
                for typed in parser.feed(event):
                    batch = reader.feed(typed)
                    if batch:
                        batches.append(batch)
        for event in decoder.close():
            for typed in parser.feed(event):
                batch = reader.feed(typed)
                if batch:
                    batches.append(batch)
        last = reader.close()
        if last:
            batches.append(last)
    except Exception as error:
        return batches, error
    return batches, reader.error


def to_chat(batches: Sequence[Batch], error: Exception | None = None, **options: Any) -> list[Any]:
    builder = ChunkBuilder(id_factory=lambda: "id", clock=lambda: 1.0, **options)
    chunks = [chunk for batch in batches for chunk in builder.feed(batch)]
    return chunks + builder.close(error)


def to_responses(batches: Sequence[Batch], error: Exception | None = None) -> list[Any]:
    counter = iter(range(1, 10_000))
    builder = ResponsesBuilder(id_factory=lambda: f"id{next(counter):04d}", clock=lambda: 1.0)
    events_ = [event for batch in batches for event in builder.feed(batch)]
    return events_ + builder.close(error)


@dataclass
class Said:
    """What a recording's steps say, read from its JSON with no rxgem code."""

    text: str = ""
    thought: str = ""
    calls: list[tuple[str, str, str]] = field(default_factory=list)  # id, name, arguments
    status: str | None = None
    usage: dict[str, Any] | None = None


def _step_text(step: dict[str, Any], said: Said) -> None:
    for content in step.get("content") or []:
        if content.get("type") == "text":
            said.text += content.get("text", "")
    for content in step.get("summary") or []:
        if content.get("type") == "text":
            said.thought += content.get("text", "")


def said_by_stream(path: Path) -> Said:
    said = Said()
    kinds: dict[int, str] = {}
    calls: dict[int, list[Any]] = {}
    for event in events(path):
        kind = event.get("event_type")
        if kind == "step.start":
            step = event["step"]
            kinds[event["index"]] = step["type"]
            if step["type"] == "function_call":
                start = step.get("arguments") or {}
                calls[event["index"]] = [step["id"], step["name"], "", start]
            else:
                _step_text(step, said)
        elif kind == "step.delta":
            delta = event["delta"]
            if delta["type"] == "text":
                said.text += delta["text"]
            elif delta["type"] == "thought_summary":
                said.thought += delta["content"].get("text", "")
            elif delta["type"] == "arguments_delta":
                calls[event["index"]][2] += delta["arguments"]
        elif kind == "interaction.completed":
            said.status = event["interaction"]["status"]
            said.usage = event["interaction"].get("usage")
    for index in sorted(calls):
        call_id, call_name, streamed, start = calls[index]
        said.calls.append((call_id, call_name, streamed or json.dumps(start)))
    return said


def said_by_object(path: Path) -> Said:
    body = json.loads(path.read_text("utf-8"))
    said = Said(status=body.get("status"))
    said.usage = body.get("usage") or (body.get("metadata") or {}).get("total_usage")
    for step in body.get("steps") or []:
        if step["type"] == "function_call":
            said.calls.append((step["id"], step["name"], json.dumps(step.get("arguments") or {})))
        else:
            _step_text(step, said)
    return said
