"""pathprof.report.coverage_json, the path coverage JSON (docs/json-format.md, version 2):
totals per function, file and in all (path counts as strings, basis figures, the lower
bound flag), what exclusions took, files never imported, unparsed files and notes, each
function's missed paths (with why the source proves one impossible), next paths (at
most :data:`NEXT_PATHS_LISTED`, the rest counted) and impossible paths, contexts, the
suite's where-to-test-next, and with conditions measured each decision's vectors and
verdicts. The output is parsed and checked against tiny programs measured in memory,
counted by hand."""

from __future__ import annotations

import io
import json
import types
from collections.abc import Callable
from typing import Any

import pytest

from pathprof import runtime
from pathprof.analysis.pathcoverage import PathCoverage, path_coverage
from pathprof.data.measurement import Measurement
from pathprof.data.modules import Sources
from pathprof.data.profile import FunctionProfile, decision_vectors
from pathprof.python.instrument import instrument_source
from pathprof.report.coverage_json import (
    COVERAGE_JSON_VERSION,
    NEXT_PATHS_LISTED,
    coverage_json,
    render,
)
from pathprof.version import __version__

#: sign: 2 paths, basis dimension 2 (5 DAG edges, 5 blocks). same: 4 paths, dimension 3
#: (9 edges, 8 blocks), two of them impossible (x cannot change between its tests).
#: skipped: excluded whole (2 paths, dimension 2). partly: 3 paths, dimension 3, of
#: which the excluded raise takes 1 path and 1 dimension.
SOURCE = """\
def sign(x):
    if x < 0:
        return -1
    return 1


def same(x):
    if x:
        a = 1
    else:
        a = 2
    if x:
        return a
    return 0


def skipped(x):  # pragma: no cover
    if x:
        return 1
    return 2


def partly(x):
    if x is None:  # pragma: no cover
        raise ValueError("no")
    if x:
        return 1
    return 2
"""
FILE = "/proj/m.py"


def _measure(source: str, run: Callable[[Any], object], file: str = FILE, *,
             conditions: bool = False) -> Measurement:
    """``source`` instrumented in memory as ``file``, executed, and ``run(module)``'s
    paths (the runtime's registry is put back as it was)."""
    instrumented = instrument_source(source, file, module_key=f"{file}:test-coverage-json",
                                     conditions=conditions)
    module = types.ModuleType("coverage_json_subject")
    module.__file__ = file
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(runtime, "_modules", [])
        exec(instrumented.compile(file), module.__dict__)
        runtime.take_snapshot()
        run(module)
        ((_state, paths, cuts, raised, unattributed, _times, closed, vectors),) = (
            runtime.take_snapshot())
    meta = instrumented.metadata
    functions = []
    for i, info in enumerate(meta.functions):
        fn = FunctionProfile(file, info.qualname, info.code_line, meta.source_hash, info)
        fn.counts, fn.cuts = dict(paths[i]), dict(cuts[i])
        fn.raised, fn.unattributed, fn.closed = raised[i], unattributed[i], closed[i]
        if vectors:
            fn.vectors = decision_vectors(info, vectors[i])
        functions.append(fn)
    return Measurement(functions=functions, sources=Sources({(file, meta.source_hash): source}))


def _run(module: Any) -> None:
    module.sign(2)
    module.same(1)
    module.same(0)
    module.partly(0)


@pytest.fixture(scope="module")
def measured() -> Measurement:
    return _measure(SOURCE, _run)


@pytest.fixture(scope="module")
def document(measured: Measurement) -> dict[str, Any]:
    out = io.StringIO()
    render(path_coverage(measured), out)
    return json.loads(out.getvalue())


def _function(document: dict[str, Any], qualname: str) -> dict[str, Any]:
    return next(fn for file in document["files"] for fn in file["functions"]
                if fn["qualname"] == qualname)


def _totals(entry: dict[str, Any]) -> dict[str, Any]:
    return {key: entry[key] for key in (
        "paths_possible", "paths_run", "missed", "percent", "basis_covered",
        "basis_dimension", "basis_percent", "paths_run_at_least")}


def _copy(fn: FunctionProfile, **fields: Any) -> FunctionProfile:
    copy = FunctionProfile(fn.file, fn.qualname, fn.first_line, fn.source_hash, fn.meta)
    copy.counts, copy.cuts = dict(fn.counts), dict(fn.cuts)
    for name, value in fields.items():
        setattr(copy, name, value)
    return copy


def test_the_head_of_the_document(document: dict[str, Any]) -> None:
    assert (document["format"], document["version"], document["pathprof_version"]) == (
        "pathprof-coverage", 2, __version__)
    assert COVERAGE_JSON_VERSION == 2
    assert (document["unparsed"], document["notes"]) == ([], [])
    assert "conditions_totals" not in document  # no condition was measured


def test_the_totals_sum_the_functions(document: dict[str, Any]) -> None:
    # paths 2 + 4 + 2 possible, 1 + 2 + 1 run; basis 1 + 2 + 1 of 2 + 3 + 2
    whole = {"paths_possible": "8", "paths_run": 4, "missed": "4", "percent": 50.0,
             "basis_covered": 4, "basis_dimension": 7, "basis_percent": 100 * 4 / 7,
             "paths_run_at_least": False}
    assert _totals(document["totals"]) == whole
    (file,) = document["files"]
    assert (file["file"], file["imported"]) == (FILE, True)
    assert _totals(file) == whole


def test_each_functions_figures(document: dict[str, Any]) -> None:
    assert [(fn["qualname"], fn["first_line"], fn["last_line"])
            for fn in document["files"][0]["functions"]] == [
        ("sign", 1, 4), ("same", 7, 14), ("partly", 23, 28)]  # skipped is excluded
    assert _totals(_function(document, "same")) == {
        "paths_possible": "4", "paths_run": 2, "missed": "2", "percent": 50.0,
        "basis_covered": 2, "basis_dimension": 3, "basis_percent": 100 * 2 / 3,
        "paths_run_at_least": False}


def test_what_exclusions_took_is_counted_per_function_file_and_in_all(
        document: dict[str, Any]) -> None:
    assert _function(document, "sign")["excluded"] == {
        "functions": {}, "partly": 0, "paths": "0", "dimensions": 0}
    assert _function(document, "partly")["excluded"] == {
        "functions": {}, "partly": 1, "paths": "1", "dimensions": 1}
    # skipped whole (2 paths, 2 dimensions) and partly's raise (1, 1)
    everything = {"functions": {"excluded line": 1}, "partly": 1, "paths": "3",
                  "dimensions": 3}
    assert document["files"][0]["excluded"] == everything
    assert document["excluded"] == everything
    assert _totals(_function(document, "partly"))["paths_possible"] == "2"


def test_a_missed_path_has_its_lines_and_decisions(document: dict[str, Any],
                                                   measured: Measurement) -> None:
    profile = measured.functions[0]
    test_block = next(b for b, block in enumerate(profile.meta.blocks)
                      if block.pieces and block.pieces[0].line == 2)
    # sign has paths 0 and 1; sign(2) ran the one through line 4: the other is missed
    (missed,) = {0, 1} - {n for n, count in profile.counts.items() if count}
    assert _function(document, "sign")["missed_paths"] == [{
        "id": str(missed), "start": "entry", "end": "return",
        "lines": [[2, 2], [3, 3]],
        "decisions": [{"block": test_block, "line": 2, "taken": "true"}],
        "impossible": None}]


def test_a_missed_path_the_source_rules_out_says_why(document: dict[str, Any]) -> None:
    missed = _function(document, "same")["missed_paths"]
    assert sorted((tuple(map(tuple, p["lines"])), p["impossible"]) for p in missed) == [
        (((8, 8), (9, 9), (12, 12), (14, 14)),
         "`x` is true on line 8 but false on line 12, and nothing between can change it"),
        (((8, 8), (11, 11), (12, 12), (13, 13)),
         "`x` is false on line 8 but true on line 12, and nothing between can change it")]


def test_the_next_path_to_write_has_its_steps_and_story(document: dict[str, Any]) -> None:
    sign = _function(document, "sign")
    (next_path,) = sign["next_paths"]
    assert next_path["id"] == sign["missed_paths"][0]["id"]
    assert next_path["steps"] == [{"line": 2, "code": "if x < 0:", "taken": "true"}]
    assert next_path["story"] == "if x < 0: → true"
    assert next_path["cut_short"] is None
    assert (sign["next_paths_unfound"], sign["next_paths_more"], sign["impossible_paths"]) == (
        0, 0, [])


def test_an_independent_path_only_impossible_paths_give_is_unfound(
        document: dict[str, Any]) -> None:
    same = _function(document, "same")
    assert (same["next_paths"], same["next_paths_unfound"], same["next_paths_more"]) == (
        [], 1, 0)
    assert sorted((p["story"], p["test"], p["lines_tested"])
                  for p in same["impossible_paths"]) == [
        ("if x: → false · if x: → true", "x", [8, 12]),
        ("if x: → true · if x: → false", "x", [8, 12])]
    assert all(p["reason"].startswith("`x` is ") for p in same["impossible_paths"])


def test_where_to_test_next_is_most_missing_then_most_called(document: dict[str, Any]) -> None:
    # each misses one dimension; same was called twice, sign and partly once (by line)
    assert document["where_to_test_next"] == [
        {"file": FILE, "qualname": "same", "first_line": 7, "basis_missing": 1, "calls": 2},
        {"file": FILE, "qualname": "sign", "first_line": 1, "basis_missing": 1, "calls": 1},
        {"file": FILE, "qualname": "partly", "first_line": 23, "basis_missing": 1,
         "calls": 1}]


def test_missed_per_function_limits_the_missed_paths(measured: Measurement) -> None:
    same = _function(coverage_json(path_coverage(measured), missed_per_function=1), "same")
    assert len(same["missed_paths"]) == 1
    assert same["missed"] == "2"  # the figures still count both


def test_contexts_name_the_tests_that_ran_each_path(measured: Measurement) -> None:
    sign = _copy(measured.functions[0])
    sign.mark_context("test_b")
    sign.mark_context("test_a")
    (ran,) = [n for n, count in sign.counts.items() if count]
    entry = _function(coverage_json(path_coverage(
        Measurement(functions=[sign], sources=measured.sources))), "sign")
    assert entry["contexts"] == {str(ran): ["test_a", "test_b"]}
    assert "contexts" not in _function(coverage_json(path_coverage(measured)), "same")


def test_a_function_that_stopped_counting_makes_paths_run_a_lower_bound(
        measured: Measurement) -> None:
    stopped = _copy(measured.functions[1], stopped=True)  # same: 2 of 4 run
    document = coverage_json(path_coverage(Measurement(functions=[measured.functions[0],
                                                                  stopped],
                                                       sources=measured.sources)))
    assert _function(document, "same")["paths_run_at_least"] is True
    assert _function(document, "sign")["paths_run_at_least"] is False
    assert document["files"][0]["paths_run_at_least"] is True  # type: ignore[index]
    assert document["totals"]["paths_run_at_least"] is True  # type: ignore[index]


def test_files_never_imported_unparsed_files_and_notes(measured: Measurement) -> None:
    meta = instrument_source(SOURCE, "/proj/other.py").metadata
    unmeasured = [FunctionProfile("/proj/other.py", info.qualname, info.code_line,
                                  meta.source_hash, info) for info in meta.functions[:1]]
    coverage = path_coverage(measured, unmeasured=unmeasured,
                             unparsed=[("/proj/bad.py", "does not parse")],
                             notes=["A note."])
    document = coverage_json(coverage)
    assert document["unparsed"] == [{"file": "/proj/bad.py", "why": "does not parse"}]
    assert document["notes"] == ["A note."]
    files = document["files"]
    assert [(f["file"], f["imported"]) for f in files] == [  # type: ignore[union-attr]
        ("/proj/m.py", True), ("/proj/other.py", False)]
    other = files[1]  # type: ignore[index]
    # sign of other.py, counted at 0%: 0 of 2 paths, 0 of 2 dimensions
    assert (other["paths_possible"], other["paths_run"], other["percent"],
            other["basis_dimension"], other["basis_percent"]) == ("2", 0, 0.0, 2, 0.0)
    assert document["totals"]["paths_possible"] == "10"  # type: ignore[index]


def test_nothing_measured_is_complete() -> None:
    document = coverage_json(path_coverage(Measurement()))
    assert document["files"] == []
    assert _totals(document["totals"]) == {  # type: ignore[arg-type]
        "paths_possible": "0", "paths_run": 0, "missed": "0", "percent": 100.0,
        "basis_covered": 0, "basis_dimension": 0, "basis_percent": 100.0,
        "paths_run_at_least": False}
    assert document["where_to_test_next"] == []


def test_at_most_100_next_paths_are_listed_and_the_rest_counted() -> None:
    # 101 ifs one after another: 2**101 paths, dimension 102; one path ran, so 101
    # independent paths are missing: 100 listed, 1 more
    source = "def many(x):\n" + "".join(f"    if x == {i}:\n        x += 1\n"
                                          for i in range(101)) + "    return x\n"
    measured = _measure(source, lambda m: m.many(-1), "/proj/many.py")
    many = _function(coverage_json(path_coverage(measured)), "many")
    assert NEXT_PATHS_LISTED == 100
    assert many["paths_possible"] == str(2**101)  # every digit: beyond a float's 2**53
    assert many["missed"] == str(2**101 - 1)
    assert (many["basis_covered"], many["basis_dimension"]) == (1, 102)
    assert (len(many["next_paths"]), many["next_paths_more"], many["next_paths_unfound"]) == (
        100, 1, 0)
    assert len(many["missed_paths"]) == 10  # the default missed_per_function


BOTH = """\
def both(a, b):
    if a[0] and b:
        return 1
    return 0


def comp(ys, a):
    return [x for x in [y for y in ys if y and a]]
"""


def _conditions_run(module: Any) -> None:
    """(T, T) -> true, (T, F) -> false, and ``a[0]`` raising once (an empty list);
    comp's decision sits in a comprehension's iterable, where it cannot be counted."""
    module.both([1], 1)
    module.both([1], 0)
    with pytest.raises(IndexError):
        module.both([], 1)
    module.comp([1, 0], 1)


@pytest.fixture(scope="module")
def conditions() -> dict[str, Any]:
    measured = _measure(BOTH, _conditions_run, "/proj/both.py", conditions=True)
    return coverage_json(path_coverage(measured))


def test_a_decisions_vectors_and_their_runs(conditions: dict[str, Any]) -> None:
    (decision,) = _function(conditions, "both")["conditions"]
    assert {key: decision[key] for key in (
        "kind", "line", "column", "end_line", "end_column", "text", "measured",
        "evaluations")} == {
        "kind": "if", "line": 2, "column": 7, "end_line": 2, "end_column": 17,
        "text": "a[0] and b", "measured": True, "evaluations": 2}  # the raise has no outcome
    assert decision["vectors"] == [
        {"values": [False, None], "outcome": False, "runs": 0},
        {"values": [True, False], "outcome": False, "runs": 1},
        {"values": [True, True], "outcome": True, "runs": 1}]


def test_each_conditions_verdicts_and_the_test_still_to_write(
        conditions: dict[str, Any]) -> None:
    a, b = _function(conditions, "both")["conditions"][0]["conditions"]
    # a[0] was only true (and raised once): (F, -) -> false is missing beside
    # (T, T) -> true, which ran
    assert a == {"index": 0, "text": "a[0]", "seen_true": True, "seen_false": False,
                 "mcdc_masking": None, "mcdc_unique_cause": None, "raised": 1,
                 "missing": {"add": {"values": [False, None], "outcome": False},
                             "with": {"values": [True, True], "outcome": True},
                             "with_ran": True,
                             "test": "a[0] false (so the decision is false)"}}
    # b: (T, F) -> false and (T, T) -> true show it, a[0] held, in both forms
    pair = [{"values": [True, False], "outcome": False},
            {"values": [True, True], "outcome": True}]
    assert b == {"index": 1, "text": "b", "seen_true": True, "seen_false": True,
                 "mcdc_masking": pair, "mcdc_unique_cause": pair, "raised": 0,
                 "missing": None}


def test_condition_totals_per_decision_function_and_document(
        conditions: dict[str, Any]) -> None:
    both = _function(conditions, "both")
    # 2 conditions, outcomes: a[0] true, b true and false = 3 of 4; MC/DC: b only
    expected = {"decisions": 1, "unmeasured": 0, "conditions": 2, "outcomes_seen": 3,
                "outcomes": 4, "mcdc_masking": 1, "mcdc_unique_cause": 1,
                "mcdc_percent": 50.0, "mcdc_unique_cause_percent": 50.0}
    assert both["conditions"][0]["totals"] == expected
    assert both["conditions_totals"] == expected
    # comp's decision adds a decision, unmeasured, and no condition
    assert conditions["conditions_totals"] == {**expected, "decisions": 2, "unmeasured": 1}


def test_a_decision_that_could_not_be_counted_has_no_verdicts(
        conditions: dict[str, Any]) -> None:
    (decision,) = _function(conditions, "comp")["conditions"]
    assert (decision["kind"], decision["text"], decision["measured"], decision["vectors"]) == (
        "comprehension if", "y and a", False, [])
    assert decision["conditions"] == [
        {"index": i, "text": text, "seen_true": None, "seen_false": None,
         "mcdc_masking": None, "mcdc_unique_cause": None, "raised": 0, "missing": None}
        for i, text in enumerate(("y", "a"))]


def test_render_writes_indented_json(measured: Measurement) -> None:
    coverage: PathCoverage = path_coverage(measured)
    out = io.StringIO()
    render(coverage, out, missed_per_function=0)
    text = out.getvalue()
    assert text.startswith('{\n  "format": "pathprof-coverage",\n')
    assert text.endswith("}\n")
    assert _function(json.loads(text), "same")["missed_paths"] == []
