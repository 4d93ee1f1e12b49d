"""The server's gateway, made from its settings: the transport of its pools toward Gemini
(aiohttp's or httpx's own, behind the inspector when it is on), its limits and its
pipeline options. What is asked of Gemini is the gateway's (:mod:`rxgem.gateway`)."""

from __future__ import annotations

import importlib.util
import logging
import os

import httpx

from ..gateway import Gateway, GatewayOptions
from ..transport import CassetteDir, ack_head
from .capture import Inspector
from .settings import RECORD_COUNT_ENV, ServerSettings

__all__ = ["server_gateway", "uses_aiohttp"]


def uses_aiohttp(choice: str) -> bool:
    """Whether the server's upstream goes through aiohttp: ``choice`` is ``"aiohttp"``,
    or ``"auto"`` and aiohttp imports."""
    if choice == "httpx":
        return False
    if choice == "aiohttp":
        return True
    return importlib.util.find_spec("aiohttp") is not None


def _aiohttp_transport(limits: httpx.Limits) -> httpx.AsyncBaseTransport:
    from ..transport import AiohttpTransport

    return AiohttpTransport(limits=limits)


def server_gateway(
    settings: ServerSettings,
    inspector: Inspector | None = None,
    logger: logging.Logger | None = None,
) -> Gateway:
    """The gateway of a server with ``settings`` (``inspector``: with the inspector on,
    what captures every exchange).

    With httpx's own transport, several small pools; aiohttp's finds a connection
    without a scan: one pool, and it acknowledges each head itself (httpx's gets
    :func:`ack_head`). Each upstream exchange is written as a cassette with ``--record``;
    the workers of one ``rxgem serve`` share its count (:data:`RECORD_COUNT_ENV`).
    """
    s = settings
    aiohttp = uses_aiohttp(s.upstream_client)

    def transport(limits: httpx.Limits) -> httpx.AsyncBaseTransport | None:
        inner = _aiohttp_transport(limits) if aiohttp else None
        if inspector is None:
            return inner
        return inspector.transport(inner or httpx.AsyncHTTPTransport(limits=limits))

    recorder = (
        CassetteDir(
            s.record,
            max_files=s.record_max_files,
            secrets=s.secrets,
            shared=os.environ.get(RECORD_COUNT_ENV) or None,
        )
        if s.record
        else None
    )
    options = GatewayOptions(
        upstream=s.upstream,
        chosen=s.chosen_upstream,
        pipeline=s.pipeline,
        api_key=s.api_key,
        access_token=s.access_token,
        interactions_store=s.interactions_store,
        max_line_bytes=s.max_upstream_line_bytes,
        max_connections=s.max_upstream_connections,
        connect_timeout=s.connect_timeout,
        read_timeout=s.read_timeout,
        recorder=recorder,
        store_limits=(
            s.store_max_items,
            s.store_max_record_bytes,
            s.store_max_chain,
            s.store_max_conversation_bytes,
        ),
    )
    return Gateway(
        options,
        transport=transport,
        sharded=not aiohttp,
        hooks=None if aiohttp else {"response": [ack_head]},
        logger=logger,
    )
