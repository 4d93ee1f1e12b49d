"""A non-streamed Interaction object → the items its stream would have given.

:func:`interaction_items` reads the object (``steps[]`` in order, ``status`` as the
finish, ``usage``) with the same :class:`~rxgem.core.StepReader` as a stream, so that
both outputs, and their assembled forms, see an object exactly as they see its stream.
"""

from __future__ import annotations

import msgspec

from .._errors import GeminiAPIError, MalformedStreamError, snippet
from ..slots import Batch
from ._models import Interaction, InteractionCompleted, InteractionCreated, StepStart, StepStop
from ._parser import not_interactions
from ._reader import StepReader

__all__ = ["interaction_items"]

_DECODER = msgspec.json.Decoder(Interaction)
_JSON_DECODER = msgspec.json.Decoder()


def _malformed(reason: str, body: str | bytes) -> MalformedStreamError:
    return MalformedStreamError(f"Interaction object: {reason}", snippet=snippet(body))


def interaction_items(body: str | bytes) -> Batch:
    """The items of an Interaction object (JSON), in the order of its ``steps``.

    Raises:
        MalformedStreamError: not JSON (or nested deeper than the decoder goes), not an
            Interaction of the step schema (the pre-June-2026 ``outputs[]`` one is refused,
            saying so), or bad steps.
        GeminiAPIError: the interaction ``failed`` or was ``cancelled`` (``status``
            says which); the items of its steps, valid before the failure, are on the
            error's ``chunks``, as a failed stream gives them before its error.
    """
    try:
        interaction = _DECODER.decode(body)
    except msgspec.ValidationError as exc:
        try:
            value = _JSON_DECODER.decode(body)
        except (msgspec.DecodeError, RecursionError):
            value = None
        other = not_interactions(value) if type(value) is dict else None
        raise _malformed(other or f"the wrong shape ({exc})", body) from None
    except msgspec.DecodeError as exc:
        raise _malformed(f"invalid JSON ({exc})", body) from None
    except RecursionError:
        raise _malformed("JSON nested too deeply", body) from None
    if interaction.steps is None and interaction.outputs is not None:
        raise _malformed(
            "an object of the Interactions schema from before June 2026 (outputs[]), which"
            " Google no longer serves; rxgem reads the steps[] schema",
            body,
        )
    if interaction.steps is None and interaction.status is None:
        value = _JSON_DECODER.decode(body)
        other = not_interactions(value) if type(value) is dict else None
        raise _malformed(other or "no steps and no status", body)
    reader = StepReader()
    out = reader.feed(InteractionCreated(interaction=interaction))
    for index, step in enumerate(interaction.steps or ()):
        out += reader.feed(StepStart(index=index, step=step))
        out += reader.feed(StepStop(index=index))
    try:
        out += reader.feed(InteractionCompleted(interaction=interaction))
    except GeminiAPIError as error:
        error.chunks = out
        raise
    return out
