"""A blocking consumer on an event loop's thread, of a source that emits on that loop.

``Observable.run()`` and :func:`~rxgem.iterate` block their thread until the stream
ends; a source that runs as a task on that thread's loop (``from_gemini`` without a
sync client, inside ``async`` code or Jupyter) can then never run, and the call would
wait forever. The source asks :func:`refuse_deadlock` before it schedules on a loop,
and the subscription fails at once instead.

Who blocks is known two ways: :func:`~rxgem.iterate` sets :data:`blocking_consumer`
while it subscribes, and ``Observable.run()`` (reactivex's ``run``) subscribes with its
module's own default scheduler, passed down the chain to the source.
"""

from __future__ import annotations

import asyncio
import contextvars
from typing import Final

from reactivex import abc
from reactivex.run import _default_scheduler as _RUN_SCHEDULER  # reactivex's run() mark

__all__ = ["blocking_consumer", "refuse_deadlock"]

blocking_consumer: Final[contextvars.ContextVar[str | None]] = contextvars.ContextVar(
    "rxgem_blocking_consumer", default=None
)
"""The blocking helper subscribing on this thread right now (``"rxgem.iterate()"``)."""


def _on_this_thread(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False


def refuse_deadlock(
    loop: asyncio.AbstractEventLoop, subscribed_with: abc.SchedulerBase | None, source: str
) -> None:
    """Raise ``RuntimeError`` if the subscriber blocks ``loop``'s own thread until the end
    of ``source``, which is about to emit on ``loop``: it would wait forever.

    ``subscribed_with`` is the scheduler given to ``subscribe`` (``Observable.run()``'s own
    default is recognised).
    """
    consumer = "Observable.run()" if subscribed_with is _RUN_SCHEDULER else blocking_consumer.get()
    if consumer is None or not _on_this_thread(loop):
        return
    raise RuntimeError(
        f"{consumer} inside a running event loop would wait forever: {source} emits on"
        " this loop, which the call blocks. In async code (and Jupyter) use"
        " `async for item in rxgem.aiterate(source)` or `await source.pipe(ops.to_list())`;"
        " or give the source a sync httpx.Client (it then runs on a worker thread)"
    )
