"""``rxgem demo``: the shipped Gemini samples through each stage of the pipeline, offline.

One sample (the main one by default) shows what every stage emits and the assembled
OpenAI message; ``--all`` shows every sample's message; ``--list`` names them.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import json
from collections.abc import Callable
from typing import Any, Final

import reactivex
from reactivex import Observable

from .. import samples
from ..core import ChatCompletionChunk
from ..core.chat import assemble
from ..operators import pipeline_stages
from ..viz import Recorder, describe, short
from ._common import UsageError

__all__ = ["add_demo_parser", "run_demo"]

_MAIN_SAMPLE: Final = "thinking_tools"


def add_demo_parser(commands: Any) -> argparse.ArgumentParser:
    """Add ``demo`` to the sub-parsers ``commands``; its ``run`` is :func:`run_demo`."""
    demo: argparse.ArgumentParser = commands.add_parser(
        "demo",
        help="replay shipped sample captures through the pipeline, offline",
        description="Replay a shipped Gemini sample through each stage of the pipeline and"
        " show what every stage emits and the assembled OpenAI message.",
    )
    demo.add_argument("sample", nargs="?", help=f"sample name (default: {_MAIN_SAMPLE})")
    which = demo.add_mutually_exclusive_group()
    which.add_argument("--list", action="store_true", help="list the samples")
    which.add_argument("--all", action="store_true", help="show every sample's final message")
    demo.add_argument("-v", "--verbose", action="store_true", help="with --all: every stage")
    demo.set_defaults(run=run_demo)
    return demo


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
        # a terminal's words: the exception itself, not an API's error object
        write(f"  stream error: {type(failure[0]).__name__}: {failure[0]}")
    write("")
    return 0


def _refuse_ignored(args: argparse.Namespace) -> None:
    """A usage error for an argument the chosen mode would silently ignore."""
    if args.sample is not None and args.list:
        raise UsageError(f"--list takes no sample name: leave out {args.sample!r}")
    if args.sample is not None and args.all:
        raise UsageError(f"--all shows every sample: give {args.sample!r} or --all, not both")
    if args.verbose and args.list:
        raise UsageError("--verbose is for --all (--list only names the samples)")


def run_demo(args: argparse.Namespace) -> int:
    """List the samples, or replay the chosen ones; the exit code."""
    _refuse_ignored(args)
    available = samples.names()
    if args.list:
        descriptions = samples.expected()
        for name in available:
            print(f"{name:32} {descriptions.get(name, {}).get('description', '')}")
        return 0
    if args.all:
        chosen = available
    else:
        sample = args.sample or _MAIN_SAMPLE
        name = sample if sample.endswith(".sse") else sample + ".sse"
        if name not in available:
            raise UsageError(f"no sample named {sample!r} (see `rxgem demo --list`)")
        chosen = [name]
    print(
        "rxgem demo: shipped Gemini captures through the pipeline, offline"
        " (no network, no API key).\n"
    )
    for name in chosen:
        _demo_one(name, verbose=not args.all or args.verbose, write=print)
    return 0
