"""FakeGemini's model routes: ``models.list`` (one page) and ``models.get``, as Gemini answers."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, Final

from ._fake_interactions import google_error
from ._fake_response import FakeResponse

__all__ = ["MODELS", "is_model_route", "model_answer"]

MODELS: Final = (
    "gemini-2.5-flash",
    "gemini-2.5-flash-lite",
    "gemini-2.5-pro",
    "gemini-3-flash-preview",
    "gemini-3-pro-preview",
)
"""The models FakeGemini lists unless told otherwise."""
_MODEL_PATH: Final = re.compile(r"/v1beta/models/([^/:]+)")
_JSON: Final = "application/json; charset=UTF-8"


def _model(name: str) -> dict[str, Any]:
    return {
        "name": f"models/{name}",
        "displayName": name,
        "supportedGenerationMethods": ["generateContent", "streamGenerateContent", "countTokens"],
    }


def is_model_route(method: str, path: str) -> bool:
    """Whether ``method path`` asks for the model list or one model."""
    return method == "GET" and (path == "/v1beta/models" or _MODEL_PATH.fullmatch(path) is not None)


def model_answer(path: str, models: Sequence[str]) -> FakeResponse:
    """``models.list`` (every model, one page) or ``models.get``, as Gemini answers."""
    if path == "/v1beta/models":
        listing = {"models": [_model(name) for name in models]}
        return FakeResponse(body=json.dumps(listing).encode(), content_type=_JSON)
    name = path.rpartition("/")[2]
    if name not in models:
        return google_error(404, f"models/{name} is not found for API version v1beta.")
    return FakeResponse(body=json.dumps(_model(name)).encode(), content_type=_JSON)
