"""Gemini's enums sent as integers (``$alt=json;enum-encoding=int``), back to their names.

Clients that ask Google for ``enum-encoding=int`` (the Go SDK's REST transport,
LangChain's Vertex REST client, ...) get ``"finishReason": 1`` instead of
``"finishReason": "STOP"``. :class:`~rxgem.ResponseParser` turns every such number
into the enum value's NAME as the API's proto declares it, so everything after
the parser sees the same strings as with the default encoding.

**The two APIs number some enums differently**: the Gemini API
(``google.ai.generativelanguage.v1beta``) and Vertex AI
(``google.cloud.aiplatform.v1``) are separate protos. ``finishReason`` 6..10 and
``blockReason`` 5 name different values, and the unspecified ``blockReason`` is
``BLOCK_REASON_UNSPECIFIED`` on one and ``BLOCKED_REASON_UNSPECIFIED`` on the other.
Hence the parser's ``api`` option (``"gemini"`` or ``"vertex"``).

**Unknown numbers** (values Google adds after these tables, or a wrong ``api``)
are tolerated like unknown names: they become ``<PREFIX>_<number>``, the prefix
being the enum's zero value less ``_UNSPECIFIED`` (``FINISH_REASON_99``,
``BLOCK_REASON_9``, ``MODALITY_7``, ...). Such a name never collides with a real
one, and rxgem treats it as any unknown value (``finishReason`` → ``stop``).

The tables are copied from Google's protos in ``googleapis/googleapis`` (path and
enum named above each table); the numbers were checked against the code Google
generates from those protos (``google-ai-generativelanguage`` 0.12.1,
``google-cloud-aiplatform`` 2.7.0). Names that newer SDKs know but no published
proto numbers yet (``MISSING_THOUGHT_SIGNATURE``, ``CONTINUATION``, ...) arrive as
``FINISH_REASON_<n>`` when sent as numbers.
"""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

__all__ = [
    "ENUM_TABLES",
    "EnumTable",
    "EnumTables",
    "GeminiApi",
    "enum_name",
    "normalize_enums",
]

GeminiApi = Literal["gemini", "vertex"]
"""Which Google API a stream comes from: the Gemini API or Vertex AI (their enum numbers)."""


class EnumTable(NamedTuple):
    """One proto enum: its numbers' names, and the prefix of an unknown number's name."""

    prefix: str
    names: dict[int, str]


def enum_name(table: EnumTable, value: int) -> str:
    """The name of ``value`` in ``table``; ``<prefix>_<value>`` for a number it lacks."""
    name = table.names.get(value)
    return name if name is not None else f"{table.prefix}_{value}"


# -- Gemini API (generativelanguage v1beta) ----------------------------------------------

# google/ai/generativelanguage/v1beta/generative_service.proto: Candidate.FinishReason
_GEMINI_FINISH_REASON = EnumTable(
    "FINISH_REASON",
    {
        0: "FINISH_REASON_UNSPECIFIED",
        1: "STOP",
        2: "MAX_TOKENS",
        3: "SAFETY",
        4: "RECITATION",
        5: "OTHER",
        6: "LANGUAGE",
        7: "BLOCKLIST",
        8: "PROHIBITED_CONTENT",
        9: "SPII",
        10: "MALFORMED_FUNCTION_CALL",
        11: "IMAGE_SAFETY",
        12: "UNEXPECTED_TOOL_CALL",
        13: "TOO_MANY_TOOL_CALLS",
        14: "IMAGE_PROHIBITED_CONTENT",
        15: "IMAGE_OTHER",
        16: "NO_IMAGE",
        17: "IMAGE_RECITATION",
    },
)

# google/ai/generativelanguage/v1beta/generative_service.proto:
# GenerateContentResponse.PromptFeedback.BlockReason
_GEMINI_BLOCK_REASON = EnumTable(
    "BLOCK_REASON",
    {
        0: "BLOCK_REASON_UNSPECIFIED",
        1: "SAFETY",
        2: "OTHER",
        3: "BLOCKLIST",
        4: "PROHIBITED_CONTENT",
        5: "IMAGE_SAFETY",
    },
)

# google/ai/generativelanguage/v1beta/content.proto: Modality (ModalityTokenCount.modality)
_GEMINI_MODALITY = EnumTable(
    "MODALITY",
    {0: "MODALITY_UNSPECIFIED", 1: "TEXT", 2: "IMAGE", 3: "VIDEO", 4: "AUDIO", 5: "DOCUMENT"},
)

# -- Vertex AI (aiplatform v1) -----------------------------------------------------------

# google/cloud/aiplatform/v1/content.proto: Candidate.FinishReason
_VERTEX_FINISH_REASON = EnumTable(
    "FINISH_REASON",
    {
        0: "FINISH_REASON_UNSPECIFIED",
        1: "STOP",
        2: "MAX_TOKENS",
        3: "SAFETY",
        4: "RECITATION",
        5: "OTHER",
        6: "BLOCKLIST",
        7: "PROHIBITED_CONTENT",
        8: "SPII",
        9: "MALFORMED_FUNCTION_CALL",
        10: "MODEL_ARMOR",
    },
)

# google/cloud/aiplatform/v1/prediction_service.proto:
# GenerateContentResponse.PromptFeedback.BlockedReason
_VERTEX_BLOCK_REASON = EnumTable(
    "BLOCKED_REASON",
    {
        0: "BLOCKED_REASON_UNSPECIFIED",
        1: "SAFETY",
        2: "OTHER",
        3: "BLOCKLIST",
        4: "PROHIBITED_CONTENT",
        5: "MODEL_ARMOR",
        6: "JAILBREAK",
    },
)

# google/cloud/aiplatform/v1/content.proto: Modality (ModalityTokenCount.modality)
_VERTEX_MODALITY = EnumTable(
    "MODALITY",
    {0: "MODALITY_UNSPECIFIED", 1: "TEXT", 2: "IMAGE", 3: "VIDEO", 4: "AUDIO", 5: "DOCUMENT"},
)

# google/cloud/aiplatform/v1/prediction_service.proto:
# GenerateContentResponse.UsageMetadata.TrafficType (Vertex only; the Gemini API has
# no such field, so its streams use this table too)
_TRAFFIC_TYPE = EnumTable(
    "TRAFFIC_TYPE",
    {
        0: "TRAFFIC_TYPE_UNSPECIFIED",
        1: "ON_DEMAND",
        2: "PROVISIONED_THROUGHPUT",
        3: "ON_DEMAND_PRIORITY",
        4: "ON_DEMAND_FLEX",
    },
)

# -- shared by both ----------------------------------------------------------------------

# google/protobuf/struct.proto: NullValue (PartialArg.nullValue, Vertex streamed arguments)
_NULL_VALUE = EnumTable("NULL_VALUE", {0: "NULL_VALUE"})

# google/rpc/code.proto: Code (the ``status`` of an ``{"error": {...}}`` object)
_CODE = EnumTable(
    "CODE",
    {
        0: "OK",
        1: "CANCELLED",
        2: "UNKNOWN",
        3: "INVALID_ARGUMENT",
        4: "DEADLINE_EXCEEDED",
        5: "NOT_FOUND",
        6: "ALREADY_EXISTS",
        7: "PERMISSION_DENIED",
        8: "RESOURCE_EXHAUSTED",
        9: "FAILED_PRECONDITION",
        10: "ABORTED",
        11: "OUT_OF_RANGE",
        12: "UNIMPLEMENTED",
        13: "INTERNAL",
        14: "UNAVAILABLE",
        15: "DATA_LOSS",
        16: "UNAUTHENTICATED",
    },
)


class EnumTables(NamedTuple):
    """The tables of every enum-typed field of the models, for one API."""

    finish_reason: EnumTable
    block_reason: EnumTable
    modality: EnumTable
    traffic_type: EnumTable
    null_value: EnumTable
    status: EnumTable


ENUM_TABLES: dict[str, EnumTables] = {
    "gemini": EnumTables(
        _GEMINI_FINISH_REASON,
        _GEMINI_BLOCK_REASON,
        _GEMINI_MODALITY,
        _TRAFFIC_TYPE,
        _NULL_VALUE,
        _CODE,
    ),
    "vertex": EnumTables(
        _VERTEX_FINISH_REASON,
        _VERTEX_BLOCK_REASON,
        _VERTEX_MODALITY,
        _TRAFFIC_TYPE,
        _NULL_VALUE,
        _CODE,
    ),
}
"""The enum tables of each :data:`GeminiApi`."""

_DETAILS = (
    "promptTokensDetails",
    "candidatesTokensDetails",
    "cacheTokensDetails",
    "toolUsePromptTokensDetails",
)


def _fix(obj: Any, key: str, table: EnumTable) -> bool:
    """Replace an integer at ``obj[key]`` by its name; whether one was there."""
    if type(obj) is dict:
        value = obj.get(key)
        if type(value) is int:  # not bool: `true` stays a type error
            obj[key] = enum_name(table, value)
            return True
    return False


def normalize_enums(response: dict[str, Any], tables: EnumTables) -> bool:
    """Replace, in place, each integer enum of a decoded response object by its name.

    Looks only where the models have enum-typed fields: ``candidates[].finishReason``,
    ``candidates[].content.parts[].functionCall.partialArgs[].nullValue``,
    ``promptFeedback.blockReason``, ``usageMetadata.trafficType``,
    ``usageMetadata.*TokensDetails[].modality`` and ``error.status``. Anything else
    (a value of the wrong type included) is left for validation to judge.

    Returns:
        Whether any integer was replaced.
    """
    found = False
    candidates = response.get("candidates")
    if type(candidates) is list:
        for candidate in candidates:
            if type(candidate) is not dict:
                continue
            if type(candidate.get("finishReason")) is int:
                found |= _fix(candidate, "finishReason", tables.finish_reason)
            content = candidate.get("content")
            parts = content.get("parts") if type(content) is dict else None
            if type(parts) is list:
                for part in parts:
                    call = part.get("functionCall") if type(part) is dict else None
                    pieces = call.get("partialArgs") if type(call) is dict else None
                    if type(pieces) is list:
                        for piece in pieces:
                            found |= _fix(piece, "nullValue", tables.null_value)
    if "promptFeedback" in response:
        found |= _fix(response["promptFeedback"], "blockReason", tables.block_reason)
    usage = response.get("usageMetadata")
    if type(usage) is dict:
        if "trafficType" in usage:
            found |= _fix(usage, "trafficType", tables.traffic_type)
        for key in _DETAILS:
            details = usage.get(key)
            if type(details) is list:
                for detail in details:
                    found |= _fix(detail, "modality", tables.modality)
    if "error" in response:
        found |= _fix(response["error"], "status", tables.status)
    return found
