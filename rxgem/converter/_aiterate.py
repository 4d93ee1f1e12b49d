"""``BaseConverter.aiterate``'s async generator, apart: mypyc compiles the converters but
not async generators."""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator
from typing import TYPE_CHECKING, TypeVar

from ._owed import owed

if TYPE_CHECKING:
    from ._converter import BaseConverter

Out = TypeVar("Out")


async def _aiterate(
    converter: BaseConverter[Out], body: AsyncIterable[bytes]
) -> AsyncIterator[Out]:
    pieces = aiter(body)
    while not converter.done:
        try:
            data = await anext(pieces)
        except StopAsyncIteration:
            break
        except Exception as exc:
            for out in converter.close(exc):
                yield out
            raise
        for out in converter.feed(data):
            yield out
    try:
        last = converter.close()
    except Exception as error:
        for out in owed(error):
            yield out
        raise
    for out in last:
        yield out
    if converter.error is not None:  # kept, not raised, by a `keep` converter's close
        raise converter.error
