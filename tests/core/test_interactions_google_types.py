"""Every recorded Interactions event and object is valid for google-genai's own types
(``google.genai._gaos.types.interactions``, the judge of Interactions shapes)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from interactions_harness import OBJECTS, OLD, STREAMS, events, name

types = pytest.importorskip(
    "google.genai._gaos.types.interactions",
    reason="google-genai is missing (pip install google-genai)",
)
pydantic = pytest.importorskip(
    "pydantic", reason="pydantic is missing (pip install google-genai, which brings it)"
)

EVENTS = pydantic.TypeAdapter(types.InteractionSSEEvent)
UNKNOWN_ON_PURPOSE = {"unknown-types"}
"""Project-own samples whose made-up types google-genai reads as its Unknown* variants."""


def _search_step_without_payload(event: dict[str, object]) -> str | None:
    """The recorded shapes google-genai refuses: Google starts a ``google_search_call``
    step without ``arguments`` and a ``google_search_result`` step without ``result``
    (they follow in the step's delta), which the types require. The missing key, if so."""
    step = event.get("step")
    if event.get("event_type") != "step.start" or not isinstance(step, dict):
        return None
    key = {"google_search_call": "arguments", "google_search_result": "result"}.get(
        str(step.get("type"))
    )
    return key if key is not None and key not in step else None


def _unknown(value: object) -> list[str]:
    """The ``Unknown*`` variants (types google-genai does not know) anywhere in ``value``."""
    found: list[str] = []
    if isinstance(value, pydantic.BaseModel):
        if getattr(value, "is_unknown", False):
            found.append(type(value).__name__)
        for field_value in vars(value).values():  # (getattr warns on deprecated fields)
            found += _unknown(field_value)
    elif isinstance(value, list | tuple):
        for entry in value:
            found += _unknown(entry)
    return found


@pytest.mark.parametrize("path", [p for p in STREAMS if name(p) not in OLD], ids=name)
def test_every_recorded_event_is_an_interaction_sse_event(path: Path) -> None:
    for number, event in enumerate(events(path), 1):
        missing = _search_step_without_payload(event)
        if missing is not None:
            with pytest.raises(pydantic.ValidationError, match=missing):
                EVENTS.validate_python(event)
            filled: object = {"arguments": {}, "result": []}[missing]
            event = {**event, "step": {**event["step"], missing: filled}}
        model = EVENTS.validate_python(event)
        unknown = _unknown(model)
        if name(path) not in UNKNOWN_ON_PURPOSE:
            assert unknown == [], f"event {number}"


@pytest.mark.parametrize("path", [p for p in OBJECTS if name(p) not in OLD], ids=name)
def test_every_recorded_object_is_an_interaction(path: Path) -> None:
    model = types.Interaction.model_validate(json.loads(path.read_text("utf-8")))
    assert _unknown(model) == []
