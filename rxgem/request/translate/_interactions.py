"""OpenAI requests → Gemini Interactions create bodies (``POST /v1beta/interactions``): a
reader, then the writer.

:func:`chat_to_interaction` reads a Chat Completions body; :func:`responses_to_interaction`
a Responses body, into an :class:`InteractionRequest` (the body and what the server keeps).
Two ways to carry a Responses conversation:

- *continued at Google* (``previous_interaction_id`` given): Google keeps the steps of
  the interaction it continues, so only the request's ``input`` is sent; its
  ``function_call_output`` items answering calls made there become ``function_result``
  steps on their own (named after their call when ``history`` shows it);
- *replayed* (no ``previous_interaction_id``: a conversation started on the other
  upstream, or kept only here): ``history`` then ``input``, every step, each thought
  signature carried in a reasoning item's ``encrypted_content`` back as a ``thought``
  step before the step it signed; a ``code_interpreter_call`` item whose parts have
  Google's ids (the Interactions upstream's) back as its ``code_execution_call`` and
  ``code_execution_result`` steps.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ...core import InvalidRequestError
from .._json import JSONObject, quoted
from .._model_families import model_family
from .._policy import Unsupported, with_warnings
from .._signatures import split_id
from ..form import place_signatures
from ..read import chat
from ..read.responses import (
    Resolve,
    check_continuation,
    check_fields,
    echo_of,
    function_output,
    include_list,
    read_input,
    read_settings,
)
from ..write.interactions import (
    conversation_steps,
    media_content,
    result_value,
    settings_fields,
)

__all__ = ["InteractionRequest", "chat_to_interaction", "flag", "responses_to_interaction"]


def flag(value: Any, where: str) -> bool:
    """A request's boolean (``None``: false)."""
    if value is None:
        return False
    if type(value) is not bool:
        raise InvalidRequestError("must be true or false", where=where)
    return value


def chat_to_interaction(
    body: JSONObject,
    *,
    store: bool = False,
    previous_interaction_id: str | None = None,
    include_thoughts: bool | None = None,
    unsupported: Unsupported = "error",
) -> JSONObject:
    """An OpenAI Chat Completions request body → the body of ``POST /v1beta/interactions``.

    The whole conversation goes as ``input`` steps (Chat Completions is stateless): every
    thought signature the client kept goes back as a ``thought`` step before the step it
    signed. ``stream`` is copied; the body's own ``store`` is OpenAI's and is not read.

    Args:
        store: whether Google keeps the interaction (Google's default is true; a
            stateless chat sends false).
        previous_interaction_id: the stored interaction this one continues (its steps
            are at Google, so ``messages`` then holds only what is new, and must stand
            on its own: a tool message answering a call made there is refused, as
            any tool message without its call is; :func:`responses_to_interaction`
            takes such answers).
        include_thoughts: ask for thought summaries (``thinking_summaries``;
            ``None``: Google's default).
        unsupported: ``"error"`` (default) refuses a field Interactions has no
            counterpart for, ``"warn"`` leaves it out with an ``UnsupportedWarning``.

    Raises:
        InvalidRequestError: the request cannot be translated; ``where`` names the field.
    """
    model = chat.checked_model(body, unsupported)
    family = model_family(model)
    conversation = chat.read_messages(body.get("messages"), media_results=True)
    if family.strict_signatures:
        place_signatures(conversation.turns, in_place=True)
    settings = chat.read_settings(body, family, "json_schema", None, unsupported)
    out: JSONObject = {
        "model": model.removeprefix("models/"),
        "input": conversation_steps(conversation, "messages"),
    }
    if conversation.system:
        out["system_instruction"] = "\n\n".join(conversation.system)
    out.update(settings_fields(settings, include_thoughts=include_thoughts, policy=unsupported))
    if flag(body.get("stream"), "stream"):
        out["stream"] = True
    out["store"] = store
    if previous_interaction_id is not None:
        out["previous_interaction_id"] = previous_interaction_id
    return out


@dataclass(frozen=True, slots=True)
class InteractionRequest:
    """A Responses request, translated for Interactions: the create body and what the
    server keeps.

    Attributes:
        body: the Interactions create body (``POST /v1beta/interactions``).
        model: the Gemini model.
        stream: whether the client asked for a stream of events.
        store: whether the client asked rxgem to keep the response (``store``, true
            unless sent false; whether Google keeps it is ``body["store"]``).
        background: whether the client asked for a background run.
        include: the extras the client asked for.
        previous_response_id: the response this one continues, or ``None``.
        previous_interaction_id: the interaction at Google it continues, or ``None``.
        metadata: the client's key-value pairs, to store and repeat.
        echo: the request's fields the Response object repeats.
        namespaced: Gemini name → ``(namespace, name)`` of a namespace tool's functions.
        warnings: what the translation warned about (also issued as warnings).
    """

    body: JSONObject
    model: str
    stream: bool = False
    store: bool = True
    background: bool = False
    include: tuple[str, ...] = ()
    previous_response_id: str | None = None
    previous_interaction_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    echo: JSONObject = field(default_factory=dict)
    namespaced: dict[str, tuple[str, str]] = field(default_factory=dict)
    warnings: tuple[Warning, ...] = ()


def _names(history: Sequence[Any] | None) -> dict[str, str]:
    """Call id → function name of the ``function_call`` items of ``history``."""
    names: dict[str, str] = {}
    for item in history or ():
        if isinstance(item, Mapping) and item.get("type") == "function_call":
            call_id, name = item.get("call_id"), item.get("name")
            if type(call_id) is str and type(name) is str:
                names[split_id(call_id)[0]] = name
    return names


_SKIPPED: JSONObject = {"type": "web_search_call"}
"""Stands in for an item sent another way (or not at all), so the others keep their
indexes for errors: a record of a tool Google ran, which the input walk skips."""
_RECORDS = frozenset({"code_interpreter_call"})
"""Records of code Google ran: when the interaction is continued at Google, Google has
their steps already."""


def _without_records(items: Any) -> Any:
    if type(items) is not list:
        return items
    return [
        _SKIPPED if type(item) is dict and item.get("type") in _RECORDS else item for item in items
    ]


def _only_skipped(items: Any) -> bool:
    return type(items) is list and all(item is _SKIPPED for item in items)


def _split_answers(
    items: Any, resolve: Resolve | None, names: dict[str, str], policy: Unsupported
) -> tuple[list[JSONObject], Any]:
    """The ``function_result`` steps of the leading outputs that answer calls made at
    Google (no ``function_call`` of ``items`` has their id), and the other items."""
    if type(items) is not list:
        return [], items
    own = {
        split_id(item["call_id"])[0]
        for item in items
        if type(item) is dict
        and item.get("type") == "function_call"
        and type(item.get("call_id")) is str
    }
    steps: list[JSONObject] = []
    rest: list[Any] = []
    for i, item in enumerate(items):
        where = f"input[{i}]"
        found = item
        if type(item) is dict and item.get("type") == "item_reference" and resolve is not None:
            ref = item.get("id")
            found = resolve(ref) if type(ref) is str else None
            found = dict(found) if isinstance(found, Mapping) else item
        call_id = found.get("call_id") if type(found) is dict else None
        if (
            type(found) is dict
            and found.get("type") == "function_call_output"
            and type(call_id) is str
            and split_id(call_id)[0] not in own
        ):
            if any(other is not _SKIPPED for other in rest):
                raise InvalidRequestError(
                    f"the output for {quoted(call_id)} answers a call made before this input;"
                    " such outputs come first",
                    where=f"{where}.call_id",
                )
            call = split_id(call_id)[0]
            response, media = function_output(
                found.get("output"), f"{where}.output", gemini3=True, policy=policy
            )
            step: JSONObject = {"type": "function_result", "call_id": call}
            if call in names:
                step["name"] = names[call]
            contents = [media_content(m, f"{where}.output") for m in media]
            step["result"] = result_value(response, contents)
            steps.append(step)
            rest.append(_SKIPPED)
        else:
            rest.append(item)
    return steps, rest


def _translate(
    request: Mapping[str, Any],
    store: bool,
    previous_interaction_id: str | None,
    policy: Unsupported,
    history: Sequence[Any] | None,
    resolve: Resolve | None,
) -> InteractionRequest:
    body = dict(request)
    model = body.get("model")
    if type(model) is not str or not model:
        raise InvalidRequestError("must name a Gemini model", where="model")
    background = flag(body.get("background"), "background")
    if background and not store:
        raise InvalidRequestError(
            "a background run is kept at Google, and this server stores no interactions"
            " there; send background false or leave it out",
            where="background",
        )
    check_fields(body, policy)
    previous = check_continuation(body, history is not None or previous_interaction_id is not None)
    metadata = body.get("metadata")
    include = include_list(body)
    family = model_family(model)
    answers: list[JSONObject] = []
    sources: list[tuple[str, Any]] = []
    given = body.get("input")
    if previous_interaction_id is None:
        if history is not None:
            sources.append(("history", list(history)))
    else:
        given = _without_records(given)
        answers, given = _split_answers(given, resolve, _names(history), policy)
    if given is not None and given != [] and not (answers and _only_skipped(given)):
        sources.append(("input", given))
    instructions = body.get("instructions")
    steps = list(answers)
    system_text: str | None = None
    if sources or not answers:
        conversation = read_input(
            instructions, sources, media_results=True, policy=policy, resolve=resolve
        )
        if family.strict_signatures:
            place_signatures(conversation.turns, in_place=True)
        steps.extend(conversation_steps(conversation, "input"))
        if conversation.system:
            system_text = "\n\n".join(conversation.system)
    elif instructions is not None:
        if type(instructions) is not str:
            raise InvalidRequestError("must be a string", where="instructions")
        system_text = instructions
    settings, namespaced = read_settings(body, family, "json_schema", include, policy)
    out: JSONObject = {"model": model.removeprefix("models/"), "input": steps}
    if system_text:
        out["system_instruction"] = system_text
    out.update(settings_fields(settings, include_thoughts=None, policy=policy))
    stream = flag(body.get("stream"), "stream")
    if stream:
        out["stream"] = True
    if background:
        out["background"] = True
    out["store"] = store
    if previous_interaction_id is not None:
        out["previous_interaction_id"] = previous_interaction_id
    return InteractionRequest(
        body=out,
        model=model,
        stream=stream,
        store=body.get("store") is not False,
        background=background,
        include=tuple(include),
        previous_response_id=previous,
        previous_interaction_id=previous_interaction_id,
        metadata=dict(metadata or {}),
        echo=echo_of(body),
        namespaced=namespaced,
    )


def responses_to_interaction(
    body: Mapping[str, Any],
    *,
    store: bool = False,
    previous_interaction_id: str | None = None,
    history: Sequence[Mapping[str, Any]] | None = None,
    resolve: Resolve | None = None,
    unsupported: Unsupported = "error",
) -> InteractionRequest:
    """An OpenAI Responses request body → the Interactions create body, and what the
    server keeps.

    Args:
        store: whether Google keeps the interaction (the deployment's choice; a
            ``background`` run needs it, and so does a later turn that continues this
            one with ``previous_interaction_id``).
        previous_interaction_id: the interaction at Google this request continues: only
            ``input`` is sent (Google has the rest). ``None``: the conversation is
            replayed, ``history`` then ``input``.
        history: the items of the conversation so far (for ``previous_response_id``),
            oldest first, as for :func:`~rxgem.request.responses_to_gemini_request`; with
            ``previous_interaction_id`` only read for the names of the calls answered.
        resolve: the stored item of an ``item_reference`` id, or ``None``.
        unsupported: ``"error"`` (default) refuses a field Interactions has no
            counterpart for, ``"warn"`` leaves it out with an ``UnsupportedWarning``.

    Raises:
        InvalidRequestError: the request cannot be translated; ``where`` names the field.
    """
    if not isinstance(body, Mapping):
        raise InvalidRequestError("the request must be a JSON object")
    if unsupported not in ("error", "warn"):
        raise ValueError(f"unsupported must be 'error' or 'warn', not {unsupported!r}")
    result, found = with_warnings(
        lambda: _translate(body, store, previous_interaction_id, unsupported, history, resolve)
    )
    return replace(result, warnings=found)
