"""Every setting reaches the worker processes: ``rxgem serve`` runs one per core by
default, and each builds its settings from the environment ``ServerSettings.to_env()``
exported. The fields are enumerated from the dataclass, so a field added later is
covered here without a line of this file changing (or the test says which value to add).
"""

from __future__ import annotations

import argparse
import types
from dataclasses import MISSING, Field, fields
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

import pytest
from server_harness import KEY, TOKEN

from rxgem.cli.serve import _environment, add_serve_parser
from rxgem.server import ENV, ServerSettings, SettingsError, settings_from_env

_TEXTS: dict[str, Any] = {
    # the values that must have a form: a URL, a level, an address, a store...
    "upstream": "http://127.0.0.1:9/v1beta",
    "api_key": KEY,
    "access_token": "ya29.an-access-token",
    "client_tokens": (TOKEN, "tok-second-1b2c3d"),
    "log_level": "debug",
    "cors_origins": ("https://chat.example.com", "http://127.0.0.1:3000"),
    "host": "::1",
    "allowed_hosts": ("api.example.com", "[::1]"),
    "pipeline": {"signature_in_id": True},
    "store": "/tmp/rxgem-responses.sqlite3",
    "record": "/tmp/rxgem-tapes",
    # budgets at least the per-request limits (which are changed too)
    "max_bytes_in_flight": 200_000_000,
    "max_values_in_flight": 5_000_000,
    "inspect_spool": "/tmp/rxgem-inspect-spool",
    "upstream_api": "interactions",  # one of the registry's (UPSTREAM_APIS)
}
_PASS_THROUGH = frozenset({"pass_through_auth"})
"""Pass-through auth excludes a key, tokens and the inspector: set in a second object."""
_EXCLUDED_BY_PASS_THROUGH = frozenset({"api_key", "access_token", "client_tokens", "inspect"})


def _default(field: Field[Any]) -> Any:
    if field.default is not MISSING:
        return field.default
    assert field.default_factory is not MISSING
    return field.default_factory()


def _other(name: str, hint: Any, default: Any) -> Any:
    """A value of ``name`` other than its default, from its type where that is enough."""
    if name in _TEXTS:
        return _TEXTS[name]
    if get_origin(hint) in (Union, types.UnionType):
        hint = next(a for a in get_args(hint) if a is not type(None))
    if get_origin(hint) is Literal:
        return next(v for v in get_args(hint) if v != default)
    if hint is bool:
        return not default
    if hint is int:
        return 7 if default is None else default * 2 + 1
    if hint is float:
        return 2.5 if default is None else default * 2 + 1.5
    if hint is str and name.endswith("_client"):
        return "httpx"
    raise AssertionError(f"add a non-default value for ServerSettings.{name} to _TEXTS")


def _changed() -> tuple[dict[str, Any], dict[str, Any]]:
    """Two sets of settings values that between them change every field."""
    hints = get_type_hints(ServerSettings)
    every = {f.name: _other(f.name, hints[f.name], _default(f)) for f in fields(ServerSettings)}
    for f in fields(ServerSettings):
        assert every[f.name] != _default(f), f.name
    main = {k: v for k, v in every.items() if k not in _PASS_THROUGH}
    through = {k: v for k, v in every.items() if k not in _EXCLUDED_BY_PASS_THROUGH}
    return main, through


def test_every_field_set_to_another_value_survives_the_trip_to_the_workers() -> None:
    """Before: ``to_env()`` left ``record`` out, so with several workers (the default)
    ``rxgem serve --record DIR`` recorded nothing."""
    for values in _changed():
        settings = ServerSettings(**values)
        env = settings.to_env()
        assert set(env) == set(ENV.values())  # every field has its variable, even at default
        assert settings_from_env(env) == settings
    defaults = ServerSettings(api_key=KEY)
    assert settings_from_env(defaults.to_env()) == defaults


def test_an_empty_variable_means_the_default_and_a_stale_one_is_overwritten() -> None:
    """The workers inherit the serve command's environment: a variable the settings do not
    use (a stale ``RXGEM_RECORD`` of the shell, say) must not survive ``to_env()``."""
    settings = ServerSettings(api_key=KEY)
    stale = dict.fromkeys(ENV.values(), "stale")
    assert settings_from_env({**stale, **settings.to_env()}) == settings
    assert settings_from_env({ENV["api_key"]: KEY, ENV["record"]: ""}).record is None


def test_a_list_value_with_a_comma_is_refused_rather_than_split_in_the_workers() -> None:
    settings = ServerSettings(api_key=KEY, client_tokens=("one,two",))
    with pytest.raises(SettingsError, match="comma") as caught:
        settings.to_env()
    assert "one,two" not in str(caught.value)


def _argv(name: str, value: Any) -> list[str]:
    flag = "--" + {"client_tokens": "client_token", "cors_origins": "cors_origin"}.get(
        name, "allowed_host" if name == "allowed_hosts" else name
    ).replace("_", "-")
    if isinstance(value, bool):
        return [flag] if value else []
    if isinstance(value, tuple):
        return [part for item in value for part in (flag, str(item))]
    return [flag, str(value)]


def test_every_setting_given_as_a_flag_reaches_the_settings() -> None:
    """The serve command's flags become the same environment: no setting is carried by
    hand beside the others (``--record`` was)."""
    parser = argparse.ArgumentParser()
    add_serve_parser(parser.add_subparsers())
    for values in _changed():
        argv = ["serve"]
        for name, value in values.items():
            if name == "pipeline":
                argv += ["--signature-in-id"]
            else:
                argv += _argv(name, value)
        env = _environment(parser.parse_args(argv))
        assert settings_from_env(env) == ServerSettings(**values)
