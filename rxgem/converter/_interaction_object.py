"""A non-streamed Interaction object (what ``POST /v1beta/interactions`` answers without
``stream``) translated whole: into chat chunks or Responses events, or assembled into the
``ChatCompletion`` or ``Response`` a request without ``stream`` answers.

The object is read into one batch of items (``interaction_items``), which the output
stage takes as it takes a stream's; the answer is then assembled from that output the
way every non-streamed answer is (:func:`~rxgem.core.completion`,
:func:`~rxgem.core.assemble_response`), so that it is what the stream of the same
steps would give.
"""

from __future__ import annotations

from typing import Any, Unpack

from ..core import (
    INTERACTIONS_RESPONSES_STAGES,
    INTERACTIONS_STAGES,
    ChatCompletion,
    ChatCompletionChunk,
    Response,
    ResponsesEvent,
    ToOpenAIOptions,
    ToResponsesOptions,
    assemble_response,
    completion,
    interaction_items,
)

__all__ = [
    "interaction_chunks",
    "interaction_completion",
    "interaction_events",
    "interaction_response",
]


def _through(last: Any, body: bytes, options: Any) -> list[Any]:
    builder = last.maker(options)()  # options checked now, by the stage's declaration
    items = interaction_items(body)
    return [*builder.feed(items), *builder.close()] if items else builder.close()


def interaction_chunks(
    body: bytes, **options: Unpack[ToOpenAIOptions]
) -> list[ChatCompletionChunk]:
    """The chat chunks of an Interaction object's bytes (its steps, finish and usage), as
    the Interactions stream of the same steps gives them.

    Raises:
        MalformedStreamError: ``body`` is not an Interaction object.
        TypeError, ValueError: for an unknown or bad option (``to_openai``'s).
    """
    return _through(INTERACTIONS_STAGES[-1], body, options)


def interaction_events(body: bytes, **options: Unpack[ToResponsesOptions]) -> list[ResponsesEvent]:
    """The Responses events of an Interaction object's bytes (``to_responses``' options)."""
    return _through(INTERACTIONS_RESPONSES_STAGES[-1], body, options)


def interaction_completion(body: bytes, **options: Unpack[ToOpenAIOptions]) -> ChatCompletion:
    """The ``chat.completion`` of an Interaction object's bytes: its chunks assembled.

    Raises:
        RxGemError: ``body`` is not an Interaction object, or its interaction failed.
    """
    return completion(interaction_chunks(body, **options))


def interaction_response(body: bytes, **options: Unpack[ToResponsesOptions]) -> Response:
    """The Responses ``response`` of an Interaction object's bytes: its events assembled
    (a failed interaction gives a ``failed`` response, as its stream would)."""
    return assemble_response(interaction_events(body, **options))
