"""What an Interactions run says: its steps, final status, usage and error, as a script.

A :class:`FakeInteraction` is the Interactions counterpart of :class:`FakeResponse`: the
steps a model "produces" (made with :func:`text_step`, :func:`thought_step`,
:func:`call_step`, :func:`search_steps`, :func:`code_steps`), the final ``status``,
``usage`` and an ``error`` event, and the faults to inject (``cut_after``, ``pace``,
``delay``). :func:`interaction_stream_events` turns it into the stream's events (the
dicts of ``data:`` lines) and :func:`interaction_object` into the non-streamed
Interaction object with ``steps[]``, both in the shape Google serves since June 2026.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import field
from typing import Any, Final

__all__ = [
    "THOUGHT_SIGNATURE",
    "FakeInteraction",
    "ScriptedStep",
    "call_step",
    "code_steps",
    "interaction_frame",
    "interaction_object",
    "interaction_stream",
    "interaction_stream_events",
    "interaction_usage",
    "search_steps",
    "text_step",
    "thought_step",
    "url_citation",
]

THOUGHT_SIGNATURE: Final = "c2lnbmF0dXJlLTE="
"""The thought signature :func:`thought_step` uses by default (base64, as Google's are)."""
_STATUSES: Final = frozenset(
    {"completed", "requires_action", "incomplete", "failed", "cancelled", "budget_exceeded"}
)


@dataclasses.dataclass(frozen=True)
class ScriptedStep:
    """One step: what ``step.start`` carries, the ``step.delta`` payloads, the final step.

    Made by the step constructors of this module.
    """

    start: Mapping[str, Any]
    deltas: tuple[Mapping[str, Any], ...]
    final: Mapping[str, Any]


def _pieces(value: str, count: int) -> list[str]:
    """``value`` cut into ``count`` pieces of about the same size (none empty)."""
    count = max(1, min(count, len(value) or 1))
    size = -(-len(value) // count) if value else 0
    return [value[i : i + size] for i in range(0, len(value), size)] if size else [value]


def url_citation(url: str, start: int, end: int, *, title: str | None = None) -> dict[str, Any]:
    """A ``url_citation`` annotation of the text's bytes ``start..end``."""
    annotation: dict[str, Any] = {
        "type": "url_citation",
        "url": url,
        "start_index": start,
        "end_index": end,
    }
    if title is not None:
        annotation["title"] = title
    return annotation


def text_step(
    value: str,
    *,
    pieces: int = 1,
    in_start: bool = False,
    annotations: Sequence[Mapping[str, Any]] = (),
) -> ScriptedStep:
    """A ``model_output`` step saying ``value``: ``pieces`` ``text`` deltas (with
    ``in_start``, the first piece comes in ``step.start``'s ``content`` instead), then
    one ``text_annotation_delta`` with ``annotations`` when given."""
    parts = _pieces(value, pieces)
    start: dict[str, Any] = {"type": "model_output", "content": []}
    if in_start:
        start["content"] = [{"type": "text", "text": parts.pop(0)}]
    deltas: list[Mapping[str, Any]] = [{"type": "text", "text": part} for part in parts]
    if annotations:
        deltas.append({"type": "text_annotation_delta", "annotations": list(annotations)})
    content: dict[str, Any] = {"type": "text", "text": value}
    if annotations:
        content["annotations"] = list(annotations)
    return ScriptedStep(start, tuple(deltas), {"type": "model_output", "content": [content]})


def thought_step(
    summary: str | None = None, *, signature: str | None = THOUGHT_SIGNATURE
) -> ScriptedStep:
    """A ``thought`` step: a ``thought_summary`` delta (when ``summary``), then a
    ``thought_signature`` delta (when ``signature``)."""
    deltas: list[Mapping[str, Any]] = []
    final: dict[str, Any] = {"type": "thought"}
    if summary is not None:
        deltas.append({"type": "thought_summary", "content": {"type": "text", "text": summary}})
        final["summary"] = [{"type": "text", "text": summary}]
    if signature is not None:
        deltas.append({"type": "thought_signature", "signature": signature})
        final["signature"] = signature
    return ScriptedStep({"type": "thought"}, tuple(deltas), final)


def call_step(
    name: str, arguments: Mapping[str, Any] | None = None, *, id: str, fragments: int = 1
) -> ScriptedStep:
    """A ``function_call`` step: ``id`` and ``name`` at ``step.start`` with ``arguments:
    {}``, then the arguments' JSON in ``fragments`` ``arguments_delta`` pieces."""
    args = dict(arguments or {})
    encoded = json.dumps(args, separators=(",", ":"), ensure_ascii=False)
    deltas = tuple({"type": "arguments_delta", "arguments": p} for p in _pieces(encoded, fragments))
    head = {"type": "function_call", "id": id, "name": name}
    return ScriptedStep({**head, "arguments": {}}, deltas, {**head, "arguments": args})


def _whole(step: Mapping[str, Any]) -> ScriptedStep:
    """A step that arrives whole in ``step.start``, without deltas."""
    return ScriptedStep(step, (), step)


def search_steps(
    queries: Sequence[str], *, id: str, suggestions: str = "<div>search</div>"
) -> tuple[ScriptedStep, ScriptedStep]:
    """A ``google_search_call`` step and its ``google_search_result`` step."""
    call = {"type": "google_search_call", "id": id, "arguments": {"queries": list(queries)}}
    result = {
        "type": "google_search_result",
        "call_id": id,
        "result": [{"search_suggestions": suggestions}],
    }
    return _whole(call), _whole(result)


def code_steps(
    code: str, output: str, *, id: str, language: str = "python", is_error: bool = False
) -> tuple[ScriptedStep, ScriptedStep]:
    """A ``code_execution_call`` step and its ``code_execution_result`` step."""
    call = {
        "type": "code_execution_call",
        "id": id,
        "arguments": {"code": code, "language": language},
    }
    result: dict[str, Any] = {"type": "code_execution_result", "call_id": id, "result": output}
    if is_error:
        result["is_error"] = True
    return _whole(call), _whole(result)


def interaction_usage(
    input: int = 0, output: int = 0, *, thought: int = 0, cached: int = 0, tool_use: int = 0
) -> dict[str, int]:
    """An Interactions ``usage`` object (``total_tokens`` is the sum)."""
    usage = {"total_input_tokens": input, "total_output_tokens": output}
    for name, value in (("thought", thought), ("cached", cached), ("tool_use", tool_use)):
        if value:
            usage[f"total_{name}_tokens"] = value
    usage["total_tokens"] = input + output + thought + tool_use
    return usage


@dataclasses.dataclass(frozen=True)
class FakeInteraction:
    """One scripted Interactions run, served by :class:`FakeGemini`.

    Attributes:
        steps: the steps the run produces, in order (step constructors; a tuple from
            :func:`search_steps`/:func:`code_steps` may be given as one item).
        status: the final status (default ``requires_action`` when a step is a
            ``function_call``, else ``completed``).
        usage: the ``usage`` of ``interaction.completed`` and of the object.
        error: an ``error`` event (``{"code": ..., "message": ...}``) sent after the steps,
            before ``interaction.completed`` (give ``status="failed"`` with it).
        cut_after: faults, one per stream response of this run (the create, then each
            resumption): cut the connection after that many of the response's events
            (``2.5``: two events and half of the third); a response past the list
            is sent whole.
        clean_cuts: the cuts end the response properly (a body that just stops early)
            instead of dropping the connection.
        pace: seconds between events (also how a background run progresses).
        delay: seconds before the response head (a slow first byte).
        id: the interaction id (default: a fresh ``v1_fake-N`` per run).
    """

    steps: Sequence[ScriptedStep | tuple[ScriptedStep, ...]] = ()
    status: str | None = None
    usage: Mapping[str, int] | None = field(default_factory=lambda: interaction_usage(8, 5))
    error: Mapping[str, Any] | None = None
    cut_after: Sequence[float] = ()
    clean_cuts: bool = False
    pace: float = 0.0
    delay: float = 0.0
    id: str | None = None

    def __post_init__(self) -> None:
        if self.status is not None and self.status not in _STATUSES:
            raise ValueError(f"status must be one of {sorted(_STATUSES)}, not {self.status!r}")
        for value in (self.pace, self.delay, *self.cut_after):
            if not value >= 0:
                raise ValueError(f"pace, delay and cut_after must be >= 0, got {value!r}")

    @property
    def flat_steps(self) -> list[ScriptedStep]:
        """The steps, tuples of steps spread out."""
        out: list[ScriptedStep] = []
        for item in self.steps:
            out.extend(item if isinstance(item, tuple) else (item,))
        return out

    @property
    def final_status(self) -> str:
        """``status``, or the default it stands for."""
        if self.status is not None:
            return self.status
        calls = any(step.final.get("type") == "function_call" for step in self.flat_steps)
        return "requires_action" if calls else "completed"


def _head(interaction_id: str, model: str, status: str, created: str) -> dict[str, Any]:
    """An interaction's fields in lifecycle events (``agent:<name>`` names an agent's run)."""
    runner = {"agent": model[6:]} if model.startswith("agent:") else {"model": model}
    return {"id": interaction_id, "status": status, **runner, "created": created}


def interaction_stream_events(
    script: FakeInteraction,
    interaction_id: str,
    *,
    model: str,
    created: str = "2026-12-02T00:00:00Z",
    status: str | None = None,
) -> list[dict[str, Any]]:
    """The stream's events for ``script`` (``event_id`` ``<id>:<n>``); ``model`` is the
    model, or ``agent:<name>`` for an agent's run; ``status`` overrides the final status."""
    events: list[dict[str, Any]] = [
        {
            "event_type": "interaction.created",
            "interaction": _head(interaction_id, model, "in_progress", created),
        },
        {
            "event_type": "interaction.status_update",
            "interaction_id": interaction_id,
            "status": "in_progress",
        },
    ]
    for index, step in enumerate(script.flat_steps):
        events.append({"event_type": "step.start", "index": index, "step": dict(step.start)})
        events += [
            {"event_type": "step.delta", "index": index, "delta": dict(delta)}
            for delta in step.deltas
        ]
        events.append({"event_type": "step.stop", "index": index})
    if script.error is not None:
        events.append({"event_type": "error", "error": dict(script.error)})
    final = _head(interaction_id, model, status or script.final_status, created)
    final["updated"] = created
    if script.usage is not None:
        final["usage"] = dict(script.usage)
    events.append({"event_type": "interaction.completed", "interaction": final})
    for number, event in enumerate(events, 1):
        event["event_id"] = f"{interaction_id}:{number}"
    return events


def interaction_object(
    events: Sequence[Mapping[str, Any]],
    *,
    script: FakeInteraction,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The Interaction object after ``events`` (a prefix of the run's events): its
    steps so far, and the status ``in_progress`` until ``interaction.completed``."""
    head = dict(events[0]["interaction"]) if events else {}
    done = next((e for e in events if e["event_type"] == "interaction.completed"), None)
    started = sum(1 for e in events if e["event_type"] == "step.start")
    steps = [dict(step.final) for step in script.flat_steps[:started]]
    out = dict(done["interaction"]) if done is not None else head
    out["steps"] = steps
    out.update(extra or {})
    return out


def interaction_frame(event: Mapping[str, Any]) -> bytes:
    """One event as Google frames it: ``event:``, ``id:`` and ``data:`` lines."""
    data = json.dumps(event, ensure_ascii=False, separators=(",", ":"))
    return f"event: {event['event_type']}\nid: {event['event_id']}\ndata: {data}\n\n".encode()


def interaction_stream(
    script: FakeInteraction, *, id: str = "v1_fake-1", model: str = "gemini-3-flash-preview"
) -> bytes:
    """The whole SSE body FakeGemini streams for ``script`` (ending with ``data: [DONE]``)."""
    frames = [interaction_frame(e) for e in interaction_stream_events(script, id, model=model)]
    return b"".join(frames) + b"data: [DONE]\n\n"
