"""google-genai as the strict judge of an Interactions create body.

``google.genai._gaos.types.interactions.CreateModelInteraction`` validates a body, but its
models keep unknown keys (``extra="allow"``) and its open unions take an unknown ``type``
as an ``Unknown*`` variant, an unknown enum value as an ``UnrecognizedStr``: a body
Google refuses would pass. :func:`strict_problems` validates the body and then walks the
validated model, reporting each of those anywhere, by path.

``response_format`` falls back to any object in google-genai's union: here it must be one
of the typed formats (text, audio, image, video).

Exempt: a ``function_result``'s ``result`` object and a function's ``parameters`` (free
JSON by design), and ``model`` (a model name the SDK does not list yet is still a model).
"""

from __future__ import annotations

from typing import Any

import pytest

interactions = pytest.importorskip(
    "google.genai._gaos.types.interactions",
    reason="google-genai is missing (pip install google-genai)",
)
basemodel = pytest.importorskip(
    "google.genai._gaos.types.basemodel",
    reason="google-genai is missing (pip install google-genai)",
)

import pydantic  # noqa: E402  (google-genai's dependency)

CREATE = interactions.CreateModelInteraction
_FREE = (interactions.FunctionResultStepResult,)
_UNRECOGNIZED = basemodel.UnrecognizedStr


def _walk(value: Any, where: str, problems: list[str]) -> None:
    if isinstance(value, pydantic.BaseModel):
        if getattr(value, "is_unknown", False) is True:
            problems.append(f"{where}: unknown variant {type(value).__name__}")
            return
        if isinstance(value, _FREE):
            return
        if value.model_extra:
            problems.append(f"{where}: unknown keys {sorted(value.model_extra)}")
        for name in type(value).model_fields:
            if where == "" and name == "model":
                continue
            _walk(value.__dict__.get(name), f"{where}.{name}" if where else name, problems)
    elif isinstance(value, _UNRECOGNIZED):
        problems.append(f"{where}: unrecognized value {str(value)!r}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _walk(item, f"{where}[{i}]", problems)
    elif isinstance(value, dict) and not where.endswith(("parameters", "arguments", "schema_")):
        for key, item in value.items():
            _walk(item, f"{where}.{key}", problems)


def strict_problems(body: dict[str, Any]) -> list[str]:
    """What google-genai refuses in ``body``, strictly (empty: accepted)."""
    try:
        model = CREATE.model_validate(body)
    except pydantic.ValidationError as exc:
        return [f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()]
    except TypeError as exc:  # google-genai's open unions hash the type: a list fails there
        return [f"refused: {exc}"]
    problems: list[str] = []
    formats = model.response_format
    for spec in formats if isinstance(formats, list) else [formats]:
        if isinstance(spec, dict):
            problems.append(f"response_format: no typed format matches {sorted(spec)}")
    _walk(model, "", problems)
    return problems


def assert_strict(body: dict[str, Any]) -> None:
    problems = strict_problems(body)
    assert problems == [], problems
