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
- a ``functionCall`` → a ``function_call`` step (``id``, ``name``, ``arguments``);
- code Gemini ran, with Google's id on its parts (as the Interactions upstream gives it):
  ``executableCode`` → a ``code_execution_call`` step (``id``, ``arguments``: ``code``
  and the ``language`` lower-cased), ``codeExecutionResult`` → a
  ``code_execution_result`` step (``call_id``, ``result``: the output, ``is_error`` for
  an outcome but ``OUTCOME_OK``), each with its part's signature as the step's own.

Parts with no Interactions counterpart the caller can replay (code without Google's id,
as ``generateContent`` gives it, built-in tool records kept in ``extra_content``) are
left out with an ``UnsupportedWarning``: a tool step is replayed with the id Google gave
it, and a made-up id would claim a run Google has no record of.
"""

from __future__ import annotations

import json
import warnings
from typing import Any

from ...core import InvalidRequestError
from .._json import JSONObject
from .._params import UnsupportedWarning
from ._media import media_content

__all__ = ["contents_to_steps", "result_value"]


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
    why = (
        "without Google's id cannot be replayed as an Interactions step"
        if kind in ("executableCode", "codeExecutionResult")
        else "has no Interactions step to replay it as"
    )
    warnings.warn(
        f"{where}: a {kind!r} part {why}; left out",
        UnsupportedWarning,
        stacklevel=5,
    )


_LANGUAGES = frozenset({"python", "bash"})
_OK = frozenset({"OUTCOME_OK", "OUTCOME_UNSPECIFIED"})


def _code_step(part: JSONObject, signature: str) -> JSONObject | None:
    """The ``code_execution_call``/``_result`` step of a code part with Google's id."""
    code, result = part.get("executableCode"), part.get("codeExecutionResult")
    step: JSONObject
    if type(code) is dict and type(code.get("id")) is str and code["id"]:
        arguments: JSONObject = {}
        if type(code.get("code")) is str:
            arguments["code"] = code["code"]
        language = code.get("language")
        if type(language) is str and language.lower() in _LANGUAGES:
            arguments["language"] = language.lower()
        step = {"type": "code_execution_call", "id": code["id"], "arguments": arguments}
    elif type(result) is dict and type(result.get("id")) is str and result["id"]:
        output = result.get("output")
        step = {
            "type": "code_execution_result",
            "call_id": result["id"],
            "result": output if type(output) is str else "",
        }
        if result.get("outcome", "OUTCOME_OK") not in _OK:
            step["is_error"] = True
    else:
        return None
    if signature:
        step["signature"] = signature
    return step


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
            elif (code := _code_step(part, signature)) is not None:
                self.close()
                self.steps.append(code)
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
