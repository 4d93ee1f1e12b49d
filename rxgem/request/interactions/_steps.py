"""Gemini ``contents`` (as the ``generateContent`` translation makes them) → Interactions steps.

The chat and Responses translations already resolve a conversation into Gemini contents:
results in call order, ids without their signature marks, every thought signature on the
part it came from. This module rewrites those contents as the Interactions ``input``:

- a ``user`` content's text and media → one ``user_input`` step (``content[]``);
- its ``functionResponse`` parts → one ``function_result`` step each (``call_id``,
  ``name``, ``result``: the tool's text as sent, or its text and images as a list);
- a ``model`` content's text and media → ``model_output`` steps; a part's
  ``thoughtSignature`` → a ``thought`` step with that signature, unmodified, right
  before the step of its part (the ``model_output`` of a signed text, the
  ``function_call`` of a signed call); a thought part → a ``thought`` step;
- a ``functionCall`` → a ``function_call`` step (``id``, ``name``, ``arguments``).

Parts with no Interactions counterpart the caller can replay (code Gemini ran, built-in
tool records kept in ``extra_content``) are left out with an ``UnsupportedWarning``:
without the ids of Google's own tool steps they cannot be sent back as steps.
"""

from __future__ import annotations

import json
import warnings
from typing import Any

from ...core import InvalidRequestError
from .._params import UnsupportedWarning
from ._media import media_content

__all__ = ["contents_to_steps", "result_value"]

JSONObject = dict[str, Any]


def result_value(response: JSONObject, media: list[JSONObject]) -> Any:
    """A ``function_result``'s ``result``: the tool's text (``{"output": text}`` is how the
    ``generateContent`` translation wraps text that is no JSON object), with its images
    as a list of contents."""
    output = response.get("output")
    if len(response) == 1 and type(output) is str:
        text = output
    else:
        text = json.dumps(response, ensure_ascii=False, separators=(",", ":"))
    if not media:
        return text
    return [{"type": "text", "text": text}, *media]


def _left_out(part: JSONObject, where: str) -> None:
    kind = next(iter(part), "?")
    warnings.warn(
        f"{where}: a {kind!r} part has no Interactions step to replay it as; left out",
        UnsupportedWarning,
        stacklevel=5,
    )


class _Steps:
    __slots__ = ("opened", "output", "steps")

    def __init__(self) -> None:
        self.steps: list[JSONObject] = []
        self.output: list[JSONObject] | None = None  # the open model_output's content
        self.opened = 0  # where the open model_output step stands

    def close(self) -> None:
        self.output = None

    def text_thought(self, signature: str) -> None:
        """A text's signature: a thought step before the model_output holding the text
        (Interactions streams the thought first; the chat message carries it whole)."""
        if self.output is None:
            self.thought(signature)
        else:
            self.steps.insert(self.opened, {"type": "thought", "signature": signature})
            self.opened += 1

    def thought(self, signature: str) -> None:
        self.close()
        self.steps.append({"type": "thought", "signature": signature})

    def model_content(self, content: JSONObject) -> None:
        if self.output is None:
            self.output = []
            self.opened = len(self.steps)
            self.steps.append({"type": "model_output", "content": self.output})
        self.output.append(content)

    def model(self, parts: list[JSONObject], where: str) -> None:
        for part in parts:
            found = part.get("thoughtSignature")
            signature = found if type(found) is str else ""
            signed = bool(signature)
            if part.get("thought") is True:
                if signed:
                    self.thought(signature)
                continue  # a summary is not sent back: Google needs the signature
            call = part.get("functionCall")
            if type(call) is dict:
                if signed:
                    self.thought(signature)
                self.close()
                call_id = call.get("id")
                if type(call_id) is not str or not call_id:
                    raise InvalidRequestError(
                        "an Interactions function call needs its id", where=where
                    )
                self.steps.append(
                    {
                        "type": "function_call",
                        "id": call_id,
                        "name": call["name"],
                        "arguments": call.get("args", {}),
                    }
                )
            elif "text" in part:
                if part["text"]:
                    self.model_content({"type": "text", "text": part["text"]})
                if signed:
                    self.text_thought(signature)
            else:
                if signed:
                    self.thought(signature)
                media = media_content(part, where)
                if media is not None:
                    self.model_content(media)
                else:
                    _left_out(part, where)
        self.close()

    def user(self, parts: list[JSONObject], where: str) -> None:
        self.close()
        content: list[JSONObject] = []
        for part in parts:
            response = part.get("functionResponse")
            if type(response) is dict:
                self.flush_user(content)
                content = []
                shown = [
                    m for m in (media_content(p, where) for p in response.get("parts", [])) if m
                ]
                self.steps.append(
                    {
                        "type": "function_result",
                        "call_id": response.get("id", ""),
                        "name": response["name"],
                        "result": result_value(response.get("response", {}), shown),
                    }
                )
            elif "text" in part:
                content.append({"type": "text", "text": part["text"]})
            else:
                made = media_content(part, where)
                if made is None:
                    _left_out(part, where)
                else:
                    content.append(made)
        self.flush_user(content)

    def flush_user(self, content: list[JSONObject]) -> None:
        if content:
            self.steps.append({"type": "user_input", "content": content})


def contents_to_steps(contents: list[JSONObject], source: str) -> list[JSONObject]:
    """The Interactions ``input`` steps of Gemini ``contents`` (with call ids on every
    ``functionCall``/``functionResponse``), in order; ``source`` names the request's field
    they came from (``messages``, ``input``) in errors."""
    steps = _Steps()
    for content in contents:
        where = source
        if content["role"] == "model":
            steps.model(content["parts"], where)
        else:
            steps.user(content["parts"], where)
    return steps.steps
