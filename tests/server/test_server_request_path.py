"""One path from route to upstream: one route list, one 404, one place for error bodies.

The app serves the route templates the access log and the telemetry label requests by;
a model and a stored response that a client cannot see are refused in the same words;
every refusal's body is made by a constructor of the one error vocabulary, never by
hand on a route.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx
from server_harness import TOKEN, serving, settings_for
from starlette.routing import Route

import rxgem.server
from rxgem.server import create_app
from rxgem.server.observe._labels import ROUTES

AUTH = {"authorization": f"Bearer {TOKEN}"}
SERVER = Path(rxgem.server.__file__).parent


def test_the_app_serves_the_one_route_list() -> None:
    app = create_app(settings_for("http://127.0.0.1:9", metrics=True))
    served = {route.path for route in app.routes if isinstance(route, Route)}
    assert served == set(ROUTES)


def _refused(answer: httpx.Response) -> tuple[int, str, str | None]:
    error: dict[str, Any] = answer.json()["error"]
    return answer.status_code, error["type"], answer.headers.get("x-should-retry")


def test_a_model_and_a_response_not_found_are_one_404(tmp_path: Path) -> None:
    settings = settings_for("http://127.0.0.1:9", store=str(tmp_path / "responses.sqlite3"))
    with serving(settings) as url:
        model = httpx.get(f"{url}/v1/models/..%2Fetc", headers=AUTH)
        response = httpx.get(f"{url}/v1/responses/resp_unknown", headers=AUTH)
    assert _refused(model) == _refused(response) == (404, "invalid_request_error", "false")
    assert model.json()["error"]["code"] == "model_not_found"
    assert response.json()["error"]["code"] == "not_found"


def test_no_route_builds_an_error_body_by_hand() -> None:
    by_hand = [
        f"{path.relative_to(SERVER)}:{number}"
        for path in sorted(SERVER.rglob("*.py"))
        if path.name != "_errors.py"
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if re.search(r"\bErrorReply\(", line)
    ]
    assert by_hand == []


def test_a_path_without_v1_is_a_404_that_says_to_add_it(tmp_path: Path) -> None:
    settings = settings_for("http://127.0.0.1:9", store=str(tmp_path / "responses.sqlite3"))
    with serving(settings) as url:
        answers = [
            httpx.post(f"{url}{path}", headers=AUTH) for path in ("/chat/completions", "/responses")
        ]
        gemini = httpx.post(f"{url}/v1beta/models/gemini-2.5-flash:streamGenerateContent")
    for answer in answers:
        assert _refused(answer)[:2] == (404, "not_found_error")
        error = answer.json()["error"]
        assert error["code"] == "not_found"
        assert "add /v1 to the client's base URL" in error["message"]
    assert gemini.status_code == 404
    assert "OpenAI-compatible server" in gemini.json()["error"]["message"]


def test_a_base_url_that_ends_in_an_endpoint_is_told_the_base_url(tmp_path: Path) -> None:
    # what the openai SDK requests when base_url is the endpoint itself
    settings = settings_for("http://127.0.0.1:9", store=str(tmp_path / "responses.sqlite3"))
    paths = [
        "/v1/chat/completions/chat/completions",
        "/v1/responses/responses",
        "/v1/chat/completions/responses",
        "/chat/completions/chat/completions",
    ]
    with serving(settings) as url:
        answers = [httpx.post(f"{url}{path}", headers=AUTH, json={}) for path in paths]
    for path, answer in zip(paths, answers, strict=True):
        assert answer.status_code in (404, 405), path
        message = answer.json()["error"]["message"]
        base = path.rsplit("/chat/completions" if path.endswith("completions") else "/responses", 1)
        assert f"base URL ends in an endpoint ({base[0]})" in message, (path, message)
        assert "base_url='http://HOST:PORT/v1'" in message, (path, message)


def test_a_base_url_with_another_prefix_is_told_the_routes_are_under_v1(tmp_path: Path) -> None:
    settings = settings_for("http://127.0.0.1:9", store=str(tmp_path / "responses.sqlite3"))
    with serving(settings) as url:
        answer = httpx.post(f"{url}/api/chat/completions", headers=AUTH, json={})
    assert answer.status_code == 404
    assert "under /v1" in answer.json()["error"]["message"]
    assert "base_url='http://HOST:PORT/v1'" in answer.json()["error"]["message"]
