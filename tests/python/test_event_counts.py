"""Exactness of event counts (Ball 1994): pathprof against an independent
``sys.settrace`` statement counter, per function (self and inclusive) and in total."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any

import pytest

from pathprof.runtime import events as _eventrt

from ..event_oracle import StatementCounter, plain_functions
from ..loading import CORPUS, corpus_programs, load_instrumented

PROGRAMS = [*corpus_programs(),
            CORPUS.parent / "events_corpus" / "suspend.py"]


def counted(key: str, since: int = 0) -> tuple[dict[str, int], dict[str, int], int]:
    """Self and inclusive counts per function of the module registered with ``key``
    (summed over its executions since module number ``since``), and its
    unattributed exceptions."""
    own: dict[str, int] = {}
    whole: dict[str, int] = {}
    lost = 0
    inclusive = _eventrt.inclusive_counts()
    for position, state in enumerate(_eventrt.modules()):
        if state.key != key or position < since:
            continue
        for i, meta in enumerate(state.meta.functions):
            name = meta.qualname
            own[name] = own.get(name, 0) + state.self_counts[i]
            whole[name] = whole.get(name, 0) + inclusive[(position, i)]
        lost += sum(state.unattributed)
    return own, whole, lost


def run_both(path: Path, kind: str, drive: str = "drive", placement: str = "tree"
             ) -> tuple[Any, Any, Any]:
    plain, functions = plain_functions(path, kind)
    oracle = StatementCounter(functions)

    def execute_and_drive() -> Any:
        exec(plain.__pathprof_code__, plain.__dict__)  # decorators run as it executes
        return getattr(plain, drive)()

    expected = oracle.run(execute_and_drive)
    loaded = load_instrumented(path, f"pathprof_events_{path.stem}_{kind}_{placement}",
                               mark_probes=False, mode="events", events=kind,
                               placement=placement)
    loaded.execute()
    result = getattr(loaded.module, drive)()
    assert result == expected
    return oracle, counted(loaded.metadata.key), loaded


#: (event kind, placement): pathprof's, and the baselines the benchmarks compare it with
#: (they must count the same).
SETUPS = [("statements", "tree"), ("instructions", "tree"), ("statements", "statements"),
          ("instructions", "statements"), ("statements", "blocks")]


@pytest.mark.parametrize(("kind", "placement"), SETUPS, ids=["-".join(s) for s in SETUPS])
@pytest.mark.parametrize("path", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_counts_equal_the_settrace_counter(path: Path, kind: str, placement: str) -> None:
    oracle, (own, whole, lost), _loaded = run_both(path, kind, placement=placement)
    assert lost == 0
    names = set(own)
    assert {n: own[n] for n in names} == {n: oracle.self_counts[n] for n in names}
    assert {n: whole[n] for n in names} == {n: oracle.inclusive[n] for n in names}
    assert sum(own.values()) == sum(oracle.self_counts.values()) > 0


READS = Path(__file__).resolve().parent.parent / "events_corpus" / "reads.py"


@pytest.mark.parametrize("totals_only", [False, True], ids=["per-function", "totals-only"])
@pytest.mark.parametrize("kind", ["statements", "instructions"])
def test_reads_anywhere_equal_the_settrace_counter(kind: str, totals_only: bool) -> None:
    """Mid-loop, in generators (and while one is suspended), in except, finally and
    with exits, deep in recursion and in threads: every read is exact -- also with
    the hand-over that keeps the thread's total only (``pytest --pathprof-events``)."""
    from pathprof import events

    plain, functions = plain_functions(READS, kind)
    oracle = StatementCounter(functions, probe=events.read.__code__)
    expected_reads: list[tuple[str, int]] = []

    def execute_and_drive() -> Any:
        exec(plain.__pathprof_code__, plain.__dict__)
        return plain.drive()

    oracle.run(execute_and_drive)
    loaded = load_instrumented(READS, f"pathprof_events_reads_{kind}_{totals_only}",
                               mark_probes=False, mode="events", events=kind,
                               totals_only=totals_only)
    loaded.execute()
    loaded.module.drive()
    # A thread's reads are cumulative over the thread's life, including what the
    # earlier parametrization counted in this thread: compare growth from the first.
    ours: dict[str, list[int]] = {}
    for thread, _tag, value in loaded.module.READS:
        ours.setdefault(thread, []).append(value)
    theirs: dict[str, list[int]] = {}
    for (thread, _tag, _value), value in zip(plain.READS, oracle.probes, strict=True):
        theirs.setdefault(thread, []).append(value)
    expected_reads = [(t, v) for t, values in theirs.items() for v in values]
    assert len(expected_reads) == len(loaded.module.READS) > 40
    for thread, values in theirs.items():
        mine = ours[thread]
        assert [v - mine[0] for v in mine] == [v - values[0] for v in values], thread
        if thread.startswith("t"):  # a fresh thread starts from zero
            assert mine == values, thread
    if totals_only:  # this process's later tests ask for counts of their own modules
        _forget_totals_only(next(m for m in _eventrt.modules()
                                 if m.key == loaded.metadata.key))
    own, whole, lost = counted(loaded.metadata.key)
    assert lost == 0
    if not totals_only:
        assert own == {n: oracle.self_counts[n] for n in own}
        assert whole == {n: oracle.inclusive[n] for n in whole}


@pytest.mark.parametrize("kind", ["statements", "instructions"])
@pytest.mark.parametrize("path", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_totals_only_hand_over_gives_the_settrace_counters_total(path: Path, kind: str
                                                                  ) -> None:
    """The totals-only hand-over: the thread's total grows by exactly the events the
    program ran, and per-function counts are refused, not made up."""
    from pathprof import events
    from pathprof.exceptions import PathprofError

    plain, functions = plain_functions(path, kind)
    oracle = StatementCounter(functions)

    def execute_and_drive() -> Any:
        exec(plain.__pathprof_code__, plain.__dict__)
        return plain.drive()

    expected = oracle.run(execute_and_drive)
    loaded = load_instrumented(path, f"pathprof_events_totals_{path.stem}_{kind}",
                               mark_probes=False, mode="events", events=kind, totals_only=True)
    before = events.read(all_threads=True)
    loaded.execute()
    assert loaded.module.drive() == expected
    assert events.read(all_threads=True) - before == sum(oracle.self_counts.values()) > 0
    state = _eventrt.modules()[-1]
    try:
        with pytest.raises(PathprofError, match="totals only"):
            events.counts()
    finally:  # this process's later tests ask for counts of their own modules
        _forget_totals_only(state)


def _forget_totals_only(state: Any) -> None:
    """Let :func:`events.counts` read ``state`` as a per-function module again."""
    state._meta = dataclasses.replace(state.meta, totals_only=False)


#: Stdlib modules driven by their CPython tests: module -> (modules counted, test
#: module, prefixes imported afresh for each run).
STDLIB = {
    "textwrap": (("textwrap",), "test.test_textwrap", ("textwrap", "test.test_textwrap")),
    "shlex": (("shlex",), "test.test_shlex", ("shlex", "test.test_shlex")),
    "fractions": (("fractions",), "test.test_fractions", ("fractions", "test.test_fractions")),
}


@pytest.mark.parametrize("name", list(STDLIB))
def test_stdlib_counts_equal_the_settrace_counter(name: str) -> None:
    from ..stdlib.harness import (
        InstrumentingFinder,
        isolated_modules,
        run_test_module,
        source_file,
        warm_up,
    )

    modules, test_module, isolate = STDLIB[name]
    paths = {module: source_file(module) for module in modules}
    functions = []
    for path in paths.values():
        functions += plain_functions(path)[1]
    oracle = StatementCounter(functions)
    warm_up(test_module, isolate)
    with isolated_modules(isolate):
        plain = oracle.run(lambda: run_test_module(test_module, None))
    since = len(_eventrt.modules())
    with isolated_modules(isolate):
        loadeds = {}
        for module, path in paths.items():
            loadeds[module] = load_instrumented(path, module, mark_probes=False, mode="events")
            del sys.modules[module]
        with InstrumentingFinder(loadeds).installed():
            counted_run = run_test_module(test_module, None)
    assert counted_run == plain, counted_run.details
    compared = 0
    for loaded in loadeds.values():
        own, whole, lost = counted(loaded.metadata.key, since)
        assert lost == 0
        assert own == {n: oracle.self_counts[n] for n in own}
        assert whole == {n: oracle.inclusive[n] for n in whole}
        compared += sum(own.values())
    assert compared == sum(oracle.self_counts.values()) > 1000


LOOP = '''
def f(n):
    a = 1
    b = 2
    for i in range(n):
        a += i
        b += a
        c = a
    return b + c
'''


@pytest.mark.parametrize("kind", ["statements", "instructions"])
def test_adds_per_iteration_tree_against_the_naive_baseline(kind: str) -> None:
    """Per iteration of a loop of three statements (four events with the loop's
    step): one add on the tree's chord, four in the one-add-per-statement baseline."""
    import ast

    from pathprof.python.instrument import instrument_source
    from pathprof.python.names import REGISTER

    def loop_adds(placement: str) -> list[int]:
        tree = instrument_source(LOOP, "loop.py", mode="events", events=kind,
                                 placement=placement).tree
        (loop,) = [n for n in ast.walk(tree) if isinstance(n, ast.For)]
        return [n.value.value for stmt in loop.body for n in ast.walk(stmt)
                if isinstance(n, ast.AugAssign) and getattr(n.target, "id", "") == REGISTER]

    tree_adds, naive_adds = loop_adds("tree"), loop_adds("statements")
    assert len(tree_adds) == 1
    assert len(naive_adds) == 4
    assert sum(tree_adds) == sum(naive_adds)
    if kind == "statements":
        assert sum(tree_adds) == 4
    else:  # every one of the four statements compiles to at least one instruction
        assert sum(tree_adds) >= 4
        assert min(naive_adds) >= 1
