"""Path coverage as JSON (``pathprof coverage --format json``, ``--pathprof-report=json``).

Documented in ``docs/json-format.md``. Path counts are strings where they can
exceed 2**53 (``paths_possible``, ``missed``); ``percent`` is a float. Basis path
coverage (:mod:`pathprof.analysis.basis`, the headline) is in ``basis_covered``,
``basis_dimension`` and ``basis_percent``, per function, per file and in the totals.
"""

from __future__ import annotations

import json
from typing import Any, TextIO

from pathprof.analysis.decisions import decisions
from pathprof.analysis.pathcoverage import CoverageTotals, PathCoverage
from pathprof.version import __version__

__all__ = ["COVERAGE_JSON_VERSION", "coverage_json", "render"]

COVERAGE_JSON_VERSION = 1


def _totals(totals: CoverageTotals, basis: CoverageTotals) -> dict[str, Any]:
    return {"paths_possible": str(totals.possible), "paths_run": totals.run,
            "missed": str(totals.missed), "percent": totals.percent,
            "basis_covered": basis.run, "basis_dimension": basis.possible,
            "basis_percent": basis.percent,
            # counting stopped once a basis was full: paths_run a lower bound
            "paths_run_at_least": totals.lower_bound}


def coverage_json(coverage: PathCoverage, missed_per_function: int = 10) -> dict[str, Any]:
    files = []
    for file in coverage.files:
        functions = []
        for fn in file.functions:
            profile = fn.profile
            entry = {"qualname": fn.qualname, "first_line": profile.meta.first_line,
                     "last_line": profile.meta.last_line, **_totals(fn.totals, fn.basis),
                     "missed_paths": [
                         {"id": p.key, "start": p.start, "end": p.end,
                          "lines": [list(span) if (span := profile.block_lines(b)) else None
                                    for b in p.blocks],
                          "decisions": decisions(profile, p)}
                         for p in fn.missed(missed_per_function)]}
            if fn.contexts:
                entry["contexts"] = fn.contexts
            functions.append(entry)
        files.append({"file": file.file, **_totals(file.totals, file.basis),
                      "functions": functions})
    return {"format": "pathprof-coverage", "version": COVERAGE_JSON_VERSION,
            "pathprof_version": __version__, "totals": _totals(coverage.totals, coverage.basis),
            "files": files}


def render(coverage: PathCoverage, out: TextIO, **options: Any) -> None:
    """The renderer (see :mod:`pathprof.report`): :func:`coverage_json`, indented, on
    ``out``."""
    print(json.dumps(coverage_json(coverage, **options), indent=2), file=out)
