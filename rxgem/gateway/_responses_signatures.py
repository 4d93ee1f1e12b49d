"""Signature memory for Responses, sans-IO: what a response hands out, what a request's
``input`` lacks, and the input with it put back.

- :func:`response_signatures`: from a response's output and the converter's signatures
  (:class:`~rxgem.core.CarriedSignature`): each ``function_call``'s by its ``call_id``
  (a function call item always carries one; its item id is optional, so the ``call_id``
  is the key), the text signatures by the text of the output messages (the last ones:
  Gemini signs the end of a text), and the thought steps' by the reasoning item that
  stands for them (the converter's ``placed``; the first reasoning item also carries the
  thoughts' signatures that have no place of their own).
- :func:`responses_recall` walks ``input`` as the translation does: a ``function_call``
  whose ``call_id`` no reasoning item's ``encrypted_content`` signs, an assistant message
  that no reasoning item before it in its turn gives a text signature, and a reasoning
  item without ``encrypted_content``, each wants its key;
  :meth:`ResponsesRecall.restore` puts what was found back as the translation reads it:
  a reasoning item carrying it (:func:`~rxgem.core.encode_signatures`) before the call or
  message, or the reasoning item's own ``encrypted_content``. The client's own content
  is never replaced.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..core import InvalidRequestError
from ..core.responses import CarriedSignature, Response, decode_signatures, encode_signatures
from ..request import split_id
from ._signature_keys import call_key, reasoning_key, text_key, text_of

__all__ = ["ResponsesRecall", "response_signatures", "responses_recall"]


def response_signatures(
    response: Response,
    model: str,
    signatures: Sequence[CarriedSignature],
    placed: Mapping[str, Sequence[CarriedSignature]],
) -> dict[str, str]:
    """What to remember of a response: each signature (or carrier) by its key."""
    found: dict[str, str] = {}
    texts: list[str] = []
    thoughts: list[CarriedSignature] = []
    for signature in signatures:
        if signature.kind == "call" and signature.call_id:
            found[call_key(model, signature.call_id)] = signature.signature
        elif signature.kind == "text":
            texts.append(signature.signature)
        elif signature.kind == "thought":
            thoughts.append(signature)
    output = [item.to_dict() for item in response.output]
    messages = [
        text
        for item in output
        if item.get("type") == "message" and (text := text_of(item.get("content")))
    ]
    for text, text_signature in zip(reversed(messages), reversed(texts), strict=False):
        found[text_key(model, text)] = text_signature
    first = True
    for item in output:
        if item.get("type") != "reasoning" or not isinstance(item.get("id"), str):
            continue
        carried = [*(thoughts if first else ()), *placed.get(item["id"], ())]
        first = False
        if carried:
            found[reasoning_key(model, item["id"])] = encode_signatures(carried)
    return found


def _carried(item: Mapping[str, Any]) -> list[CarriedSignature]:
    content = item.get("encrypted_content")
    if not isinstance(content, str):
        return []
    try:
        return decode_signatures(content) or []
    except InvalidRequestError:
        return []  # the translation refuses it, naming where


class ResponsesRecall:
    """What a Responses request's ``input`` lacks: the keys, and where each answer goes.

    Attributes:
        keys: the keys to recall (each once, in input order).
        unsigned: the function calls that came without a signature.
    """

    __slots__ = ("_seen", "_wanted", "keys", "unsigned")

    def __init__(self) -> None:
        self.keys: list[str] = []
        self.unsigned = 0
        self._wanted: dict[int, tuple[str, str, str | None]] = {}  # index: kind, key, call id
        self._seen: set[str] = set()

    def want(self, index: int, kind: str, key: str, call_id: str | None = None) -> None:
        self._wanted[index] = (kind, key, call_id)
        if key not in self._seen:
            self._seen.add(key)
            self.keys.append(key)

    def restore(self, items: list[Any], found: Mapping[str, str]) -> tuple[list[Any], int]:
        """``items`` with the signatures ``found`` put back, and how many function calls
        got theirs."""
        if not found:
            return items, 0
        out: list[Any] = []
        restored = 0
        for index, item in enumerate(items):
            wanted = self._wanted.get(index)
            signature = found.get(wanted[1]) if wanted is not None else None
            if wanted is None or signature is None:
                out.append(item)
                continue
            kind, _, call_id = wanted
            if kind == "rs":
                out.append({**item, "encrypted_content": signature})
                continue
            if kind == "call":
                restored += 1
                carried = CarriedSignature("call", call_id, signature)
            else:
                carried = CarriedSignature("text", None, signature)
            out.append(_carrier([carried]))
            out.append(item)
        return out, restored


def _carrier(signatures: Iterable[CarriedSignature]) -> dict[str, Any]:
    return {
        "type": "reasoning",
        "summary": [],
        "encrypted_content": encode_signatures(list(signatures)),
    }


def responses_recall(items: Any, model: str) -> ResponsesRecall:
    """What the model turns of a request's ``input`` lack (what is malformed is left for
    the translation to refuse)."""
    recall = ResponsesRecall()
    if not isinstance(items, list):
        return recall
    signed: set[str] = set()
    calls: list[tuple[int, str]] = []
    texts = 0  # text signatures waiting for the next assistant message of the turn
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if kind == "reasoning":
            carried = _carried(item)
            if "encrypted_content" not in item or item["encrypted_content"] is None:
                item_id = item.get("id")
                if isinstance(item_id, str) and item_id:
                    recall.want(index, "rs", reasoning_key(model, item_id))
            for signature in carried:
                if signature.kind == "call" and signature.call_id is not None:
                    signed.add(signature.call_id)
                elif signature.kind == "text":
                    texts += 1
        elif kind == "function_call":
            call_id = item.get("call_id")
            if isinstance(call_id, str) and call_id:
                bare, in_id = split_id(call_id)
                if in_id is None:
                    calls.append((index, bare))
        elif kind in (None, "message"):
            role = item.get("role")
            if role == "user":
                texts = 0  # a user message closes the model turn
            elif role == "assistant":
                if texts:
                    texts -= 1
                    continue
                text = text_of(item.get("content"))
                if text:
                    recall.want(index, "text", text_key(model, text))
        elif kind == "function_call_output":
            texts = 0
    for index, call_id in calls:
        if call_id not in signed:
            recall.unsigned += 1
            recall.want(index, "call", call_key(model, call_id), call_id)
    return recall
