"""``rxgem chat``: talk to Gemini from the terminal, in OpenAI Chat Completions.

One prompt, or a conversation on stdin (one message per line; tool results read as the
next lines). The answer streams as it arrives: text, reasoning dimmed, tool calls,
usage; ``--json`` prints the OpenAI SSE stream instead.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import re
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

from reactivex import Observable
from reactivex import operators as ops

from ..core import ChatCompletionChunk, GeminiAPIError, InvalidRequestError, RxGemError
from ..core.chat import ChunkAccumulator
from ..operators import sse_encode
from ._common import UsageError, fail
from ._fake import add_fake_scenario, fake_gemini
from ._vertex_flags import adc_token

__all__ = ["add_chat_parser", "run_chat"]

_EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh")
_ENV_KEYS = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
_PROJECT = re.compile(r"[A-Za-z0-9][A-Za-z0-9.:_-]*")
_LOCATION = re.compile(r"[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*")
# the request layer's hint names a Python keyword argument the command does not have
# a warning that starts with the request path it is about
_WARNING_PATH = re.compile(r"(reasoning_effort|model|tools(?:[\[.]\S*)?): ")
_NO_KEY = (
    "no Gemini API key: pass --api-key KEY or set GEMINI_API_KEY (or GOOGLE_API_KEY);"
    " get a key at https://aistudio.google.com/apikey"
    " (for Vertex AI: --vertex PROJECT/LOCATION, with --access-token TOKEN or Application"
    " Default Credentials);"
    " or try it offline, without a key: rxgem chat --fake"
)
_NOT_GEMINI = (
    "{url} answered {status} to Gemini's API path: it looks like an OpenAI endpoint"
    " (rxgem serve is one: point an OpenAI client at its /v1). rxgem chat talks to Gemini:"
    " leave --base-url out, give a Gemini base URL (FakeGemini's base_url), or pass --fake"
)


def _secret(value: str, source: str) -> str:
    """A key or token, trimmed; refused (without echoing it) if it cannot be a header value."""
    value = value.strip()
    if not value or any(not 0x21 <= ord(c) <= 0x7E for c in value):
        raise UsageError(f"{source} is empty or has spaces or control characters")
    return value


def _vertex_base_url(spec: str) -> str:
    project, slash, location = spec.partition("/")
    if not slash or not _PROJECT.fullmatch(project) or not _LOCATION.fullmatch(location):
        raise UsageError(
            f"--vertex takes PROJECT/LOCATION (e.g. my-project/us-central1), not {spec!r}"
        )
    host = "aiplatform.googleapis.com"
    if location != "global":
        host = f"{location}-{host}"
    return f"https://{host}/v1/projects/{project}/locations/{location}/publishers/google"


def _chat_transport(args: argparse.Namespace) -> dict[str, Any]:
    """``base_url`` and the credential (``api_key`` or ``access_token``) from the flags."""
    if args.fake:
        if args.base_url is not None or args.vertex is not None:
            raise UsageError("--fake is the upstream: leave out --base-url and --vertex")
        return {"base_url": args.fake, "api_key": "fake-gemini-key"}
    if args.api_key is not None and args.access_token is not None:
        raise UsageError("give --api-key or --access-token, not both")
    base_url = args.base_url
    if args.vertex is not None:
        if base_url is not None:
            raise UsageError("give --vertex or --base-url, not both")
        base_url = _vertex_base_url(args.vertex)
    if args.vertex is not None and args.access_token is None and args.api_key is None:
        return {"base_url": base_url, "token_of": adc_token()}
    if args.access_token is not None:
        return {"base_url": base_url, "access_token": _secret(args.access_token, "--access-token")}
    if args.api_key is not None:
        return {"base_url": base_url, "api_key": _secret(args.api_key, "--api-key")}
    for name in _ENV_KEYS:
        if os.environ.get(name):
            return {"base_url": base_url, "api_key": _secret(os.environ[name], name)}
    raise UsageError(_NO_KEY)


def _read_tools(path: str) -> list[Any]:
    """The ``--tools`` file: a JSON list of OpenAI tools (checked further by the translation)."""
    try:
        with open(path, encoding="utf-8-sig") as file:
            text = file.read()
    except OSError as exc:
        raise UsageError(f"--tools: cannot read {path!r}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise UsageError(f"{path}: not UTF-8 text") from None
    try:
        tools = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(
            f"{path}: not JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        ) from None
    if type(tools) is not list:
        raise UsageError(
            f'{path}: must be a JSON list of tools: [{{"type": "function", "function": {{...}}}}]'
        )
    return tools


class _Chat:
    """One ``rxgem chat`` session: the OpenAI messages so far, and how to show answers."""

    def __init__(self, args: argparse.Namespace, transport: dict[str, Any]) -> None:
        self.args = args
        self.token_of: Callable[[], str] | None = transport.pop("token_of", None)
        self.transport = transport
        self.secrets = [v for k, v in transport.items() if k in ("api_key", "access_token")]
        self.body: dict[str, Any] = {
            "model": args.model,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if args.tools is not None:
            self.body["tools"] = _read_tools(args.tools)
        if args.reasoning_effort is not None:
            self.body["reasoning_effort"] = args.reasoning_effort
        self.messages: list[dict[str, Any]] = []
        if args.system is not None:
            self.messages.append({"role": "system", "content": args.system})
        self.out = sys.stdout
        styled = self.out.isatty() and not args.json
        self.dim, self.reset = ("\x1b[2m", "\x1b[0m") if styled else ("", "")
        self.interactive = sys.stdin is not None and sys.stdin.isatty()
        self.failed = False
        self.warned: set[str] = set()
        self.shown = False  # whether an answer was printed since the last blank line

    # -- messages to the user

    def _where(self, where: str) -> str:
        """A request path in the words of the command line."""
        if where == "reasoning_effort":
            return "--reasoning-effort"
        if where == "model":
            return "--model"
        if where.startswith("tools") and self.args.tools is not None:
            inner = where.removeprefix("tools")
            return f"{self.args.tools}: at {inner}" if inner else self.args.tools
        return where

    def _redact(self, text: str) -> str:
        for secret in self.secrets:
            if len(secret) >= 8:  # shorter is no real key, and would blot out words
                text = text.replace(secret, "***")
        return text

    def error(self, message: str) -> None:
        self.failed = True
        fail(self._redact(message), 1)

    def _warn(self, caught: list[warnings.WarningMessage]) -> None:
        for warning in caught:
            text = _WARNING_PATH.sub(
                lambda m: f"{self._where(m.group(1))}: ", str(warning.message), count=1
            )
            if text not in self.warned:
                self.warned.add(text)
                print(f"rxgem: warning: {self._redact(text)}", file=sys.stderr)

    def _not_gemini(self, exc: RxGemError) -> str | None:
        """For a 405, or a 404 not worded as Gemini's, from a ``--base-url``:
        the message saying it is no Gemini endpoint, and what to give instead."""
        url = self.args.base_url
        if url is None or not isinstance(exc, GeminiAPIError):
            return None
        # Gemini's own 404 (an unknown model) names a google.rpc status; an OpenAI body does not
        if exc.http_status == 405 or (exc.http_status == 404 and exc.status is None):
            return f"{exc}: " + _NOT_GEMINI.format(url=url, status=exc.http_status)
        return None

    def _explain(self, exc: InvalidRequestError) -> str:
        reason = exc.reason  # the client-facing reason: no library hint in it
        return f"{self._where(exc.where)}: {reason}" if exc.where else reason

    # -- requests

    def _translated(self, messages: list[dict[str, Any]]) -> Observable[ChatCompletionChunk]:
        """The request for ``messages``, sent (lazily); its warnings shown once."""
        from ..client import chat_completions

        if self.token_of is not None:  # fresh each turn: a conversation can outlast an hour
            self.transport["access_token"] = token = self.token_of()
            self.secrets.append(token)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            stream = chat_completions(
                {**self.body, "messages": messages}, include_thoughts=True, **self.transport
            )
        self._warn(caught)
        return cast("Observable[ChatCompletionChunk]", stream)

    def check(self) -> None:
        """Translate a first request now, so a bad flag or tools file stops before anything."""
        try:
            self._translated([*self.messages, {"role": "user", "content": "?"}])
        except RxGemError as exc:  # a request that cannot be, or credentials not found
            raise UsageError(
                self._explain(exc) if isinstance(exc, InvalidRequestError) else str(exc)
            ) from None

    def answer(self) -> dict[str, Any] | None:
        """Send the conversation, show the answer; the assistant message, or None on error."""
        try:
            stream = self._translated(self.messages)
        except RxGemError as exc:
            self.error(self._explain(exc) if isinstance(exc, InvalidRequestError) else str(exc))
            return None
        accumulator = ChunkAccumulator()
        try:
            if self.args.json:
                self._show_json(stream, accumulator)
            else:
                self._show_text(stream, accumulator)
        except RxGemError as exc:
            self.error(self._not_gemini(exc) or str(exc))
            return None
        choices = accumulator.result()["choices"]
        message: dict[str, Any] = dict(choices[0]["message"]) if choices else {}
        message["role"] = "assistant"
        for call in message.get("tool_calls") or ():
            call.pop("index", None)
        return message

    def _show_json(self, stream: Observable[ChatCompletionChunk], acc: ChunkAccumulator) -> None:
        from ..bridge import iterate

        out = sys.stdout.buffer
        try:
            with iterate(stream.pipe(ops.do_action(acc.feed), sse_encode())) as frames:
                for frame in frames:
                    out.write(frame)
                    out.flush()
        finally:
            out.flush()

    def _show_text(self, stream: Observable[ChatCompletionChunk], acc: ChunkAccumulator) -> None:
        from ..bridge import iterate

        out, dim, reset = self.out, self.dim, self.reset
        mode = ""  # what was printed last: "", "reasoning" or "content"
        try:
            with iterate(stream) as chunks:
                for chunk in chunks:
                    acc.feed(chunk)
                    for choice in chunk.choices:
                        if choice.index != 0:
                            continue
                        delta = choice.delta
                        thought = delta.reasoning_content or delta.reasoning
                        if thought:
                            if mode != "reasoning":
                                out.write(f"{dim}[reasoning]{reset}\n" if not mode else "\n")
                            out.write(f"{dim}{thought}{reset}")
                            mode = "reasoning"
                        if delta.content:
                            if mode == "reasoning":
                                out.write("\n\n")
                            out.write(delta.content)
                            mode = "content"
                        out.flush()
        finally:
            if mode:
                out.write("\n")
                out.flush()
                self.shown = True
        result = acc.result()
        for choice in result["choices"][:1]:
            for call in choice["message"].get("tool_calls") or ():
                function = call["function"]
                out.write(f"{dim}tool call:{reset} {function['name']}({function['arguments']})\n")
            out.write(f"{dim}finish: {choice['finish_reason']}{reset}\n")
        if result["usage"]:
            usage = result["usage"]
            out.write(
                f"{dim}usage: {usage['prompt_tokens']} prompt + {usage['completion_tokens']}"
                f" completion = {usage['total_tokens']} tokens{reset}\n"
            )
        out.flush()
        self.shown = True

    # -- the conversation

    def read(self, marker: str) -> str | None:
        """A line of stdin (the marker shown only on a terminal); None at EOF or ``/exit``."""
        try:
            if not self.interactive:
                line = input()
            elif self.args.json or not self.out.isatty():
                sys.stderr.write(marker)
                sys.stderr.flush()
                line = input()
            else:
                line = input(marker)
        except EOFError:
            if self.interactive:
                print(file=sys.stderr)
            return None
        line = line.removesuffix("\r")
        return None if line.strip() == "/exit" else line

    def turn(self, text: str, *, conversation: bool) -> bool:
        """One user message and the answers to it (with tool results, in a conversation).

        A failed turn is reported and forgotten. False when the user ended the session
        while asked for a tool result.
        """
        start = len(self.messages)
        self.messages.append({"role": "user", "content": text})
        while True:
            try:
                message = self.answer()
            except KeyboardInterrupt:
                if not conversation:
                    raise
                print("rxgem: interrupted; the message is forgotten", file=sys.stderr)
                message = None
            if message is None:
                del self.messages[start:]
                return True
            self.messages.append(message)
            calls = message.get("tool_calls") or []
            if not calls or not conversation:
                return True
            for number, call in enumerate(calls, 1):
                which = f" [{number}/{len(calls)}]" if len(calls) > 1 else ""
                result = self.read(f"result of {call['function']['name']}{which}> ")
                if result is None:
                    return False
                self.messages.append(
                    {"role": "tool", "tool_call_id": call["id"], "content": result}
                )

    def run(self) -> int:
        self.check()
        if self.args.prompt is not None:
            self.turn(self.args.prompt, conversation=False)
            return 1 if self.failed else 0
        if sys.stdin is None:
            raise UsageError("no prompt, and no stdin to read a conversation from")
        if self.interactive:
            with contextlib.suppress(ImportError):
                import readline  # noqa: F401  (line editing and history for input())
            print(
                f"{self.dim}rxgem chat with {self.args.model}: one message per line;"
                f" /exit or Ctrl-D to leave{self.reset}",
                file=sys.stderr,
            )
        while True:
            line = self.read("> ")
            if line is None:
                break
            if not line.strip():
                continue
            if self.shown and not self.args.json:
                self.out.write("\n")  # a blank line between turns
                self.shown = False
            if not self.turn(line, conversation=True):
                break
        return 1 if self.failed else 0


def run_chat(args: argparse.Namespace) -> int:
    """One prompt, or a conversation on stdin; the exit code."""
    fake = fake_gemini(args)
    if fake is None:
        return _Chat(args, _transport(args)).run()
    with fake:
        args.fake = fake.base_url
        return _Chat(args, _transport(args)).run()


def _transport(args: argparse.Namespace) -> dict[str, Any]:
    """The transport's keywords: where, the credential, and the recording sink."""
    transport = _chat_transport(args)
    if args.record is not None:
        transport["record"] = _turn_files(Path(args.record))
    return transport


def _turn_files(first: Path) -> Callable[[dict[str, Any]], None]:
    """A ``record=`` sink: the first exchange to ``first``, the next ones beside it
    (``chat-2.json``, ``chat-3.json``, ...); a write that fails is said once."""
    turns = itertools.count(1)
    warned: list[bool] = []

    def write(cassette: dict[str, Any]) -> None:
        n = next(turns)
        path = first if n == 1 else first.with_name(f"{first.stem}-{n}{first.suffix or '.json'}")
        try:
            path.write_text(json.dumps(cassette, ensure_ascii=False, indent=1) + "\n", "utf-8")
        except OSError as exc:
            if not warned:
                warned.append(True)
                print(
                    f"rxgem chat: cannot record to {path}: {exc.strerror or exc}"
                    " (the chat goes on)",
                    file=sys.stderr,
                )

    return write


def add_chat_parser(commands: Any) -> argparse.ArgumentParser:
    """Add ``chat`` to the sub-parsers ``commands``; its ``run`` is :func:`run_chat`."""
    chat: argparse.ArgumentParser = commands.add_parser(
        "chat",
        help="talk to Gemini from the terminal, in OpenAI Chat Completions (needs a key,"
        " or --fake)",
        description="Send a prompt to Gemini as an OpenAI Chat Completions request and stream"
        " the answer: text as it arrives, reasoning dimmed, tool calls with their final"
        " arguments, usage at the end. Without a prompt, a conversation: one message per"
        " line of stdin until EOF or /exit; when the model calls tools, each call's result"
        " is read as the next line (JSON or text).",
    )
    chat.add_argument(
        "prompt", nargs="?", help="the user message (without one: a conversation on stdin)"
    )
    chat.add_argument(
        "--model", default="gemini-2.5-flash", help="the Gemini model (default: gemini-2.5-flash)"
    )
    chat.add_argument("--system", metavar="TEXT", help="a system message to start with")
    chat.add_argument(
        "--tools",
        metavar="FILE",
        help='a JSON file with a list of OpenAI tools: [{"type": "function", "function": {...}}]',
    )
    chat.add_argument(
        "--reasoning-effort",
        choices=_EFFORTS,
        help="how much the model thinks before answering (default: the model's own)",
    )
    chat.add_argument(
        "--api-key",
        metavar="KEY",
        help="your Gemini API key (default: GEMINI_API_KEY, else GOOGLE_API_KEY)",
    )
    chat.add_argument(
        "--access-token", metavar="TOKEN", help="an OAuth token sent instead of a key (Vertex AI)"
    )
    chat.add_argument(
        "--vertex",
        metavar="PROJECT/LOCATION",
        help="Vertex AI in this project and location (--access-token, else Application Default"
        " Credentials, refreshed before they expire)",
    )
    chat.add_argument(
        "--base-url",
        metavar="URL",
        help="a Gemini API base URL (default: Google AI Studio); not an OpenAI one",
    )
    chat.add_argument(
        "--fake",
        action="store_true",
        help="answer from FakeGemini, started in this process, instead of Gemini (offline,"
        " no key needed)",
    )
    add_fake_scenario(chat)
    chat.add_argument(
        "--json", action="store_true", help="print the raw OpenAI SSE stream instead of text"
    )
    chat.add_argument(
        "--record",
        metavar="FILE",
        help="write what Gemini answers as a cassette to FILE (later turns beside it:"
        " FILE-2.json, ...), without the key; read it with rxgem convert (docs/testing.md)",
    )
    chat.set_defaults(run=run_chat)
    return chat
