"""Thought signatures read back from ``reasoning`` items, each given to its part.

rxgem writes a response's signatures into its reasoning item's ``encrypted_content``
(:func:`~rxgem.core.encode_signatures`); a client sends the item back on its next turn.
:class:`Signatures` reads them (:func:`~rxgem.core.decode_signatures`) as the items of a
model turn go by and puts each where it came from:

- ``"call"``: on the ``functionCall`` part of the ``function_call`` item whose
  ``call_id`` it names (wherever that item is in the input);
- ``"text"``: on the last text of the assistant message that follows the reasoning
  item in its turn (an empty text holds it when no message follows);
- ``"thought"``: on a thought (an empty text, ``thought=True``) where the reasoning item
  stands.

Summaries are not sent back: Gemini needs the signatures, not the thought text. An
``encrypted_content`` rxgem did not write (OpenAI's own) cannot help Gemini: it is left
out with a :class:`~rxgem.request.SignatureWarning`.
"""

from __future__ import annotations

from collections import deque

from ....core import InvalidRequestError
from ....core.responses import decode_signatures
from ..._json import JSONObject
from ..._policy import warn
from ..._signatures import SignatureWarning
from ...form import Call, Part, Text

__all__ = ["Signatures"]


class Signatures:
    """The signatures of the reasoning items seen so far, waiting for their parts.

    Linear: each signature is placed once; call parts are matched through a dict.
    """

    __slots__ = ("_by_call", "_call_parts", "_texts", "_unused")

    def __init__(self) -> None:
        self._by_call: dict[str, str] = {}
        self._call_parts: list[tuple[str, Call]] = []
        # the empty texts holding a "text" signature until a message takes it
        self._texts: deque[Text] = deque()
        self._unused: set[int] = set()

    def reasoning(self, item: JSONObject, where: str, parts: list[Part]) -> None:
        """Read a reasoning item of the model turn whose parts are ``parts``."""
        content = item.get("encrypted_content")
        if content is None:
            return
        at = f"{where}.encrypted_content"
        if type(content) is not str:
            raise InvalidRequestError("must be a string", where=at)
        carried = decode_signatures(content, where=at)
        if carried is None:
            warn(
                f"{at} was not written by rxgem (it holds no Gemini thought signature); left out",
                SignatureWarning,
            )
            return
        for signature in carried:
            if signature.kind == "call":
                if signature.call_id is not None:
                    self._by_call.setdefault(signature.call_id, signature.signature)
            elif signature.kind == "text":
                holder = Text("", signature=signature.signature)
                parts.append(holder)
                self._texts.append(holder)
            else:
                parts.append(Text("", signature=signature.signature, thought=True))

    def message(self, parts: list[Text]) -> None:
        """An assistant message's text parts (in its turn's parts) take the waiting
        text signature, on the last of them."""
        if not self._texts or not parts:
            return
        holder = self._texts.popleft()
        parts[-1].signature, holder.signature = holder.signature, None
        self._unused.add(id(holder))

    def call(self, call_id: str, part: Call) -> None:
        """A call, to sign once every reasoning item is read."""
        self._call_parts.append((call_id, part))

    def close_turn(self, parts: list[Part]) -> list[Part]:
        """The turn's parts without the holders a message emptied."""
        self._texts.clear()
        if not self._unused:
            return parts
        kept = [part for part in parts if id(part) not in self._unused]
        self._unused.clear()
        return kept

    def sign_calls(self) -> None:
        """Give each call part the signature carried for its call id (if it has none)."""
        for call_id, part in self._call_parts:
            signature = self._by_call.get(call_id)
            if signature is not None and part.signature is None:
                part.signature = signature
