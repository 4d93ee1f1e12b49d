"""The harness of the Python client tests (``tests/clients/test_clients_*.py``).

Each client runs unchanged against ``rxgem serve`` (the app in real uvicorn, its defaults:
the response store on, in a SQLite file of the test's own) in front of a strict FakeGemini
answering from its scenarios as a Gemini 3 model would: tools offered get a signed call,
a tool result gets an answer. ``upstream`` is ``"generateContent"`` or ``"interactions"``
(``rxgem serve --upstream-api interactions``, Google keeping nothing: every turn goes back
whole).

:func:`replayed_calls` reads what reached the fake: every ``functionCall`` (or
``function_call`` step) that a request sent back, with the signature it came back with.
A client keeps Gemini's reasoning only if each one carries the signature the fake gave it:
the fake counts those that came back bare or with Google's placeholder.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from server_harness import serving, settings_for

from rxgem.testing import FakeGemini, ReceivedRequest

G3 = "gemini-3-flash-preview"
UPSTREAMS = ("generateContent", "interactions")
TOOLS_CACHE = Path.home() / ".cache" / "rxgem-test-tools"


@contextlib.contextmanager
def strict_gateway(
    upstream: str, tmp_path: Path, **overrides: Any
) -> Iterator[tuple[FakeGemini, str]]:
    """A strict FakeGemini answering from its scenarios, and ``rxgem serve`` in front of it
    (store on, in ``tmp_path``); yields the fake and the server's root URL."""
    settings: dict[str, Any] = {"store": str(tmp_path / "responses.sqlite3"), **overrides}
    if upstream == "interactions":
        settings["upstream_api"] = "interactions"
    with FakeGemini(strict=True) as fake, serving(settings_for(fake, **settings)) as url:
        yield fake, url


@dataclass(frozen=True)
class Replayed:
    """A call the model made, as a later request sent it back to the fake."""

    request: int
    """Which request (0-based, among the fake's generate/create requests) sent it back."""
    name: str
    signature: str | None
    """The signature it came back with (on Interactions: of the thought step before it)."""


def _model_requests(fake: FakeGemini) -> list[ReceivedRequest]:
    return [
        r
        for r in fake.requests
        if r.method == "POST"
        and (r.path.endswith("GenerateContent") or r.path.endswith("/interactions"))
    ]


def _from_contents(contents: Sequence[Any]) -> Iterator[tuple[str, str | None]]:
    """Each model content's first call (the one Gemini signs; parallel calls after it go
    unsigned), with its ``thoughtSignature``."""
    for content in contents:
        if not isinstance(content, Mapping) or content.get("role") != "model":
            continue
        first = next((p for p in content.get("parts") or () if "functionCall" in p), None)
        if first is not None:
            yield str(first["functionCall"].get("name")), first.get("thoughtSignature")


def _from_steps(steps: Sequence[Any]) -> Iterator[tuple[str, str | None]]:
    """Each model run's first ``function_call`` step, with the signature of the last
    ``thought`` step before it in that run (the thought that signs it)."""
    signature: str | None = None
    called = False
    for step in steps:
        kind = step.get("type") if isinstance(step, Mapping) else None
        if kind in ("user_input", "function_result"):
            signature, called = None, False
        elif kind == "thought":
            signature = step.get("signature") or signature
        elif kind == "function_call" and not called:
            called = True
            yield str(step.get("name")), signature


def replayed_calls(fake: FakeGemini) -> list[Replayed]:
    """Every call the model made that a request sent back, in order of the requests."""
    found: list[Replayed] = []
    for index, request in enumerate(_model_requests(fake)):
        body = request.json
        if "contents" in body:
            pairs = _from_contents(body["contents"])
        else:
            steps = body.get("input")
            pairs = _from_steps(steps if isinstance(steps, list) else [])
        found.extend(Replayed(index, name, signature) for name, signature in pairs)
    return found


def assert_signatures_kept(fake: FakeGemini, *, replays: int) -> None:
    """At least ``replays`` calls were sent back (the test replays what it says it does),
    and the fake counted none that came back without the signature it gave, or with
    one of Google's dummies (``FakeGemini.lost_signatures``, ``placeholder_signatures``)."""
    replayed = replayed_calls(fake)
    assert len(replayed) >= replays, f"expected {replays} replayed calls: {replayed}"
    counts = (fake.lost_signatures, fake.placeholder_signatures)
    assert counts == (0, 0), f"lost, placeholders {counts} of {replayed}: {fake.signature_problems}"
    assert all(r.signature for r in replayed), replayed


def model_requests(fake: FakeGemini) -> list[ReceivedRequest]:
    """The fake's generate and create requests (not the model list or gets)."""
    return _model_requests(fake)


# ------------------------------------------------------------------- a client in its own venv


def tool_python(name: str) -> str | None:
    """The Python of the venv ``.ci/run`` makes for client ``name``
    (``~/.cache/rxgem-test-tools/NAME``), if it is there."""
    python = TOOLS_CACHE / name / "bin" / "python"
    return str(python) if python.is_file() else None


def run_script(python: str, script: Path, *args: str, timeout: float = 120) -> str:
    """``python SCRIPT ARGS`` (a client in its own venv); its stdout, or the test fails."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "RXGEM_"))}
    result = subprocess.run(
        [python, str(script), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=environment,
        stdin=subprocess.DEVNULL,
    )
    said = result.stderr[-4000:]  # the end of a traceback (a client's can be very long)
    assert result.returncode == 0, f"{script.name} exited {result.returncode}:\n{said}"
    return result.stdout
