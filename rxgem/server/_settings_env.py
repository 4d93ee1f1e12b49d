"""The settings' environment form: :func:`settings_from_env` (what ``rxgem serve`` and
each of its worker processes read); :meth:`ServerSettings.to_env` is the way back."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import fields
from typing import Any, Final, cast

from ..transport import DEFAULT_BASE_URL
from ._settings import COUNTS, ENV, SECONDS, ServerSettings, SettingsError, UpstreamAPI

__all__ = ["settings_from_env"]

_KEY_FALLBACKS: Final = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
_TRUE: Final = frozenset({"1", "true", "yes", "on"})
_FALSE: Final = frozenset({"", "0", "false", "no", "off"})


def _flag(environ: Mapping[str, str], name: str) -> bool:
    value = environ.get(name, "").strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise SettingsError(f"{name} must be 1 or 0 (true/false), not {value!r}")


def _number(environ: Mapping[str, str], name: str, kind: type[int] | type[float]) -> Any:
    env_name = ENV[name]
    text = environ.get(env_name, "").strip().replace("_", "")
    if not text:
        return _DEFAULTS[name]
    try:
        return kind(text)
    except ValueError:
        what = "a whole number" if kind is int else "a number of seconds"
        raise SettingsError(f"{env_name} must be {what}, not {text!r}") from None


def settings_from_env(environ: Mapping[str, str] | None = None) -> ServerSettings:
    """Server settings from environment variables (``os.environ`` by default).

    Every setting has one: ``RXGEM_`` and its name in capitals (see :data:`ENV`):
    ``RXGEM_UPSTREAM``, ``RXGEM_API_KEY`` (else ``GEMINI_API_KEY``, else
    ``GOOGLE_API_KEY``; those two are not read with pass-through auth or an access
    token), ``RXGEM_ACCESS_TOKEN``, ``RXGEM_CLIENT_TOKENS`` and ``RXGEM_CORS_ORIGINS``
    (comma-separated), ``RXGEM_HOST`` and ``RXGEM_ALLOWED_HOSTS`` (comma-separated),
    ``RXGEM_PASS_THROUGH_AUTH`` and ``RXGEM_METRICS`` (``1``/``0``),
    ``RXGEM_LOG_LEVEL``, the numbers: ``RXGEM_KEEP_ALIVE``,
    ``RXGEM_MAX_REQUEST_BYTES``, ``RXGEM_HEAD_TIMEOUT``, ..., and ``RXGEM_PIPELINE``,
    the pipeline options as a JSON object (``{"signature_in_id": true}``), and the
    response store: ``RXGEM_STORE`` (a path or URL), ``RXGEM_NO_STORE`` (``1``/``0``),
    ``RXGEM_STORE_TTL`` (seconds) and its limits, ``RXGEM_STORE_MAX_ITEMS``,
    ``RXGEM_STORE_MAX_CHAIN``, ``RXGEM_STORE_MAX_RECORD_BYTES``,
    ``RXGEM_STORE_MAX_CONVERSATION_BYTES``, ``RXGEM_STORE_TIMEOUT``;
    ``RXGEM_UPSTREAM_CLIENT`` (``auto``, ``aiohttp``, ``httpx``), ``RXGEM_UPSTREAM_API``
    (``generate-content``, ``interactions``) and ``RXGEM_INTERACTIONS_STORE``
    (``1``/``0``), ``RXGEM_RECORD`` (a directory of cassettes) and
    ``RXGEM_RECORD_MAX_FILES``. An empty variable means the default.

    Raises:
        SettingsError: a value is malformed, or the settings are inconsistent.
    """
    env = os.environ if environ is None else environ
    pass_through = _flag(env, ENV["pass_through_auth"])
    api_key = env.get(ENV["api_key"]) or None
    access_token = env.get(ENV["access_token"]) or None
    if api_key is None and access_token is None and not pass_through:
        api_key = next((env[name] for name in _KEY_FALLBACKS if env.get(name)), None)
    numbers = {
        name: _number(env, name, int if name in COUNTS else float) for name in (*SECONDS, *COUNTS)
    }
    return ServerSettings(
        upstream=env.get(ENV["upstream"]) or DEFAULT_BASE_URL,
        api_key=api_key,
        access_token=access_token,
        client_tokens=_list(env, "client_tokens"),
        pass_through_auth=pass_through,
        log_level=env.get(ENV["log_level"]) or "info",
        cors_origins=_list(env, "cors_origins"),
        host=env.get(ENV["host"], "").strip() or "127.0.0.1",
        allowed_hosts=_list(env, "allowed_hosts"),
        metrics=_flag(env, ENV["metrics"]),
        pipeline=_pipeline(env),
        store=env.get(ENV["store"]) or None,
        no_store=_flag(env, ENV["no_store"]),
        store_ttl=_store_ttl(env),
        upstream_client=env.get(ENV["upstream_client"], "").strip().lower() or "auto",
        upstream_api=cast(
            UpstreamAPI, env.get(ENV["upstream_api"], "").strip().lower() or "generate-content"
        ),
        interactions_store=_flag(env, ENV["interactions_store"]),
        record=env.get(ENV["record"]) or None,
        inspect=_flag(env, ENV["inspect"]),
        **numbers,
    )


def _store_ttl(environ: Mapping[str, str]) -> float | None:
    text = environ.get(ENV["store_ttl"], "").strip().replace("_", "")
    if not text:
        return None
    try:
        return float(text)
    except ValueError:
        name = ENV["store_ttl"]
        raise SettingsError(f"{name} must be a number of seconds, not {text!r}") from None


def _pipeline(environ: Mapping[str, str]) -> dict[str, Any]:
    text = environ.get(ENV["pipeline"], "").strip()
    try:
        options = json.loads(text) if text else {}
    except ValueError:
        options = None
    if not isinstance(options, dict):
        raise SettingsError(f"{ENV['pipeline']} must be a JSON object, not {text!r}")
    return options


def _list(environ: Mapping[str, str], name: str) -> tuple[str, ...]:
    return tuple(t.strip() for t in environ.get(ENV[name], "").split(",") if t.strip())


_DEFAULTS: Final[dict[str, Any]] = {
    f.name: f.default for f in fields(ServerSettings) if f.name in (*SECONDS, *COUNTS)
}
