"""The whole translation without Rx: Gemini stream bytes in, OpenAI chunks out.

:class:`Converter` composes the six sans-IO cores in plain calls and is a core
itself (:mod:`rxgem.core._protocol`): ``feed(data)`` returns the chunks that
``data`` completes, ``close()`` the last ones. It is what ``gemini_to_openai()``
runs, and what code that does not want Rx uses directly (servers, scripts, other
async frameworks).
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
from typing import Any, Final, Unpack

from ..core import (
    STAGES,
    ArgsTable,
    ChatCompletionChunk,
    ChunkBuilder,
    FinishBuffer,
    PipelineOptions,
    PipelineSettings,
    ResponseParser,
    SlotTable,
    SSEDecoder,
)
from ._aiterate import _aiterate

__all__ = ["Converter"]

_CORES: Final = [stage.core for stage in STAGES]
_SSE: Final = _CORES.index(SSEDecoder)
_PARSER: Final = _CORES.index(ResponseParser)
_SLOTS: Final = _CORES.index(SlotTable)
_ARGS: Final = _CORES.index(ArgsTable)
_FINISH: Final = _CORES.index(FinishBuffer)
_BUILDER: Final = _CORES.index(ChunkBuilder)
# `Converter.feed` unrolls the stages for speed: each non-batched stage's values are
# iterated, each batched stage's batch is passed on only if not empty (a test checks that
# this still matches `STAGES`). `_end` and `_push` read the stages' `batched` flags.
_BATCHED: Final = tuple(stage.batched for stage in STAGES)
"""Whether each core's ``feed`` result is one batch (one value) or several values."""

_DEFAULT: Final = PipelineSettings({})


class _Failed(Exception):
    """Core ``stage`` raised ``error`` while values were pushed through (slow path only)."""

    def __init__(self, stage: int, error: Exception) -> None:
        self.stage = stage
        self.error = error


class Converter:
    """Gemini ``streamGenerateContent`` body bytes → OpenAI ``chat.completion.chunk`` objects.

    .. code::

        converter = rxgem.Converter(model="gemini-2.5-flash")
        for data in body:                       # bytes, split anywhere
            send(converter.feed(data))
        send(converter.close())                 # raises if the stream failed

    Takes the options of :func:`~rxgem.gemini_to_openai` and gives the same chunks
    as the operators. Errors follow the core rule: everything valid before an error
    is returned, pending tool calls flushed, and the error is raised by the call
    that found it when that call has nothing to return, else by the next call;
    :attr:`error` shows it at once. :meth:`iterate` and :meth:`aiterate` run a whole
    body and raise at the right place for you. ``data: [DONE]`` ends the stream
    (the last chunks come with it; later input is ignored).

    Raises:
        TypeError, ValueError: at construction, for an unknown or bad option.
    """

    __slots__ = (
        "_args",
        "_builder",
        "_closed",
        "_cores",
        "_error",
        "_finish",
        "_parser",
        "_slots",
        "_sse",
    )

    def __init__(self, **options: Unpack[PipelineOptions]) -> None:
        cores = (PipelineSettings(options) if options else _DEFAULT).cores()
        self._cores: tuple[Any, ...] = cores
        self._sse: SSEDecoder = cores[_SSE]
        self._parser: ResponseParser = cores[_PARSER]
        self._slots: SlotTable = cores[_SLOTS]
        self._args: ArgsTable = cores[_ARGS]
        self._finish: FinishBuffer = cores[_FINISH]
        self._builder: ChunkBuilder = cores[_BUILDER]
        self._error: Exception | None = None
        self._closed = False

    @property
    def error(self) -> Exception | None:
        """The error that ended the stream after valid chunks were returned; the next
        call raises it."""
        return self._error

    @property
    def done(self) -> bool:
        """Whether the stream is over (``close()`` was called, ``[DONE]`` came, or it failed)."""
        return self._closed

    def feed(self, data: bytes) -> list[ChatCompletionChunk]:
        """The chunks that ``data`` (the next bytes of the body) completes."""
        if self._closed:
            if self._error is not None:
                raise self._error
            return []
        out: list[ChatCompletionChunk] = []
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
                                out += self._builder.feed(batch)
        except Exception as exc:
            return self._end(stage, exc, out)
        if self._sse.done:  # `data: [DONE]`: the stream is over
            return self._end(0, None, out)
        return out

    def close(self, error: Exception | None = None) -> list[ChatCompletionChunk]:
        """The end of the body: the last chunks (tool calls, finishes, usage).

        With ``error`` (the body was cut off by it, e.g. a transport error): the
        chunks owed before it (pending tool calls); never raises.

        Raises:
            RxGemError: the stream ended badly (truncated, not a Gemini stream, an
                error object) and no chunk was left to return first.
        """
        if self._closed:
            if self._error is not None and error is None:
                raise self._error
            return []
        return self._end(0, error, [], external=error is not None)

    def _end(
        self,
        stage: int,
        error: Exception | None,
        out: list[ChatCompletionChunk],
        *,
        external: bool = False,
    ) -> list[ChatCompletionChunk]:
        """Close the cores from ``stage`` on (with ``error``), their outputs pushed on.

        The stream's own error is raised when nothing is left to return, else kept
        for the next call; an ``external`` error (given to ``close``) is the caller's.
        """
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
            except Exception as exc:  # close() found the stream bad (close(error) never raises)
                error, stage = error or exc, stage + 1
        if error is not None and not external:
            if not out:
                raise error
            self._error = error
        return out

    def _push(self, stage: int, value: Any, out: list[ChatCompletionChunk]) -> None:
        """Feed ``value`` to core ``stage`` and what it returns on to the end."""
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

    def iterate(self, body: Iterable[bytes]) -> Iterator[ChatCompletionChunk]:
        """Every chunk of ``body``'s bytes; raises the stream's error after the valid ones.

        If reading ``body`` raises, the chunks owed before that error (pending tool
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
        yield from self.close()
        if self._error is not None:  # found after the last chunks were returned
            raise self._error

    def aiterate(self, body: AsyncIterable[bytes]) -> AsyncIterator[ChatCompletionChunk]:
        """:meth:`iterate` for an async byte stream (``httpx.Response.aiter_bytes()``)."""
        return _aiterate(self, body)
