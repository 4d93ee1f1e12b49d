"""Every route of the real server says one Gemini error alike, as the ``openai`` SDK reads it.

For each of Google's errors (its message holding the server's key): the chat completion
(an HTTP error), the chat stream cut by it (the last ``data: {"error": ...}`` frame), the
Responses request (an HTTP error) and the Responses stream cut by it (``response.failed``)
give the ``type``, ``code`` and ``param`` of :func:`rxgem.core.openai.openai_error` (a failed
response: the Responses API's code), the same scrubbed message, and the SDK (with strict
response validation) raises the exception class its status stands for.
"""

from __future__ import annotations

import json

import openai
import pytest
from server_harness import KEY, MODEL, TOKEN, sdk, serving, settings_for

from rxgem import GeminiAPIError, samples
from rxgem.core.openai import openai_error
from rxgem.replies import scrubber
from rxgem.testing import FakeGemini, FakeResponse

FIRST_EVENT = samples.read("text").split(b"\r\n\r\n")[0] + b"\r\n\r\n"
MESSAGES = [{"role": "user", "content": "Hi"}]

CASES = {
    "RESOURCE_EXHAUSTED": (429, openai.RateLimitError),
    "PERMISSION_DENIED": (403, openai.PermissionDeniedError),
    "NOT_FOUND": (404, openai.NotFoundError),
    "INVALID_ARGUMENT": (400, openai.BadRequestError),
    "UNAUTHENTICATED": (401, openai.AuthenticationError),
    "UNAVAILABLE": (503, openai.InternalServerError),
    "INTERNAL": (500, openai.InternalServerError),
}


@pytest.mark.parametrize("status", CASES)
def test_one_gemini_error_is_said_alike_on_every_route(status: str) -> None:
    code, raised = CASES[status]
    message = f"API key {KEY} refused ({status})"
    error = {"code": code, "message": message, "status": status}
    answers = [
        FakeResponse(status=code, error=error),  # chat, not streamed
        FakeResponse(body=FIRST_EVENT, raw_error=error),  # chat, streamed: cut by it
        FakeResponse(status=code, error=error),  # Responses, not streamed
        FakeResponse(body=FIRST_EVENT, raw_error=error),  # Responses, streamed: cut by it
    ]
    seen: list[str] = []
    with (
        FakeGemini(*answers) as fake,
        serving(settings_for(fake)) as url,
        sdk(url, _strict_response_validation=True) as client,
    ):
        scrub = scrubber([KEY, TOKEN], fake.base_url)
        mapped = openai_error(GeminiAPIError(message, code=code, status=status), scrub)
        said = mapped.body()["error"]

        with pytest.raises(raised) as answered:
            client.chat.completions.create(model=MODEL, messages=MESSAGES)
        assert answered.value.status_code == mapped.status
        assert answered.value.body == said
        seen.append(json.dumps(answered.value.body))

        with pytest.raises(openai.APIError) as cut:
            list(client.chat.completions.create(model=MODEL, messages=MESSAGES, stream=True))
        assert type(cut.value) is openai.APIError  # after a 200: no status to raise by
        assert cut.value.body == said
        seen.append(json.dumps(cut.value.body))

        with pytest.raises(raised) as refused:
            client.responses.create(model=MODEL, input="Hi")
        assert refused.value.body == said
        seen.append(json.dumps(refused.value.body))

        events = list(client.responses.create(model=MODEL, input="Hi", stream=True))
        assert events[-1].type == "response.failed"
        failed = events[-1].response.error
        assert failed is not None
        assert failed.code == mapped.responses_code
        assert (failed.type, failed.param, failed.message) == (
            mapped.type,
            mapped.param,
            mapped.message,
        )
        seen.append(failed.model_dump_json())
        kept = client.responses.retrieve(events[-1].response.id)  # the stored record too
        assert kept.error == failed
        seen.append(kept.model_dump_json())
    assert said["code"] == status.lower()
    assert "[redacted]" in said["message"]
    for output in seen:
        assert KEY not in output
        assert "127.0.0.1" not in output
