"""What Google refuses in an Interactions create body, checked without a network (sans-IO).

:func:`check_interaction_body` reads a ``POST /v1beta/interactions`` body and returns what
Google would refuse it for, one message per problem naming the field's path
(``input[2].id: required``), empty when the body is accepted. A fake server answers a
400 with them; a test asserts the list is empty.

Shapes, as google-genai's types for the API (``google.genai._gaos.types.interactions``)
declare them, but strict where those types are lenient (they keep unknown keys and take
an unknown ``type`` as an "unknown" variant, which Google's front end refuses):

- the top level: only the create fields; exactly one of ``model`` (with the model
  fields) or ``agent`` (with ``agent_config``);
- ``input``: a string, a content, a list of contents or a list of steps (not a mix);
  each step's ``type`` one Google knows, with that step's fields only, its required ones
  present (a ``function_call`` needs ``id``, ``name`` and an ``arguments`` object; a
  ``function_result`` ``call_id`` and ``result``; every built-in tool call its ``id``,
  every result its ``call_id``);
- contents (``text``, ``image``, ``audio``, ``video``, ``document``), tools (a
  ``function`` needs a ``name``), ``generation_config`` (enums for ``thinking_level``,
  ``thinking_summaries``, ``tool_choice``), ``response_format``, and the flags' types.

And two rules of the conversation that no type says: without ``previous_interaction_id``
each ``function_result`` answers a ``function_call`` step before it in ``input`` (with
``previous_interaction_id`` the call may be in the stored interaction); and a
``background`` run must be stored (``store: false`` with ``background: true`` is refused).
"""

from __future__ import annotations

from typing import Any

from ._interactions_shapes import (
    AGENT_FIELDS,
    ARGUMENTS,
    CHOICES,
    CONFIG,
    CONTENTS,
    FORMATS,
    LEVELS,
    MIME_TYPES,
    MODEL_FIELDS,
    RESOLUTIONS,
    RESULT_ENTRIES,
    STEP_ENUMS,
    STEPS,
    SUMMARIES,
    TEXT_FORMAT,
    TIERS,
    TOOLS,
    Spec,
)

__all__ = ["check_interaction_body"]


def _type(value: dict[str, Any]) -> str:
    """The ``type`` of an object ("" when it is no string: never a known type)."""
    kind = value.get("type")
    return kind if type(kind) is str else ""


def _at(where: str, key: str | int) -> str:
    return f"{where}[{key}]" if isinstance(key, int) else f"{where}.{key}" if where else key


class _Check:
    __slots__ = ("problems",)

    def __init__(self) -> None:
        self.problems: list[str] = []

    def fail(self, where: str, what: str) -> None:
        self.problems.append(f"{where}: {what}")

    def keys(self, value: dict[str, Any], allowed: frozenset[str], where: str) -> None:
        for key in value:
            if key not in allowed:
                self.fail(_at(where, key), "unknown field")

    def kind(self, value: Any, kinds: tuple[type, ...], where: str, name: str) -> bool:
        # bool is an int in Python, not in JSON
        if type(value) not in kinds:
            self.fail(where, f"must be {name}")
            return False
        return True

    def string(self, value: Any, where: str, *, empty: bool = True) -> None:
        if self.kind(value, (str,), where, "a string") and not empty and not value:
            self.fail(where, "must not be empty")

    def enum(self, value: Any, allowed: tuple[str, ...], where: str) -> None:
        if value not in allowed:
            self.fail(where, f"must be one of {', '.join(allowed)}")

    def obj(self, value: Any, where: str) -> bool:
        return self.kind(value, (dict,), where, "an object")

    def listed(self, value: Any, where: str) -> list[Any]:
        return value if self.kind(value, (list,), where, "a list") else []

    def spec(self, value: Any, spec: Spec, where: str) -> None:
        """An object of the fields ``spec`` names, each of its kind."""
        if not self.obj(value, where):
            return
        for key, item in value.items():
            at = _at(where, key)
            kind = spec.get(key)
            if kind is None:
                self.fail(at, "unknown field")
            elif isinstance(kind, tuple):
                self.enum(item, kind, at)
            elif kind == "str":
                self.string(item, at)
            elif kind == "[str]":
                for i, entry in enumerate(self.listed(item, at)):
                    self.string(entry, _at(at, i))
            elif kind == "list":
                self.listed(item, at)
            elif kind == "object":
                self.obj(item, at)

    def content(self, value: Any, where: str, kinds: tuple[str, ...] = tuple(CONTENTS)) -> None:
        if not self.obj(value, where):
            return
        kind = _type(value)
        if kind not in kinds:
            self.fail(_at(where, "type"), f"must be one of {', '.join(kinds)}")
            return
        self.keys(value, CONTENTS[kind], where)
        if kind == "text":
            if "text" not in value:
                self.fail(_at(where, "text"), "required")
            else:
                self.string(value["text"], _at(where, "text"))
            if "annotations" in value:
                self.listed(value["annotations"], _at(where, "annotations"))
            return
        for key in ("data", "uri"):
            if key in value:
                self.string(value[key], _at(where, key))
        if "mime_type" in value:
            self.enum(value["mime_type"], MIME_TYPES[kind], _at(where, "mime_type"))
        if "resolution" in value:
            self.enum(value["resolution"], RESOLUTIONS, _at(where, "resolution"))
        if ("data" in value) == ("uri" in value):
            self.fail(where, "needs one of data or uri")

    def contents(self, value: Any, where: str, kinds: tuple[str, ...] = tuple(CONTENTS)) -> None:
        for i, item in enumerate(self.listed(value, where)):
            self.content(item, _at(where, i), kinds)

    def step(self, step: dict[str, Any], where: str, called: set[str], stored: bool) -> None:
        kind = _type(step)
        if kind not in STEPS:
            self.fail(_at(where, "type"), "not a step type Google knows")
            return
        fields, required = STEPS[kind]
        self.keys(step, fields, where)
        for key in sorted(required - step.keys()):
            self.fail(_at(where, key), "required")
        for key in ("id", "call_id"):
            if key in step:
                self.string(step[key], _at(where, key), empty=False)
        for key in ("signature", "name", "server_name"):
            if key in step:
                self.string(step[key], _at(where, key), empty=key != "name")
        if "is_error" in step:
            self.kind(step["is_error"], (bool,), _at(where, "is_error"), "true or false")
        for key, allowed in STEP_ENUMS.items():
            if key in step:
                self.enum(step[key], allowed, _at(where, key))
        if kind in ARGUMENTS and "arguments" in step:
            self.spec(step["arguments"], ARGUMENTS[kind], _at(where, "arguments"))
        elif kind == "mcp_server_tool_call" and "arguments" in step:
            self.obj(step["arguments"], _at(where, "arguments"))
        if kind in RESULT_ENTRIES and "result" in step:
            at = _at(where, "result")
            for i, entry in enumerate(self.listed(step["result"], at)):
                self.spec(entry, RESULT_ENTRIES[kind], _at(at, i))
        elif kind in ("code_execution_result", "mcp_server_tool_result"):
            self.result(step, where, allow_object=kind != "code_execution_result")
        elif kind == "tool_search_result" and "result" in step:
            for i, tool in enumerate(self.listed(step["result"], _at(where, "result"))):
                self.spec(
                    tool, dict.fromkeys(TOOLS["function"], "str"), _at(_at(where, "result"), i)
                )
        if kind in ("user_input", "model_output") and "content" in step:
            self.contents(step["content"], _at(where, "content"))
        elif kind == "thought" and "summary" in step:
            self.contents(step["summary"], _at(where, "summary"), ("text", "image"))
        elif kind == "function_call":
            if "arguments" in step:
                self.obj(step["arguments"], _at(where, "arguments"))
            if type(step.get("id")) is str:
                called.add(step["id"])
        elif kind == "function_result":
            self.result(step, where)
            call_id = step.get("call_id")
            if not stored and type(call_id) is str and call_id and call_id not in called:
                self.fail(_at(where, "call_id"), "answers no function_call step before it")

    def result(self, step: dict[str, Any], where: str, *, allow_object: bool = True) -> None:
        if "result" not in step:
            return
        value = step["result"]
        at = _at(where, "result")
        if type(value) is list:
            self.contents(value, at, ("text", "image") if allow_object else tuple(CONTENTS))
        elif type(value) is not str and not (allow_object and type(value) is dict):
            self.fail(at, "must be a string, an object or a list of contents")

    def input(self, value: Any, stored: bool) -> None:
        if type(value) is str:
            return
        if type(value) is dict:
            self.content(value, "input")
            return
        items = self.listed(value, "input")
        if not items:
            return
        steps = sum(1 for item in items if type(item) is dict and _type(item) in STEPS)
        if steps and steps != len(items):
            self.fail("input", "a list of steps or a list of contents, not a mix")
        called: set[str] = set()
        for i, item in enumerate(items):
            if steps:
                if self.obj(item, _at("input", i)):
                    self.step(item, _at("input", i), called, stored)
            else:
                self.content(item, _at("input", i))

    def tools(self, value: Any) -> None:
        for i, tool in enumerate(self.listed(value, "tools")):
            where = _at("tools", i)
            if not self.obj(tool, where):
                continue
            kind = _type(tool)
            if kind not in TOOLS:
                self.fail(_at(where, "type"), "not a tool type Google knows")
                continue
            self.keys(tool, TOOLS[kind], where)
            if kind == "function":
                if "name" not in tool:
                    self.fail(_at(where, "name"), "required")
                else:
                    self.string(tool["name"], _at(where, "name"), empty=False)
                if "description" in tool:
                    self.string(tool["description"], _at(where, "description"))
                if "parameters" in tool:
                    self.obj(tool["parameters"], _at(where, "parameters"))

    def config(self, value: Any) -> None:
        where = "generation_config"
        if not self.obj(value, where):
            return
        self.keys(value, CONFIG, where)
        for key in ("temperature", "top_p"):
            if key in value:
                self.kind(value[key], (int, float), _at(where, key), "a number")
        for key in ("seed", "max_output_tokens"):
            if key in value:
                self.kind(value[key], (int,), _at(where, key), "an integer")
        if "stop_sequences" in value:
            for i, stop in enumerate(
                self.listed(value["stop_sequences"], _at(where, "stop_sequences"))
            ):
                self.string(stop, _at(_at(where, "stop_sequences"), i))
        if "thinking_level" in value:
            self.enum(value["thinking_level"], LEVELS, _at(where, "thinking_level"))
        if "thinking_summaries" in value:
            self.enum(value["thinking_summaries"], SUMMARIES, _at(where, "thinking_summaries"))
        if "tool_choice" in value:
            self.choice(value["tool_choice"], _at(where, "tool_choice"))

    def choice(self, value: Any, where: str) -> None:
        if type(value) is str:
            self.enum(value, CHOICES, where)
            return
        if not self.obj(value, where):
            return
        self.keys(value, frozenset({"allowed_tools"}), where)
        allowed = value.get("allowed_tools")
        at = _at(where, "allowed_tools")
        if allowed is None or not self.obj(allowed, at):
            return
        self.keys(allowed, frozenset({"mode", "tools"}), at)
        if "mode" in allowed:
            self.enum(allowed["mode"], CHOICES, _at(at, "mode"))
        if "tools" in allowed:
            for i, name in enumerate(self.listed(allowed["tools"], _at(at, "tools"))):
                self.string(name, _at(_at(at, "tools"), i))

    def formats(self, value: Any) -> None:
        specs = value if type(value) is list else [value]
        for i, spec in enumerate(specs):
            where = _at("response_format", i) if type(value) is list else "response_format"
            if not self.obj(spec, where):
                continue
            kind = _type(spec)
            if kind not in FORMATS:
                self.fail(_at(where, "type"), f"must be one of {', '.join(FORMATS)}")
                continue
            self.keys(spec, FORMATS[kind], where)
            if kind == "text":
                self.spec(spec, TEXT_FORMAT, where)


def check_interaction_body(body: Any) -> list[str]:
    """What Google refuses an Interactions create body for: one ``"path: problem"`` message
    per problem, in the order of the body; empty when Google would accept it."""
    check = _Check()
    if not check.obj(body, "body"):
        return check.problems
    model, agent = "model" in body, "agent" in body
    if model and agent:
        check.fail("model", "set one of model or agent, not both")
    elif not (model or agent):
        check.fail("model", "required (or agent)")
    check.keys(body, AGENT_FIELDS if agent and not model else MODEL_FIELDS, "")
    for key in ("model", "agent"):
        if key in body:
            check.string(body[key], key, empty=False)
    for key in ("system_instruction", "previous_interaction_id", "continuation_token"):
        if key in body:
            check.string(body[key], key, empty=key != "system_instruction")
    for key in ("background", "store", "stream"):
        if key in body:
            check.kind(body[key], (bool,), key, "true or false")
    if "service_tier" in body:
        check.enum(body["service_tier"], TIERS, "service_tier")
    if "input" in body:
        check.input(body["input"], stored="previous_interaction_id" in body)
    if "tools" in body:
        check.tools(body["tools"])
    if "generation_config" in body:
        check.config(body["generation_config"])
    if "response_format" in body:
        check.formats(body["response_format"])
    if body.get("background") is True and body.get("store") is False:
        check.fail("store", "a background run must be stored: send store true or leave it out")
    return check.problems
