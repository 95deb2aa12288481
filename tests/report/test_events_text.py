"""pathprof.report.events_text, the terminal table of ``pathprof count``: the total and
its kind, then one row per function (self, inclusive, self's share of the total) in the
order asked for, at most ``top`` of them, what was left out, and the exceptions that
could not be placed. Built from hand-made :class:`~pathprof.events.EventCounts`."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from rich.console import Console

from pathprof.events import EventCounts, FunctionEvents
from pathprof.report.events_text import render, render_counts, sort_functions


@pytest.fixture(autouse=True)
def _here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("COLUMNS", raising=False)


def _fn(name: str, self_: int, inclusive: int, file: str = "m.py", line: int = 1,
        unattributed: int = 0) -> FunctionEvents:
    return FunctionEvents(os.path.abspath(file), name, line, self_, inclusive, unattributed)


def _text(counts: EventCounts, **options: object) -> str:
    out = io.StringIO()
    render(counts, out, **options)  # type: ignore[arg-type]
    return out.getvalue()


def _rows(text: str) -> list[list[str]]:
    """The table's rows under its header, as their cells."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[:1] == ["function"])
    rows = []
    for line in lines[start + 1:]:
        cells = line.split()
        if len(cells) != 5:
            break
        rows.append(cells)
    return rows


def _counts() -> EventCounts:
    """200 statements: outer ran 50 itself and called inner (120, of which 30 in
    callees elsewhere) and leaf (30)."""
    return EventCounts("statements", 200, [
        _fn("inner", 120, 150, "b.py", 10),
        _fn("outer", 50, 200, "a.py", 1),
        _fn("leaf", 30, 30, "a.py", 20),
    ])


def test_the_total_and_the_functions_counted_head_the_report() -> None:
    assert _text(_counts()).splitlines()[0] == "200 statements counted in 3 functions"


def test_rows_are_by_inclusive_count_with_self_and_its_share() -> None:
    # shares: 50 / 200 = 25.0%, 120 / 200 = 60.0%, 30 / 200 = 15.0%
    assert _rows(_text(_counts())) == [
        ["outer", "a.py:1", "50", "200", "25.0"],
        ["inner", "b.py:10", "120", "150", "60.0"],
        ["leaf", "a.py:20", "30", "30", "15.0"],
    ]


def test_sorting_by_self_puts_the_busiest_function_first() -> None:
    assert [row[0] for row in _rows(_text(_counts(), sort="self"))] == ["inner", "outer", "leaf"]


def test_sorting_by_name_is_by_file_then_line() -> None:
    assert [row[0] for row in _rows(_text(_counts(), sort="name"))] == ["outer", "leaf", "inner"]


def test_ties_are_broken_by_the_other_count_then_the_place() -> None:
    functions = [_fn("c", 5, 9, "z.py", 1), _fn("b", 5, 9, "a.py", 7),
                 _fn("a", 5, 9, "a.py", 3), _fn("d", 5, 10, "z.py", 2)]
    assert [f.qualname for f in sort_functions(functions, "self")] == ["d", "a", "b", "c"]
    assert [f.qualname for f in sort_functions(functions, "inclusive")] == ["d", "a", "b", "c"]
    named = [_fn("b", 1, 1, "a.py", 3), _fn("a", 1, 1, "a.py", 3)]
    assert [f.qualname for f in sort_functions(named, "name")] == ["a", "b"]


def test_top_keeps_the_first_rows_and_says_how_many_more() -> None:
    text = _text(_counts(), top=2)
    assert [row[0] for row in _rows(text)] == ["outer", "inner"]
    assert "1 more function (--top 0 shows all)" in text


def test_top_zero_shows_every_function() -> None:
    text = _text(_counts(), top=0)
    assert len(_rows(text)) == 3
    assert "more function" not in text


def test_one_event_is_named_in_the_singular() -> None:
    counts = EventCounts("instructions", 1, [_fn("f", 1, 1)])
    assert _text(counts).splitlines()[0] == "1 instruction counted in 1 function"


def test_totals_only_has_no_table() -> None:
    counts = EventCounts("statements", 1234, [])
    assert _text(counts) == "1,234 statements counted (totals only)\n"


def test_nothing_counted_says_where_to_look() -> None:
    text = _text(EventCounts("statements", 0, []))
    assert text.splitlines() == [
        "0 statements counted in 0 functions",
        "No counted code ran: check --source (module and class bodies are not counted, "
        "only functions).",
    ]


def test_a_total_of_zero_has_no_share() -> None:
    counts = EventCounts("statements", 0, [_fn("f", 0, 0, unattributed=1)])
    assert _rows(_text(counts)) == [["f", "m.py:1", "0", "0", "-"]]


def test_big_counts_have_thousands_separators() -> None:
    counts = EventCounts("statements", 2_000_000, [_fn("f", 1_500_000, 2_000_000)])
    text = _text(counts)
    assert text.splitlines()[0] == "2,000,000 statements counted in 1 function"
    assert _rows(text) == [["f", "m.py:1", "1,500,000", "2,000,000", "75.0"]]


def test_exceptions_that_could_not_be_placed_are_summed() -> None:
    counts = EventCounts("statements", 10, [_fn("f", 6, 6, unattributed=2),
                                            _fn("g", 4, 4, "n.py", unattributed=1)])
    assert _line(_text(counts), -1) == (
        "3 exceptions could not be placed in their function; those calls' counts may be "
        "short.")


def test_one_exception_is_named_in_the_singular() -> None:
    counts = EventCounts("statements", 6, [_fn("f", 6, 6, unattributed=1)])
    assert "1 exception could not be placed" in _text(counts)


def test_render_counts_prints_on_the_console_given() -> None:
    out = io.StringIO()
    render_counts(Console(file=out, width=100), _counts(), top=1)
    assert out.getvalue().splitlines()[0] == "200 statements counted in 3 functions"
    assert "2 more functions (--top 0 shows all)" in out.getvalue()


def test_a_file_name_with_brackets_is_shown_as_it_is() -> None:
    counts = EventCounts("statements", 3, [_fn("f", 3, 3, os.path.join("[x]", "m.py"))])
    assert "[x]/m.py:1" in _text(counts)


def test_a_control_character_in_a_file_name_is_escaped() -> None:
    counts = EventCounts("statements", 3, [_fn("f", 3, 3, "bad\x1bname.py")])
    text = _text(counts)
    assert "\x1b" not in text
    assert "bad\\x1bname.py:1" in text


def _line(text: str, index: int) -> str:
    return text.splitlines()[index]
