"""Running a chain of named operators with a tap after each: :func:`trace`,
:func:`atrace`, and replays of Gemini bytes on virtual time."""

from __future__ import annotations

import asyncio
import itertools
import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeAlias

from reactivex import Observable, abc
from reactivex.disposable import CompositeDisposable
from reactivex.scheduler import VirtualTimeScheduler
from reactivex.scheduler.eventloop import AsyncIOScheduler

from .. import samples
from ..core.pipeline import reader_of
from ..operators import NamedOperator, pipeline_stages
from ._record import Recorder, XMode
from ._render import Diagram

__all__ = ["Stage", "atrace", "fixed_stages", "tour", "trace", "trace_bytes", "trace_sample"]

Stage: TypeAlias = NamedOperator
"""A stage to trace: an operator and the lane it is recorded under,
``("parse", rxgem.operators.parse())``; the same type as
:data:`rxgem.operators.NamedOperator` (what :func:`pipeline_stages` returns)."""


def _chain(
    recorder: Recorder, source: Observable[Any], stages: Sequence[Stage], source_name: str | None
) -> Observable[Any]:
    stream = source.pipe(recorder.tap(source_name)) if source_name is not None else source
    for name, operator in stages:
        stream = stream.pipe(operator, recorder.tap(name))
    return stream


def trace(
    source: Observable[Any],
    stages: Sequence[Stage],
    *,
    scheduler: abc.SchedulerBase | None = None,
    source_name: str | None = "source",
    title: str | None = None,
    timeout: float | None = 60.0,
) -> Recorder:
    """Run ``source`` through ``stages`` with a tap after each, and return the recording.

    .. code::

        rec = trace(reactivex.from_iterable(pieces), pipeline_stages(), source_name="bytes")

    With a ``VirtualTimeScheduler`` (e.g. ``TestScheduler``), the chain is subscribed
    on it and the scheduler is run until it has nothing left to do; times are
    virtual. Otherwise the chain is subscribed on the calling thread and this waits
    (up to ``timeout`` seconds) for it to end. Errors are recorded, not raised.
    Inside a running event loop (Jupyter), use ``await atrace(...)`` for a source
    that emits on the loop.
    """
    recorder = Recorder(scheduler, title=title)
    stream = _chain(recorder, source, stages, source_name)
    ended = threading.Event()

    def on_error(_: Exception) -> None:
        ended.set()

    subscription = stream.subscribe(on_error=on_error, on_completed=ended.set, scheduler=scheduler)
    if isinstance(scheduler, VirtualTimeScheduler):
        VirtualTimeScheduler.start(scheduler)
    if ended.is_set():
        return recorder
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        subscription.dispose()
        raise RuntimeError(
            "the source did not end synchronously inside a running event loop:"
            " use `await rxgem.viz.atrace(...)`"
        )
    if not ended.wait(timeout):
        subscription.dispose()
        raise TimeoutError(f"the traced stream did not end within {timeout} s")
    return recorder


async def atrace(
    source: Observable[Any],
    stages: Sequence[Stage],
    *,
    source_name: str | None = "source",
    title: str | None = None,
) -> Recorder:
    """:func:`trace` for ``async`` code and Jupyter: subscribes on the running loop.

    .. code::

        rec = await atrace(rxgem.from_gemini(request, model=m, client=aclient), pipeline_stages())

    Times are wall time. Cancelling the call disposes of the subscription.
    """
    loop = asyncio.get_running_loop()
    recorder = Recorder(title=title)
    stream = _chain(recorder, source, stages, source_name)
    ended: asyncio.Future[None] = loop.create_future()

    def end() -> None:
        def settle() -> None:
            if not ended.done():
                ended.set_result(None)

        try:
            on_loop = asyncio.get_running_loop() is loop
        except RuntimeError:
            on_loop = False
        if on_loop:
            settle()
        elif not loop.is_closed():
            loop.call_soon_threadsafe(settle)

    def on_error(_: Exception) -> None:
        end()

    subscription = stream.subscribe(
        on_error=on_error, on_completed=end, scheduler=AsyncIOScheduler(loop)
    )
    try:
        await ended
    finally:
        subscription.dispose()
    return recorder


def _counter_ids() -> Callable[[], str]:
    numbers = itertools.count(1)
    return lambda: f"{next(numbers):024d}"


def _stock_or_own(stages: Sequence[Stage] | None, options: dict[str, Any]) -> list[Stage]:
    if stages is None:
        return fixed_stages(**options)
    if options:
        raise TypeError(
            f"options ({', '.join(sorted(options))}) go to pipeline_stages: with stages=,"
            " give them to the viz.pipeline_stages(...) your stages come from"
        )
    return list(stages)


def fixed_stages(**options: Any) -> list[Stage]:
    """:func:`pipeline_stages` with counter ids (``000…001``) and ``created`` 0 unless
    ``options`` say otherwise: the same recording on every run, as :func:`trace_bytes`
    draws by default. Put your own stages among them and pass them as ``stages=``.

    .. code::

        stages = viz.fixed_stages()
        stages.insert(-1, ("redact", redact()))   # lane "redact" before to_openai
        viz.trace_sample("thinking_tools", stages=stages)
    """
    options.setdefault("id_factory", _counter_ids())
    options.setdefault("clock", lambda: 0.0)
    return pipeline_stages(**options)


def trace_bytes(
    pieces: Sequence[bytes],
    *,
    interval: int = 10,
    title: str | None = None,
    stages: Sequence[Stage] | None = None,
    **options: Any,
) -> Recorder:
    """Replay Gemini body bytes through :func:`pipeline_stages` on virtual time.

    Piece ``i`` arrives at tick ``(i + 1) * interval`` of a fresh ``TestScheduler``,
    and the body ends ``interval`` ticks after the last one. ``options`` go to
    :func:`pipeline_stages` (``upstream="interactions"``: an Interactions stream's bytes,
    through ``parse_interactions`` and ``read_steps``); by default ids are counters
    (``000…001``) and ``created`` is 0, so the recording is the same on every run.

    ``stages`` replaces the stock stages, as in :func:`trace`: a list of ``(name,
    operator)`` drawn one lane each, typically :func:`fixed_stages` (or
    :func:`pipeline_stages`) with operators of your own inserted between them. The
    pipeline's ``options`` then go to the function your stages come from, not here.
    """
    chain = _stock_or_own(stages, options)
    # reactivex.testing only here: importing rxgem.viz need not load it
    from reactivex.testing import TestScheduler

    scheduler = TestScheduler()
    end = (len(pieces) + 1) * interval

    def subscribe(
        observer: abc.ObserverBase[bytes], _: abc.SchedulerBase | None = None
    ) -> abc.DisposableBase:
        def emit(piece: bytes) -> Callable[[abc.SchedulerBase, Any], None]:
            return lambda _scheduler, _state: observer.on_next(piece)

        handles = [
            scheduler.schedule_absolute((i + 1) * interval, emit(piece))
            for i, piece in enumerate(pieces)
        ]
        handles.append(
            scheduler.schedule_absolute(end, lambda _scheduler, _state: observer.on_completed())
        )
        return CompositeDisposable(handles)

    source: Observable[bytes] = Observable(subscribe)
    return trace(
        source,
        chain,
        scheduler=scheduler,
        source_name="bytes",
        title=title,
    )


def trace_sample(
    name: str = "thinking_tools",
    *,
    piece_size: int = 2048,
    interval: int = 10,
    title: str | None = None,
    stages: Sequence[Stage] | None = None,
    **options: Any,
) -> Recorder:
    """Replay a shipped sample (``rxgem.samples``) cut into ``piece_size`` pieces.

    See :func:`trace_bytes` (``stages=`` too); the default title names the sample and
    its pieces. A sample whose expectation names an ``api`` (a Vertex stream with
    integer enums) is read with it unless ``api`` is given (with ``stages=``, give it
    to the stages' function: ``fixed_stages(api="vertex")``).
    """
    data = samples.read(name)
    file = name if name.endswith(".sse") else f"{name}.sse"
    if stages is None and reader_of(options.get("upstream", "generate-content")).takes("api"):
        options.setdefault("api", samples.expected().get(file, {}).get("api", "gemini"))
    pieces = [data[i : i + piece_size] for i in range(0, len(data), piece_size)]
    if title is None:
        title = f"{name.removesuffix('.sse')}: {len(data)} bytes in {len(pieces)} pieces"
    return trace_bytes(pieces, interval=interval, title=title, stages=stages, **options)


def tour(*, x: XMode = "order") -> Diagram:
    """The README's diagram: the main sample through every stage (``docs/tour.svg``)."""
    recorder = trace_sample("thinking_tools", model="gemini-2.5-flash")
    return recorder.diagram(x=x)
