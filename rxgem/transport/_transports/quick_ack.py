"""An upstream response's head acknowledged at once, so its body is not held back.

A server that leaves Nagle's algorithm on (Python's ``http.server``, many small servers
and proxies) and writes a response's head and body apart keeps the body in its kernel
until the head is acknowledged. A Linux client whose connection is in its
request/response rhythm delays that ACK (40 ms), hoping to carry it on its next request:
every answer's first chunk came that late. ``TCP_QUICKACK`` set once the head is read
sends the ACK now and leaves that rhythm for the rest of the answer (the kernel does not
keep the flag: the next request on the connection brings the rhythm back, so it is set
for every response). Where the option does not exist, nothing is done.
"""

from __future__ import annotations

import contextlib
import socket
from typing import Any, Final

import httpx

__all__ = ["ack_head", "ack_now"]

_QUICKACK: Final[int | None] = getattr(socket, "TCP_QUICKACK", None)


def ack_now(transport: Any) -> None:
    """Acknowledge what ``transport`` (anything with asyncio's ``get_extra_info``, or
    ``None``) has received, now, and keep acknowledging at once until it sends again."""
    if _QUICKACK is None or transport is None:
        return
    sock = transport.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):  # closed meanwhile, or not TCP
            sock.setsockopt(socket.IPPROTO_TCP, _QUICKACK, 1)


async def ack_head(response: httpx.Response) -> None:
    """An ``httpx.AsyncClient`` response hook (run once the head is read): ``ack_now``
    on the connection httpx's own transport read it from."""
    ack_now(response.extensions.get("network_stream"))
