"""The inspector's diagrams: an exchange's response replayed through its route's stages.

Imported only by a server with the inspector on (it loads :mod:`rxgem.viz`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from reactivex import Observable, abc
from reactivex.disposable import CompositeDisposable
from reactivex.testing import TestScheduler

from ...gateway import Gateway
from ...viz import Recorder
from ..capture import Kept

__all__ = ["draw"]


def draw(kept: Kept, options: dict[str, Any]) -> str:
    """The marble diagram (SVG) of the exchange's response bytes so far, replayed
    through the stages of its route (``options``: the server's pipeline options).

    Of its first :data:`~rxgem.server._inspector.DRAWN_PIECES` pieces only (the spool
    keeps where those end): a diagram's cost grows with its marbles, and one past that
    many is more than a page shows (the download has them all). The bytes are the
    spool's, redacted joined."""
    header = kept.header
    pieces = [piece for piece in kept.pieces() if piece]
    if not pieces or header["status"] != 200:
        return ""
    made: dict[str, Any] = {**options, "id_factory": lambda: "inspected", "clock": lambda: 0.0}
    stages = Gateway.stages(header["route"].startswith("/v1/responses"), made)
    scheduler = TestScheduler()
    end = (len(pieces) + 1) * 10
    complete = header["drawn_whole"]

    def subscribe(
        observer: abc.ObserverBase[bytes], _: abc.SchedulerBase | None = None
    ) -> abc.DisposableBase:
        def emit(piece: bytes) -> Callable[[abc.SchedulerBase, Any], None]:
            return lambda _scheduler, _state: observer.on_next(piece)

        handles = [
            scheduler.schedule_absolute((i + 1) * 10, emit(piece)) for i, piece in enumerate(pieces)
        ]
        if complete:
            handles.append(scheduler.schedule_absolute(end, lambda _s, _t: observer.on_completed()))
        return CompositeDisposable(handles)

    recorder = Recorder(scheduler)
    stream: Observable[Any] = Observable(subscribe).pipe(recorder.tap("bytes"))
    for name, operator in stages:
        stream = stream.pipe(operator, recorder.tap(name))
    stream.subscribe(on_error=lambda _: None, scheduler=scheduler)
    scheduler.start()
    return recorder.diagram(x="order").to_svg()
