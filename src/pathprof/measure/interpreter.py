"""Which interpreters pathprof can measure exactly.

The counters are list items incremented in place (``table[i] += 1``): exact while
the GIL makes each increment atomic with respect to other threads. A free-threaded
build (3.13t, 3.14t) running without the GIL would lose increments, so pathprof
refuses it rather than report counts that are not exact.
"""

from __future__ import annotations

import sys

from pathprof.exceptions import ConfigError

__all__ = ["require_gil"]


def gil_disabled() -> bool:
    """Whether this interpreter runs without the GIL right now."""
    is_enabled = getattr(sys, "_is_gil_enabled", None)
    return is_enabled is not None and not is_enabled()


def require_gil() -> None:
    """Raise :class:`ConfigError` on a free-threaded interpreter running without the GIL."""
    if gil_disabled():
        raise ConfigError("this Python runs without the GIL (a free-threaded build), where "
                          "pathprof's counts would not be exact; use the default build, or "
                          "run with PYTHON_GIL=1")
