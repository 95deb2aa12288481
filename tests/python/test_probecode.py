"""Unit tests of :mod:`pathprof.python.probecode`, the code a probe adds besides its
count: the time metric's clock at a path's end, OSP's countdown where a path ends
(subtract the path's length, and when it falls to zero, note the path end or call
the runtime), and the note of a call beginning while blocks are observed. The
statements are compiled and run against a holder of stand-ins for the runtime's
names, and what they did is checked."""

from __future__ import annotations

import ast
import dis
import sys
import textwrap
import types
from typing import Any

import pytest

from pathprof.graph.placement import Probe, ProbeOp
from pathprof.python.cfg import build_cfg
from pathprof.python.names import (
    CALLER_LOCALS,
    CLOCK,
    COUNTDOWN,
    COUNTDOWN_LEFT,
    GETATTR,
    GETFRAME,
    IDENTITY,
    MODULE,
    NO_LOCALS,
    NOTE,
    NOW,
    OBSERVED_FLOOR,
    OBSERVING,
    PATH_START,
    REGISTER,
    TRACK,
    TRACK_TYPE,
    lengths_name,
)
from pathprof.python.nodes import assign, const, load
from pathprof.python.plan import FunctionPlan, plan_function
from pathprof.python.probecode import (
    count_down,
    note_call,
    path_index,
    register_plus,
    restart_clock,
    time_path,
)
from pathprof.runtime import holder as holders


def _run(stmts: list[ast.stmt], names: dict[str, object], variables: dict[str, object]
         ) -> dict[str, object]:
    """Run ``stmts`` as a module whose holder has ``names``, its globals
    ``variables`` (the locals of the code, at module level)."""
    module = ast.fix_missing_locations(ast.Module(body=stmts, type_ignores=[]))
    holder = types.ModuleType("holder")
    holder.__dict__.update(names)
    namespace = dict(variables)
    exec(holders.bind(compile(module, "<probe>", "exec"), holder), namespace)
    return namespace


def _value(expr: ast.expr, variables: dict[str, object]) -> object:
    namespace = _run([assign("result", expr)], {}, variables)
    return namespace["result"]


def test_register_plus_zero_is_the_register() -> None:
    expr = register_plus(0)
    assert isinstance(expr, ast.Name)
    assert expr.id == REGISTER
    assert _value(register_plus(4), {REGISTER: 3}) == 7


def test_path_index_of_a_count_adds_the_register() -> None:
    assert _value(path_index(Probe(ProbeOp.COUNT, 2)), {REGISTER: 3}) == 5
    assert _value(path_index(Probe(ProbeOp.COUNT, 0)), {REGISTER: 3}) == 3


def test_path_index_of_a_constant_count_is_the_constant() -> None:
    index = path_index(Probe(ProbeOp.COUNT_CONST, 6))
    assert isinstance(index, ast.Constant)
    assert _value(index, {REGISTER: 3}) == 6


# ---------------------------------------------------------------------------
# The time metric


def test_a_timed_path_adds_its_time_and_restarts_the_clock() -> None:
    table = [0] * 8
    # register 3, probe +2: path 5; the path started at 20, the clock reads 50
    done = _run(time_path("_@pp_t0", Probe(ProbeOp.COUNT, 2)),
                {"_@pp_t0": table, CLOCK: lambda: 50}, {REGISTER: 3, PATH_START: 20})
    assert table == [0, 0, 0, 0, 0, 30, 0, 0]
    assert done[PATH_START] == 50
    assert done[NOW] == 50


def test_a_timed_constant_path_indexes_by_its_constant() -> None:
    table = {1: 5}
    _run(time_path("_@pp_t0", Probe(ProbeOp.COUNT_CONST, 1)),
         {"_@pp_t0": table, CLOCK: lambda: 12}, {REGISTER: 99, PATH_START: 10})
    assert table == {1: 7}


def test_restart_clock_starts_the_path_now() -> None:
    done = _run([restart_clock()], {CLOCK: lambda: 123}, {})
    assert done[PATH_START] == 123


# ---------------------------------------------------------------------------
# OSP's countdown


class _Osp:
    """The module state's ``osp_path``: records its calls, returns a new track."""

    def __init__(self) -> None:
        self.calls: list[tuple[int, int, object]] = []

    def osp_path(self, index: int, path: int, track: object) -> str:
        self.calls.append((index, path, track))
        return "new track"


def _count_down(countdown: int, *, track: object = None, observing: bool = True,
                length: int | None = None) -> tuple[list[int], dict[str, object], _Osp,
                                                    list[object]]:
    """Run function 4's countdown at a path end: register 3, probe +2 (path 5, 3
    blocks long in the lengths table)."""
    queue = [countdown]
    state = _Osp()
    notes: list[object] = []
    names: dict[str, object] = {COUNTDOWN: queue, MODULE: state, OBSERVING: observing,
                                NOTE: notes.append}
    if length is None:
        names[lengths_name(4)] = [9, 9, 9, 9, 9, 3, 9]
    done = _run(count_down(4, Probe(ProbeOp.COUNT, 2), length), names,
                {REGISTER: 3, TRACK: track})
    return queue, done, state, notes


def test_far_from_a_sample_the_countdown_only_subtracts() -> None:
    queue, done, state, notes = _count_down(10)
    assert queue == [7]
    assert done[COUNTDOWN_LEFT] == 7
    assert state.calls == []
    assert notes == []
    assert done[TRACK] is None


def test_a_countdown_reaching_zero_calls_the_runtime_for_an_unmet_frame() -> None:
    queue, done, state, notes = _count_down(3)
    assert queue == [0]  # zero is reached: <= 0
    assert state.calls == [(4, 5, None)]
    assert done[TRACK] == "new track"
    assert notes == []


def test_a_met_frame_notes_its_path_end_while_blocks_are_observed() -> None:
    queue, done, state, notes = _count_down(2, track="T")
    assert queue == [-1]
    assert notes == [("T", 5)]
    assert state.calls == []
    assert done[TRACK] == "T"


def test_a_met_frame_calls_the_runtime_when_blocks_are_not_observed() -> None:
    _queue, done, state, notes = _count_down(2, track="T", observing=False)
    assert notes == []
    assert state.calls == [(4, 5, "T")]
    assert done[TRACK] == "new track"


def test_at_the_floor_the_runtime_takes_the_notes() -> None:
    # OBSERVED_FLOOR + 2 - 3 = OBSERVED_FLOOR - 1: at or below the floor
    _queue, _done, state, notes = _count_down(OBSERVED_FLOOR + 2, track="T")
    assert notes == []
    assert state.calls == [(4, 5, "T")]
    # one above the floor still notes
    _queue, _done, state, notes = _count_down(OBSERVED_FLOOR + 4, track="T")
    assert notes == [("T", 5)]
    assert state.calls == []


def test_a_known_length_is_subtracted_without_the_table() -> None:
    # (no lengths table in the holder: reading it would fail)
    queue, done, _state, _notes = _count_down(10, length=4)
    assert queue == [6]
    assert done[COUNTDOWN_LEFT] == 6


def test_a_constant_path_end_counts_down_by_its_paths_length() -> None:
    queue = [1]
    state = _Osp()
    notes: list[object] = []
    _run(count_down(0, Probe(ProbeOp.COUNT_CONST, 1)),
         {COUNTDOWN: queue, MODULE: state, OBSERVING: True, NOTE: notes.append,
          lengths_name(0): [5, 2]}, {REGISTER: 40, TRACK: None})
    assert queue == [-1]  # path 1 (not the register's 40) is 2 blocks long
    assert state.calls == [(0, 1, None)]
    assert notes == []


# ---------------------------------------------------------------------------
# Noting a call


def _plan_of(source: str, index: int = 2) -> FunctionPlan:
    node = ast.parse(textwrap.dedent(source)).body[0]
    assert isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    return plan_function(build_cfg(node, node.name), index)


class _Blank:
    """A blank track, which the observer fills in when it takes the note."""


class _Entering:
    def __init__(self) -> None:
        self.entered: list[int] = []

    def osp_enter(self, index: int) -> str:
        self.entered.append(index)
        return "entered"


def _callee_and_state(fp: FunctionPlan) -> tuple[dict[str, Any], _Entering, list[Any]]:
    """A module with ``callee()``, whose body is ``note_call(fp)`` and which returns
    its track, its ``@pp_callers`` and its frame; and ``caller(track, register)``,
    instrumented-looking (its code names ``@pp_track`` and ``@pp_r``)."""
    callee = ast.parse("def callee():\n    pass\n").body[0]
    assert isinstance(callee, ast.FunctionDef)
    result = ast.Tuple(elts=[load(TRACK), load(CALLER_LOCALS),
                             ast.Call(func=ast.Name(id="frame_of", ctx=ast.Load()),
                                      args=[const(0)], keywords=[])], ctx=ast.Load())
    callee.body = [*note_call(fp), ast.Return(value=result)]
    caller = ast.parse("def caller(track, register):\n    return callee()\n").body[0]
    assert isinstance(caller, ast.FunctionDef)
    caller.body[:0] = [assign(TRACK, ast.Name(id="track", ctx=ast.Load())),
                       assign(REGISTER, ast.Name(id="register", ctx=ast.Load()))]
    plain = ast.parse("def plain():\n    return callee()\n").body[0]
    state = _Entering()
    notes: list[Any] = []
    names = {MODULE: state, GETFRAME: sys._getframe, GETATTR: getattr, IDENTITY: id,
             NO_LOCALS: {}, TRACK_TYPE: _Blank, NOTE: notes.append}
    module = ast.fix_missing_locations(ast.Module(body=[callee, caller, plain],
                                                  type_ignores=[]))
    holder = types.ModuleType("holder")
    holder.__dict__.update(names)
    namespace: dict[str, Any] = {"frame_of": sys._getframe}
    exec(holders.bind(compile(module, "<note>", "exec"), holder), namespace)
    return namespace, state, notes


def test_a_call_from_a_tracked_caller_is_noted_without_calling_the_runtime() -> None:
    fp = _plan_of("def callee():\n    pass\n", index=2)
    namespace, state, notes = _callee_and_state(fp)
    track, callers, frame = namespace["caller"]("T", 7)
    assert state.entered == []
    assert isinstance(track, _Blank)
    assert callers is None  # no frame's locals kept
    ((noted_track, module, index, frame_id, code, caller_track, lasti, register),) = notes
    assert noted_track is track
    assert module is state
    assert index == 2
    assert frame_id == id(frame)
    assert code is namespace["callee"].__code__
    assert caller_track == "T"
    assert register == 7
    # the caller's place: the call it is making (3.11 may point into the call's
    # inline caches: the instruction is the last one starting at or before it)
    instructions = list(dis.get_instructions(namespace["caller"].__code__))
    current = max((i for i in instructions if i.offset <= lasti), key=lambda i: i.offset)
    assert current.opname.startswith("CALL")


def test_a_call_from_an_untracked_instrumented_caller_calls_the_runtime() -> None:
    fp = _plan_of("def callee():\n    pass\n", index=5)
    namespace, state, notes = _callee_and_state(fp)
    track, callers, _frame = namespace["caller"](None, 7)
    assert state.entered == [5]
    assert track == "entered"
    assert callers is None
    assert notes == []


def test_a_call_from_uninstrumented_code_calls_the_runtime() -> None:
    fp = _plan_of("def callee():\n    pass\n", index=1)
    namespace, state, notes = _callee_and_state(fp)
    track, _callers, _frame = namespace["plain"]()
    assert state.entered == [1]
    assert track == "entered"
    assert notes == []


def test_a_tracked_caller_without_a_register_notes_zero() -> None:
    fp = _plan_of("def callee():\n    pass\n", index=0)
    namespace, _state, notes = _callee_and_state(fp)
    # a caller naming @pp_track but whose register was never set: get(..., 0)
    node = ast.parse("def only_track():\n    return callee()\n").body[0]
    assert isinstance(node, ast.FunctionDef)
    node.body.insert(0, assign(TRACK, const("U")))
    module = ast.fix_missing_locations(ast.Module(body=[node], type_ignores=[]))
    exec(compile(module, "<only>", "exec"), namespace)
    namespace["only_track"]()
    assert notes[-1][5] == "U"
    assert notes[-1][7] == 0


@pytest.mark.parametrize("source", [
    "def callee():\n    yield 1\n",
    "async def callee():\n    pass\n",
    "def __exit__(self, *exc):\n    pass\n",
])
def test_generators_coroutines_and_exits_always_call_the_runtime(source: str) -> None:
    code = note_call(_plan_of(source, index=3))
    assert len(code) == 1
    state = _Entering()
    done = _run(code, {MODULE: state}, {})
    assert state.entered == [3]
    assert done[TRACK] == "entered"


def test_the_callers_snapshot_is_let_go_before_3_13() -> None:
    code = note_call(_plan_of("def callee():\n    pass\n"))
    clears = [s for s in code if isinstance(s, ast.Expr)
              and isinstance(s.value, ast.Call) and isinstance(s.value.func, ast.Attribute)
              and s.value.func.attr == "clear"]
    assert len(clears) == (1 if sys.version_info < (3, 13) else 0)
