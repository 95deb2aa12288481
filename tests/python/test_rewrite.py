"""Unit tests of :mod:`pathprof.python.rewrite`, path and edge mode's function
rewriter: the edits it collects and applies (by priority at one place, from the last
place to the first), and, run, what the probes it puts in count -- each call's paths,
decoded to the lines of their blocks and worked out by hand here: a path per way
through a function, one per loop iteration cut at the header, a path ended by an
exception and the one its handler, ``finally`` or ``with`` starts, ``match`` guards,
returns counted once (early where nothing runs after them); in edge mode, each
edge's count. Also that the rewrite changes nothing the program sees: its results,
its tracebacks' lines, and the line events a tracer gets."""

from __future__ import annotations

import ast
import itertools
import sys
import textwrap
import traceback
import types
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from pathprof import runtime
from pathprof.graph import PathEnd, recover_edge_counts, regenerate, regenerate_prefix
from pathprof.python.cfg import build_cfg, iter_functions
from pathprof.python.instrument import InstrumentedModule, instrument_source
from pathprof.python.names import LOCAL_TABLE, REGISTER
from pathprof.python.nodes import assign, const
from pathprof.python.plan import FunctionPlan, plan_function
from pathprof.python.rewrite import (
    CODE_VERSION,
    FLAG,
    PROBE,
    RESTART,
    RETURN_CODE,
    Edits,
    count_calls,
    uses_local_table,
)
from pathprof.runtime import holder as holders

_keys = itertools.count()


@pytest.fixture
def fresh_runtime(monkeypatch: pytest.MonkeyPatch) -> None:
    """The modules these tests register go to registries of their own."""
    monkeypatch.setattr(runtime, "_modules", [])
    monkeypatch.setattr(runtime, "_subpath_modules", [])


def _load(source: str, **options: Any) -> tuple[InstrumentedModule, dict[str, Any]]:
    number = next(_keys)
    filename = f"<rewrite-{number}>"
    module = instrument_source(textwrap.dedent(source), filename,
                               module_key=f"test_rewrite:{number}", **options)
    namespace: dict[str, Any] = {"__name__": f"pathprof_test_rewrite_{number}"}
    exec(module.compile(filename), namespace)
    return module, namespace


def _entry(module: InstrumentedModule) -> Any:
    (entry,) = [e for e in runtime.take_snapshot() if e[0].key == module.metadata.key]
    return entry


def _lines(fp: FunctionPlan, blocks: tuple[int, ...]) -> tuple[int, ...]:
    """Each block of a path by its first line (entry and exit left out)."""
    found = []
    for block in blocks:
        if block in (fp.cfg.entry, fp.cfg.exit):
            continue
        lines = fp.cfg.blocks[block].lines()
        assert lines is not None
        found.append(lines[0])
    return tuple(found)


def _profile(module: InstrumentedModule, qualname: str = "f", entry: Any = None
             ) -> Counter[tuple[Any, ...]]:
    """What ``qualname`` counted since the last snapshot (or in snapshot ``entry``):
    each path as its blocks' lines and how it ended -- "return", "back" (a
    backedge), "raise" (a raise statement's edge, or cut short inside its last
    block by an exception)."""
    (index,) = [i for i, fp in enumerate(module.functions) if fp.cfg.qualname == qualname]
    fp = module.functions[index]
    entry = entry if entry is not None else _entry(module)
    found: Counter[tuple[Any, ...]] = Counter()
    for number, count in entry[1][index].items():
        path = regenerate(fp.numbering, number)
        if path.end is PathEnd.BACKEDGE:
            end = "back"
        else:
            last = fp.numbering.dag.edges[path.edges[-1]].cfg_edge
            label = fp.cfg.edges[last].label if last is not None else ""
            end = "raise" if label in ("raise", "re-raise") else "return"
        found[(*_lines(fp, path.blocks), end)] += count
    for (block, value), count in entry[2][index].items():
        path = regenerate_prefix(fp.numbering, block, value)
        found[(*_lines(fp, path.blocks), "raise")] += count
    return found


# ---------------------------------------------------------------------------
# Edits


def _named(*names: str) -> list[ast.stmt]:
    return [assign(name, const(0)) for name in names]


def _targets(stmts: list[ast.stmt]) -> list[str]:
    return [s.targets[0].id for s in stmts]  # type: ignore[attr-defined]


def test_edits_go_in_by_priority_then_in_the_order_added() -> None:
    stmts = _named("a", "b")
    edits = Edits()
    edits.add(stmts, 1, _named("probe"), PROBE)
    edits.add(stmts, 1, _named("restart"), RESTART)
    edits.add(stmts, 1, _named("flag1", "flag2"), FLAG)
    edits.add(stmts, 1, _named("return"), RETURN_CODE)
    edits.add(stmts, 1, _named("restart2"), RESTART)
    edits.apply()
    assert _targets(stmts) == ["a", "restart", "restart2", "flag1", "flag2", "probe",
                               "return", "b"]


def test_every_index_means_the_place_it_was_recorded_for() -> None:
    stmts = _named("a", "b", "c")
    other = _named("x")
    edits = Edits()
    edits.add(stmts, 0, _named("before a"), PROBE)
    edits.add(stmts, 3, _named("at the end"), PROBE)
    edits.add(stmts, 2, _named("before c"), PROBE)
    edits.add(other, 0, _named("before x"), PROBE)
    edits.add(stmts, 1, [], PROBE)  # nothing to add: nothing recorded
    edits.apply()
    assert _targets(stmts) == ["before a", "a", "b", "before c", "c", "at the end"]
    assert _targets(other) == ["before x", "x"]
    assert list(edits.inserts) == [id(stmts), id(other)]


def test_the_priorities_are_ordered() -> None:
    assert RESTART < FLAG < PROBE < RETURN_CODE
    assert isinstance(CODE_VERSION, int)


# ---------------------------------------------------------------------------
# Paths counted


def test_each_way_through_a_function_is_one_path(fresh_runtime: None) -> None:
    module, namespace = _load("""\
        def f(x):
            if x:
                y = 1
            else:
                y = 2
            return y
        """)
    f = namespace["f"]
    assert [f(1), f(1), f(0)] == [1, 1, 2]
    assert _profile(module) == {(2, 3, 6, "return"): 2, (2, 5, 6, "return"): 1}


LOOP = """\
def f(items):
    total = 0
    for x in items:
        if x < 0:
            break
        if x == 0:
            continue
        total += x
    return total
"""


def test_a_loop_cuts_a_path_at_each_iteration(fresh_runtime: None) -> None:
    module, namespace = _load(LOOP)
    assert namespace["f"]([1, 0, -1]) == 1
    # the entry's path to the first backedge; from the header, a continue's path
    # back to it, and the break's path to the return
    assert _profile(module) == {(2, 3, 4, 6, 8, "back"): 1, (3, 4, 6, 7, "back"): 1,
                                (3, 4, 5, 9, "return"): 1}
    assert namespace["f"]([]) == 0
    assert namespace["f"]([5, 6]) == 11
    assert _profile(module) == {(2, 3, 9, "return"): 1, (2, 3, 4, 6, 8, "back"): 1,
                                (3, 4, 6, 8, "back"): 1, (3, 9, "return"): 1}


def test_a_loops_table_is_a_local(fresh_runtime: None) -> None:
    module, namespace = _load(LOOP)
    assert module.functions[0].local_table
    assert LOCAL_TABLE in namespace["f"].__code__.co_varnames


def test_an_exception_caught_in_the_function_restarts_at_its_handler(fresh_runtime: None
                                                                    ) -> None:
    module, namespace = _load("""\
        def f(x):
            try:
                if x:
                    raise KeyError
                a = 1
            except KeyError:
                a = 2
            return a
        """)
    assert namespace["f"](1) == 2
    assert _profile(module) == {(3, 4, "raise"): 1, (7, 8, "return"): 1}
    assert namespace["f"](0) == 1
    assert _profile(module) == {(3, 5, 8, "return"): 1}


def test_an_exception_from_a_call_cuts_the_path_inside_its_block(fresh_runtime: None
                                                                ) -> None:
    module, namespace = _load("""\
        def f(x):
            y = 1
            z = y // x
            return z
        """)
    with pytest.raises(ZeroDivisionError):
        namespace["f"](0)
    entry = _entry(module)
    assert _profile(module, entry=entry) == {(2, "raise"): 1}
    assert entry[3] == [1]  # one call ended by an exception


def test_a_finally_is_run_on_each_way_and_dispatches_on_it(fresh_runtime: None) -> None:
    module, namespace = _load("""\
        def f(x, log):
            try:
                if x == 1:
                    return "returned"
                if x == 2:
                    raise KeyError
                a = "fell"
            finally:
                log.append("finally")
            return a
        """)
    log: list[str] = []
    assert namespace["f"](1, log) == "returned"
    assert namespace["f"](0, log) == "fell"
    with pytest.raises(KeyError):
        namespace["f"](2, log)
    assert log == ["finally"] * 3
    assert _profile(module) == {
        (3, 4, 9, "return"): 1,  # the return, through the finally
        (3, 5, 7, 9, 10, "return"): 1,  # falling through it
        (3, 5, 6, "raise"): 1,  # the raise, cut as it enters the finally...
        (9, "raise"): 1,  # ...which starts a path of its own and re-raises
    }


def test_a_with_that_swallows_restarts_after_it(fresh_runtime: None) -> None:
    module, namespace = _load("""\
        class Quiet:
            def __enter__(self):
                return self
            def __exit__(self, *exc):
                return True

        def f(fail):
            with Quiet():
                a = 1
                if fail:
                    raise KeyError
            return a
        """)
    assert namespace["f"](True) == 1
    # the with's body (its entry, a = 1, the test) to the raise; the path after the
    # with (its exit, which swallowed, and the return: one block) starts anew
    assert _profile(module) == {(8, 11, "raise"): 1, (8, "return"): 1}
    assert namespace["f"](False) == 1
    assert _profile(module) == {(8, 8, "return"): 1}


def test_a_guards_outcome_is_counted_where_the_guard_runs(fresh_runtime: None) -> None:
    module, namespace = _load("""\
        def f(v, c):
            match v:
                case 1 if c:
                    r = 1
                case _:
                    r = 2
            return r
        """)
    f = namespace["f"]
    assert [f(1, True), f(1, False), f(2, True)] == [1, 2, 2]
    assert _profile(module) == {(2, 3, 3, 4, 7, "return"): 1,  # the guard true
                                (2, 3, 3, 5, 6, 7, "return"): 1,  # the guard false
                                (2, 3, 5, 6, 7, "return"): 1}  # the pattern fails


def test_a_plain_return_counts_before_its_value_once(fresh_runtime: None) -> None:
    module, namespace = _load("""\
        def f(g):
            return g()
        """)
    calls: list[int] = []

    def g() -> int:
        calls.append(1)
        return 7

    assert namespace["f"](g) == 7
    assert calls == [1]  # the value is computed once
    fp = module.functions[0]
    assert fp.early_returns == {next(b.id for b in fp.cfg.blocks if b.lines() == (2, 2))}
    assert _profile(module) == {(2, "return"): 1}


def test_a_return_inside_a_with_counts_after_its_value(fresh_runtime: None) -> None:
    module, namespace = _load("""\
        class M:
            def __enter__(self):
                return self
            def __exit__(self, *exc):
                return False

        def f(g):
            with M():
                return g()
        """)
    assert namespace["f"](lambda: 3) == 3
    f = next(fp for fp in module.functions if fp.cfg.qualname == "f")
    assert f.early_returns == set()
    assert _profile(module) == {(8, "return"): 1}


def test_a_generator_spans_its_yields_in_one_path(fresh_runtime: None) -> None:
    module, namespace = _load("""\
        def f(x):
            a = yield 1
            if a:
                yield 2
            return 3
        """)
    generator = namespace["f"](0)
    assert next(generator) == 1
    assert generator.send(True) == 2
    with pytest.raises(StopIteration):
        next(generator)
    assert _profile(module) == {(2, 4, 5, "return"): 1}


def _sets_register_on_entry(fp: FunctionPlan) -> bool:
    first = fp.cfg.node.body[fp.cfg.body_start]
    return (isinstance(first, ast.Assign) and isinstance(first.targets[0], ast.Name)
            and first.targets[0].id == REGISTER)


def test_a_function_of_one_path_sets_no_register(fresh_runtime: None) -> None:
    module, namespace = _load("""\
        def f(x):
            return x + 1
        def g(x):
            if x:
                return 1
            return 2
        def h(x):
            if x:
                x = 1
            return x
        """)
    single, constants, joined = module.functions
    # each path counted by a constant: f's one path, g's two returns
    assert not _sets_register_on_entry(single)
    assert not _sets_register_on_entry(constants)
    assert _sets_register_on_entry(joined)  # two ways into one return
    assert [namespace["f"](1), namespace["g"](0), namespace["h"](0)] == [2, 2, 0]
    entry = _entry(module)
    assert _profile(module, "f", entry) == {(2, "return"): 1}
    assert _profile(module, "g", entry) == {(4, 6, "return"): 1}
    assert _profile(module, "h", entry) == {(8, 10, "return"): 1}


# ---------------------------------------------------------------------------
# Edge mode


def test_edge_mode_counts_every_edge(fresh_runtime: None) -> None:
    module, namespace = _load("""\
        def f(x):
            if x:
                y = 1
            else:
                y = 2
            return y
        """, mode="edge")
    f = namespace["f"]
    assert [f(1), f(1), f(0)] == [1, 1, 2]
    fp = module.functions[0]
    assert fp.edge_plan is not None
    slots = _entry(module)[1][0]
    chords = {fp.edge_plan.chords[slot]: count for slot, count in slots.items()}
    counts = recover_edge_counts(fp.edge_plan, chords)
    by_label = Counter()
    for eid, edge in enumerate(fp.cfg.edges):
        by_label[(edge.label, edge.src, edge.dst)] = counts[eid]
    labels = {(label, count) for (label, _s, _d), count in by_label.items()}
    # call 3, true 2, false 1, the two joins 2 and 1, return 3
    assert labels == {("call", 3), ("true", 2), ("false", 1), ("next", 2), ("next", 1),
                      ("return", 3)}


# ---------------------------------------------------------------------------
# Calls only, the local table


def test_calls_only_counts_calls_in_slot_zero(fresh_runtime: None) -> None:
    module, namespace = _load("""\
        def f(x):
            if x:
                return 1
            return 2
        def g():
            yield 1
        """, calls_only=(0, 1))
    assert [namespace["f"](x) for x in (0, 1, 1)] == [2, 1, 1]
    generator = namespace["g"]()
    assert _entry(module)[1] == [{0: 3}, {}]  # a generator counts as its body starts
    assert list(generator) == [1]
    assert _entry(module)[1] == [{}, {0: 1}]


def test_count_calls_goes_after_the_docstring_at_the_first_statement() -> None:
    tree = ast.parse("def f():\n    'doc'\n\n    x = 1\n")
    node, qualname = next(iter_functions(tree))
    fp = plan_function(build_cfg(node, qualname), 3)
    count_calls(fp)
    assert fp.calls_only
    counting = node.body[1]
    assert ast.unparse(counting).endswith("._@pp_c3[0] += 1")
    assert (counting.lineno, counting.col_offset, counting.end_col_offset) == (4, 4, 4)


def _plan(source: str) -> FunctionPlan:
    node, qualname = next(iter_functions(ast.parse(textwrap.dedent(source))))
    return plan_function(build_cfg(node, qualname))


def test_a_function_with_a_loop_uses_a_local_table() -> None:
    assert uses_local_table(_plan("def f(n):\n    while n:\n        n -= 1\n"))
    assert not uses_local_table(_plan("def f(n):\n    return n\n"))


@pytest.mark.parametrize("option", ["subpaths", "calls_only"])
def test_no_local_table_without_path_counts(option: str) -> None:
    fp = _plan("def f(n):\n    while n:\n        n -= 1\n")
    setattr(fp, option, True)
    assert not uses_local_table(fp)


def test_no_local_table_where_the_function_reaches_its_frame() -> None:
    fp = _plan("import sys\ndef f(n):\n    while n:\n        n = sys._getframe()\n")
    assert not uses_local_table(fp)


# ---------------------------------------------------------------------------
# What the program sees


PROGRAM = """\
class Quiet:
    def __enter__(self):
        return self
    def __exit__(self, *exc):
        return exc[0] is KeyError

def f(n, log):
    total = 0
    for i in range(n):
        try:
            if i == 1:
                continue
            with Quiet():
                if i == 2:
                    raise KeyError
                total += i
        finally:
            log.append(i)
    while total > 3:
        total -= 2
    match total:
        case 3 if n:
            return "three"
        case _:
            pass
    if n == 5:
        raise ValueError(total)
    return total
"""


def _plain(source: str) -> dict[str, Any]:
    namespace: dict[str, Any] = {"__name__": "pathprof_test_rewrite_plain"}
    exec(compile(source, "<plain>", "exec"), namespace)
    return namespace


def _lines_traced(function: Callable[..., Any], *args: Any) -> list[tuple[str, int]]:
    """The line events ``function`` gives a tracer, as (function name, offset from
    its first line)."""
    events: list[tuple[str, int]] = []

    def tracer(frame: types.FrameType, event: str, arg: Any) -> Any:
        if event == "line" and frame.f_code.co_filename.startswith(("<rewrite", "<plain")):
            events.append((frame.f_code.co_name,
                           frame.f_lineno - frame.f_code.co_firstlineno))
        return tracer

    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        function(*args)
    except ValueError:
        pass
    finally:
        sys.settrace(previous)
    return events


@pytest.mark.parametrize("n", [0, 1, 3, 4, 5])
def test_the_program_sees_what_it_would_without_pathprof(fresh_runtime: None, n: int
                                                         ) -> None:
    plain = _plain(PROGRAM)
    _module, measured = _load(PROGRAM)
    plain_log: list[int] = []
    measured_log: list[int] = []
    try:
        expected: Any = plain["f"](n, plain_log)
    except ValueError as error:
        expected = ("raised", error.args, traceback.extract_tb(error.__traceback__)[-1].lineno)
    try:
        result: Any = measured["f"](n, measured_log)
    except ValueError as error:
        result = ("raised", error.args, traceback.extract_tb(error.__traceback__)[-1].lineno)
    assert result == expected
    assert measured_log == plain_log
    traced = _lines_traced(plain["f"], n, [])
    assert len(traced) >= 5
    assert _lines_traced(measured["f"], n, []) == traced


def test_names_and_first_lines_are_the_programs(fresh_runtime: None) -> None:
    plain = _plain(PROGRAM)
    _module, measured = _load(PROGRAM)
    for name in ("f", "Quiet"):
        obj = measured[name]
        code = obj.__code__ if name == "f" else obj.__exit__.__code__
        original = plain[name].__code__ if name == "f" else plain[name].__exit__.__code__
        assert (code.co_qualname, code.co_firstlineno) == (original.co_qualname,
                                                           original.co_firstlineno)


def test_the_holder_is_the_only_place_of_pathprofs_names(fresh_runtime: None) -> None:
    _module, namespace = _load(PROGRAM)
    assert not [k for k in namespace if "@" in k]
    names = holders.names_of(namespace["f"].__code__)
    assert names is not None
    assert "_@pp_c1" in names
