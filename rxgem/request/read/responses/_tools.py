"""Responses ``tools``, ``tool_choice`` and ``parallel_tool_calls`` → Gemini ``tools`` and
``toolConfig``.

- ``function`` tools, in Responses' flat shape (``{type, name, description,
  parameters, strict}``) → ``functionDeclarations`` (the schema translated as for Chat
  Completions; ``strict`` is not sent);
- a ``namespace`` tool → a declaration per function it holds, named
  ``namespace.function`` (Gemini names allow dots; :data:`ResponsesTools.namespaced`
  maps the name back for the answer);
- ``web_search`` (``web_search_preview``, dated variants) → the ``googleSearch`` tool
  (beside function tools, Gemini 3 only: before 3 Gemini refuses the pair, so search is
  left out with an :class:`UnsupportedWarning`, whatever the policy);
- ``custom`` tools (free-form or grammar input, such as Codex's ``apply_patch``) and
  ``tool_search``: Gemini declares neither, and both are extras a client offers beside
  its function tools, so they are left out with an :class:`UnsupportedWarning`, whatever
  the ``unsupported`` policy (Codex CLI sends them, and must work unchanged);
- hosted tools OpenAI runs for the client (``file_search``, ``code_interpreter``,
  ``computer_use``, ``mcp``, ``image_generation``, ``local_shell``, ``shell``, ...):
  the ``unsupported`` policy.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ....core import InvalidRequestError
from ..._json import JSONObject, quoted
from ..._model_families import ModelFamily
from ..._policy import Unsupported, UnsupportedWarning, unsupported, warn
from ...form import Function, Mode, Tools
from ...schema._convert import SchemaTarget
from .._shared import check_function_name, read_function
from ._input import gemini_name

__all__ = ["ResponsesTools", "responses_tools"]


_SEARCH = re.compile(r"web_search(_preview)?(_\d{4}_\d{2}_\d{2})?")
_LEFT_OUT = frozenset({"custom", "tool_search"})
"""Tool types left out with a warning under any policy (see the module's docs)."""


@dataclass(slots=True)
class ResponsesTools:
    """What a request's tools become.

    Attributes:
        tools: the functions offered, search, and the choice among them.
        namespaced: Gemini name → ``(namespace, name)`` for the functions of
            ``namespace`` tools (the answer's ``function_call`` items say them apart).
    """

    tools: Tools = field(default_factory=Tools)
    namespaced: dict[str, tuple[str, str]] = field(default_factory=dict)


def _declaration(tool: JSONObject, where: str, name: str, target: SchemaTarget) -> Function:
    check_function_name(
        name, f"{where}.name", " (a namespace's functions are named namespace.function)"
    )
    return read_function(name, tool, where, target)


def _left_out(kind: str, where: str) -> None:
    warn(
        f"{where}: Gemini has no {kind!r} tools; left out (the model is offered the other tools)",
        UnsupportedWarning,
    )


class _Declared:
    __slots__ = (
        "allowed",
        "declarations",
        "names",
        "namespaced",
        "policy",
        "search",
        "seen",
        "target",
    )

    def __init__(self, target: SchemaTarget, policy: Unsupported, allowed: set[str] | None):
        self.target = target
        self.policy = policy
        self.allowed = allowed
        self.declarations: list[Function] = []
        self.names: list[str] = []
        self.namespaced: dict[str, tuple[str, str]] = {}
        self.seen: set[str] = set()
        self.search = False

    def function(self, tool: JSONObject, where: str, namespace: str | None) -> None:
        name = tool.get("name")
        if type(name) is not str:
            raise InvalidRequestError("a function tool needs a name", where=f"{where}.name")
        full = gemini_name(namespace, name)
        if full in self.seen:
            raise InvalidRequestError(
                f"a second function named {quoted(full)}", where=f"{where}.name"
            )
        self.seen.add(full)
        declaration = _declaration(tool, where, full, self.target)
        if self.allowed is not None and full not in self.allowed:
            return  # tool_choice allowed_tools: the others are not offered
        self.declarations.append(declaration)
        self.names.append(full)
        if namespace is not None:
            self.namespaced[full] = (namespace, name)

    def tool(self, tool: Any, where: str, namespace: str | None = None) -> None:
        kind = tool.get("type") if type(tool) is dict else None
        if type(tool) is not dict or type(kind) is not str:
            raise InvalidRequestError("a tool must be an object with a type", where=where)
        if kind == "function":
            self.function(tool, where, namespace)
        elif kind == "namespace" and namespace is None:
            name = tool.get("name")
            if type(name) is not str or not name:
                raise InvalidRequestError("a namespace needs a name", where=f"{where}.name")
            inner = tool.get("tools")
            if type(inner) is not list:
                raise InvalidRequestError("must be a list of tools", where=f"{where}.tools")
            for j, nested in enumerate(inner):
                self.tool(nested, f"{where}.tools[{j}]", name)
        elif kind in _LEFT_OUT:
            _left_out(kind, where)
        elif _SEARCH.fullmatch(kind) and namespace is None:
            self.search = True
        else:
            unsupported(
                self.policy,
                f"tool type {quoted(kind)} has no Gemini counterpart",
                f"{where}.type",
                f"drop {where} from the request",
            )


def _allowed(choice: Any) -> set[str] | None:
    if not (type(choice) is dict and choice.get("type") == "allowed_tools"):
        return None
    listed = choice.get("tools")
    if type(listed) is not list:
        raise InvalidRequestError("must list tools", where="tool_choice.tools")
    names: set[str] = set()
    for i, tool in enumerate(listed):
        if type(tool) is dict and tool.get("type") == "function" and type(tool.get("name")) is str:
            names.add(gemini_name(tool.get("namespace"), tool["name"]))
        elif not (type(tool) is dict and type(tool.get("type")) is str):
            raise InvalidRequestError("must be a tool", where=f"tool_choice.tools[{i}]")
    return names


def _calling(
    choice: Any, names: list[str], search: bool, policy: Unsupported
) -> tuple[Mode | None, list[str] | None]:
    if choice is None or choice == "auto":
        return ("auto" if choice == "auto" else None), None
    if choice == "none":
        return "none", None
    if choice == "required":
        return "any", None
    kind = choice.get("type") if type(choice) is dict else None
    if kind == "function":
        name = choice.get("name")
        full = gemini_name(choice.get("namespace"), name) if type(name) is str else name
        if full not in names:
            raise InvalidRequestError(
                f"names a function the request does not declare: {quoted(name)}",
                where="tool_choice.name",
            )
        return "any", [full]
    if kind == "allowed_tools":
        mode = choice.get("mode", "auto")
        if mode not in ("auto", "required"):
            raise InvalidRequestError('must be "auto" or "required"', where="tool_choice.mode")
        return ("auto" if mode == "auto" else "any"), None
    if type(kind) is str and _SEARCH.fullmatch(kind) and search:
        unsupported(
            policy,
            "Gemini cannot be made to search: it decides when to",
            "tool_choice",
            'send tool_choice "auto"',
        )
        return None, None
    if type(kind) is str:
        unsupported(
            policy,
            f"Gemini has no tools of type {quoted(kind)} to choose",
            "tool_choice",
            'send tool_choice "auto", "none", "required" or a function',
        )
        return None, None
    raise InvalidRequestError(
        'must be "auto", "none", "required", a function, a tool type or allowed_tools',
        where="tool_choice",
    )


def responses_tools(
    body: JSONObject, family: ModelFamily, *, target: SchemaTarget, policy: Unsupported
) -> ResponsesTools:
    """The functions, search and choice of a Responses request's tools."""
    declared = body.get("tools")
    if declared is None:
        declared = []
    if type(declared) is not list:
        raise InvalidRequestError("must be a list", where="tools")
    choice = body.get("tool_choice")
    state = _Declared(target, policy, _allowed(choice))
    for i, tool in enumerate(declared):
        state.tool(tool, f"tools[{i}]")
    search = state.search
    if search and state.names and family.generation < 3:
        search = False
        warn(
            "tools: Gemini before 3 refuses Google Search beside function tools; web_search"
            " left out (the model is offered the functions)",
            UnsupportedWarning,
        )
    mode, only = _calling(choice, state.names, search, policy)
    parallel = body.get("parallel_tool_calls")
    if parallel is not None and type(parallel) is not bool:
        raise InvalidRequestError("must be a boolean", where="parallel_tool_calls")
    if parallel is False and len(state.names) > 1:
        unsupported(
            policy,
            "Gemini cannot be kept from calling several functions at once",
            "parallel_tool_calls",
            "drop parallel_tool_calls: false from the request, or declare one tool",
        )
    tools = Tools(state.declarations, search=search, mode=mode, only=only)
    return ResponsesTools(tools, state.namespaced)
