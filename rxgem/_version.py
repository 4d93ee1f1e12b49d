"""rxgem's version, written here only: ``pyproject.toml`` reads it (``[tool.setuptools.dynamic]``)
and ``rxgem.__version__`` imports it."""

__version__ = "0.1.0"
