"""The Responses translation without Rx: Gemini stream bytes in, Responses events out.

:class:`ResponsesConverter` is :class:`~rxgem.Converter` with the Responses output as its
last core (:data:`~rxgem.core.RESPONSES_STAGES`): the same five cores, then
``ResponsesBuilder``, with the same contract (``feed``, ``close`` raising a failed
stream's error with what it still owed on the error's ``chunks``, ``iterate``,
``aiterate``). It is its own class rather than a parameter of ``Converter``, so that
each is typed exactly and ``Converter``'s compiled path stays as it is.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
from typing import Any, Final, Unpack

from ..core import (
    RESPONSES_STAGES,
    ArgsTable,
    CarriedSignature,
    FinishBuffer,
    PipelineSettings,
    Response,
    ResponseParser,
    ResponsesBuilder,
    ResponsesEvent,
    ResponsesPipelineOptions,
    SlotTable,
    SSEDecoder,
)
from ._owed import owed, owing

__all__ = ["CoreResponsesConverter", "ResponsesConverter"]

_BATCHED: Final = tuple(stage.batched for stage in RESPONSES_STAGES)
_DEFAULT: Final = PipelineSettings({}, RESPONSES_STAGES)


class _Failed(Exception):
    """Core ``stage`` raised ``error`` while values were pushed through."""

    def __init__(self, stage: int, error: Exception) -> None:
        self.stage = stage
        self.error = error


class ResponsesConverter:
    """Gemini ``streamGenerateContent`` body bytes → OpenAI Responses streaming events.

    .. code::

        converter = rxgem.ResponsesConverter(model="gemini-2.5-flash")
        try:
            for data in body:                   # bytes, split anywhere
                send(converter.feed(data))
            send(converter.close())             # raises if the stream failed...
        except rxgem.RxGemError as error:
            send(error.chunks)                  # ...with the events it still owed
            raise

    Takes the options of :func:`~rxgem.gemini_to_responses`
    (:class:`~rxgem.core.ResponsesPipelineOptions`) and gives the same events as the
    operators, with :class:`~rxgem.Converter`'s rules: nothing valid is lost (a failed
    stream's events end with ``response.failed``, carried on the error), and no error
    can be walked past. :attr:`response` is the final response once the stream ended;
    :attr:`signatures` Gemini's thought signatures, for a server to keep.

    Raises:
        TypeError, ValueError: at construction, for an unknown or bad option.
    """

    __slots__ = ("_builder", "_closed", "_cores", "_error", "_sse")

    def __init__(self, **options: Unpack[ResponsesPipelineOptions]) -> None:
        self._start(PipelineSettings(options, RESPONSES_STAGES) if options else _DEFAULT)

    def _start(self, settings: PipelineSettings) -> None:
        cores = settings.cores()
        self._cores: tuple[Any, ...] = cores
        self._sse: SSEDecoder = cores[0]
        self._builder: ResponsesBuilder = cores[-1]
        self._error: Exception | None = None
        self._closed = False

    @property
    def error(self) -> Exception | None:
        """The error that ended the stream, once found; every later call raises it."""
        return self._error

    @property
    def done(self) -> bool:
        """Whether the stream is over (``close()`` was called, ``[DONE]`` came, or it failed)."""
        return self._closed

    @property
    def response(self) -> Response | None:
        """The final ``response`` (the terminal event's) once the stream ended, else ``None``."""
        return self._builder.response

    @property
    def signatures(self) -> list[CarriedSignature]:
        """Gemini's thought signatures so far, shown to the client or not (for a store)."""
        return self._builder.signatures

    def feed(self, data: bytes) -> list[ResponsesEvent]:
        """The events that ``data`` (the next bytes of the body) completes.

        Raises:
            RxGemError: the stream failed with nothing valid left to return.
        """
        if self._closed:
            if self._error is not None:
                raise owing(self._error, [])
            return []
        out: list[ResponsesEvent] = []
        stage = 0
        cores = self._cores
        parser: ResponseParser = cores[1]
        slots: SlotTable = cores[2]
        args: ArgsTable = cores[3]
        finish: FinishBuffer = cores[4]
        builder = self._builder
        try:
            for event in self._sse.feed(data):
                stage = 1
                for response in parser.feed(event):
                    stage = 2
                    batch = slots.feed(response)
                    if batch:
                        stage = 3
                        batch = args.feed(batch)
                        if batch:
                            stage = 4
                            batch = finish.feed(batch)
                            if batch:
                                stage = 5
                                out += builder.feed(batch)
        except Exception as exc:
            return self._end(stage, exc, out)
        if self._sse.done:  # `data: [DONE]`: the stream is over
            return self._end(0, None, out)
        return out

    def close(self, error: Exception | None = None) -> list[ResponsesEvent]:
        """The end of the body: the last items and the response's terminal event.

        With ``error`` (the body was cut off by it): the events owed before it, ending
        with ``response.failed``; never raises.

        Raises:
            RxGemError: the stream failed, now or in an earlier call; the events this
                call still owed (ending with ``response.failed``) are on the
                exception's ``chunks``.
        """
        if self._closed:
            if self._error is not None and error is None:
                raise owing(self._error, [])
            return []
        return self._end(0, error, [], external=error is not None, carry=True)

    def _end(
        self,
        stage: int,
        error: Exception | None,
        out: list[ResponsesEvent],
        *,
        external: bool = False,
        carry: bool = False,
    ) -> list[ResponsesEvent]:
        """Close the cores from ``stage`` on (with ``error``), their outputs pushed on;
        as :meth:`rxgem.Converter._end`."""
        self._closed = True
        cores = self._cores
        while stage < len(cores):
            core = cores[stage]
            try:
                values = core.close(error)
                if _BATCHED[stage]:
                    values = [values] if values else []
                for value in values:
                    self._push(stage + 1, value, out)
                if error is None and core.error is not None:
                    error = core.error
                stage += 1
            except _Failed as failed:
                error, stage = failed.error, failed.stage
            except Exception as exc:
                error, stage = error or exc, stage + 1
        if error is not None and not external:
            self._error = error
            if carry or not out:
                raise owing(error, out)  # type: ignore[arg-type]
        return out

    def _push(self, stage: int, value: Any, out: list[ResponsesEvent]) -> None:
        if stage == len(self._cores):
            out.append(value)
            return
        try:
            values = self._cores[stage].feed(value)
        except Exception as exc:
            raise _Failed(stage, exc) from None
        if _BATCHED[stage]:
            values = [values] if values else []
        for result in values:
            self._push(stage + 1, result, out)

    def iterate(self, body: Iterable[bytes]) -> Iterator[ResponsesEvent]:
        """Every event of ``body``'s bytes; raises the stream's error after the valid ones."""
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
            yield from owed(error)  # type: ignore[misc]
            raise
        yield from last
        if self._error is not None:  # kept, not raised, by CoreResponsesConverter.close
            raise self._error

    async def aiterate(self, body: AsyncIterable[bytes]) -> AsyncIterator[ResponsesEvent]:
        """:meth:`iterate` for an async byte stream (``httpx.Response.aiter_bytes()``)."""
        pieces = aiter(body)
        while not self._closed:
            try:
                data = await anext(pieces)
            except StopAsyncIteration:
                break
            except Exception as exc:
                for event in self.close(exc):
                    yield event
                raise
            for event in self.feed(data):
                yield event
        try:
            last = self.close()
        except Exception as error:
            owed_events: list[Any] = owed(error)
            for event in owed_events:
                yield event
            raise
        for event in last:
            yield event
        if self._error is not None:
            raise self._error


class CoreResponsesConverter(ResponsesConverter):
    """A :class:`ResponsesConverter` with the cores' ``close()``, for the operator
    (``gemini_to_responses``): a failed stream's owed events are returned and the error
    kept in :attr:`error`. Made from options checked beforehand."""

    def __init__(self, settings: PipelineSettings) -> None:
        self._start(settings)

    def close(self, error: Exception | None = None) -> list[ResponsesEvent]:
        try:
            return super().close(error)
        except Exception as failed:
            if failed is not self._error:
                raise
            return owed(failed)  # type: ignore[return-value]
