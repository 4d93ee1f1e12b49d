"""One call's options split between the transport and the pipeline.

The client's calls take both in one ``**options`` (typed by a ``TypedDict`` deriving from
both); the transport's keys are those of :class:`~rxgem.transport.TransportOptions`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ..transport import TransportOptions, api_of

__all__ = ["split_options"]

_TRANSPORT: Final = TransportOptions.__optional_keys__


def split_options(options: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(transport, pipeline)``: the options :func:`~rxgem.from_gemini` takes, and the
    others, whose ``api`` defaults to the one the base URL names (:func:`api_of`)."""
    transport = {k: v for k, v in options.items() if k in _TRANSPORT}
    pipeline = {k: v for k, v in options.items() if k not in _TRANSPORT}
    pipeline.setdefault("api", api_of(transport.get("base_url")))
    return transport, pipeline
