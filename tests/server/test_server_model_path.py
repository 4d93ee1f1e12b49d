"""A model name reaches a model and nothing else: the URL builder, the library, the server.

The names are what an attacker sends to walk out of ``{upstream}/models/`` with the
server's credentials: traversal, encoded separators, a query, a fragment, a method
suffix. Each is refused where the URL is built (``rxgem.transport.model_segment``), so
no caller (chat, streaming, the model routes, any later endpoint) can forget the check,
and the server answers 400/404 without sending anything upstream.
"""

from __future__ import annotations

from typing import Any

import httpx
import openai
import pytest
from server_harness import HELLO, TOKEN, sdk, serving, settings_for

from rxgem import from_gemini, samples
from rxgem.core import InvalidRequestError
from rxgem.testing import FakeGemini
from rxgem.transport import model_segment
from rxgem.transport._http import model_url, stream_url

ESCAPES = [
    "../../../v1/tunedModels/evil/models/ok",
    "ok:generateContent?key=ATTACKER&x=models/ok",
    "x#models/ok",
    "models/../x",
    "../files",
    "..",
    ".",
    "a/b",
    "models/a/b",
    "models/models/a",
    "%2e%2e%2ffiles",
    "models%2Fa",
    "a%2fb",
    "a?alt=json",
    "a#frag",
    "a:generateContent",
    "a b",
    "a\nb",
    "a\\b",
    "ａ",  # a fullwidth letter is not an id character
    "",
    "models/",
    "x" * 201,
]
GOOD = ["gemini-2.5-flash", "models/gemini-2.5-flash", "claude-3@20240229", "a.b_c-d", "x" * 200]


@pytest.mark.parametrize("name", ESCAPES)
def test_the_url_builder_refuses_a_name_that_leaves_models(name: str) -> None:
    with pytest.raises(InvalidRequestError) as caught:
        stream_url("https://example.test/v1beta", name)
    assert caught.value.where == "model"
    with pytest.raises(InvalidRequestError):
        model_url(None, name)


@pytest.mark.parametrize("name", GOOD)
def test_the_url_builder_keeps_a_model_id_in_one_segment(name: str) -> None:
    segment = model_segment(name)
    assert "/" not in segment
    url = httpx.URL(stream_url("https://example.test/v1beta/", name))
    assert url.path == f"/v1beta/models/{segment}:streamGenerateContent"
    assert url.params == httpx.QueryParams({"alt": "sse"})
    assert url.fragment == ""


def test_a_vertex_base_keeps_the_model_under_its_publisher() -> None:
    base = (
        "https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/l/publishers/google"
    )
    assert stream_url(base, "gemini-2.5-flash") == (
        f"{base}/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    )
    with pytest.raises(InvalidRequestError):
        stream_url(base, "../../../../../../v1/projects/other/secrets/x")


def test_from_gemini_refuses_the_name_at_call_time() -> None:
    with pytest.raises(InvalidRequestError):
        from_gemini({"contents": []}, model="../x/models/ok", api_key="k")


@pytest.mark.parametrize("name", ESCAPES[:14])
@pytest.mark.parametrize("stream", [False, True])
def test_the_server_sends_nothing_upstream_for_an_escaping_model(name: str, stream: bool) -> None:
    with FakeGemini(samples.read("text")) as fake, serving(settings_for(fake)) as url:
        with sdk(url) as client, pytest.raises(openai.BadRequestError) as caught:
            client.chat.completions.create(model=name, messages=HELLO, stream=stream)
        assert fake.requests == []
    body: Any = caught.value.body
    assert body["param"] == "model"
    assert caught.value.response.headers["x-should-retry"] == "false"


@pytest.mark.parametrize(
    "path",
    [
        "/v1/models/..%2F..%2Fv1%2FtunedModels%2Fevil",
        "/v1/models/a%2Fb",
        "/v1/models/x%23frag",
        "/v1/models/x%3Fkey%3DATTACKER",
        "/v1/models/ok:generateContent",
        "/v1/models/tunedModels/evil/models/ok",
    ],
)
def test_the_model_route_sends_nothing_upstream_for_an_escaping_id(path: str) -> None:
    with FakeGemini() as fake, serving(settings_for(fake)) as url:
        response = httpx.get(url + path, headers={"authorization": f"Bearer {TOKEN}"})
        assert fake.requests == []
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "model_not_found"
