"""Typed models of Gemini's streamed ``GenerateContentResponse`` (wire names are camelCase).

Decoding is done by ``msgspec``: unknown fields are ignored, enum-like values
(``finishReason``, ``blockReason``, ...) are kept as plain strings so that values
Google adds later pass through, and a known field with the wrong type is a
validation error (reported as :class:`~rxgem.MalformedStreamError` by ``parse``).
Enums sent as integers (``enum-encoding=int``) are named by
:class:`~rxgem.core.ResponseParser` before these models see them
(``_enums``, per :data:`~rxgem.core.GeminiApi`), so their fields always hold strings.
Fields that rxgem carries without reading their insides (grounding, citations,
safety ratings, code execution, inline data, built-in tool parts) are plain JSON
values, so that they reach the OpenAI output as Gemini sent them.
"""

from __future__ import annotations

from typing import Any

import msgspec

__all__ = [
    "Candidate",
    "Content",
    "ErrorBody",
    "FunctionCall",
    "GenerateContentResponse",
    "ModalityTokenCount",
    "Part",
    "PartialArg",
    "PromptFeedback",
    "UsageMetadata",
]

JSON = Any


class PartialArg(msgspec.Struct, rename="camel", omit_defaults=True, frozen=True, gc=False):
    """One piece of a Vertex streamed argument (``streamFunctionCallArguments``)."""

    json_path: str
    string_value: str | None = None
    number_value: int | float | None = None
    bool_value: bool | None = None
    null_value: str | None = None
    will_continue: bool | None = None


class FunctionCall(msgspec.Struct, rename="camel", omit_defaults=True, frozen=True, gc=False):
    """A ``functionCall`` part: complete (``name`` + ``args``) or one piece of a streamed call."""

    name: str | None = None
    args: dict[str, JSON] | None = None
    id: str | None = None
    partial_args: list[PartialArg] | None = None
    will_continue: bool | None = None


class Part(msgspec.Struct, rename="camel", omit_defaults=True, frozen=True, gc=False):
    """One part of a candidate's content; ``thought``/``thoughtSignature`` ride on a data part.

    Exactly one data field is set (``text``, ``functionCall``, ``executableCode``,
    ``codeExecutionResult``, ``inlineData``, ``fileData``, ``toolCall``,
    ``toolResponse``, ``functionResponse``); the others are modifiers.
    """

    text: str | None = None
    function_call: FunctionCall | None = None
    executable_code: dict[str, JSON] | None = None
    code_execution_result: dict[str, JSON] | None = None
    inline_data: dict[str, JSON] | None = None
    file_data: dict[str, JSON] | None = None
    # Gemini 3 built-in tools (search, URL context, ...) run by Google: shown, never run here
    tool_call: dict[str, JSON] | None = None
    tool_response: dict[str, JSON] | None = None
    function_response: dict[str, JSON] | None = None
    video_metadata: dict[str, JSON] | None = None
    part_metadata: dict[str, JSON] | None = None
    media_resolution: JSON | None = None
    # modifiers last, as Google writes them: a part reads {"executableCode": ..., "thought": true}
    thought: bool | None = None
    thought_signature: str | None = None

    @property
    def is_data(self) -> bool:
        """Whether this is a part other than text or a function call (code, media, a tool part)."""
        return (
            self.executable_code is not None
            or self.code_execution_result is not None
            or self.inline_data is not None
            or self.file_data is not None
            or self.tool_call is not None
            or self.tool_response is not None
            or self.function_response is not None
        )


class Content(msgspec.Struct, rename="camel", omit_defaults=True, frozen=True, gc=False):
    """A candidate's content: ``parts`` (possibly absent) and ``role``."""

    parts: list[Part] | None = None
    role: str | None = None


class Candidate(msgspec.Struct, rename="camel", omit_defaults=True, frozen=True, gc=False):
    """One candidate of a response; a missing ``index`` means 0."""

    content: Content | None = None
    index: int | None = None
    finish_reason: str | None = None
    finish_message: str | None = None
    safety_ratings: list[JSON] | None = None
    citation_metadata: dict[str, JSON] | None = None
    grounding_metadata: dict[str, JSON] | None = None
    url_context_metadata: dict[str, JSON] | None = None
    avg_logprobs: float | None = None
    logprobs_result: dict[str, JSON] | None = None
    token_count: int | None = None
    continuation_token: JSON | None = None
    grounding_attributions: list[JSON] | None = None


class PromptFeedback(msgspec.Struct, rename="camel", omit_defaults=True, frozen=True, gc=False):
    """Prompt filtering; ``blockReason`` with no candidates means the prompt was blocked."""

    block_reason: str | None = None
    block_reason_message: str | None = None
    safety_ratings: list[JSON] | None = None


class ModalityTokenCount(msgspec.Struct, rename="camel", omit_defaults=True, frozen=True, gc=False):
    """Token count of one modality (``TEXT``, ``IMAGE``, ``AUDIO``, ...) in a usage snapshot."""

    modality: str | None = None
    token_count: int | None = None


class UsageMetadata(msgspec.Struct, rename="camel", omit_defaults=True, frozen=True, gc=False):
    """Cumulative token counts (a snapshot of the whole response so far, never a delta)."""

    prompt_token_count: int | None = None
    candidates_token_count: int | None = None
    total_token_count: int | None = None
    thoughts_token_count: int | None = None
    cached_content_token_count: int | None = None
    tool_use_prompt_token_count: int | None = None
    # typed (not plain JSON) because they come with every event: a struct decodes
    # several times faster than a dict
    prompt_tokens_details: list[ModalityTokenCount] | None = None
    candidates_tokens_details: list[ModalityTokenCount] | None = None
    cache_tokens_details: list[ModalityTokenCount] | None = None
    tool_use_prompt_tokens_details: list[ModalityTokenCount] | None = None
    traffic_type: str | None = None

    @property
    def has_counts(self) -> bool:
        """Whether this snapshot carries any token count (Vertex sends count-less ones)."""
        return (
            self.prompt_token_count is not None
            or self.candidates_token_count is not None
            or self.total_token_count is not None
            or self.thoughts_token_count is not None
            or self.cached_content_token_count is not None
            or self.tool_use_prompt_token_count is not None
        )


class ErrorBody(msgspec.Struct, rename="camel", omit_defaults=True, frozen=True, gc=False):
    """The body of Google's ``{"error": {...}}`` object."""

    code: int | None = None
    message: str | None = None
    status: str | None = None
    details: list[JSON] | None = None


class GenerateContentResponse(
    msgspec.Struct, rename="camel", omit_defaults=True, frozen=True, gc=False
):
    """One streamed event of ``streamGenerateContent``."""

    candidates: list[Candidate] | None = None
    prompt_feedback: PromptFeedback | None = None
    usage_metadata: UsageMetadata | None = None
    model_version: str | None = None
    response_id: str | None = None
    create_time: str | None = None
    model_status: JSON | None = None
    error: ErrorBody | None = None
