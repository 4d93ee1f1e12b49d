"""Marble diagrams of what every stage of a pipeline emits.

A :class:`Recorder` hands out ``tap(stage)`` operators that record each
notification passing through them (the value, an error, the completion) with its
time, and pass it on unchanged. The recording draws itself as a marble diagram:
one lane per stage, one marble per emission, ``|`` for completion, ``X`` for an
error, and thin lines from each emission to the input that caused it.

.. code::

    rec = rxgem.viz.Recorder()
    chunks = source.pipe(
        rec.tap("bytes"), decode_sse(), rec.tap("decode_sse"), parse(), rec.tap("parse"), ...
    )
    rec                 # in Jupyter: an SVG diagram (hover a marble for its JSON)
    print(rec)          # elsewhere: a text diagram and a legend
    rec.save("x.svg")   # or .html, .txt

:func:`trace` builds such a chain from ``(name, operator)`` pairs, runs it and
returns the recorder (:func:`atrace` inside an event loop, e.g. Jupyter);
:func:`pipeline_stages` gives the six named stages of ``gemini_to_openai`` (with
``upstream="interactions"``, the four of an Interactions stream: ``decode_sse``,
``parse_interactions``, ``read_steps``, ``to_openai``); :func:`trace_bytes` and
:func:`trace_sample` replay Gemini bytes through them, or through ``stages=`` of your own
(:func:`fixed_stages`, the stock ones with fixed ids, and your operators between them).

A marble's few words come from :data:`label`, a :class:`Labeller` (``label.extend(MyItem,
...)`` gives one that knows your item types; ``recorder.diagram(label=...)`` draws with it),
cut to ``label_width`` characters with ``…``, whole in the hover text.

Time is virtual time when the recorder's clock is a ``TestScheduler`` (or any
``VirtualTimeScheduler``), else wall time in seconds since the first emission.
With ``x="time"``, a marble sits at its time unless that would overlap the marble
before it in its lane or put it left of its cause: then it moves right (the axis
shows where each time begins, the hover text the exact time). ``x="order"`` lays
marbles out by the order of emissions instead (compact and deterministic).
``x="auto"`` (the default) picks time for virtual time and for recordings that
took 50 ms or more (a live stream), order otherwise.

Links are inferred, not observed: an emission is linked to the latest emission
(of any kind) recorded before it in the lane above. That is exact for the rxgem
pipeline, whose stages react synchronously to their input, and a best guess for
operators that buffer, delay or reorder.

``python -m rxgem.viz docs/tour.svg`` writes the README's diagram (:func:`tour`).
"""

from typing import TYPE_CHECKING, Any

from ..operators import pipeline_stages
from ._describe import short
from ._labeller import Labeller
from ._labeller import default_labeller as label
from ._record import Recorder
from ._render import side_by_side
from ._trace import atrace, fixed_stages, tour, trace, trace_bytes, trace_sample

# Not in `__all__`: what other rxgem packages import from this face (they import
# through faces, never private modules).
# isort: off
from ._describe import describe as describe
from ._record import Kind as Kind, XMode as XMode
from ._render import Diagram as Diagram
from ._trace import Stage as Stage
# isort: on

if TYPE_CHECKING:
    from .__main__ import main as main

__all__ = [
    "Labeller",
    "Recorder",
    "atrace",
    "fixed_stages",
    "label",
    "pipeline_stages",
    "short",
    "side_by_side",
    "tour",
    "trace",
    "trace_bytes",
    "trace_sample",
]


_RETIRED = {
    "Emission": "._record",
    "SideBySide": "._render",
}
"""Names that left the public surface (CHANGELOG.md): still found here, with a warning, for
one release."""


def __getattr__(name: str) -> Any:
    # `main` lives in __main__ (with argparse) and loads on first use: importing
    # __main__ here would make `python -m rxgem.viz` warn that it ran a module
    # already imported.
    if name == "main":
        from .__main__ import main

        globals()["main"] = main
        return main
    if name in _RETIRED:
        import importlib
        import warnings

        warnings.warn(
            f"{__name__}.{name} is deprecated: it leaves rxgem's public names"
            " in the next release (see CHANGELOG.md)",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module(_RETIRED[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
