"""The server's settings: :class:`ServerSettings` (``_settings``), the checks that stand
alone (``_checks``) and the environment form worker processes read (``_env``).
"""

from __future__ import annotations

from ._checks import SettingsError
from ._env import settings_from_env
from ._settings import (
    ENV,
    PIPELINE_OPTIONS,
    RECORD_COUNT_ENV,
    UPSTREAM_APIS,
    UPSTREAM_CLIENTS,
    AuthMode,
    ServerSettings,
    UpstreamAPI,
    settings_env,
)

__all__ = [
    "ENV",
    "PIPELINE_OPTIONS",
    "RECORD_COUNT_ENV",
    "UPSTREAM_APIS",
    "UPSTREAM_CLIENTS",
    "AuthMode",
    "ServerSettings",
    "SettingsError",
    "UpstreamAPI",
    "settings_env",
    "settings_from_env",
]
