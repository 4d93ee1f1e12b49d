"""The one shape of rxgem's sans-IO cores.

Every core turns the values of one stream into outputs, with no I/O and no Rx::

    core.feed(value) -> list[Out]          the outputs ``value`` completes, in order
    core.close(error=None) -> list[Out]    the end of the input: what the core still holds
    core.error -> Exception | None         an error found after valid outputs were returned

The cores, in pipeline order:

=================  =============================  ==================================
core               feed                           close()
=================  =============================  ==================================
``SSEDecoder``     bytes → ``SSEEvent``           the last event without a blank line
``ResponseParser`` ``SSEEvent`` → responses       nothing
``SlotTable``      response → items               nothing
``ArgsTable``      items → items                  streamed strings still open
``FinishBuffer``   items → items                  tool calls, finishes, usage
``ChunkBuilder``   items → ``ChatCompletionChunk``  nothing
=================  =============================  ==================================

(``SlotTable``, ``ArgsTable`` and ``FinishBuffer`` return one *batch*: the list of
items of one Gemini event, which the operators emit as one value.)
:class:`~rxgem.Converter` composes the six (bytes → chunks) and keeps this contract but
one rule: its ``close()`` raises a failed stream's error, with what it still owed on
the error's ``chunks``, so that code whose last call is ``close()`` cannot miss it.

**The end of input.** ``close()`` says the input is over; the core returns what it
still holds. ``close(error)`` says the input stopped because of ``error`` (raised
upstream, or by this core): the core returns what it owes before the error is
reported, such as the tool calls it was holding back, and never raises. A core is
spent after ``close``; closing it again returns ``[]``.

**One rule for errors: nothing valid is lost, nothing bad passes.** Bad input
raises an :class:`~rxgem.RxGemError` naming where it happened (event number and
snippet). A call that finds the error before it has produced anything raises at
once. A call that finds it after producing valid outputs (``Converter.feed`` over
several events, ``FinishBuffer.close`` flushing the tool calls of a truncated
stream) returns those outputs and keeps the error in ``error``; the next call
raises it. So a caller delivers what a call returned, then looks at ``error``
(or makes its next call), and never drops output to report an error.
"""

from __future__ import annotations

from typing import Protocol, TypeVar

__all__ = ["Core"]

In_contra = TypeVar("In_contra", contravariant=True)
Out = TypeVar("Out")


class Core(Protocol[In_contra, Out]):
    """A sans-IO stage of the pipeline: see the module docstring for the rules.

    Any class with these three members is a core; a class that subclasses ``Core``
    (``class Redactor(Core[Batch, Item])``) gets the defaults of the two it may leave
    out: ``error`` is ``None`` and ``close`` returns ``[]`` (nothing held).
    :func:`rxgem.operators.core_operator` makes an operator of it.
    """

    @property
    def error(self) -> Exception | None:
        """The error found after valid outputs were returned; the next call raises it."""
        return None

    def feed(self, value: In_contra, /) -> list[Out]:
        """The outputs that ``value`` completes, in order."""
        ...

    def close(self, error: Exception | None = None, /) -> list[Out]:
        """The end of input (``error``: it stopped because of that error)."""
        return []
