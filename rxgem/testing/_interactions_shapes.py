"""The shapes of an Interactions create body, as tables: which fields each object takes,
which are required, which values an enum takes (for :mod:`._interactions_validation`).

Written out from Google's API types (google-genai's ``google.genai._gaos.types.interactions``),
not imported from rxgem's request translation: a judge shares nothing with what it judges.
"""

from __future__ import annotations

from typing import Any, Final

__all__ = [
    "AGENT_FIELDS",
    "ARGUMENTS",
    "CALL",
    "CHOICES",
    "COMMON",
    "CONFIG",
    "CONTENTS",
    "FORMATS",
    "LEVELS",
    "MIME_TYPES",
    "MODEL_FIELDS",
    "RESOLUTIONS",
    "RESULT",
    "RESULT_ENTRIES",
    "STEPS",
    "STEP_ENUMS",
    "SUMMARIES",
    "TEXT_FORMAT",
    "TIERS",
    "TOOLS",
    "Spec",
]

COMMON: Final = frozenset(
    {
        "input",
        "previous_interaction_id",
        "tools",
        "system_instruction",
        "response_format",
        "response_mime_type",
        "response_modalities",
        "background",
        "store",
        "stream",
        "service_tier",
        "safety_settings",
        "webhook_config",
        "continuation_token",
        "environment",
        "labels",
    }
)
MODEL_FIELDS: Final = COMMON | {"model", "generation_config", "cached_content"}
AGENT_FIELDS: Final = COMMON | {"agent", "agent_config"}

CALL = frozenset({"id", "arguments", "signature", "type"})
RESULT = frozenset({"call_id", "is_error", "result", "signature", "type"})
# step type → (its fields, the required ones)
STEPS: Final[dict[str, tuple[frozenset[str], frozenset[str]]]] = {
    "user_input": (frozenset({"content", "type"}), frozenset()),
    "model_output": (frozenset({"content", "error", "type"}), frozenset()),
    "thought": (frozenset({"signature", "summary", "type"}), frozenset()),
    "function_call": (
        frozenset({"arguments", "id", "name", "type"}),
        frozenset({"arguments", "id", "name"}),
    ),
    "function_result": (
        frozenset({"call_id", "is_error", "name", "result", "type"}),
        frozenset({"call_id", "result"}),
    ),
    "code_execution_call": (CALL, frozenset({"arguments", "id"})),
    "code_execution_result": (RESULT, frozenset({"call_id", "result"})),
    "google_search_call": (CALL | {"search_type"}, frozenset({"arguments", "id"})),
    "google_search_result": (RESULT, frozenset({"call_id", "result"})),
    "url_context_call": (CALL, frozenset({"arguments", "id"})),
    "url_context_result": (RESULT, frozenset({"call_id", "result"})),
    "google_maps_call": (CALL, frozenset({"id"})),
    "google_maps_result": (RESULT - {"is_error"}, frozenset({"call_id", "result"})),
    "file_search_call": (frozenset({"id", "signature", "type"}), frozenset({"id"})),
    "file_search_result": (frozenset({"call_id", "signature", "type"}), frozenset({"call_id"})),
    "mcp_server_tool_call": (
        frozenset({"arguments", "id", "name", "server_name", "type"}),
        frozenset({"arguments", "id", "name", "server_name"}),
    ),
    "mcp_server_tool_result": (
        frozenset({"call_id", "name", "result", "server_name", "type"}),
        frozenset({"call_id", "result"}),
    ),
    "retrieval_call": (CALL | {"retrieval_type"}, frozenset({"arguments", "id"})),
    "retrieval_result": (RESULT - {"result"}, frozenset({"call_id"})),
    "tool_search_call": (CALL, frozenset({"arguments", "id"})),
    "tool_search_result": (RESULT - {"is_error"}, frozenset({"call_id"})),
    "processing_call": (frozenset({"id", "signature", "type"}), frozenset({"id"})),
    "processing_result": (frozenset({"call_id", "signature", "type"}), frozenset({"call_id"})),
}
# a built-in tool call's arguments, and the entries of its result list: field → kind
# ("str", "[str]", "list", "number", "bool", or the allowed values)
Spec = dict[str, Any]
ARGUMENTS: Final[dict[str, Spec]] = {
    "code_execution_call": {"code": "str", "language": ("python", "bash")},
    "google_search_call": {"queries": "[str]"},
    "url_context_call": {"urls": "[str]"},
    "google_maps_call": {"queries": "[str]"},
    "retrieval_call": {"queries": "[str]"},
    "tool_search_call": {"function_names": "[str]"},
}
RESULT_ENTRIES: Final[dict[str, Spec]] = {
    "google_search_result": {"search_suggestions": "str"},
    "url_context_result": {"status": ("success", "error", "paywall", "unsafe"), "url": "str"},
    "google_maps_result": {"places": "list", "widget_context_token": "str"},
}
STEP_ENUMS: Final[dict[str, tuple[str, ...]]] = {
    "search_type": ("web_search", "image_search", "enterprise_web_search"),
    "retrieval_type": ("vertex_ai_search", "rag_store", "exa_ai_search", "parallel_ai_search"),
}
# the media types Google takes per content type (written out here, not imported from the
# request translation: a judge shares nothing with what it judges)
MIME_TYPES: Final[dict[str, tuple[str, ...]]] = {
    "image": tuple(
        f"image/{t}" for t in ("png", "jpeg", "webp", "heic", "heif", "gif", "bmp", "tiff")
    ),
    "audio": tuple(
        f"audio/{t}"
        for t in (
            "wav",
            "mp3",
            "aiff",
            "aac",
            "ogg",
            "flac",
            "mpeg",
            "m4a",
            "l16",
            "opus",
            "alaw",
            "mulaw",
            "webm",
        )
    ),
    "video": tuple(
        f"video/{t}" for t in ("mp4", "mpeg", "mpg", "mov", "avi", "x-flv", "webm", "wmv", "3gpp")
    ),
    "document": (
        "application/pdf",
        "text/csv",
        "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        "application/vnd.ms-powerpoint",
        "application/vnd.oasis.opendocument.presentation",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "application/msword",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.template",
        "application/vnd.oasis.opendocument.text",
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "application/vnd.ms-excel",
        "application/vnd.oasis.opendocument.spreadsheet",
    ),
}
RESOLUTIONS: Final = ("low", "medium", "high", "ultra_high")
MEDIA = frozenset({"data", "mime_type", "type", "uri"})
CONTENTS: Final[dict[str, frozenset[str]]] = {
    "text": frozenset({"annotations", "text", "type"}),
    "image": MEDIA | {"resolution"},
    "audio": MEDIA | {"channels", "processing", "sample_rate"},
    "video": MEDIA | {"name", "processing", "resolution"},
    "document": MEDIA | {"processing", "resolution"},
}
TOOLS: Final[dict[str, frozenset[str]]] = {
    "function": frozenset(
        {"defer_loading", "description", "name", "parameters", "short_description", "type"}
    ),
    "google_search": frozenset({"search_types", "type"}),
    "code_execution": frozenset({"type"}),
    "url_context": frozenset({"type"}),
    "google_maps": frozenset({"enable_widget", "latitude", "longitude", "type"}),
    "file_search": frozenset({"file_search_store_names", "metadata_filter", "top_k", "type"}),
    "mcp_server": frozenset({"allowed_tools", "defer_loading", "headers", "name", "type", "url"}),
    "retrieval": frozenset(
        {
            "exa_ai_search_config",
            "parallel_ai_search_config",
            "rag_store_config",
            "retrieval_types",
            "type",
            "vertex_ai_search_config",
        }
    ),
    "tool_search": frozenset({"description", "execution", "name", "parameters", "type"}),
    "computer_use": frozenset(
        {
            "disabled_safety_policies",
            "enable_prompt_injection_detection",
            "environment",
            "excluded_predefined_functions",
            "type",
        }
    ),
}
CONFIG: Final = frozenset(
    {
        "image_config",
        "max_output_tokens",
        "seed",
        "speech_config",
        "stop_sequences",
        "temperature",
        "thinking_level",
        "thinking_summaries",
        "tool_choice",
        "top_p",
        "transcription_config",
        "video_config",
    }
)
LEVELS: Final = ("minimal", "low", "medium", "high", "xhigh")
SUMMARIES: Final = ("auto", "none")
CHOICES: Final = ("auto", "any", "none", "validated")
FORMATS: Final[dict[str, frozenset[str]]] = {
    "text": frozenset({"mime_type", "schema", "type"}),
    "audio": frozenset({"bit_rate", "delivery", "mime_type", "sample_rate", "type"}),
    "image": frozenset({"aspect_ratio", "delivery", "image_size", "mime_type", "type"}),
    "video": frozenset({"aspect_ratio", "delivery", "duration", "gcs_uri", "resolution", "type"}),
}
TEXT_FORMAT: Final[Spec] = {
    "type": "str",
    "mime_type": ("application/json", "text/plain"),
    "schema": "object",
}
TIERS: Final = ("flex", "standard", "priority", "deferred")
