"""rxgem's performance harness: ``python -m benchmarks`` (see ``benchmarks/README.md``).

``benchmarks.captures`` generates the inputs, ``benchmarks.measure`` measures, and
``benchmarks.__main__`` prints the report. ``tests/integration/test_perf_regression.py`` reuses the
first two.
"""
