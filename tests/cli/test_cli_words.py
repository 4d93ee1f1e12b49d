"""The command's words, run for real in a subprocess: each error names its fix, a wrong
flag gets one line first naming the nearest flag (then where the usage is), ``rxgem`` alone
lists the commands, ``serve`` says at start where responses go and who is let in."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rxgem import samples

MODULE = [sys.executable, "-m", "rxgem.cli"]


def run(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*MODULE, *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=120,
        check=False,
    )


def test_rxgem_alone_lists_the_commands(tmp_path: Path) -> None:
    done = run(cwd=tmp_path)
    assert done.returncode == 2
    assert "required" not in done.stderr
    for command in ("convert", "demo", "serve", "chat"):
        assert f"\n    {command} " in done.stderr


def test_a_wrong_serve_flag_is_one_line_first_then_where_the_flags_are(tmp_path: Path) -> None:
    done = run("serve", "--token", "x", cwd=tmp_path)
    assert done.returncode == 2
    first, *rest = done.stderr.splitlines()
    assert first.startswith("rxgem serve: error: unrecognized arguments: --token x")
    assert "--client-token" in first
    assert rest == ["Run 'rxgem serve --help' for its options."]  # not 30 lines of usage


def test_a_misspelt_chat_flag_is_named_with_the_right_one(tmp_path: Path) -> None:
    done = run("chat", "--modle", "x", "hi", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith("rxgem chat: error: ")
    assert "(did you mean --model?)" in done.stderr.splitlines()[0]


@pytest.mark.parametrize(
    "args",
    [("serve", "--port", "x"), ("convert", "--bogus"), ("demo", "--bogus"), ("--bogus",)],
)
def test_every_usage_error_comes_first_in_two_lines(tmp_path: Path, args: tuple[str, ...]) -> None:
    done = run(*args, cwd=tmp_path)
    assert done.returncode == 2
    lines = done.stderr.splitlines()
    assert lines[0].startswith("rxgem")
    assert ": error: " in lines[0]
    assert len(lines) == 2
    assert lines[1].startswith("Run 'rxgem")
    assert lines[1].endswith("--help' for its options.")


def test_help_is_written_for_a_terminal(tmp_path: Path) -> None:
    for command in ("convert", "serve", "chat", "demo"):
        shown = run(command, "--help", cwd=tmp_path).stdout
        text = " ".join(shown.split())
        assert "SlotPolicy" not in text
        assert "this flag turns it off" not in text
    serve = " ".join(run("serve", "--help", cwd=tmp_path).stdout.split())
    assert "--no-render-code" in serve


def test_the_no_key_error_offers_fake(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("GEMINI_API_KEY", "GOOGLE_API_KEY")}
    done = run("chat", "hi", cwd=tmp_path, env=env)
    assert done.returncode == 2
    assert "no Gemini API key" in done.stderr
    assert "rxgem chat --fake" in done.stderr


def test_serve_without_a_key_offers_fake(tmp_path: Path) -> None:
    pytest.importorskip(
        "uvicorn", reason="the server's packages are missing (pip install 'rxgem[server]')"
    )
    keys = ("GEMINI_API_KEY", "GOOGLE_API_KEY", "RXGEM_API_KEY", "RXGEM_ACCESS_TOKEN")
    env = {k: v for k, v in os.environ.items() if k not in keys}
    done = run("serve", "--port", str(_free_port()), cwd=tmp_path, env=env)
    assert done.returncode == 2
    assert "no Gemini API key" in done.stderr
    assert "rxgem serve --fake" in done.stderr


def test_chat_fake_answers_offline(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("GEMINI_API_KEY", "GOOGLE_API_KEY")}
    done = run("chat", "--fake", "hi", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    assert "finish: stop" in done.stdout


def test_the_truncation_error_names_allow_truncated(tmp_path: Path) -> None:
    path = tmp_path / "truncated.sse"
    path.write_bytes(samples.read("truncated.sse"))
    for output in ("chat", "responses"):
        done = run("convert", str(path), "--to", output, cwd=tmp_path)
        assert done.returncode == 1
        assert "no finishReason" in done.stderr
        assert "--allow-truncated" in done.stderr
        assert (
            run("convert", str(path), "--to", output, "--allow-truncated", cwd=tmp_path).returncode
            == 0
        )


@pytest.mark.parametrize("output", ["chat", "responses"])
def test_openai_output_fed_to_convert_is_named(tmp_path: Path, output: str) -> None:
    capture = tmp_path / "text.sse"
    capture.write_bytes(samples.read("text.sse"))
    converted = tmp_path / "out.sse"
    converted.write_text(run("convert", str(capture), "--to", output, cwd=tmp_path).stdout)
    done = run("convert", str(converted), cwd=tmp_path)
    assert done.returncode == 2
    assert "already OpenAI output" in done.stderr
    assert "Gemini capture" in done.stderr
    assert "ended before any response arrived" not in done.stderr


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def test_serve_says_where_responses_go_and_who_gets_in(tmp_path: Path) -> None:
    pytest.importorskip(
        "uvicorn", reason="the server's packages are missing (pip install 'rxgem[server]')"
    )
    store = tmp_path / "kept.sqlite3"
    port = _free_port()
    command = [*MODULE, "serve", "--fake", "--workers", "1", "--port", str(port)]
    env = {**os.environ, "RXGEM_CLIENT_TOKENS": ""}
    with subprocess.Popen(
        [*command, "--store", str(store), "--client-token", "sekret-token-1"],
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env=env,
    ) as server:
        assert server.stderr is not None
        lines: list[str] = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not any("auth:" in line for line in lines):
            lines.append(server.stderr.readline())
        server.send_signal(signal.SIGINT)
        server.communicate(timeout=30)
    said = "".join(lines)
    assert "rxgem serve: upstream: generate-content API at http://127.0.0.1:" in said
    assert f"rxgem serve: responses: SQLite file {store}" in said
    assert "rxgem serve: auth: token required" in said
    assert "sekret-token-1" not in said


def test_chat_at_an_openai_endpoint_says_so(tmp_path: Path) -> None:
    import http.server
    import threading

    class OpenAIOnly(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # what rxgem serve answers a Gemini path under /v1
            body = b'{"error": {"message": "Method Not Allowed", "type": "invalid_request_error"}}'
            self.send_response(405)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_: object) -> None:
            pass

    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), OpenAIOnly) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        base = f"http://127.0.0.1:{server.server_address[1]}/v1"
        done = run("chat", "--base-url", base, "--api-key", "k-12345678", "hi", cwd=tmp_path)
        server.shutdown()
    assert done.returncode == 1
    assert "looks like an OpenAI endpoint" in done.stderr
    assert "--fake" in done.stderr
    assert "k-12345678" not in done.stderr
