"""``chat_to_interaction``: a Chat Completions request body → an Interactions create body."""

from __future__ import annotations

from typing import Any

from ...core import InvalidRequestError
from .._form import place_signatures
from .._json import JSONObject
from .._messages import read_messages
from .._model_families import model_family
from .._params import Unsupported
from .._request import checked_model, read_settings
from ._config import interaction_config, interaction_tools, response_format
from ._steps import conversation_steps

__all__ = ["chat_to_interaction", "flag"]


def flag(value: Any, where: str) -> bool:
    """A request's boolean (``None``: false)."""
    if value is None:
        return False
    if type(value) is not bool:
        raise InvalidRequestError("must be true or false", where=where)
    return value


def chat_to_interaction(
    body: JSONObject,
    *,
    store: bool = False,
    previous_interaction_id: str | None = None,
    include_thoughts: bool | None = None,
    unsupported: Unsupported = "error",
) -> JSONObject:
    """An OpenAI Chat Completions request body → the body of ``POST /v1beta/interactions``.

    The whole conversation goes as ``input`` steps (Chat Completions is stateless): every
    thought signature the client kept goes back as a ``thought`` step before the step it
    signed. ``stream`` is copied; the body's own ``store`` is OpenAI's and is not read.

    Args:
        store: whether Google keeps the interaction (Google's default is true; a
            stateless chat sends false).
        previous_interaction_id: the stored interaction this one continues (its steps
            are at Google, so ``messages`` then holds only what is new, and must stand
            on its own: a tool message answering a call made there is refused, as
            any tool message without its call is; :func:`responses_to_interaction`
            takes such answers).
        include_thoughts: ask for thought summaries (``thinking_summaries``;
            ``None``: Google's default).
        unsupported: ``"error"`` (default) refuses a field Interactions has no
            counterpart for, ``"warn"`` leaves it out with an ``UnsupportedWarning``.

    Raises:
        InvalidRequestError: the request cannot be translated; ``where`` names the field.
    """
    model = checked_model(body, unsupported)
    family = model_family(model)
    conversation = read_messages(body.get("messages"), media_results=True)
    if family.strict_signatures:
        place_signatures(conversation.turns, in_place=True)
    settings = read_settings(body, family, "json_schema", None, unsupported)
    out: JSONObject = {
        "model": model.removeprefix("models/"),
        "input": conversation_steps(conversation, "messages"),
    }
    if conversation.system:
        out["system_instruction"] = "\n\n".join(conversation.system)
    flat = interaction_tools(settings.tools)
    if flat:
        out["tools"] = flat
    config = interaction_config(settings, include_thoughts=include_thoughts, policy=unsupported)
    if config:
        out["generation_config"] = config
    spec = response_format(settings)
    if spec is not None:
        out["response_format"] = spec
    if flag(body.get("stream"), "stream"):
        out["stream"] = True
    out["store"] = store
    if previous_interaction_id is not None:
        out["previous_interaction_id"] = previous_interaction_id
    return out
