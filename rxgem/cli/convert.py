"""``rxgem convert``: a Gemini capture (SSE or JSON lines) to the OpenAI SSE stream on stdout.

The capture is a ``generateContent`` stream, an Interactions stream, or an Interaction
object (a non-streamed answer); ``--from`` says which API, else its first event does
(:mod:`._upstream_of`). ``--to chat`` (the default): Chat Completions chunks
(``gemini_to_openai``, then ``sse_encode``); ``--to responses``: Responses events, each a
named ``event:`` frame (``gemini_to_responses``, then ``responses_sse_encode``). On a
stream error what was produced so far is written, then an OpenAI error frame (``--to
responses``: the ``response.failed`` event, or an ``error`` event when no response had
begun); the exit code is then 1. An input that cannot be read, a ``--from`` its content
contradicts, or a flag the chosen output or upstream does not take, exits 2.
"""

from __future__ import annotations

import argparse
import itertools
import os
import re
import sys
from collections.abc import Callable, Iterator
from typing import IO, Any, Final, get_args

import reactivex
from reactivex import Observable
from reactivex import operators as ops

from ..converter import interaction_chunks, interaction_events
from ..core import MalformedStreamError, RxGemError, TruncatedStreamError
from ..core.pipeline import Upstream, stages_of
from ..operators import gemini_to_openai, gemini_to_responses, responses_sse_encode, sse_encode
from ..transport import CassetteError, cassette_bytes, read_cassette, sniff_cassette
from ._common import UsageError, fail, silence_broken_pipe
from ._pipeline_flags import Output, add_pipeline_flags, pipeline_options, refuse_flags
from ._upstream_of import LOOK, Found, upstream_of

__all__ = ["add_convert_parser", "run_convert"]

_READ_SIZE: Final = 64 * 1024
_HEAD_SIZE: Final = 64  # the bytes kept to say what a body that is not a stream looks like
_SHOWN: Final = 8  # of them, the bytes shown in hex
_BLANKS: Final = re.compile(rb"[ \t\r\n]*")
_BOM: Final = b"\xef\xbb\xbf"
_MAGIC: Final = (
    (b"\x1f\x8b", "gzip"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
    (b"BZh", "bzip2"),
    (b"\xfd7zXZ\x00", "xz"),
    (b"PK\x03\x04", "zip"),
    (b"\xff\xfe", "UTF-16 text"),
    (b"\xfe\xff", "UTF-16 text"),
)
_EOF_KEY: Final = "Ctrl-Z, Enter," if os.name == "nt" else "Ctrl-D"


def add_convert_parser(commands: Any) -> argparse.ArgumentParser:
    """Add ``convert`` to the sub-parsers ``commands``; its ``run`` is :func:`run_convert`."""
    convert: argparse.ArgumentParser = commands.add_parser(
        "convert",
        help="convert a Gemini capture (SSE or JSON lines) to the OpenAI SSE stream on stdout",
        description="Convert a Gemini capture (SSE, or JSON lines with one response or event"
        " per line) of a streamGenerateContent stream, an Interactions stream or an"
        " Interaction object, to the OpenAI SSE stream on stdout: Chat Completions chunks, or"
        " with --to responses Responses events. On a stream error what was produced so far is"
        " written, then an OpenAI error frame (Responses: response.failed); the exit code is"
        " then 1.",
    )
    convert.add_argument(
        "file",
        nargs="?",
        default="-",
        help="capture file, a cassette (rxgem serve --record), or - for stdin",
    )
    convert.add_argument(
        "--to",
        choices=get_args(Output),
        default="chat",
        help="the output: chat.completion.chunk data frames, ending with data: [DONE] (chat,"
        " the default), or the Responses API's named events, ending with response.completed,"
        " .incomplete or .failed (responses)",
    )
    convert.add_argument(
        "--from",
        dest="upstream",
        choices=get_args(Upstream),
        default=None,
        help="the Gemini API the capture comes from: a streamGenerateContent stream"
        " (generate-content), or an Interactions stream or Interaction object"
        " (interactions); default: told from its first event",
    )
    add_pipeline_flags(convert, outputs=get_args(Output))
    convert.set_defaults(run=run_convert)
    return convert


def _chunks_of(stream: IO[bytes]) -> Iterator[bytes]:
    read: Callable[[int], bytes] = getattr(stream, "read1", stream.read)
    while True:
        block = read(_READ_SIZE)
        if not block:
            return
        yield block


def _open(path: str) -> IO[bytes]:
    if path == "-":
        if sys.stdin is None:
            raise UsageError("there is no stdin to read from: pass a file")
        if sys.stdin.isatty():  # else the command would seem to hang, waiting for input
            print(
                f"rxgem convert: reading a Gemini stream from stdin ({_EOF_KEY} to end;"
                " or pass a file)",
                file=sys.stderr,
                flush=True,
            )
        return sys.stdin.buffer
    try:
        return open(path, "rb")
    except OSError as exc:
        raise UsageError(f"cannot read {path!r}: {exc.strerror or exc}") from None


def _is_binary(head: bytes) -> bool:
    """Whether the first bytes of a body are not text (a NUL, bad UTF-8, control bytes)."""
    if b"\x00" in head:
        return True
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.reason != "unexpected end of data":  # not just a character cut at the end
            return True
        text = head[: exc.start].decode("utf-8")
    return any((ord(c) < 0x20 and c not in "\t\n\r\f\v") or c == "\x7f" for c in text)


def _looks_like(head: bytes) -> str:
    """What a body's first bytes look like, in a few escaped words (never the bytes as text).

    >>> _looks_like(bytes.fromhex("1f8b0800000000000003"))
    'binary data (starts with 1f 8b 08 00 00 00 00 00 …: gzip?)'
    """
    shown = " ".join(f"{byte:02x}" for byte in head[:_SHOWN])
    more = " …" if len(head) > _SHOWN else ""
    kind = next((name for magic, name in _MAGIC if head.startswith(magic)), None)
    guess = f": {kind}?" if kind else ""
    return f"binary data (starts with {shown}{more}{guess})"


def _plainer(error: Exception, head: bytes) -> Exception:
    """``error``, or, for a binary body that held no event, the same error with the bytes
    described instead of quoted (a quote of binary data is mojibake)."""
    if isinstance(error, MalformedStreamError) and error.event is None and _is_binary(head):
        plain = MalformedStreamError(error.reason, snippet=_looks_like(head))
        plain.__cause__ = error
        return plain
    return error


def _upstream(args: argparse.Namespace, found: Found) -> Upstream:
    """The upstream to read: ``--from``, or what the capture is.

    Raises:
        UsageError: ``--from`` names one API and the capture's first event the other.
    """
    if found.source == "openai":
        raise UsageError(
            f"this is already OpenAI output ({found.why}), what rxgem convert writes:"
            " convert reads a Gemini capture (a streamGenerateContent or Interactions"
            " stream, or an Interaction object)"
        )
    upstream: Upstream = (
        "generate-content" if found.source == "generate-content" else "interactions"
    )
    given: Upstream | None = args.upstream
    if given is None or given == upstream or not found.sure:
        return given or upstream
    what = {
        "generate-content": "a generateContent stream",
        "interactions": "an Interactions stream",
        "interaction-object": "an Interaction object",
    }[found.source]
    raise UsageError(
        f"--from {given} was given, but this is {what} ({found.why}): pass --from"
        f" {upstream}, or leave --from out to tell it from the content"
    )


def _converter(
    args: argparse.Namespace,
    upstream: Upstream,
    described: Callable[[Exception, Observable[Any]], Observable[Any]],
) -> Callable[[Observable[bytes]], Observable[bytes]]:
    """Gemini body bytes of ``upstream`` → the SSE frames of ``args.to``'s output (an
    error described by ``described`` before it is framed).

    Raises:
        UsageError: for a flag given that the output or the upstream does not take.
    """
    if args.to == "responses":
        options = pipeline_options(args, "responses")
        refuse_flags(options, stages_of(upstream, "responses"), f"--from {upstream}")
        options["upstream"] = upstream
        return reactivex.compose(
            gemini_to_responses(**options),
            ops.catch(described),
            responses_sse_encode(),
        )
    chat = pipeline_options(args, "chat")
    refuse_flags(chat, stages_of(upstream, "chat"), f"--from {upstream}")
    chat["upstream"] = upstream
    return reactivex.compose(gemini_to_openai(**chat), ops.catch(described), sse_encode())


def _whole(
    args: argparse.Namespace, described: Callable[[Exception, Observable[Any]], Observable[Any]]
) -> Callable[[Observable[bytes]], Observable[bytes]]:
    """An Interaction object's bytes (in pieces) → the SSE frames of ``args.to``'s output.

    Raises:
        UsageError: for a flag given that the output stage does not take.
    """
    output: Output = "responses" if args.to == "responses" else "chat"
    options: dict[str, Any] = dict(pipeline_options(args, output))
    last = stages_of("interactions", output)[-1]
    refuse_flags(options, (last,), "an Interaction object (a whole answer, not a stream)")
    translate = interaction_events if output == "responses" else interaction_chunks

    def outputs(pieces: list[bytes]) -> Observable[Any]:
        def run(_: Any) -> Observable[Any]:
            try:
                values = translate(b"".join(pieces), **options)
            except RxGemError as error:  # a failed interaction: its steps' outputs, then it
                return reactivex.concat(
                    reactivex.from_iterable(error.chunks), reactivex.throw(error)
                )
            return reactivex.from_iterable(values)

        return reactivex.defer(run)

    encode = responses_sse_encode() if output == "responses" else sse_encode()
    return reactivex.compose(ops.to_list(), ops.flat_map(outputs), ops.catch(described), encode)


def _uncassette(pieces: Iterator[bytes], args: argparse.Namespace) -> Iterator[bytes]:
    """The pieces of the capture; of a cassette (docs/testing.md), its response bytes,
    with ``--from`` set to its upstream (a ``--from`` naming the other is refused)."""
    first = next(pieces, b"")
    if not sniff_cassette(first):
        return itertools.chain((first,), pieces)
    whole = first + b"".join(pieces)
    name = "stdin" if args.file == "-" else repr(args.file)
    try:
        cassette = read_cassette(whole)
        body = cassette_bytes(cassette)
    except CassetteError as exc:
        raise UsageError(f"{name}: {exc}") from None
    upstream = cassette.get("upstream")
    if upstream not in get_args(Upstream):
        raise UsageError(f"{name}: the cassette's upstream {upstream!r} is not one rxgem reads")
    if args.upstream not in (None, upstream):
        raise UsageError(
            f"--from {args.upstream} was given, but this cassette was recorded from"
            f" {upstream}: leave --from out"
        )
    args.upstream = upstream
    return iter((body,))


def _blanks_end(data: bytes) -> int:
    """Where the blanks and BOMs that :func:`upstream_of` skips end in ``data``."""
    end = len(data) - len(data.lstrip(b" \t\r\n" + _BOM))
    if not data[:end].replace(_BOM, b"").strip(b" \t\r\n"):
        return end  # all of them blanks and whole BOMs (the usual case, at C speed)
    end = 0
    while True:
        match = _BLANKS.match(data, end)
        end = match.end() if match else end
        if not data.startswith(_BOM, end):
            return end
        end += len(_BOM)


def _head(pieces: Iterator[bytes]) -> tuple[list[bytes], Found]:
    """The first pieces, read until they show what the capture is, and what it is.

    What is looked at drops the leading blanks as they come and stops growing past
    ``LOOK``, so a long run of blanks is never joined whole to each next piece."""
    read: list[bytes] = []
    seen = b""
    while True:
        block = next(pieces, b"")
        if block:
            read.append(block)
            if len(seen) < LOOK:
                seen += block
                seen = seen[_blanks_end(seen) :]
                if _BOM.startswith(seen):  # nothing yet but blanks and maybe a BOM's start
                    continue
        found = upstream_of(seen, ended=not block)
        if found is not None:
            return read, found


def run_convert(args: argparse.Namespace) -> int:
    """Convert ``args.file`` to stdout; the exit code."""
    head = bytearray()

    def described(error: Exception, _: Observable[Any]) -> Observable[Any]:
        return reactivex.throw(_plainer(error, bytes(head)))

    pipeline_options(args, "responses" if args.to == "responses" else "chat")  # before reading
    source = _open(args.file)
    from_stdin = args.file == "-"
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

    def blocks(pieces: Iterator[bytes]) -> Iterator[bytes]:
        for block in pieces:
            if reader_gone:
                return
            if len(head) < _HEAD_SIZE:
                head.extend(block[: _HEAD_SIZE - len(head)])
            yield block

    def on_error(error: Exception) -> None:
        failure.append(error)

    try:
        pieces = _uncassette(_chunks_of(source), args)
        first, found = _head(pieces)
        if found.source == "openai":
            _upstream(args, found)  # refuses it
        if found.source == "interaction-object" and args.upstream != "generate-content":
            convert = _whole(args, described)
        else:
            convert = _converter(args, _upstream(args, found), described)
        body = blocks(itertools.chain(first, pieces))
        reactivex.from_iterable(body).pipe(convert).subscribe(write, on_error)
    except OSError as exc:  # reading the input failed mid-way
        return fail(f"cannot read {args.file!r}: {exc.strerror or exc}", 2)
    finally:
        if not from_stdin:
            source.close()
    if reader_gone:
        silence_broken_pipe()
    if failure:
        hint = ""
        if isinstance(failure[0], TruncatedStreamError):
            hint = " (pass --allow-truncated to end it with what arrived)"
        return fail(f"{failure[0]}{hint}", 1)
    return 0
