"""Backpressure from a slow client to the upstream read.

rxgem's transport pushes each body piece through the pipeline as soon as it is read,
and :func:`~rxgem.aiterate` queues what the pipeline emits (up to its bound, then it
holds the transport's :class:`FlowGate`). The streaming response sets its own gate
in :data:`current_gate` in the task that subscribes: ``aiterate`` shares it, and the
upstream task of ``from_gemini`` inherits it and waits at it before each read. The
response holds it while a send to the client is in progress: a send that does not
complete at once is the ASGI server's flow control saying the client is behind
(uvicorn's transport buffer is full). Meanwhile the upstream socket is not read, its
kernel buffer fills, and TCP slows Gemini down. What is buffered per stream is
bounded by about one upstream read (64 KiB) plus the socket buffers.
"""

from __future__ import annotations

from ..transport._flow import FlowGate, current_gate

__all__ = ["FlowGate", "current_gate"]
