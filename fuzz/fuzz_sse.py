"""Coverage-guided fuzzing of the whole pipeline (``rxgem.Converter``) with atheris.

Run, for a bounded time::

    python fuzz/fuzz_sse.py -max_total_time=60
    python fuzz/fuzz_sse.py -max_total_time=600 -rss_limit_mb=3072 my_corpus_dir/

Without a corpus directory, a temporary one is seeded with the shipped samples and the
bad-input corpus (``tests/corpus/*.bin``, but the known-bug triggers). The first two bytes of
each input choose how the rest is split into chunks; the oracle:

- only ``rxgem.RxGemError`` subclasses escape the SSE decoder and the ``Converter`` (the six
  cores composed); anything else is a crash;
- the decoded events, the chunks and the error do not depend on how the bytes were split;
- every chunk encodes to JSON.

Without atheris (``pip install atheris``; wheels exist for CPython on Linux/macOS x86-64), use
``tests/integration/test_fuzz.py``, the Hypothesis-driven byte fuzzer (seeded; raise
``RXGEM_FUZZ_EXAMPLES`` for a long run).
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

import atheris

with atheris.instrument_imports(include=["rxgem"]):
    import rxgem

ROOT = Path(__file__).resolve().parents[1]


def _decode(pieces: list[bytes]) -> tuple[list[rxgem.core.SSEEvent], str | None]:
    """The events, and the error ``close()`` ends with (a body that is not SSE)."""
    decoder = rxgem.core.SSEDecoder()
    events = [event for piece in pieces for event in decoder.feed(piece)]
    try:
        events += decoder.close()
    except rxgem.MalformedStreamError as error:
        return events, repr(error)
    return events, None


def _convert(pieces: list[bytes]) -> tuple[list[bytes], str | None]:
    """The chunks' JSON and the error of the whole pipeline over ``pieces``."""
    converter = rxgem.Converter(id_factory=lambda: "fuzz", clock=lambda: 0.0)
    chunks: list[rxgem.ChatCompletionChunk] = []
    try:
        for piece in pieces:
            chunks += converter.feed(piece)
            if converter.done:
                break
        chunks += converter.close()
    except rxgem.RxGemError as error:  # anything else escapes: a crash
        return [chunk.to_json() for chunk in chunks], repr(error)
    error = converter.error
    return [chunk.to_json() for chunk in chunks], None if error is None else repr(error)


def test_one_input(data: bytes) -> None:
    if len(data) < 2:
        return
    step = 1 + data[0] * 256 + data[1]
    body = data[2:]
    pieces = [body[i : i + step] for i in range(0, len(body), step)]
    whole = _decode([body])
    split = _decode(pieces)
    if split != whole:
        raise AssertionError(f"events depend on the split (step {step}): {whole!r} != {split!r}")
    converted = _convert([body])
    if _convert(pieces) != converted:
        raise AssertionError(f"the chunks or the error depend on the split (step {step})")
    for chunk in converted[0]:
        json.loads(chunk)


def _seed_corpus() -> str:
    directory = tempfile.mkdtemp(prefix="rxgem-fuzz-")
    seeds = [*sorted((ROOT / "rxgem" / "samples").glob("*.sse"))]
    corpus = ROOT / "tests" / "corpus"
    cases = json.loads((corpus / "cases.json").read_text("utf-8"))
    # the triggers of known bugs (xfail cases) would only re-find them
    seeds += [corpus / f"{name}.bin" for name, case in sorted(cases.items()) if "xfail" not in case]
    for number, path in enumerate(seeds):
        shutil.copyfile(path, Path(directory) / f"{number:03d}-{path.name}")
        # the same seed prefixed with a split step of 7 bytes
        (Path(directory) / f"{number:03d}-step7-{path.name}").write_bytes(
            b"\x00\x06" + path.read_bytes()
        )
    return directory


def main() -> None:
    argv = list(sys.argv)
    if not any(not arg.startswith("-") for arg in argv[1:]):
        argv.append(_seed_corpus())
    if not any(arg.startswith("-rss_limit_mb") for arg in argv[1:]):
        argv.append("-rss_limit_mb=3072")
    atheris.Setup(argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
