"""Path coverage as JSON (``pathprof coverage --format json``, ``--pathprof-report=json``).

Documented in ``docs/json-format.md``. Path counts are strings where they can
exceed 2**53 (``paths_possible``, ``missed``); ``percent`` is a float. Basis path
coverage (:mod:`pathprof.analysis.basis`, the headline) is in ``basis_covered``,
``basis_dimension`` and ``basis_percent``, per function, per file and in the totals.
Version 2: figures leave out what is excluded (``excluded``, per function, file and
in all) and take in files never imported (``imported``: false); each function has
its ``next_paths`` (:mod:`pathprof.analysis.nextpaths`) and ``impossible_paths``, and
the document the suite's ``where_to_test_next``.
"""

from __future__ import annotations

import json
from typing import Any, TextIO

from pathprof.analysis.decisions import decisions, path_steps, path_story
from pathprof.analysis.pathcoverage import CoverageTotals, Excluded, FunctionCoverage, PathCoverage
from pathprof.data.profile import Path
from pathprof.version import __version__

__all__ = ["COVERAGE_JSON_VERSION", "coverage_json", "render"]

COVERAGE_JSON_VERSION = 2


def _totals(totals: CoverageTotals, basis: CoverageTotals) -> dict[str, Any]:
    return {"paths_possible": str(totals.possible), "paths_run": totals.run,
            "missed": str(totals.missed), "percent": totals.percent,
            "basis_covered": basis.run, "basis_dimension": basis.possible,
            "basis_percent": basis.percent,
            # counting stopped once a basis was full: paths_run a lower bound
            "paths_run_at_least": totals.lower_bound}


def _excluded(excluded: Excluded) -> dict[str, Any]:
    return {"functions": dict(sorted(excluded.functions.items())),
            "partly": excluded.partly, "paths": str(excluded.paths),
            "dimensions": excluded.dimensions}


def _path(fn: FunctionCoverage, path: Path) -> dict[str, Any]:
    profile = fn.profile
    return {"id": path.key, "start": path.start, "end": path.end,
            "lines": [list(span) if (span := profile.block_lines(b)) else None
                      for b in path.blocks],
            "decisions": decisions(profile, path)}


def _missed(fn: FunctionCoverage, path: Path) -> dict[str, Any]:
    """A missed path, with why it cannot run when the source proves it (else null)."""
    why = fn.impossible(path)
    return {**_path(fn, path), "impossible": None if why is None else str(why)}


def _next(fn: FunctionCoverage) -> dict[str, Any]:
    """The function's next paths to write and those proved impossible."""
    found = fn.next_paths()
    return {
        "next_paths": [{**_path(fn, p), "steps": path_steps(fn.profile, p, fn.lines),
                        "story": path_story(fn.profile, p, fn.lines),
                        "cut_short": (None if p.key not in found.cut_short
                                      else str(found.cut_short[p.key]))}
                       for p in found.paths],
        "next_paths_unfound": found.unfound,
        "impossible_paths": [{**_path(fn, p), "story": path_story(fn.profile, p, fn.lines),
                              "reason": str(why), "test": why.test,
                              "lines_tested": [why.first_line, why.second_line]}
                             for p, why in found.impossible]}


def coverage_json(coverage: PathCoverage, missed_per_function: int = 10) -> dict[str, Any]:
    files = []
    for file in coverage.files:
        functions = []
        for fn in file.functions:
            profile = fn.profile
            entry = {"qualname": fn.qualname, "first_line": profile.meta.first_line,
                     "last_line": profile.meta.last_line, **_totals(fn.totals, fn.basis),
                     "excluded": _excluded(fn.excluded),
                     "missed_paths": [_missed(fn, p) for p in fn.missed(missed_per_function)],
                     **_next(fn)}
            if fn.contexts:
                entry["contexts"] = fn.contexts
            functions.append(entry)
        files.append({"file": file.file, "imported": file.imported,
                      **_totals(file.totals, file.basis),
                      "excluded": _excluded(file.excluded), "functions": functions})
    return {"format": "pathprof-coverage", "version": COVERAGE_JSON_VERSION,
            "pathprof_version": __version__, "totals": _totals(coverage.totals, coverage.basis),
            "excluded": _excluded(coverage.excluded),
            "unparsed": [{"file": file, "why": why} for file, why in coverage.unparsed],
            "notes": coverage.notes,
            "where_to_test_next": [
                {"file": fn.profile.file, "qualname": fn.qualname,
                 "first_line": fn.profile.meta.first_line,
                 "basis_missing": fn.basis.missed, "calls": fn.calls}
                for fn in coverage.where_to_test_next(None)],
            "files": files}


def render(coverage: PathCoverage, out: TextIO, **options: Any) -> None:
    """The renderer (see :mod:`pathprof.report`): :func:`coverage_json`, indented, on
    ``out``."""
    print(json.dumps(coverage_json(coverage, **options), indent=2), file=out)
