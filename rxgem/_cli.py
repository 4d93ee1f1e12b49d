"""The ``rxgem`` command line: ``convert`` a capture, run the offline ``demo``, or ``chat``.

Exit codes: 0 success, 1 the stream ended with an error (the OpenAI error frame
was written), 2 a usage error or an input that cannot be read. Errors are one
line on stderr (``rxgem: error: …``), never a traceback.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import contextlib
import json
import os
import re
import sys
import warnings
from collections.abc import Callable, Iterator
from typing import IO, Any, NoReturn, cast

import reactivex
from reactivex import Observable
from reactivex import operators as ops

from . import __version__, samples
from .core import (
    ChatCompletionChunk,
    ChunkAccumulator,
    InvalidRequestError,
    RxGemError,
    assemble,
    error_payload,
)
from .operators import gemini_to_openai, pipeline_stages, sse_encode
from .viz._describe import describe, short

__all__ = ["main"]

_READ_SIZE = 64 * 1024


class _UsageError(Exception):
    pass


def _chunks_of(stream: IO[bytes]) -> Iterator[bytes]:
    read: Callable[[int], bytes] = getattr(stream, "read1", stream.read)
    while True:
        block = read(_READ_SIZE)
        if not block:
            return
        yield block


def _open(path: str) -> IO[bytes]:
    if path == "-":
        return sys.stdin.buffer
    try:
        return open(path, "rb")
    except OSError as exc:
        raise _UsageError(f"cannot read {path!r}: {exc.strerror or exc}") from None


def _fail(message: str, code: int) -> int:
    print(f"rxgem: error: {' '.join(message.split())}", file=sys.stderr)
    return code


def _convert(args: argparse.Namespace) -> int:
    source = _open(args.file)
    out = sys.stdout.buffer
    failure: list[BaseException] = []
    reader_gone = False

    def write(frame: bytes) -> None:
        nonlocal reader_gone
        if reader_gone:
            return
        try:
            out.write(frame)
            out.flush()
        except BrokenPipeError:  # the reader went away (e.g. `| head`): stop quietly
            reader_gone = True

    def blocks() -> Iterator[bytes]:
        for block in _chunks_of(source):
            if reader_gone:
                return
            yield block

    def on_error(error: Exception) -> None:
        failure.append(error)

    try:
        reactivex.from_iterable(blocks()).pipe(
            gemini_to_openai(
                model=args.model,
                include_usage=not args.no_usage,
                reasoning_field=None if args.reasoning_field == "none" else args.reasoning_field,
                slot_policy=args.slot_policy,
                allow_truncated=args.allow_truncated,
                api=args.api,
                render_code=not args.no_render_code,
                signature_in_id=args.signature_in_id,
            ),
            sse_encode(),
        ).subscribe(write, on_error)
    except OSError as exc:  # reading the input failed mid-way
        return _fail(f"cannot read {args.file!r}: {exc.strerror or exc}", 2)
    finally:
        if source is not sys.stdin.buffer:
            source.close()
    if reader_gone:
        _silence_broken_pipe()
    if failure:
        return _fail(str(failure[0]), 1)
    return 0


# -- demo ---------------------------------------------------------------------------


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _decoded_size(data: str) -> int | None:
    """The number of bytes ``data`` (base64) stands for, ``None`` if it is not base64."""
    try:
        return len(base64.b64decode(data, validate=True))
    except (binascii.Error, ValueError):
        return None


def _part_line(entry: dict[str, Any]) -> str:
    """One ``extra_content.google.parts`` entry: its kind and what it holds, in a few words."""
    part = entry.get("part") or {}
    kind = next((k for k in part if k not in ("thought", "thoughtSignature")), "?")
    value = part.get(kind)
    value = value if isinstance(value, dict) else {}
    if kind == "executableCode":
        code = value.get("code") or ""
        what = f"{str(value.get('language', '')).lower()}, {_count(code.count(chr(10)), 'line')}"
    elif kind == "codeExecutionResult":
        output = value.get("output") or ""
        what = f"{value.get('outcome', '')}, {_count(output.count(chr(10)), 'line')} of output"
    elif kind in ("inlineData", "fileData"):
        what = str(value.get("mimeType") or value.get("fileUri") or "")
        if "image_index" in entry:
            what += f" -> images[{entry['image_index']}]"
        if "audio_bytes" in entry:
            what += f" -> audio, {_count(entry['audio_bytes'], 'byte')}"
    elif kind in ("toolCall", "toolResponse"):
        what = f"{value.get('toolType', '')} id={value.get('id')}"
    else:
        what = short(json.dumps(value, ensure_ascii=False), 60)
    notes = [what] if what else []
    if part.get("thought"):
        notes.append("thought")
    if part.get("thoughtSignature"):
        notes.append("with thought signature")
    return f"{kind} ({', '.join(notes)})" if notes else kind


def _rich(message: dict[str, Any], write: Callable[[str], None]) -> None:
    """What a message holds beyond text and calls: parts, images, audio, cited sources."""
    google = (message.get("extra_content") or {}).get("google") or {}
    entries = google.get("parts") or []
    for entry in entries:
        write(f"      parts[{entry.get('index')}]: {_part_line(entry)}")
    for number, image in enumerate(message.get("images") or ()):
        url = str((image.get("image_url") or {}).get("url", ""))
        head, comma, data = url.partition(",")
        size = _decoded_size(data) if url.startswith("data:") and comma else None
        if size is not None:
            mime = head.removeprefix("data:").removesuffix(";base64")
            write(f"      images[{number}]: {mime}, {_count(size, 'byte')}")
        else:
            write(f"      images[{number}]: {short(url, 100)}")
    audio = message.get("audio")
    if audio:
        size = _decoded_size(str(audio.get("data", "")))
        kinds = [e["part"]["inlineData"].get("mimeType") for e in entries if "audio_bytes" in e]
        shown = _count(size, "byte") if size is not None else "not base64"
        write(f"      audio: {audio.get('id')}, {shown}" + (f" of {kinds[0]}" if kinds else ""))
    annotations = [a.get("url_citation") or {} for a in message.get("annotations") or ()]
    if annotations:
        content = message.get("content") or ""
        spans: dict[tuple[int, int], list[dict[str, Any]]] = {}
        for cite in annotations:
            spans.setdefault((cite.get("start_index", 0), cite.get("end_index", 0)), []).append(
                cite
            )
        write(f"      sources ({_count(len(spans), 'cited span')}):")
        for (start, end), cites in spans.items():
            write(f"        [{start}:{end}] {short(content[start:end], 90)!r}")
            for cite in cites:
                title = cite.get("title") or "(no title)"
                write(f"          {title}  {cite.get('url')}")
    grounding = google.get("grounding_metadata") or {}
    if grounding.get("webSearchQueries"):
        write(
            f"      search queries: {json.dumps(grounding['webSearchQueries'], ensure_ascii=False)}"
        )
    urls = (google.get("url_context_metadata") or {}).get("urlMetadata") or []
    for entry in urls:
        write(f"      url context: {entry.get('retrievedUrl')} ({entry.get('urlRetrievalStatus')})")


def _has_code(message: dict[str, Any]) -> bool:
    google = (message.get("extra_content") or {}).get("google") or {}
    return any(
        "executableCode" in (e.get("part") or {}) or "codeExecutionResult" in (e.get("part") or {})
        for e in google.get("parts") or ()
    )


def _demo_one(name: str, verbose: bool, write: Callable[[str], None]) -> int:
    from .viz import Recorder  # the demo's recording is viz's own (drawing is not needed)

    data = samples.read(name)
    expected = samples.expected().get(name, {})
    recorder = Recorder()
    failure: list[Exception] = []
    chunks: list[ChatCompletionChunk] = []
    pieces = [data[i : i + 97] for i in range(0, len(data), 97)]  # arbitrary network-like splits
    stages = pipeline_stages(clock=lambda: 0, api=expected.get("api", "gemini"))
    stream: Observable[Any] = reactivex.from_iterable(pieces)
    for stage, operator in stages:
        stream = stream.pipe(operator, recorder.tap(stage))
    stream.subscribe(chunks.append, failure.append)

    write(f"== {name}  ({len(data)} bytes, fed in {len(pieces)} pieces)")
    write(f"   {expected.get('description', '')}")
    if verbose:
        for number, (stage, _) in enumerate(stages, 1):
            values = recorder.values(stage)
            write(f"  {number}. {stage}: {len(values)} emission(s)")
            for value in values:
                write(f"       {describe(value)}")
    final = assemble(chunks)
    write("  assembled OpenAI message:")
    for choice in final["choices"]:
        message = choice["message"]
        write(f"    choice {choice['index']}: finish_reason={choice['finish_reason']}")
        if message.get("reasoning_content"):
            write(f"      reasoning: {short(message['reasoning_content'], 100)}")
        if message.get("refusal"):
            write(f"      refusal:   {short(message['refusal'], 100)}")
        if message.get("content") and _has_code(message):  # the code and its output in full
            write("      content:")
            for line in message["content"].splitlines():
                write(f"        | {line}")
        elif message.get("content"):
            write(f"      content:   {short(message['content'], 100)}")
        for call in message.get("tool_calls") or ():
            function = call["function"]
            write(f"      tool_calls[{call['index']}]: {function['name']}({function['arguments']})")
        _rich(message, write)
    if final["usage"]:
        write(f"    usage: {json.dumps(final['usage'])}")
    if failure:
        payload = error_payload(failure[0])["error"]
        write(f"  stream error: {payload['type']}: {payload['message']}")
    write("")
    return 0


def _demo(args: argparse.Namespace) -> int:
    available = samples.names()
    if args.list:
        descriptions = samples.expected()
        for name in available:
            print(f"{name:32} {descriptions.get(name, {}).get('description', '')}")
        return 0
    if args.all:
        chosen = available
    else:
        name = args.sample if args.sample.endswith(".sse") else args.sample + ".sse"
        if name not in available:
            raise _UsageError(f"no sample named {args.sample!r} (see `rxgem demo --list`)")
        chosen = [name]
    print(
        "rxgem demo: shipped Gemini captures through the pipeline, offline"
        " (no network, no API key).\n"
    )
    for name in chosen:
        _demo_one(name, verbose=not args.all or args.verbose, write=print)
    return 0


# -- chat ---------------------------------------------------------------------------

_EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh")
_ENV_KEYS = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
_PROJECT = re.compile(r"[A-Za-z0-9][A-Za-z0-9.:_-]*")
_LOCATION = re.compile(r"[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*")
# the request layer's hint names a Python keyword argument the command does not have
_WARN_HINT = re.compile(r"\s*\(unsupported=\"warn\"[^)]*\)")
# a warning that starts with the request path it is about
_WARNING_PATH = re.compile(r"(reasoning_effort|model|tools(?:[\[.]\S*)?): ")
_NO_KEY = (
    "no Gemini API key: pass --api-key KEY or set GEMINI_API_KEY (or GOOGLE_API_KEY);"
    " get a key at https://aistudio.google.com/apikey"
    " (for Vertex AI: --vertex PROJECT/LOCATION --access-token TOKEN)"
)


def _secret(value: str, source: str) -> str:
    """A key or token, trimmed; refused (without echoing it) if it cannot be a header value."""
    value = value.strip()
    if not value or any(not 0x21 <= ord(c) <= 0x7E for c in value):
        raise _UsageError(f"{source} is empty or has spaces or control characters")
    return value


def _vertex_base_url(spec: str) -> str:
    project, slash, location = spec.partition("/")
    if not slash or not _PROJECT.fullmatch(project) or not _LOCATION.fullmatch(location):
        raise _UsageError(
            f"--vertex takes PROJECT/LOCATION (e.g. my-project/us-central1), not {spec!r}"
        )
    host = "aiplatform.googleapis.com"
    if location != "global":
        host = f"{location}-{host}"
    return f"https://{host}/v1/projects/{project}/locations/{location}/publishers/google"


def _chat_transport(args: argparse.Namespace) -> dict[str, Any]:
    """``base_url`` and the credential (``api_key`` or ``access_token``) from the flags."""
    if args.api_key is not None and args.access_token is not None:
        raise _UsageError("give --api-key or --access-token, not both")
    base_url = args.base_url
    if args.vertex is not None:
        if base_url is not None:
            raise _UsageError("give --vertex or --base-url, not both")
        base_url = _vertex_base_url(args.vertex)
        if args.access_token is None:
            raise _UsageError(
                "--vertex needs --access-token TOKEN (Vertex AI takes an OAuth token,"
                ' e.g. --access-token "$(gcloud auth print-access-token)")'
            )
    if args.access_token is not None:
        return {"base_url": base_url, "access_token": _secret(args.access_token, "--access-token")}
    if args.api_key is not None:
        return {"base_url": base_url, "api_key": _secret(args.api_key, "--api-key")}
    for name in _ENV_KEYS:
        if os.environ.get(name):
            return {"base_url": base_url, "api_key": _secret(os.environ[name], name)}
    raise _UsageError(_NO_KEY)


def _read_tools(path: str) -> list[Any]:
    """The ``--tools`` file: a JSON list of OpenAI tools (checked further by the translation)."""
    try:
        with open(path, encoding="utf-8-sig") as file:
            text = file.read()
    except OSError as exc:
        raise _UsageError(f"--tools: cannot read {path!r}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise _UsageError(f"{path}: not UTF-8 text") from None
    try:
        tools = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _UsageError(
            f"{path}: not JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        ) from None
    if type(tools) is not list:
        raise _UsageError(
            f'{path}: must be a JSON list of tools: [{{"type": "function", "function": {{...}}}}]'
        )
    return tools


class _Chat:
    """One ``rxgem chat`` session: the OpenAI messages so far, and how to show answers."""

    def __init__(self, args: argparse.Namespace, transport: dict[str, Any]) -> None:
        self.args = args
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
        _fail(self._redact(message), 1)

    def _warn(self, caught: list[warnings.WarningMessage]) -> None:
        for warning in caught:
            text = _WARNING_PATH.sub(
                lambda m: f"{self._where(m.group(1))}: ", str(warning.message), count=1
            )
            if text not in self.warned:
                self.warned.add(text)
                print(f"rxgem: warning: {self._redact(text)}", file=sys.stderr)

    def _explain(self, exc: InvalidRequestError) -> str:
        reason = _WARN_HINT.sub("", exc.reason)
        return f"{self._where(exc.where)}: {reason}" if exc.where else reason

    # -- requests

    def _translated(self, messages: list[dict[str, Any]]) -> Observable[ChatCompletionChunk]:
        """The request for ``messages``, sent (lazily); its warnings shown once."""
        from .client import chat_completions

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
        except InvalidRequestError as exc:
            raise _UsageError(self._explain(exc)) from None

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
            self.error(str(exc))
            return None
        choices = accumulator.result()["choices"]
        message: dict[str, Any] = dict(choices[0]["message"]) if choices else {}
        message["role"] = "assistant"
        for call in message.get("tool_calls") or ():
            call.pop("index", None)
        return message

    def _show_json(self, stream: Observable[ChatCompletionChunk], acc: ChunkAccumulator) -> None:
        from ._bridge import iterate

        out = sys.stdout.buffer
        try:
            with iterate(stream.pipe(ops.do_action(acc.feed), sse_encode())) as frames:
                for frame in frames:
                    out.write(frame)
                    out.flush()
        finally:
            out.flush()

    def _show_text(self, stream: Observable[ChatCompletionChunk], acc: ChunkAccumulator) -> None:
        from ._bridge import iterate

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
            raise _UsageError("no prompt, and no stdin to read a conversation from")
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


def _chat(args: argparse.Namespace) -> int:
    return _Chat(args, _chat_transport(args)).run()


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rxgem",
        description="Turn Gemini streamGenerateContent SSE into OpenAI chat.completion.chunk SSE.",
    )
    parser.add_argument("--version", action="version", version=f"rxgem {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    convert = commands.add_parser(
        "convert",
        help="convert a Gemini capture (SSE or JSON lines) to the OpenAI SSE stream on stdout",
        description="Convert a Gemini capture (SSE, or JSON lines with one response per line)"
        " to the OpenAI SSE stream on stdout. On a stream error the chunks produced so far"
        " are written, then an OpenAI error frame; the exit code is then 1.",
    )
    convert.add_argument("file", nargs="?", default="-", help="capture file, or - for stdin")
    convert.add_argument("--model", help="the model name to put on every chunk")
    convert.add_argument("--no-usage", action="store_true", help="omit the final usage chunk")
    convert.add_argument(
        "--reasoning-field",
        choices=("reasoning_content", "reasoning", "none"),
        default="reasoning_content",
        help="the delta field for thought text (default: reasoning_content)",
    )
    convert.add_argument(
        "--slot-policy",
        choices=("latest", "positional", "every_part"),
        default="latest",
        help="how id-less tool calls are matched across events (default: latest)",
    )
    convert.add_argument(
        "--allow-truncated",
        action="store_true",
        help="end a stream without finishReason with a finish instead of an error",
    )
    convert.add_argument(
        "--api",
        choices=("gemini", "vertex"),
        default="gemini",
        help="whose numbers enums sent as integers (enum-encoding=int) are read with"
        " (default: gemini)",
    )
    convert.add_argument(
        "--no-render-code",
        action="store_true",
        help="keep code execution out of the content (it stays in extra_content.google.parts)",
    )
    convert.add_argument(
        "--signature-in-id",
        action="store_true",
        help="also carry each call's thought signature in its id (<id>__thought__<signature>)",
    )
    convert.set_defaults(run=_convert)

    demo = commands.add_parser(
        "demo",
        help="replay shipped sample captures through the pipeline, offline",
        description="Replay a shipped Gemini sample through each stage of the pipeline and"
        " show what every stage emits and the assembled OpenAI message.",
    )
    demo.add_argument("sample", nargs="?", default="thinking_tools", help="sample name")
    demo.add_argument("--list", action="store_true", help="list the samples")
    demo.add_argument("--all", action="store_true", help="show every sample's final message")
    demo.add_argument("-v", "--verbose", action="store_true", help="with --all: every stage")
    demo.set_defaults(run=_demo)

    from .server import add_serve_parser  # Starlette and uvicorn load only when it runs

    add_serve_parser(commands)

    chat = commands.add_parser(
        "chat",
        help="talk to Gemini from the terminal, in OpenAI Chat Completions (needs a key)",
        description="Send a prompt to Gemini as an OpenAI Chat Completions request and stream"
        " the answer: text as it arrives, reasoning dimmed, tool calls with their final"
        " arguments, usage at the end. Without a prompt, a conversation: one message per"
        " line of stdin until EOF or /exit; when the model calls tools, each call's result"
        " is read as the next line (JSON or text).",
    )
    chat.add_argument(
        "prompt", nargs="?", help="the user message (without one: a conversation on stdin)"
    )
    chat.add_argument("--model", default="gemini-2.5-flash", help="default: gemini-2.5-flash")
    chat.add_argument("--system", help="a system message")
    chat.add_argument(
        "--tools",
        metavar="FILE",
        help='a JSON file with a list of OpenAI tools: [{"type": "function", "function": {...}}]',
    )
    chat.add_argument(
        "--reasoning-effort",
        choices=_EFFORTS,
        help="how much the model thinks (mapped to Gemini's thinkingConfig)",
    )
    chat.add_argument(
        "--api-key", metavar="KEY", help="default: GEMINI_API_KEY, else GOOGLE_API_KEY"
    )
    chat.add_argument(
        "--access-token", metavar="TOKEN", help="an OAuth token sent instead of a key (Vertex AI)"
    )
    chat.add_argument(
        "--vertex",
        metavar="PROJECT/LOCATION",
        help="Vertex AI in this project and location (needs --access-token)",
    )
    chat.add_argument(
        "--base-url", metavar="URL", help="API base URL (default: Google AI Studio v1beta)"
    )
    chat.add_argument("--json", action="store_true", help="print the OpenAI SSE stream instead")
    chat.set_defaults(run=_chat)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``rxgem`` command."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        code: int = args.run(args)
    except _UsageError as exc:
        return _fail(str(exc), 2)
    except BrokenPipeError:
        return _silence_broken_pipe()
    except KeyboardInterrupt:
        return 130
    except RxGemError as exc:  # pragma: no cover - streams report errors through on_error
        return _fail(str(exc), 1)
    return code


def _silence_broken_pipe() -> NoReturn:
    # the reader went away (e.g. `| head`): exit quietly without a flush error
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    sys.exit(1)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
