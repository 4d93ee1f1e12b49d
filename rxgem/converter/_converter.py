"""The whole translation without Rx: Gemini stream bytes in, OpenAI chunks out.

:class:`Converter` composes the sans-IO cores in plain calls (six for a
``generateContent`` stream, four for an Interactions stream: ``upstream``), in their shape
(:class:`rxgem.core.Core`): ``feed(data)`` returns the chunks that ``data``
completes, ``close()`` the last ones; but ``close()`` raises the error of a failed
stream, carrying what it still owed on the exception, so that code written the
simplest way cannot end a failed stream silently. It is what ``gemini_to_openai()``
runs (which gives the cores' ``close`` back to the operator), and what code that
does not want Rx uses directly (servers, scripts, other async frameworks).

:class:`BaseConverter` is all of it but the last core: the five that both outputs
share (:data:`~rxgem.core.STAGES`, :data:`~rxgem.core.RESPONSES_STAGES`) and the
contract. :class:`Converter` and :class:`~rxgem.converter.ResponsesConverter` add their last
core (``ChunkBuilder``, ``ResponsesBuilder``) and their types.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
from typing import Any, Final, Generic, TypeVar, Unpack

from ..core import (
    ArgsTable,
    ChatCompletionChunk,
    ChunkBuilder,
    FinishBuffer,
    InteractionsParser,
    ResponseParser,
    SlotTable,
    SSEDecoder,
    StepReader,
)
from ..core.pipeline import INTERACTIONS_STAGES, STAGES, PipelineOptions, PipelineSettings
from ..core.slots import Batch
from ._after import After, insert
from ._aiterate import _aiterate
from ._owed import owed, owing

__all__ = ["BaseConverter", "Converter", "CoreConverter"]

_CORES: Final = [stage.core for stage in STAGES]
_SSE: Final = _CORES.index(SSEDecoder)
_PARSER: Final = _CORES.index(ResponseParser)
_SLOTS: Final = _CORES.index(SlotTable)
_ARGS: Final = _CORES.index(ArgsTable)
_FINISH: Final = _CORES.index(FinishBuffer)
_BUILDER: Final = _CORES.index(ChunkBuilder)
_STEP_CORES: Final = [stage.core for stage in INTERACTIONS_STAGES]
_EVENTS: Final = _STEP_CORES.index(InteractionsParser)
_STEPS: Final = _STEP_CORES.index(StepReader)
_STEP_BUILDER: Final = _STEP_CORES.index(ChunkBuilder)
# `BaseConverter.feed` unrolls the stages for speed: each non-batched stage's values are
# iterated, each batched stage's batch is passed on only if not empty (a test checks that
# this still matches `STAGES` and `RESPONSES_STAGES`, which differ only in the last core,
# and the Interactions pipelines, `_feed_steps`). `_end` and `_push` read the stages'
# `batched` flags. With cores of the caller's (`after`), `_feed_all` pushes every value
# through `_push` instead.

_DEFAULT: Final = PipelineSettings({})

Out = TypeVar("Out")
"""What the last core makes: ``ChatCompletionChunk``, or a Responses event."""


class _Failed(Exception):
    """Core ``stage`` raised ``error`` while values were pushed through (slow path only)."""

    def __init__(self, stage: int, error: Exception) -> None:
        self.stage = stage
        self.error = error


class BaseConverter(Generic[Out]):
    """The cores of one stream composed in plain calls, with :class:`Converter`'s contract;
    the last core's ``feed`` (:meth:`_build`) and the options are the subclass's.

    A subclass's ``__init__`` calls :meth:`_start`; ``keep=True`` gives the cores'
    ``close()`` (:class:`CoreConverter`).
    """

    __slots__ = (
        "_args",
        "_batched",
        "_closed",
        "_cores",
        "_error",
        "_events",
        "_finish",
        "_keep",
        "_names",
        "_parser",
        "_slots",
        "_sse",
        "_steps",
    )

    @property
    def interaction_id(self) -> str | None:
        """The id of the Interaction whose stream is read (``interaction.created``'s), once
        it came; ``None`` on the ``generateContent`` upstream."""
        return None if self._steps is None else self._steps.interaction_id

    def _start(
        self, settings: PipelineSettings, *, keep: bool = False, after: After | None = None
    ) -> None:
        """Take fresh cores made with ``settings`` (checked options), and ``after``'s."""
        cores = settings.cores()
        self._cores: tuple[Any, ...] = cores
        self._batched: tuple[bool, ...] = tuple(stage.batched for stage in settings.stages)
        self._names: tuple[str | None, ...] | None = None
        if after:
            self._cores, self._batched, self._names = insert(settings.stages, cores, after)
        self._sse: SSEDecoder = cores[_SSE]
        self._steps: StepReader | None = None
        if settings.reader.steps:
            self._events: InteractionsParser = cores[_EVENTS]
            self._steps = cores[_STEPS]
        else:
            self._parser: ResponseParser = cores[_PARSER]
            self._slots: SlotTable = cores[_SLOTS]
            self._args: ArgsTable = cores[_ARGS]
            self._finish: FinishBuffer = cores[_FINISH]
        self._error: Exception | None = None
        self._closed = False
        self._keep = keep

    def _build(self, batch: Batch) -> list[Out]:
        """The last core's ``feed``: the outputs of one non-empty batch."""
        raise NotImplementedError

    @property
    def error(self) -> Exception | None:
        """The error that ended the stream, once found; every later call raises it."""
        return self._error

    @property
    def done(self) -> bool:
        """Whether the stream is over (``close()`` was called, ``[DONE]`` came, or it failed)."""
        return self._closed

    def feed(self, data: bytes) -> list[Out]:
        """The outputs that ``data`` (the next bytes of the body) completes.

        If ``data`` ends the stream badly after valid outputs, they are returned (pending
        tool calls flushed) and the error is kept for the next call, which the caller
        always makes (``feed`` or ``close``).

        Raises:
            RxGemError: the stream failed with nothing valid left to return.
        """
        if self._closed:
            if self._error is not None:
                raise owing(self._error, [])
            return []
        if self._names is not None:
            return self._feed_all(data)
        if self._steps is not None:
            return self._feed_steps(data, self._steps)
        out: list[Out] = []
        stage = 0
        try:
            for event in self._sse.feed(data):
                stage = _PARSER
                for response in self._parser.feed(event):
                    stage = _SLOTS
                    batch = self._slots.feed(response)
                    if batch:
                        stage = _ARGS
                        batch = self._args.feed(batch)
                        if batch:
                            stage = _FINISH
                            batch = self._finish.feed(batch)
                            if batch:
                                stage = _BUILDER
                                out += self._build(batch)
        except Exception as exc:
            return self._end(stage, exc, out)
        if self._sse.done:  # `data: [DONE]`: the stream is over
            return self._end(0, None, out)
        return out

    def _feed_steps(self, data: bytes, steps: StepReader) -> list[Out]:
        """:meth:`feed` for an Interactions stream: its three cores, then the last."""
        out: list[Out] = []
        stage = 0
        try:
            for event in self._sse.feed(data):
                stage = _EVENTS
                for typed in self._events.feed(event):
                    stage = _STEPS
                    batch = steps.feed(typed)
                    if batch:
                        stage = _STEP_BUILDER
                        out += self._build(batch)
        except Exception as exc:
            return self._end(stage, exc, out)
        if self._sse.done:
            return self._end(0, None, out)
        return out

    def _feed_all(self, data: bytes) -> list[Out]:
        """:meth:`feed` with cores of the caller's: each value pushed through every core."""
        out: list[Out] = []
        try:
            events = self._sse.feed(data)
        except Exception as exc:
            return self._end(0, exc, out)
        try:
            for event in events:
                self._push(1, event, out)
        except _Failed as failed:
            return self._end(failed.stage, failed.error, out)
        if self._sse.done:
            return self._end(0, None, out)
        return out

    def _named(self, stage: int, error: Exception) -> Exception:
        """``error``, with a note naming core ``stage`` if it is the caller's (once), as
        :func:`~rxgem.operators.core_operator`'s operators note it."""
        names = self._names
        if names is not None and names[stage] is not None:
            note = f"raised by the {names[stage]} operator"
            if note not in getattr(error, "__notes__", ()):
                error.add_note(note)
        return error

    def close(self, error: Exception | None = None) -> list[Out]:
        """The end of the body: the last outputs (tool calls, finishes, usage).

        With ``error`` (the body was cut off by it, e.g. a transport error): the
        outputs owed before it (pending tool calls); never raises.

        Raises:
            RxGemError: the stream failed (truncated, not a Gemini stream, an error
                object), now or in an earlier call. The outputs this call still owed
                are on the exception's ``chunks`` (empty if none): deliver them, then
                handle the error. (Made with ``keep``: returned, the error kept in
                :attr:`error`.)
        """
        try:
            if self._closed:
                if self._error is not None and error is None:
                    raise owing(self._error, [])
                return []
            return self._end(0, error, [], external=error is not None, carry=True)
        except Exception as failed:
            if not self._keep or failed is not self._error:
                raise
            return owed(failed)

    def _end(
        self,
        stage: int,
        error: Exception | None,
        out: list[Out],
        *,
        external: bool = False,
        carry: bool = False,
    ) -> list[Out]:
        """Close the cores from ``stage`` on (with ``error``), their outputs pushed on.

        The stream's own error is kept (:attr:`error`) and raised when nothing is left
        to return, or with ``carry`` (``close``: what is left rides on the error);
        else the next call raises it. An ``external`` error (given to ``close``) is
        the caller's.
        """
        self._closed = True
        cores = self._cores
        while stage < len(cores):
            core = cores[stage]
            try:
                values = core.close(error)
                if self._batched[stage]:
                    values = [values] if values else []
                for value in values:
                    self._push(stage + 1, value, out)
                if error is None and core.error is not None:
                    error = self._named(stage, core.error)
                stage += 1
            except _Failed as failed:
                error, stage = failed.error, failed.stage
            except Exception as exc:  # close() found the stream bad (close(error) never raises)
                error, stage = error or self._named(stage, exc), stage + 1
        if error is not None and not external:
            self._error = error
            if carry or not out:
                raise owing(error, out)
        return out

    def _push(self, stage: int, value: Any, out: list[Out]) -> None:
        """Feed ``value`` to core ``stage`` and what it returns on to the end."""
        if stage == len(self._cores):
            out.append(value)
            return
        try:
            values = self._cores[stage].feed(value)
        except Exception as exc:
            raise _Failed(stage, self._named(stage, exc)) from None
        if self._batched[stage]:
            values = [values] if values else []
        for result in values:
            self._push(stage + 1, result, out)

    def iterate(self, body: Iterable[bytes]) -> Iterator[Out]:
        """Every output of ``body``'s bytes; raises the stream's error after the valid ones.

        If reading ``body`` raises, the outputs owed before that error (pending tool
        calls) are yielded first, then the error propagates.
        """
        pieces = iter(body)
        while not self._closed:
            try:
                data = next(pieces)
            except StopIteration:
                break
            except Exception as exc:
                yield from self.close(exc)
                raise
            yield from self.feed(data)
        try:
            last = self.close()
        except Exception as error:
            yield from owed(error)
            raise
        yield from last
        if self._error is not None:  # kept, not raised, by a `keep` converter's close
            raise self._error

    def aiterate(self, body: AsyncIterable[bytes]) -> AsyncIterator[Out]:
        """:meth:`iterate` for an async byte stream (``httpx.Response.aiter_bytes()``)."""
        return _aiterate(self, body)


class Converter(BaseConverter[ChatCompletionChunk]):
    """Gemini ``streamGenerateContent`` body bytes → OpenAI ``chat.completion.chunk`` objects.

    .. code::

        converter = rxgem.Converter(model="gemini-2.5-flash")
        try:
            for data in body:                   # bytes, split anywhere
                send(converter.feed(data))
            send(converter.close())             # raises if the stream failed...
        except rxgem.RxGemError as error:
            send(error.chunks)                  # ...with the chunks it still owed
            raise

    Takes the options of :func:`~rxgem.gemini_to_openai` (:class:`PipelineOptions`) and
    gives the same chunks as the operators; ``upstream="interactions"`` reads the body
    of an Interactions stream instead (``POST /v1beta/interactions``, streamed). Nothing
    valid is lost and no error can be walked past: :meth:`close` raises the error of a
    failed stream, carrying on the exception's ``chunks`` what it still owed (the tool
    calls of a truncated stream, say). :meth:`feed` returns what ``data`` completes; if
    ``data`` also ends the stream badly, the error is kept (:attr:`error` shows it) and
    the next call, ``feed`` or ``close``, raises it (at once when there is nothing to
    return). Every call after a failure raises it again. :meth:`iterate` and
    :meth:`aiterate` run a whole body: every valid chunk, then the error. ``data:
    [DONE]`` ends the stream (the last chunks come with it; later input is ignored).

    ``after={"flush_on_finish": Redactor}`` runs cores of your own (classes or zero-argument
    factories, a sequence for several, one fresh core each per converter) on the outputs
    of the stage named (any stage of the pipeline but the last, :func:`pipeline_stages
    <rxgem.operators.pipeline_stages>`' names), as that place in the Rx pipeline would:
    batched exactly when that stage is, their ``close()`` outputs through the later cores,
    an error they raise noted ``raised by the Redactor operator``. Without it, the cores
    run unrolled, as fast as ever.

    Raises:
        TypeError, ValueError: at construction, for an unknown or bad option.
    """

    __slots__ = ("_builder",)

    def __init__(self, *, after: After | None = None, **options: Unpack[PipelineOptions]) -> None:
        self._start(PipelineSettings(options) if options else _DEFAULT, after=after)

    def _start(
        self, settings: PipelineSettings, *, keep: bool = False, after: After | None = None
    ) -> None:
        super()._start(settings, keep=keep, after=after)
        self._builder: ChunkBuilder = self._cores[-1]

    def _build(self, batch: Batch) -> list[ChatCompletionChunk]:
        return self._builder.feed(batch)


class CoreConverter(Converter):
    """A :class:`Converter` with the cores' ``close()`` (:class:`rxgem.core.Core`),
    for runners of cores such as ``gemini_to_openai``'s operator.

    ``close()`` on a failed stream returns the chunks it still owed and keeps the
    error in :attr:`error` (the next call raises it), instead of raising it with them.
    Made from options checked beforehand, once for all its streams.
    """

    __slots__ = ()

    def __init__(self, settings: PipelineSettings) -> None:
        self._start(settings, keep=True)
