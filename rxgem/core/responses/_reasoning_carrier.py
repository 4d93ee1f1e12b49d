"""Gemini's thought signatures carried in a Responses ``reasoning`` item's ``encrypted_content``.

Responses clients send reasoning items back unchanged when they asked for
``include: ["reasoning.encrypted_content"]`` (Codex CLI, the Agents SDK with
``store=False``, the Vercel AI SDK): that opaque string is where a stateless client
already keeps what the model needs on the next turn, so rxgem keeps Gemini's
signatures there. The output side writes it (:func:`encode_signatures`), the request
side reads it back (:func:`decode_signatures`) and gives each signature to the part it
came with: a ``functionCall`` part by its call id, a text part, or a thought part.

The format is ``rxgem.sig.v1.`` + base64url (no padding) of compact JSON, a list of
``[kind, call_id, signature]``: readable by rxgem only, versioned by its prefix, and
not OpenAI's own (which :func:`decode_signatures` leaves alone).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from typing import Final, Literal, TypeAlias

import msgspec

from .._errors import InvalidRequestError

__all__ = ["CARRIER_PREFIX", "CarriedSignature", "decode_signatures", "encode_signatures"]

CARRIER_PREFIX: Final = "rxgem.sig.v1."
"""What begins every ``encrypted_content`` rxgem writes."""

SignedKind: TypeAlias = Literal["call", "text", "thought"]


class CarriedSignature(msgspec.Struct, array_like=True, frozen=True):
    """One thought signature and the part of the model's turn it came with.

    Attributes:
        kind: ``"call"`` (a ``functionCall`` part), ``"text"`` or ``"thought"``.
        call_id: the call's id as the client sees it (``call_id`` of the
            ``function_call`` item); ``None`` for text and thought parts.
        signature: Gemini's ``thoughtSignature``, as sent.
    """

    kind: SignedKind
    call_id: str | None
    signature: str


_ENCODER: Final = msgspec.json.Encoder()
_DECODER: Final = msgspec.json.Decoder(list[CarriedSignature])


def encode_signatures(signatures: Sequence[CarriedSignature]) -> str:
    """The ``encrypted_content`` that carries ``signatures``."""
    data = _ENCODER.encode(list(signatures))
    return CARRIER_PREFIX + base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def decode_signatures(content: str, *, where: str = "") -> list[CarriedSignature] | None:
    """The signatures in an ``encrypted_content``; ``None`` when rxgem did not write it.

    Raises:
        InvalidRequestError: it has rxgem's prefix but was altered or cut (``where``
            names the field).
    """
    if not content.startswith(CARRIER_PREFIX):
        return None
    text = content[len(CARRIER_PREFIX) :]
    try:
        data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        return _DECODER.decode(data)
    except (binascii.Error, ValueError, msgspec.DecodeError):
        raise InvalidRequestError(
            "not a reasoning item's content as rxgem wrote it (altered or cut)", where=where
        ) from None
