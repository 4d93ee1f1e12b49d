"""Hypothesis strategies: valid Gemini streams, each with the outcome a correct translator gives.

A generated :class:`GeminiStream` is a list of ``GenerateContentResponse`` objects (plain JSON
data) plus its :class:`Expected` outcome, derived *by construction* from the README rules with the
default slot policy (never by running rxgem):

- text and thought parts of random Unicode (astral characters, U+2028/2029, NEL, quotes,
  backslashes, CR/LF, NUL, things that look like SSE framing);
- id-less complete calls with random JSON args, made distinguishable by construction: a new call
  is never identical to, nor a growth of, an earlier call of the same name (nor does one with
  ``{}`` args stay open for it to join), else it gets a distinguishing key or a fresh name;
- re-sends, always of the most recent id-less call of that name and in a later event:
  identical, grown (keys added, strings extended, arrays appended, recursively), or real args
  after a ``{}``/absent placeholder;
- Gemini 3 calls with ``functionCall.id``, re-sent with changed or identical args;
- parallel calls in one event (same name too) and across events;
- Vertex ``partialArgs`` streams: ``{name, willContinue}``, pieces addressing ``$.a``, ``$.a.b``,
  ``$.list[0]``, ``$['odd key']``, string values split in fragments with ``willContinue``, bare
  ``{willContinue: true}`` parts, and an ending by terminal ``{}``, by a last piece without
  ``willContinue``, by the next named call, or by the end of the stream;
- 1-3 candidates interleaved across events, finish reasons from the whole enum (unknown values
  too) on the last event, on every event, mid-stream, on a content-less terminator, or missing
  (then the stream ends with ``TruncatedStreamError``);
- usage snapshots (with counts, or count-less Vertex ones) and a prompt-block variant;
- the other parts (README "Parts"): ``executableCode``/``codeExecutionResult`` (thought or
  not, fenced in the content or the reasoning, backtick runs in the code), ``inlineData``
  images and audio clips (random bytes), PDFs, ``fileData`` (image URIs, documents, video),
  Gemini 3's built-in ``toolCall``/``toolResponse`` and ``functionResponse``, each with or
  without its own ``thoughtSignature``; signature-only parts;
- ``groundingMetadata`` in pieces from a candidate's first event (``{}``, queries, chunks that
  accumulate, supports whose segments point, in UTF-8 bytes within a ``partIndex``, at text
  the candidate sent: ASCII or not); ``logprobsResult`` on text events; ``finishMessage``,
  ``safetyRatings``, ``avgLogprobs``;
- ``finishReason``/``blockReason`` sent as integers (``enum-encoding=int``), numbered as the
  stream's API (``Expected.api``) numbers them (:data:`FINISH_NUMBERS`, unknown numbers too).

The expected rendering of parts, images, audio, annotations (character offsets of the content)
and logprobs is computed here from the parts generated (:meth:`ExpectedChoice.render`), by the
README's rules, never by rxgem.

:func:`encode` serialises the responses to SSE bytes with a :class:`Framing` drawn per example:
CR, LF or CRLF, ``ensure_ascii`` or raw UTF-8, compact or Google's ``": "`` spacing, ``data:``
with or without the space, multi-line ``data``, JSON lines, a JSON array (the body without
``alt=sse``: ``[{...},\r\n{...}]``, pretty-printed or compact, closed or cut after an element),
comments, a BOM, ``[DONE]``, a last event without its blank line.
"""

from __future__ import annotations

import base64
import dataclasses
import itertools
import json
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

__all__ = [
    "BLOCK_NUMBERS",
    "BLOCK_REASONS",
    "FINISH_NUMBERS",
    "FINISH_REASONS",
    "PROPERTIES",
    "Expected",
    "ExpectedCall",
    "ExpectedChoice",
    "ExpectedPart",
    "ExpectedToken",
    "Framing",
    "GeminiStream",
    "Rendered",
    "blocked_streams",
    "encode",
    "examples",
    "framings",
    "gemini_streams",
    "is_growth",
    "openai_finish",
    "openai_usage",
    "same_json",
    "split_points",
    "texts",
]

# -- settings ------------------------------------------------------------------------------

_SCALE = float(os.environ.get("RXGEM_HYPOTHESIS_SCALE", "1"))


def examples(n: int) -> int:
    """``n`` examples, scaled by ``RXGEM_HYPOTHESIS_SCALE`` (e.g. 10 for a long local run)."""
    return max(1, int(n * _SCALE))


settings.register_profile(
    "rxgem-properties",
    deadline=None,
    # a whole stream is a large example by nature
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.large_base_example,
    ],
    print_blob=True,
)
PROPERTIES = settings.get_profile("rxgem-properties")
"""The parent settings of the property tests (use ``@settings(PROPERTIES, max_examples=...)``).

It inherits the profile loaded when this module is imported: ``rxgem`` from ``conftest.py``
(derandomized: the same examples on every run, no example database), or the one given with
``--hypothesis-profile`` (``rxgem-explore`` for fresh examples)."""

# -- the README tables, written out independently of rxgem's code ---------------------------

FINISH_REASONS = (
    "FINISH_REASON_UNSPECIFIED",
    "STOP",
    "MAX_TOKENS",
    "SAFETY",
    "RECITATION",
    "LANGUAGE",
    "OTHER",
    "BLOCKLIST",
    "PROHIBITED_CONTENT",
    "SPII",
    "MALFORMED_FUNCTION_CALL",
    "IMAGE_SAFETY",
    "IMAGE_PROHIBITED_CONTENT",
    "IMAGE_OTHER",
    "NO_IMAGE",
    "IMAGE_RECITATION",
    "UNEXPECTED_TOOL_CALL",
    "TOO_MANY_TOOL_CALLS",
    "MISSING_THOUGHT_SIGNATURE",
    "MALFORMED_RESPONSE",
    "ESCALATION",
    "PUP_LIMITED_DISABLED",
    "CONTINUATION",
    "MODEL_ARMOR",
    "FAKE_ENUM",  # unknown values are tolerated (a recorded Vertex fixture has this one)
    "FINISH_REASON_99",  # what an unknown number (99) is named: sent as 99 with integer enums
)
_LENGTH = {"MAX_TOKENS", "CONTINUATION"}
_CONTENT_FILTER = {
    "SAFETY",
    "RECITATION",
    "BLOCKLIST",
    "PROHIBITED_CONTENT",
    "SPII",
    "IMAGE_SAFETY",
    "IMAGE_PROHIBITED_CONTENT",
    "IMAGE_RECITATION",
    "MODEL_ARMOR",
    "PUP_LIMITED_DISABLED",
}
BLOCK_REASONS = (
    "BLOCKED_REASON_UNSPECIFIED",
    "SAFETY",
    "OTHER",
    "BLOCKLIST",
    "PROHIBITED_CONTENT",
    "IMAGE_SAFETY",
    "MODEL_ARMOR",
    "JAILBREAK",
)
_UNSPECIFIED_BLOCK = {"BLOCKED_REASON_UNSPECIFIED"}

# Integer enums (`enum-encoding=int`): the numbers of the values used here, per API, from
# Google's protos (google.ai.generativelanguage.v1beta Candidate.FinishReason /
# PromptFeedback.BlockReason; google.cloud.aiplatform.v1 Candidate.FinishReason /
# PromptFeedback.BlockedReason). A name missing from an API's table is sent as a string there.
FINISH_NUMBERS: dict[str, dict[str, int]] = {
    "gemini": {
        "FINISH_REASON_UNSPECIFIED": 0,
        "STOP": 1,
        "MAX_TOKENS": 2,
        "SAFETY": 3,
        "RECITATION": 4,
        "OTHER": 5,
        "LANGUAGE": 6,
        "BLOCKLIST": 7,
        "PROHIBITED_CONTENT": 8,
        "SPII": 9,
        "MALFORMED_FUNCTION_CALL": 10,
        "IMAGE_SAFETY": 11,
        "UNEXPECTED_TOOL_CALL": 12,
        "TOO_MANY_TOOL_CALLS": 13,
        "FINISH_REASON_99": 99,  # no such value: the README names it FINISH_REASON_99
    },
    "vertex": {
        "FINISH_REASON_UNSPECIFIED": 0,
        "STOP": 1,
        "MAX_TOKENS": 2,
        "SAFETY": 3,
        "RECITATION": 4,
        "OTHER": 5,
        "BLOCKLIST": 6,
        "PROHIBITED_CONTENT": 7,
        "SPII": 8,
        "MALFORMED_FUNCTION_CALL": 9,
        "MODEL_ARMOR": 10,
        "FINISH_REASON_99": 99,
    },
}
BLOCK_NUMBERS: dict[str, dict[str, int]] = {
    "gemini": {
        "BLOCK_REASON_UNSPECIFIED": 0,
        "SAFETY": 1,
        "OTHER": 2,
        "BLOCKLIST": 3,
        "PROHIBITED_CONTENT": 4,
        "IMAGE_SAFETY": 5,
        "BLOCK_REASON_9": 9,  # unknown: <the enum's zero value less _UNSPECIFIED>_<n>
    },
    "vertex": {
        "BLOCKED_REASON_UNSPECIFIED": 0,
        "SAFETY": 1,
        "OTHER": 2,
        "BLOCKLIST": 3,
        "PROHIBITED_CONTENT": 4,
        "MODEL_ARMOR": 5,
        "JAILBREAK": 6,
        "BLOCKED_REASON_9": 9,
    },
}


def openai_finish(native: str, *, has_calls: bool) -> str:
    """The README's finish-reason table."""
    if native in _LENGTH:
        return "length"
    if native in _CONTENT_FILTER:
        return "content_filter"
    return "tool_calls" if has_calls else "stop"


_USAGE_FIELDS = (
    "promptTokenCount",
    "candidatesTokenCount",
    "totalTokenCount",
    "thoughtsTokenCount",
    "cachedContentTokenCount",
    "toolUsePromptTokenCount",
)


def openai_usage(usage: dict[str, Any]) -> dict[str, Any]:
    """The README's usage table: ``{prompt, completion, total, reasoning, cached}``."""
    prompt = usage.get("promptTokenCount", 0) + usage.get("toolUsePromptTokenCount", 0)
    completion = usage.get("candidatesTokenCount", 0) + usage.get("thoughtsTokenCount", 0)
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": usage.get("totalTokenCount", prompt + completion),
        "reasoning_tokens": usage.get("thoughtsTokenCount"),
        "cached_tokens": usage.get("cachedContentTokenCount"),
    }


def is_growth(old: Any, new: Any) -> bool:
    """The README's growth rule: same keys or more, strings extended, arrays extended, recursively;
    scalars identical (same JSON type)."""
    if isinstance(old, dict):
        return isinstance(new, dict) and all(k in new and is_growth(old[k], new[k]) for k in old)
    if isinstance(old, list):
        return (
            isinstance(new, list)
            and len(new) >= len(old)
            and all(is_growth(a, b) for a, b in zip(old, new, strict=False))
        )
    if isinstance(old, str):
        return isinstance(new, str) and new.startswith(old)
    return type(old) is type(new) and old == new


def same_json(a: Any, b: Any) -> bool:
    """Equality of JSON values that also tells ``1`` from ``1.0`` from ``True``."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


# -- leaf strategies ------------------------------------------------------------------------

_SPECIAL_TEXT = (
    "\u2028",
    "\u2029",
    "\u0085",
    '"',
    "\\",
    '\\"',
    "\n",
    "\r",
    "\r\n",
    "\t",
    "\x00",
    "\x1b",
    "\ufeff",
    "😀",
    "𝄞",
    "\U0010ffff",
    "👩‍👩‍👧",
    "é",
    "中文",
    "data: ",
    "\n\ndata: [DONE]\n\n",
    "{",
    "}]",
    "[",
    "</script>",
    "\\u0000",
    "```",
)
_CHARS = st.characters(codec="utf-8")  # every code point but the surrogates

texts = st.lists(
    st.one_of(st.text(_CHARS, max_size=10), st.sampled_from(_SPECIAL_TEXT)), max_size=5
).map("".join)
"""Random Unicode text, biased towards what breaks framing and JSON escaping."""

_KEYS = st.one_of(
    st.sampled_from(["q", "path", "city", "n", "ids", "opts", "a", "b", "", "é", "a.b", "x y"]),
    st.text(_CHARS, max_size=6),
)
_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    texts,
)
json_values = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_KEYS, inner, max_size=4),
    max_leaves=10,
)
args_objects = st.dictionaries(_KEYS, json_values, max_size=4)

# Streamed (partialArgs) arguments: containers must be non-empty (only leaves are addressable);
# numbers are what a protobuf Value holds.
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_STREAM_KEYS = st.one_of(
    st.sampled_from(["q", "location", "recipe", "ingredients", "amount", "days", "x1", "_"]),
    # bracket-quoted keys: dots, brackets, quotes, backslashes, spaces, non-ASCII (no control
    # characters: their RFC 9535 escapes are covered by a separate test)
    st.text(st.characters(codec="utf-8", exclude_categories=["Cc"]), max_size=6),
)
_STREAM_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**53), 2**53),
    st.floats(allow_nan=False, allow_infinity=False),
    texts,
)
streamed_values = st.recursive(
    _STREAM_SCALARS,
    lambda inner: (
        st.lists(inner, min_size=1, max_size=3)
        | st.dictionaries(_STREAM_KEYS, inner, min_size=1, max_size=3)
    ),
    max_leaves=8,
)
streamed_args = st.dictionaries(_STREAM_KEYS, streamed_values, max_size=4)

_NAMES = ("read_file", "search", "get_weather", "now", "f")
_B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_SIGNATURES = st.text(_B64, min_size=1)


_B64_BYTES = st.binary(max_size=16).map(lambda raw: base64.b64encode(raw).decode("ascii"))
_CODE = st.lists(
    st.one_of(texts, st.sampled_from(["`", "``", "```", "````", "\n", "print(1)\n", "x = 1"])),
    max_size=4,
).map("".join)
_TOOL_TYPES = st.sampled_from(["GOOGLE_SEARCH_WEB", "URL_CONTEXT", "GOOGLE_MAPS"])
_OTHER_KINDS = (
    "code",
    "code",
    "result",
    "result",
    "image",
    "image",
    "audio",
    "audio",
    "file",
    "document",
    "tool_call",
    "tool_response",
    "function_response",
    "empty",
    "signature",
)


@st.composite
def _data_parts(draw: Draw, kind: str, ids: _Ids) -> dict[str, Any]:
    """A code, media or built-in tool part (without its thought flag and signature)."""
    part: dict[str, Any]
    if kind == "code":
        code: dict[str, Any] = {"code": draw(_CODE)}
        if draw(st.integers(0, 3)):
            code["language"] = "PYTHON"
        part = {"executableCode": code}
    elif kind == "result":
        outcome = draw(
            st.sampled_from(["OUTCOME_OK", "OUTCOME_FAILED", "OUTCOME_DEADLINE_EXCEEDED"])
        )
        result: dict[str, Any] = {"outcome": outcome}
        if draw(st.integers(0, 3)):
            result["output"] = draw(_CODE)
        part = {"codeExecutionResult": result}
    elif kind == "image":
        mime = draw(st.sampled_from(["image/png", "image/jpeg", "image/webp"]))
        part = {"inlineData": {"mimeType": mime, "data": draw(_B64_BYTES)}}
    elif kind == "audio":
        mime = draw(st.sampled_from(["audio/wav", "audio/L16;codec=pcm;rate=24000", "audio/mpeg"]))
        clip = draw(st.binary(max_size=24))
        part = {"inlineData": {"mimeType": mime, "data": base64.b64encode(clip).decode("ascii")}}
    elif kind == "file":  # an image by URI (a missing mimeType counts as an image)
        file: dict[str, Any] = {"fileUri": f"https://files.example/{ids.next()}.png"}
        if draw(st.booleans()):
            file["mimeType"] = draw(st.sampled_from(["image/png", "image/jpeg"]))
        part = {"fileData": file}
    elif kind == "document":
        part = draw(
            st.sampled_from(
                [
                    {"inlineData": {"mimeType": "application/pdf", "data": "JVBERi0xLjcK"}},
                    {"fileData": {"mimeType": "application/pdf", "fileUri": "gs://b/doc.pdf"}},
                    {
                        "fileData": {"mimeType": "video/mp4", "fileUri": "https://v.example/v"},
                        "videoMetadata": {"startOffset": "1s", "endOffset": "2.5s"},
                    },
                ]
            )
        )
        part = json.loads(json.dumps(part))  # a fresh copy
    elif kind == "tool_call":
        args = {"queries": draw(st.lists(texts, min_size=1, max_size=2))}
        body = {"id": ids.gemini_id(), "toolType": draw(_TOOL_TYPES), "args": args}
        part = {"toolCall": body}
    elif kind == "tool_response":
        response = {"results": draw(st.lists(texts, max_size=2))}
        body = {"id": ids.gemini_id(), "toolType": draw(_TOOL_TYPES), "response": response}
        part = {"toolResponse": body}
    else:
        name = draw(st.sampled_from(_NAMES))
        part = {"functionResponse": {"name": name, "response": {"result": draw(texts)}}}
    if draw(st.integers(0, 7)) == 0:
        part["partMetadata"] = {"source": draw(texts)}
    return part


# -- expected outcome -----------------------------------------------------------------------


@dataclass
class ExpectedCall:
    """One tool call a correct translator reports, with its final arguments."""

    name: str
    args: dict[str, Any]
    id: str | None  # Gemini's functionCall.id, else None (a minted call_… id)
    signature: str | None = None
    kind: str = "plain"  # "plain" (id-less, complete), "id", "streamed"
    last_step: int = -1  # the candidate step (event) that last touched it


DATA_KEYS = (
    "executableCode",
    "codeExecutionResult",
    "inlineData",
    "fileData",
    "toolCall",
    "toolResponse",
    "functionResponse",
)


def fenced(body: str, info: str) -> str:
    """README: a Markdown fenced block whose fence is longer than any backtick run in ``body``."""
    longest = max((len(run) for run in re.findall("`+", body)), default=0)
    fence = "`" * max(3, longest + 1)
    if body and not body.endswith("\n"):
        body += "\n"
    return f"{fence}{info}\n{body}{fence}\n"


def code_markdown(part: dict[str, Any]) -> str | None:
    """README: the code under its language lower-cased; the result under ``output``, with the
    outcome added when it is not ``OUTCOME_OK``. ``None`` for other parts."""
    if "executableCode" in part:
        code = part["executableCode"]
        language = code.get("language")
        return fenced(code.get("code", ""), language.lower() if language else "")
    if "codeExecutionResult" in part:
        result = part["codeExecutionResult"]
        body = result.get("output", "")
        outcome = result.get("outcome", "OUTCOME_OK")
        if outcome != "OUTCOME_OK":
            body += ("\n" if body and not body.endswith("\n") else "") + f"[{outcome}]"
        return fenced(body, "output")
    return None


@dataclass
class ExpectedPart:
    """A part other than text and functionCall: one ``extra_content.google.parts`` entry."""

    part: dict[str, Any]  # as sent, its own thoughtSignature included

    @property
    def kind(self) -> str:
        return next(key for key in DATA_KEYS if key in self.part)

    @property
    def thought(self) -> bool:
        return self.part.get("thought") is True

    @property
    def signature(self) -> str | None:
        signature: str | None = self.part.get("thoughtSignature")
        return signature

    @property
    def markdown(self) -> str | None:
        """The fenced block of a code part (without the line break that may precede it)."""
        return code_markdown(self.part)

    @property
    def image(self) -> str | None:
        """The URL of the image a non-thought part shows in ``delta.images``."""
        if self.thought:
            return None
        inline, file = self.part.get("inlineData"), self.part.get("fileData")
        if inline is not None and inline["mimeType"].startswith("image/"):
            return f"data:{inline['mimeType']};base64,{inline['data']}"
        if file is not None and file.get("mimeType", "image/").startswith("image/"):
            url: str = file["fileUri"]
            return url
        return None

    @property
    def audio(self) -> bytes | None:
        """The bytes of a non-thought audio clip (``delta.audio``)."""
        inline = self.part.get("inlineData")
        if self.thought or inline is None or not inline["mimeType"].startswith("audio/"):
            return None
        return base64.b64decode(inline["data"])

    def entry_part(self) -> dict[str, Any]:
        """The part as its entry shows it: without the base64 that an OpenAI field carries."""
        inline = self.part.get("inlineData")
        if inline is None or (self.image is None and self.audio is None):
            return self.part
        bare = {key: value for key, value in inline.items() if key != "data"}
        return {**self.part, "inlineData": bare}


@dataclass
class ExpectedToken:
    """One ``choices[].logprobs.content`` entry."""

    token: str
    logprob: float
    top: list[tuple[str, float]]


@dataclass
class ExpectedSupport:
    """A grounding support's range: characters ``start``..``end`` of the text part group that
    begins at ``pieces[piece]``, cited by the accumulated grounding chunks ``chunks``."""

    piece: int
    start: int
    end: int
    chunks: list[int]


@dataclass
class Rendered:
    """What a choice shows, for one setting of ``render_code``."""

    content: str
    reasoning: str
    entries: list[dict[str, Any]]  # extra_content.google.parts, in order
    images: list[str]  # delta.images URLs, in order
    audio: bytes | None  # all the clips' bytes (None: no audio part)
    annotations: list[tuple[str, str, int, int]]  # (url, title, start_index, end_index)


Piece = tuple[str, Any, int]
"""A part of a candidate, in order: ``(kind, value, step)``: ``("text", str)``,
``("thought", str)``, ``("data", ExpectedPart)``, ``("call", bool)`` (a functionCall part: whether
it is the first sighting of a complete call, one part of the answer as Gemini counts its parts)."""


@dataclass
class ExpectedChoice:
    pieces: list[Piece] = field(default_factory=list)
    calls: list[ExpectedCall] = field(default_factory=list)
    text_signature: str | None = None  # the last text (or signature-only) part's
    native_finish: str | None = None  # the last finishReason (None: none came)
    finish: str | None = None  # OpenAI's finish_reason (None: truncated, no finish)
    refusal: str | None = None  # the finishMessage of the last finish, if content_filter
    details: dict[str, Any] = field(default_factory=dict)  # the finish's extra_content.google
    logprobs: list[ExpectedToken] = field(default_factory=list)
    grounding: dict[str, Any] | None = None  # the merged groundingMetadata (None: none came)
    grounding_chunks: list[dict[str, Any]] = field(default_factory=list)
    supports: list[ExpectedSupport] = field(default_factory=list)

    @property
    def content(self) -> str:
        return self.render().content

    @property
    def reasoning(self) -> str:
        return self.render().reasoning

    @property
    def parts(self) -> list[ExpectedPart]:
        return [value for kind, value, _ in self.pieces if kind == "data"]

    def render(self, *, render_code: bool = True) -> Rendered:
        """The README's rules for text, thoughts and the other parts, applied in order."""
        content = reasoning = ""
        entries: list[dict[str, Any]] = []
        images: list[str] = []
        audio: bytes | None = None
        starts: list[int] = []  # where each piece's content starts
        for kind, value, _ in self.pieces:
            starts.append(len(content))
            if kind == "text":
                content += value
            elif kind == "thought":
                reasoning += value
            elif kind == "data":
                part: ExpectedPart = value
                entry: dict[str, Any] = {"index": len(entries), "content_index": len(content)}
                markdown = part.markdown if render_code else None
                if markdown is not None and part.thought:
                    reasoning += "\n" + markdown  # a fence opens on a line of its own
                elif markdown is not None:
                    content += ("" if content == "" or content.endswith("\n") else "\n") + markdown
                if part.image is not None:
                    entry["image_index"] = len(images)
                    images.append(part.image)
                if part.audio is not None:
                    entry["audio_bytes"] = len(part.audio)  # README: how many bytes are its own
                    audio = (audio or b"") + part.audio
                entry["part"] = part.entry_part()
                entries.append(entry)
        annotations: list[tuple[str, str, int, int]] = []
        for support in self.supports:
            base = starts[support.piece]
            for index in support.chunks:
                source = next(iter(self.grounding_chunks[index].values()))
                if "uri" not in source:
                    continue
                cite = (source["uri"], source["title"], base + support.start, base + support.end)
                if not any(a[0] == cite[0] and a[2:] == cite[2:] for a in annotations):
                    annotations.append(cite)
        return Rendered(content, reasoning, entries, images, audio, annotations)


@dataclass
class Expected:
    choices: list[ExpectedChoice]
    usage: dict[str, Any] | None  # see openai_usage(); None: no usage chunk
    error: str | None  # "TruncatedStreamError" or None
    truncated: tuple[int, ...]
    model: str
    response_id: str | None
    last_usage: dict[str, Any] | None = None  # the usage a non-truncated ending reports
    api: str = "gemini"  # whose numbers integer enums use (the `api` option to pass)

    @property
    def tool_names(self) -> list[str]:
        return sorted({call.name for choice in self.choices for call in choice.calls})


@dataclass
class GeminiStream:
    events: list[dict[str, Any]]
    expected: Expected

    def __repr__(self) -> str:  # what Hypothesis prints for a falsifying example
        body = ",\n  ".join(json.dumps(e, ensure_ascii=True) for e in self.events)
        return f"GeminiStream(events=[\n  {body}\n], expected={self.expected!r})"


# -- one candidate's script -----------------------------------------------------------------


def _render_key(key: str) -> str:
    if _IDENT.match(key):
        return f".{key}"
    return "['" + key.replace("\\", "\\\\").replace("'", "\\'") + "']"


def _leaves(value: Any, path: str) -> list[tuple[str, Any]]:
    if isinstance(value, dict):
        return [leaf for k, v in value.items() for leaf in _leaves(v, path + _render_key(k))]
    if isinstance(value, list):
        return [leaf for i, v in enumerate(value) for leaf in _leaves(v, f"{path}[{i}]")]
    return [(path, value)]


Draw = Callable[[st.SearchStrategy[Any]], Any]


def _pieces(draw: Draw, args: dict[str, Any]) -> list[dict[str, Any]]:
    """The ``partialArgs`` pieces that assemble ``args``, in order."""
    out: list[dict[str, Any]] = []
    for path, value in _leaves(args, "$"):
        if isinstance(value, str):
            cuts = sorted(draw(st.sets(st.integers(1, max(1, len(value) - 1)), max_size=3)))
            cuts = [c for c in cuts if c < len(value)]
            bounds = [0, *cuts, len(value)]
            fragments = [value[a:b] for a, b in itertools.pairwise(bounds)]
            closing = bool(value) and draw(st.booleans())  # a closing "" fragment
            for i, fragment in enumerate(fragments):
                piece: dict[str, Any] = {"jsonPath": path, "stringValue": fragment}
                if closing or i < len(fragments) - 1:
                    piece["willContinue"] = True
                out.append(piece)
            if closing:
                out.append({"jsonPath": path, "stringValue": ""})
        elif isinstance(value, bool):
            out.append({"jsonPath": path, "boolValue": value})
        elif value is None:
            out.append({"jsonPath": path, "nullValue": "NULL_VALUE"})
        else:
            out.append({"jsonPath": path, "numberValue": value})
    return out


def _grow(draw: Draw, value: Any, depth: int = 0) -> Any:
    """A growth of ``value`` (possibly ``value`` itself) in the README's sense."""
    if isinstance(value, dict):
        grown = {
            k: (_grow(draw, v, depth + 1) if draw(st.booleans()) else v) for k, v in value.items()
        }
        for key in draw(st.lists(_KEYS, max_size=2)):
            if key not in grown:
                grown[key] = draw(json_values)
        return grown
    if isinstance(value, list):
        grown_list = [_grow(draw, v, depth + 1) if draw(st.booleans()) else v for v in value]
        return grown_list + draw(st.lists(json_values, max_size=2))
    if isinstance(value, str):
        return value + draw(texts)
    return value


class _Ids:
    """Unique Gemini ids and fresh names for one stream."""

    def __init__(self, draw: Draw) -> None:
        self._prefix = draw(st.text("abcdefghijklmnopqrstuvwxyz0123456789", min_size=4, max_size=8))
        self._n = 0

    def next(self) -> int:
        self._n += 1
        return self._n

    def gemini_id(self) -> str:
        return f"{self._prefix}-{self.next():04d}"


class _Script:
    """Builds one candidate's steps (each step's parts go into one event) and its outcome."""

    def __init__(self, draw: Draw, ids: _Ids) -> None:
        self.draw = draw
        self.ids = ids
        self.steps: list[list[dict[str, Any]]] = []
        self.choice = ExpectedChoice()
        self.streaming: ExpectedCall | None = None
        self.queue: list[dict[str, Any]] = []  # pieces of the streaming call still to send
        self.output = False  # whether rxgem sees output for this candidate
        self.calls_from = 0  # the first step that may hold functionCall parts
        self.fresh: set[int] = set()  # the ids of the parts that are a complete call's first
        self.signatures: set[str] = set()  # Gemini never gives two parts one signature

    # -- helpers

    def _sig(self, p: float = 0.25) -> str | None:
        if self.draw(st.integers(0, 99)) >= p * 100:
            return None
        signature: str = self.draw(_SIGNATURES)
        while signature in self.signatures:
            signature += "A"
        self.signatures.add(signature)
        return signature

    def _call_part(self, body: dict[str, Any], call: ExpectedCall) -> dict[str, Any]:
        part: dict[str, Any] = {"functionCall": body}
        signature = self._sig()
        if signature:
            part["thoughtSignature"] = signature
            call.signature = signature
        self.output = True
        return part

    def _end_streaming(self) -> None:
        assert not self.queue
        self.streaming = None

    def _conflicts(self, name: str, args: dict[str, Any], step: int) -> bool:
        """Whether a new id-less call could be taken for a re-send of an earlier call (an
        id'd call re-sent without its id included)."""
        return any(
            call.name == name
            and (
                (call.kind == "plain" and call.last_step != step)
                or call.kind == "id"  # README: an id-less part with identical args joins it
            )
            and (not call.args or call.args == args or is_growth(call.args, args))
            for call in self.choice.calls
        )

    def _adopts(self, name: str, args: dict[str, Any]) -> bool:
        """Whether a new id'd call could take over an id-less slot (README: an id seen for the
        first time takes over an id-less slot that the call would join without its id)."""
        return any(
            call.kind == "plain"
            and call.name == name
            and (not call.args or call.args == args or is_growth(call.args, args))
            for call in self.choice.calls
        )

    def _resend_target(self, step: int) -> list[ExpectedCall]:
        latest: dict[str, ExpectedCall] = {}
        for call in self.choice.calls:
            if call.kind == "plain":
                latest[call.name] = call
        return [c for c in latest.values() if c.last_step < step]

    # -- actions

    def text(self, step: int, thought: bool) -> list[dict[str, Any]]:
        value = self.draw(texts)
        part: dict[str, Any] = {"text": value}
        if thought:
            part["thought"] = True
        elif self.draw(st.integers(0, 9)) == 0:
            part["thought"] = False
        signature = self._sig(0.15)
        if signature:
            part["thoughtSignature"] = signature
        if value or signature:
            self.output = True
        return [part]

    def other_part(self, step: int) -> list[dict[str, Any]]:
        """A part other than text and functionCall (or an empty or signature-only part)."""
        kind = self.draw(st.sampled_from(_OTHER_KINDS))
        if kind == "empty":
            return [{"text": ""}]
        if kind == "signature":
            self.output = True  # a signature-only part is a text signature
            return [{"thoughtSignature": self.draw(_SIGNATURES)}]
        part = self.draw(_data_parts(kind, self.ids))
        if self.draw(st.integers(0, 3)) == 0:
            part["thought"] = True
        signature = self._sig(0.4)
        if signature:
            part["thoughtSignature"] = signature
        self.output = True
        return [part]

    def new_call(self, step: int) -> list[dict[str, Any]]:
        name = self.draw(st.sampled_from(_NAMES))
        placeholder = self.draw(st.integers(0, 5)) == 0
        args: dict[str, Any] = {} if placeholder else self.draw(args_objects)
        if self._conflicts(name, args, step) and not placeholder:
            args = {**args, "#": self.ids.next()}  # a distinguishing key...
        if self._conflicts(name, args, step):
            name = f"{name}_{self.ids.next()}"  # ...or a fresh name
        call = ExpectedCall(name, args, None, kind="plain", last_step=step)
        self.choice.calls.append(call)
        body: dict[str, Any] = {"name": name}
        if args or not self.draw(st.booleans()):  # absent args = {}
            body["args"] = args
        part = self._call_part(body, call)
        self.fresh.add(id(part))
        return [part]

    def resend(self, step: int) -> list[dict[str, Any]]:
        call = self.draw(st.sampled_from(self._resend_target(step)))
        if not call.args:
            args = self.draw(args_objects)  # the real args after a placeholder
            if any(
                c.kind == "id" and c.name == call.name and c.args == args for c in self.choice.calls
            ):
                args = {**args, "#": self.ids.next()}  # else it joins that id'd call
        elif self.draw(st.booleans()):
            args = json.loads(json.dumps(call.args))  # identical
        else:
            args = _grow(self.draw, call.args)
        assert is_growth(call.args, args) or not call.args
        call.args = args
        call.last_step = step
        return [self._call_part({"name": call.name, "args": args}, call)]

    def id_call(self, step: int) -> list[dict[str, Any]]:
        name = self.draw(st.sampled_from(_NAMES))
        args = self.draw(args_objects)
        if self._adopts(name, args):
            args = {**args, "#": self.ids.next()}  # a distinguishing key...
        if self._adopts(name, args):
            name = f"{name}_{self.ids.next()}"  # ...or a fresh name
        call = ExpectedCall(name, args, self.ids.gemini_id(), kind="id", last_step=step)
        self.choice.calls.append(call)
        part = self._call_part({"name": name, "args": args, "id": call.id}, call)
        self.fresh.add(id(part))
        return [part]

    def id_resend(self, step: int) -> list[dict[str, Any]]:
        call = self.draw(st.sampled_from([c for c in self.choice.calls if c.kind == "id"]))
        if self.draw(st.booleans()):
            call.args = self.draw(args_objects)  # a changed replay: the id decides
        call.last_step = step
        return [self._call_part({"name": call.name, "args": call.args, "id": call.id}, call)]

    def stream_start(self, step: int) -> list[dict[str, Any]]:
        name = self.draw(st.sampled_from(_NAMES))
        args = self.draw(streamed_args)
        gemini_id = self.ids.gemini_id() if self.draw(st.integers(0, 4)) == 0 else None
        call = ExpectedCall(name, args, gemini_id, kind="streamed", last_step=step)
        self.choice.calls.append(call)
        self.streaming = call
        self.queue = _pieces(self.draw, args)
        body: dict[str, Any] = {"name": name, "willContinue": True}
        if gemini_id:
            body["id"] = gemini_id
        return [self._call_part(body, call)]

    def stream_pieces(self, step: int) -> list[dict[str, Any]]:
        assert self.streaming is not None
        if self.draw(st.integers(0, 5)) == 0:
            return [{"functionCall": {"willContinue": True}}]  # a bare continuation
        count = self.draw(st.integers(1, 3))
        pieces, self.queue = self.queue[:count], self.queue[count:]
        body: dict[str, Any] = {"partialArgs": pieces, "willContinue": True}
        if not self.queue and self.draw(st.booleans()):
            del body["willContinue"]  # the last piece without willContinue completes the call
            self._end_streaming()
        return [{"functionCall": body}]

    def terminal(self, step: int) -> list[dict[str, Any]]:
        self._end_streaming()
        return [{"functionCall": {}}]

    # -- steps

    def step(self, step: int) -> None:
        parts: list[dict[str, Any]] = []
        for _ in range(self.draw(st.integers(1, 3))):
            actions = ["text", "text", "thought", "other", "other"]
            if self.streaming is not None and self.queue:
                actions += ["pieces", "pieces", "pieces"]
            elif step < self.calls_from:
                actions += ["text", "text"]  # prose first (a grounded answer)
            else:
                actions += ["call", "call", "id_call", "stream"]
                if self._resend_target(step):
                    actions += ["resend", "resend"]
                if any(c.kind == "id" for c in self.choice.calls):
                    actions += ["id_resend"]
                if self.streaming is not None:
                    actions += ["terminal", "terminal"]
            action = self.draw(st.sampled_from(actions))
            named = action in ("call", "id_call", "stream", "resend", "id_resend")
            if named and self.streaming is not None:
                self._end_streaming()  # the next named call completes a streamed call
            if action == "text":
                parts += self.text(step, thought=False)
            elif action == "thought":
                parts += self.text(step, thought=True)
            elif action == "other":
                parts += self.other_part(step)
            elif action == "pieces":
                parts += self.stream_pieces(step)
            elif action == "call":
                parts += self.new_call(step)
            elif action == "resend":
                parts += self.resend(step)
            elif action == "id_call":
                parts += self.id_call(step)
            elif action == "id_resend":
                parts += self.id_resend(step)
            elif action == "stream":
                parts += self.stream_start(step)
            else:
                parts += self.terminal(step)
        self.steps.append(parts)

    def finish_streaming(self) -> None:
        """Send the pieces still queued; maybe a terminal, else the end of the stream ends it."""
        while self.queue:
            count = self.draw(st.integers(1, 3))
            pieces, self.queue = self.queue[:count], self.queue[count:]
            self.steps.append([{"functionCall": {"partialArgs": pieces, "willContinue": True}}])
        if self.streaming is not None and self.draw(st.booleans()):
            self.steps[-1].append({"functionCall": {}})
            self._end_streaming()

    # -- the outcome, and the candidate fields of each step

    def finish(self, reasons: Sequence[str | None], grounded: bool) -> None:
        """The expected pieces, details and logprobs of the final steps; each step's candidate
        fields besides ``content`` (``extras``); grounding if ``grounded``."""
        draw, choice = self.draw, self.choice
        self.extras: list[dict[str, Any]] = [{} for _ in self.steps]
        for step, parts in enumerate(self.steps):
            for part in parts:
                if "functionCall" in part:
                    choice.pieces.append(("call", id(part) in self.fresh, step))
                elif any(key in part for key in DATA_KEYS):
                    choice.pieces.append(("data", ExpectedPart(part), step))
                else:  # text, or only a signature
                    kind = "thought" if part.get("thought") is True else "text"
                    choice.pieces.append((kind, part.get("text", ""), step))
                    if "thoughtSignature" in part:
                        choice.text_signature = part["thoughtSignature"]
        for step, parts in enumerate(self.steps):
            extra = self.extras[step]
            if reasons[step] is not None and draw(st.integers(0, 3)) == 0:
                extra["finishMessage"] = choice.details["finish_message"] = draw(texts)
            if draw(st.integers(0, 5)) == 0:
                extra["safetyRatings"] = choice.details["safety_ratings"] = draw(_SAFETY_RATINGS)
            if reasons[step] is not None and draw(st.integers(0, 4)) == 0:
                extra["avgLogprobs"] = choice.details["avg_logprobs"] = draw(_LOGPROBS)
            said = "".join(part.get("text", "") for part in parts if "functionCall" not in part)
            if said and draw(st.integers(0, 2)) == 0:
                result, tokens = draw(_logprobs_results(said))
                extra["logprobsResult"] = result
                choice.logprobs += tokens
                if "logProbabilitySum" in result:
                    choice.details["log_probability_sum"] = result["logProbabilitySum"]
        if grounded:
            self._ground()

    def _ground(self) -> None:
        """``groundingMetadata`` in pieces, from an event on (the candidate's first, mostly),
        its supports pointing at text sent by then."""
        draw, choice = self.draw, self.choice
        first = 0 if draw(st.integers(0, 3)) else draw(st.integers(0, len(self.steps) - 1))
        # Text part groups as the README counts parts (consecutive text parts of one kind are
        # one part, a data part is one, functionCall parts are not counted), up to the first
        # part whose count is not clear-cut (an empty or signature-only part that no text part
        # of its kind precedes). The groups that start at
        # or after `first` can be pointed at: [partIndex, piece, [(step, text)]].
        targets: list[list[Any]] = []
        current: list[Any] | None = None
        previous: str | None = None
        count = 0
        for number, (kind, value, step) in enumerate(choice.pieces):
            if kind == "call":
                continue  # README: partIndex does not count functionCall parts
            if kind == "data":
                count += 1
                previous, current = kind, None
                continue
            if value == "":
                if previous != kind:
                    break
                continue
            if previous != kind:
                count += 1
                previous = kind
                current = [count - 1, number, []] if kind == "text" and step >= first else None
                if current is not None:
                    targets.append(current)
            if current is not None:
                current[2].append((step, value))
        merged: dict[str, Any] = {}
        last = len(self.steps) - 1
        for step in range(first, last + 1):
            if first < step < last and draw(st.integers(0, 2)) == 0:
                continue  # no metadata on this event
            piece: dict[str, Any] = {}
            if draw(st.integers(0, 3)) == 0:
                piece["webSearchQueries"] = draw(st.lists(_QUERIES, min_size=1, max_size=2))
            if draw(st.integers(0, 2)):
                chunks = [draw(_grounding_chunks(self.ids)) for _ in range(draw(st.integers(1, 2)))]
                piece["groundingChunks"] = chunks
                choice.grounding_chunks += chunks
            placed = [t for t in targets if t[2][0][0] <= step]
            if placed and choice.grounding_chunks and draw(st.integers(0, 2)):
                supports = []
                for _ in range(draw(st.integers(1, 3))):
                    part_index, number, said = draw(st.sampled_from(placed))
                    text = "".join(value for sent, value in said if sent <= step)
                    a = draw(st.integers(0, len(text) - 1))
                    b = draw(st.integers(a + 1, len(text)))
                    segment: dict[str, Any] = {}
                    if part_index or draw(st.booleans()):
                        segment["partIndex"] = part_index  # absent = 0
                    start = len(text[:a].encode())  # UTF-8 bytes within the part
                    if start or draw(st.booleans()):
                        segment["startIndex"] = start
                    segment["endIndex"] = len(text[:b].encode())
                    if draw(st.integers(0, 2)) == 0:  # the offsets must do without it
                        segment["text"] = text[a:b]
                    indices = draw(
                        st.lists(
                            st.integers(0, len(choice.grounding_chunks) - 1),
                            min_size=1,
                            max_size=2,
                            unique=True,
                        )
                    )
                    supports.append({"segment": segment, "groundingChunkIndices": indices})
                    choice.supports.append(ExpectedSupport(number, a, b, indices))
                piece["groundingSupports"] = supports
            if draw(st.integers(0, 4)) == 0:
                piece["searchEntryPoint"] = {"renderedContent": f"<div>{draw(texts)}</div>"}
            self.extras[step]["groundingMetadata"] = piece
            for key, value in piece.items():  # README: lists concatenated (strings: no repeats)
                if key == "webSearchQueries":
                    seen = merged.setdefault(key, [])
                    seen += [q for q in dict.fromkeys(value) if q not in seen]
                elif isinstance(value, list):
                    merged[key] = [*merged.get(key, []), *value]
                else:
                    merged[key] = value
        choice.grounding = merged


@st.composite
def _grounding_chunks(draw: Draw, ids: _Ids) -> dict[str, Any]:
    kind = draw(st.sampled_from(["web", "web", "retrievedContext", "maps"]))
    source: dict[str, Any] = {"uri": f"https://s{ids.next()}.example/", "title": draw(texts)}
    if kind == "maps" and draw(st.booleans()):
        del source["uri"]  # a chunk without a URL cites nothing
    return {kind: source}


_QUERIES = st.sampled_from(["café tokyo", "rx gem", "東京 weather", "q"])
_LOGPROBS = st.floats(-30, 0, allow_nan=False)
_SAFETY_RATINGS = st.lists(
    st.fixed_dictionaries(
        {
            "category": st.sampled_from(
                [
                    "HARM_CATEGORY_HARASSMENT",
                    "HARM_CATEGORY_HATE_SPEECH",
                    "HARM_CATEGORY_CIVIC_INTEGRITY",
                ]
            ),
            "probability": st.sampled_from(["NEGLIGIBLE", "LOW", "MEDIUM", "HIGH"]),
        },
        optional={"blocked": st.just(True), "probabilityScore": _LOGPROBS.map(abs)},
    ),
    min_size=1,
    max_size=3,
)


@st.composite
def _logprobs_results(draw: Draw, said: str) -> tuple[dict[str, Any], list[ExpectedToken]]:
    """A ``logprobsResult`` for the text ``said`` (cut into tokens) and its expected entries."""
    cuts = sorted(c for c in draw(st.sets(st.integers(1, len(said)), max_size=3)) if c < len(said))
    tokens = [said[a:b] for a, b in itertools.pairwise([0, *cuts, len(said)])]
    top = draw(st.booleans())
    chosen, candidates, expected = [], [], []
    for token in tokens:
        logprob = draw(_LOGPROBS)
        chosen.append(
            {"token": token, "tokenId": draw(st.integers(0, 10**6)), "logProbability": logprob}
        )
        others = [(token, logprob), *draw(st.lists(st.tuples(texts, _LOGPROBS), max_size=2))]
        candidates.append(
            {"candidates": [{"token": t, "tokenId": 7, "logProbability": p} for t, p in others]}
        )
        expected.append(ExpectedToken(token, logprob, others if top else []))
    result: dict[str, Any] = {"chosenCandidates": chosen}
    if top:
        result["topCandidates"] = candidates
    if draw(st.booleans()):
        result["logProbabilitySum"] = draw(_LOGPROBS)
    return result, expected


_FINISH_MODES = ("last", "last", "every", "mid", "terminator", "missing")


def _script(
    draw: Draw, ids: _Ids, finish_mode: str, grounded: bool
) -> tuple[_Script, list[str | None]]:
    script = _Script(draw, ids)
    if finish_mode != "missing" and draw(st.integers(0, 11)) == 0:
        # a silent candidate: only a finishReason (SAFETY: "the content field is empty if
        # content filters block the output"); it still gets its choice and finish
        final = draw(st.sampled_from(FINISH_REASONS))
        script.steps.append([])
        script.choice.native_finish = final
        script.choice.finish = openai_finish(final, has_calls=False)
        script.finish([final], grounded=False)
        _refusal(script, [final])
        return script, [final]
    n_steps = draw(st.integers(1, 7))
    if grounded and draw(st.integers(0, 2)) == 0:
        script.calls_from = n_steps - 1  # prose first: re-sent or streamed calls would leave
        # the text after them with no clear-cut partIndex
    for step in range(n_steps):
        script.step(step)
    script.finish_streaming()
    if not script.output:  # a candidate without finish must have output (else no choice)
        script.steps[0].insert(0, {"text": draw(texts.filter(bool))})
        script.output = True
    final = draw(st.sampled_from(FINISH_REASONS))
    reasons: list[str | None] = [None] * len(script.steps)
    if finish_mode == "terminator":
        shapes: list[list[dict[str, Any]]] = [[], [{"text": ""}]]
        if script.streaming is not None:  # Vertex: the terminal `{}` rides on the last event
            shapes.append([{"functionCall": {}}])
        script.steps.append(list(draw(st.sampled_from(shapes))))
        reasons.append(final)
    elif finish_mode == "every":
        reasons = [draw(st.sampled_from(FINISH_REASONS)) for _ in script.steps]
        reasons[-1] = final
    elif finish_mode == "mid":
        reasons = [
            draw(st.sampled_from(FINISH_REASONS)) if draw(st.booleans()) else None
            for _ in script.steps
        ]
        reasons[-1] = final
    elif finish_mode == "last":
        reasons[-1] = final
    choice = script.choice
    if finish_mode != "missing":
        choice.native_finish = final
        choice.finish = openai_finish(final, has_calls=bool(choice.calls))
    script.finish(reasons, grounded)
    if finish_mode != "missing":
        _refusal(script, reasons)
    return script, reasons


def _refusal(script: _Script, reasons: Sequence[str | None]) -> None:
    """README: the ``finishMessage`` of a finish that maps to ``content_filter`` is the refusal."""
    last = max(step for step, reason in enumerate(reasons) if reason is not None)
    message = script.extras[last].get("finishMessage")
    if script.choice.finish == "content_filter" and message:
        script.choice.refusal = message


@st.composite
def _usage(draw: Draw) -> dict[str, Any]:
    if draw(st.integers(0, 3)) == 0:
        return {"trafficType": "ON_DEMAND"}  # Vertex: a snapshot without counts
    fields = draw(st.lists(st.sampled_from(_USAGE_FIELDS), min_size=1, unique=True))
    usage: dict[str, Any] = {f: draw(st.integers(0, 10**6)) for f in fields}
    if draw(st.booleans()):
        usage["promptTokensDetails"] = [{"modality": "TEXT", "tokenCount": 1}]
    return usage


def _meta(draw: Draw) -> tuple[dict[str, Any], str, str | None]:
    version = draw(
        st.sampled_from(
            [None, "gemini-2.5-flash", "models/gemini-2.5-flash-preview-05-20", "gemini-3-pro"]
        )
    )
    response_id = draw(st.one_of(st.none(), st.text("abcdefghijkLMNOP0123456789_-", min_size=1)))
    meta: dict[str, Any] = {}
    if version is not None:
        meta["modelVersion"] = version
    if response_id is not None:
        meta["responseId"] = response_id
    model = version.removeprefix("models/") if version else "gemini"
    return meta, model, response_id


def _wire_enum(draw: Draw, numbers: dict[str, int] | None, name: str) -> str | int:
    """``name`` as sent: mostly its number in ``numbers`` (integer enums), if it has one."""
    if numbers is not None and name in numbers and draw(st.integers(0, 4)):
        return numbers[name]
    return name


@st.composite
def gemini_streams(
    draw: Draw,
    *,
    max_candidates: int = 3,
    truncated: bool | None = False,
    grounded: bool | None = None,
) -> GeminiStream:
    """A valid Gemini stream with its expected outcome.

    ``truncated``: ``False`` (every candidate gets a finishReason), ``True`` (at least one
    candidate never does: the stream ends with TruncatedStreamError) or ``None`` (either).
    ``grounded``: every candidate gets ``groundingMetadata`` (``True``), none (``False``), or
    one in three (``None``).
    """
    ids = _Ids(draw)
    n = draw(st.integers(1, max_candidates))
    allowed = [m for m in _FINISH_MODES if truncated is not False or m != "missing"]
    modes = [draw(st.sampled_from(allowed)) for _ in range(n)]
    if truncated and "missing" not in modes:
        modes[draw(st.integers(0, n - 1))] = "missing"
    scripts = [
        _script(draw, ids, mode, grounded if grounded is not None else draw(st.integers(0, 2)) == 0)
        for mode in modes
    ]
    meta, model, response_id = _meta(draw)
    api = draw(st.sampled_from(["gemini", "vertex"]))
    numbers = FINISH_NUMBERS[api] if draw(st.integers(0, 3)) == 0 else None  # enum-encoding=int

    events: list[dict[str, Any]] = []
    usage: dict[str, Any] | None = None
    position = [0] * n
    while True:
        remaining = [i for i in range(n) if position[i] < len(scripts[i][0].steps)]
        if not remaining:
            break
        extra = draw(st.integers(0, 15))
        if extra == 0:  # an event with no candidates: usage only, or only unknown keys
            event: dict[str, Any] = draw(
                st.sampled_from([{"usageMetadata": {"trafficType": "ON_DEMAND"}}, {"x": [1]}])
            )
            events.append({**event, **meta} if "x" not in event else event)
            continue
        chosen = draw(st.lists(st.sampled_from(remaining), min_size=1, unique=True))
        candidates = []
        for index in chosen:
            script, reasons = scripts[index]
            parts = script.steps[position[index]]
            reason = reasons[position[index]]
            fields = script.extras[position[index]]
            position[index] += 1
            candidate: dict[str, Any] = {}
            if parts:
                candidate["content"] = {"parts": parts, "role": "model"}
            else:
                shape = draw(st.integers(0, 2))
                if shape == 1:
                    candidate["content"] = {"role": "model"}
                elif shape == 2:
                    candidate["content"] = {"parts": []}
            if reason is not None:
                candidate["finishReason"] = _wire_enum(draw, numbers, reason)
            if index != 0 or draw(st.booleans()):
                candidate["index"] = index
            candidate.update(fields)
            candidates.append(candidate)
        event = {"candidates": candidates}
        if draw(st.booleans()):
            event["usageMetadata"] = draw(_usage())
        event.update(meta)
        events.append(event)
    for event in events:
        snapshot = event.get("usageMetadata")
        if snapshot and any(f in snapshot for f in _USAGE_FIELDS):
            usage = snapshot

    truncated_ix = tuple(i for i, mode in enumerate(modes) if mode == "missing")
    expected = Expected(
        choices=[script.choice for script, _ in scripts],
        usage=openai_usage(usage) if usage is not None and not truncated_ix else None,
        last_usage=openai_usage(usage) if usage is not None else None,
        error="TruncatedStreamError" if truncated_ix else None,
        truncated=truncated_ix,
        model=model,
        response_id=response_id,
        api=api,
    )
    return GeminiStream(events, expected)


@st.composite
def blocked_streams(draw: Draw) -> GeminiStream:
    """A prompt block: ``promptFeedback.blockReason`` (maybe a number) and no candidates."""
    api = draw(st.sampled_from(["gemini", "vertex"]))
    numbers = BLOCK_NUMBERS[api] if draw(st.integers(0, 3)) == 0 else None  # enum-encoding=int
    if numbers is not None:
        reason = draw(st.sampled_from(sorted(numbers)))
    else:
        reason = draw(st.sampled_from((*BLOCK_REASONS, "BLOCK_REASON_UNSPECIFIED")))
    meta, model, response_id = _meta(draw)
    feedback: dict[str, Any] = {"blockReason": _wire_enum(draw, numbers, reason)}
    if draw(st.booleans()):
        feedback["blockReasonMessage"] = draw(texts)
    if draw(st.booleans()):
        feedback["safetyRatings"] = [
            {"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH", "blocked": True}
        ]
    event: dict[str, Any] = {"promptFeedback": feedback, **meta}
    usage = draw(st.one_of(st.none(), _usage()))
    if usage is not None:
        event["usageMetadata"] = usage
    counted = usage is not None and any(f in usage for f in _USAGE_FIELDS)
    unspecified = reason in _UNSPECIFIED_BLOCK or reason == "BLOCK_REASON_UNSPECIFIED"
    finish = "stop" if unspecified else "content_filter"
    choice = ExpectedChoice(native_finish=reason, finish=finish)
    expected = Expected(
        choices=[choice],
        usage=openai_usage(usage) if usage is not None and counted else None,
        last_usage=openai_usage(usage) if usage is not None and counted else None,
        error=None,
        truncated=(),
        model=model,
        response_id=response_id,
        api=api,
    )
    return GeminiStream([event], expected)


# -- serialisation --------------------------------------------------------------------------


@dataclass(frozen=True)
class Framing:
    """How a list of responses is written as a body (SSE, JSON lines, or a JSON array)."""

    eol: str = "\r\n"
    ensure_ascii: bool = False
    google_spacing: bool = True  # `": "` after keys, no space after commas (array: indented)
    data_prefix: str = "data: "
    # "sse": one data line per event; "multiline": several; "jsonl": raw lines; "array": the
    # body without alt=sse, `[{...}<eol>,<eol>{...}<eol>]` (without its `]` if not last_blank)
    style: str = "sse"
    comments: bool = False
    bom: bool = False
    done: bool = False  # a final `data: [DONE]`
    last_blank: bool = True  # the last event ends with its blank line
    last_eol: bool = True  # the last line ends with a line end

    def with_eol(self, eol: str) -> Framing:
        return dataclasses.replace(self, eol=eol)


framings = st.builds(
    Framing,
    eol=st.sampled_from(["\r\n", "\n", "\r"]),
    ensure_ascii=st.booleans(),
    google_spacing=st.booleans(),
    data_prefix=st.sampled_from(["data: ", "data:"]),
    style=st.sampled_from(["sse", "sse", "sse", "multiline", "jsonl", "array"]),
    comments=st.booleans(),
    bom=st.booleans(),
    done=st.booleans(),
    last_blank=st.booleans(),
    last_eol=st.booleans(),
)


def encode(events: Sequence[dict[str, Any]], framing: Framing = Framing()) -> bytes:
    """SSE bytes of ``events`` as Gemini (or a proxy) would write them."""
    eol = framing.eol
    separators = (",", ": ") if framing.google_spacing else (",", ":")
    out: list[str] = []
    if framing.comments:
        out.append(f": keep-alive{eol}")
    if framing.style == "array":
        return _encode_array(events, framing, out)
    for number, event in enumerate(events):
        last = number == len(events) - 1
        if framing.style == "multiline":
            text = json.dumps(event, ensure_ascii=framing.ensure_ascii, indent=1)
            lines = [f"{framing.data_prefix}{line}{eol}" for line in text.split("\n")]
        else:
            text = json.dumps(event, ensure_ascii=framing.ensure_ascii, separators=separators)
            prefix = "" if framing.style == "jsonl" else framing.data_prefix
            lines = [f"{prefix}{text}{eol}"]
        out.extend(lines)
        if not last or framing.last_blank or framing.done:
            out.append(eol)
        if framing.comments and not last:
            out.append(f": ping {number}{eol}")
    if framing.done:
        out.append(f"data: [DONE]{eol}{eol}")
    if not framing.last_eol and not framing.last_blank and not framing.done:
        out[-1] = out[-1].removesuffix(eol)  # the body ends inside its last line
    body = "".join(out).encode("utf-8")
    return b"\xef\xbb\xbf" + body if framing.bom else body


def _encode_array(events: Sequence[dict[str, Any]], framing: Framing, out: list[str]) -> bytes:
    """The body of ``streamGenerateContent`` without ``alt=sse``, as Google writes it."""
    eol = framing.eol
    elements = [
        # pretty-printed as Google does (line ends inside JSON strings are escaped: only the
        # layout's line ends are replaced), or one compact line
        json.dumps(event, ensure_ascii=framing.ensure_ascii, indent=2).replace("\n", eol)
        if framing.google_spacing
        else json.dumps(event, ensure_ascii=framing.ensure_ascii, separators=(",", ":"))
        for event in events
    ]
    out.append("[" + f"{eol},{eol}".join(elements))
    if framing.last_blank:
        out.append(f"{eol}]")  # else the body is cut after its last complete element
        if framing.done:  # SSE lines may follow the array
            out.append(f"{eol}data: [DONE]{eol}")
    if framing.last_eol:
        out.append(eol)
    body = "".join(out).encode("utf-8")
    return b"\xef\xbb\xbf" + body if framing.bom else body


def split_points(data: bytes) -> list[int]:
    """The awkward places to split ``data``: inside UTF-8 sequences and between CR and LF."""
    return [
        i
        for i in range(1, len(data))
        if 0x80 <= data[i] <= 0xBF or (data[i - 1] == 0x0D and data[i] == 0x0A)
    ]
