"""pathprof.report.paths_text, ``pathprof report``: per function, most executed first, a
head (paths run of possible, cut paths, executions, calls ended by an exception or
closed early, unattributed exceptions, stopped counting), a table of its hottest paths
(count, share, time where measured, from → to, the source lines with the branch taken),
what the edge profile would have guessed, then the summary and the functions that never
ran; an edge profile's branch table. Checked on tiny programs measured in memory,
counted by hand."""

from __future__ import annotations

import contextlib
import io
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from pathprof import runtime
from pathprof.data.measurement import Measurement
from pathprof.data.modules import Sources
from pathprof.data.profile import FunctionProfile
from pathprof.python.instrument import instrument_source
from pathprof.report.paths_text import render, render_function, render_report

SOURCE = """\
def parse(s):
    if s:
        return int(s)
    return 0


def pick(a, b):
    n = 0
    if a:
        n += 1
    if b:
        n += 2
    return n


def total(xs):
    n = 0
    for x in xs:
        n += x
    return n
"""


def _measure(source: str, run: Callable[[Any], object], file: str) -> Measurement:
    """``source`` instrumented in memory as ``file``, executed, and ``run(module)``'s
    paths (the runtime's registry is put back as it was)."""
    instrumented = instrument_source(source, file, module_key=f"{file}:test-paths-text")
    module = types.ModuleType("paths_text_subject")
    module.__file__ = file
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(runtime, "_modules", [])
        exec(instrumented.compile(file), module.__dict__)
        runtime.take_snapshot()
        run(module)
        ((_state, paths, cuts, raised, unattributed, _times, closed, _vectors),) = (
            runtime.take_snapshot())
    meta = instrumented.metadata
    functions = []
    for i, info in enumerate(meta.functions):
        fn = FunctionProfile(file, info.qualname, info.code_line, meta.source_hash, info)
        fn.counts, fn.cuts = dict(paths[i]), dict(cuts[i])
        fn.raised, fn.unattributed, fn.closed = raised[i], unattributed[i], closed[i]
        functions.append(fn)
    return Measurement(functions=functions, sources=Sources({(file, meta.source_hash): source}))


def _run(module: Any) -> None:
    """parse: "1", "2" return int(s), "" returns 0, "x" raises in int(s); pick: (1, 0)
    six times, (0, 1) five times, (0, 0) twice; total never."""
    for text in ("1", "2", "", "x"):
        with contextlib.suppress(ValueError):
            module.parse(text)
    for a, b, times in ((1, 0, 6), (0, 1, 5), (0, 0, 2)):
        for _ in range(times):
            module.pick(a, b)


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("COLUMNS", raising=False)
    return tmp_path


@pytest.fixture
def measured(here: Path) -> Measurement:
    return _measure(SOURCE, _run, str(here / "m.py"))


def _text(measurement: Measurement, width: int | None = None, **options: Any) -> str:
    out = io.StringIO()
    render(measurement, out if width is None else Console(file=out, width=width), **options)
    return out.getvalue()


def _copy(fn: FunctionProfile, **fields: Any) -> FunctionProfile:
    """``fn`` with the same counts (and ``fields`` changed): paths decoded afresh."""
    copy = FunctionProfile(fn.file, fn.qualname, fn.first_line, fn.source_hash, fn.meta)
    copy.counts, copy.cuts = dict(fn.counts), dict(fn.cuts)
    copy.raised, copy.closed, copy.unattributed = fn.raised, fn.closed, fn.unattributed
    for name, value in fields.items():
        setattr(copy, name, value)
    return copy


def _section(text: str, qualname: str) -> list[str]:
    """The lines of one function's part, from its head to the blank line after it."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(qualname + "  "))
    end = next(i for i in range(start, len(lines)) if not lines[i].strip())
    return [line.rstrip() for line in lines[start:end]]


def test_functions_come_most_executed_first(measured: Measurement) -> None:
    heads = [line.split("  ")[0] for line in _text(measured).splitlines()
             if line.startswith(("pick  ", "parse  ", "total  "))]
    assert heads == ["pick", "parse"]  # 13 executions, then 4; total never ran


def test_a_head_says_paths_run_cut_short_executions_and_exceptions(
        measured: Measurement) -> None:
    assert _section(_text(measured), "parse")[0] == (
        "parse  m.py:1  2 of 2 paths run + 1 path cut short by an exception · "
        "4 path executions · 1 call ended by an exception")
    assert _section(_text(measured), "pick")[0] == (
        "pick  m.py:7  3 of 4 paths run · 13 path executions")


def test_the_path_table_has_count_share_ends_and_the_source(measured: Measurement) -> None:
    rows = _section(_text(measured), "parse")[1:8]
    assert rows[0].split() == ["#", "count", "share", "from", "→", "to", "path:", "line,",
                               "code", "→", "branch", "taken"]
    # 2 of 4 executions, 1 of 4, 1 of 4 (cut short: "exc")
    assert [row.split()[:6] for row in rows[1::2]] == [
        ["1", "2", "50.0%", "entry", "→", "return"],
        ["2", "1", "25.0%", "entry", "→", "return"],
        ["3", "1", "25.0%", "entry", "→", "exc"]]
    assert [row.split("→ return")[-1].split("→ exc")[-1].strip() for row in rows[1:]] == [
        "2 if s:  → true", "3 return int(s)", "2 if s:  → false", "4 return 0",
        "2 if s:  → true", "3 return int(s)"]


def test_a_loops_paths_are_named_short(here: Path) -> None:
    measured = _measure(SOURCE, lambda m: m.total([1, 2]), str(here / "m.py"))
    rows = _section(_text(measured), "total")
    ends = sorted(" ".join(row.split()[3:6]) for row in rows[2:]
                  if not row.startswith(" "))  # a path's first line: its rank at the margin
    # from the entry round the loop; from the header round again; from the header out
    assert ends == ["entry → loop", "loop → loop", "loop → return"]
    assert "18 for x in xs:  → exhausted" in "\n".join(rows)


def test_top_keeps_the_hottest_and_says_how_many_more(measured: Measurement) -> None:
    section = _section(_text(measured, top=1), "parse")
    assert [row.split()[:3] for row in section[2:] if row.split()[0].isdigit()][:1] == [
        ["1", "2", "50.0%"]]
    assert "    … and 2 more paths" in section


def test_the_edge_profiles_guess_right_and_wrong(measured: Measurement) -> None:
    text = _text(measured)
    # parse: the true arm is the more frequent edge and the hottest path; 1 of the 3
    # complete executions took the other path
    assert ("    edge profile's guess: the hottest path ✓ · executions off their start's "
            "predicted path: 33%") in _section(text, "parse")
    # pick: a false 7 of 13, b false 8 of 13: the guess is (false, false), which ran
    # twice, not (true, false), six times; 11 of 13 executions off it: 85%
    assert ("    edge profile's guess: 8 → false · 11 → false · 13 — ran 2 times, not the "
            "hottest · executions off their start's predicted path: 85%") in _section(
        text, "pick")


def test_the_summary_and_the_functions_that_never_ran(measured: Measurement) -> None:
    lines = _text(measured).splitlines()
    # right in parse only; off: 1 + 11 of 3 + 13 complete executions = 75.0%
    assert lines[-2] == (
        "What an edge profile would have told you: following the most frequent edges "
        "finds the hottest path in 1 of 2 functions; 75.0% of path executions took a path "
        "other than the one edge counts predict from where they started.")
    assert lines[-1] == "1 measured function never ran (--show-unrun lists them)."
    assert _text(measured, show_unrun=True).splitlines()[-1] == (
        "1 measured function never ran: total")


def test_functions_limits_the_functions_shown(measured: Measurement) -> None:
    text = _text(measured, functions=1)
    assert "parse  " not in text
    assert ("1 more function ran (--functions shows more); the summary below covers all of "
            "them.") in text


def test_functions_zero_shows_them_all_as_count_s_top_zero_does(measured: Measurement
                                                               ) -> None:
    # (it said "No paths were measured." of a measurement whose paths ran)
    text = _text(measured, functions=0)
    assert text == _text(measured)
    assert "No paths were measured." not in text
    assert "more function" not in text


def test_nothing_that_ran_says_so(here: Path) -> None:
    measured = _measure(SOURCE, lambda m: None, str(here / "m.py"))
    assert _text(measured) == "No paths were measured.\n"
    assert _text(Measurement()) == "No paths were measured.\n"


def test_a_time_column_where_times_were_measured(measured: Measurement) -> None:
    parse = measured.functions[0]
    hottest = next(n for n, count in parse.counts.items() if count == 2)
    timed = _copy(parse, times={hottest: 1500})
    text = _text(Measurement(functions=[timed], sources=measured.sources))
    rows = _section(text, "parse")
    assert rows[1].split()[:4] == ["#", "count", "share", "time"]
    assert rows[2].split()[:5] == ["1", "2", "50.0%", "1.5", "µs"]
    assert rows[4].split()[:4] == ["2", "1", "25.0%", "entry"]  # no time of its own


def test_a_head_names_what_else_happened(measured: Measurement) -> None:
    parse = _copy(measured.functions[0], raised=3, closed=1, unattributed=2, stopped=True)
    head = _section(_text(Measurement(functions=[parse])), "parse")[0]
    assert head == (
        "parse  m.py:1  2 of 2 paths run + 1 path cut short by an exception · "
        "4 path executions · 2 calls ended by an exception · 1 call closed early (the "
        "generator's consumer stopped) · 2 paths cut short where the block that raised is "
        "unknown (not listed) · stopped counting (it or a loop of it went back to its "
        "original code): counts are lower bounds")


def test_without_the_source_a_path_is_its_line_numbers(measured: Measurement) -> None:
    text = _text(Measurement(functions=[measured.functions[0]]))
    rows = _section(text, "parse")
    assert rows[2].split()[-3:] == ["2", "→", "true"]
    assert rows[3].split() == ["3"]


def test_control_characters_in_the_source_are_escaped(here: Path) -> None:
    source = 'def f(x):\n    if x:\n        return "\x1b[2J"\n    return x\n'
    measured = _measure(source, lambda m: m.f(1), str(here / "esc.py"))
    text = _text(measured)
    assert "\x1b" not in text
    assert 'return "\\x1b[2J"' in text


def test_long_code_is_cut_to_the_room_left_on_a_narrow_console(here: Path) -> None:
    source = "def f(x):\n    if x:\n        return 'abcdefghijklmnopqrstuvwxyz0123456789'\n" \
             "    return x\n"
    measured = _measure(source, lambda m: m.f(1), str(here / "long.py"))
    # 80 columns: code gets max(30, 80 - 50) = 30 characters, the 30th an ellipsis
    narrow = _text(measured, width=80)
    assert "return 'abcdefghijklmnopqrstu…" in narrow
    assert "return 'abcdefghijklmnopqrstuv" not in narrow
    wide = _text(measured, width=200)  # 150 characters: whole
    assert "return 'abcdefghijklmnopqrstuvwxyz0123456789'" in wide


def test_an_edge_profile_shows_its_branches(here: Path) -> None:
    source = "def f(x):\n    if x:\n        return 1\n    return 2\n"
    file = str(here / "edge.py")
    meta = instrument_source(source, file).metadata
    (info,) = meta.functions
    fn = FunctionProfile(file, "f", 1, meta.source_hash, info)
    labels = [edge.label for edge in info.edges]
    fn.edges = {labels.index("call"): 4, labels.index("true"): 3, labels.index("false"): 1}
    text = _text(Measurement(functions=[fn], sources=Sources({(file, meta.source_hash):
                                                                source})))
    lines = [line.rstrip() for line in text.splitlines()]
    assert lines[0] == "f  edge.py:1  edge profile (branch counts)"
    # only the test has two ways out: 3 of 4 true, 1 of 4 false
    assert [line.split() for line in lines[1:4]] == [
        ["line", "branch", "taken", "share"],
        ["2", "if", "x:", "→", "true", "3", "75.0%"],
        ["2", "if", "x:", "→", "false", "1", "25.0%"]]


def test_render_function_is_one_functions_part(measured: Measurement) -> None:
    out = io.StringIO()
    Console(file=out, width=200).print(render_function(measured, measured.functions[0], 1))
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("parse  m.py:1  2 of 2 paths run")
    assert "    … and 2 more paths" in [line.rstrip() for line in lines]


def test_render_report_prints_on_the_console_given(measured: Measurement) -> None:
    out = io.StringIO()
    render_report(measured, Console(file=out, width=200), functions=1, top=1)
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("pick  m.py:7  3 of 4 paths run")
    assert "1 more function ran (--functions shows more); the summary below covers all of " \
        "them." in lines


def test_an_edge_profiles_code_is_shown_as_written(here: Path) -> None:
    source = "def f(a, i):\n    if a[i]:\n        return 1\n    return 2\n"
    file = str(here / "edge.py")
    meta = instrument_source(source, file).metadata
    (info,) = meta.functions
    fn = FunctionProfile(file, "f", 1, meta.source_hash, info)
    fn.edges = {0: 1, [edge.label for edge in info.edges].index("true"): 1}
    text = _text(Measurement(functions=[fn], sources=Sources({(file, meta.source_hash):
                                                                source})))
    assert "if a[i]:  → true" in text
