"""The coverage formats other tools read: LCOV (``lcov``) and Cobertura XML (``xml``).

Used by ``pathprof lcov``, ``pathprof xml`` and ``pytest --pathprof-report=lcov|xml``."""

from __future__ import annotations

import sys

from pathprof.analysis.linecoverage import LineCoverage, line_coverage
from pathprof.data.measurement import Measurement
from pathprof.exceptions import PathprofError

__all__ = ["EXPORTS", "write_export"]

#: format -> default file name (coverage.py's and pytest-cov's)
EXPORTS = {"lcov": "coverage.lcov", "xml": "coverage.xml"}


def write_export(kind: str, measurement: Measurement, path: str | None) -> LineCoverage:
    """Write ``measurement`` as ``kind`` (see :data:`EXPORTS`) to ``path`` (None: standard
    output); returns what was written. An unwritable path raises :class:`PathprofError`."""
    from pathprof.report.cobertura import write_cobertura
    from pathprof.report.lcov import write_lcov

    writer = {"lcov": write_lcov, "xml": write_cobertura}[kind]
    coverage = line_coverage(measurement)
    if path is None:
        writer(coverage, sys.stdout)
        return coverage
    try:
        with open(path, "w", encoding="utf-8") as output:
            writer(coverage, output)
    except OSError as err:
        raise PathprofError(f"cannot write {path}: {err.strerror}") from err
    return coverage
