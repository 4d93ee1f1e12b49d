"""Which ``Host`` names the server answers, and what a JSON route accepts, sans-IO.

A web page can make a browser send requests to any address, a local server's too: a
"simple" one (``Content-Type: text/plain``, no preflight) from any origin, and any
request at all from a page whose name an attacker's DNS rebinds to 127.0.0.1 (the page
is then same-origin with the server, and reads the answers; the browser sends the
page's name as ``Host``). So the JSON routes take only ``application/json``, which a
page cannot send cross-origin without a preflight the server refuses, and a server
bound to a loopback address answers only loopback names, which no attacker's DNS
serves, unless the deployment names its hosts.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Final

__all__ = [
    "LOOPBACK_NAMES",
    "HostCheck",
    "host_name",
    "is_json",
    "is_loopback",
    "normalize_allowed_host",
    "normalize_allowed_hosts",
]

LOOPBACK_NAMES: Final = ("localhost", "127.0.0.1", "[::1]")
"""What a loopback-bound server answers by default (any loopback address, in fact)."""

_NAME: Final = re.compile(r"[a-z0-9_](?:[a-z0-9_.-]*[a-z0-9_])?")
_PORT: Final = re.compile(r"[0-9]{1,5}")


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a bind address or a ``Host`` name, without port) is loopback."""
    host = host.lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.removeprefix("[").removesuffix("]")).is_loopback
    except ValueError:
        return False


def normalize_allowed_host(name: str) -> str:
    """An allowed host as it is matched: lower case, an IPv6 address in brackets,
    ``*`` as is. Raises ``ValueError`` for anything else (a port, a scheme, a path)."""
    name = name.strip().lower()
    if name == "*":
        return name
    inner = name.removeprefix("[").removesuffix("]")
    if ":" in inner:
        if name != inner and not (name.startswith("[") and name.endswith("]")):
            raise ValueError(name)
        return f"[{ipaddress.IPv6Address(inner).compressed}]"
    if name != inner or not _NAME.fullmatch(name):
        raise ValueError(name)
    return name


def normalize_allowed_hosts(names: tuple[str, ...]) -> tuple[str, ...]:
    """Each of ``names`` normalized (``("*",)`` if one is ``*``); raises ``ValueError``
    naming the first that is not a name or an address."""
    normalized = []
    for name in names:
        try:
            normalized.append(normalize_allowed_host(name))
        except (ValueError, AttributeError):
            raise ValueError(
                f"an allowed host is a name or an address without scheme, port or path,"
                f" like api.example.com or [::1], or *; not {name!r}"
            ) from None
    return ("*",) if "*" in normalized else tuple(dict.fromkeys(normalized))


def host_name(value: str | None) -> str | None:
    """The name of a ``Host`` header value (lower case, without its port, an IPv6
    address in its compressed form); ``None`` if it is missing or malformed."""
    if not value:
        return None
    value = value.lower()
    if value.startswith("["):
        inner, bracket, rest = value[1:].partition("]")
        if not bracket:
            return None
        try:
            name = f"[{ipaddress.IPv6Address(inner).compressed}]"
        except ValueError:
            return None
    else:
        name, colon, port = value.partition(":")
        rest = colon + port
        if not _NAME.fullmatch(name):
            return None
    if rest and not (rest.startswith(":") and _PORT.fullmatch(rest[1:])):
        return None
    return name


class HostCheck:
    """The ``Host`` names a server answers: ``allowed`` (``*`` for any), or, when none
    are named, the loopback names for a server bound to a loopback address and any name
    for one bound elsewhere (see ``docs/server.md``)."""

    def __init__(self, bind: str, allowed: tuple[str, ...]) -> None:
        self.names = frozenset(allowed)
        self.loopback = not allowed and is_loopback(bind)
        self.enabled = self.loopback or (bool(allowed) and "*" not in allowed)

    def allows(self, value: str | None) -> bool:
        """Whether a request whose ``Host`` header is ``value`` is answered."""
        if not self.enabled:
            return True
        name = host_name(value)
        if name is None:
            return False
        return is_loopback(name) if self.loopback else name in self.names

    def refusal(self) -> str:
        """Why a request was refused, and what the deployment sets."""
        if self.loopback:
            expected = "a loopback name (localhost, 127.0.0.1, [::1])"
        else:
            expected = "one of the server's allowed hosts"
        return (
            f"this server answers only requests whose Host header is {expected};"
            " a deployment reached under another name lists it with --allowed-host"
            " (RXGEM_ALLOWED_HOSTS)"
        )


def is_json(content_type: str | None) -> bool:
    """Whether a ``Content-Type`` value is ``application/json`` (parameters allowed)."""
    if content_type is None:
        return False
    return content_type.partition(";")[0].strip().lower() == "application/json"
