"""The Responses output judged by the real ``openai`` SDK, and the ways of running it.

- :func:`sdk_validate`: every event through the SDK's strict validation (what
  ``OpenAI(..., _strict_response_validation=True)`` runs on each event of a stream:
  ``openai._models.validate_type(type_=ResponseStreamEvent, value=...)``), and through
  the event's own model for a readable failure;
- :func:`sdk_final`: the events fed to the SDK's accumulator
  (``ResponseStreamState``, what ``responses.stream()`` uses); the final response;
- :func:`check_sequence`: the rules clients depend on (one id, ``sequence_number``
  0, 1, 2…, ``added`` before deltas and ``done``, every item done, one terminal event
  last carrying every done item);
- :func:`run_converter`, :func:`run_operator`: ``ResponsesConverter`` and
  ``gemini_to_responses`` over bytes, with deterministic ids and clock.
"""

from __future__ import annotations

import itertools
import typing
from collections.abc import Callable, Sequence
from typing import Any

import reactivex
from openai._models import validate_type
from openai._types import omit
from openai.lib.streaming.responses._responses import ResponseStreamState
from openai.types.responses import Response as SDKResponse
from openai.types.responses import ResponseStreamEvent

from rxgem.converter import ResponsesConverter
from rxgem.core.responses import ResponsesEvent
from rxgem.operators import gemini_to_responses

CLOCK = 1_700_000_000.0
TERMINAL = {"response.completed", "response.incomplete", "response.failed"}

_UNION = typing.get_args(ResponseStreamEvent)[0]
_BY_TYPE: dict[str, Any] = {
    typing.get_args(model.model_fields["type"].annotation)[0]: model
    for model in typing.get_args(_UNION)
}

Outcome = tuple[list[ResponsesEvent], Exception | None]


def counter_ids() -> Callable[[], str]:
    numbers = itertools.count(1)
    return lambda: f"id{next(numbers):04d}"


def deterministic(options: dict[str, Any]) -> dict[str, Any]:
    options.setdefault("id_factory", counter_ids())
    options.setdefault("clock", lambda: CLOCK)
    return options


def sdk_validate(events: Sequence[ResponsesEvent]) -> list[Any]:
    """Each event validated as the SDK does with strict validation (and by its own model)."""
    out: list[Any] = []
    for event in events:
        data = event.to_dict()
        validate_type(type_=_BY_TYPE[data["type"]], value=data)
        out.append(validate_type(type_=ResponseStreamEvent, value=data))  # type: ignore[arg-type]
    return out


def sdk_final(events: Sequence[ResponsesEvent]) -> Any:
    """The SDK accumulator's final response (``responses.stream()``'s), or its snapshot
    (with the output items it accumulated) for a stream that did not complete."""
    state: ResponseStreamState[Any] = ResponseStreamState(input_tools=omit, text_format=omit)
    for event in sdk_validate(events):
        state.handle_event(event)
    if state._completed_response is not None:
        return state._completed_response
    return state._ResponseStreamState__current_snapshot  # type: ignore[attr-defined]


def event_type(event: ResponsesEvent) -> str:
    tag: str = event.__struct_config__.tag  # type: ignore[assignment]
    return tag


def check_sequence(events: Sequence[ResponsesEvent]) -> dict[str, Any]:
    """The structural rules of a Responses stream; returns the terminal response's dict."""
    assert events, "no events"
    dicts = [event.to_dict() for event in events]
    assert [d["sequence_number"] for d in dicts] == list(range(len(dicts)))
    assert dicts[0]["type"] == "response.created"
    assert dicts[1]["type"] == "response.in_progress"
    assert dicts[-1]["type"] in TERMINAL
    assert [d["type"] in TERMINAL for d in dicts].count(True) == 1
    response_ids = {d["response"]["id"] for d in dicts if "response" in d}
    assert len(response_ids) == 1
    assert response_ids.pop().startswith("resp_")
    added: dict[int, dict[str, Any]] = {}
    done: dict[int, dict[str, Any]] = {}
    for d in dicts:
        if d["type"] == "response.output_item.added":
            index = d["output_index"]
            assert index not in added
            assert index == len(added), "output indices open densely, in order"
            added[index] = d["item"]
            item = d["item"]
            if item["type"] == "message":
                assert item["content"] == []
            if item["type"] == "function_call":
                assert item["arguments"] == ""
            if item["type"] == "reasoning":
                assert item["summary"] == []
        elif d["type"] == "response.output_item.done":
            index = d["output_index"]
            assert index in added
            assert index not in done
            assert d["item"]["id"] == added[index]["id"]
            assert d["item"].get("call_id") == added[index].get("call_id")
            done[index] = d["item"]
        elif "output_index" in d:
            assert d["output_index"] in added
            assert d["output_index"] not in done, f"{d['type']} after its item was done"
            assert d["item_id"] == added[d["output_index"]]["id"]
    assert added.keys() == done.keys(), "every item gets its output_item.done"
    terminal = dicts[-1]["response"]
    assert terminal["output"] == [done[i] for i in sorted(done)]
    SDKResponse.model_validate(terminal)
    return dict(terminal)


def run_converter(
    data: bytes | Sequence[bytes], *, fail: Exception | None = None, **options: Any
) -> Outcome:
    """Feed ``data`` to a ``ResponsesConverter`` (then ``close(fail)`` if given)."""
    converter = ResponsesConverter(**deterministic(options))
    pieces = [data] if isinstance(data, bytes) else list(data)
    events: list[ResponsesEvent] = []
    try:
        for piece in pieces:
            events += converter.feed(piece)
            if converter.done:
                break
        else:
            if fail is not None:
                events += converter.close(fail)
                return events, fail
        events += converter.close()
    except Exception as error:
        return events + list(getattr(error, "chunks", ())), error
    return events, converter.error


def run_operator(
    data: bytes | Sequence[bytes], *, fail: Exception | None = None, **options: Any
) -> Outcome:
    """Subscribe ``gemini_to_responses`` to ``data`` (then ``fail`` if given)."""
    pieces = [data] if isinstance(data, bytes) else list(data)
    source: reactivex.Observable[bytes] = reactivex.from_iterable(pieces)
    if fail is not None:
        source = reactivex.concat(source, reactivex.throw(fail))
    events: list[ResponsesEvent] = []
    errors: list[Exception] = []
    completed: list[bool] = []
    source.pipe(gemini_to_responses(**deterministic(options))).subscribe(
        events.append, errors.append, lambda: completed.append(True)
    )
    assert len(errors) + len(completed) == 1, "the stream must end exactly once"
    return events, errors[0] if errors else None
