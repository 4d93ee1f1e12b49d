"""The Interactions API (``POST {base}/interactions``, ``step.*`` events): its request
writers (``chat_to_interaction``, ``responses_to_interaction``), its resumable exchange
(:func:`~rxgem.transport.from_interactions`), its reader (``parse_interactions``,
``read_steps``), background runs and agents."""

from ._upstream import INTERACTIONS

__all__ = ["INTERACTIONS"]
