"""pathprof.report.subpaths_text, ``pathprof hot``'s table: each hottest subpath that ran
at least once at the confidence (its lower bound, estimate, error bound, exact count
where measured, length and the lines of its blocks, a function named where it changes;
a cycle as one turn with its turns), the subpaths too seldom sampled to bound, and what
the sampler did. Built from hand-made :class:`~pathprof.subpaths.HotSubpath` rows."""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from pathprof.report.subpaths_text import render, render_hot, subpath_table
from pathprof.subpaths import NOTHING_SAMPLED, HotSubpath, SamplingSummary


@pytest.fixture(autouse=True)
def _here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def _place(file: str, qualname: str, first: int | None, last: int | None,
           line: int = 1) -> tuple[str, str, int | None, int | None, int]:
    return (os.path.abspath(file), qualname, first, last, line)


def _hot(rank: int, places: list[Any], *, low: float = 10.0, estimate: float = 20.0,
         error: float = 0.5, exact: int | None = None, turns: float | None = None,
         folded: int = 0) -> HotSubpath:
    return HotSubpath(rank, tuple(range(len(places))), tuple(places), 4, estimate, error,
                      low, 2 * estimate, exact, None, turns, folded)


def _summary(**changes: object) -> SamplingSummary:
    summary: dict[str, Any] = {
        "positions": 12345, "period": 200.0, "initial_period": 200.0,
        "period_from_run": False, "grown": 0, "distinct_sampled": 3, "sample_bytes": 10,
        "sampled": 16, "budget": 1000, "resamplings": 0, "failures": 0, "overshot": 0}
    summary.update(changes)
    return summary  # type: ignore[return-value]


def _text(hottest: list[HotSubpath], **options: Any) -> str:
    out = io.StringIO()
    render(hottest, Console(file=out, width=250), summary=options.pop("summary", _summary()),
           **options)
    return out.getvalue()


def _rows(text: str) -> list[list[str]]:
    return [[cell.strip() for cell in line.split("│")] for line in text.splitlines()
            if "│" in line]


def test_a_row_has_the_bounds_the_length_and_the_blocks_lines() -> None:
    hot = _hot(1, [_place("m.py", "f", 2, 2), _place("m.py", "f", 3, 4),
                   _place("n.py", "g", 7, 7, 6)],
               low=800.4, estimate=1234.6, error=0.4241)
    # 800.4 -> "800", 1,234.6 -> "1,235", 0.4241 -> "42.4%"; f named once, then g
    assert _rows(_text([hot])) == [["1", "800", "1,235", "42.4%", "3", "f:2 → 3-4 → g:7"]]


def test_a_block_with_no_lines_is_a_question_mark() -> None:
    hot = _hot(1, [_place("m.py", "f", 2, 2), _place("m.py", "f", None, None)])
    assert _rows(_text([hot]))[0][-1] == "f:2 → ?"


def test_a_function_met_again_is_named_again() -> None:
    hot = _hot(1, [_place("m.py", "f", 2, 2), _place("m.py", "g", 9, 9),
                   _place("m.py", "f", 3, 3)])
    assert _rows(_text([hot]))[0][-1] == "f:2 → g:9 → f:3"


def test_an_error_of_one_or_more_is_at_least_100_percent() -> None:
    rows = _rows(_text([_hot(1, [_place("m.py", "f", 1, 1)], error=1.0),
                        _hot(2, [_place("m.py", "f", 1, 1)], error=3.5)]))
    assert [row[3] for row in rows] == ["≥100%", "≥100%"]


def test_a_cycle_is_one_turn_with_its_turns_and_the_repetitions_it_stands_for() -> None:
    turn = [_place("m.py", "f", 2, 2), _place("m.py", "f", 3, 3)]
    three = _hot(1, turn * 3, turns=3.0, folded=2)
    half = _hot(2, turn * 2 + turn[:1], turns=2.5)
    one = _hot(3, turn, turns=1.0)
    rows = _rows(_text([three, half, one]))
    assert [(row[4], row[5]) for row in rows] == [
        ("6", "(f:2 → 3) x 3 turns, and 2 more of this cycle"),
        ("5", "(f:2 → 3) x 2.5 turns"),  # 5 blocks / 2.5 turns: 2 a turn
        ("2", "(f:2 → 3) x 1 turn"),
    ]


def test_exact_counts_get_a_column_of_their_own() -> None:
    text = _text([_hot(1, [_place("m.py", "f", 1, 1)], exact=12345)])
    header = next(line for line in text.splitlines() if "ran at least" in line)
    assert [cell.strip() for cell in header.split("┃")] == [
        "#", "ran at least", "estimated", "± (95%)", "exact", "len", "blocks (function:lines)"]
    assert _rows(text)[0][4] == "12,345"


def test_the_title_names_the_files_relative_to_here() -> None:
    text = _text([_hot(1, [_place("b.py", "f", 1, 1), _place("a.py", "g", 1, 1)])])
    assert text.splitlines()[0].rstrip() == "Hottest subpaths (a.py, b.py)"


def test_more_than_three_files_are_cut_in_the_title() -> None:
    places = [_place(f"{name}.py", name, 1, 1) for name in "dcba"]
    assert _text([_hot(1, places)]).splitlines()[0].rstrip() == (
        "Hottest subpaths (a.py, b.py, c.py …)")


def test_subpaths_too_seldom_sampled_are_left_out_and_counted() -> None:
    bounded = _hot(1, [_place("m.py", "f", 1, 1)], low=5.0)
    held = [_hot(r, [_place("m.py", "f", r, r)], low=0.0) for r in (2, 3)]
    text = _text([bounded, *held])
    assert [row[0] for row in _rows(text)] == ["1"]
    assert "2 more subpaths sampled too seldom to bound (at least 0) left out: see --json." \
        in text
    one = _text([bounded, held[0]])
    assert "1 more subpath sampled too seldom to bound" in one


def test_nothing_bounded_says_to_run_longer() -> None:
    text = _text([_hot(1, [_place("m.py", "f", 1, 1)], low=0.0)], confidence=0.9)
    assert text.splitlines()[0] == (
        "No subpath was sampled often enough to say it ran at all at 90% confidence: run "
        "longer, or lower --period.")
    assert "│" not in text
    assert "left out" not in text  # nothing was shown to leave it out of


def test_nothing_sampled_says_so() -> None:
    assert _text([]).splitlines()[0] == NOTHING_SAMPLED


def test_the_confidence_is_in_the_heading_and_the_note() -> None:
    text = _text([_hot(1, [_place("m.py", "f", 1, 1)])], confidence=0.99)
    assert "± (99%)" in text
    assert "Ranked by the count each subpath ran at least, at 99% confidence" in text


def test_the_last_line_says_what_the_sampler_did() -> None:
    text = _text([_hot(1, [_place("m.py", "f", 1, 1)])])
    assert text.splitlines()[-1] == (
        "About 12,345 blocks run; 16 samples kept of 3 subpaths (budget 1,000); one start "
        "per 200 blocks (--period 200; 0 resamplings for the budget).")


def test_one_sample_of_one_subpath_is_in_the_singular() -> None:
    text = _text([], summary=_summary(sampled=1, distinct_sampled=1, positions=999))
    assert text.splitlines()[-1].startswith(
        "About 999 blocks run; 1 sample kept of 1 subpath (budget 1,000); ")


def test_subpath_table_alone_has_no_title_unless_given() -> None:
    table = subpath_table([_hot(1, [_place("m.py", "f", 1, 1)])])
    assert table.title is None
    assert [c.header for c in table.columns] == [
        "#", "ran at least", "estimated", "± (95%)", "len", "blocks (function:lines)"]
    assert subpath_table([], title="T", confidence=0.5).columns[3].header == "± (50%)"


def test_render_hot_prints_on_the_console_given() -> None:
    out = io.StringIO()
    render_hot(Console(file=out, width=250), [], _summary())
    assert out.getvalue().splitlines()[0] == NOTHING_SAMPLED


def test_render_needs_the_summary() -> None:
    with pytest.raises(KeyError):
        render([], io.StringIO())


def test_a_file_name_with_brackets_is_shown_as_it_is_in_the_title() -> None:
    text = _text([_hot(1, [_place("[x]/m.py", "f", 1, 1)])])
    assert text.splitlines()[0].rstrip() == "Hottest subpaths ([x]/m.py)"


def test_a_control_character_in_a_file_name_is_escaped_in_the_title() -> None:
    text = _text([_hot(1, [_place("bad\x1bname.py", "f", 1, 1)])])
    assert "\x1b" not in text
    assert text.splitlines()[0].rstrip() == "Hottest subpaths (bad\\x1bname.py)"
