"""What pathprof tells the user while a program runs: one clean line on stderr.

Like coverage.py's warnings, and unlike :func:`warnings.warn`, a message is never
shown with a source line under it, never turned into an exception by the program's
warning filters, and each one is said once per process.
"""

from __future__ import annotations

import sys

__all__ = ["warn"]

_said: set[str] = set()


def warn(message: str) -> None:
    """Write ``pathprof: message`` on stderr, unless this process already did."""
    if message in _said:
        return
    _said.add(message)
    try:
        sys.stderr.write(f"pathprof: {message}\n")
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):
        pass  # no usable stderr (closed, or None under pythonw): nothing to tell
