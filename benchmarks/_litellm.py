"""LiteLLM's Gemini stream iterator on the same captures (run as a subprocess).

``python -m benchmarks._litellm --repeat 7 --min-time 0.2 [--budget S] NAME...`` prints one JSON
object: ``{"version": ..., "captures": {NAME: {"samples_us": [...], "events": n,
"outputs": k, "prefix_events": None or m}}}``, or ``{"error": "..."}`` when LiteLLM
cannot be imported. ``prefix_events`` is set when the first run was stopped at the
budget: the one sample is then the cost per event of the first ``m`` events.

It runs in its own process so that importing LiteLLM (thousands of modules and a
large heap that every full garbage collection would then walk) cannot slow down
the rxgem measurements, and so that LiteLLM can live in another virtual
environment (``--litellm-python``).

What is timed, per run, is LiteLLM's own streaming path for Gemini from the body
pieces to its ``ModelResponseStream`` objects, without the ``CustomStreamWrapper``
that LiteLLM puts on top (so this is a lower bound for ``litellm.completion``):

1. an incremental UTF-8 decoder over the pieces (what ``httpx``'s ``iter_text()``
   does),
2. ``litellm.llms.custom_httpx.sse_lines.iter_sse_lines`` (its SSE line splitter),
3. ``ModelResponseIterator(streaming_response=..., sync_stream=True, logging_obj=...)``
   iterated to the end: per line ``strip_sse_data_from_chunk``, ``json.loads`` and
   ``chunk_parser(dict)`` → ``ModelResponseStream`` (``None`` for blank lines).
"""

from __future__ import annotations

import argparse
import codecs
import gc
import json
import os
import sys
import time
import types
from collections.abc import Callable
from typing import Any

# LiteLLM fetches its model price map from GitHub at import time unless told not to.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def _import() -> tuple[Callable[..., Any], Callable[..., Any], str]:
    from importlib.metadata import version

    from litellm.llms.custom_httpx.sse_lines import iter_sse_lines
    from litellm.llms.vertex_ai.gemini.vertex_and_google_ai_studio_gemini import (
        ModelResponseIterator,
    )

    return ModelResponseIterator, iter_sse_lines, version("litellm")


def make_runner(pieces: list[bytes]) -> Callable[[float | None], tuple[int, float]]:
    """A function that runs LiteLLM's iterator over ``pieces``.

    ``run(deadline)`` returns ``(chunks, seconds)``; with a ``deadline`` (seconds) it
    stops at the first chunk after it, so a slow run over a big capture is cut to
    a prefix of the stream (``chunks`` then tells how far it got).
    """
    iterator_class, iter_sse_lines, _ = _import()
    logging_obj = types.SimpleNamespace(
        optional_params={}, litellm_params={}, model_call_details={}
    )
    perf = time.perf_counter

    def run(deadline: float | None = None) -> tuple[int, float]:
        start = perf()
        decode = codecs.getincrementaldecoder("utf-8")().decode
        texts = (decode(piece) for piece in pieces)
        stream = iterator_class(
            streaming_response=iter_sse_lines(texts), sync_stream=True, logging_obj=logging_obj
        )
        chunks: list[Any] = []
        for chunk in stream:
            if chunk is not None:
                chunks.append(chunk)
                if deadline is not None and not len(chunks) % 64 and perf() - start > deadline:
                    break
        return len(chunks), perf() - start

    return run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks._litellm")
    parser.add_argument("names", nargs="+")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--min-time", type=float, default=0.2)
    parser.add_argument(
        "--budget",
        type=float,
        default=None,
        help="seconds per capture: fewer repetitions when needed, and a first run still"
        " going after this long is stopped there and is the only sample (a prefix)",
    )
    args = parser.parse_args(argv)
    try:
        _, _, version = _import()
    except Exception as exc:  # not installed, or broken
        print(json.dumps({"error": f"{type(exc).__name__}: {exc}"}))
        return 0

    from .captures import build
    from .measure import time_per_event

    results: dict[str, Any] = {}
    for name in args.names:
        capture = build(name)
        events = capture.event_count
        run = make_runner(capture.pieces())
        gc.collect()
        outputs, seconds = run(args.budget)  # the warm-up, time-boxed
        if outputs < events:  # one LiteLLM chunk per Gemini event: it was cut short
            samples = [seconds * 1e6 / outputs]
            prefix: int | None = outputs
        else:
            stats = time_per_event(run, events, args.repeat, args.min_time, budget=args.budget)
            samples, prefix = stats.samples, None
        results[name] = {
            "samples_us": samples,
            "events": events,
            "outputs": outputs,
            "prefix_events": prefix,
        }
        del capture, run
        gc.collect()
    print(json.dumps({"version": version, "python": sys.version.split()[0], "captures": results}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
