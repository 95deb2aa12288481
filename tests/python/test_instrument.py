"""Unit tests of :mod:`pathprof.python.instrument`, the one entry point of the Python
front end: which options it takes and refuses, the metadata it writes of every
function (names, lines, the CFG as plain data, path counts, how returns count), the
prologue it puts after a module's docstring and ``from __future__`` imports, the
functions it leaves as written (too many paths to write), the switches and swaps of
coverage that stops paying, the names it hides from ``locals()``, ``vars()`` and
``dir()``, event mode's module, and the compiled module (bound to a holder of its
own; its prologue alone). Instrumented modules are compiled and run in memory, and
their counts checked by hand."""

from __future__ import annotations

import ast
import itertools
import sys
import textwrap
import types
from typing import Any

import pytest

from pathprof import runtime
from pathprof.contract import Role
from pathprof.graph import recover_edge_counts
from pathprof.hashing import source_hash
from pathprof.python.instrument import (
    InstrumentedModule,
    instrument_source,
    planned_metadata,
)
from pathprof.python.names import PLACEHOLDER
from pathprof.python.nodes import PROBE_MARK_LINE, UNLOCATED
from pathprof.runtime import events as eventrt
from pathprof.runtime import holder as holders
from pathprof.runtime import instrumented as instrumented_runtime

_keys = itertools.count()


@pytest.fixture
def fresh_runtime(monkeypatch: pytest.MonkeyPatch) -> None:
    """The modules these tests register go to registries of their own."""
    monkeypatch.setattr(runtime, "_modules", [])
    monkeypatch.setattr(runtime, "_subpath_modules", [])
    monkeypatch.setattr(runtime, "_said_unmeasured", set())
    monkeypatch.setattr(eventrt, "_modules", [])
    outside: dict[int, dict[str, object]] = {}  # registers of frames that keep them outside
    monkeypatch.setattr(instrumented_runtime, "outside_registers", outside)
    monkeypatch.setattr(instrumented_runtime.InstrumentedModule, "_outside", outside)


def _instrument(source: str, **options: Any) -> InstrumentedModule:
    number = next(_keys)
    options.setdefault("module_key", f"test_instrument:{number}")
    return instrument_source(textwrap.dedent(source), f"<instrument-{number}>", **options)


def _run(module: InstrumentedModule) -> dict[str, Any]:
    namespace: dict[str, Any] = {"__name__": "pathprof_test_instrument"}
    exec(module.compile(module.metadata.file), namespace)
    return namespace


def _paths(module: InstrumentedModule) -> list[dict[int, int]]:
    (entry,) = [e for e in runtime.take_snapshot() if e[0].key == module.metadata.key]
    return entry[1]


FUNCTIONS = """\
import functools

def f(x):
    if x:
        return 1
    return 2

class C:
    @functools.lru_cache
    def m(self):
        def inner():
            return 3
        return inner()

async def coroutine():
    return 4
"""


# ---------------------------------------------------------------------------
# Options


def test_source_that_does_not_parse_fails_as_python_would() -> None:
    with pytest.raises(SyntaxError):
        instrument_source("def f(:\n", "bad.py")
    with pytest.raises(SyntaxError):
        instrument_source("def f(:\n", "bad.py", mode="events")


@pytest.mark.parametrize(("options", "message"), [
    ({"mode": "blocks"}, "unknown instrumentation mode 'blocks'"),
    ({"metric": "memory"}, "unknown metric 'memory'"),
    ({"metric": "time", "mode": "edge"}, "the time metric needs path mode"),
    ({"subpaths": True, "mode": "edge"}, "subpath sampling needs path mode"),
    ({"subpaths": True, "calls_only": (0,)}, "subpath sampling needs path mode"),
    ({"conditions": True, "metric": "time"}, "conditions are measured in path mode"),
    ({"conditions": True, "subpaths": True}, "conditions are measured in path mode"),
    ({"conditions": True, "mode": "edge"}, "conditions are measured in path mode"),
    ({"mode": "events", "placement": "edges"}, "unknown event placement 'edges'"),
    ({"mode": "events", "events": "lines"}, "unknown event kind 'lines'"),
])
def test_options_that_do_not_go_together_are_refused(options: dict[str, Any],
                                                     message: str) -> None:
    with pytest.raises(ValueError, match=message):
        instrument_source("def f():\n    pass\n", "m.py", **options)


# ---------------------------------------------------------------------------
# Metadata


def test_every_function_is_described_outer_before_inner() -> None:
    module = _instrument(FUNCTIONS)
    functions = module.metadata.functions
    assert [f.qualname for f in functions] == ["f", "C.m", "C.m.<locals>.inner", "coroutine"]
    f, m, inner, _coroutine = functions
    assert (f.first_line, f.last_line, f.code_line) == (3, 6, 3)
    assert (m.first_line, m.last_line, m.code_line) == (10, 13, 9)  # its decorator's line
    assert (inner.first_line, inner.last_line) == (11, 12)
    assert [fn.is_async for fn in functions] == [False, False, False, True]
    assert [fn.num_paths for fn in functions] == [2, 1, 1, 1]
    assert {fn.mode for fn in functions} == {"path"}
    assert {fn.counter for fn in functions} == {"array"}
    assert [fp.index for fp in module.functions] == [0, 1, 2, 3]


def test_the_module_key_names_the_file_and_its_source() -> None:
    source = "def f():\n    pass\n"
    module = instrument_source(source, "m.py")
    assert module.metadata.key == f"m.py:{source_hash(source)}"
    assert module.metadata.file == "m.py"
    assert instrument_source(source, "m.py", module_key="mine").metadata.key == "mine"


def test_paths_multiply_with_independent_branches() -> None:
    module = _instrument("""\
        def f(a, b, c):
            if a:
                x = 1
            if b:
                x = 2
            if c:
                x = 3
            return x
        """)
    assert module.metadata.functions[0].num_paths == 8


def test_blocks_pieces_and_edges_are_described() -> None:
    module = _instrument("""\
        def f(items):
            for x in items:
                if x:
                    break
                if not x:
                    continue
            try:
                raise KeyError
            except KeyError:
                raise
            return x
        """)
    (info,) = module.metadata.functions
    flags = {(piece.line, piece.flags) for block in info.blocks for piece in block.pieces
             if piece.flags}
    assert flags == {(4, "break"), (6, "continue"), (8, "raise"), (10, "reraise"),
                     (11, "return")}
    assert [block.kind for block in info.blocks[:2]] == ["entry", "exit"]
    assert (info.entry, info.exit) == (0, 1)
    roles = {piece.role for block in info.blocks for piece in block.pieces}
    assert {Role.FOR_ITER.value, Role.FOR_NEXT.value, Role.TEST.value,
            Role.STMT.value} <= roles
    handler = next(i for i, b in enumerate(info.blocks) if b.kind == "handler")
    assert [(r.block, r.kind) for r in info.restarts] == [(handler, "handler")]
    assert len(info.backedges) == 2  # the continue's, and the loop body's end


def test_for_and_with_statements_are_described_as_compounds() -> None:
    module = _instrument("""\
        def f(items, m):
            for x in items:
                pass
            with m as n:
                pass
        """)
    (info,) = module.metadata.functions
    kinds = {c.kind: c for c in info.compounds}
    assert set(kinds) == {"for", "with"}
    loop, with_ = kinds["for"], kinds["with"]
    assert (loop.span.line, loop.span.end_line) == (2, 3)
    assert loop.iter is not None
    assert (loop.iter.line, loop.iter.col) == (2, 13)  # ``items``
    assert loop.for_iter is not None
    assert loop.for_next is not None
    assert Role.FOR_NEXT.value in [p.role for p in info.blocks[loop.for_next].pieces]
    assert with_.header is not None
    assert (with_.header.line, with_.header.end_col) == (4, 15)  # ``with m as n``
    assert with_.with_enter is not None
    assert with_.with_exit is not None
    assert not loop.is_async
    assert not with_.is_async


def test_code_after_a_return_is_unreachable() -> None:
    module = _instrument("def f():\n    return 1\n    x = 2\n")
    (info,) = module.metadata.functions
    (dead,) = info.unreachable
    assert info.blocks[dead].pieces[0].line == 3


def test_returns_say_how_they_counted_their_path() -> None:
    module = _instrument("""\
        def f(x):
            if x:
                return g()
            return 2
        """)
    (info,) = module.metadata.functions
    blocks = {i: b.pieces[0].line for i, b in enumerate(info.blocks) if b.pieces}
    assert {blocks[b] for b in info.returns} == {3, 4}
    assert {r.op for r in info.returns.values()} <= {"COUNT", "COUNT_CONST"}
    # both return from the function with nothing after them: counted early
    assert {blocks[b] for b in info.early_returns} == {3, 4}


def test_planned_metadata_is_the_instrumented_ones_without_early_returns() -> None:
    source = textwrap.dedent(FUNCTIONS)
    written = instrument_source(source, "m.py").metadata
    planned = planned_metadata(source, "m.py")
    assert planned.key == written.key == f"m.py:{source_hash(source)}"
    assert len(planned.functions) == len(written.functions) == 4
    for plan, made in zip(planned.functions, written.functions, strict=True):
        assert plan.early_returns == frozenset()
        assert plan.blocks == made.blocks
        assert plan.edges == made.edges
        assert plan.num_paths == made.num_paths
        assert plan.returns == made.returns
        assert plan.query == made.query
    with pytest.raises(SyntaxError):
        planned_metadata("def (:\n", "bad.py")


# ---------------------------------------------------------------------------
# The module


def test_the_prologue_goes_after_the_docstring_and_future_imports(fresh_runtime: None
                                                                 ) -> None:
    module = _instrument('''\
        """The module's docstring."""
        from __future__ import annotations

        def f(x: Undefined) -> int:
            return 1
        ''')
    namespace = _run(module)
    assert namespace["__doc__"] == "The module's docstring."
    assert namespace["f"].__annotations__ == {"x": "Undefined", "return": "int"}
    body = module.tree.body
    assert isinstance(body[1], ast.ImportFrom)
    assert body[2] is module.prologue[0]
    assert namespace["f"](0) == 1
    assert _paths(module) == [{0: 1}]


def test_an_empty_module_gets_a_prologue_too(fresh_runtime: None) -> None:
    module = _instrument("")
    assert module.functions == []
    _run(module)
    assert [s.key for s in runtime.modules()] == [module.metadata.key]


def test_the_compiled_module_is_bound_to_a_holder_of_its_own(fresh_runtime: None) -> None:
    module = _instrument("def f(x):\n    if x:\n        return 1\n    return 2\n")
    unbound = module.compile_unbound(module.metadata.file)
    assert PLACEHOLDER in _constants(unbound)
    first, second = module.compile("m"), module.compile("m")
    assert PLACEHOLDER not in _constants(first)
    one, two = holders.names_of(first), holders.names_of(second)
    assert one is not None
    assert two is not None
    assert one is not two
    assert one["_@pp_rt"] is runtime
    bound = module.bind((unbound, unbound))
    assert isinstance(bound, tuple)
    assert holders.names_of(bound[0]) is holders.names_of(bound[1])


def _constants(code: types.CodeType) -> list[object]:
    found = list(code.co_consts)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found += _constants(const)
    return found


def test_the_prologue_alone_registers_the_module(fresh_runtime: None) -> None:
    module = _instrument("def f(x):\n    return x\n")
    code = module.bind(module.compile_prologue(module.metadata.file))
    namespace: dict[str, Any] = {"__name__": "prologue_only"}
    exec(code, namespace)
    (state,) = runtime.modules()
    assert state.key == module.metadata.key
    assert "f" not in namespace


def test_a_build_that_marks_probes_leaves_no_code_unlocated() -> None:
    module = _instrument(FUNCTIONS, mark_probes=True)
    lines = {getattr(n, "lineno", None) for n in ast.walk(module.tree)}
    assert UNLOCATED not in lines
    assert PROBE_MARK_LINE in lines
    production = _instrument(FUNCTIONS)
    assert PROBE_MARK_LINE not in {getattr(n, "lineno", None) for n in ast.walk(production.tree)}


# ---------------------------------------------------------------------------
# Options at work


def test_calls_only_counts_calls_in_one_slot(fresh_runtime: None) -> None:
    module = _instrument("def f(x):\n    if x:\n        return 1\n    return 2\n",
                         calls_only=(0,))
    assert module.functions[0].table_size == 1
    assert module.metadata.functions[0].calls_only
    namespace = _run(module)
    assert [namespace["f"](x) for x in (0, 1, 1)] == [2, 1, 1]
    assert _paths(module) == [{0: 3}]


def test_edge_mode_describes_its_counters(fresh_runtime: None) -> None:
    module = _instrument("def f(x):\n    if x:\n        x = 1\n    return x\n", mode="edge")
    (info,) = module.metadata.functions
    assert info.mode == "edge"
    assert info.edge_counters is not None
    assert module.functions[0].edge_plan is not None
    assert info.edge_counters.chords == module.functions[0].edge_plan.chords
    assert module.functions[0].table_size == len(info.edge_counters.chords)
    namespace = _run(module)
    namespace["f"](0)
    namespace["f"](1)
    namespace["f"](1)
    plan = module.functions[0].edge_plan
    slots = _paths(module)[0]
    counts = recover_edge_counts(plan, {plan.chords[s]: c for s, c in slots.items()})
    by_label = {e.label: counts[i] for i, e in enumerate(info.edges) if e.label != "next"}
    assert by_label == {"call": 3, "true": 2, "false": 1, "return": 3}


def test_the_time_metric_keeps_the_counts(fresh_runtime: None,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    ticks = itertools.count()
    monkeypatch.setattr(runtime, "clock", lambda: next(ticks))
    module = _instrument("def f(x):\n    if x:\n        return 1\n    return 2\n",
                         metric="time")
    assert all(fp.timed for fp in module.functions)
    namespace = _run(module)
    for x in (0, 1, 1):
        namespace["f"](x)
    (entry,) = runtime.take_snapshot()
    assert sorted(entry[1][0].values()) == [1, 2]
    # one tick from the path's start to its end, per call
    assert entry[5][0] == entry[1][0]


def test_subpath_sampling_counts_each_paths_blocks_down(fresh_runtime: None,
                                                        monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    countdown = [1000]
    monkeypatch.setattr(runtime, "countdown", countdown)
    monkeypatch.setattr(runtime, "longest_path", 0)
    module = _instrument("""\
        def f(x):
            y = 0
            if x:
                y = 1
            return y
        """, subpaths=True)
    # the one block of ``y = 0`` and the test, the branch, the return: 3 or 2 blocks
    assert sorted(module.functions[0].path_lengths or ()) == [2, 3]
    namespace = _run(module)
    namespace["f"](1)
    namespace["f"](0)
    assert countdown == [1000 - 3 - 2]
    assert _paths(module) == [{}]  # OSP counts no paths


def test_shares_plan_a_copys_part(fresh_runtime: None) -> None:
    source = "def f(x):\n    if x:\n        x = 1\n    return x\n"
    whole = _instrument(source)
    edges = len(whole.functions[0].numbering.dag.edges)
    module = _instrument(source, shares={0: ([list(range(edges))], [0], 0)})
    share = module.metadata.functions[0].share
    assert share is not None
    assert share.copies == (0,)
    assert share.index == 0
    assert share.tasks == (tuple(range(edges)),)


def test_a_function_whose_path_numbers_cannot_be_written_is_left_as_written(
        fresh_runtime: None, capsys: pytest.CaptureFixture[str]) -> None:
    ifs = "    if x:\n        x += 1\n" * 2130  # 2**2130 paths
    source = (f"def big(x):\n{ifs}    return x\n\n"
              "def small(x):\n    if x:\n        return 1\n    return 2\n")
    original = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(640)  # 2**2130 has 642 digits
    try:
        module = _instrument(source)
    finally:
        sys.set_int_max_str_digits(original)
    assert [f.qualname for f in module.metadata.functions] == ["small"]
    assert [fp.index for fp in module.functions] == [0]
    namespace = _run(module)
    assert namespace["big"](1) == 2131
    assert not [n for n in namespace["big"].__code__.co_varnames if "@" in n]
    assert namespace["small"](1) == 1
    assert _paths(module) == [{0: 1}]  # small's first path: its true branch
    assert "big has about 2**2130 paths" in capsys.readouterr().err


def test_switches_swap_what_goes_back_by_its_code(fresh_runtime: None) -> None:
    source = """\
        def f(x):
            return x
        def outer():
            def inner():
                return 1
            return inner
        """
    module = _instrument(source, switches=True)
    assert module.swaps == (0,)  # f; outer defines a function; inner is nested
    assert [fp.switch for fp in module.functions] == [True, False, True]
    namespace = _run(module)
    names = holders.names_of(namespace["f"].__code__)
    assert names is not None
    assert names.get("_@pp_i2") is True  # inner carries its original body
    assert "_@pp_i0" not in names
    unswapped = _instrument(source, switches=True, swaps=False)
    assert unswapped.swaps == ()
    names = holders.names_of(_run(unswapped)["f"].__code__)
    assert names is not None
    assert names.get("_@pp_i0") is True
    assert names.get("_@pp_i2") is True


# ---------------------------------------------------------------------------
# Names the program could see


VIEWS = """\
def f(x):
    if x:
        y = 1
    return sorted(locals()), sorted(vars()), sorted(dir())

def g(x):
    locals = lambda: {"mine": 1}
    if x:
        x = 2
    return locals()
"""


@pytest.mark.parametrize("options", [{}, {"registers_outside": True}, {"mode": "edge"},
                                     {"mode": "events"}])
def test_the_program_sees_its_own_names_only(fresh_runtime: None,
                                             options: dict[str, Any]) -> None:
    namespace = _run(_instrument(VIEWS, **options))
    assert namespace["f"](1) == (["x", "y"], ["x", "y"], ["x", "y"])
    assert namespace["f"](0) == (["x"], ["x"], ["x"])
    assert namespace["g"](1) == {"mine": 1}  # a name the program bound: left alone


def test_registers_outside_leave_the_frame_without_pathprofs_locals(fresh_runtime: None
                                                                    ) -> None:
    module = _instrument("""\
        def f(items):
            total = 0
            for x in items:
                if x:
                    total += x
            return total
        """, registers_outside=True)
    assert len(module.registers_moved) == 1
    namespace = _run(module)
    assert not [n for n in namespace["f"].__code__.co_varnames if "@" in n]
    assert namespace["f"]([1, 0, 2]) == 3
    # the entry's path, two from the header to a backedge, the exit's
    assert sum(_paths(module)[0].values()) == 4


def test_a_function_reaching_its_frame_keeps_its_registers_outside() -> None:
    module = _instrument("""\
        import sys
        def f():
            return sys._getframe()
        def g():
            return 1
        """)
    assert [m.function.name for m in module.registers_moved] == ["f"]


# ---------------------------------------------------------------------------
# Event mode


def test_event_mode_writes_event_tables_and_runs_on_the_events_runtime(fresh_runtime: None
                                                                       ) -> None:
    module = _instrument("def f(x):\n    y = x\n    return y\n", mode="events",
                         events="instructions", totals_only=True)
    assert module.runtime == "pathprof.runtime.events"
    assert module.metadata.events == "instructions"
    assert module.metadata.totals_only
    (info,) = module.metadata.functions
    assert info.mode == "events"
    assert info.events is not None
    assert info.events.kind == "instructions"
    namespace = _run(module)
    holder = holders.names_of(namespace["f"].__code__)
    assert holder is not None
    assert holder["_@pp_rt"] is eventrt
    assert [s.key for s in eventrt.modules()] == [module.metadata.key]
