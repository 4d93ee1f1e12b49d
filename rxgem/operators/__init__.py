"""The pipeline's reactive operators, one idea each, in pipeline order.

``decode_sse`` → ``parse`` → ``group_by_slot`` → ``latest_args`` →
``flush_on_finish`` → ``to_openai``; plus ``sse_encode`` for the OpenAI side.
Each is a factory returning ``Callable[[Observable[A]], Observable[B]]`` for
``Observable.pipe``; state lives in each subscription, never in the factory.
"""

from ._decode_sse import decode_sse
from ._flush_on_finish import flush_on_finish
from ._group_by_slot import group_by_slot
from ._latest_args import latest_args
from ._parse import parse
from ._sse_encode import sse_encode
from ._to_openai import to_openai

__all__ = [
    "decode_sse",
    "flush_on_finish",
    "group_by_slot",
    "latest_args",
    "parse",
    "sse_encode",
    "to_openai",
]
