"""``Converter.aiterate``'s async generator, apart: mypyc compiles ``_converter`` but not
async generators."""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator
from typing import TYPE_CHECKING

from ._owed import owed

if TYPE_CHECKING:
    from ..core import ChatCompletionChunk
    from ._converter import Converter


async def _aiterate(
    converter: Converter, body: AsyncIterable[bytes]
) -> AsyncIterator[ChatCompletionChunk]:
    pieces = aiter(body)
    while not converter.done:
        try:
            data = await anext(pieces)
        except StopAsyncIteration:
            break
        except Exception as exc:
            for chunk in converter.close(exc):
                yield chunk
            raise
        for chunk in converter.feed(data):
            yield chunk
    try:
        last = converter.close()
    except Exception as error:
        for chunk in owed(error):
            yield chunk
        raise
    for chunk in last:
        yield chunk
    if converter.error is not None:  # kept, not raised, by CoreConverter.close
        raise converter.error
