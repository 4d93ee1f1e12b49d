"""Signature memory for chat completions, sans-IO: what an answer hands out, what a
request lacks, and the request with it put back.

- :class:`ChatSignatures` collects, from the chunks as they go out (or the whole
  completion), each tool call's signature (``tool_calls[i].extra_content.google
  .thought_signature``) under its id, and each choice's text signature
  (``extra_content.google.thought_signature`` of the message) under its whole text, for
  every choice. A call whose id carries its signature (``--signature-in-id``) needs no
  memory.
- :func:`chat_recall` lists, for a request, the assistant tool calls that came without a
  signature (:func:`~rxgem.request.call_signature`) and the assistant texts without one
  (:func:`~rxgem.request.message_signature`); :meth:`ChatRecall.restore` puts what the
  memory found where the translation reads it. What the client sent is never replaced.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..core import ChatCompletion, ChatCompletionChunk
from ..core.openai import ID_MARK
from ..request import call_signature, message_signature, split_id
from ._signature_keys import call_key, text_key, text_of

__all__ = ["ChatRecall", "ChatSignatures", "chat_recall"]


def _signature(extra: Any) -> str | None:
    google = extra.get("google") if isinstance(extra, dict) else None
    value = google.get("thought_signature") if isinstance(google, dict) else None
    return value if isinstance(value, str) and value else None


class ChatSignatures:
    """The signatures a chat completion hands out, as they go out.

    Args:
        model: the model the request named (``models/`` left out).
    """

    __slots__ = ("_call_ids", "_call_signatures", "_text_signatures", "_texts", "model")

    def __init__(self, model: str) -> None:
        self.model = model
        self._call_ids: dict[tuple[int, int], str] = {}
        self._call_signatures: dict[tuple[int, int], str] = {}
        self._texts: dict[int, list[str]] = {}
        self._text_signatures: dict[int, str] = {}

    def chunk(self, chunk: ChatCompletionChunk) -> None:
        """Read a streamed chunk."""
        for choice in chunk.choices:
            delta = choice.delta
            index = choice.index
            if delta.content:
                texts = self._texts.get(index)
                if texts is None:
                    texts = self._texts[index] = []
                texts.append(delta.content)
            if delta.extra_content is not None:
                signature = _signature(delta.extra_content)
                if signature is not None:
                    self._text_signatures[index] = signature
            if delta.tool_calls:
                for call in delta.tool_calls:
                    slot = (index, call.index)
                    if call.id is not None:
                        self._call_ids[slot] = call.id
                    if call.extra_content is not None:
                        signature = _signature(call.extra_content)
                        if signature is not None:
                            self._call_signatures[slot] = signature

    def completion(self, completion: ChatCompletion) -> None:
        """Read a whole completion."""
        for choice in completion.choices:
            message = choice.message
            index = choice.index
            if message.content:
                self._texts[index] = [message.content]
            signature = _signature(message.extra_content)
            if signature is not None:
                self._text_signatures[index] = signature
            for n, call in enumerate(message.tool_calls or ()):
                call_id = call.get("id")
                signature = _signature(call.get("extra_content"))
                if isinstance(call_id, str) and signature is not None:
                    self._call_ids[(index, n)] = call_id
                    self._call_signatures[(index, n)] = signature

    def signatures(self) -> dict[str, str]:
        """What to remember: each signature by its key."""
        found: dict[str, str] = {}
        for slot, signature in self._call_signatures.items():
            call_id = self._call_ids.get(slot)
            if call_id and ID_MARK not in call_id:
                found[call_key(self.model, call_id)] = signature
        for index, signature in self._text_signatures.items():
            text = "".join(self._texts.get(index, ()))
            if text:
                found[text_key(self.model, text)] = signature
        return found


class ChatRecall:
    """What a chat request lacks: the keys to look up, and where each answer goes.

    Attributes:
        keys: the keys to recall (each once, in the order of the messages).
        unsigned: the assistant tool calls that came without a signature.
    """

    __slots__ = ("_calls", "_seen", "_texts", "keys", "unsigned")

    def __init__(self) -> None:
        self.keys: list[str] = []
        self.unsigned = 0
        self._calls: list[tuple[int, int, str]] = []  # message, call, key
        self._texts: list[tuple[int, str]] = []  # message, key
        self._seen: set[str] = set()

    def want_call(self, message: int, call: int, key: str) -> None:
        self._calls.append((message, call, key))
        self._want(key)

    def want_text(self, message: int, key: str) -> None:
        self._texts.append((message, key))
        self._want(key)

    def _want(self, key: str) -> None:
        if key not in self._seen:
            self._seen.add(key)
            self.keys.append(key)

    def restore(self, body: dict[str, Any], found: Mapping[str, str]) -> tuple[dict[str, Any], int]:
        """``body`` with the signatures ``found`` put back (the messages it changes are
        copies), and how many tool calls got theirs."""
        if not found:
            return body, 0
        messages = list(body["messages"])
        copied: set[int] = set()

        def message_at(i: int) -> dict[str, Any]:
            if i not in copied:
                copied.add(i)
                messages[i] = dict(messages[i])
            message: dict[str, Any] = messages[i]
            return message

        restored = 0
        for i, n, key in self._calls:
            signature = found.get(key)
            if signature is None:
                continue
            message = message_at(i)
            calls = message["tool_calls"] = list(message["tool_calls"])
            call = calls[n]
            calls[n] = {
                **call,
                "extra_content": _with_signature(call.get("extra_content"), signature),
            }
            restored += 1
        for i, key in self._texts:
            signature = found.get(key)
            if signature is not None:
                message = message_at(i)
                message["extra_content"] = _with_signature(message.get("extra_content"), signature)
        return {**body, "messages": messages}, restored


def _with_signature(extra: Any, signature: str) -> dict[str, Any]:
    """``extra_content`` with Google's ``thought_signature`` set (its other fields kept)."""
    outer = dict(extra) if isinstance(extra, dict) else {}
    google = outer.get("google")
    outer["google"] = {
        **(google if isinstance(google, dict) else {}),
        "thought_signature": signature,
    }
    return outer


def chat_recall(body: Mapping[str, Any], model: str | None) -> ChatRecall:
    """What the assistant messages of a chat request lack (the request is checked by its
    translation: what is malformed here is left for it to refuse); ``model`` ``None``:
    no memory to ask, only the calls without a signature counted."""
    recall = ChatRecall()
    messages = body.get("messages")
    if not isinstance(messages, list):
        return recall
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") != "assistant":
            continue
        calls = message.get("tool_calls")
        if isinstance(calls, list):
            for n, call in enumerate(calls):
                if not isinstance(call, dict) or call_signature(call) is not None:
                    continue
                recall.unsigned += 1
                call_id = call.get("id")
                if model is not None and isinstance(call_id, str) and call_id:
                    recall.want_call(i, n, call_key(model, split_id(call_id)[0]))
        if model is not None and message_signature(message) is None:
            text = text_of(message.get("content"))
            if text:
                recall.want_text(i, text_key(model, text))
    return recall
