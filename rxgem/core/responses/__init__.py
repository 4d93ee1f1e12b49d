"""The Responses output: items → Responses events, with what only it uses.

``ResponsesBuilder`` (its output items in ``_output_items``), the Responses models, their
SSE framing, the assembled ``Response`` and the reasoning carrier (Gemini's thought
signatures in a reasoning item's ``encrypted_content``, read back by :mod:`rxgem.request`).
"""

from ._assemble import assemble_response
from ._builder import ResponsesBuilder
from ._mapping import check_namespaced, check_request, check_response_id
from ._models import Response, ResponsesEvent, ResponseUsage
from ._reasoning_carrier import CarriedSignature, decode_signatures, encode_signatures
from ._sse import ResponsesSSEEncoder, encode_event, encode_stream_error

__all__ = [
    "CarriedSignature",
    "Response",
    "ResponseUsage",
    "ResponsesBuilder",
    "ResponsesEvent",
    "ResponsesSSEEncoder",
    "assemble_response",
    "check_namespaced",
    "check_request",
    "check_response_id",
    "decode_signatures",
    "encode_event",
    "encode_signatures",
    "encode_stream_error",
]
