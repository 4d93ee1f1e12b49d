"""Enums sent as integers (``$alt=json;enum-encoding=int``) read as their names, per API.

The tables below are written out again from Google's protos (not imported from rxgem):

- Gemini API: ``google/ai/generativelanguage/v1beta/generative_service.proto``
  (``Candidate.FinishReason``, ``GenerateContentResponse.PromptFeedback.BlockReason``,
  ``UrlMetadata.UrlRetrievalStatus``), ``content.proto`` (``Modality``,
  ``ExecutableCode.Language``, ``CodeExecutionResult.Outcome``,
  ``FunctionResponse.Scheduling``) and ``safety.proto`` (``HarmCategory``,
  ``SafetyRating.HarmProbability``);
- Vertex AI: ``google/cloud/aiplatform/v1/content.proto`` (``Candidate.FinishReason``,
  ``Modality``, ``HarmCategory``, ``SafetyRating.HarmProbability``,
  ``SafetyRating.HarmSeverity``, ``UrlMetadata.UrlRetrievalStatus``,
  ``Part.MediaResolution.Level``), ``tool.proto`` (``ExecutableCode.Language``,
  ``CodeExecutionResult.Outcome``) and ``prediction_service.proto``
  (``GenerateContentResponse.PromptFeedback.BlockedReason``,
  ``GenerateContentResponse.UsageMetadata.TrafficType``);
- both: ``google/protobuf/struct.proto`` (``NullValue``), ``google/rpc/code.proto`` (``Code``).

An enum only one API has (``TrafficType``, ``HarmSeverity``, ``MediaResolution.Level``:
Vertex AI; ``Scheduling``: the Gemini API) is read with the same table on both.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import httpx
import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pipeline_harness import run, run_converter, run_stages
from strategies import PROPERTIES, GeminiStream, blocked_streams, encode, examples, gemini_streams

import rxgem
from rxgem import samples
from rxgem.core.gemini._enums import ENUM_TABLES, enum_name, normalize_enums
from rxgem.operators import parse
from rxgem.testing import call, event, finish, text, usage
from rxgem.transport import api_of

GEMINI_FINISH = {
    "FINISH_REASON_UNSPECIFIED": 0,
    "STOP": 1,
    "MAX_TOKENS": 2,
    "SAFETY": 3,
    "RECITATION": 4,
    "LANGUAGE": 6,
    "OTHER": 5,
    "BLOCKLIST": 7,
    "PROHIBITED_CONTENT": 8,
    "SPII": 9,
    "MALFORMED_FUNCTION_CALL": 10,
    "IMAGE_SAFETY": 11,
    "IMAGE_PROHIBITED_CONTENT": 14,
    "IMAGE_OTHER": 15,
    "NO_IMAGE": 16,
    "IMAGE_RECITATION": 17,
    "UNEXPECTED_TOOL_CALL": 12,
    "TOO_MANY_TOOL_CALLS": 13,
}
VERTEX_FINISH = {
    "FINISH_REASON_UNSPECIFIED": 0,
    "STOP": 1,
    "MAX_TOKENS": 2,
    "SAFETY": 3,
    "RECITATION": 4,
    "OTHER": 5,
    "BLOCKLIST": 6,
    "PROHIBITED_CONTENT": 7,
    "SPII": 8,
    "MALFORMED_FUNCTION_CALL": 9,
    "MODEL_ARMOR": 10,
}
GEMINI_BLOCK = {
    "BLOCK_REASON_UNSPECIFIED": 0,
    "SAFETY": 1,
    "OTHER": 2,
    "BLOCKLIST": 3,
    "PROHIBITED_CONTENT": 4,
    "IMAGE_SAFETY": 5,
}
VERTEX_BLOCK = {
    "BLOCKED_REASON_UNSPECIFIED": 0,
    "SAFETY": 1,
    "OTHER": 2,
    "BLOCKLIST": 3,
    "PROHIBITED_CONTENT": 4,
    "MODEL_ARMOR": 5,
    "JAILBREAK": 6,
}
MODALITY = {"MODALITY_UNSPECIFIED": 0, "TEXT": 1, "IMAGE": 2, "VIDEO": 3, "AUDIO": 4, "DOCUMENT": 5}
TRAFFIC = {
    "TRAFFIC_TYPE_UNSPECIFIED": 0,
    "ON_DEMAND": 1,
    "PROVISIONED_THROUGHPUT": 2,
    "ON_DEMAND_PRIORITY": 3,
    "ON_DEMAND_FLEX": 4,
}
NULL = {"NULL_VALUE": 0}
CODE = {
    "OK": 0,
    "CANCELLED": 1,
    "UNKNOWN": 2,
    "INVALID_ARGUMENT": 3,
    "DEADLINE_EXCEEDED": 4,
    "NOT_FOUND": 5,
    "ALREADY_EXISTS": 6,
    "PERMISSION_DENIED": 7,
    "RESOURCE_EXHAUSTED": 8,
    "FAILED_PRECONDITION": 9,
    "ABORTED": 10,
    "OUT_OF_RANGE": 11,
    "UNIMPLEMENTED": 12,
    "INTERNAL": 13,
    "UNAVAILABLE": 14,
    "DATA_LOSS": 15,
    "UNAUTHENTICATED": 16,
}
GEMINI_HARM_CATEGORY = {
    "HARM_CATEGORY_UNSPECIFIED": 0,
    "HARM_CATEGORY_DEROGATORY": 1,
    "HARM_CATEGORY_TOXICITY": 2,
    "HARM_CATEGORY_VIOLENCE": 3,
    "HARM_CATEGORY_SEXUAL": 4,
    "HARM_CATEGORY_MEDICAL": 5,
    "HARM_CATEGORY_DANGEROUS": 6,
    "HARM_CATEGORY_HARASSMENT": 7,
    "HARM_CATEGORY_HATE_SPEECH": 8,
    "HARM_CATEGORY_SEXUALLY_EXPLICIT": 9,
    "HARM_CATEGORY_DANGEROUS_CONTENT": 10,
    "HARM_CATEGORY_CIVIC_INTEGRITY": 11,
}
VERTEX_HARM_CATEGORY = {
    "HARM_CATEGORY_UNSPECIFIED": 0,
    "HARM_CATEGORY_HATE_SPEECH": 1,
    "HARM_CATEGORY_DANGEROUS_CONTENT": 2,
    "HARM_CATEGORY_HARASSMENT": 3,
    "HARM_CATEGORY_SEXUALLY_EXPLICIT": 4,
    "HARM_CATEGORY_CIVIC_INTEGRITY": 5,
    "HARM_CATEGORY_JAILBREAK": 6,
}
PROBABILITY = {"HARM_PROBABILITY_UNSPECIFIED": 0, "NEGLIGIBLE": 1, "LOW": 2, "MEDIUM": 3, "HIGH": 4}
SEVERITY = {
    "HARM_SEVERITY_UNSPECIFIED": 0,
    "HARM_SEVERITY_NEGLIGIBLE": 1,
    "HARM_SEVERITY_LOW": 2,
    "HARM_SEVERITY_MEDIUM": 3,
    "HARM_SEVERITY_HIGH": 4,
}
LANGUAGE = {"LANGUAGE_UNSPECIFIED": 0, "PYTHON": 1}
OUTCOME = {
    "OUTCOME_UNSPECIFIED": 0,
    "OUTCOME_OK": 1,
    "OUTCOME_FAILED": 2,
    "OUTCOME_DEADLINE_EXCEEDED": 3,
}
GEMINI_URL_STATUS = {
    "URL_RETRIEVAL_STATUS_UNSPECIFIED": 0,
    "URL_RETRIEVAL_STATUS_SUCCESS": 1,
    "URL_RETRIEVAL_STATUS_ERROR": 2,
    "URL_RETRIEVAL_STATUS_PAYWALL": 3,
    "URL_RETRIEVAL_STATUS_UNSAFE": 4,
}
VERTEX_URL_STATUS = {
    "URL_RETRIEVAL_STATUS_UNSPECIFIED": 0,
    "URL_RETRIEVAL_STATUS_SUCCESS": 1,
    "URL_RETRIEVAL_STATUS_ERROR": 2,
}
SCHEDULING = {"SCHEDULING_UNSPECIFIED": 0, "SILENT": 1, "WHEN_IDLE": 2, "INTERRUPT": 3}
MEDIA_RESOLUTION = {
    "MEDIA_RESOLUTION_UNSPECIFIED": 0,
    "MEDIA_RESOLUTION_LOW": 1,
    "MEDIA_RESOLUTION_MEDIUM": 2,
    "MEDIA_RESOLUTION_HIGH": 3,
    "MEDIA_RESOLUTION_ULTRA_HIGH": 4,
}
NUMBERS: dict[str, dict[str, dict[str, int]]] = {
    "gemini": {
        "finish_reason": GEMINI_FINISH,
        "block_reason": GEMINI_BLOCK,
        "modality": MODALITY,
        "traffic_type": TRAFFIC,
        "null_value": NULL,
        "status": CODE,
        "harm_category": GEMINI_HARM_CATEGORY,
        "harm_probability": PROBABILITY,
        "harm_severity": SEVERITY,
        "language": LANGUAGE,
        "outcome": OUTCOME,
        "url_retrieval_status": GEMINI_URL_STATUS,
        "scheduling": SCHEDULING,
        "media_resolution": MEDIA_RESOLUTION,
    },
    "vertex": {
        "finish_reason": VERTEX_FINISH,
        "block_reason": VERTEX_BLOCK,
        "modality": MODALITY,
        "traffic_type": TRAFFIC,
        "null_value": NULL,
        "status": CODE,
        "harm_category": VERTEX_HARM_CATEGORY,
        "harm_probability": PROBABILITY,
        "harm_severity": SEVERITY,
        "language": LANGUAGE,
        "outcome": OUTCOME,
        "url_retrieval_status": VERTEX_URL_STATUS,
        "scheduling": SCHEDULING,
        "media_resolution": MEDIA_RESOLUTION,
    },
}
APIS = ("gemini", "vertex")


@pytest.mark.parametrize("api", APIS)
def test_tables_are_the_protos(api: str) -> None:
    tables = ENUM_TABLES[api]
    assert set(NUMBERS[api]) == set(tables._fields)  # no table left untested
    for field, numbers in NUMBERS[api].items():
        table = getattr(tables, field)
        assert table.names == {number: name for name, number in numbers.items()}, field


def test_the_apis_differ_where_the_protos_do() -> None:
    gemini, vertex = ENUM_TABLES["gemini"], ENUM_TABLES["vertex"]
    differ = {
        n
        for n in range(20)
        if gemini.finish_reason.names.get(n) != vertex.finish_reason.names.get(n)
    }
    assert differ == {6, 7, 8, 9, 10} | set(range(11, 18))
    assert {
        n for n in range(8) if gemini.block_reason.names.get(n) != vertex.block_reason.names.get(n)
    } == {0, 5, 6}
    assert {
        n
        for n in range(13)
        if gemini.harm_category.names.get(n) != vertex.harm_category.names.get(n)
    } == set(range(1, 12))
    assert {
        n
        for n in range(6)
        if gemini.url_retrieval_status.names.get(n) != vertex.url_retrieval_status.names.get(n)
    } == {3, 4}
    alike = ("harm_probability", "harm_severity", "language", "outcome")
    alike += ("scheduling", "media_resolution", "modality", "traffic_type")
    for field in alike:
        assert getattr(gemini, field) == getattr(vertex, field), field


# -- each enum field, through the parser ------------------------------------------------


def _parse(payload: dict[str, Any], api: str) -> rxgem.core.GenerateContentResponse:
    [response] = rxgem.core.ResponseParser(api=api).feed(rxgem.core.SSEEvent(json.dumps(payload)))  # type: ignore[arg-type]
    return response


def _finish(response: rxgem.core.GenerateContentResponse) -> str | None:
    assert response.candidates is not None
    return response.candidates[0].finish_reason


def _block(response: rxgem.core.GenerateContentResponse) -> str | None:
    assert response.prompt_feedback is not None
    return response.prompt_feedback.block_reason


def _traffic(response: rxgem.core.GenerateContentResponse) -> str | None:
    assert response.usage_metadata is not None
    return response.usage_metadata.traffic_type


def _modalities(response: rxgem.core.GenerateContentResponse) -> list[str | None]:
    usage = response.usage_metadata
    assert usage is not None
    details = [
        usage.prompt_tokens_details,
        usage.candidates_tokens_details,
        usage.cache_tokens_details,
        usage.tool_use_prompt_tokens_details,
    ]
    return [d.modality for ds in details for d in ds or ()]


def _null(response: rxgem.core.GenerateContentResponse) -> str | None:
    assert response.candidates is not None
    content = response.candidates[0].content
    assert content is not None
    assert content.parts
    call_ = content.parts[0].function_call
    assert call_ is not None
    assert call_.partial_args
    return call_.partial_args[0].null_value


def _finish_event(n: Any) -> dict[str, Any]:
    return {"candidates": [{"content": {"parts": [{"text": "x"}]}, "finishReason": n}]}


def _block_event(n: Any) -> dict[str, Any]:
    return {"promptFeedback": {"blockReason": n}}


def _traffic_event(n: Any) -> dict[str, Any]:
    return {"usageMetadata": {"trafficType": n}}


def _modality_event(n: Any) -> dict[str, Any]:
    keys = ("promptTokensDetails", "candidatesTokensDetails", "cacheTokensDetails")
    details = {key: [{"modality": n, "tokenCount": 1}] for key in keys}
    details["toolUsePromptTokensDetails"] = [{"modality": "TEXT", "tokenCount": 2}]
    return {"usageMetadata": {"promptTokenCount": 1, **details}}


def _null_event(n: Any) -> dict[str, Any]:
    piece = {"jsonPath": "$.x", "nullValue": n}
    return {"candidates": [{"content": {"parts": [{"functionCall": {"partialArgs": [piece]}}]}}]}


FIELDS: dict[str, tuple[Callable[[Any], dict[str, Any]], Callable[..., Any]]] = {
    "finish_reason": (_finish_event, _finish),
    "block_reason": (_block_event, _block),
    "traffic_type": (_traffic_event, _traffic),
    "modality": (_modality_event, lambda r: _modalities(r)[0]),
    "null_value": (_null_event, _null),
}


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("field", sorted(FIELDS))
def test_every_number_of_every_field_reads_as_its_name(api: str, field: str) -> None:
    make, read = FIELDS[field]
    for name, number in NUMBERS[api][field].items():
        assert read(_parse(make(number), api)) == name
        assert read(_parse(make(name), api)) == name  # the names still pass as they are


@pytest.mark.parametrize(
    ("field", "number", "gemini", "vertex"),
    [
        ("finish_reason", 6, "LANGUAGE", "BLOCKLIST"),
        ("finish_reason", 7, "BLOCKLIST", "PROHIBITED_CONTENT"),
        ("finish_reason", 10, "MALFORMED_FUNCTION_CALL", "MODEL_ARMOR"),
        ("finish_reason", 12, "UNEXPECTED_TOOL_CALL", "FINISH_REASON_12"),
        ("block_reason", 0, "BLOCK_REASON_UNSPECIFIED", "BLOCKED_REASON_UNSPECIFIED"),
        ("block_reason", 5, "IMAGE_SAFETY", "MODEL_ARMOR"),
        ("block_reason", 6, "BLOCK_REASON_6", "JAILBREAK"),
    ],
)
def test_a_number_that_differs_between_the_apis(
    field: str, number: int, gemini: str, vertex: str
) -> None:
    make, read = FIELDS[field]
    assert read(_parse(make(number), "gemini")) == gemini
    assert read(_parse(make(number), "vertex")) == vertex


def test_modality_of_each_details_list() -> None:
    assert _modalities(_parse(_modality_event(3), "gemini")) == ["VIDEO", "VIDEO", "VIDEO", "TEXT"]


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize(
    ("field", "number", "name"),
    [
        ("finish_reason", 99, "FINISH_REASON_99"),
        ("finish_reason", -1, "FINISH_REASON_-1"),
        ("traffic_type", 5, "TRAFFIC_TYPE_5"),
        ("modality", 6, "MODALITY_6"),
        ("null_value", 1, "NULL_VALUE_1"),
    ],
)
def test_unknown_numbers_keep_a_stable_name(api: str, field: str, number: int, name: str) -> None:
    make, read = FIELDS[field]
    assert read(_parse(make(number), api)) == name


@pytest.mark.parametrize(
    ("api", "name"), [("gemini", "BLOCK_REASON_42"), ("vertex", "BLOCKED_REASON_42")]
)
def test_an_unknown_block_reason_is_prefixed_like_its_api(api: str, name: str) -> None:
    assert _block(_parse(_block_event(42), api)) == name


def test_enum_name() -> None:
    table = ENUM_TABLES["vertex"].finish_reason
    assert (enum_name(table, 1), enum_name(table, 11)) == ("STOP", "FINISH_REASON_11")


@pytest.mark.parametrize("value", [True, 1.0, [1], {"n": 1}])
def test_other_types_are_still_malformed(value: Any) -> None:
    parser = rxgem.core.ResponseParser()
    with pytest.raises(rxgem.MalformedStreamError) as caught:
        parser.feed(rxgem.core.SSEEvent(json.dumps(_finish_event(value))))
    assert "finishReason" in caught.value.reason


def test_normalize_enums_reports_whether_it_changed_anything() -> None:
    tables = ENUM_TABLES["gemini"]
    plain = _finish_event("STOP")
    assert normalize_enums(copy.deepcopy(plain), tables) is False
    numbered = _finish_event(1)
    assert normalize_enums(numbered, tables) is True
    assert numbered == plain
    odd: dict[str, Any] = {
        "candidates": "x",
        "promptFeedback": [1],
        "usageMetadata": {"trafficType": True},
    }
    assert normalize_enums(odd, tables) is False


def test_an_error_with_a_numbered_status() -> None:
    parser = rxgem.core.ResponseParser()
    body = {"error": {"code": 429, "message": "slow down", "status": 8}}
    with pytest.raises(rxgem.GeminiAPIError) as caught:
        parser.feed(rxgem.core.SSEEvent(json.dumps(body)))
    assert (caught.value.code, caught.value.status, caught.value.event) == (
        429,
        "RESOURCE_EXHAUSTED",
        1,
    )


# -- the fields the models keep as plain JSON: safety ratings, code, URLs, ... ------------

_LOW_RATING = {"category": "HARM_CATEGORY_HARASSMENT", "probability": "NEGLIGIBLE"}


def _candidate_event(**candidate: Any) -> dict[str, Any]:
    return {"candidates": [{"content": {"parts": [{"text": "x"}]}, **candidate}]}


def _part_event(part: dict[str, Any]) -> dict[str, Any]:
    return {"candidates": [{"content": {"role": "model", "parts": [{"text": "x"}, part]}}]}


def _ratings(**rating: Any) -> list[dict[str, Any]]:
    """Two safety ratings, the second one ``rating`` over a plain one (so each is looked at)."""
    return [dict(_LOW_RATING), {**_LOW_RATING, **rating}]


def _urls(n: Any) -> dict[str, Any]:
    ok = {"retrievedUrl": "https://a.example", "urlRetrievalStatus": "URL_RETRIEVAL_STATUS_SUCCESS"}
    return {"urlMetadata": [ok, {"retrievedUrl": "https://b.example", "urlRetrievalStatus": n}]}


Make = Callable[[Any], dict[str, Any]]
Get = Callable[[dict[str, Any]], Any]

# wire path: (its table in EnumTables, an event with ``n`` there, the value there)
PATHS: dict[str, tuple[str, Make, Get]] = {
    "candidates[].safetyRatings[].category": (
        "harm_category",
        lambda n: _candidate_event(safetyRatings=_ratings(category=n)),
        lambda r: r["candidates"][0]["safetyRatings"][1]["category"],
    ),
    "candidates[].safetyRatings[].probability": (
        "harm_probability",
        lambda n: _candidate_event(safetyRatings=_ratings(probability=n)),
        lambda r: r["candidates"][0]["safetyRatings"][1]["probability"],
    ),
    "candidates[].safetyRatings[].severity": (
        "harm_severity",
        lambda n: _candidate_event(safetyRatings=_ratings(severity=n, severityScore=0.1)),
        lambda r: r["candidates"][0]["safetyRatings"][1]["severity"],
    ),
    "promptFeedback.safetyRatings[].category": (
        "harm_category",
        lambda n: {"promptFeedback": {"safetyRatings": _ratings(category=n)}},
        lambda r: r["promptFeedback"]["safetyRatings"][1]["category"],
    ),
    "promptFeedback.safetyRatings[].probability": (
        "harm_probability",
        lambda n: {"promptFeedback": {"safetyRatings": _ratings(probability=n)}},
        lambda r: r["promptFeedback"]["safetyRatings"][1]["probability"],
    ),
    "promptFeedback.safetyRatings[].severity": (
        "harm_severity",
        lambda n: {"promptFeedback": {"safetyRatings": _ratings(severity=n)}},
        lambda r: r["promptFeedback"]["safetyRatings"][1]["severity"],
    ),
    "candidates[].content.parts[].executableCode.language": (
        "language",
        lambda n: _part_event({"executableCode": {"language": n, "code": "print(1)"}}),
        lambda r: r["candidates"][0]["content"]["parts"][1]["executableCode"]["language"],
    ),
    "candidates[].content.parts[].codeExecutionResult.outcome": (
        "outcome",
        lambda n: _part_event({"codeExecutionResult": {"outcome": n, "output": "1\n"}}),
        lambda r: r["candidates"][0]["content"]["parts"][1]["codeExecutionResult"]["outcome"],
    ),
    "candidates[].content.parts[].functionResponse.scheduling": (
        "scheduling",
        lambda n: _part_event({"functionResponse": {"name": "f", "response": {}, "scheduling": n}}),
        lambda r: r["candidates"][0]["content"]["parts"][1]["functionResponse"]["scheduling"],
    ),
    "candidates[].content.parts[].mediaResolution.level": (
        "media_resolution",
        lambda n: _part_event(
            {"inlineData": {"mimeType": "image/png", "data": ""}, "mediaResolution": {"level": n}}
        ),
        lambda r: r["candidates"][0]["content"]["parts"][1]["mediaResolution"]["level"],
    ),
    "candidates[].urlContextMetadata.urlMetadata[].urlRetrievalStatus": (
        "url_retrieval_status",
        lambda n: _candidate_event(urlContextMetadata=_urls(n)),
        lambda r: r["candidates"][0]["urlContextMetadata"]["urlMetadata"][1]["urlRetrievalStatus"],
    ),
}
# the paths whose objects the models keep (as plain JSON), so a parsed response shows them
PARSED_PATHS = sorted(
    path for path in PATHS if "functionResponse" not in path and "mediaResolution" not in path
)
PREFIXES = {
    "harm_category": "HARM_CATEGORY",
    "harm_probability": "HARM_PROBABILITY",
    "harm_severity": "HARM_SEVERITY",
    "language": "LANGUAGE",
    "outcome": "OUTCOME",
    "url_retrieval_status": "URL_RETRIEVAL_STATUS",
    "scheduling": "SCHEDULING",
    "media_resolution": "MEDIA_RESOLUTION",
}


def _parse_json_path(payload: dict[str, Any], api: str) -> dict[str, Any]:
    """``payload`` through the parser, back as plain JSON (wire names).

    An integer in a typed field (``modality`` here) rides along: that is what sends a
    fresh parser to the path that names integers; one only inside plain-JSON fields
    would pass its typed decode as it is.
    """
    usage = {"promptTokenCount": 1, "promptTokensDetails": [{"modality": 1, "tokenCount": 1}]}
    response = _parse({**payload, "usageMetadata": usage}, api)
    assert response.usage_metadata is not None
    assert _modalities(response) == ["TEXT"]
    out: dict[str, Any] = msgspec.to_builtins(response)
    return out


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("path", sorted(PATHS))
def test_every_number_of_every_json_path_reads_as_its_name(api: str, path: str) -> None:
    field, make, get = PATHS[path]
    tables = ENUM_TABLES[api]
    for name, number in NUMBERS[api][field].items():
        payload = make(number)
        assert normalize_enums(payload, tables) is True
        assert get(payload) == name
        assert payload == make(name)  # nothing else changed
        named = make(name)
        assert normalize_enums(named, tables) is False
        assert named == make(name)


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("path", PARSED_PATHS)
def test_every_json_path_through_the_parser(api: str, path: str) -> None:
    field, make, get = PATHS[path]
    for name, number in NUMBERS[api][field].items():
        assert get(_parse_json_path(make(number), api)) == name
        assert get(_parse_json_path(make(name), api)) == name


@pytest.mark.parametrize(
    ("path", "number", "gemini", "vertex"),
    [
        (
            "candidates[].safetyRatings[].category",
            1,
            "HARM_CATEGORY_DEROGATORY",
            "HARM_CATEGORY_HATE_SPEECH",
        ),
        (
            "candidates[].safetyRatings[].category",
            6,
            "HARM_CATEGORY_DANGEROUS",
            "HARM_CATEGORY_JAILBREAK",
        ),
        (
            "candidates[].safetyRatings[].category",
            8,
            "HARM_CATEGORY_HATE_SPEECH",
            "HARM_CATEGORY_8",
        ),
        (
            "promptFeedback.safetyRatings[].category",
            2,
            "HARM_CATEGORY_TOXICITY",
            "HARM_CATEGORY_DANGEROUS_CONTENT",
        ),
        (
            "promptFeedback.safetyRatings[].category",
            11,
            "HARM_CATEGORY_CIVIC_INTEGRITY",
            "HARM_CATEGORY_11",
        ),
        (
            "candidates[].urlContextMetadata.urlMetadata[].urlRetrievalStatus",
            3,
            "URL_RETRIEVAL_STATUS_PAYWALL",
            "URL_RETRIEVAL_STATUS_3",
        ),
        (
            "candidates[].urlContextMetadata.urlMetadata[].urlRetrievalStatus",
            4,
            "URL_RETRIEVAL_STATUS_UNSAFE",
            "URL_RETRIEVAL_STATUS_4",
        ),
    ],
)
def test_a_json_path_number_that_differs_between_the_apis(
    path: str, number: int, gemini: str, vertex: str
) -> None:
    _, make, get = PATHS[path]
    assert get(_parse_json_path(make(number), "gemini")) == gemini
    assert get(_parse_json_path(make(number), "vertex")) == vertex


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("path", sorted(PATHS))
@pytest.mark.parametrize("number", [99, -1])
def test_unknown_numbers_on_a_json_path_keep_a_stable_name(
    api: str, path: str, number: int
) -> None:
    field, make, get = PATHS[path]
    payload = make(number)
    assert normalize_enums(payload, ENUM_TABLES[api]) is True
    assert get(payload) == f"{PREFIXES[field]}_{number}"


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("path", sorted(PATHS))
@pytest.mark.parametrize("value", [True, False, 1.0, None, [1], {"n": 1}])
def test_a_json_path_leaves_other_types_alone(api: str, path: str, value: Any) -> None:
    _, make, get = PATHS[path]
    payload = make(value)
    assert normalize_enums(payload, ENUM_TABLES[api]) is False
    assert payload == make(value)
    assert get(payload) == value
    assert type(get(payload)) is type(value)  # `True` did not become a name (nor `1`)


@pytest.mark.parametrize("api", APIS)
def test_a_bool_on_a_json_path_passes_the_parser_as_it_is(api: str) -> None:
    _, make, get = PATHS["candidates[].safetyRatings[].category"]
    assert get(_parse_json_path(make(True), api)) is True


@pytest.mark.parametrize("api", APIS)
def test_every_json_path_in_one_response(api: str) -> None:
    numbers = NUMBERS[api]

    def response(value: Callable[[str, str], Any]) -> dict[str, Any]:
        rating = {
            "category": value("harm_category", "HARM_CATEGORY_HARASSMENT"),
            "probability": value("harm_probability", "MEDIUM"),
            "severity": value("harm_severity", "HARM_SEVERITY_LOW"),
            "blocked": True,
        }
        parts = [
            {"text": "x", "thought": True},
            {"executableCode": {"language": value("language", "PYTHON"), "code": "1"}},
            {"codeExecutionResult": {"outcome": value("outcome", "OUTCOME_FAILED")}},
            {"functionResponse": {"name": "f", "scheduling": value("scheduling", "WHEN_IDLE")}},
            {"mediaResolution": {"level": value("media_resolution", "MEDIA_RESOLUTION_HIGH")}},
            {"functionCall": {"partialArgs": [{"jsonPath": "$.a", "nullValue": 0}]}},
        ]
        url = {"urlRetrievalStatus": value("url_retrieval_status", "URL_RETRIEVAL_STATUS_ERROR")}
        candidate = {
            "content": {"parts": parts},
            "safetyRatings": [rating, dict(rating)],
            "urlContextMetadata": {"urlMetadata": [url, dict(url)]},
        }
        return {
            "candidates": [candidate, copy.deepcopy(candidate)],
            "promptFeedback": {"safetyRatings": [dict(rating)]},
        }

    payload = response(lambda field, name: numbers[field][name])
    assert normalize_enums(payload, ENUM_TABLES[api]) is True
    expected = response(lambda field, name: name)
    expected["candidates"][0]["content"]["parts"][5]["functionCall"]["partialArgs"][0][
        "nullValue"
    ] = "NULL_VALUE"
    expected["candidates"][1]["content"]["parts"][5]["functionCall"]["partialArgs"][0][
        "nullValue"
    ] = "NULL_VALUE"
    assert payload == expected


def test_look_alike_fields_elsewhere_are_left_alone() -> None:
    """Only the proto's enum paths are read: the same key one level off, or inside another
    object, stays a number; so do the enums no published proto numbers (``toolType``,
    ``modelStage``)."""
    payload: dict[str, Any] = {
        "candidates": [
            {
                "content": {
                    "parts": [
                        {"text": "x", "language": 1, "outcome": 1},
                        {"toolCall": {"toolType": 1, "args": {"category": 1}}},
                        {"toolResponse": {"toolType": 2, "response": {"outcome": 1}}},
                        {"functionCall": {"name": "f", "args": {"language": 1}}},
                        {"inlineData": {"mimeType": "image/png", "level": 1}},
                    ]
                },
                "category": 1,
                "urlRetrievalStatus": 1,
                "citationMetadata": {"citations": [{"category": 1, "startIndex": 0}]},
                "groundingMetadata": {
                    "retrievalMetadata": {"googleSearchDynamicRetrievalScore": 1}
                },
                "urlContextMetadata": {"urlRetrievalStatus": 1},
            }
        ],
        "promptFeedback": {"category": 1, "probability": 1},
        "usageMetadata": {"safetyRatings": [{"category": 1}]},
        "modelStatus": {"modelStage": 3},
    }
    before = copy.deepcopy(payload)
    for api in APIS:
        assert normalize_enums(payload, ENUM_TABLES[api]) is False
        assert payload == before


# -- the api option ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "make", [rxgem.core.ResponseParser, rxgem.Converter, rxgem.gemini_to_openai, parse]
)
def test_an_unknown_api_is_refused_at_once(make: Callable[..., Any]) -> None:
    with pytest.raises(ValueError, match="api"):
        make(api="aistudio")


def test_the_parser_names_its_api() -> None:
    assert rxgem.core.ResponseParser().api == "gemini"
    assert rxgem.core.ResponseParser(api="vertex").api == "vertex"


# -- whole streams: integer enums give the chunks string enums give ------------------------


def numbered(value: Any, api: str) -> Any:
    """A copy of a response (or array of them) with the enums of the fields the models type
    (``finishReason``, ``blockReason``, ``modality``, ...) as the api's proto numbers them.

    Not those inside plain-JSON fields (``safetyRatings``, ...): an event whose only numbers
    are there passes the parser's typed decode as it is (see ``rxgem.core.gemini._enums``).
    """
    if isinstance(value, list):
        return [numbered(item, api) for item in value]
    if not isinstance(value, dict):
        return value
    value = copy.deepcopy(value)
    numbers = NUMBERS[api]

    def fix(obj: Any, key: str, field: str) -> None:
        if isinstance(obj, dict) and isinstance(obj.get(key), str):
            obj[key] = numbers[field].get(obj[key], obj[key])

    for candidate in value.get("candidates") or ():
        fix(candidate, "finishReason", "finish_reason")
        for part in (candidate.get("content") or {}).get("parts") or ():
            for piece in (part.get("functionCall") or {}).get("partialArgs") or ():
                fix(piece, "nullValue", "null_value")
    fix(value.get("promptFeedback"), "blockReason", "block_reason")
    usage_ = value.get("usageMetadata") or {}
    fix(usage_, "trafficType", "traffic_type")
    for key in ("promptTokensDetails", "candidatesTokensDetails", "cacheTokensDetails"):
        for detail in usage_.get(key) or ():
            fix(detail, "modality", "modality")
    fix(value.get("error"), "status", "status")
    return value


def renumbered_body(data: bytes, api: str, *, every: int | None = 1) -> bytes:
    """The SSE body ``data`` with every ``every``-th JSON event's enums as numbers (none
    for ``every=None``: the same framing only)."""
    decoder = rxgem.core.SSEDecoder()
    out = []
    for i, ev in enumerate(decoder.feed(data) + decoder.close()):
        try:
            value = json.loads(ev.data)
        except ValueError:
            out.append(b"data: " + ev.data.encode() + b"\r\n\r\n")
            continue
        if every is not None and i % every == 0:
            value = numbered(value, api)
        out.append(b"data: " + json.dumps(value).encode() + b"\r\n\r\n")
    return b"".join(out)


def _same(a: tuple[list[rxgem.ChatCompletionChunk], Exception | None], b: Any) -> None:
    assert a[0] == b[0]
    assert type(a[1]) is type(b[1])
    if isinstance(a[1], rxgem.GeminiAPIError):
        assert isinstance(b[1], rxgem.GeminiAPIError)
        assert (a[1].code, a[1].status, a[1].event) == (b[1].code, b[1].status, b[1].event)


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("name", samples.names())
@pytest.mark.parametrize("every", [1, 2])
def test_a_sample_with_numbered_enums_converts_the_same(api: str, name: str, every: int) -> None:
    plain = renumbered_body(samples.read(name), api, every=None)  # the same framing, no numbers
    body = renumbered_body(samples.read(name), api, every=every)
    # read with the same api: a sample may come with numbers of its own (a Vertex capture)
    expected = run_converter(plain, api=api)
    _same(run_converter(body, api=api), expected)
    _same(run(body, api=api), expected)
    _same(run_stages(body, api=api), expected)


@pytest.mark.parametrize("api", APIS)
def test_every_sample_has_numbers_to_read(api: str) -> None:
    for name in samples.names():
        body = renumbered_body(samples.read(name), api)
        assert b'"modality": 1' in body or b'"finishReason": 1' in body, name


@pytest.mark.parametrize("api", APIS)
def test_the_right_api_matters(api: str) -> None:
    body = event(text("hi")) + b'data: {"candidates": [{"finishReason": 10}]}\r\n\r\n'
    chunks, error = run_converter(body, api=api)
    assert error is None
    last = [c for c in chunks if c.choices and c.choices[0].finish_reason][-1].choices[0]
    assert (last.finish_reason, last.native_finish_reason) == (
        ("stop", "MALFORMED_FUNCTION_CALL")
        if api == "gemini"
        else ("content_filter", "MODEL_ARMOR")
    )


def test_an_unknown_finish_number_ends_like_an_unknown_name() -> None:
    body = event(call("f", a=1), usage(3, 2)) + event(finish(99))  # type: ignore[arg-type]
    chunks, error = run_converter(body)
    assert error is None
    result = rxgem.assemble(chunks)
    assert result["choices"][0]["finish_reason"] == "tool_calls"
    natives = [c.choices[0].native_finish_reason for c in chunks if c.choices]
    assert "FINISH_REASON_99" in natives


def test_a_mixed_stream_switches_back_and_forth() -> None:
    parser = rxgem.core.ResponseParser(api="vertex")
    payloads = [
        {
            "candidates": [{"content": {"parts": [{"text": "a"}]}}],
            "usageMetadata": {"trafficType": "ON_DEMAND"},
        },
        {
            "candidates": [{"content": {"parts": [{"text": "b"}]}}],
            "usageMetadata": {"trafficType": 2},
        },
        {
            "candidates": [{"content": {"parts": [{"text": "c"}]}}],
            "usageMetadata": {"trafficType": "ON_DEMAND"},
        },
        {"candidates": [{"finishReason": 6}], "usageMetadata": {"trafficType": 1}},
    ]
    responses = [r for p in payloads for r in parser.feed(rxgem.core.SSEEvent(json.dumps(p)))]
    assert [_traffic(r) for r in responses] == [
        "ON_DEMAND",
        "PROVISIONED_THROUGHPUT",
        "ON_DEMAND",
        "ON_DEMAND",
    ]
    assert _finish(responses[-1]) == "BLOCKLIST"
    assert parser.events == 4


def test_an_array_of_numbered_responses() -> None:
    parser = rxgem.core.ResponseParser()
    payload = [_finish_event("STOP"), _finish_event(2), _block_event(4)]
    responses = parser.feed(rxgem.core.SSEEvent(json.dumps(payload)))
    assert [_finish(r) for r in responses[:2]] == ["STOP", "MAX_TOKENS"]
    assert _block(responses[2]) == "PROHIBITED_CONTENT"


def test_numbered_enums_in_pieces_and_bad_utf8() -> None:
    body = event(text("caf\u00e9"), finish(1), usage(1, 1))  # type: ignore[arg-type]
    body = body.replace("é".encode(), b"\xff")
    pieces = [body[i : i + 7] for i in range(0, len(body), 7)]
    chunks, error = run_converter(pieces)
    assert error is None
    assert rxgem.assemble(chunks)["choices"][0]["message"]["content"] == "caf\ufffd"


def _renumber_stream(stream: GeminiStream, api: str, every: int) -> tuple[bytes, bytes]:
    plain = encode(stream.events)
    events = [numbered(e, api) if i % every == 0 else e for i, e in enumerate(stream.events)]
    return plain, encode(events)


@settings(PROPERTIES, max_examples=examples(60))
@given(
    stream=st.one_of(gemini_streams(truncated=None), blocked_streams()),
    api=st.sampled_from(APIS),
    every=st.sampled_from([1, 2, 3]),
)
def test_generated_streams_with_numbered_enums_convert_the_same(
    stream: GeminiStream, api: str, every: int
) -> None:
    numbered = any(
        type(candidate.get("finishReason")) is int
        for event in stream.events
        for candidate in event.get("candidates") or ()
    ) or any(type((e.get("promptFeedback") or {}).get("blockReason")) is int for e in stream.events)
    if numbered:  # the strategy numbered some enums itself, for the stream's own API
        api = stream.expected.api
    plain, body = _renumber_stream(stream, api, every)
    _same(run_converter(body, api=api), run_converter(plain, api=api))


# -- stream_chat picks the API from the base URL ------------------------------------------

VERTEX_BASE = (
    "https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/us-central1"
    "/publishers/google"
)


@pytest.mark.parametrize(
    ("base_url", "api"),
    [
        (None, "gemini"),
        ("https://generativelanguage.googleapis.com/v1beta", "gemini"),
        (VERTEX_BASE, "vertex"),
        (
            "https://aiplatform.googleapis.com/v1/projects/p/locations/global/publishers/google",
            "vertex",
        ),
        ("http://127.0.0.1:8080/v1beta", "gemini"),
        ("https://proxy.example/aiplatform.googleapis.com/v1", "gemini"),
    ],
)
def test_api_of_a_base_url(base_url: str | None, api: str) -> None:
    assert api_of(base_url) == api


@pytest.mark.parametrize(
    ("base_url", "options", "expected"),
    [
        (VERTEX_BASE, {}, "content_filter"),  # 10 is MODEL_ARMOR on Vertex
        (VERTEX_BASE, {"api": "gemini"}, "stop"),  # the caller's choice wins
        ("https://generativelanguage.googleapis.com/v1beta", {}, "stop"),  # MALFORMED_FUNCTION_CALL
        ("https://generativelanguage.googleapis.com/v1beta", {"api": "vertex"}, "content_filter"),
    ],
)
def test_stream_chat_reads_numbers_as_its_base_url_numbers_them(
    base_url: str, options: dict[str, Any], expected: str
) -> None:
    body = event(text("hi")) + b'data: {"candidates": [{"finishReason": 10}]}\r\n\r\n'
    client = httpx.Client(
        transport=httpx.MockTransport(lambda _: httpx.Response(200, content=body))
    )
    stream = rxgem.stream_chat(
        {"contents": []},
        model="gemini-2.5-flash",
        access_token="t",
        base_url=base_url,
        client=client,
        **options,
    )
    chunks = list(rxgem.iterate(stream))
    assert rxgem.assemble(chunks)["choices"][0]["finish_reason"] == expected


def test_numbers_in_carried_fields_are_named_even_before_a_typed_field_shows_one() -> None:
    # the first event has no number in a typed field, so it decodes straight into the models
    parser = rxgem.core.ResponseParser(api="vertex")
    event = rxgem.core.SSEEvent(
        b'{"candidates":[{"content":{"parts":[{"text":"x"}]},'
        b'"safetyRatings":[{"category":1,"probability":2,"severity":3}],'
        b'"urlContextMetadata":{"urlMetadata":[{"retrievedUrl":"u","urlRetrievalStatus":1}]}}],'
        b'"promptFeedback":{"safetyRatings":[{"category":2,"probability":1}]}}'
    )
    (response,) = parser.feed(event)
    (candidate,) = response.candidates or []
    assert candidate.safety_ratings == [
        {
            "category": "HARM_CATEGORY_HATE_SPEECH",
            "probability": "LOW",
            "severity": "HARM_SEVERITY_MEDIUM",
        }
    ]
    assert candidate.url_context_metadata == {
        "urlMetadata": [{"retrievedUrl": "u", "urlRetrievalStatus": "URL_RETRIEVAL_STATUS_SUCCESS"}]
    }
    assert response.prompt_feedback is not None
    assert response.prompt_feedback.safety_ratings == [
        {"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "NEGLIGIBLE"}
    ]
