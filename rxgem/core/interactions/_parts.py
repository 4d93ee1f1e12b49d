"""Interactions values → the Gemini values the items carry (pure functions, no state).

So that both outputs take an Interactions stream unchanged, each value becomes what
the ``generateContent`` side would have given:

- media content (``image``, ``audio``, ``video``, ``document``) → a Part with
  ``inlineData`` (or ``fileData`` for a ``uri``);
- ``code_execution_call``/``_result`` steps → ``executableCode``/``codeExecutionResult``
  Parts; every other built-in tool's call/result step → a ``toolCall``/``toolResponse``
  Part (``toolType`` named as Gemini 3 names it), with the step's signature;
- ``url_citation`` annotations (UTF-8 byte offsets in the step's text) → a
  ``citationMetadata`` piece (byte offsets in the whole text), which the outputs turn
  into ``url_citation`` annotations;
- ``usage`` → ``UsageMetadata``.
"""

from __future__ import annotations

from typing import Any

from ..gemini import ModalityTokenCount, Part, UsageMetadata
from ._models import Content, InteractionUsage, ModalityTokens

__all__ = [
    "BUILT_IN",
    "KNOWN_DELTAS",
    "KNOWN_STEPS",
    "MEDIA",
    "built_in_part",
    "citation",
    "media_part",
    "usage_metadata",
]

MEDIA = frozenset({"image", "audio", "video", "document"})
"""Content and delta types that carry media."""

_TOOL_TYPES = {
    "google_search": "GOOGLE_SEARCH_WEB",
    "url_context": "URL_CONTEXT",
    "google_maps": "GOOGLE_MAPS",
    "file_search": "FILE_SEARCH",
    "mcp_server_tool": "MCP_SERVER",
    "retrieval": "RETRIEVAL",
    "tool_search": "TOOL_SEARCH",
    "processing": "PROCESSING",
}
_SEARCH_TYPES = {"image_search": "GOOGLE_SEARCH_IMAGE", "enterprise_web_search": "ENTERPRISE_WEB"}

BUILT_IN = frozenset(
    [f"{tool}_{end}" for tool in (*_TOOL_TYPES, "code_execution") for end in ("call", "result")]
)
"""The step (and delta) types of Google's built-in tools: a call and a result per tool."""

KNOWN_STEPS = frozenset(
    {"model_output", "thought", "function_call", "function_result", "user_input", *BUILT_IN}
)
"""The step types the reader reads (others become ``UnknownStep`` items)."""

KNOWN_DELTAS = frozenset(
    {
        "text",
        "thought_summary",
        "thought_signature",
        "arguments_delta",
        "text_annotation_delta",
        "function_result",
        *MEDIA,
        *BUILT_IN,
    }
)
"""The delta types the reader reads (others become ``UnknownStep`` items)."""


def media_part(
    mime_type: str | None, data: str | None, uri: str | None, *, thought: bool = False
) -> Part | None:
    """A media content or delta → its ``inlineData`` (or ``fileData``) Part."""
    mark = True if thought else None
    if data is not None:
        inline: dict[str, Any] = {"data": data}
        if mime_type is not None:
            inline = {"mimeType": mime_type, "data": data}
        return Part(inline_data=inline, thought=mark)
    if uri is not None:
        file: dict[str, Any] = {"fileUri": uri}
        if mime_type is not None:
            file = {"mimeType": mime_type, "fileUri": uri}
        return Part(file_data=file, thought=mark)
    return None


def content_part(content: Content, *, thought: bool = False) -> Part | None:
    return media_part(content.mime_type, content.data, content.uri, thought=thought)


def built_in_part(kind: str, fields: dict[str, Any]) -> Part:
    """A built-in tool's step (``fields``: its start and deltas merged) → its Gemini Part."""
    signature = fields.get("signature") or None
    arguments = fields.get("arguments")
    if kind == "code_execution_call":
        args = arguments if type(arguments) is dict else {}
        language = args.get("language")
        code: dict[str, Any] = {
            "language": language.upper() if type(language) is str else "PYTHON",
            "code": args.get("code") if type(args.get("code")) is str else "",
        }
        if fields.get("id"):
            code["id"] = fields["id"]
        return Part(executable_code=code, thought_signature=signature)
    if kind == "code_execution_result":
        result = fields.get("result")
        outcome = "OUTCOME_FAILED" if fields.get("is_error") else "OUTCOME_OK"
        output: dict[str, Any] = {
            "outcome": outcome,
            "output": result if type(result) is str else "",
        }
        if fields.get("call_id"):
            output["id"] = fields["call_id"]
        return Part(code_execution_result=output, thought_signature=signature)
    tool, _, end = kind.rpartition("_")
    tool_type = _TOOL_TYPES.get(tool, tool.upper())
    search_type = fields.get("search_type")
    if type(search_type) is str and search_type in _SEARCH_TYPES:
        tool_type = _SEARCH_TYPES[search_type]
    if end == "call":
        call: dict[str, Any] = {"toolType": tool_type, "args": arguments or {}}
        if fields.get("id"):
            call = {"id": fields["id"], **call}
        return Part(tool_call=call, thought_signature=signature)
    response: dict[str, Any] = {"toolType": tool_type, "response": {"result": fields.get("result")}}
    if fields.get("is_error"):
        response["response"]["is_error"] = True
    if fields.get("call_id"):
        response = {"id": fields["call_id"], **response}
    return Part(tool_response=response, thought_signature=signature)


def citation(annotations: list[Any], base: int) -> dict[str, Any] | None:
    """The ``url_citation`` entries of ``annotations`` as a ``citationMetadata`` piece,
    their byte offsets moved by ``base`` (the bytes of the text before their step)."""
    sources = []
    for annotation in annotations:
        if type(annotation) is not dict or annotation.get("type") != "url_citation":
            continue
        url = annotation.get("url")
        start, end = annotation.get("start_index", 0), annotation.get("end_index")
        if type(url) is not str or type(start) is not int or type(end) is not int:
            continue
        title = annotation.get("title")
        source: dict[str, Any] = {"uri": url, "startIndex": base + start, "endIndex": base + end}
        if type(title) is str:
            source["title"] = title
        sources.append(source)
    return {"citationSources": sources} if sources else None


def _modalities(counts: list[ModalityTokens] | None) -> list[ModalityTokenCount] | None:
    if counts is None:
        return None
    return [
        ModalityTokenCount(
            modality=count.modality.upper() if count.modality else None, token_count=count.tokens
        )
        for count in counts
    ]


def usage_metadata(usage: InteractionUsage) -> UsageMetadata:
    """An Interaction's ``usage`` → the ``usageMetadata`` both outputs map.

    Input → prompt, output → candidates, thought → thoughts, cached → cached content,
    tool use → tool-use prompt, each by modality (upper-cased, as Gemini names them).
    """
    return UsageMetadata(
        prompt_token_count=usage.total_input_tokens,
        candidates_token_count=usage.total_output_tokens,
        total_token_count=usage.total_tokens,
        thoughts_token_count=usage.total_thought_tokens,
        cached_content_token_count=usage.total_cached_tokens,
        tool_use_prompt_token_count=usage.total_tool_use_tokens,
        prompt_tokens_details=_modalities(usage.input_tokens_by_modality),
        candidates_tokens_details=_modalities(usage.output_tokens_by_modality),
        cache_tokens_details=_modalities(usage.cached_tokens_by_modality),
        tool_use_prompt_tokens_details=_modalities(usage.tool_use_tokens_by_modality),
    )
