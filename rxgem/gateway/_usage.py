"""The usage chunk, asked for in one place.

A streamed chat completion's last chunk (``choices: []``, ``usage``) goes to the client
only if it asked (``stream_options.include_usage``). An edge that counts every answer's
tokens (the server's access log) has the gateway ask the pipeline for it always; the
gateway then says, in :attr:`~._results.ChatRun.send_usage`, whether the chunk goes out,
and the edge's framing, which reads each chunk's usage anyway, leaves it out otherwise
(a check it already makes per chunk: no stage added to the per-chunk path).
"""

from __future__ import annotations

from typing import Any

__all__ = ["usage_asked"]


def usage_asked(body: dict[str, Any], counted: bool) -> tuple[dict[str, Any], bool]:
    """``body`` as the pipeline is asked it, and whether the usage chunk goes to the
    client. ``counted``: whether the edge counts the tokens (then a stream always asks
    for the chunk); else the body is the client's, and so is the chunk. A malformed
    ``stream_options`` is left for the translation to refuse."""
    stream_options = body.get("stream_options")
    if not counted:
        return body, True
    asked = isinstance(stream_options, dict) and bool(stream_options.get("include_usage"))
    if body.get("stream") is True and (stream_options is None or isinstance(stream_options, dict)):
        body = {**body, "stream_options": {**(stream_options or {}), "include_usage": True}}
    return body, asked
