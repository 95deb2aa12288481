"""Path coverage as JSON (``pathprof coverage --format json``, ``--pathprof-report=json``).

Documented in ``docs/json-format.md``. Path counts are strings where they can
exceed 2**53 (``paths_possible``, ``missed``); ``percent`` is a float. Basis path
coverage (:mod:`pathprof.analysis.basis`, the headline) is in ``basis_covered``,
``basis_dimension`` and ``basis_percent``, per function, per file and in the totals.
Version 2: figures leave out what is excluded (``excluded``, per function, file and
in all) and take in files never imported (``imported``: false); each function has
its ``next_paths`` (:mod:`pathprof.analysis.nextpaths`, at most
:data:`NEXT_PATHS_LISTED`, ``next_paths_more`` counting the rest) and ``impossible_paths``, and
the document the suite's ``where_to_test_next``. Where conditions were measured
(``--conditions``), a function has ``conditions`` (each decision's vectors and each
condition's verdicts, :func:`decisions_json`) and ``conditions_totals``, and the
document ``conditions_totals``: keys added, not changed, so still version 2.
"""

from __future__ import annotations

import json
from typing import TextIO

from pathprof.analysis.conditioncoverage import (
    ConditionTotals,
    DecisionCoverage,
    suggestion,
    totals_of,
)
from pathprof.analysis.conditions import Vector
from pathprof.analysis.decisions import decisions, path_steps, path_story
from pathprof.analysis.pathcoverage import CoverageTotals, Excluded, FunctionCoverage, PathCoverage
from pathprof.data.profile import Path
from pathprof.version import __version__

__all__ = ["COVERAGE_JSON_VERSION", "coverage_json", "render"]

COVERAGE_JSON_VERSION = 2


def _totals(totals: CoverageTotals, basis: CoverageTotals) -> dict[str, object]:
    return {"paths_possible": str(totals.possible), "paths_run": totals.run,
            "missed": str(totals.missed), "percent": totals.percent,
            "basis_covered": basis.run, "basis_dimension": basis.possible,
            "basis_percent": basis.percent,
            # counting stopped once a basis was full: paths_run a lower bound
            "paths_run_at_least": totals.lower_bound}


def _excluded(excluded: Excluded) -> dict[str, object]:
    return {"functions": dict(sorted(excluded.functions.items())),
            "partly": excluded.partly, "paths": str(excluded.paths),
            "dimensions": excluded.dimensions}


def _path(fn: FunctionCoverage, path: Path) -> dict[str, object]:
    profile = fn.profile
    return {"id": path.key, "start": path.start, "end": path.end,
            "lines": [list(span) if (span := profile.block_lines(b)) else None
                      for b in path.blocks],
            "decisions": decisions(profile, path)}


def _missed(fn: FunctionCoverage, path: Path) -> dict[str, object]:
    """A missed path, with why it cannot run when the source proves it (else null)."""
    why = fn.impossible(path)
    return {**_path(fn, path), "impossible": None if why is None else str(why)}


#: next paths listed per function: each is as long as the function, so listing every one
#: of a function with a thousand decisions would write hundreds of megabytes
NEXT_PATHS_LISTED = 100


def _next(fn: FunctionCoverage) -> dict[str, object]:
    """The function's next paths to write (the first :data:`NEXT_PATHS_LISTED`, with how
    many more its basis misses) and those proved impossible."""
    found = fn.next_paths(NEXT_PATHS_LISTED)
    return {
        "next_paths": [{**_path(fn, p), "steps": path_steps(fn.profile, p, fn.lines),
                        "story": path_story(fn.profile, p, fn.lines),
                        "cut_short": (None if (why := found.cut_short_of(p)) is None
                                      else str(why))}
                       for p in found.paths],
        "next_paths_unfound": found.unfound,
        "next_paths_more": found.needed - len(found.paths) - found.unfound,
        "impossible_paths": [{**_path(fn, p), "story": path_story(fn.profile, p, fn.lines),
                              "reason": str(why), "test": why.test,
                              "lines_tested": [why.first_line, why.second_line]}
                             for p, why in found.impossible]}


def _vector(vector: Vector) -> dict[str, object]:
    return {"values": list(vector.values), "outcome": vector.outcome}


def _condition_totals(totals: ConditionTotals) -> dict[str, object]:
    return {"decisions": totals.decisions, "unmeasured": totals.unmeasured,
            "conditions": totals.conditions, "outcomes_seen": totals.outcomes,
            "outcomes": 2 * totals.conditions, "mcdc_masking": totals.masking,
            "mcdc_unique_cause": totals.unique, "mcdc_percent": totals.mcdc_percent,
            "mcdc_unique_cause_percent": totals.unique_percent}


def decisions_json(decisions: list[DecisionCoverage]) -> list[dict[str, object]]:
    """Each decision: where, its text, every vector it allows with its runs, and per
    condition the verdicts: seen true and false, the pair of vectors that shows it in
    each MC/DC form (null: none ran), the evaluations it ended by raising, and where
    masking MC/DC is short, ``missing``: the vector to add (``add``) and the one it
    pairs with (``with``, and whether that one ran)."""
    found = []
    for entry in decisions:
        info = entry.info
        conditions: list[dict[str, object]] = []
        ran = {entry.vectors[k] for k in entry.counts}
        if not entry.measured:  # (too big to unfold, or where it could not be counted)
            conditions = [{"index": i, "text": text, "seen_true": None, "seen_false": None,
                           "mcdc_masking": None, "mcdc_unique_cause": None,
                           "raised": entry.raised.get(i, 0), "missing": None}
                          for i, text in enumerate(info.conditions)]
        for verdict, text in zip(entry.verdicts, info.conditions,
                                 strict=entry.measured):
            missing = None
            if verdict.masking is None and verdict.missing is not None:
                have, want = verdict.missing
                missing = {"add": _vector(want), "with": _vector(have),
                           "with_ran": have in ran,
                           "test": suggestion(entry.decision, want)}
            conditions.append({
                "index": verdict.condition, "text": text,
                "seen_true": verdict.seen_true, "seen_false": verdict.seen_false,
                "mcdc_masking": None if verdict.masking is None
                else [_vector(v) for v in verdict.masking],
                "mcdc_unique_cause": None if verdict.unique_cause is None
                else [_vector(v) for v in verdict.unique_cause],
                "raised": entry.raised.get(verdict.condition, 0),
                "missing": missing})
        found.append({
            "kind": info.kind, "line": info.span.line, "column": info.span.col,
            "end_line": info.span.end_line, "end_column": info.span.end_col,
            "text": info.text, "measured": entry.measured,
            "evaluations": entry.evaluations,
            "vectors": [{**_vector(v), "runs": entry.counts.get(k, 0)}
                        for k, v in enumerate(entry.vectors)] if entry.measured else [],
            "conditions": conditions, "totals": _condition_totals(entry.totals)})
    return found


def coverage_json(coverage: PathCoverage, missed_per_function: int = 10) -> dict[str, object]:
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
            if fn.decisions:
                entry["conditions"] = decisions_json(fn.decisions)
                entry["conditions_totals"] = _condition_totals(totals_of(fn.decisions))
            functions.append(entry)
        files.append({"file": file.file, "imported": file.imported,
                      **_totals(file.totals, file.basis),
                      "excluded": _excluded(file.excluded), "functions": functions})
    measured = [d for fn in coverage.functions() for d in fn.decisions]
    conditions = {"conditions_totals": _condition_totals(totals_of(measured))} if measured else {}
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
            **conditions, "files": files}


def render(coverage: PathCoverage, out: TextIO, **options: int) -> None:
    """The renderer (see :mod:`pathprof.report`): :func:`coverage_json`, indented, on
    ``out``."""
    print(json.dumps(coverage_json(coverage, **options), indent=2), file=out)
