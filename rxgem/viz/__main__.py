"""``python -m rxgem.viz [OUT] [--sample NAME] [--x order|time]``: draw a sample."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from ._trace import tour, trace_sample

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m rxgem.viz [OUT] [--sample NAME] [--x order|time]``: draw a sample.

    Without ``--sample``, writes the README's tour diagram. ``OUT`` ending in
    ``.svg``, ``.html`` or anything else (text); without ``OUT``, prints the text.
    """
    parser = argparse.ArgumentParser(prog="python -m rxgem.viz", description=main.__doc__)
    parser.add_argument("out", nargs="?", help="file to write (.svg, .html or text)")
    parser.add_argument("--sample", help="a sample name (default: the tour)")
    parser.add_argument("--x", choices=("order", "time"), default="order")
    parser.add_argument("--piece-size", type=int, default=2048)
    args = parser.parse_args(argv)
    if args.sample is None and args.piece_size == 2048:
        diagram = tour(x=args.x)
    else:
        recorder = trace_sample(args.sample or "thinking_tools", piece_size=args.piece_size)
        diagram = recorder.diagram(x=args.x)
    if args.out is None:
        print(diagram.to_text(), end="")
    else:
        diagram.save(args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
