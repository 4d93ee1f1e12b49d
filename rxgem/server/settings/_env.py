"""The settings' environment form: :func:`settings_from_env` (what ``rxgem serve`` and
each of its worker processes read); :meth:`ServerSettings.to_env` is the way back."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from dataclasses import MISSING, Field, fields
from typing import Any, Final

from ...upstreams import upstream_of
from ._settings import ENV, FORMS, ServerSettings, SettingsError

__all__ = ["settings_from_env"]

_KEY_FALLBACKS: Final = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
_TRUE: Final = frozenset({"1", "true", "yes", "on"})
_FALSE: Final = frozenset({"", "0", "false", "no", "off"})


def settings_from_env(environ: Mapping[str, str] | None = None) -> ServerSettings:
    """Server settings from environment variables (``os.environ`` by default).

    Every setting has one: ``RXGEM_`` and its name in capitals (see :data:`ENV`):
    ``RXGEM_UPSTREAM``, ``RXGEM_API_KEY`` (else ``GEMINI_API_KEY``, else
    ``GOOGLE_API_KEY``; those two are not read with pass-through auth, an access
    token, or an upstream that finds its own: Vertex AI's Application Default
    Credentials), ``RXGEM_ACCESS_TOKEN``, ``RXGEM_CLIENT_TOKENS`` and ``RXGEM_CORS_ORIGINS``
    (comma-separated), ``RXGEM_HOST`` and ``RXGEM_ALLOWED_HOSTS`` (comma-separated),
    ``RXGEM_PASS_THROUGH_AUTH`` and ``RXGEM_METRICS`` (``1``/``0``),
    ``RXGEM_LOG_LEVEL``, the numbers: ``RXGEM_KEEP_ALIVE``,
    ``RXGEM_MAX_REQUEST_BYTES``, ``RXGEM_HEAD_TIMEOUT``, ..., and ``RXGEM_PIPELINE``,
    the pipeline options as a JSON object (``{"signature_in_id": true}``), and the
    response store: ``RXGEM_STORE`` (a path or URL), ``RXGEM_NO_STORE`` (``1``/``0``),
    ``RXGEM_STORE_TTL`` (seconds) and its limits, ``RXGEM_STORE_MAX_ITEMS``,
    ``RXGEM_STORE_MAX_CHAIN``, ``RXGEM_STORE_MAX_RECORD_BYTES``,
    ``RXGEM_STORE_MAX_CONVERSATION_BYTES``, ``RXGEM_STORE_TIMEOUT``, and signature memory's
    ``RXGEM_SIGNATURE_TTL`` (seconds) and ``RXGEM_MAX_SIGNATURES``;
    ``RXGEM_UPSTREAM_CLIENT`` (``auto``, ``aiohttp``, ``httpx``), ``RXGEM_UPSTREAM_API``
    (``generate-content``, ``interactions``) and ``RXGEM_INTERACTIONS_STORE``
    (``1``/``0``), ``RXGEM_RECORD`` (a directory of cassettes) and
    ``RXGEM_RECORD_MAX_FILES``. An empty variable means the default.

    Raises:
        SettingsError: a value is malformed, or the settings are inconsistent.
    """
    env = os.environ if environ is None else environ
    values = {name: _value(env, name, form) for name, form in FORMS.items()}
    own = values["api_key"] or values["access_token"] or values["pass_through_auth"]
    if not own and not _finds_own(values):
        values["api_key"] = next((env[name] for name in _KEY_FALLBACKS if env.get(name)), None)
    return ServerSettings(**values)


def _finds_own(values: Mapping[str, Any]) -> bool:
    """Whether the upstream finds the server's credentials itself (Vertex AI's Application
    Default Credentials): then the Gemini API's key variables are not read for it."""
    try:
        upstream = upstream_of(
            values["upstream_api"], api=values["pipeline"].get("api"), base_url=values["upstream"]
        )
    except (ValueError, AttributeError):
        return False  # the settings' own checks say what is wrong
    return upstream.finds_credentials is not None


def _value(environ: Mapping[str, str], name: str, form: str) -> Any:
    """The setting ``name`` from its variable (see :data:`FORMS`); empty: the default."""
    env_name = ENV[name]
    raw = environ.get(env_name, "")
    text = raw.strip()
    if not text:
        return _DEFAULTS[name]()
    if form == "flag":
        return _flag(text.lower(), env_name)
    if form in ("int", "float"):
        return _number(text.replace("_", ""), env_name, int if form == "int" else float)
    if form == "list":
        return tuple(t.strip() for t in text.split(",") if t.strip())
    if form == "json":
        return _json_object(text, env_name)
    if name in _FOLDED:
        return text.lower()
    return text if name == "host" else raw


_FOLDED: Final = frozenset({"upstream_client", "upstream_api"})
"""The settings read without regard to case."""


def _flag(value: str, name: str) -> bool:
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise SettingsError(f"{name} must be 1 or 0 (true/false), not {value!r}")


def _number(text: str, name: str, kind: type[int] | type[float]) -> Any:
    try:
        return kind(text)
    except ValueError:
        what = "a whole number" if kind is int else "a number of seconds"
        raise SettingsError(f"{name} must be {what}, not {text!r}") from None


def _json_object(text: str, name: str) -> dict[str, Any]:
    try:
        options = json.loads(text)
    except ValueError:
        options = None
    if not isinstance(options, dict):
        raise SettingsError(f"{name} must be a JSON object, not {text!r}")
    return options


def _default_of(f: Field[Any]) -> Callable[[], Any]:
    if f.default_factory is not MISSING:
        return f.default_factory
    default = f.default
    return lambda: default


_DEFAULTS: Final[dict[str, Callable[[], Any]]] = {
    f.name: _default_of(f) for f in fields(ServerSettings)
}
