"""The conversation (``rxgem.request.form``) as the Interactions ``input`` steps.

The chat and Responses readers resolve a conversation into turns of typed parts: results
in call order, ids without their signature marks, every thought signature on the part it
came from. This module writes those turns as the Interactions ``input``:

- a ``user`` turn's text and media → one ``user_input`` step (``content[]``);
- its results → one ``function_result`` step each (``call_id``, ``name``, ``result``:
  the tool's text as sent, or its text and images as a list);
- a ``model`` turn's text and media → ``model_output`` steps; a part's signature → a
  ``thought`` step with that signature, unmodified, right before the step of its part
  (the ``model_output`` of a signed text, the ``function_call`` of a signed call); a
  thought part → a ``thought`` step;
- a call → a ``function_call`` step (``id``, ``name``, ``arguments``);
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
from typing import Any

from ....core import InvalidRequestError
from ..._json import JSONObject
from ..._policy import UnsupportedWarning, warn
from ...form import Call, Conversation, Kept, Media, Part, Result, Text
from ._media import kept_media, media_content

__all__ = ["conversation_steps", "result_value"]


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


def _left_out(kind: str, where: str) -> None:
    why = (
        "without Google's id cannot be replayed as an Interactions step"
        if kind in ("executableCode", "codeExecutionResult")
        else "has no Interactions step to replay it as"
    )
    warn(f"{where}: a {kind!r} part {why}; left out", UnsupportedWarning)


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

    def model(self, parts: list[Part], where: str) -> None:
        for part in parts:
            if isinstance(part, Kept):
                self.kept(part.part, where)
                continue
            signature = (part.signature or "") if isinstance(part, Text | Call) else ""
            if isinstance(part, Text) and part.thought:
                if signature:
                    self.thought(signature)
            elif isinstance(part, Call):
                self.call(part.id, part.name, part.args, signature, where)
            elif isinstance(part, Text):
                if part.text:
                    self.model_content({"type": "text", "text": part.text})
                if signature:
                    self.text_thought(signature)
            elif isinstance(part, Media):
                self.model_content(media_content(part, where))
            else:
                _left_out(_kind(part), where)
        self.close()

    def call(self, call_id: Any, name: str, args: Any, signature: str, where: str) -> None:
        if signature:
            self.thought(signature)
        self.close()
        if type(call_id) is not str or not call_id:
            raise InvalidRequestError("an Interactions function call needs its id", where=where)
        self.steps.append({"type": "function_call", "id": call_id, "name": name, "arguments": args})

    def kept(self, part: JSONObject, where: str) -> None:
        """A part kept as Gemini gave it: a thought, text, code with Google's id, media."""
        found = part.get("thoughtSignature")
        signature = found if type(found) is str else ""
        call = part.get("functionCall")
        if part.get("thought") is True:
            if signature:
                self.thought(signature)
        elif type(call) is dict:
            self.call(call.get("id"), call["name"], call.get("args", {}), signature, where)
        elif "text" in part:
            if part["text"]:
                self.model_content({"type": "text", "text": part["text"]})
            if signature:
                self.text_thought(signature)
        elif (code := _code_step(part, signature)) is not None:
            self.close()
            self.steps.append(code)
        else:
            if signature:
                self.thought(signature)
            media = kept_media(part, where)
            if media is not None:
                self.model_content(media)
            else:
                _left_out(next(iter(part), "?"), where)

    def user(self, parts: list[Part], where: str) -> None:
        self.close()
        content: list[JSONObject] = []
        for part in parts:
            if isinstance(part, Result):
                self.flush_user(content)
                content = []
                shown = [media_content(m, where) for m in part.media]
                self.steps.append(
                    {
                        "type": "function_result",
                        "call_id": part.id or "",
                        "name": part.name,
                        "result": result_value(part.response, shown),
                    }
                )
            elif isinstance(part, Text):
                content.append({"type": "text", "text": part.text})
            elif isinstance(part, Media):
                content.append(media_content(part, where))
            elif isinstance(part, Kept) and (made := kept_media(part.part, where)) is not None:
                content.append(made)
            else:
                _left_out(_kind(part), where)
        self.flush_user(content)

    def flush_user(self, content: list[JSONObject]) -> None:
        if content:
            self.steps.append({"type": "user_input", "content": content})


def _kind(part: Part) -> str:
    """The Gemini field a part is sent as, to name it."""
    if isinstance(part, Kept):
        return next(iter(part.part), "?")
    return {Call: "functionCall", Result: "functionResponse", Text: "text"}.get(
        type(part), "inlineData"
    )


def conversation_steps(conversation: Conversation, source: str) -> list[JSONObject]:
    """The Interactions ``input`` steps of a conversation, in order (every call and result
    needs its id); ``source`` names the request's field it came from (``messages``,
    ``input``) in errors. Gemini 3's signatures are placed first
    (``place_signatures(turns, in_place=True)``)."""
    steps = _Steps()
    for turn in conversation.turns:
        if turn.role == "model":
            steps.model(turn.parts, source)
        else:
            steps.user(turn.parts, source)
    return steps.steps
