"""Gemini's model list in OpenAI's shape, sans-IO.

Gemini: ``{"models": [{"name": "models/gemini-2.5-flash", "supportedGenerationMethods":
[...], ...}], "nextPageToken": "..."}``; OpenAI: ``{"object": "list", "data": [{"id":
"gemini-2.5-flash", "object": "model", "created": 0, "owned_by": "google"}]}``.
Vertex AI's publisher model list (``{"publisherModels": [{"name":
"publishers/google/models/gemini-2.5-flash", ...}]}``) is read the same way.
Gemini gives no creation time: ``created`` is 0.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..core import InvalidRequestError
from ..transport import model_segment

__all__ = ["model_id", "openai_model", "openai_model_list", "valid_model_name"]


def model_id(name: str) -> str:
    """``models/gemini-2.5-flash`` (or Vertex's ``publishers/google/models/...``) →
    ``gemini-2.5-flash``."""
    return name.rpartition("models/")[2] if "models/" in name else name


def valid_model_name(name: object) -> bool:
    """Whether ``name`` (an id, or one after ``models/``) is a model the server forwards.

    The same check as where the upstream URL is built
    (:func:`rxgem.transport.model_segment`), made early for a clear 400/404.
    """
    if not isinstance(name, str):
        return False
    try:
        model_segment(name)
    except InvalidRequestError:
        return False
    return True


def _serves_chat(model: Mapping[str, Any]) -> bool:
    methods = model.get("supportedGenerationMethods")
    if not isinstance(methods, list):
        return True  # not said (e.g. a single model, or Vertex): keep it
    return "generateContent" in methods or "streamGenerateContent" in methods


def openai_model(model: Mapping[str, Any]) -> dict[str, Any] | None:
    """One Gemini model as an OpenAI model object, or ``None`` without a usable name."""
    name = model.get("name")
    if not isinstance(name, str) or not name:
        return None
    return {"id": model_id(name), "object": "model", "created": 0, "owned_by": "google"}


def openai_model_list(pages: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The pages of Gemini's ``models.list`` as one OpenAI model list.

    Only models that can answer ``generateContent`` are kept (embedding models and the
    like cannot serve a chat completion); duplicates are dropped.
    """
    seen: set[str] = set()
    data: list[dict[str, Any]] = []
    for page in pages:
        # the Gemini API lists "models"; Vertex AI's publisher model list, "publisherModels"
        models = page.get("models", page.get("publisherModels"))
        for model in models if isinstance(models, list) else ():
            if not isinstance(model, Mapping) or not _serves_chat(model):
                continue
            item = openai_model(model)
            if item is not None and item["id"] not in seen:
                seen.add(item["id"])
                data.append(item)
    return {"object": "list", "data": data}
