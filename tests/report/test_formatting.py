"""pathprof.report.formatting: how the reports write a percentage (one decimal, never
rounded up to 100% nor down to 0%), a duration (in the unit that keeps it short), what
exclusions took, and the sentences under the coverage figures (exclusions, files never
imported, files that could not be read, the coverage's notes)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pathprof.analysis.pathcoverage import (
    CoverageTotals,
    Excluded,
    FileCoverage,
    PathCoverage,
)
from pathprof.report.formatting import (
    excluded_text,
    format_duration,
    format_percent,
    plural,
    scope_sentences,
)


@pytest.mark.parametrize(("run", "possible", "text"), [
    (1, 3, "33.3%"),        # 33.33...
    (2, 3, "66.7%"),        # 66.66... rounds half up at one decimal
    (0, 10, "0.0%"),        # nothing ran: 0% is the truth
    (10, 10, "100.0%"),     # everything ran: 100% is the truth
    (0, 0, "100.0%"),       # nothing possible counts as complete
    (1, 2000, "<0.1%"),     # 0.05% would print 0.1% or 0.0%
    (1, 1001, "<0.1%"),     # 0.0999...%
    (1, 1000, "0.1%"),      # exactly 0.1%: the boundary is shown as it is
    (1999, 2000, ">99.9%"),  # 99.95% would print 100.0%
    (999, 1000, "99.9%"),   # exactly 99.9%
])
def test_a_percentage_has_one_decimal_and_never_lies_at_the_ends(run: int, possible: int,
                                                                 text: str) -> None:
    assert format_percent(CoverageTotals(run, possible)) == text


@settings(max_examples=50, deadline=None)
@given(st.integers(1, 10**6).flatmap(lambda possible: st.tuples(
    st.integers(0, possible), st.just(possible))))
def test_only_a_complete_or_empty_count_prints_100_or_0(pair: tuple[int, int]) -> None:
    run, possible = pair
    text = format_percent(CoverageTotals(run, possible))
    assert (text == "100.0%") == (run == possible)
    assert (text == "0.0%") == (run == 0)


@pytest.mark.parametrize(("ns", "text"), [
    (0, "0 ns"), (999, "999 ns"),
    (1_000, "1.0 µs"), (1_500, "1.5 µs"), (25_260, "25.3 µs"),
    (1_000_000, "1.0 ms"), (12_340_000, "12.3 ms"),
    (1_000_000_000, "1.00 s"), (2_500_000_000, "2.50 s"),
    (1_234_000_000_000, "1,234.00 s"),
])
def test_a_duration_is_written_in_the_unit_that_keeps_it_short(ns: int, text: str) -> None:
    assert format_duration(ns) == text


def test_excluded_functions_are_counted_by_reason_most_first() -> None:
    excluded = Excluded(functions={"excluded line": 1, "@overload": 2}, paths=5, dimensions=4,
                        partly=1)
    assert excluded_text(excluded) == (
        "3 functions (@overload 2, excluded line 1), code in 1 other function, "
        "5 paths and 4 basis dimensions")


def test_reasons_of_one_count_are_in_name_order() -> None:
    excluded = Excluded(functions={"protocol stub": 1, "abstract stub": 1}, paths=2,
                        dimensions=2)
    assert excluded_text(excluded) == (
        "2 functions (abstract stub 1, protocol stub 1), 2 paths and 2 basis dimensions")


def test_only_excluded_branches_say_no_function() -> None:
    assert excluded_text(Excluded(paths=1, dimensions=1, partly=2)) == (
        "code in 2 other functions, 1 path and 1 basis dimension")


def test_big_counts_have_thousands_separators() -> None:
    assert excluded_text(Excluded(functions={"excluded line": 1500}, paths=2**20,
                                  dimensions=0)) == (
        "1,500 functions (excluded line 1,500), 1,048,576 paths and 0 basis dimensions")


def _coverage(**fields: object) -> PathCoverage:
    return PathCoverage(files=[], totals=CoverageTotals(), **fields)  # type: ignore[arg-type]


def test_nothing_left_out_or_taken_in_says_nothing() -> None:
    assert scope_sentences(_coverage()) == []


def test_each_scope_is_a_sentence_in_order(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    never = [FileCoverage(str(tmp_path / name), [], CoverageTotals(0, 3), imported=False)
             for name in ("a.py", "b.py")]
    seen = FileCoverage(str(tmp_path / "c.py"), [], CoverageTotals(1, 2))
    coverage = _coverage(excluded=Excluded(functions={"@overload": 1}, paths=1, dimensions=1),
                         unparsed=[(str(tmp_path / "pkg" / "bad.py"), "does not parse")],
                         notes=["No file of the source x was measured."])
    coverage.files = [*never, seen]
    assert scope_sentences(coverage) == [
        "Excluded: 1 function (@overload 1), 1 path and 1 basis dimension "
        "(--no-exclude counts them).",
        "2 files under the source never imported, counted at 0%.",
        "pkg/bad.py under the source does not parse: left out.",
        "No file of the source x was measured.",
    ]


def test_an_unparsed_file_name_is_made_printable(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    coverage = _coverage(unparsed=[(str(tmp_path / "x\x1b.py"), "cannot be read")])
    assert scope_sentences(coverage) == ["x\\x1b.py under the source cannot be read: left out."]


def test_notes_alone_are_passed_on() -> None:
    assert scope_sentences(_coverage(notes=["one.", "two."])) == ["one.", "two."]


def test_plural_is_the_terminal_helpers() -> None:
    assert plural(1, "function") == "1 function"
    assert plural(3, "function") == "3 functions"
