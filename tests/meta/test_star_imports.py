"""Every public package star-imports on the core install: a name in ``__all__`` that needs an
optional extra (the server's aiohttp, Starlette, uvicorn, redis...; google-auth) would make
``from rxgem.x import *`` fail for a user who installed only ``rxgem``."""

from __future__ import annotations

import subprocess
import sys

import pytest

PACKAGES = (
    "rxgem",
    "rxgem.bridge",
    "rxgem.client",
    "rxgem.converter",
    "rxgem.core",
    "rxgem.inprocess",
    "rxgem.items",
    "rxgem.operators",
    "rxgem.request",
    "rxgem.store",
    "rxgem.testing",
    "rxgem.transport",
    "rxgem.upstreams",
    "rxgem.viz",
)

EXTRAS = (
    "aiohttp",
    "starlette",
    "uvicorn",
    "redis",
    "prometheus_client",
    "opentelemetry",
    "google",
    "google.auth",
)


@pytest.mark.parametrize("package", PACKAGES)
def test_a_star_import_needs_no_extra(package: str) -> None:
    blocked = "; ".join(f"sys.modules[{name!r}] = None" for name in EXTRAS)
    code = f"import sys; {blocked}; from {package} import *"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]


def test_rxgem_uses_none_of_its_own_deprecated_names() -> None:
    packages = ", ".join((*PACKAGES, "rxgem.server", "rxgem.gateway", "rxgem.cli"))
    code = f"import {packages}"
    run = subprocess.run(
        [sys.executable, "-W", "error::DeprecationWarning", "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr[-2000:]
