"""pathprof: exact acyclic path profiles of Python programs (Ball-Larus 1996).

The public API is small: :class:`Profiler` measures, :func:`load` reads a data
file. Both are imported on first use, so that ``import pathprof.runtime`` inside a
measured program stays cheap and imports only the standard library.

PYTEST_DONT_REWRITE: pytest rewrites the asserts of its plugins' packages, this one
among them (the ``pytest11`` entry point); under ``pathprof run -m pytest`` it is
imported before pytest starts, and pytest's "already imported" warning would stop a
suite that turns warnings into errors. pathprof has no asserts for pytest to rewrite.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pathprof.exceptions import (
    CfgError,
    ConfigError,
    DataError,
    NoDataError,
    PathprofError,
)
from pathprof.version import __version__

if TYPE_CHECKING:
    from pathprof.measure.profiler import Profiler, load


__all__ = [
    "CfgError",
    "ConfigError",
    "DataError",
    "NoDataError",
    "PathprofError",
    "Profiler",
    "__version__",
    "load",
]


def __getattr__(name: str) -> Any:
    if name in ("Profiler", "load"):
        from pathprof.measure import profiler

        return getattr(profiler, name)
    raise AttributeError(f"module 'pathprof' has no attribute {name!r}")
