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
from rxgem.server._labels import ROUTES

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
