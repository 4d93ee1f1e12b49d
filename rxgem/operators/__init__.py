"""The pipeline's reactive operators, one idea each, in pipeline order.

``decode_sse`` → ``parse`` → ``group_by_slot`` → ``latest_args`` →
``flush_on_finish`` → ``to_openai`` (or ``to_responses``, for OpenAI's Responses
API); for Gemini's Interactions API, ``decode_sse`` → ``parse_interactions`` →
``read_steps`` → ``to_openai`` (``to_responses``). Plus ``sse_encode``
(``responses_sse_encode``) for the OpenAI side, and the whole pipeline as one operator,
``gemini_to_openai`` or ``gemini_to_responses`` (``interactions_to_openai``,
``interactions_to_responses``: the same with ``upstream="interactions"``), or as its
named stages, ``pipeline_stages``; and ``from_body``, a light source of body bytes to put
them on. ``core_operator`` makes an operator of your own from a sans-IO core, as each of
these is made (docs/operators.md, "Writing your own operator"). Each operator is a factory returning
``Callable[[Observable[A]], Observable[B]]`` for ``Observable.pipe``, over one
sans-IO core of :mod:`rxgem.core`; state lives in each subscription, never in the
factory.
"""

from ._decode_sse import decode_sse
from ._flush_on_finish import flush_on_finish
from ._from_body import from_body
from ._group_by_slot import group_by_slot
from ._latest_args import latest_args
from ._own_operator import core_operator
from ._parse import parse
from ._parse_interactions import parse_interactions
from ._pipeline import (
    gemini_to_openai,
    gemini_to_responses,
    interactions_to_openai,
    interactions_to_responses,
    pipeline_stages,
)
from ._read_steps import read_steps
from ._responses_sse_encode import responses_sse_encode
from ._sse_encode import sse_encode
from ._to_openai import to_openai
from ._to_responses import to_responses

# Not in `__all__`: what other rxgem packages import from this face (they import
# through faces, never private modules).
# isort: off
from ._pipeline import (
    NamedOperator as NamedOperator,
    responses_operator as responses_operator,
    responses_stages as responses_stages,
)
# isort: on

__all__ = [
    "core_operator",
    "decode_sse",
    "flush_on_finish",
    "from_body",
    "gemini_to_openai",
    "gemini_to_responses",
    "group_by_slot",
    "interactions_to_openai",
    "interactions_to_responses",
    "latest_args",
    "parse",
    "parse_interactions",
    "pipeline_stages",
    "read_steps",
    "responses_sse_encode",
    "sse_encode",
    "to_openai",
    "to_responses",
]
