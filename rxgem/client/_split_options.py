"""One call's options split between the transport and the pipeline, with the upstream they
choose.

The client's calls take both in one ``**options`` (typed by a ``TypedDict`` deriving from
both); the upstream (:func:`~rxgem.upstreams.upstream_of`: the ``upstream`` option, the
``api``, the base URL's host) says which are its transport's keys
(:class:`~rxgem.transport.TransportOptions`, and, for the Interactions upstream,
:class:`~rxgem.transport.InteractionsTransportOptions`' ``resume``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..upstreams import Upstream, upstream_of

__all__ = ["chosen_upstream", "split_options"]


def chosen_upstream(options: Mapping[str, Any], writes: object = None) -> Upstream:
    """The upstream ``options`` choose (raises ``ValueError`` for an unknown one); without
    an ``upstream`` option, the one whose Responses writer made ``writes``, if given."""
    return upstream_of(
        options.get("upstream"),
        api=options.get("api"),
        base_url=options.get("base_url"),
        writes=writes,
    )


def split_options(
    upstream: Upstream, options: Mapping[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(transport, pipeline)``: the options ``upstream``'s exchange takes, and the others
    with those that choose its reader (for ``generateContent``, the ``api`` the base URL
    names unless told)."""
    keys = upstream.transport_options
    transport = {k: v for k, v in options.items() if k in keys}
    pipeline = upstream.pipeline({k: v for k, v in options.items() if k not in keys})
    return transport, pipeline
