"""Bridges for code that does not want Rx (a blocking iterator and an async iterator),
and the flow gate that lets a slow consumer hold back the transport's reads.

Both iterators subscribe lazily (at the first item requested) and dispose of the
subscription as soon as the consumer stops: at the end, on an error, on
``close()``/``aclose()``, when a ``with``/``async with`` block exits, or when the
iterator is dropped (``break`` out of a ``for`` loop), so a stream from
``from_gemini`` closes its HTTP connection right away.

Both hold at most about :data:`MAX_BUFFERED` items for a consumer slower than the
source, by pushing back on the producer once that many wait, until the consumer is
down to :data:`~rxgem.bridge._gate.RESUME_AT`:

- a producer on another thread (``from_gemini``'s worker thread with an
  ``httpx.Client``) is blocked inside ``on_next`` at a
  :class:`~rxgem.bridge._gate.ThreadGate`, so it reads no more of the body;
- :func:`aiterate` holds the :class:`FlowGate` it set in :data:`current_gate` for
  the subscription, so ``from_gemini``'s task with an ``httpx.AsyncClient`` waits
  before its next read. The items of the read in progress still arrive: the bound
  is exceeded by what one read (at most 64 KiB) decodes to.

A source that emits on the consumer's own thread (``reactivex.from_iterable``
during ``iterate``'s subscription, any source on ``aiterate``'s loop other than
``from_gemini``) cannot be made to wait without deadlocking, and its items are
already in memory: they are queued whatever their number.

Either blocking consumer (``Observable.run()``, :func:`iterate`) on an event loop's
thread, of a source that would emit on that loop, would wait forever: the transport's
sources ask :func:`refuse_deadlock` first and fail at once, naming :func:`aiterate`.

The modules: ``_gate`` (the two gates and the bound), ``_base`` (what both
iterators share), ``_iterate``, ``_aiterate`` and ``_blocking``. This package imports nothing of
rxgem and no HTTP library: the transport imports it (to wait at the gate), not the
reverse.
"""

from typing import Any

from ._aiterate import aiterate
from ._iterate import iterate

# Not in `__all__`: what other rxgem packages import from this face (they import
# through faces, never private modules).
# isort: off
from ._blocking import refuse_deadlock as refuse_deadlock
from ._gate import FlowGate as FlowGate, current_gate as current_gate
# isort: on

__all__ = [
    "aiterate",
    "iterate",
]


_RETIRED = {
    "MAX_BUFFERED": "._gate",
    "blocking_consumer": "._blocking",
}
"""Names that left the public surface (CHANGELOG.md): still found here, with a warning, for
one release."""


def __getattr__(name: str) -> Any:
    if name in _RETIRED:
        import importlib
        import warnings

        warnings.warn(
            f"rxgem.bridge.{name} is deprecated: it leaves rxgem's public names"
            " in the next release (see CHANGELOG.md)",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module(_RETIRED[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
