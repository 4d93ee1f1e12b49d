"""A non-streamed Interaction object (what ``POST /v1beta/interactions`` answers without
``stream``) translated whole: into chat chunks or Responses events, or assembled into the
``ChatCompletion`` or ``Response`` a request without ``stream`` answers.

The object is read into one batch of items (``interaction_items``), which the output
stage takes as it takes a stream's; the answer is then assembled from that output the
way every non-streamed answer is (:func:`~rxgem.core.completion`,
:func:`~rxgem.core.assemble_response`), so that it is what the stream of the same
steps would give. A ``failed`` or ``cancelled`` interaction is delivered as its failed
stream is: the outputs of the steps valid before the failure, then the error (raised,
the outputs on its ``chunks``); its Response is ``failed`` (``cancelled``) with them.
"""

from __future__ import annotations

from typing import Any, Unpack

import msgspec

from ..core import (
    ChatCompletion,
    ChatCompletionChunk,
    GeminiAPIError,
    assemble_response,
    interaction_items,
)
from ..core.chat import completion
from ..core.pipeline import (
    INTERACTIONS_RESPONSES_STAGES,
    INTERACTIONS_STAGES,
    ToOpenAIOptions,
    ToResponsesOptions,
)
from ..core.responses import Response, ResponsesEvent
from ._owed import owed, owing

__all__ = [
    "interaction_chunks",
    "interaction_completion",
    "interaction_events",
    "interaction_response",
]


def _through(last: Any, body: bytes, options: Any) -> list[Any]:
    builder = last.maker(options)()  # options checked now, by the stage's declaration
    try:
        items = interaction_items(body)
    except GeminiAPIError as error:  # failed or cancelled: what was valid, then the error
        items = owed(error)
        out = [*builder.feed(items), *builder.close(error)] if items else builder.close(error)
        raise owing(error, out) from None
    return [*builder.feed(items), *builder.close()] if items else builder.close()


def interaction_chunks(
    body: bytes, **options: Unpack[ToOpenAIOptions]
) -> list[ChatCompletionChunk]:
    """The chat chunks of an Interaction object's bytes (its steps, finish and usage), as
    the Interactions stream of the same steps gives them.

    Raises:
        MalformedStreamError: ``body`` is not an Interaction object.
        GeminiAPIError: the interaction failed or was cancelled; the chunks of its
            steps before that are on the error's ``chunks``.
        TypeError, ValueError: for an unknown or bad option (``to_openai``'s).
    """
    return _through(INTERACTIONS_STAGES[-1], body, options)


def interaction_events(body: bytes, **options: Unpack[ToResponsesOptions]) -> list[ResponsesEvent]:
    """The Responses events of an Interaction object's bytes (``to_responses``' options).

    Raises:
        GeminiAPIError: the interaction failed or was cancelled; its events, ending
            with ``response.failed``, are on the error's ``chunks``.
    """
    return _through(INTERACTIONS_RESPONSES_STAGES[-1], body, options)


def interaction_completion(body: bytes, **options: Unpack[ToOpenAIOptions]) -> ChatCompletion:
    """The ``chat.completion`` of an Interaction object's bytes: its chunks assembled.

    Raises:
        RxGemError: ``body`` is not an Interaction object, or its interaction failed.
    """
    return completion(interaction_chunks(body, **options))


def interaction_response(body: bytes, **options: Unpack[ToResponsesOptions]) -> Response:
    """The Responses ``response`` of an Interaction object's bytes: its events assembled.

    A failed interaction gives a ``failed`` response with the output of its steps and
    the error, as its stream would; a cancelled one OpenAI's ``cancelled`` (no error).

    Raises:
        GeminiAPIError: the interaction failed before any output (no response began).
    """
    try:
        events = interaction_events(body, **options)
    except GeminiAPIError as error:
        events = owed(error)
        if not events:
            raise
        response = assemble_response(events)
        if error.status == "cancelled":
            return msgspec.structs.replace(response, status="cancelled", error=None)
        return response
    return assemble_response(events)
