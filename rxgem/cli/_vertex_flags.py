"""``rxgem serve --vertex [PROJECT/LOCATION]``: Vertex AI as the upstream, and the check at
startup that the credentials the upstream finds itself (Application Default Credentials)
are there and give a token, so that a server that cannot answer says why and stops."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import Any, Final

from ..core import RxGemError
from ..server import ServerSettings
from ..upstreams.vertex import VERTEX, base_url
from ._common import UsageError

__all__ = ["adc_token", "add_vertex_flag", "check_own_credentials", "vertex_upstream"]

_TIMEOUT: Final = 10.0
"""``rxgem chat``'s longest wait for a token."""


def add_vertex_flag(parser: Any) -> None:
    """Add ``--vertex [PROJECT/LOCATION]`` to ``parser``."""
    parser.add_argument(
        "--vertex",
        metavar="PROJECT/LOCATION",
        nargs="?",
        const="",
        help="Vertex AI as the upstream, in this project and location (default:"
        " GOOGLE_CLOUD_PROJECT, else the credentials' project; GOOGLE_CLOUD_LOCATION, else"
        " global); without --access-token, Application Default Credentials, refreshed"
        " before they expire (needs the vertex extra: pip install 'rxgem[vertex]')",
    )


def vertex_upstream(args: argparse.Namespace) -> str | None:
    """Set ``args.upstream`` to Vertex AI's base URL for ``--vertex``; what is wrong, if
    anything."""
    if args.vertex is None:
        return None
    if args.upstream or args.fake:
        return "--vertex is the upstream: leave out --upstream and --fake"
    try:
        args.upstream = base_url(args.vertex, os.environ)
    except (ValueError, RxGemError) as exc:
        return f"--vertex: {exc}"
    return None


def check_own_credentials(settings: ServerSettings) -> str | None:
    """When the upstream finds the server's credentials itself, find them and get a token
    now (printing which were found); what is wrong, if anything."""
    if settings.api_key or settings.access_token or settings.pass_through_auth:
        return None
    if settings.finds_credentials is None:
        return None
    try:
        tokens = settings.chosen_upstream.own_tokens(timeout=settings.connect_timeout)
        tokens.token()
    except RxGemError as exc:
        return str(exc)
    print(
        f"rxgem serve: credentials: {settings.finds_credentials}, {tokens!r}, refreshed"
        " before they expire",
        file=sys.stderr,
    )
    return None


def adc_token() -> Callable[[], str]:
    """``rxgem chat``'s Vertex AI token, from Application Default Credentials refreshed
    before they expire (raises :class:`UsageError` when there are none)."""
    try:
        return VERTEX.own_tokens(timeout=_TIMEOUT).token
    except RxGemError as exc:
        raise UsageError(str(exc)) from None
