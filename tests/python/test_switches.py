"""Unit tests of :mod:`pathprof.python.switches`, coverage that stops paying: which
functions can carry their original body beside the measured one
(:func:`can_switch`) and which go back by their ``__code__`` instead
(:func:`can_swap`), the copy of the body as written (no ``global`` or ``nonlocal``),
the loops that can go back to their original body (:func:`plan_loop_switches`), and,
run, what the switches do: a function switched off runs its own statements and
counts nothing, a call that began measured ends measured, a loop switched over counts
its first iteration and its exit and nothing in between, and with conditions measured
a function past its paths still counts its decisions' vectors."""

from __future__ import annotations

import ast
import itertools
import textwrap
from typing import Any

import pytest

from pathprof import runtime
from pathprof.graph.copyplan import CopyShare
from pathprof.python.cfg import build_cfg, iter_functions
from pathprof.python.instrument import InstrumentedModule, instrument_source
from pathprof.python.plan import FunctionPlan, plan_edge_function, plan_function
from pathprof.python.switches import (
    can_swap,
    can_switch,
    original_body,
    plan_loop_switches,
)
from pathprof.runtime import holder as holders

_keys = itertools.count()


@pytest.fixture
def fresh_runtime(monkeypatch: pytest.MonkeyPatch) -> None:
    """The modules these tests register go to registries of their own."""
    monkeypatch.setattr(runtime, "_modules", [])
    monkeypatch.setattr(runtime, "_subpath_modules", [])


def _plan(source: str, name: str | None = None) -> FunctionPlan:
    tree = ast.parse(textwrap.dedent(source))
    for i, (node, qualname) in enumerate(iter_functions(tree)):
        if name is None or qualname == name:
            return plan_function(build_cfg(node, qualname), i)
    raise LookupError(name)


def _load(source: str, **options: Any) -> tuple[InstrumentedModule, dict[str, Any]]:
    number = next(_keys)
    filename = f"<switches-{number}>"
    module = instrument_source(textwrap.dedent(source), filename,
                               module_key=f"test_switches:{number}", **options)
    namespace: dict[str, Any] = {"__name__": f"pathprof_test_switches_{number}"}
    exec(module.compile(filename), namespace)
    return module, namespace


def _snapshot(module: InstrumentedModule) -> tuple[list[dict[int, int]],
                                                    list[dict[Any, int]]]:
    """The path counts and vector counts of ``module``'s functions since the last
    snapshot."""
    (entry,) = [e for e in runtime.take_snapshot() if e[0].key == module.metadata.key]
    return entry[1], entry[7]


def _paths(module: InstrumentedModule, index: int = 0) -> dict[int, int]:
    return _snapshot(module)[0][index]


# ---------------------------------------------------------------------------
# can_switch, can_swap


def test_a_plain_function_can_switch() -> None:
    assert can_switch(_plan("def f(x):\n    if x:\n        return 1\n    return 2\n"))


def test_a_return_beside_a_with_is_fine() -> None:
    assert can_switch(_plan("def f(m):\n    with m:\n        x = 1\n    return x\n"))


@pytest.mark.parametrize("source", [
    "def f():\n    'only a docstring'\n",
    "def f():\n    def g():\n        pass\n    return g\n",
    "def f():\n    if x:\n        class K:\n            pass\n",
    "def f(m):\n    with m:\n        return 1\n",
    "def f(m):\n    with m:\n        if m:\n            return 1\n",
])
def test_what_cannot_carry_its_original_body(source: str) -> None:
    assert not can_switch(_plan(source))


@pytest.mark.parametrize("option", ["calls_only", "subpaths", "timed"])
def test_options_that_rule_a_switch_out(option: str) -> None:
    fp = _plan("def f(x):\n    return x\n")
    setattr(fp, option, True)
    assert not can_switch(fp)


def test_edge_mode_and_shares_rule_a_switch_out() -> None:
    source = "def f(x):\n    return x\n"
    node = ast.parse(source).body[0]
    assert isinstance(node, ast.FunctionDef)
    assert not can_switch(plan_edge_function(build_cfg(node, "f")))
    fp = _plan(source)
    fp.share = CopyShare(fp.numbering, (frozenset(range(len(fp.numbering.dag.edges))),),
                         (0,), 0)
    assert not can_switch(fp)


@pytest.mark.parametrize(("qualname", "swaps"), [
    ("f", True), ("C.m", True), ("C.D.m", True),
    ("f.<locals>.g", False), ("<lambda>", False), ("C.m.<locals>.<lambda>", False),
])
def test_only_functions_found_by_qualified_name_go_back_by_their_code(
        qualname: str, swaps: bool) -> None:
    fp = _plan("def f():\n    return 1\n")
    fp.cfg.qualname = qualname
    assert can_swap(fp) is swaps


# ---------------------------------------------------------------------------
# original_body


def test_the_original_body_is_a_copy_after_the_docstring() -> None:
    fp = _plan("def f(x):\n    'doc'\n    y = x + 1\n    return y\n")
    copy = original_body(fp)
    assert [ast.unparse(s) for s in copy] == ["y = x + 1", "return y"]
    assert copy[0] is not fp.cfg.node.body[1]
    assert ast.dump(copy[0], include_attributes=True) == ast.dump(
        fp.cfg.node.body[1], include_attributes=True)


def test_the_original_body_declares_nothing() -> None:
    fp = _plan("""\
        def f():
            global g
            g = 1
            if g:
                free = 2
            def inner():
                nonlocal free
            for i in r:
                global h
        """)
    copy = original_body(fp)
    text = ast.unparse(ast.Module(body=copy, type_ignores=[]))
    assert "global" not in text
    assert "nonlocal" not in text
    loop = copy[-1]
    assert isinstance(loop, ast.For)
    (placeholder,) = loop.body  # a list left empty holds a pass
    assert isinstance(placeholder, ast.Pass)
    # the function's own declarations are still in its measured body
    assert isinstance(fp.cfg.node.body[0], ast.Global)


# ---------------------------------------------------------------------------
# plan_loop_switches


def test_each_loop_outside_a_cleanup_can_switch() -> None:
    fp = _plan("""\
        def f(items, n):
            for x in items:
                n += x
            while n:
                n -= 1
            try:
                while n:
                    n -= 1
            except ValueError:
                pass
            return n
        """)
    loops = plan_loop_switches(fp)
    assert [(type(loop.node).__name__, loop.ordinal, loop.node.lineno) for loop in loops] == [
        ("For", 0, 2), ("While", 1, 4), ("While", 2, 7)]
    dag = fp.numbering.dag
    for loop in loops:
        # its path after a backedge starts at its header with the start's value
        assert dag.edges[loop.start_edge].dst == loop.header
        assert fp.plan.probes[loop.start_edge].value == loop.start_value
        assert dag.edges[loop.body_edge].src == loop.header
        assert ast.dump(ast.Module(body=loop.original, type_ignores=[])) == ast.dump(
            ast.Module(body=loop.node.body, type_ignores=[]))
        assert loop.original[0] is not loop.node.body[0]


@pytest.mark.parametrize("source", [
    "def f(m, n):\n    with m:\n        while n:\n            n -= 1\n",
    "def f(n):\n    try:\n        while n:\n            n -= 1\n    finally:\n        pass\n",
    ("def f(m, n):\n    while n:\n        with m:\n            break\n"),
    ("def f(n):\n    while n:\n        try:\n            break\n        finally:\n"
     "            n = 0\n"),
])
def test_loops_whose_exits_pass_cleanups_cannot_switch(source: str) -> None:
    assert plan_loop_switches(_plan(source)) == []


def test_a_loop_with_a_handler_inside_lists_the_handlers_start() -> None:
    fp = _plan("""\
        def f(n):
            while n:
                try:
                    n -= 1
                except ValueError:
                    n = 0
            return n
        """)
    (loop,) = plan_loop_switches(fp)
    handler = next(b.id for b in fp.cfg.blocks if b.kind == "handler")
    assert loop.inner_starts == (fp.numbering.dag.restart_edges[handler],)


def test_an_inner_loops_header_is_a_path_start_inside_the_outer_loop() -> None:
    fp = _plan("""\
        def f(n, m):
            while n:
                n -= 1
                while m:
                    m -= 1
            return n
        """)
    outer, inner = plan_loop_switches(fp)
    assert outer.node.lineno == 2
    assert inner.node.lineno == 4
    assert inner.start_edge in outer.inner_starts
    assert outer.start_edge not in inner.inner_starts


# ---------------------------------------------------------------------------
# Running: a function's switch


COUNTING = """\
def f(n):
    t = 0
    while n:
        n -= 1
        if n % 2:
            t += 1
    return t
"""


def test_a_switched_off_function_counts_nothing_and_does_the_same(fresh_runtime: None
                                                                 ) -> None:
    module, namespace = _load(COUNTING, switches=True, swaps=False)
    assert module.swaps == ()
    assert module.functions[0].switch
    f = namespace["f"]
    assert f(5) == 2
    # n = 4 (even), 3 (odd), 2, 1, 0, then out: 5 iterations and the exit
    assert sum(_paths(module).values()) == 6
    names = holders.names_of(f.__code__)
    assert names is not None
    names["_@pp_i0"] = False
    assert f(5) == 2
    assert _paths(module) == {}


def test_a_call_that_began_measured_ends_measured(fresh_runtime: None) -> None:
    module, namespace = _load("""\
        def f(flip):
            flip()
            if flip:
                return 1
            return 2
        """, switches=True, swaps=False)
    f = namespace["f"]
    names = holders.names_of(f.__code__)
    assert names is not None

    def flip() -> None:
        names["_@pp_i0"] = False

    assert f(flip) == 1
    assert sum(_paths(module).values()) == 1  # the whole call, counted
    assert f(flip) == 1
    assert _paths(module) == {}


def test_module_functions_and_methods_go_back_by_their_code(fresh_runtime: None) -> None:
    module, _namespace = _load("""\
        def f():
            return 1
        class C:
            def m(self):
                return 2
        def outer():
            def inner():
                return 3
            return inner
        """, switches=True)
    # f and C.m swap; outer defines a function (no switch), inner is nested
    qualnames = [fp.cfg.qualname for fp in module.functions]
    assert [qualnames[i] for i in module.swaps] == ["f", "C.m"]
    switched = [fp.cfg.qualname for fp in module.functions if fp.switch]
    assert switched == ["f", "C.m", "outer.<locals>.inner"]


# ---------------------------------------------------------------------------
# Running: a loop's switch


def _loop_counts(source: str, calls: list[int], *, switch_loop: bool,
                 mark_probes: bool = False) -> tuple[list[int], dict[int, int], Any]:
    module, namespace = _load(source, switches=True, swaps=False, mark_probes=mark_probes)
    f = namespace["f"]
    names = holders.names_of(f.__code__)
    assert names is not None
    names["_@pp_j0_0"] = switch_loop
    results = [f(n) for n in calls]
    return results, _paths(module), module.functions[0]


def test_a_switched_loop_counts_its_first_iteration_and_its_exit(fresh_runtime: None
                                                                 ) -> None:
    measured, counts, fp = _loop_counts(COUNTING, [5], switch_loop=False)
    switched, switched_counts, _ = _loop_counts(COUNTING, [5], switch_loop=True)
    assert measured == switched == [2]
    (loop,) = fp.loop_switches
    ((first, count),) = loop.hidden_paths(fp.numbering)
    hidden = set(range(first, first + count))
    # measured: 1 path from the entry, 4 body paths after backedges, 1 exit path
    assert sum(counts.values()) == 6
    assert sum(c for p, c in counts.items() if p in hidden) == 4
    # switched: the first iteration's path and the exit, as the measured run had them
    assert sum(switched_counts.values()) == 2
    assert not hidden & set(switched_counts)
    assert {p: c for p, c in counts.items() if p not in hidden} == switched_counts


def test_a_loop_whose_test_spans_lines_restores_its_register_without_a_jump(
        fresh_runtime: None) -> None:
    source = COUNTING.replace("    while n:\n", "    while (n and\n           n > -1):\n")
    _, counts, fp = _loop_counts(source, [5, 0], switch_loop=False)
    results, switched_counts, _ = _loop_counts(source, [5, 0], switch_loop=True)
    assert results == [2, 0]
    (loop,) = fp.loop_switches
    ((first, count),) = loop.hidden_paths(fp.numbering)
    hidden = set(range(first, first + count))
    assert {p: c for p, c in counts.items() if p not in hidden} == switched_counts
    assert sum(switched_counts.values()) == 3  # f(5): first and exit; f(0): one path


def test_a_build_that_marks_probes_switches_loops_the_same(fresh_runtime: None) -> None:
    _, counts, fp = _loop_counts(COUNTING, [4], switch_loop=False, mark_probes=True)
    _, switched_counts, _ = _loop_counts(COUNTING, [4], switch_loop=True, mark_probes=True)
    (loop,) = fp.loop_switches
    ((first, count),) = loop.hidden_paths(fp.numbering)
    hidden = set(range(first, first + count))
    assert {p: c for p, c in counts.items() if p not in hidden} == switched_counts


def test_a_while_true_loop_left_by_break_switches_too(fresh_runtime: None) -> None:
    source = """\
        def f(n):
            t = 0
            while True:
                n -= 1
                if n < 0:
                    break
                t += 1
            return t
        """
    measured, counts, fp = _loop_counts(source, [3], switch_loop=False)
    switched, switched_counts, _ = _loop_counts(source, [3], switch_loop=True)
    assert measured == switched == [3]
    assert len(fp.loop_switches) == 1
    # n = 2, 1, 0, then -1 breaks: measured, the entry's path to the first backedge,
    # two from the header to a backedge, and the header's path through the break to
    # the return; switched, the first only (the break's path starts at the header
    # after a backedge: a hidden path, and the register is parked)
    assert sum(counts.values()) == 4
    assert sum(switched_counts.values()) == 1


def test_a_for_loop_switches_like_a_while_loop(fresh_runtime: None) -> None:
    source = """\
        def f(items):
            t = 0
            for x in items:
                if x % 2:
                    t += 1
            return t
        """
    measured, counts, fp = _loop_counts(source, [[1, 2, 3, 4]], switch_loop=False)
    switched, switched_counts, _ = _loop_counts(source, [[1, 2, 3, 4]], switch_loop=True)
    assert measured == switched == [2]
    (loop,) = fp.loop_switches
    ((first, count),) = loop.hidden_paths(fp.numbering)
    hidden = set(range(first, first + count))
    assert sum(c for p, c in counts.items() if p in hidden) == 3  # items 2 to 4
    assert {p: c for p, c in counts.items() if p not in hidden} == switched_counts
    assert sum(switched_counts.values()) == 2  # the first item's path, the exit's


def test_a_break_in_a_switched_loop_starts_the_enclosing_loops_next_path(
        fresh_runtime: None) -> None:
    source = """\
        def f(n, m):
            t = 0
            while n:
                n -= 1
                for x in m:
                    t += 1
                    if x:
                        break
            return t
        """
    module, namespace = _load(source, switches=True, swaps=False)
    fp = module.functions[0]
    outer, inner = fp.loop_switches
    assert (outer.node.lineno, inner.node.lineno) == (3, 5)
    assert len(inner.breaks) == 1  # its break ends an outer iteration
    f = namespace["f"]
    assert f(3, [0, 0, 1]) == 9
    counts = _paths(module)
    names = holders.names_of(f.__code__)
    assert names is not None
    names["_@pp_j0_1"] = True  # the inner loop goes back to its original body
    assert f(3, [0, 0, 1]) == 9
    switched = _paths(module)
    hidden = {first + k for first, count in inner.hidden_paths(fp.numbering)
              for k in range(count)}
    # 3 outer iterations of 3 inner ones: 2 inner backedges and a break each
    assert sum(c for p, c in counts.items() if p in hidden) == 6
    # the outer loop's paths are counted as before: each break set the register
    assert {p: c for p, c in counts.items() if p not in hidden} == switched
    assert sum(switched.values()) == 4


# ---------------------------------------------------------------------------
# Running: conditions


def test_a_function_past_its_paths_still_counts_its_decisions(fresh_runtime: None) -> None:
    module, namespace = _load("""\
        def f(a, b):
            if a and b:
                return 1
            return 0
        """, switches=True, swaps=False, conditions=True)
    f = namespace["f"]
    names = holders.names_of(f.__code__)
    assert names is not None
    inputs = [(a, b) for a in (0, 1) for b in (0, 1)]
    # vectors of ``a and b``: 0 (F,-), 1 (T,F), 2 (T,T)
    expected_vectors = {0: 2, 1: 1, 2: 1}
    assert [f(a, b) for a, b in inputs] == [0, 0, 0, 1]
    paths, vectors = _snapshot(module)
    assert sum(paths[0].values()) == 4
    assert vectors[0] == expected_vectors
    names["_@pp_i0"] = False  # paths done: decisions still counted
    assert [f(a, b) for a, b in inputs] == [0, 0, 0, 1]
    paths, vectors = _snapshot(module)
    assert paths[0] == {}
    assert vectors[0] == expected_vectors
    names["_@pp_k0"] = False  # decisions done too: the program's own code
    assert [f(a, b) for a, b in inputs] == [0, 0, 0, 1]
    paths, vectors = _snapshot(module)
    assert paths[0] == {}
    assert vectors[0] == {}
