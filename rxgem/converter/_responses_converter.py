"""The Responses translation without Rx: Gemini stream bytes in, Responses events out.

:class:`ResponsesConverter` is :class:`~rxgem.Converter` with the Responses output as its
last core (:data:`~rxgem.core.RESPONSES_STAGES`): the same five cores, then
``ResponsesBuilder``, with the same contract (``feed``, ``close`` raising a failed
stream's error with what it still owed on the error's ``chunks``, ``iterate``,
``aiterate``), from the same :class:`~rxgem.converter._converter.BaseConverter`. It is
its own class rather than a parameter of ``Converter``, so that each is typed exactly.
"""

from __future__ import annotations

from typing import Final, Unpack

from ..core.pipeline import RESPONSES_STAGES, PipelineSettings, ResponsesPipelineOptions
from ..core.responses import CarriedSignature, Response, ResponsesBuilder, ResponsesEvent
from ..core.slots import Batch
from ._after import After
from ._converter import BaseConverter

__all__ = ["CoreResponsesConverter", "ResponsesConverter"]

_DEFAULT: Final = PipelineSettings({}, RESPONSES_STAGES)


class ResponsesConverter(BaseConverter[ResponsesEvent]):
    """Gemini ``streamGenerateContent`` body bytes → OpenAI Responses streaming events.

    .. code::

        converter = rxgem.converter.ResponsesConverter(model="gemini-2.5-flash")
        try:
            for data in body:                   # bytes, split anywhere
                send(converter.feed(data))
            send(converter.close())             # raises if the stream failed...
        except rxgem.RxGemError as error:
            send(error.chunks)                  # ...with the events it still owed
            raise

    Takes the options of :func:`~rxgem.operators.gemini_to_responses`
    (:class:`~rxgem.core.ResponsesPipelineOptions`; ``upstream="interactions"`` for an
    Interactions stream's body) and gives the same events as the operators, with
    :class:`~rxgem.Converter`'s rules: nothing valid is lost (a failed stream's events
    end with ``response.failed``, carried on the error), and no error can be walked
    past. :attr:`response` is the final response once the stream ended;
    :attr:`signatures` Gemini's thought signatures, for a server to keep.
    ``after`` runs cores of your own between the stages, as :class:`~rxgem.Converter`'s.

    Raises:
        TypeError, ValueError: at construction, for an unknown or bad option.
    """

    __slots__ = ("_builder",)

    def __init__(
        self, *, after: After | None = None, **options: Unpack[ResponsesPipelineOptions]
    ) -> None:
        self._start(
            PipelineSettings(options, RESPONSES_STAGES) if options else _DEFAULT, after=after
        )

    def _start(
        self, settings: PipelineSettings, *, keep: bool = False, after: After | None = None
    ) -> None:
        super()._start(settings, keep=keep, after=after)
        self._builder: ResponsesBuilder = self._cores[-1]

    def _build(self, batch: Batch) -> list[ResponsesEvent]:
        return self._builder.feed(batch)

    @property
    def response(self) -> Response | None:
        """The final ``response`` (the terminal event's) once the stream ended, else ``None``."""
        return self._builder.response

    @property
    def signatures(self) -> list[CarriedSignature]:
        """Gemini's thought signatures so far, shown to the client or not (for a store)."""
        return self._builder.signatures

    @property
    def placed(self) -> dict[str, list[CarriedSignature]]:
        """The signatures that stand in their place, by the reasoning item that carries
        them (not in :attr:`signatures`; for a store to keep with that item)."""
        return self._builder.placed


class CoreResponsesConverter(ResponsesConverter):
    """A :class:`ResponsesConverter` with the cores' ``close()``, for the operator
    (``gemini_to_responses``): a failed stream's owed events are returned and the error
    kept in :attr:`error`. Made from options checked beforehand."""

    __slots__ = ()

    def __init__(self, settings: PipelineSettings) -> None:
        self._start(settings, keep=True)
