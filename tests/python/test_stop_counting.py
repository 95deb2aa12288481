"""Coverage that stops paying (DESIGN.md §4): functions go back to their original
code once their paths tell everything, and the coverage stays what counting every
run gives -- on the corpus and on random programs, against the same program counted
in full and run plain."""

from __future__ import annotations

import contextlib
import itertools
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pathprof import runtime
from pathprof.analysis.basis import basis_rank, path_space_dimension
from pathprof.data.profile import numbering_of
from pathprof.measure.stopping import StopCounting
from pathprof.runtime import stopping

from ..loading import (
    CORPUS,
    Loaded,
    corpus_programs,
    load_instrumented,
    load_plain,
    program_examples,
)
from .random_programs import functions
from .test_random_programs import INPUTS, _known_difference, _outcome, _plain, _write

PROGRAMS = corpus_programs()
CORPUS_BASICS = CORPUS / "basics.py"
_loads = itertools.count()


def _state(loaded: Loaded) -> Any:
    (state,) = [s for s in runtime.modules() if s.key == loaded.metadata.key]
    return state


def _seen(loaded: Loaded) -> list[set[int]]:
    paths, _cuts, _raised, _unattributed = loaded.snapshot()
    return [{number for number, count in table.items() if count} for table in paths]


def _measure(path: Path, when: str | None, runs: Any, conditions: bool = False
             ) -> tuple[Any, list[set[int]], Any]:
    """Load ``path`` (with switches when ``when``; counting decisions' vectors too
    with ``conditions``), run ``runs(module)`` while ``when`` is in force; the result,
    the paths seen per function, the state."""
    loaded = load_instrumented(path, f"pathprof_stop_{path.stem}_{next(_loads)}",
                               mark_probes=False, switches=when is not None,
                               conditions=conditions)
    loaded.execute()
    loaded.snapshot()  # module execution is not compared
    watcher = StopCounting(when) if when else None
    if watcher:
        watcher.start()
    try:
        result = runs(loaded.module)
    finally:
        if watcher:
            watcher.stop()
    seen = _seen(loaded)
    state = _state(loaded)
    sys.modules.pop(loaded.module.__name__, None)
    return result, seen, state


def _drive_three_times(module: Any) -> list[Any]:
    return [module.drive() for _ in range(3)]


@pytest.mark.parametrize("path", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_corpus_basis_stays_exact_and_functions_go_back(path: Path) -> None:
    full_result, full, _ = _measure(path, None, _drive_three_times)
    result, seen, state = _measure(path, "basis", _drive_three_times)
    plain = load_plain(path, f"pathprof_stop_plain_{path.stem}")
    assert result == full_result == _drive_three_times(plain)
    for index, meta in enumerate(state.meta.functions):
        numbering = numbering_of(meta)
        name = meta.qualname
        assert seen[index] <= full[index], name
        assert basis_rank(numbering, seen[index]) == basis_rank(numbering, full[index]), name
        if index in state.switching.sent_back:
            assert index in state.switches
            assert basis_rank(numbering, full[index]) == path_space_dimension(
                numbering.dag), name
    # not vacuous: the corpus's functions go back once they have shown their basis
    assert state.switching.sent_back, path.stem


@pytest.mark.parametrize("path", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_corpus_every_path_stays_exact(path: Path) -> None:
    _, full, _ = _measure(path, None, _drive_three_times)
    _, seen, state = _measure(path, "paths", _drive_three_times)
    assert seen == full
    for index in state.switching.sent_back:
        assert len(full[index]) == state.meta.functions[index].num_paths


@pytest.mark.parametrize("conditions", [False, True], ids=["paths", "with-conditions"])
@settings(max_examples=program_examples(100), deadline=None)
@given(source=functions(), data=st.data(), when=st.sampled_from(["basis", "paths"]))
def test_random_programs_run_as_written_and_keep_their_coverage(
        tmp_path_factory: Any, conditions: bool, source: str, data: st.DataObject,
        when: str) -> None:
    """Each input runs twice, so calls after a function went back run its original
    code: what they return and raise, and the lines of the frames an exception
    left, are the plain program's; the paths seen span what counting every run
    finds (and, for "paths", are all of them). ``conditions``: decisions counted too,
    so a function goes back first to its original code with its decisions still
    counting, then to the code as written."""
    inputs = data.draw(st.lists(st.sampled_from(INPUTS), min_size=1, max_size=4)) * 2
    check_random_program(_write(tmp_path_factory.mktemp("stop"), source), source, inputs,
                         when, conditions=conditions)


def check_random_program(path: Path, source: str, inputs: list[tuple[int, int]], when: str,
                         stopping: Any = contextlib.nullcontext, conditions: bool = False
                         ) -> Any:
    """Run the random program at ``path`` on ``inputs`` plain, counting every run and
    (within ``stopping()``) stopping ``when``: the same outcomes, the paths seen among
    those counted in full, the same basis rank (for "paths": the same paths). The
    stopping run's module state."""
    plain = _plain(path)

    def runs(module: Any) -> list[Any]:
        return [_outcome(module.f, s, n, True) for s, n in inputs]

    expected = runs(plain)
    full_result, full, _ = _measure(path, None, runs, conditions)
    with stopping():
        result, seen, state = _measure(path, when, runs, conditions)
    assert _known_difference(result, expected, source) == expected
    assert _known_difference(full_result, expected, source) == expected
    for index, meta in enumerate(state.meta.functions):
        assert seen[index] <= full[index], source
        if when == "paths":
            assert seen[index] == full[index], source
        else:
            numbering = numbering_of(meta)
            assert basis_rank(numbering, seen[index]) == basis_rank(numbering, full[index])
    return state


def test_first_runs_are_reported_once_and_tables_count_as_lists() -> None:
    heard: list[tuple[int, int]] = []

    class Listener:
        def seen(self, state: Any, index: int, number: int) -> None:
            heard.append((index, number))

    table = stopping.new_table(None, 7, 3)
    stopping.watcher = Listener()
    try:
        table[2] += 1
        table[2] += 1
        table[0] += 5
        big = stopping.new_table(None, 8, -1)
        big[10**9] += 1
        big[10**9] += 1
    finally:
        stopping.watcher = None
    assert heard == [(7, 2), (7, 0), (8, 10**9)]
    assert table[2] == 2
    assert table[0] == 5
    assert not table[1]
    assert type(table[2]) is int
    assert dict(big) == {10**9: 2}


def test_a_listener_that_fails_never_reaches_the_program() -> None:
    class Broken:
        def seen(self, state: Any, index: int, number: int) -> None:
            raise RuntimeError("boom")

    table = stopping.new_table(None, 0, 2)
    stopping.watcher = Broken()
    try:
        table[1] += 1
    finally:
        stopping.watcher = None
    assert table[1] == 1


COUNTED_THEN_TAKEN_BACK = '''
class Gate:
    def __init__(self, fail):
        self.fail = fail

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.fail:
            raise ValueError("exit")
        return False


def in_with(fail):
    with Gate(fail):
        return 1


def value_raises(table, key):
    return table[key]


def drive():
    out = []
    for fail in (True, False, False):
        try:
            out.append(in_with(fail))
        except ValueError:
            out.append("exit raised")
    for key in ("missing", "there", "there"):
        try:
            out.append(value_raises({"there": 2}, key))
        except KeyError:
            out.append("value raised")
    return out
'''


@pytest.mark.parametrize("when", ["basis", "paths"])
def test_a_path_whose_count_an_exception_takes_back_is_no_first_run(
        tmp_path: Path, when: str) -> None:
    """A return inside a ``with`` counts before ``__exit__``, which may raise and take
    the count back; a return's value may raise. Neither may be heard as a first
    run: the first call of each function here raises, and the two after it return
    by that very path."""
    path = tmp_path / "taken_back.py"
    path.write_text(COUNTED_THEN_TAKEN_BACK, encoding="utf-8")
    _, full, _ = _measure(path, None, lambda m: m.drive())
    result, seen, state = _measure(path, when, lambda m: m.drive())
    assert result == [*["exit raised", 1, 1], *["value raised", 2, 2]]
    names = [meta.qualname for meta in state.meta.functions]
    assert seen == full
    assert seen[names.index("in_with")] == seen[names.index("value_raises")] == {0}
    assert names.index("in_with") not in state.switches  # counts before __exit__
    assert names.index("value_raises") in state.switching.sent_back


def test_a_first_run_counted_by_another_thread_meanwhile_is_not_lost() -> None:
    """The report of a first run is a call, during which another thread may run the
    same path: both counts stay."""
    table = stopping.new_table(None, 0, 2)
    seen_in: dict[str, Any] = {}

    class Racing:
        def seen(self, state: Any, index: int, number: int) -> None:
            if not seen_in:
                seen_in["nested"] = True
                table[number] += 1  # as another thread would, during the report

    stopping.watcher = Racing()
    try:
        table[1] += 1
        big = stopping.new_table(None, 1, -1)
        seen_in.clear()

        class RacingBig:
            def seen(self, state: Any, index: int, number: int) -> None:
                if not seen_in:
                    seen_in["nested"] = True
                    big[number] += 1

        stopping.watcher = RacingBig()
        big[5] += 1
    finally:
        stopping.watcher = None
    assert table[1] == 2
    assert big[5] == 2


@pytest.mark.parametrize("path", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_a_tracer_sees_the_same_events_before_and_after_functions_go_back(path: Path) -> None:
    """Three drives, the later ones mostly on original code: every call, line,
    return and exception event a tracer sees is the plain program's (outside the
    differences docs/python.md documents for measured code)."""
    from .test_preservation import _documented_differences, trace_events

    plain = load_plain(path, f"pathprof_stop_plain_events_{path.stem}")
    expected = [trace_events(plain, str(path)) for _ in range(3)]
    loaded = load_instrumented(path, f"pathprof_stop_events_{path.stem}_{next(_loads)}",
                               mark_probes=False, switches=True)
    loaded.execute()
    watcher = StopCounting("basis")
    watcher.start()
    try:
        events = [trace_events(loaded.module, str(path)) for _ in range(3)]
    finally:
        watcher.stop()
    assert _state(loaded).switching.sent_back
    for got, want in zip(events, expected, strict=True):
        assert _documented_differences(got) == _documented_differences(want)
    sys.modules.pop(loaded.module.__name__, None)


def test_tables_and_module_states_pickle_small() -> None:
    """A program that pickles a measured function by value (cloudpickle, as attrs'
    own tests do) takes its globals along: a table goes as the counts it holds,
    a module state as a reference to the live one, never with the module's namespace."""
    import pickle

    path = CORPUS_BASICS
    loaded = load_instrumented(path, f"pathprof_stop_pickle_{next(_loads)}",
                               mark_probes=False, switches=True)
    loaded.execute()
    state = _state(loaded)
    table = next(t for i, t in enumerate(state.counters) if i in state.switches)
    assert pickle.loads(pickle.dumps(table)) == [0] * len(table)
    big = stopping.new_table(state, 0, -1)
    big[3] += 2
    assert type(pickle.loads(pickle.dumps(big))) is dict
    assert pickle.loads(pickle.dumps(big)) == {3: 2}
    assert pickle.loads(pickle.dumps(state)) is state
    assert len(pickle.dumps(state)) < 200
    sys.modules.pop(loaded.module.__name__, None)
