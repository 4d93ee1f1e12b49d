"""Coverage-guided fuzzing of the SSE decoder and the parser (and the cores after them), atheris.

Run, for a bounded time::

    python fuzz/fuzz_sse.py -max_total_time=60
    python fuzz/fuzz_sse.py -max_total_time=600 -rss_limit_mb=3072 my_corpus_dir/

Without a corpus directory, a temporary one is seeded with the shipped samples and the
bad-input corpus (``tests/corpus/*.bin``, but the known-bug triggers). The first two bytes of
each input choose how the rest is split into chunks; the oracle:

- only ``rxgem.RxGemError`` subclasses escape the decoder, the parser and the slot, args, finish
  and chunk cores (anything else is a crash);
- the decoded events do not depend on how the bytes were split;
- every chunk encodes to JSON.

Known bugs (each shown by a strict xfail test under ``tests/``) are tolerated so that the fuzzer
keeps looking for new ones; set ``RXGEM_FUZZ_STRICT=1`` to report them too.

Without atheris (``pip install atheris``; wheels exist for CPython on Linux/macOS x86-64), use
``tests/test_fuzz.py``, the Hypothesis-driven byte fuzzer.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

import atheris

with atheris.instrument_imports(include=["rxgem"]):
    import rxgem

ROOT = Path(__file__).resolve().parents[1]
STRICT = os.environ.get("RXGEM_FUZZ_STRICT") == "1"
# A jsonPath index of 7+ digits makes ArgsTable allocate index * 8 bytes at once (known bug
# huge_array_index): such inputs skip the args stage so that the fuzzer does not exhaust memory.
_HUGE_INDEX = re.compile(rb"\[\s*\d{7,}\s*\]")


def _known_bug(error: BaseException) -> bool:
    if STRICT:
        return False
    if isinstance(error, (RecursionError, MemoryError)):  # deep nesting; huge partialArgs index
        return True
    return isinstance(error, ValueError) and "integer string conversion" in str(error)  # retry


def _decode(pieces: list[bytes]) -> list[rxgem.SSEEvent]:
    decoder = rxgem.SSEDecoder()
    events = [event for piece in pieces for event in decoder.feed(piece)]
    return events + decoder.flush()


def test_one_input(data: bytes) -> None:
    if len(data) < 2:
        return
    step = 1 + data[0] * 256 + data[1]
    body = data[2:]
    try:
        whole = _decode([body])
    except Exception as error:
        if _known_bug(error):
            return
        raise
    split = _decode([body[i : i + step] for i in range(0, len(body), step)])
    if split != whole:
        raise AssertionError(f"events depend on the split (step {step}): {whole!r} != {split!r}")

    with_args = _HUGE_INDEX.search(body) is None
    parser = rxgem.ResponseParser()
    slots = rxgem.SlotTable()
    args = rxgem.ArgsTable()
    buffer = rxgem.FinishBuffer()
    builder = rxgem.ChunkBuilder(id_factory=lambda: "fuzz", clock=lambda: 0.0)
    try:
        for event in whole:
            for response in parser.feed(event):
                batch = slots.feed(response)
                if with_args:
                    for chunk in builder.feed(buffer.feed(args.feed(batch))):
                        chunk.to_json()
        if with_args:
            final, _error = buffer.close()
            for chunk in builder.feed(final):
                chunk.to_json()
    except rxgem.RxGemError:
        pass
    except Exception as error:
        if not _known_bug(error):
            raise


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
