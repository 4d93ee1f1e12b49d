"""The upstream registry: one object per upstream API, chosen once from the option values
(the upstream's name, the ``api`` choice or the base URL's host), holding what differs."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

import rxgem
from rxgem import core
from rxgem.request import InteractionRequest, ResponsesRequest
from rxgem.transport import InteractionsTransportOptions, TransportOptions
from rxgem.upstreams import Upstream, upstream_at, upstream_of
from rxgem.upstreams._registry import UPSTREAMS
from rxgem.upstreams.gemini import GEMINI
from rxgem.upstreams.interactions import INTERACTIONS
from rxgem.upstreams.vertex import VERTEX

VERTEX_URL = (
    "https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/l/publishers/google"
)
CHAT = {"model": "gemini-2.5-flash", "messages": [{"role": "user", "content": "Hi"}]}
RESPONSES = {"model": "gemini-2.5-flash", "input": "Hi"}
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "f",
            "parameters": {"type": "object", "properties": {"a": {"type": ["string", "null"]}}},
        },
    }
]


def test_every_upstream_is_registered_once_the_default_first() -> None:
    assert UPSTREAMS == (GEMINI, VERTEX, INTERACTIONS)
    assert upstream_of() is GEMINI
    assert upstream_of(None) is GEMINI
    assert all(isinstance(upstream, Upstream) for upstream in UPSTREAMS)
    assert len({(u.name, u.api) for u in UPSTREAMS}) == len(UPSTREAMS)


def test_the_api_choice_comes_from_the_option_else_from_the_base_url() -> None:
    assert upstream_of("generate-content") is GEMINI
    assert upstream_of("generate-content", api="vertex") is VERTEX
    assert upstream_of("generate-content", base_url=VERTEX_URL) is VERTEX
    assert upstream_of("generate-content", api="gemini", base_url=VERTEX_URL) is GEMINI
    assert upstream_of(base_url="http://127.0.0.1:9/v1beta") is GEMINI
    # the Interactions API has no api choice: the option is left to the pipeline's check
    assert upstream_of("interactions", base_url=VERTEX_URL) is INTERACTIONS


@pytest.mark.parametrize(
    ("name", "api", "message"),
    [
        ("vertex", None, "upstream must be 'generate-content' or 'interactions', not 'vertex'"),
        ("generateContent", None, "upstream must be 'generate-content' or 'interactions'"),
        ("generate-content", "openai", "api must be 'gemini' or 'vertex', not 'openai'"),
        (3, None, "upstream must be"),
    ],
)
def test_an_unknown_name_or_api_is_refused_in_the_pipelines_words(
    name: object, api: object, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        upstream_of(name, api=api)
    if api is None:  # the same words as the pipeline's own option
        with pytest.raises(ValueError, match=message):
            rxgem.Converter(upstream=name)


def test_each_upstream_names_its_reader() -> None:
    assert GEMINI.reader is VERTEX.reader is core.pipeline.reader_of("generate-content")
    assert INTERACTIONS.reader is core.pipeline.reader_of("interactions")
    assert GEMINI.reader.chat is core.pipeline.STAGES
    assert INTERACTIONS.reader.responses is core.pipeline.INTERACTIONS_RESPONSES_STAGES
    assert INTERACTIONS.reader.steps
    assert not GEMINI.reader.steps


def test_the_pipeline_options_choose_the_reader_and_the_enum_numbers() -> None:
    # each names its reader: an upstream's name need not be its stream format's
    gc = "generate-content"
    assert GEMINI.pipeline({"model": "m"}) == {"model": "m", "upstream": gc, "api": "gemini"}
    assert VERTEX.pipeline({"upstream": "x"}) == {"upstream": gc, "api": "vertex"}
    assert INTERACTIONS.pipeline({"model": "m"}) == {"model": "m", "upstream": "interactions"}
    for upstream in UPSTREAMS:  # each is a pipeline the core accepts, with that reader
        assert core.pipeline.PipelineSettings(upstream.pipeline({})).reader is upstream.reader


def test_the_chat_writer_is_the_upstreams() -> None:
    body = {**CHAT, "tools": TOOLS}
    gemini = GEMINI.chat_request(body)
    vertex = VERTEX.chat_request(body)
    declaration = gemini["tools"][0]["functionDeclarations"][0]
    assert "parametersJsonSchema" in declaration  # the Gemini API: full JSON Schema
    assert "parameters" in vertex["tools"][0]["functionDeclarations"][0]  # Vertex: OpenAPI
    assert gemini["contents"] == vertex["contents"]
    interaction = INTERACTIONS.chat_request(body)
    assert "contents" not in interaction
    assert interaction["input"]
    with pytest.raises(rxgem.InvalidRequestError):
        INTERACTIONS.chat_request({"model": "m", "messages": "no"})


def test_the_responses_writer_is_the_upstreams() -> None:
    assert isinstance(GEMINI.responses_request(RESPONSES), ResponsesRequest)
    assert isinstance(VERTEX.responses_request(RESPONSES), ResponsesRequest)
    assert isinstance(INTERACTIONS.responses_request(RESPONSES), InteractionRequest)


def test_the_url_the_transport_options_and_the_credential() -> None:
    assert GEMINI.url(None, "models/m") == (
        "https://generativelanguage.googleapis.com/v1beta/models/m:streamGenerateContent?alt=sse"
    )
    assert VERTEX.url(VERTEX_URL, "m") == f"{VERTEX_URL}/models/m:streamGenerateContent?alt=sse"
    assert INTERACTIONS.url("http://h/v1beta/", "m") == "http://h/v1beta/interactions"
    with pytest.raises(rxgem.InvalidRequestError):
        GEMINI.url(None, "../m")
    assert GEMINI.transport_options == TransportOptions.__optional_keys__
    assert INTERACTIONS.transport_options == InteractionsTransportOptions.__optional_keys__
    assert "resume" in INTERACTIONS.transport_options - GEMINI.transport_options
    assert GEMINI.credentials("k") == {"api_key": "k"}
    assert VERTEX.credentials("t") == {"access_token": "t"}
    assert INTERACTIONS.credentials("k") == {"api_key": "k"}
    assert [u.provider for u in UPSTREAMS] == ["gcp.gemini", "gcp.vertex_ai", "gcp.gemini"]
    assert [u.background for u in UPSTREAMS] == [False, False, True]


def test_an_upstream_is_found_again_from_a_url_it_addresses() -> None:
    for upstream, base in ((GEMINI, None), (VERTEX, VERTEX_URL), (INTERACTIONS, None)):
        url = upstream.url(base, "m")
        assert upstream.addresses(url)
        assert upstream_at(url) is upstream
    assert upstream_at("http://h/v1beta/interactions/v1_abc?alt=sse") is INTERACTIONS
    assert upstream_at("http://h/v1beta/models") is GEMINI  # not a stream: the default's
    assert not INTERACTIONS.addresses("http://h/v1beta/models/m:streamGenerateContent")
    assert not GEMINI.addresses("http://h/v1beta/interactions?q=:streamGenerateContent")


@pytest.mark.parametrize("upstream", UPSTREAMS, ids=lambda u: f"{u.name}-{u.api}")
def test_each_upstream_writes_exchanges_and_reads_as_one(upstream: Upstream) -> None:
    """Its writer's body, sent by its exchange with its credential to its URL (a real
    FakeGemini), read by its reader: the chat answer, whichever upstream."""
    from rxgem.operators import gemini_to_openai
    from rxgem.testing import FakeGemini, FakeInteraction, text_step

    request = upstream.chat_request({**CHAT, "stream": True})
    interaction = FakeInteraction(steps=(text_step("Hello there"),))
    with FakeGemini(interactions=[interaction]) as fake:
        source = upstream.source(
            request, "gemini-2.5-flash", base_url=fake.base_url, **upstream.credentials("secret")
        )
        chunks = list(rxgem.iterate(source.pipe(gemini_to_openai(**upstream.pipeline({})))))
        (sent,) = fake.requests
    url = urlsplit(upstream.url(fake.base_url, "gemini-2.5-flash"))
    assert sent.path.partition("?")[0] == url.path
    credential = sent.headers.get("x-goog-api-key") or sent.headers["authorization"]
    assert credential in ("secret", "Bearer secret")
    assert ("authorization" in sent.headers) == (upstream is VERTEX)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text


def test_each_folder_is_one_upstream_and_the_registry_lists_each_once() -> None:
    """Adding an upstream is a folder of rxgem.upstreams and a line of the registry."""
    import importlib
    from pathlib import Path

    import rxgem.upstreams

    home = Path(rxgem.upstreams.__file__).parent
    folders = sorted(p.name for p in home.iterdir() if (p / "__init__.py").is_file())
    found = []
    for folder in folders:
        face = importlib.import_module(f"rxgem.upstreams.{folder}")
        (upstream,) = [
            value for name in face.__all__ if isinstance(value := getattr(face, name), Upstream)
        ]
        found.append(upstream)
    assert sorted(map(id, found)) == sorted(map(id, UPSTREAMS))
