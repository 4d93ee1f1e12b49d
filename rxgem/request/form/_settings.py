"""The request's settings both readers make and both writers take: tools, the choice among
them, sampling, limits, the answer's format and thinking.

The Chat Completions reader (``tools``, ``tool_choice``, ``max_tokens``, ``temperature``,
``response_format``, ``reasoning_effort``, ...) and the Responses reader (``tools``,
``max_output_tokens``, ``text.format``, ``reasoning``, ``include``, ...) check the OpenAI
fields once and fill a :class:`Settings`; the writers put it on the wire:
``generateContent``'s ``tools``, ``toolConfig`` and ``generationConfig``, or the
Interactions body's ``tools``, ``generation_config`` and ``response_format``.

Schemas (a function's parameters, a JSON answer's schema) are held already translated, in
the dialect the request's ``api`` asks for (``SchemaTarget``): the reader translates them
where it reads them, so an error or an approximation names the field it came from.
"""

from __future__ import annotations

from typing import Literal, TypeAlias

import msgspec

from .._json import JSONObject

__all__ = ["Function", "Mode", "Settings", "Thinking", "Tools"]

Mode: TypeAlias = Literal["auto", "none", "any"]
"""How the model may call functions: as it likes, never, or at least one."""


class Function(msgspec.Struct, gc=False):
    """A function the model is offered (``parameters``: its translated schema, ``None``
    when it takes none)."""

    name: str
    description: str | None = None
    parameters: JSONObject | None = None


class Tools(msgspec.Struct, gc=False):
    """What the model is offered and how it must choose.

    ``search``: Google Search beside the functions; ``mode``: the choice the client made
    (``None``: none sent, the upstream's default); ``only``: the one function it must call.
    """

    functions: list[Function] = msgspec.field(default_factory=list)
    search: bool = False
    mode: Mode | None = None
    only: list[str] | None = None


class Thinking(msgspec.Struct, gc=False):
    """How much the model thinks (a ``level`` on Gemini 3, a ``budget`` in tokens on 2.5)
    and whether it sends thought summaries; ``where``: the field that asked."""

    where: str
    level: str | None = None
    budget: int | None = None
    include_thoughts: bool | None = None


class Settings(msgspec.Struct, gc=False):
    """Everything of a request but its conversation (``None``: not sent).

    ``json``: the answer is JSON (``schema``: the JSON Schema it follows, translated);
    ``logprobs``: return each token's log probability (``top_logprobs``: and that many
    alternatives); ``candidates``: Chat Completions' ``n``; ``modalities``: as OpenAI
    names them (``text``, ``audio``).
    """

    tools: Tools = msgspec.field(default_factory=Tools)
    max_output_tokens: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    presence_penalty: float | None = None
    frequency_penalty: float | None = None
    candidates: int | None = None
    seed: int | None = None
    top_logprobs: int | None = None
    logprobs: bool | None = None
    stop: list[str] | None = None
    modalities: list[str] | None = None
    json: bool = False
    schema: JSONObject | None = None
    thinking: Thinking | None = None
