"""Instrumentation never changes what the program does or what tools see of it."""

from __future__ import annotations

import sys
import traceback
from pathlib import Path
from typing import Any

import pytest

from ..loading import CORPUS, corpus_programs, load_instrumented, load_plain

PROGRAMS = corpus_programs()


Event = tuple[str, str, "int | None", str]


def trace_events(module: Any, filename: str) -> list[Event]:
    """Every call/line/return/exception event in ``filename`` while drive() runs."""
    events: list[Event] = []

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        if frame.f_code.co_filename != filename:
            return None
        detail = arg[0].__name__ if event == "exception" else ""
        events.append((event, frame.f_code.co_qualname, frame.f_lineno, detail))
        return tracer

    sys.settrace(tracer)
    try:
        module.drive()
    finally:
        sys.settrace(None)
    return events


def _documented_differences(events: list[Event]) -> list[Event]:
    """Drop the differences docs/python.md documents, each of which it explains.

    - 3.12 reports a ``line`` event at a jump target reached after a call returns;
      a return statement's value computed into a temporary makes such a target, so
      a line can be reported twice in a row (same frame, same line).
    - 3.13 closes a generator suspended outside any ``try`` without running it; the
      observer clause is such a ``try``, so the close runs it (call, exception,
      return) — which is how the profile learns that the path ended there. (3.11,
      3.12 and 3.14 run the close in every generator: the same events both ways.)
    """
    kept: list[Event] = []
    current: list[int | None] = []  # the last line of each active frame
    i = 0
    while i < len(events):
        event, name, line, detail = events[i]
        if event == "line" and current and current[-1] == line:
            i += 1
            continue
        if (sys.version_info[:2] == (3, 13) and event == "call" and i + 2 < len(events)
                and events[i + 1][:2] == ("exception", name) and events[i + 1][3] == "GeneratorExit"
                and events[i + 2][:2] == ("return", name)):
            i += 3
            continue
        if event == "line":
            current[-1] = line
        elif event == "call":
            current.append(None)
        elif event == "return":
            current.pop()
        kept.append((event, name, line, detail))
        i += 1
    return kept


@pytest.mark.parametrize("path", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_trace_events_are_unchanged(path: Path) -> None:
    plain = load_plain(path, f"pathprof_plain_events_{path.stem}")
    plain_events = trace_events(plain, str(path))
    loaded = load_instrumented(path, f"pathprof_events_{path.stem}", mark_probes=False)
    loaded.execute()
    events = trace_events(loaded.module, str(path))
    # Exact outside the documented differences: every line event, and the line of
    # every return, an exception's way out included.
    assert _documented_differences(events) == _documented_differences(plain_events)


@pytest.mark.parametrize("path", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_production_build_records_what_the_marked_build_records(path: Path) -> None:
    results = []
    for mark in (True, False):
        loaded = load_instrumented(path, f"pathprof_build_{path.stem}_{mark}", mark_probes=mark)
        loaded.execute()
        loaded.snapshot()  # drop what module execution recorded
        loaded.module.drive()
        paths, cuts, raised, unattributed = loaded.snapshot()
        results.append((paths, cuts, raised, unattributed))
    assert results[0] == results[1]


def _format(module: Any, call: str, *args: Any) -> str:
    try:
        getattr(module, call)(*args)
    except BaseException:
        return traceback.format_exc()
    raise AssertionError("expected an exception")


@pytest.mark.parametrize(
    ("program", "call", "args"),
    [
        ("exceptions", "reraise", ("value",)),
        ("exceptions", "reraise", ("key",)),
        ("exceptions", "handler_raises", ("value",)),
        ("exceptions", "escape_from_loop", ([1, 0],)),
        ("exceptions", "assert_positive", (0,)),
        ("withs", "simple", ([], True)),
        ("basics", "scope_statements", (None,)),
    ],
)
def test_tracebacks_are_unchanged(program: str, call: str, args: tuple[Any, ...]) -> None:
    path = CORPUS / f"{program}.py"
    plain = load_plain(path, f"pathprof_tb_{program}")
    loaded = load_instrumented(path, f"pathprof_tb_{program}", mark_probes=False)
    loaded.execute()
    expected = _format(plain, call, *args)
    assert _format(loaded.module, call, *args) == expected


def test_code_object_identity_is_preserved() -> None:
    path = CORPUS / "classes.py"
    plain = load_plain(path, "pathprof_plain_codes")
    loaded = load_instrumented(path, "pathprof_codes", mark_probes=False)
    loaded.execute()
    basics = CORPUS / "basics.py"
    plain_basics = load_plain(basics, "pathprof_plain_codes_basics")
    loaded_basics = load_instrumented(basics, "pathprof_codes_basics", mark_probes=False)
    loaded_basics.execute()
    for name in ("fib", "is_even", "deep", "traced"):
        a, b = getattr(plain, name).__code__, getattr(loaded.module, name).__code__
        assert (a.co_name, a.co_qualname, a.co_firstlineno, a.co_argcount, a.co_filename) == (
            b.co_name, b.co_qualname, b.co_firstlineno, b.co_argcount, b.co_filename)
    assert loaded.module.Shape.kind.fget.__qualname__ == "Shape.kind"
    assert loaded.module.Square.area.__wrapped__.__qualname__ == "Square.area"
    assert loaded_basics.module.empty.__doc__ == plain_basics.empty.__doc__ == "Only a docstring."
