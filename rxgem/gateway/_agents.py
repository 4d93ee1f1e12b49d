"""Gemini's agents (Deep Research) and background runs from an OpenAI client: which
requests the server's upstream can run, and the create body of an agent's.

The convention: a ``model`` of ``agent:<name>`` (``agent:deep-research-pro-preview-12-2025``)
asks the Interactions API for the agent ``<name>`` (its ``agent`` field instead of
``model``). Agents run only in the background, so only ``POST /v1/responses`` with
``background: true`` reaches one, and only on the Interactions upstream with Google
keeping the turns (``--upstream-api interactions --interactions-store``): Google runs
only stored interactions in the background.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ..replies import ErrorReply, bad_request
from ._options import GatewayOptions

__all__ = ["AGENT_PREFIX", "agent_body", "agent_of", "background_refusal", "chat_refusal"]

AGENT_PREFIX: Final = "agent:"
"""What a ``model`` starts with to name an agent instead of a model."""

_INTERACTIONS: Final = "rxgem serve --upstream-api interactions --interactions-store"
_AGENT_ONLY: Final = ("generation_config",)
"""Create-body fields an agent's interaction does not take (``CreateAgentInteraction``)."""


def agent_of(model: object) -> str | None:
    """The agent a request's ``model`` names (``agent:<name>`` → ``<name>``), else ``None``."""
    if isinstance(model, str) and model.startswith(AGENT_PREFIX):
        return model[len(AGENT_PREFIX) :]
    return None


def chat_refusal(body: Mapping[str, Any]) -> ErrorReply | None:
    """Why a chat completion cannot be run (it names an agent), or ``None``."""
    if agent_of(body.get("model")) is None:
        return None
    return bad_request(
        "an agent runs only in the background, which chat completions cannot do: use"
        " POST /v1/responses with background: true",
        "model",
        "agent_needs_background",
    )


def background_refusal(
    body: Mapping[str, Any], settings: GatewayOptions, keeps_responses: bool
) -> ErrorReply | None:
    """Why a Responses request for a background run or an agent cannot be run on this
    server, or ``None``. ``keeps_responses``: whether the server keeps this client's
    responses (a background response is found again through the local store)."""
    background = body.get("background") is True
    agent = agent_of(body.get("model"))
    if not background and agent is None:
        return None
    what = "an agent" if agent is not None else "a background run"
    if not settings.chosen.background:
        return bad_request(
            f"{what} needs Gemini's Interactions API, and this server asks generateContent:"
            f" run {_INTERACTIONS}",
            "model" if agent is not None else "background",
            "background_unsupported",
        )
    if not settings.interactions_store:
        return bad_request(
            f"{what} is kept at Google while it runs, and this server lets Google keep no"
            f" turns: run {_INTERACTIONS}",
            "background",
            "background_unsupported",
        )
    if not background:
        return bad_request(
            f"the agent {agent} runs only in the background: send background: true and"
            " poll GET /v1/responses/{id}",
            "background",
            "agent_needs_background",
        )
    if body.get("store") is False or not keeps_responses:
        return bad_request(
            "a background response must be stored: send store true (or leave it out), to a"
            " server that keeps responses",
            "store",
        )
    return None


def agent_body(create: Mapping[str, Any], agent: str) -> dict[str, Any]:
    """An Interactions create body for ``agent`` instead of a model: ``agent`` for
    ``model``, and without what an agent's interaction does not take."""
    body = {k: v for k, v in create.items() if k != "model" and k not in _AGENT_ONLY}
    body["agent"] = agent
    return body
