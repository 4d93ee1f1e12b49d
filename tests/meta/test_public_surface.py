"""The public surface: what ``rxgem``, ``rxgem.core`` and ``rxgem.items`` export, each name
in one place.

- ``rxgem``: what application code uses (the entry points, ``Converter``, the chunk and
  completion types, the errors, ``RetryPolicy``, ``SlotPolicy``) and the subpackages.
- ``rxgem.core``: the cores, their protocol, the models, the slot policies, the errors,
  the mapping functions and the types of the cores' options.
- ``rxgem.items``: the item types, and nothing else exports them.

A name in two of these three is a deliberate re-export (:data:`REEXPORTED`); the old
names are gone.
"""

from __future__ import annotations

import types

import pytest

import rxgem
import rxgem.bridge
import rxgem.client
import rxgem.converter
import rxgem.core
import rxgem.items
import rxgem.operators
import rxgem.request
import rxgem.testing
import rxgem.transport
import rxgem.viz

ERRORS = {
    "RxGemError",
    "GeminiAPIError",
    "GeminiTransportError",
    "InvalidRequestError",
    "MalformedStreamError",
    "MissingCredentialsError",
    "TruncatedStreamError",
}

REEXPORTED = {*ERRORS, "ChatCompletion", "ChatCompletionChunk", "SlotPolicy"}
"""In both ``rxgem`` and ``rxgem.core``: what application code catches, reads and
implements, beside the cores and models they belong with. (``Converter`` is the other
name ``rxgem`` re-exports, from ``rxgem.converter``.)"""

ROOT = {
    # entry points
    "from_body",
    "from_gemini",
    "from_interactions",
    "stream_chat",
    "chat_completions",
    "responses",
    "gemini_to_openai",
    "gemini_to_responses",
    "interactions_to_openai",
    "interactions_to_responses",
    "sse_encode",
    "iterate",
    "aiterate",
    "assemble",
    "to_gemini_request",
    "Converter",
    "OpenAITransport",
    "RetryPolicy",
    *REEXPORTED,
    "COMPILED",
    "__version__",
    # subpackages
    "core",
    "items",
    "operators",
    "samples",
    "testing",
    "viz",
}

CORE = {
    # the cores and their protocol
    "Core",
    "SSEDecoder",
    "ResponseParser",
    "SlotTable",
    "ArgsTable",
    "FinishBuffer",
    "ChunkBuilder",
    "SSEEncoder",
    # the Interactions reader: its cores and its object reader
    "InteractionsParser",
    "StepReader",
    "interaction_items",
    "Interaction",
    # what the cores read and write
    "SSEEvent",
    "GenerateContentResponse",
    "ChatCompletionChunk",
    "ChatCompletion",
    "assemble_response",
    "SlotPolicy",
    *ERRORS,
}

REQUEST = {
    # Chat Completions requests
    "to_gemini_request",
    # Responses requests (sans-IO: the caller gives the history and resolves references)
    "responses_to_gemini_request",
    "ResponsesRequest",
    "item_references",
    # the same requests as Gemini Interactions create bodies
    "chat_to_interaction",
    "responses_to_interaction",
    "InteractionRequest",
    # what a translation warns of
    "UnsupportedWarning",
    "SchemaWarning",
    "SignatureWarning",
    "PlaceholderWarning",
}
"""``rxgem.request``: the request translations (``to_gemini_request`` is also at the root)."""

OLD_NAMES = {"Recorded", "Recording", "RecordedRequest"}

FACES = [
    rxgem,
    rxgem.bridge,
    rxgem.client,
    rxgem.converter,
    rxgem.core,
    rxgem.operators,
    rxgem.request,
    rxgem.testing,
    rxgem.transport,
    rxgem.viz,
]

EXPORTERS = {"rxgem": rxgem, "rxgem.core": rxgem.core, "rxgem.items": rxgem.items}


def test_rxgem_exports_what_application_code_uses() -> None:
    assert len(rxgem.__all__) == len(set(rxgem.__all__))
    assert set(rxgem.__all__) == ROOT


def test_each_source_and_pipeline_has_its_twin_at_the_root() -> None:
    # generateContent and Interactions side by side, each name the one of its home
    assert rxgem.from_gemini is rxgem.transport.from_gemini
    assert rxgem.from_interactions is rxgem.transport.from_interactions
    for name in (
        "gemini_to_openai",
        "gemini_to_responses",
        "interactions_to_openai",
        "interactions_to_responses",
    ):
        assert getattr(rxgem, name) is getattr(rxgem.operators, name), name


def test_rxgem_core_exports_the_cores_models_policies_and_errors() -> None:
    assert len(rxgem.core.__all__) == len(set(rxgem.core.__all__))
    assert set(rxgem.core.__all__) == CORE
    for helper in ("snippet", "grows_from", "MAX_ARRAY_GAP", "random_id", "assemble"):
        assert helper not in rxgem.core.__all__


def test_rxgem_request_exports_both_translations() -> None:
    assert len(rxgem.request.__all__) == len(set(rxgem.request.__all__))
    assert set(rxgem.request.__all__) == REQUEST
    assert rxgem.to_gemini_request is rxgem.request.to_gemini_request


@pytest.mark.parametrize("module", EXPORTERS.values(), ids=EXPORTERS.keys())
def test_every_exported_name_is_rxgems_own_under_its_own_name(module: types.ModuleType) -> None:
    # not a third-party class or function exported by accident, nor one under an alias
    for name in module.__all__:
        value = getattr(module, name)
        if isinstance(value, types.ModuleType):
            assert value.__name__ == f"rxgem.{name}"
        elif isinstance(value, type | types.FunctionType | types.BuiltinFunctionType):
            assert value.__module__.split(".")[0] == "rxgem", f"{module.__name__}.{name}"
            assert value.__name__ == name, f"{module.__name__}.{name}"


def test_the_subpackages_are_the_modules() -> None:
    for name in ("core", "items", "operators", "samples", "testing", "viz"):
        value = getattr(rxgem, name)
        assert isinstance(value, types.ModuleType)
        assert value.__name__ == f"rxgem.{name}"


def test_a_name_has_one_home_but_the_deliberate_reexports() -> None:
    root, core, items = (set(module.__all__) for module in EXPORTERS.values())
    assert root & core == REEXPORTED
    assert root & items == set()
    assert core & items == set()
    for name in REEXPORTED:
        assert getattr(rxgem, name) is getattr(rxgem.core, name), name
    assert rxgem.Converter is rxgem.converter.Converter


def test_the_item_types_are_exported_by_rxgem_items_alone() -> None:
    items = set(rxgem.items.__all__)
    assert len(items) == 20
    for face in FACES:
        assert items.isdisjoint(face.__all__), face.__name__


def test_the_core_face_offers_its_all_and_nothing_else() -> None:
    # other packages take internal names from the core's sides' faces (rxgem.core.slots, ...)
    face = {
        name
        for name, value in vars(rxgem.core).items()
        if not name.startswith("_")
        and not isinstance(value, types.ModuleType)
        and name != "Any"  # for the face's __getattr__
    }
    assert face == set(rxgem.core.__all__)
    for name in rxgem.items.__all__:
        assert getattr(rxgem.items, name) is getattr(rxgem.core.slots, name), name
    assert rxgem.assemble is rxgem.core.chat.assemble


def test_one_meaning_per_public_name() -> None:
    # a name exported by two faces is one object (a re-export), never two different things
    seen: dict[str, tuple[str, object]] = {}
    for face in FACES:
        for name in face.__all__:
            value = getattr(face, name)
            if isinstance(value, types.ModuleType):
                continue
            first = seen.setdefault(name, (face.__name__, value))
            assert first[1] is value, f"{first[0]}.{name} and {face.__name__}.{name} differ"


def test_the_renamed_cassette_sink_keeps_its_old_name_for_a_release() -> None:
    assert "Recorder" not in rxgem.transport.__all__
    assert "CassetteSink" in rxgem.transport.__all__
    with pytest.warns(DeprecationWarning, match="rxgem.transport.CassetteSink"):
        old = rxgem.transport.Recorder  # type: ignore[attr-defined]
    assert old is rxgem.transport.CassetteSink


def test_the_scripted_interaction_events_keep_their_old_name_for_a_release() -> None:
    from rxgem.testing._interaction_script import interaction_stream_events

    assert "interaction_events" not in rxgem.testing.__all__
    with pytest.warns(DeprecationWarning, match="rxgem.testing.interaction_events"):
        old = rxgem.testing.interaction_events  # type: ignore[attr-defined]
    assert old is interaction_stream_events


@pytest.mark.parametrize(
    ("module", "name", "home"),
    [
        ("rxgem.testing", "media", "rxgem.testing._gemini_builders"),
        ("rxgem.testing", "read_cassette", "rxgem.transport"),
        ("rxgem.store", "default_path", "rxgem.store._paths"),
        ("rxgem.transport", "redact", "rxgem.transport._redact"),
        ("rxgem.core", "Part", "rxgem.core.gemini"),
        ("rxgem.core", "ChunkAccumulator", "rxgem.core.chat"),
    ],
)
def test_a_name_that_left_the_surface_is_found_with_a_warning_for_a_release(
    module: str, name: str, home: str
) -> None:
    import importlib

    face = importlib.import_module(module)
    assert name not in face.__all__
    assert name not in vars(face)
    with pytest.warns(DeprecationWarning, match=f"{module}.{name} is deprecated"):
        value = getattr(face, name)
    assert value is getattr(importlib.import_module(home), name)


def test_the_old_names_are_gone() -> None:
    for face in FACES:
        for name in OLD_NAMES:
            assert not hasattr(face, name), f"{face.__name__}.{name}"
            assert name not in face.__all__


def test_errors_are_named_where_users_import_them() -> None:
    import pickle
    import subprocess
    import sys

    for error in (rxgem.MissingCredentialsError, rxgem.GeminiAPIError, rxgem.RxGemError):
        assert error.__module__ == "rxgem"
        assert type(pickle.loads(pickle.dumps(error("x")))) is error
    body = "{'model': 'm', 'messages': [{'role': 'user', 'content': 'Hi'}]}"
    code = f"import rxgem\nrxgem.chat_completions({body}).run()"
    env = {"PATH": "/usr/bin:/bin", "HOME": "/tmp"}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("rxgem.MissingCredentialsError: no Gemini API key"), last
