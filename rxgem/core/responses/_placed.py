"""Thought signatures that stand in their place in a Responses output.

A thought step of Interactions that no call follows reaches the output as a bare thought
part (``Part(thought=True, thought_signature=…)``), and a built-in tool's part carries its
step's signature; a Responses client sends back neither the part nor the message entry
that shows it. Each such signature becomes a ``reasoning`` item where it stands: the open
run of thoughts (its step's summary), else an item of its own, closed at once so that the
next thought step is a new item. The item carries the signature (a ``"thought"``
:class:`CarriedSignature`) in its ``encrypted_content`` when the client asked for it, and
the builder keeps it by item id for a server's store; the request side makes a thought
part of it where the item stands, and from that the same ``thought`` step.
"""

from __future__ import annotations

from ..gemini import Part
from ._models import ResponsesEvent
from ._output_items import OutputItems
from ._reasoning_carrier import CarriedSignature, encode_signatures

__all__ = ["is_bare", "place", "placed_signature"]


def is_bare(part: Part) -> bool:
    """Whether ``part`` is only a thought signature (a thought step with nothing to show)."""
    return part.thought is True and part == Part(
        thought=True, thought_signature=part.thought_signature
    )


def placed_signature(part: Part) -> str | None:
    """The signature of a data part that only a reasoning item can carry back, if any."""
    signature = part.thought_signature
    if not signature:
        return None
    if part.tool_call is not None or part.tool_response is not None or is_bare(part):
        return signature
    return None


def place(
    items: OutputItems, out: list[ResponsesEvent], signature: str, *, include: bool
) -> tuple[str, list[CarriedSignature]]:
    """Close a reasoning item carrying ``signature`` where the output stands; its id and
    what it carries."""
    reasoning = items.reasoning
    if reasoning is None or reasoning is items.carrier:
        reasoning = items.open_reasoning(out)
    items.reasoning = None
    carried = [CarriedSignature("thought", None, signature)]
    items.close_reasoning(out, reasoning, encode_signatures(carried) if include else None)
    return reasoning.id, carried
