"""What a request says about calling its functions, as Gemini's scenarios follow it.

generateContent: ``toolConfig.functionCallingConfig`` (``mode``: ``AUTO``, ``ANY``,
``NONE``, ``VALIDATED``; ``allowedFunctionNames``), snake_case accepted; Interactions:
``generation_config.tool_choice`` (``"auto"``, ``"any"``, ``"none"``, or
``{"allowed_tools": {"mode", "tools"}}``). ``ANY`` always calls (even after a tool
result), ``NONE`` never does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["calling"]


def _get(holder: Any, *names: str) -> Any:
    if not isinstance(holder, Mapping):
        return None
    return next((holder[name] for name in names if name in holder), None)


def calling(body: Mapping[str, Any]) -> tuple[str, tuple[str, ...]]:
    """The mode (lower case; ``"auto"`` when unset) and the allowed function names
    (empty: any of them)."""
    config = _get(
        _get(body, "toolConfig", "tool_config"), "functionCallingConfig", "function_calling_config"
    )
    if isinstance(config, Mapping):
        mode, names = (
            config.get("mode"),
            _get(config, "allowedFunctionNames", "allowed_function_names"),
        )
    else:
        choice = _get(_get(body, "generation_config", "generationConfig"), "tool_choice")
        allowed = _get(choice, "allowed_tools")
        mode, names = (
            (choice, None) if allowed is None else (allowed.get("mode"), allowed.get("tools"))
        )
    listed = tuple(str(n) for n in names) if isinstance(names, list) else ()
    return (str(mode).lower() if isinstance(mode, str) else "auto"), listed
