"""The upstreams by the option values that choose them: the one place an upstream's name is
read. Adding an upstream is a folder of :mod:`rxgem.upstreams` and a line of
:data:`UPSTREAMS`; every list of upstream names (the server's ``--upstream-api`` choices,
``OpenAITransport(upstream=...)``'s) is :data:`UPSTREAM_NAMES`."""

from __future__ import annotations

from typing import Final

from ..transport import api_of
from ._upstream import Upstream
from .gemini import GEMINI
from .interactions import INTERACTIONS
from .vertex import VERTEX

__all__ = ["UPSTREAMS", "UPSTREAM_NAMES", "upstream_at", "upstream_of"]

UPSTREAMS: Final[tuple[Upstream, ...]] = (
    GEMINI,
    VERTEX,
    INTERACTIONS,
)
"""Every upstream, the default first (``generate-content`` on the Gemini API)."""

UPSTREAM_NAMES: Final[tuple[str, ...]] = tuple(dict.fromkeys(u.name for u in UPSTREAMS))
"""The values of the option that chooses an upstream, the default first."""


def _choices(names: tuple[str, ...]) -> str:
    """``'a' or 'b'``, ``'a', 'b' or 'c'``."""
    quoted = [repr(name) for name in names]
    return " or ".join(filter(None, (", ".join(quoted[:-1]), quoted[-1])))


def upstream_of(
    name: object = None,
    *,
    api: object = None,
    base_url: str | None = None,
    writes: object = None,
) -> Upstream:
    """The upstream option ``name`` chooses, with the ``api`` choice where that name has
    one: ``api``, else the one ``base_url`` names (``"vertex"`` for an
    ``aiplatform.googleapis.com`` host). Without a ``name``: the upstream whose Responses
    writer made ``writes`` (a translated request), else the default's.

    Raises:
        ValueError: for a ``name`` or an ``api`` no upstream has, in the words of the
            pipeline's own checks.
    """
    if name is None and writes is not None:
        named = [u for u in UPSTREAMS if isinstance(writes, u.responses_type)]
    else:
        chosen_name = UPSTREAM_NAMES[0] if name is None else name
        named = [upstream for upstream in UPSTREAMS if upstream.name == chosen_name]
        if not named:
            raise ValueError(f"upstream must be {_choices(UPSTREAM_NAMES)}, not {name!r}")
    if len(named) == 1:
        return named[0]
    chosen = api or api_of(base_url)
    found = next((upstream for upstream in named if upstream.api == chosen), None)
    if found is None:
        apis = " or ".join(repr(upstream.api) for upstream in named)
        raise ValueError(f"api must be {apis}, not {chosen!r}")
    return found


def upstream_at(url: str, base_url: str | None = None) -> Upstream:
    """The upstream whose streaming endpoint ``url`` is (the default's when none is)."""
    found = next((upstream for upstream in UPSTREAMS if upstream.addresses(url)), UPSTREAMS[0])
    return upstream_of(found.name, base_url=base_url or url)
