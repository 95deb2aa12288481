"""pathprof.report.coverage_text, the ``term`` and ``term-missing`` coverage reports: the
table (a row per function, a file's subtotal, the total; paths, run, missed, cover, basis
and its percentage; bounds where counting stopped), ``--skip-covered``, ``--per-file``,
``--sort``, the headline and the notes under the table, and with ``show_missing`` where
to test next and each actionable function's next paths, impossible paths and other
missed paths, and what was not listed. Checked on tiny programs measured in memory,
counted by hand."""

from __future__ import annotations

import io
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from pathprof import runtime
from pathprof.analysis.pathcoverage import PathCoverage, path_coverage
from pathprof.data.measurement import Measurement
from pathprof.data.modules import Sources
from pathprof.data.profile import FunctionProfile
from pathprof.python.instrument import instrument_source
from pathprof.report.coverage_text import (
    MISSING_SHOWN,
    check_sort,
    headline,
    render,
    render_coverage,
)
from pathprof.report.formatting import BASIS_NOTE, FEASIBILITY_NOTE

#: sign: 2 paths, dimension 2. same: 4 paths, dimension 3, two impossible (x cannot
#: change between its tests). skipped: excluded whole (2 paths, 2 dimensions).
#: partly: 3 paths, dimension 3, of which the excluded raise takes 1 and 1.
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
#: pick: two independent ifs, 4 paths, dimension 3. full: 2 paths.
PICK = """\
def pick(a, b):
    n = 0
    if a:
        n += 1
    if b:
        n += 2
    return n


def full(x):
    if x:
        return 1
    return 2
"""


def _measure(source: str, run: Callable[[Any], object], file: str) -> Measurement:
    """``source`` instrumented in memory as ``file``, executed, and ``run(module)``'s
    paths (the runtime's registry is put back as it was)."""
    instrumented = instrument_source(source, file, module_key=f"{file}:test-coverage-text")
    module = types.ModuleType("coverage_text_subject")
    module.__file__ = file
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(runtime, "_modules", [])
        exec(instrumented.compile(file), module.__dict__)
        runtime.take_snapshot()
        run(module)
        ((_state, paths, cuts, *_rest),) = runtime.take_snapshot()
    meta = instrumented.metadata
    functions = []
    for i, info in enumerate(meta.functions):
        fn = FunctionProfile(file, info.qualname, info.code_line, meta.source_hash, info)
        fn.counts, fn.cuts = dict(paths[i]), dict(cuts[i])
        functions.append(fn)
    return Measurement(functions=functions, sources=Sources({(file, meta.source_hash): source}))


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("COLUMNS", raising=False)
    return tmp_path


@pytest.fixture
def coverage(here: Path) -> PathCoverage:
    """sign(2); same(1), same(0); partly(0)."""
    def run(module: Any) -> None:
        module.sign(2)
        module.same(1)
        module.same(0)
        module.partly(0)
    return path_coverage(_measure(SOURCE, run, str(here / "m.py")))


def _pick(here: Path, calls: list[tuple[int, int]], full: tuple[int, ...] = (),
          stopped: bool = False) -> PathCoverage:
    def run(module: Any) -> None:
        for a, b in calls:
            module.pick(a, b)
        for x in full:
            module.full(x)
    measured = _measure(PICK, run, str(here / "p.py"))
    measured.functions[0].stopped = stopped
    return path_coverage(measured)


def _lines(coverage: PathCoverage, **options: Any) -> list[str]:
    out = io.StringIO()
    render(coverage, out, **options)
    return [line.rstrip() for line in out.getvalue().splitlines()]


def _table(lines: list[str]) -> list[list[str]]:
    """The table's rows, header first, each as its cells (the name kept whole)."""
    rows = []
    for line in lines:
        cells = line.split()
        if cells[:1] in (["Function"], ["File"]):
            rows.append([*cells[:6], " ".join(cells[6:])])
        elif len(cells) >= 7 and cells[-1].endswith("%"):
            rows.append([" ".join(cells[:-6]), *cells[-6:]])
        if cells[:1] == ["TOTAL"]:
            break
    return rows


def test_a_row_per_function_a_file_row_and_the_total(coverage: PathCoverage) -> None:
    assert _table(_lines(coverage)) == [
        ["Function", "Paths", "Run", "Missed", "Cover", "Basis", "Basis %"],
        ["m.py:1 sign", "2", "1", "1", "50.0%", "1/2", "50.0%"],
        ["m.py:7 same", "4", "2", "2", "50.0%", "2/3", "66.7%"],
        ["m.py:23 partly", "2", "1", "1", "50.0%", "1/2", "50.0%"],
        # 2 + 4 + 2 paths, 1 + 2 + 1 run; basis 1 + 2 + 1 of 2 + 3 + 2 = 57.1%
        ["m.py (file)", "8", "4", "4", "50.0%", "4/7", "57.1%"],
        ["TOTAL", "8", "4", "4", "50.0%", "4/7", "57.1%"],
    ]


def test_under_the_table_the_headline_the_scope_and_the_notes(coverage: PathCoverage) -> None:
    lines = _lines(coverage)
    after = lines[next(i for i, line in enumerate(lines) if line.startswith("TOTAL")) + 1:]
    assert after == [
        "Basis path coverage 57.1%: 4 of 7 independent paths; paths run 4 of 8 (50.0%).",
        "Excluded: 1 function (excluded line 1), code in 1 other function, 3 paths and 3 "
        "basis dimensions (--no-exclude counts them).",
        BASIS_NOTE,
        FEASIBILITY_NOTE,
    ]


def test_headline_says_basis_first(coverage: PathCoverage) -> None:
    assert headline(coverage) == (
        "Basis path coverage 57.1%: 4 of 7 independent paths; paths run 4 of 8 (50.0%).")


def test_one_function_has_no_file_row(here: Path) -> None:
    coverage = path_coverage(_measure("def f(x):\n    if x:\n        return 1\n    return 2\n",
                                      lambda m: m.f(1), str(here / "one.py")))
    assert [row[0] for row in _table(_lines(coverage))] == ["Function", "one.py:1 f", "TOTAL"]


def test_nothing_measured_says_so() -> None:
    assert _lines(path_coverage(Measurement())) == ["No functions were measured."]


def test_skip_covered_leaves_out_complete_rows_and_says_how_many(here: Path) -> None:
    coverage = _pick(here, [(0, 0)], full=(0, 1))  # full: both paths ran
    lines = _lines(coverage, skip_covered=True)
    assert [row[0] for row in _table(lines)] == ["Function", "p.py:1 pick", "p.py (file)",
                                                 "TOTAL"]
    assert "1 function skipped due to complete coverage (every path ran)." in lines


def test_per_file_has_a_row_per_file(here: Path, coverage: PathCoverage) -> None:
    other = _pick(here, [(0, 0)], full=(0, 1))
    both = PathCoverage(coverage.files + other.files, coverage.totals)
    rows = _table(_lines(both, per_file=True))
    assert rows[0][:2] == ["File", "Paths"]
    assert rows[1:3] == [["m.py", "8", "4", "4", "50.0%", "4/7", "57.1%"],
                         ["p.py", "6", "3", "3", "50.0%", "3/5", "60.0%"]]


def test_per_file_skip_covered_counts_files(here: Path, coverage: PathCoverage) -> None:
    complete = path_coverage(_measure("def f(x):\n    if x:\n        return 1\n    return 2\n",
                                      lambda m: [m.f(0), m.f(1)], str(here / "q.py")))
    both = PathCoverage(coverage.files + complete.files, coverage.totals)
    lines = _lines(both, per_file=True, skip_covered=True)
    assert [row[0] for row in _table(lines)] == ["File", "m.py", "TOTAL"]
    assert "1 file skipped due to complete coverage (every path ran)." in lines


def test_sort_orders_the_rows_across_files(coverage: PathCoverage) -> None:
    by_paths = _table(_lines(coverage, sort="-paths"))
    # same has 4 paths; sign and partly 2: highest first, and at a tie the names in
    # reverse order ("m.py:23 partly" > "m.py:1 sign")
    assert [row[0] for row in by_paths[1:-1]] == ["m.py:7 same", "m.py:23 partly",
                                                  "m.py:1 sign"]
    by_name = _table(_lines(coverage, sort="name"))
    assert [row[0] for row in by_name[1:-1]] == ["m.py:1 sign", "m.py:23 partly",
                                                 "m.py:7 same"]


def test_an_unknown_sort_is_refused_with_the_choices() -> None:
    with pytest.raises(ValueError, match=r"--sort bogus: choose from name, paths, run, "
                       r"missed, cover, basis \(-COLUMN: highest first\)"):
        check_sort("bogus")
    assert check_sort("-basis") == "-basis"


def test_a_function_that_stopped_counting_shows_bounds_and_a_note(here: Path) -> None:
    coverage = _pick(here, [(0, 0), (1, 0), (0, 1)], stopped=True)
    lines = _lines(coverage)
    rows = _table(lines)
    # 3 of 4 ran before it stopped: at least 3, at most 1 missed; its basis 3 of 3 exact
    assert rows[1] == ["p.py:1 pick", "4", "≥3", "≤1", "≥75.0%", "3/3", "100.0%"]
    assert rows[2] == ["p.py:10 full", "2", "0", "2", "0.0%", "0/2", "0.0%"]
    assert "paths run at least 3 of 6 (50.0%)." in lines[
        next(i for i, line in enumerate(lines) if line.startswith("Basis path coverage"))]
    assert lines[-1].startswith("≥ ≤: 1 function stopped counting (--stop-counting): each, "
                                "or a loop of it, went back to its original code")


def test_show_missing_names_where_to_test_next(coverage: PathCoverage) -> None:
    lines = _lines(coverage, show_missing=True)
    start = lines.index("Where to test next (most independent paths missing first):")
    # one missing each: same (2 calls), then sign and partly (1 call), by line
    assert lines[start + 1:start + 4] == [
        "  1. same  m.py:7  1 of 3 missing",
        "  2. sign  m.py:1  1 of 2 missing",
        "  3. partly  m.py:23  1 of 2 missing"]


def test_show_missing_lists_next_paths_and_impossible_ones(coverage: PathCoverage) -> None:
    lines = _lines(coverage, show_missing=True)
    start = next(i for i, line in enumerate(lines) if line.startswith("Missed paths, told as"))
    assert lines[start + 1:] == [
        "same  m.py:7  2 of 4 missed; basis 2 of 3",
        "    1 more independent path: none found that the source does not prove impossible",
        "  ✗ cannot run: if x: → false · if x: → true — `x` is false on line 8 but true on "
        "line 12, and nothing between can change it",
        "  ✗ cannot run: if x: → true · if x: → false — `x` is true on line 8 but false on "
        "line 12, and nothing between can change it",
        "sign  m.py:1  1 of 2 missed; basis 1 of 2",
        "  + 1. if x < 0: → true",
        "partly  m.py:23  1 of 2 missed; basis 1 of 2",
        "  + 1. if x is None:  # pragma: no cover → false · if x: → true",
    ]


def test_missed_per_function_limits_each_list_and_says_the_rest(here: Path) -> None:
    # pick(0, 0): 1 of 4 run, basis 1 of 3: two independent paths to add, three missed
    lines = _lines(_pick(here, [(0, 0)]), show_missing=True, missed_per_function=1)
    start = lines.index("pick  p.py:1  3 of 4 missed; basis 1 of 3")
    assert lines[start + 1] == "  + 1. if a: → true · if b: → false"
    assert lines[start + 2] == "    … and 1 more independent path to find"
    assert lines[start + 4] == "    … and 1 more"  # 3 missed: 1 told, 1 shown, 1 more


def test_a_complete_basis_with_a_possible_missed_path_is_still_listed(here: Path) -> None:
    lines = _lines(_pick(here, [(0, 0), (1, 0), (0, 1)]), show_missing=True)
    start = lines.index("pick  p.py:1  1 of 4 missed; basis 3 of 3")
    assert lines[start + 1] == "    if a: → true · if b: → true"  # no + : no dimension to add


def test_a_stopped_function_is_not_listed_but_said(here: Path) -> None:
    lines = _lines(_pick(here, [(0, 0), (1, 0), (0, 1)], stopped=True), show_missing=True)
    assert not any(line.startswith("pick  p.py:1") for line in lines)
    assert lines[-1] == (
        "Not listed: 1 function that stopped counting once its basis was complete (its "
        "missed paths may have run after). The HTML report (pathprof html) shows every "
        "function's missed paths.")


def test_missing_functions_caps_the_functions_listed(coverage: PathCoverage) -> None:
    lines = _lines(coverage, show_missing=True, missing_functions=1)
    assert "sign  m.py:1  1 of 2 missed; basis 1 of 2" not in lines
    assert lines[-1] == (
        "Not listed: 2 more functions with paths still to test, fewer missing (pathprof "
        "coverage -m --missed-functions 0 lists them all). The HTML report (pathprof html) "
        "shows every function's missed paths.")
    assert MISSING_SHOWN == 20
    every = _lines(coverage, show_missing=True, missing_functions=0)  # 0: all of them
    assert "partly  m.py:23  1 of 2 missed; basis 1 of 2" in every


def test_nothing_missed_lists_nothing(here: Path) -> None:
    lines = _lines(_pick(here, [(0, 0), (1, 0), (0, 1), (1, 1)], full=(0, 1)),
                   show_missing=True)
    assert lines[-1] == FEASIBILITY_NOTE
    assert "Where to test next (most independent paths missing first):" not in lines


def test_a_file_never_imported_has_a_row_of_its_own(here: Path,
                                                   coverage: PathCoverage) -> None:
    meta = instrument_source(PICK, str(here / "never.py")).metadata
    unmeasured = [FunctionProfile(str(here / "never.py"), info.qualname, info.code_line,
                                  meta.source_hash, info) for info in meta.functions]
    measured = _measure(SOURCE, lambda m: m.sign(2), str(here / "m.py"))
    lines = _lines(path_coverage(measured, unmeasured=unmeasured))
    rows = {row[0]: row[1:] for row in _table(lines)}
    assert rows["never.py (never imported)"] == ["6", "0", "6", "0.0%", "0/5", "0.0%"]
    assert "1 file under the source never imported, counted at 0%." in " ".join(lines)


def test_a_missed_path_wraps_under_its_text_on_a_terminal(here: Path) -> None:
    out = io.StringIO()
    render_coverage(_pick(here, [(0, 0)]), Console(file=out, width=30), show_missing=True)
    lines = out.getvalue().splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("  + 1. "))
    # "if a: → true · if b: → false" does not fit in 30 - 7 columns: its second line
    # starts under its first character, not at the margin
    assert lines[first + 1].startswith(" " * 7)
    assert lines[first + 1].strip()
    assert " ".join(part.strip() for part in (lines[first][7:], lines[first + 1])) == (
        "if a: → true · if b: → false")


def test_a_file_name_with_brackets_is_shown_as_it_is(here: Path) -> None:
    (here / "[x]").mkdir()
    coverage = path_coverage(_measure(PICK, lambda m: m.pick(0, 0), str(here / "[x]" / "p.py")))
    assert "[x]/p.py:1 pick" in [row[0] for row in _table(_lines(coverage))]
