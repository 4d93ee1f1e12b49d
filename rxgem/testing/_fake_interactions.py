"""FakeGemini's Interactions API: create, get (and resume), cancel, delete, background runs.

:class:`InteractionsRoutes` keeps the runs FakeGemini created and answers each
``/v1beta/interactions`` request with a :class:`FakeResponse` (so both HTTP/1.1 and
HTTP/2 send it): an SSE stream of the run's events (``event:``, ``id:``, ``data:``
lines, ending with ``data: [DONE]``), or the Interaction object, or Google's error
body. A stored run (``store`` not false) keeps its events, so ``GET
.../{id}?stream=true&last_event_id=X`` replays the ones after X; a background run
makes one event available every ``pace`` seconds from its creation, until it ends
or is cancelled.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from ._fake_response import FakeResponse
from ._gemini_validation import invalid_argument
from ._interaction_script import (
    FakeInteraction,
    interaction_frame,
    interaction_object,
    interaction_stream_events,
    text_step,
)

__all__ = ["DEFAULT_AGENTS", "InteractionCall", "InteractionsRoutes", "Script"]

DEFAULT_AGENTS: Final = ("deep-research-pro-preview-12-2025",)
_ROOT: Final = "/v1beta/interactions"
_ITEM: Final = re.compile(r"/v1beta/interactions/([^/:]+)(/cancel|:cancel)?")
_JSON: Final = "application/json; charset=UTF-8"
_DONE: Final = b"data: [DONE]\n\n"
_GREETING: Final = FakeInteraction(steps=(text_step("Hello from FakeGemini.", pieces=2),))
_STATUS_NAMES: Final = {400: "INVALID_ARGUMENT", 404: "NOT_FOUND", 409: "FAILED_PRECONDITION"}


@dataclasses.dataclass(frozen=True)
class InteractionCall:
    """What a scripted run sees of its create request."""

    body: Mapping[str, Any]
    """The create body as sent."""
    history: list[dict[str, Any]]
    """The steps of the ``previous_interaction_id`` chain, oldest first (each turn's
    input as ``user_input`` steps, then its output steps); empty without one."""


Script = (
    FakeInteraction | FakeResponse | Callable[[InteractionCall], FakeInteraction | FakeResponse]
)
"""One entry of FakeGemini's ``interactions``: a run, a plain response (an HTTP error,
say), or a function of the request that returns either."""


def google_error(code: int, message: str) -> FakeResponse:
    """Google's error body ``{"error": {"code", "message", "status"}}`` with that status."""
    status = _STATUS_NAMES.get(code, "UNKNOWN")
    return FakeResponse(status=code, error={"code": code, "message": message, "status": status})


def _json(data: Any) -> FakeResponse:
    return FakeResponse(body=json.dumps(data, ensure_ascii=False).encode(), content_type=_JSON)


def _input_steps(value: Any) -> list[dict[str, Any]]:
    """A create body's ``input`` as steps (a string, a Content, Contents, or Steps)."""
    if isinstance(value, str):
        return [{"type": "user_input", "content": [{"type": "text", "text": value}]}]
    items = value if isinstance(value, list) else [value]
    if all(isinstance(i, dict) and i.get("type") in (None, "text", "image") for i in items):
        return [{"type": "user_input", "content": items}]
    return [dict(i) for i in items if isinstance(i, dict)]


@dataclasses.dataclass
class _Run:
    """One interaction the fake created."""

    id: str
    script: FakeInteraction
    events: list[dict[str, Any]]
    body: Mapping[str, Any]
    history: list[dict[str, Any]]
    stored: bool
    background: bool
    started: float
    streams: int = 0  # stream responses sent so far (for cut_after)
    frozen: int | None = None  # the events a cancelled run had made

    def available(self, now: float) -> int:
        """How many events exist at ``now`` (a background run makes one per ``pace``)."""
        if self.frozen is not None:
            return self.frozen
        if not self.background or self.script.pace <= 0:
            return len(self.events)
        return min(len(self.events), 1 + int((now - self.started) / self.script.pace))

    def done(self, now: float) -> bool:
        return self.frozen is not None or self.available(now) == len(self.events)

    def output_steps(self) -> list[dict[str, Any]]:
        return [dict(step.final) for step in self.script.flat_steps]


class InteractionsRoutes:
    """The runs of one FakeGemini and the answers to ``/v1beta/interactions`` requests."""

    def __init__(
        self,
        scripts: Sequence[Script],
        *,
        models: Sequence[str],
        agents: Sequence[str],
        check: Callable[[Any], Sequence[str]] | None,
        observe: Callable[[list[dict[str, Any]]], None] | None = None,
    ) -> None:
        self._scripts: tuple[Script, ...] = tuple(scripts) or (_GREETING,)
        self._models = tuple(models)
        self._agents = tuple(agents)
        self._check = check
        self._observe = observe  # sees each run's output steps as it starts
        self._lock = threading.Lock()
        self._runs: dict[str, _Run] = {}
        self._served = 0
        self._numbers = itertools.count(1)

    def handles(self, path: str) -> bool:
        return path == _ROOT or path.startswith(_ROOT + "/")

    def run_ids(self) -> list[str]:
        """The ids of the stored runs, oldest first."""
        with self._lock:
            return [run.id for run in self._runs.values() if run.stored]

    def snapshot(self, interaction_id: str) -> dict[str, Any] | None:
        """The stored run's object as ``GET`` would show it now, or None."""
        with self._lock:
            run = self._runs.get(interaction_id)
            return None if run is None or not run.stored else self._object(run)

    # -- answering

    def answer(self, method: str, path: str, query: Mapping[str, str], body: bytes) -> FakeResponse:
        if path == _ROOT and method == "POST":
            return self._create(body)
        match = _ITEM.fullmatch(path)
        if match is None:
            return google_error(404, f"FakeGemini does not serve {method} {path}.")
        interaction_id, cancel = match.group(1), match.group(2)
        with self._lock:
            run = self._runs.get(interaction_id)
            if run is None or not run.stored:
                return google_error(404, f"Interaction {interaction_id} was not found.")
            if cancel and method == "POST":
                return self._cancel(run)
            if cancel is None and method == "DELETE":
                del self._runs[interaction_id]
                return _json({})
            if cancel is None and method == "GET":
                if query.get("stream") == "true":
                    return self._resume(run, query.get("last_event_id"))
                return _json(self._object(run))
        return google_error(404, f"FakeGemini does not serve {method} {path}.")

    def _refusal(self, body: Any) -> FakeResponse | None:
        """Google's answer to a create body it refuses, or None."""
        if not isinstance(body, dict):
            return google_error(400, "Invalid JSON payload received: expected an object.")
        if self._check is not None:
            problems = list(self._check(body))
            if problems:
                return FakeResponse(status=400, error=invalid_argument(problems))
        model, agent = body.get("model"), body.get("agent")
        if (model is None) == (agent is None):
            return google_error(400, "Exactly one of model or agent must be set.")
        if model is not None and str(model).removeprefix("models/") not in self._models:
            name = str(model).removeprefix("models/")
            return google_error(404, f"models/{name} is not found for API version v1beta.")
        if agent is not None and agent not in self._agents:
            return google_error(404, f"agents/{agent} is not found for API version v1beta.")
        if agent is not None and body.get("background") is not True:
            return google_error(400, "Agent interactions must run in the background.")
        if "input" not in body:
            return google_error(400, "input is required.")
        if body.get("background") is True and body.get("store") is False:
            return google_error(400, "background requires store to be true.")
        return None

    def _create(self, raw: bytes) -> FakeResponse:
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        refusal = self._refusal(body)
        if refusal is not None:
            return refusal
        with self._lock:
            history: list[dict[str, Any]] = []
            previous_id = body.get("previous_interaction_id")
            if previous_id is not None:
                previous = self._runs.get(str(previous_id))
                if previous is None or not previous.stored:
                    return google_error(404, f"Interaction {previous_id} was not found.")
                history = [
                    *previous.history,
                    *_input_steps(previous.body.get("input")),
                    *previous.output_steps(),
                ]
            script = self._scripts[min(self._served, len(self._scripts) - 1)]
            self._served += 1
        if callable(script) and not isinstance(script, FakeInteraction | FakeResponse):
            script = script(InteractionCall(body, history))
        if isinstance(script, FakeResponse):
            return script
        with self._lock:
            return self._start(script, body, history)

    def _start(
        self, script: FakeInteraction, body: Mapping[str, Any], history: list[dict[str, Any]]
    ) -> FakeResponse:
        number = next(self._numbers)
        interaction_id = script.id or f"v1_fake-{number}"
        agent = body.get("agent")
        model = f"agent:{agent}" if agent else str(body["model"]).removeprefix("models/")
        events = interaction_stream_events(script, interaction_id, model=model)
        run = _Run(
            id=interaction_id,
            script=script,
            events=events,
            body=body,
            history=history,
            stored=body.get("store") is not False,
            background=body.get("background") is True,
            started=time.monotonic(),
        )
        self._runs[interaction_id] = run
        if self._observe is not None:
            self._observe(run.output_steps())
        if body.get("stream") is True:
            return self._stream(run, 0)
        if run.background:
            head = dict(events[0]["interaction"])
            return dataclasses.replace(_json({**head, "steps": []}), delay=script.delay)
        return dataclasses.replace(_json(self._object(run)), delay=script.delay)

    def _object(self, run: _Run) -> dict[str, Any]:
        events = self._events(run)
        extra: dict[str, Any] = {}
        if run.body.get("previous_interaction_id") is not None:
            extra["previous_interaction_id"] = run.body["previous_interaction_id"]
        return interaction_object(events, script=run.script, extra=extra)

    def _events(self, run: _Run) -> list[dict[str, Any]]:
        """The run's events as they stand (a cancelled run ends with its cancellation)."""
        if run.frozen is None:
            return run.events[: run.available(time.monotonic())]
        kept = run.events[: run.frozen]
        head = dict(run.events[0]["interaction"], status="cancelled")
        return [
            *kept,
            {
                "event_type": "interaction.completed",
                "interaction": head,
                "event_id": f"{run.id}:{run.frozen + 1}",
            },
        ]

    def _cancel(self, run: _Run) -> FakeResponse:
        if not run.background:
            return google_error(400, "Only background interactions can be cancelled.")
        if not run.done(time.monotonic()):
            run.frozen = run.available(time.monotonic())
        return _json(self._object(run))

    def _resume(self, run: _Run, last_event_id: str | None) -> FakeResponse:
        events = run.events if run.frozen is None else self._events(run)
        if last_event_id is None:
            return self._stream(run, 0)
        for position, event in enumerate(events):
            if event["event_id"] == last_event_id:
                return self._stream(run, position + 1)
        return google_error(400, f"last_event_id {last_event_id} is not an event of this run.")

    def _stream(self, run: _Run, first: int) -> FakeResponse:
        """The SSE response of the run's events from ``first`` on, with this response's cut."""
        events = (run.events if run.frozen is None else self._events(run))[first:]
        frames = [interaction_frame(event) for event in events] + [_DONE]
        ends = list(itertools.accumulate(len(f) for f in frames))
        cuts = run.script.cut_after
        drop_after = None
        if run.streams < len(cuts) and cuts[run.streams] < len(frames):
            cut = cuts[run.streams]
            whole = int(cut)
            drop_after = ends[whole - 1] if whole else 0
            if cut > whole:  # into the next event, never all of it
                size = len(frames[whole])
                drop_after += min(max(1, int((cut - whole) * size)), size - 1)
        run.streams += 1
        body = b"".join(frames)
        if drop_after is not None and run.script.clean_cuts:
            body, drop_after = body[:drop_after], None
        pace = run.script.pace
        return FakeResponse(
            body=body,
            split_at=[end for end in ends[:-1] if end < len(body)],
            pause=pace,
            drop_after=drop_after,
            delay=run.script.delay if first == 0 else 0.0,
        )
