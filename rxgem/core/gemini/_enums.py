"""Gemini's enums sent as integers (``$alt=json;enum-encoding=int``), back to their names.

Clients that ask Google for ``enum-encoding=int`` (the Go SDK's REST transport,
LangChain's Vertex REST client, ...) get ``"finishReason": 1`` instead of
``"finishReason": "STOP"``. :class:`~rxgem.ResponseParser` turns every such number
into the enum value's NAME as the API's proto declares it, so everything after
the parser sees the same strings as with the default encoding. Most of this module
is a data table: one :class:`EnumTable` per proto enum and API.

**The two APIs number some enums differently**: the Gemini API
(``google.ai.generativelanguage.v1beta``) and Vertex AI
(``google.cloud.aiplatform.v1``) are separate protos. ``finishReason`` 6..10 and
``blockReason`` 5 name different values, the unspecified ``blockReason`` is
``BLOCK_REASON_UNSPECIFIED`` on one and ``BLOCKED_REASON_UNSPECIFIED`` on the other,
a safety rating's ``category`` is numbered differently from 1 on (``1`` is
``HARM_CATEGORY_DEROGATORY`` on the Gemini API, ``HARM_CATEGORY_HATE_SPEECH`` on
Vertex AI), and Vertex AI's ``urlRetrievalStatus`` stops at 2. Hence the parser's
``api`` option (``"gemini"`` or ``"vertex"``). A field only one API has
(``severity``, ``trafficType``: Vertex AI; ``functionResponse.scheduling``: the
Gemini API; ``mediaResolution.level``: Vertex AI) is read with that API's table on
both.

**Unknown numbers** (values Google adds after these tables, or a wrong ``api``)
are tolerated like unknown names: they become ``<PREFIX>_<number>``, the prefix
being the enum's zero value less ``_UNSPECIFIED`` (``FINISH_REASON_99``,
``BLOCK_REASON_9``, ``MODALITY_7``, ``HARM_CATEGORY_12``, ...). Such a name never
collides with a real one, and rxgem treats it as any unknown value (``finishReason``
→ ``stop``).

The tables are copied from Google's protos in ``googleapis/googleapis`` (path and
enum named above each table); the numbers were checked against the code Google
generates from those protos (``google-ai-generativelanguage`` 0.12.1,
``google-cloud-aiplatform`` 2.7.0). Names that newer SDKs know but no published
proto numbers yet (``MISSING_THOUGHT_SIGNATURE``, ``CONTINUATION``, ...) arrive as
``FINISH_REASON_<n>`` when sent as numbers. Enum fields that no published proto
declares at all (``toolCall.toolType`` and ``toolResponse.toolType`` of Gemini 3's
built-in tool parts, ``modelStatus.modelStage``) are left as they came.

**Which events are read this way** is the parser's choice: it names integers only
on the path it takes once an event fails the typed decode, that is once the stream
has shown an integer in a field the models type as a string (``finishReason``,
``blockReason``, ``modality``, ``trafficType``, ``nullValue``, ``status``). An
integer inside a field the models keep as plain JSON (``safetyRatings``,
``executableCode``, ``codeExecutionResult``, ``urlContextMetadata``, ...) of an
event before that is left as it came.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, NamedTuple

if TYPE_CHECKING:
    from ._models import GenerateContentResponse

__all__ = [
    "ENUM_TABLES",
    "EnumTable",
    "EnumTables",
    "GeminiApi",
    "enum_name",
    "normalize_carried",
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

# google/ai/generativelanguage/v1beta/safety.proto: HarmCategory (SafetyRating.category)
_GEMINI_HARM_CATEGORY = EnumTable(
    "HARM_CATEGORY",
    {
        0: "HARM_CATEGORY_UNSPECIFIED",
        1: "HARM_CATEGORY_DEROGATORY",
        2: "HARM_CATEGORY_TOXICITY",
        3: "HARM_CATEGORY_VIOLENCE",
        4: "HARM_CATEGORY_SEXUAL",
        5: "HARM_CATEGORY_MEDICAL",
        6: "HARM_CATEGORY_DANGEROUS",
        7: "HARM_CATEGORY_HARASSMENT",
        8: "HARM_CATEGORY_HATE_SPEECH",
        9: "HARM_CATEGORY_SEXUALLY_EXPLICIT",
        10: "HARM_CATEGORY_DANGEROUS_CONTENT",
        11: "HARM_CATEGORY_CIVIC_INTEGRITY",
    },
)

# google/ai/generativelanguage/v1beta/safety.proto: SafetyRating.HarmProbability
_GEMINI_HARM_PROBABILITY = EnumTable(
    "HARM_PROBABILITY",
    {0: "HARM_PROBABILITY_UNSPECIFIED", 1: "NEGLIGIBLE", 2: "LOW", 3: "MEDIUM", 4: "HIGH"},
)

# google/ai/generativelanguage/v1beta/content.proto: ExecutableCode.Language
_GEMINI_LANGUAGE = EnumTable("LANGUAGE", {0: "LANGUAGE_UNSPECIFIED", 1: "PYTHON"})

# google/ai/generativelanguage/v1beta/content.proto: CodeExecutionResult.Outcome
_GEMINI_OUTCOME = EnumTable(
    "OUTCOME",
    {
        0: "OUTCOME_UNSPECIFIED",
        1: "OUTCOME_OK",
        2: "OUTCOME_FAILED",
        3: "OUTCOME_DEADLINE_EXCEEDED",
    },
)

# google/ai/generativelanguage/v1beta/generative_service.proto:
# UrlMetadata.UrlRetrievalStatus
_GEMINI_URL_RETRIEVAL_STATUS = EnumTable(
    "URL_RETRIEVAL_STATUS",
    {
        0: "URL_RETRIEVAL_STATUS_UNSPECIFIED",
        1: "URL_RETRIEVAL_STATUS_SUCCESS",
        2: "URL_RETRIEVAL_STATUS_ERROR",
        3: "URL_RETRIEVAL_STATUS_PAYWALL",
        4: "URL_RETRIEVAL_STATUS_UNSAFE",
    },
)

# google/ai/generativelanguage/v1beta/content.proto: FunctionResponse.Scheduling (Gemini
# API only; Vertex AI's FunctionResponse has no such field, so its streams use this table too)
_SCHEDULING = EnumTable(
    "SCHEDULING",
    {0: "SCHEDULING_UNSPECIFIED", 1: "SILENT", 2: "WHEN_IDLE", 3: "INTERRUPT"},
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

# google/cloud/aiplatform/v1/content.proto: HarmCategory (SafetyRating.category)
_VERTEX_HARM_CATEGORY = EnumTable(
    "HARM_CATEGORY",
    {
        0: "HARM_CATEGORY_UNSPECIFIED",
        1: "HARM_CATEGORY_HATE_SPEECH",
        2: "HARM_CATEGORY_DANGEROUS_CONTENT",
        3: "HARM_CATEGORY_HARASSMENT",
        4: "HARM_CATEGORY_SEXUALLY_EXPLICIT",
        5: "HARM_CATEGORY_CIVIC_INTEGRITY",
        6: "HARM_CATEGORY_JAILBREAK",
    },
)

# google/cloud/aiplatform/v1/content.proto: SafetyRating.HarmProbability
_VERTEX_HARM_PROBABILITY = EnumTable(
    "HARM_PROBABILITY",
    {0: "HARM_PROBABILITY_UNSPECIFIED", 1: "NEGLIGIBLE", 2: "LOW", 3: "MEDIUM", 4: "HIGH"},
)

# google/cloud/aiplatform/v1/content.proto: SafetyRating.HarmSeverity (Vertex only; the
# Gemini API's SafetyRating has no severity, so its streams use this table too)
_HARM_SEVERITY = EnumTable(
    "HARM_SEVERITY",
    {
        0: "HARM_SEVERITY_UNSPECIFIED",
        1: "HARM_SEVERITY_NEGLIGIBLE",
        2: "HARM_SEVERITY_LOW",
        3: "HARM_SEVERITY_MEDIUM",
        4: "HARM_SEVERITY_HIGH",
    },
)

# google/cloud/aiplatform/v1/tool.proto: ExecutableCode.Language
_VERTEX_LANGUAGE = EnumTable("LANGUAGE", {0: "LANGUAGE_UNSPECIFIED", 1: "PYTHON"})

# google/cloud/aiplatform/v1/tool.proto: CodeExecutionResult.Outcome
_VERTEX_OUTCOME = EnumTable(
    "OUTCOME",
    {
        0: "OUTCOME_UNSPECIFIED",
        1: "OUTCOME_OK",
        2: "OUTCOME_FAILED",
        3: "OUTCOME_DEADLINE_EXCEEDED",
    },
)

# google/cloud/aiplatform/v1/content.proto: UrlMetadata.UrlRetrievalStatus
_VERTEX_URL_RETRIEVAL_STATUS = EnumTable(
    "URL_RETRIEVAL_STATUS",
    {
        0: "URL_RETRIEVAL_STATUS_UNSPECIFIED",
        1: "URL_RETRIEVAL_STATUS_SUCCESS",
        2: "URL_RETRIEVAL_STATUS_ERROR",
    },
)

# google/cloud/aiplatform/v1/content.proto: Part.MediaResolution.Level (Vertex only; the
# Gemini API's v1beta Part has no mediaResolution, so its streams use this table too)
_MEDIA_RESOLUTION = EnumTable(
    "MEDIA_RESOLUTION",
    {
        0: "MEDIA_RESOLUTION_UNSPECIFIED",
        1: "MEDIA_RESOLUTION_LOW",
        2: "MEDIA_RESOLUTION_MEDIUM",
        3: "MEDIA_RESOLUTION_HIGH",
        4: "MEDIA_RESOLUTION_ULTRA_HIGH",
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
    harm_category: EnumTable
    harm_probability: EnumTable
    harm_severity: EnumTable
    language: EnumTable
    outcome: EnumTable
    url_retrieval_status: EnumTable
    scheduling: EnumTable
    media_resolution: EnumTable


ENUM_TABLES: dict[str, EnumTables] = {
    "gemini": EnumTables(
        finish_reason=_GEMINI_FINISH_REASON,
        block_reason=_GEMINI_BLOCK_REASON,
        modality=_GEMINI_MODALITY,
        traffic_type=_TRAFFIC_TYPE,
        null_value=_NULL_VALUE,
        status=_CODE,
        harm_category=_GEMINI_HARM_CATEGORY,
        harm_probability=_GEMINI_HARM_PROBABILITY,
        harm_severity=_HARM_SEVERITY,
        language=_GEMINI_LANGUAGE,
        outcome=_GEMINI_OUTCOME,
        url_retrieval_status=_GEMINI_URL_RETRIEVAL_STATUS,
        scheduling=_SCHEDULING,
        media_resolution=_MEDIA_RESOLUTION,
    ),
    "vertex": EnumTables(
        finish_reason=_VERTEX_FINISH_REASON,
        block_reason=_VERTEX_BLOCK_REASON,
        modality=_VERTEX_MODALITY,
        traffic_type=_TRAFFIC_TYPE,
        null_value=_NULL_VALUE,
        status=_CODE,
        harm_category=_VERTEX_HARM_CATEGORY,
        harm_probability=_VERTEX_HARM_PROBABILITY,
        harm_severity=_HARM_SEVERITY,
        language=_VERTEX_LANGUAGE,
        outcome=_VERTEX_OUTCOME,
        url_retrieval_status=_VERTEX_URL_RETRIEVAL_STATUS,
        scheduling=_SCHEDULING,
        media_resolution=_MEDIA_RESOLUTION,
    ),
}
"""The enum tables of each :data:`GeminiApi`."""

_DETAILS = (
    "promptTokensDetails",
    "candidatesTokensDetails",
    "cacheTokensDetails",
    "toolUsePromptTokensDetails",
)

# the keys of a part that hold an object with an enum-typed field (functionCall's enum
# is deeper, in each of its partialArgs)
_PART_KEYS = frozenset(
    {"functionCall", "executableCode", "codeExecutionResult", "functionResponse", "mediaResolution"}
)


def _fix(obj: Any, key: str, table: EnumTable) -> bool:
    """Replace an integer at ``obj[key]`` by its name; whether one was there."""
    if type(obj) is dict:
        value = obj.get(key)
        if type(value) is int:  # not bool: `true` is left as it is (a type error if typed)
            obj[key] = enum_name(table, value)
            return True
    return False


def _fix_ratings(ratings: Any, tables: EnumTables) -> bool:
    """Name the enums of each of a list of ``SafetyRating`` objects."""
    found = False
    if type(ratings) is list:
        for rating in ratings:
            if type(rating) is dict:
                found |= _fix(rating, "category", tables.harm_category)
                found |= _fix(rating, "probability", tables.harm_probability)
                found |= _fix(rating, "severity", tables.harm_severity)
    return found


def _fix_part(value: Any, key: str, tables: EnumTables) -> bool:
    """Name the enums of ``value``, a part's ``key`` (one of :data:`_PART_KEYS`)."""
    if key == "functionCall":
        found = False
        pieces = value.get("partialArgs") if type(value) is dict else None
        if type(pieces) is list:
            for piece in pieces:
                found |= _fix(piece, "nullValue", tables.null_value)
        return found
    if key == "executableCode":
        return _fix(value, "language", tables.language)
    if key == "codeExecutionResult":
        return _fix(value, "outcome", tables.outcome)
    if key == "functionResponse":
        return _fix(value, "scheduling", tables.scheduling)
    return _fix(value, "level", tables.media_resolution)  # mediaResolution


def normalize_enums(response: dict[str, Any], tables: EnumTables) -> bool:
    """Replace, in place, each integer enum of a decoded response object by its name.

    Looks only where the protos have enum-typed fields:

    - ``candidates[].finishReason``;
    - ``candidates[].safetyRatings[]`` and ``promptFeedback.safetyRatings[]``:
      ``category``, ``probability``, ``severity``;
    - ``candidates[].content.parts[]``: ``functionCall.partialArgs[].nullValue``,
      ``executableCode.language``, ``codeExecutionResult.outcome``,
      ``functionResponse.scheduling``, ``mediaResolution.level``;
    - ``candidates[].urlContextMetadata.urlMetadata[].urlRetrievalStatus``;
    - ``promptFeedback.blockReason``;
    - ``usageMetadata.trafficType``, ``usageMetadata.*TokensDetails[].modality``;
    - ``error.status``.

    Anything else (a value of the wrong type included: ``true`` is not ``1``) is left
    as it is, for validation to judge.

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
                    if type(part) is dict:
                        for key in part:  # a part has few keys: cheaper than a get of each
                            if key in _PART_KEYS:
                                found |= _fix_part(part[key], key, tables)
            if "safetyRatings" in candidate:
                found |= _fix_ratings(candidate["safetyRatings"], tables)
            urls = candidate.get("urlContextMetadata")
            entries = urls.get("urlMetadata") if type(urls) is dict else None
            if type(entries) is list:
                for entry in entries:
                    found |= _fix(entry, "urlRetrievalStatus", tables.url_retrieval_status)
    feedback = response.get("promptFeedback")
    if type(feedback) is dict:
        found |= _fix(feedback, "blockReason", tables.block_reason)
        if "safetyRatings" in feedback:
            found |= _fix_ratings(feedback["safetyRatings"], tables)
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


def normalize_carried(response: GenerateContentResponse, tables: EnumTables) -> None:
    """Name, in place, integer enums in the fields a typed response carries as plain JSON.

    For a response that decoded straight into the models (so it had no integer in a
    typed enum field): its safety ratings and URL-context statuses, which the models
    keep as plain JSON, may still hold numbers. Parts are not looked at: a stream with
    integer enums shows one in a typed field (``modality``, ``finishReason``) by the
    time code execution comes, and from then on everything is named.
    """
    for candidate in response.candidates or ():
        if candidate.safety_ratings is not None:
            _fix_ratings(candidate.safety_ratings, tables)
        urls = candidate.url_context_metadata
        entries = urls.get("urlMetadata") if urls is not None else None
        if type(entries) is list:
            for entry in entries:
                _fix(entry, "urlRetrievalStatus", tables.url_retrieval_status)
    feedback = response.prompt_feedback
    if feedback is not None and feedback.safety_ratings is not None:
        _fix_ratings(feedback.safety_ratings, tables)
