"""One call's options split between the transport and the pipeline.

The client's calls take both in one ``**options`` (typed by a ``TypedDict`` deriving from
both); the transport's keys are those of :class:`~rxgem.transport.TransportOptions` (and,
for the Interactions upstream, :class:`~rxgem.transport.InteractionsTransportOptions`'
``resume``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from reactivex import Observable

from ..transport import (
    InteractionsTransportOptions,
    TransportOptions,
    api_of,
    from_gemini,
    from_interactions,
)

__all__ = ["source_of", "split_options"]

_TRANSPORT: Final = TransportOptions.__optional_keys__
_INTERACTIONS: Final = InteractionsTransportOptions.__optional_keys__


def split_options(options: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(transport, pipeline)``: the options the upstream's transport takes
    (:func:`~rxgem.from_gemini`, or :func:`~rxgem.transport.from_interactions` for
    ``upstream="interactions"``), and the others. For ``generateContent``, the pipeline's
    ``api`` defaults to the one the base URL names (:func:`api_of`)."""
    interactions = options.get("upstream") == "interactions"
    keys = _INTERACTIONS if interactions else _TRANSPORT
    transport = {k: v for k, v in options.items() if k in keys}
    pipeline = {k: v for k, v in options.items() if k not in keys}
    if not interactions:
        pipeline.setdefault("api", api_of(transport.get("base_url")))
    return transport, pipeline


def source_of(
    pipeline: Mapping[str, Any], request: Mapping[str, Any], model: str
) -> Callable[..., Observable[bytes]]:
    """The upstream's body as bytes, made by the transport of ``pipeline``'s ``upstream``:
    ``source(**transport)``. An Interactions body without a ``model`` (or ``agent``) gets
    ``model``."""
    if pipeline.get("upstream") != "interactions":
        return lambda **transport: from_gemini(request, model=model, **transport)
    body = dict(request)
    if "model" not in body and "agent" not in body:
        body["model"] = model.removeprefix("models/")
    return lambda **transport: from_interactions(body, **transport)
