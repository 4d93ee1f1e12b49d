"""The recording: :class:`Recorder` and its ``tap`` operators, :class:`Emission`."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeAlias, TypeVar

from reactivex import Observable, abc
from reactivex.scheduler import VirtualTimeScheduler

from ._labeller import default_labeller
from ._render import Diagram

__all__ = ["Emission", "Kind", "Recorder", "XMode"]

T = TypeVar("T")

Kind: TypeAlias = Literal["next", "error", "completed"]
"""What an :class:`Emission` records: a value, an error or the completion."""

XMode: TypeAlias = Literal["auto", "order", "time"]
"""What a diagram's x axis shows: ``"time"``, ``"order"`` of emissions, or ``"auto"``
(time for virtual time and for recordings of 50 ms or more, order otherwise)."""

_AUTO_TIME_SPAN = 0.05  # seconds of wall time from which x="auto" means time


@dataclass(frozen=True)
class Emission:
    """One recorded notification.

    Attributes:
        seq: its position among all the recorder's emissions (0, 1, 2…).
        stage: the lane (the name given to ``tap``).
        kind: ``"next"``, ``"error"`` or ``"completed"``.
        time: virtual time (ticks), or seconds since the recorder's first emission.
        value: the value (``next``), the exception (``error``), ``None`` (``completed``).
        cause: the ``seq`` of the emission it is linked to in the lane above (the
            latest one recorded before it), ``None`` for the first lane.
    """

    seq: int
    stage: str
    kind: Kind
    time: float
    value: Any
    cause: int | None


class Recorder:
    """Records what taps see; shows itself as a marble diagram.

    Args:
        clock: a ``VirtualTimeScheduler`` such as ``TestScheduler`` (virtual time,
            in ticks), another scheduler (its ``now``, in seconds since the first
            emission), a function returning seconds, or ``None`` for
            ``time.perf_counter`` (seconds since the first emission).
        title: the diagram's title.

    Lanes are ordered by the first ``tap(stage)`` call for each name. The recorder
    is thread-safe; several subscriptions may share it (their emissions interleave
    in the same lanes).
    """

    def __init__(
        self,
        clock: abc.SchedulerBase | Callable[[], float] | None = None,
        *,
        title: str | None = None,
    ) -> None:
        self.title = title
        self._lock = threading.Lock()
        self._stages: list[str] = []
        self._emissions: list[Emission] = []
        self._last: dict[str, int] = {}
        self._origin: float | None = None
        self._virtual = isinstance(clock, VirtualTimeScheduler)
        self._now: Callable[[], float]
        if isinstance(clock, VirtualTimeScheduler):
            self._now = _virtual_clock(clock)
            self._relative = False
        elif isinstance(clock, abc.SchedulerBase):
            scheduler = clock
            self._now = lambda: scheduler.now.timestamp()
            self._relative = True
        elif clock is None:
            self._now = time.perf_counter
            self._relative = True
        else:
            self._now = clock
            self._relative = False

    # -- recording

    def tap(self, stage: str) -> Callable[[Observable[T]], Observable[T]]:
        """An operator that records every notification under ``stage`` and passes it on.

        .. code::

            ---a---b---|
            [ tap("x") ]
            ---a---b---|     (and lane "x" of the recorder gets a, b and |)
        """
        with self._lock:
            if stage not in self._stages:
                self._stages.append(stage)

        def operator(source: Observable[T]) -> Observable[T]:
            def subscribe(
                observer: abc.ObserverBase[T], scheduler: abc.SchedulerBase | None = None
            ) -> abc.DisposableBase:
                def on_next(value: T) -> None:
                    self._record(stage, "next", value)
                    observer.on_next(value)

                def on_error(error: Exception) -> None:
                    self._record(stage, "error", error)
                    observer.on_error(error)

                def on_completed() -> None:
                    self._record(stage, "completed", None)
                    observer.on_completed()

                return source.subscribe(on_next, on_error, on_completed, scheduler=scheduler)

            return Observable(subscribe)

        return operator

    def _record(self, stage: str, kind: Kind, value: Any) -> None:
        with self._lock:
            now = self._now()
            if self._relative:
                if self._origin is None:
                    self._origin = now
                now -= self._origin
            lane = self._stages.index(stage)
            cause = self._last.get(self._stages[lane - 1]) if lane else None
            seq = len(self._emissions)
            self._emissions.append(Emission(seq, stage, kind, now, value, cause))
            self._last[stage] = seq

    # -- reading

    @property
    def stages(self) -> list[str]:
        """The lanes, in order."""
        with self._lock:
            return list(self._stages)

    @property
    def emissions(self) -> list[Emission]:
        """Every recorded notification, in the order they happened."""
        with self._lock:
            return list(self._emissions)

    @property
    def virtual(self) -> bool:
        """Whether times are virtual ticks (else seconds)."""
        return self._virtual

    def values(self, stage: str) -> list[Any]:
        """The values ``stage`` emitted, in order."""
        return [e.value for e in self.emissions if e.stage == stage and e.kind == "next"]

    def error(self, stage: str | None = None) -> BaseException | None:
        """The error ``stage`` (or, by default, the last lane) ended with, if any."""
        emissions = self.emissions
        lanes = self.stages
        wanted = stage if stage is not None else (lanes[-1] if lanes else None)
        for emission in emissions:
            if emission.stage == wanted and emission.kind == "error":
                error: BaseException = emission.value
                return error
        return None

    def diagram(
        self,
        *,
        x: XMode = "auto",
        stages: Sequence[str] | None = None,
        title: str | None = None,
        links: bool = True,
        label: Callable[[Any], str] | None = None,
        label_width: int = 24,
    ) -> Diagram:
        """A snapshot of the recording as a :class:`Diagram`.

        Args:
            x: ``"time"``, ``"order"`` or ``"auto"`` (see :data:`XMode` and :mod:`rxgem.viz`).
            stages: the lanes to show, in this order (default: all). A link to a
                hidden lane follows that lane's own link upwards.
            title: default: the recorder's title.
            links: draw the lines from inputs to the outputs they caused.
            label: the short text of a marble (default: :data:`rxgem.viz.label`, a few
                words per value); a :class:`~rxgem.viz.Labeller` also gives the
                descriptions and the colours.
            label_width: the most characters of a label a marble shows (wide ones count
                two): a longer label is cut with ``…``, whole in the marble's hover text.
        """
        with self._lock:
            emissions = list(self._emissions)
            lanes = list(self._stages)
        if stages is not None:
            unknown = [s for s in stages if s not in lanes]
            if unknown:
                raise ValueError(f"no lane named {unknown[0]!r}; lanes: {', '.join(lanes)}")
            lanes = list(stages)
        if x == "auto":
            times = [e.time for e in emissions]
            span = max(times) - min(times) if times else 0.0
            timed = span > 0 if self._virtual else span >= _AUTO_TIME_SPAN
            x = "time" if timed else "order"
        return Diagram(
            emissions,
            lanes,
            x=x,
            unit="ticks" if self._virtual else "s",
            title=self.title if title is None else title,
            links=links,
            label=label or default_labeller,
            label_width=label_width,
        )

    def __str__(self) -> str:
        return self.diagram().to_text()

    def __repr__(self) -> str:
        return f"<Recorder lanes={self.stages} emissions={len(self.emissions)}>"

    def _repr_svg_(self) -> str:
        return self.diagram().to_svg()

    def _repr_html_(self) -> str:
        return self.diagram().to_html()

    def save(self, path: str | Path, **options: Any) -> Path:
        """``self.diagram(**options).save(path)``."""
        return self.diagram(**options).save(path)


def _virtual_clock(scheduler: VirtualTimeScheduler) -> Callable[[], float]:
    def now() -> float:
        clock = scheduler.clock
        return clock.timestamp() if hasattr(clock, "timestamp") else float(clock)

    return now
