"""Coverage that stops paying, loop by loop (DESIGN.md §4): inside one call, a loop
whose body paths have all been seen (or are spanned by the paths seen) runs its
original body for the rest of each loop entry, and the coverage stays what
counting every run gives.

Each program here is one long call, so its function never goes back (a call
under way ends measured): only its loops can. The references are the same
program counted in full and run plain."""

from __future__ import annotations

import ast
import contextlib
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from pathprof.analysis.basis import basis_rank
from pathprof.data.profile import numbering_of
from pathprof.graph import CounterKind
from pathprof.python.cfg import build_cfg, iter_functions
from pathprof.python.plan import plan_function
from pathprof.python.switches import can_switch, plan_loop_switches
from pathprof.runtime import stopping
from pathprof.runtime.switching import Switching

from ..loading import load_instrumented, load_plain, program_examples
from .random_programs import functions
from .test_preservation import _documented_differences, trace_events
from .test_random_programs import _outcome
from .test_random_programs import _write as _write_random
from .test_stop_counting import _measure, _state, check_random_program

LONG_CALL = '''
def long_call(n, data):
    total = 0
    i = 0
    while i < n:                      # loop 0: two body paths
        if data[i % len(data)] > 0:
            total += 1
        else:
            total -= 1
        i += 1
    for rep in range(4):              # loop 1: its last body path comes last
        if rep == 3:
            total *= 2
        for x in data * 3:            # loop 4 (inner loops come last): its break
            if x == 99:
                break
            total += x
        else:
            total += 1000
    try:
        for x in data * 3:            # loop 2: its body raises, caught outside it
            total += 10 // x
    except ZeroDivisionError:
        total -= 7
    j = 0
    while True:                       # loop 3: a constant test, left by return
        j += 1
        if j > n:
            return total + j
        if j % 3 == 0:
            continue
        total += 1


def drive():
    return long_call(200, [1, -2, 3, 0, 99, 4])
'''

RAISES_FROM_THE_ORIGINAL_BODY = '''
def leaves(n):
    count = 0
    for i in range(n):
        if i % 2:
            count += 1
        else:
            count += 2
        count += 10 // (n - 1 - i)   # raises in the last iteration: a cut, no path


def closed_early():
    k = 0
    while True:
        k += 1
        if k % 2:
            yield k
        else:
            yield -k


def drive():
    out = []
    try:
        leaves(50)
    except ZeroDivisionError as exc:
        out.append(exc.args)
    gen = closed_early()
    out.append([next(gen) for _ in range(40)])
    gen.close()
    return out
'''

# 2 ** 14 paths through the ifs: a hash table, not a list.
MANY_PATHS = "def wide(n, bits):\n    total = 0\n" + "".join(
    f"    if bits & {1 << k}:\n        total += {k}\n" for k in range(14)) + '''
    for i in range(n):
        if i % 2:
            total += 1
        else:
            total -= 1
    return total


def drive():
    return wide(300, 0b1010101)
'''

NOT_SWITCHED = '''
import contextlib

def f(items):
    total = 0
    for x in items:                 # switched
        total += x
    with contextlib.nullcontext():
        for x in items:             # inside a with: not switched
            total += x
    try:
        while total > 100:          # inside a try with a finally: not switched
            total -= 1
    finally:
        total += 1
    for a in items:                 # switched, and so is the loop in it
        async_like = [b for b in items]
        for b in async_like:
            total += a * b
    return total
'''


#: The lines of the loops that go back in each program's call: all but those whose
#: last body path is seen only as the loop is left for the last time.
GO_BACK = {"long_call": {5, 14, 21, 26}, "raises": {4, 14}, "many_paths": {32}}


def _line(source: str, index: int, ordinal: int) -> int:
    """The line of loop ``ordinal`` of function ``index`` of ``source``."""
    node, qualname = list(iter_functions(ast.parse(source)))[index]
    fp = plan_function(build_cfg(node, qualname))
    return plan_loop_switches(fp)[ordinal].node.lineno


def _write(tmp_path: Path, name: str, source: str) -> Path:
    path = tmp_path / f"{name}.py"
    path.write_text(source, encoding="utf-8")
    return path


def _drive(module: Any) -> Any:
    return module.drive()


def _hidden_paths(state: Any, index: int) -> set[int]:
    """The hidden paths of function ``index``'s loops that went back."""
    return {first + k for ordinal, (ranges, _) in enumerate(state.switching.loops.get(index, ()))
            if (index, ordinal) in state.switching.loops_back
            for first, count in ranges for k in range(count)}


@pytest.mark.parametrize("when", ["basis", "paths"])
@pytest.mark.parametrize(("name", "source"), [("long_call", LONG_CALL),
                                         ("raises", RAISES_FROM_THE_ORIGINAL_BODY),
                                         ("many_paths", MANY_PATHS)])
def test_loops_go_back_inside_one_call_and_coverage_stays_exact(
        tmp_path: Path, when: str, name: str, source: str) -> None:
    """Every loop goes back during the call; the program's results are the plain
    program's; the paths seen are among those counting every run finds, with the
    same basis rank (for "paths": all of them); every path but a switched loop's
    body paths keeps its exact count; and the body paths were counted far fewer
    times than their iterations ran (their original body ran instead)."""
    path = _write(tmp_path, name, source)
    plain = load_plain(path, f"pathprof_loops_plain_{name}_{when}")
    full_result, full, _ = _measure(path, None, _drive)
    result, seen, state = _measure(path, when, _drive)
    assert result == full_result == plain.drive()
    assert {_line(source, index, k) for index, k in state.switching.loops_back} == GO_BACK[name]
    for index, meta in enumerate(state.meta.functions):
        numbering = numbering_of(meta)
        assert seen[index] <= full[index], meta.qualname
        assert basis_rank(numbering, seen[index]) == basis_rank(numbering, full[index])
        if when == "paths":
            assert seen[index] == full[index], meta.qualname
        switching = state.switching
        assert state.stopped(index) == (index in switching.loops or index in switching.sent_back)


def _counts(path: Path, when: str | None) -> tuple[Any, list[dict[int, int]], Any, Any]:
    loaded = load_instrumented(path, f"pathprof_loops_counts_{path.stem}_{when}",
                               mark_probes=False, switches=when is not None)
    loaded.execute()
    loaded.snapshot()
    from pathprof.measure.stopping import StopCounting

    watcher = StopCounting(when) if when else None
    if watcher:
        watcher.start()
    try:
        result = loaded.module.drive()
    finally:
        if watcher:
            watcher.stop()
    paths, cuts, raised, unattributed = loaded.snapshot()
    state = _state(loaded)
    sys.modules.pop(loaded.module.__name__, None)
    return result, paths, (cuts, raised, unattributed), state


@pytest.mark.parametrize(("name", "source"), [("long_call", LONG_CALL),
                                         ("raises", RAISES_FROM_THE_ORIGINAL_BODY),
                                         ("many_paths", MANY_PATHS)])
def test_only_hidden_paths_go_uncounted(tmp_path: Path, name: str, source: str) -> None:
    """A loop's normal exit, the first iteration of each loop entry and every path
    that starts outside a switched loop's body keep their exact counts; a hidden
    path is counted at most as often as counting every run counts it, and less in
    all (a loop can go back as it is left for the last time); no path cut by an
    exception in an original body is recorded (the register was parked), while
    the calls that raised are all counted."""
    path = _write(tmp_path, name, source)
    _, full, (full_cuts, full_raised, _), _ = _counts(path, None)
    _, paths, (cuts, raised, unattributed), state = _counts(path, "basis")
    assert raised == full_raised
    assert not any(unattributed)
    for index, table in enumerate(paths):
        body = _hidden_paths(state, index)
        for number, count in full[index].items():
            if number in body:
                assert table.get(number, 0) <= count
            else:
                assert table.get(number, 0) == count, (index, number)
        assert set(table) <= set(full[index])  # the spare slot is never reported
        if body:
            measured = sum(table.get(number, 0) for number in body)
            assert measured < sum(full[index].get(number, 0) for number in body)
    if name == "long_call":  # the first loop: 199 body paths, then its body twice
        ((first, count),), _ = state.switching.loops[0][0]
        assert sum(full[0][first + k] for k in range(count)) == 199
        assert sum(paths[0][first + k] for k in range(count)) == 2
        for key, count in cuts[index].items():
            assert count <= full_cuts[index].get(key, 0)


def test_an_exception_in_an_original_body_records_no_cut(tmp_path: Path) -> None:
    """The exception ``leaves`` raises in its loop's last iteration (original by
    then) and the close of the generator (suspended in an original body) are
    counted as calls that raised; their cut paths, unknown, are not recorded,
    where counting every run records them."""
    path = _write(tmp_path, "raises_cut", RAISES_FROM_THE_ORIGINAL_BODY)
    _, _, (full_cuts, full_raised, _), _ = _counts(path, None)
    _, _, (cuts, raised, _), state = _counts(path, "basis")
    names = [meta.qualname for meta in state.meta.functions]
    for name in ("leaves", "closed_early"):
        index = names.index(name)
        assert raised[index] == full_raised[index] == 1
        assert sum(full_cuts[index].values()) == 1
        assert not cuts[index]


def test_a_hash_table_keeps_parked_counts_apart(tmp_path: Path) -> None:
    path = _write(tmp_path, "wide_table", MANY_PATHS)
    loaded = load_instrumented(path, "pathprof_loops_wide_table", mark_probes=False,
                               switches=True)
    (plan,) = [p for p in loaded.instrumented.functions if p.cfg.qualname == "wide"]
    assert plan.kind is CounterKind.HASH
    assert plan.loop_switches
    table = stopping.new_table(None, 0, -1)
    table[stopping.PARKED] += 1
    table[stopping.PARKED] += 1
    table[-1] += 1
    assert table[stopping.PARKED] == 2
    assert table[-1] == 1
    sys.modules.pop("pathprof_loops_wide_table", None)


def test_a_list_table_counts_parked_paths_in_its_spare_slot() -> None:
    heard: list[int] = []

    class Listener:
        def seen(self, state: Any, index: int, number: int) -> None:
            heard.append(number)

    table = stopping.new_table(None, 0, 3, spare=True)
    stopping.watcher = Listener()
    try:
        table[stopping.PARKED + 5] += 1
        table[stopping.PARKED] += 1
    finally:
        stopping.watcher = None
    assert table == [table[0], table[1], table[2], 2]
    assert heard == []  # never a first run
    stopping.arm(None, 0, table, 3)
    assert table[3] == 0
    assert type(table[0]) is stopping.Unseen
    assert 7 + stopping.PARKED is stopping.PARKED
    assert stopping.PARKED - 3 is stopping.PARKED


def test_which_loops_can_go_back() -> None:
    """Every loop except those inside a ``with`` or a ``try`` with a ``finally``:
    their measured exits need route flags and cut records an original body
    would not set."""
    tree = ast.parse(NOT_SWITCHED)
    ((node, qualname),) = list(iter_functions(tree))
    fp = plan_function(build_cfg(node, qualname))
    assert can_switch(fp)
    fp.switch = True
    loops = plan_loop_switches(fp)
    assert sorted(loop.node.lineno for loop in loops) == [6, 16, 18]
    for loop in loops:
        assert ast.dump(ast.Module(body=loop.original, type_ignores=[])) == ast.dump(
            ast.Module(body=loop.node.body, type_ignores=[]))
        ranges = loop.hidden_paths(fp.numbering)
        spanning = loop.spanning_paths(fp.numbering)
        assert spanning
        assert all(any(first <= n < first + count for first, count in ranges)
                   for n in spanning)


def test_spanning_paths_span_every_body_path() -> None:
    """The spanning paths of each loop of the corpus's functions have the rank of all
    the loop's hidden paths (enumerated where there are few)."""
    from ..loading import CORPUS, corpus_programs

    checked = 0
    for path in corpus_programs():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node, qualname in iter_functions(tree):
            fp = plan_function(build_cfg(node, qualname))
            if not can_switch(fp):
                continue
            for loop in plan_loop_switches(fp):
                ranges = loop.hidden_paths(fp.numbering)
                if sum(count for _, count in ranges) > 200:
                    continue
                every = [first + k for first, count in ranges for k in range(count)]
                spanning = loop.spanning_paths(fp.numbering)
                assert basis_rank(fp.numbering, spanning) == basis_rank(
                    fp.numbering, every), (path.name, qualname)
                checked += 1
    assert checked >= 20, CORPUS


def test_a_tracer_sees_the_same_events_when_loops_go_back(tmp_path: Path) -> None:
    path = _write(tmp_path, "traced_loops", LONG_CALL)
    plain = load_plain(path, "pathprof_loops_plain_traced")
    expected = trace_events(plain, str(path))
    loaded = load_instrumented(path, "pathprof_loops_traced", mark_probes=False,
                               switches=True)
    loaded.execute()
    from pathprof.measure.stopping import StopCounting

    watcher = StopCounting("basis")
    watcher.start()
    try:
        got = trace_events(loaded.module, str(path))
    finally:
        watcher.stop()
    assert _state(loaded).switching.loops_back
    assert _documented_differences(got) == _documented_differences(expected)
    sys.modules.pop(loaded.module.__name__, None)


def test_registers_outside_the_frame_switch_loops_too(tmp_path: Path) -> None:
    """A function whose source reaches its frame keeps ``@pp_*`` names out of it;
    its loop's mode flag goes with them, and ``locals()`` shows the program's names
    only, before and after the loop goes back."""
    source = '''
def f(n):
    seen = []
    for i in range(n):
        if i % 2:
            seen.append(sorted(locals()))
        else:
            seen.append(len(locals()))
    return seen


def drive():
    return f(30)
'''
    path = _write(tmp_path, "frame_loops", source)
    plain = load_plain(path, "pathprof_loops_plain_frame")
    result, seen, state = _measure(path, "basis", _drive)
    assert result == plain.drive()
    assert state.switching.loops_back
    assert seen[0]


LOOP_INPUTS = [(seed, n) for seed in range(8) for n in (seed % 3, 4)]


@settings(max_examples=program_examples(150), deadline=None)
@given(source=functions(), data=st.data(), when=st.sampled_from(["basis", "paths"]))
def test_random_programs_with_loops_alone_going_back(
        tmp_path_factory: Any, source: str, data: st.DataObject, when: str) -> None:
    """The functions themselves are kept measured, so every call runs its loops'
    switches: what each call returns and raises, and the lines of the frames an
    exception left, are the plain program's; the paths seen span what counting
    every run finds (for "paths", they are all of them)."""
    inputs = data.draw(st.lists(st.sampled_from(LOOP_INPUTS), min_size=1, max_size=5)) * 3
    state = check_random_program(_write_random(tmp_path_factory.mktemp("loops"), source),
                                 source, inputs, when, _functions_kept_measured)
    event(f"loops went back: {bool(state.switching.loops_back)}")


@contextlib.contextmanager
def _functions_kept_measured() -> Any:
    send_back = Switching.send_back
    Switching.send_back = lambda self, index: None  # type: ignore[method-assign]
    try:
        yield
    finally:
        Switching.send_back = send_back  # type: ignore[method-assign]


def test_random_programs_send_loops_back(tmp_path: Path) -> None:
    """Not vacuous: of 120 programs drawn (derandomized), loops go back in at least
    one in ten. (Which programs are drawn follows the test's source text: 60 drew 9
    to 17 such programs as the text changed, so the bound is not held to one draw.)"""
    went_back: list[bool] = []

    @settings(max_examples=120, deadline=None, derandomize=True, database=None)
    @given(source=functions())
    def draw(source: str) -> None:
        path = _write_random(tmp_path, source)
        with _functions_kept_measured():
            _, _, state = _measure(path, "basis", lambda m: [
                _outcome(m.f, s, n, True) for s, n in LOOP_INPUTS * 2])
        went_back.append(bool(state.switching.loops_back))

    draw()
    assert sum(went_back) >= 12, went_back


def _switchable_by_every_node(fp: Any) -> bool:
    """``can_switch`` by its definition, read off every node of the body (expressions
    included), as it was first written."""
    node = fp.cfg.node
    if fp.calls_only or fp.share is not None or fp.subpaths or fp.timed:
        return False
    if fp.edge_plan is not None or len(node.body) <= fp.cfg.body_start:
        return False
    pending = [(stmt, False) for stmt in node.body[fp.cfg.body_start:]]
    while pending:
        child, in_with = pending.pop()
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            return False
        if isinstance(child, ast.Return) and in_with:
            return False
        in_with = in_with or isinstance(child, ast.With | ast.AsyncWith)
        pending.extend((inner, in_with) for inner in ast.iter_child_nodes(child))
    return True


def test_which_functions_can_switch_is_read_from_their_statements_alone() -> None:
    """``can_switch`` walks statements only: on every function of the standard library's
    top-level modules it decides what a walk of every node decides."""
    import os

    functions = switchable = 0
    for path in sorted(Path(os.__file__).parent.glob("*.py")):
        try:
            tree = ast.parse(path.read_bytes())
        except (SyntaxError, ValueError):
            continue
        for index, (node, qualname) in enumerate(iter_functions(tree)):
            fp = plan_function(build_cfg(node, qualname), index)
            assert can_switch(fp) == _switchable_by_every_node(fp), (path, qualname)
            functions += 1
            switchable += can_switch(fp)
    assert functions > 5000
    assert 0 < switchable < functions
