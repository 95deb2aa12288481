"""pathprof.report.conditions_text, the condition coverage and MC/DC report: a row per
function with decisions (decisions, conditions, outcomes seen of two per condition,
MC/DC masking with its percentage, unique-cause), a file's subtotal, the total, the
headline, the unmeasured decisions and the note; with ``show_missing`` each decision
short of MC/DC with each condition's pair of runs or the test to write, and the
evaluations a condition ended by raising. Checked on tiny programs measured in memory
with their conditions, the vectors worked out by hand."""

from __future__ import annotations

import io
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from pathprof import runtime
from pathprof.analysis.conditioncoverage import ConditionTotals
from pathprof.analysis.pathcoverage import PathCoverage, path_coverage
from pathprof.data.measurement import Measurement
from pathprof.data.modules import Sources
from pathprof.data.profile import FunctionProfile, decision_vectors
from pathprof.python.instrument import instrument_source
from pathprof.report.conditions_text import (
    MCDC_NOTE,
    conditions_headline,
    render,
    render_conditions,
)

SOURCE = """\
def both(a, b):
    if a[0] and b:
        return 1
    return 0


def either(a, b, c):
    if (a or b) and c:
        return 1
    return 0


def comp(ys, a):
    return [x for x in [y for y in ys if y and a]]


def plain(x):
    return x
"""


def _measure(source: str, run: Callable[[Any], object], file: str) -> Measurement:
    """``source`` instrumented in memory as ``file`` with its conditions, executed, and
    ``run(module)``'s paths and vectors (the runtime's registry is put back as it was)."""
    instrumented = instrument_source(source, file, module_key=f"{file}:test-conditions",
                                     conditions=True)
    module = types.ModuleType("conditions_text_subject")
    module.__file__ = file
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(runtime, "_modules", [])
        exec(instrumented.compile(file), module.__dict__)
        runtime.take_snapshot()
        run(module)
        ((_state, paths, cuts, _raised, _unattributed, _times, _closed, vectors),) = (
            runtime.take_snapshot())
    meta = instrumented.metadata
    functions = []
    for i, info in enumerate(meta.functions):
        fn = FunctionProfile(file, info.qualname, info.code_line, meta.source_hash, info)
        fn.counts, fn.cuts = dict(paths[i]), dict(cuts[i])
        fn.vectors = decision_vectors(info, vectors[i])
        functions.append(fn)
    return Measurement(functions=functions, sources=Sources({(file, meta.source_hash): source}))


def _run(module: Any) -> None:
    """both: (T, T) -> true, (T, F) -> false, and a[0] raising on an empty list.
    either: (T, -, F) -> false and (F, T, T) -> true. comp: its decision sits in a
    comprehension's iterable and is not counted. plain has no decision."""
    module.both([1], 1)
    module.both([1], 0)
    with pytest.raises(IndexError):
        module.both([], 1)
    module.either(1, 0, 0)
    module.either(0, 1, 1)
    module.comp([1], 1)
    module.plain(1)


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("COLUMNS", raising=False)
    return tmp_path


@pytest.fixture
def coverage(here: Path) -> PathCoverage:
    return path_coverage(_measure(SOURCE, _run, str(here / "m.py")))


def _lines(coverage: PathCoverage, **options: bool) -> list[str]:
    out = io.StringIO()
    render(coverage, out, **options)
    return [line.rstrip() for line in out.getvalue().splitlines()]


def _rows(lines: list[str]) -> dict[str, list[str]]:
    """The table's rows by name, their six figures."""
    rows = {}
    for line in lines:
        cells = line.split()
        if len(cells) >= 7 and "/" in cells[-1]:
            rows[" ".join(cells[:-6])] = cells[-6:]
        if cells[:1] == ["TOTAL"]:
            break
    return rows


def test_a_row_per_function_with_decisions_a_file_row_and_the_total(
        coverage: PathCoverage) -> None:
    # both: 2 conditions, outcomes a[0] true, b both ways: 3 of 4; MC/DC b only.
    # either: 3 conditions, outcomes a both, b true, c both: 5 of 6; MC/DC: c, masking
    # only (a changes too, where it cannot change the outcome). comp: not measured.
    assert _rows(_lines(coverage)) == {
        "m.py:1 both": ["1", "2", "3/4", "1/2", "50%", "1/2"],
        "m.py:7 either": ["1", "3", "5/6", "1/3", "33%", "0/3"],
        "m.py:13 comp": ["1", "0", "0/0", "0/0", "-", "0/0"],
        "m.py (file)": ["3", "5", "8/10", "2/5", "40%", "1/5"],
        "TOTAL": ["3", "5", "8/10", "2/5", "40%", "1/5"],
    }


def test_the_header_names_the_columns(coverage: PathCoverage) -> None:
    assert _lines(coverage)[0].split() == [
        "Function", "Decisions", "Conditions", "Outcomes", "MC/DC", "MC/DC", "%",
        "Unique-cause"]


def test_under_the_table_the_headline_the_unmeasured_and_the_note(
        coverage: PathCoverage) -> None:
    lines = _lines(coverage)
    after = lines[next(i for i, line in enumerate(lines) if line.startswith("TOTAL")) + 1:]
    assert after == [
        "MC/DC 40%: 2 of 5 conditions shown to decide their outcome (unique-cause 1); "
        "condition outcomes 8 of 10 (80%), in 2 decisions.",
        "1 decision(s) have too many ways to be evaluated to count each one, and were not "
        "measured.",
        MCDC_NOTE,
    ]


def test_show_missing_tells_each_condition_its_pair_or_the_test_to_write(
        coverage: PathCoverage) -> None:
    lines = _lines(coverage, show_missing=True)
    start = lines.index("Decisions short of MC/DC, each condition with the two runs that "
                        "show it decide the outcome, or the test to write:")
    assert lines[start + 1:] == [
        "m.py:2 both  if a[0] and b  MC/DC 1 of 2; 2 evaluations, 2 of 3 ways",
        # (F, -) -> false is missing; (T, T) -> true, its pair, ran
        "    ✗ a[0]: seen true only; add a test where a[0] false (so the decision is false), "
        "beside the run where a[0] true, b true (so the decision is true)",
        "    ✓ b: a[0] true, b false → false  vs  a[0] true, b true → true",
        "    ! a[0] raised in 1 evaluation (no outcome)",
        "m.py:8 either  if (a or b) and c  MC/DC 1 of 3; 2 evaluations, 2 of 5 ways",
        # a: (T, -, T) -> true with (F, F, -) -> false, neither of which ran
        "    ✗ a: seen both ways; add a test where a true, c true (so the decision is "
        "true), and one where a false, b false (so the decision is false)",
        "    ✗ b: seen true only; add a test where a false, b false (so the decision is "
        "false), beside the run where a false, b true, c true (so the decision is true)",
        "    ✓ c: a false, b true, c true → true  vs  a true, b not evaluated, c false → "
        "false (masking only)",
    ]


def test_a_condition_never_evaluated_or_only_raising_is_said(here: Path) -> None:
    def run(module: Any) -> None:  # both([], 1) only: a[0] raised, b was never reached
        with pytest.raises(IndexError):
            module.both([], 1)
    coverage = path_coverage(_measure(SOURCE, run, str(here / "m.py")))
    lines = _lines(coverage, show_missing=True)
    head = lines.index("m.py:2 both  if a[0] and b  MC/DC 0 of 2; 0 evaluations, 0 of 3 ways")
    assert lines[head + 1].startswith("    ✗ a[0]: evaluated only as it raised; add a test "
                                      "where ")
    assert lines[head + 2].startswith("    ✗ b: never evaluated; add a test where ")
    assert lines[head + 3] == "    ! a[0] raised in 1 evaluation (no outcome)"


def test_skip_covered_leaves_out_functions_at_full_mcdc(here: Path) -> None:
    def run(module: Any) -> None:
        for a, b in ((1, 1), (1, 0), (0, 1)):  # a and b both shown
            module.both([a], b)
        module.either(1, 0, 0)
    coverage = path_coverage(_measure(SOURCE, run, str(here / "m.py")))
    rows = _rows(_lines(coverage, skip_covered=True))
    # both is complete and left out, comp (not measured) counts as complete; the file
    # row still sums them all: outcomes 4 (both) + 2 (either: a true, c false)
    assert list(rows) == ["m.py:7 either", "m.py (file)", "TOTAL"]
    assert rows["m.py:7 either"] == ["1", "3", "2/6", "0/3", "0.0%", "0/3"]
    assert rows["m.py (file)"] == ["3", "5", "6/10", "2/5", "40%", "2/5"]


def test_per_file_has_a_row_per_file(here: Path, coverage: PathCoverage) -> None:
    other = path_coverage(_measure(SOURCE, lambda m: m.both([1], 1), str(here / "n.py")))
    both = PathCoverage(coverage.files + other.files, coverage.totals)
    lines = _lines(both, per_file=True)
    assert lines[0].split()[0] == "File"
    rows = _rows(lines)
    # n.py: both (T, T) only: outcomes a[0] true, b true; either never evaluated
    assert rows == {"m.py": ["3", "5", "8/10", "2/5", "40%", "1/5"],
                    "n.py": ["3", "5", "2/10", "0/5", "0.0%", "0/5"],
                    "TOTAL": ["6", "10", "10/20", "2/10", "20%", "1/10"]}


def test_no_measured_decision_says_how_to_measure_them(here: Path) -> None:
    coverage = path_coverage(_measure("def f(x):\n    return x\n", lambda m: m.f(1),
                                      str(here / "f.py")))
    assert _lines(coverage) == [
        "No decisions were measured with their conditions: measure with pathprof run "
        "--conditions, or pytest --pathprof-conditions."]
    assert _lines(path_coverage(Measurement()))[0].startswith("No decisions were measured")


@pytest.mark.parametrize(("masking", "conditions", "outcomes", "text"), [
    (0, 0, 0, "MC/DC -: 0 of 0 conditions shown to decide their outcome (unique-cause 0); "
              "condition outcomes 0 of 0 (-), in 1 decision."),
    (3, 3, 6, "MC/DC 100%: 3 of 3 conditions shown to decide their outcome (unique-cause 0); "
              "condition outcomes 6 of 6 (100%), in 1 decision."),
    # 199 of 200: 99.5% is not rounded up to 100%; 1999 of 2000 (99.95%) shows 99.9%
    (199, 200, 399, "MC/DC 99.5%: 199 of 200 conditions shown to decide their outcome "
                    "(unique-cause 0); condition outcomes 399 of 400 (99.8%), in 1 decision."),
    (1999, 2000, 0, "MC/DC 99.9%: 1,999 of 2,000 conditions shown to decide their outcome "
                    "(unique-cause 0); condition outcomes 0 of 4,000 (0.0%), in 1 decision."),
    # under 1%: one decimal; from 1% on, none
    (1, 200, 4, "MC/DC 0.5%: 1 of 200 conditions shown to decide their outcome (unique-cause "
                "0); condition outcomes 4 of 400 (1%), in 1 decision."),
])
def test_the_headline_percentages(masking: int, conditions: int, outcomes: int,
                                  text: str) -> None:
    totals = ConditionTotals(decisions=1, conditions=conditions, outcomes=outcomes,
                             masking=masking)
    assert conditions_headline(totals) == text


def test_the_headline_counts_only_measured_decisions() -> None:
    totals = ConditionTotals(decisions=3, conditions=2, outcomes=1, masking=1, unique=1,
                             unmeasured=1)
    assert conditions_headline(totals).endswith("in 2 decisions.")


def test_render_conditions_prints_on_the_console_given(coverage: PathCoverage) -> None:
    out = io.StringIO()
    render_conditions(coverage, Console(file=out, width=250), per_file=True)
    assert out.getvalue().splitlines()[0].split()[0] == "File"


def test_a_file_name_with_brackets_is_shown_as_it_is(here: Path) -> None:
    (here / "[x]").mkdir()
    coverage = path_coverage(_measure(SOURCE, lambda m: m.both([1], 1),
                                      str(here / "[x]" / "m.py")))
    assert "[x]/m.py:1 both" in _rows(_lines(coverage))
