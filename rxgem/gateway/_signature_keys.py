"""The keys signature memory keeps Gemini's thought signatures under (sans-IO).

A key names the model that signed and what a client echoes of the part it signed:

- ``call:<model>:<id>``: a tool call's id (chat ``tool_calls[].id``, Responses ``call_id``:
  the same ids, so a conversation that moves between the two APIs keeps them);
- ``text:<model>:<sha256>``: an assistant message's text, hashed (its signature is the
  message's; the client echoes the text, not an id);
- ``rs:<model>:<id>``: a Responses reasoning item's id (the thought steps it stands for).

Google binds a signature to the model that issued it (another model's request is refused
with ``Invalid thought signature``), so the model is part of the key, as the client names
it (``models/`` left out): another model finds nothing. Tool-call ids come from clients
too and can be anything: a key longer than :data:`MAX_KEY` is ``<kind>#<sha256>`` of the
model and id instead, bounded and as exact.
"""

from __future__ import annotations

import hashlib
from typing import Any, Final

from ..replies import model_id

__all__ = ["MAX_KEY", "call_key", "model_of", "reasoning_key", "text_key", "text_of"]

MAX_KEY: Final = 256
"""The longest key made (a store keeps keys up to this length)."""


def _digest(text: str) -> str:
    # a lone surrogate is valid JSON: hash it rather than fail
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _key(kind: str, model: str, ident: str) -> str:
    key = f"{kind}:{model}:{ident}"
    if len(key) <= MAX_KEY:
        return key
    return f"{kind}#{_digest(model + chr(10) + ident)}"


def model_of(body: Any) -> str | None:
    """The model a request body names (``models/`` left out), or ``None``."""
    model = body.get("model") if isinstance(body, dict) else None
    if not isinstance(model, str) or not model:
        return None
    return model_id(model)


def call_key(model: str, call_id: str) -> str:
    """The key of a tool call's signature."""
    return _key("call", model, call_id)


def text_key(model: str, text: str) -> str:
    """The key of the signature of an assistant message whose text is ``text``."""
    return _key("text", model, _digest(text))


def reasoning_key(model: str, item_id: str) -> str:
    """The key of the signatures a Responses reasoning item stands for."""
    return _key("rs", model, item_id)


def text_of(content: Any) -> str:
    """The text of a message's ``content`` as a client echoes it: the string, or its
    parts' texts joined (chat ``text``, Responses ``output_text``); ``""`` for none."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    pieces = []
    for part in content:
        if isinstance(part, dict):
            text = part.get("text")
            if isinstance(text, str):
                pieces.append(text)
    return "".join(pieces)
