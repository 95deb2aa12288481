"""Unit tests of :mod:`pathprof.python.eventcode`, event counting (Ball 1994): the
events of every piece (statements, or bytecode instructions of the function as
Python compiles it), the event plan and what the runtime is told of it, how an
increment is split into a baseline's adds, the prologue and the plain compile; and,
run, what the rewritten functions count -- each call's statements, hand-counted,
as its self count, its callees' in its inclusive count, a generator's at each
``yield``, an exception's up to the statement that raised, and the thread's total
alone with ``totals_only``. The three placements count the same."""

from __future__ import annotations

import ast
import dis
import itertools
import textwrap
import warnings
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pathprof.contract import Role
from pathprof.python import eventcode
from pathprof.python.cfg import build_cfg, iter_functions
from pathprof.python.cfgtypes import FunctionCfg
from pathprof.python.eventcode import (
    EVENT_KINDS,
    PLACEMENTS,
    event_metadata,
    event_prologue,
    piece_weights,
    plain_codes,
    plan_events_for,
    rest_after,
    split_increment,
    statement_adds,
)
from pathprof.python.instrument import InstrumentedModule, function_metadata, instrument_source
from pathprof.python.plan import plan_function
from pathprof.runtime import events as eventrt

_keys = itertools.count()


@pytest.fixture
def fresh_events(monkeypatch: pytest.MonkeyPatch) -> None:
    """The modules these tests register go to a registry of their own."""
    monkeypatch.setattr(eventrt, "_modules", [])


def _cfg(source: str, name: str | None = None) -> FunctionCfg:
    tree = ast.parse(textwrap.dedent(source))
    for node, qualname in iter_functions(tree):
        if name is None or qualname == name:
            return build_cfg(node, qualname, star_flows_on=False)
    raise LookupError(name)


def _load(source: str, **options: Any) -> tuple[InstrumentedModule, dict[str, Any],
                                                 eventrt.EventModule]:
    number = next(_keys)
    filename = f"<eventcode-{number}>"
    module = instrument_source(textwrap.dedent(source), filename, mode="events",
                               module_key=f"test_eventcode:{number}", **options)
    namespace: dict[str, Any] = {"__name__": f"pathprof_test_eventcode_{number}"}
    exec(module.compile(filename), namespace)
    (state,) = [s for s in eventrt.modules() if s.key == module.metadata.key]
    return module, namespace, state


def _self_counts(state: eventrt.EventModule) -> list[int]:
    eventrt.drain()
    return list(state.self_counts)


def _inclusive(state: eventrt.EventModule) -> list[int]:
    position = eventrt.modules().index(state)
    counts = eventrt.inclusive_counts()
    return [counts[(position, i)] for i in range(len(state.self_counts))]


# ---------------------------------------------------------------------------
# Piece weights


def test_a_statement_is_one_event_and_a_declaration_none() -> None:
    cfg = _cfg("""\
        def f(n):
            global g
            g = 1
            while True:
                if n:
                    break
            return g
        """)
    weights = piece_weights(cfg, "statements")
    by_role = {(p.role, type(p.node).__name__): w for block, ws in zip(cfg.blocks, weights,
                                                                     strict=True)
               for p, w in zip(block.pieces, ws, strict=True)}
    assert by_role[(Role.STMT, "Global")] == 0
    assert by_role[(Role.STMT, "Assign")] == 1
    assert by_role[(Role.TEST, "Constant")] == 0  # ``while True`` evaluates nothing
    assert by_role[(Role.TEST, "Name")] == 1  # the if's test
    assert by_role[(Role.STMT, "Break")] == 1
    assert by_role[(Role.STMT, "Return")] == 1
    assert [len(ws) for ws in weights] == [len(b.pieces) for b in cfg.blocks]


def _compiled_weights(source: str, kind: str) -> tuple[FunctionCfg, list[list[int]]]:
    tree = ast.parse(textwrap.dedent(source))
    node, qualname = next(iter_functions(tree))
    cfg = build_cfg(node, qualname, star_flows_on=False)
    meta = function_metadata(plan_function(cfg))
    code = plain_codes(tree, "<weights>")[(qualname, meta.code_line)]
    return cfg, piece_weights(cfg, kind, code, meta)


def test_a_statement_the_compiler_removed_is_no_event() -> None:
    source = "def f(x):\n    return x\n    y = 1\n"
    cfg = _cfg(source)
    assert sum(map(sum, piece_weights(cfg, "statements"))) == 2  # without the code
    _, weights = _compiled_weights(source, "statements")
    # ``y = 1``, after the return, is compiled away: only the return runs
    assert sum(map(sum, weights)) == 1


def test_instructions_are_those_python_compiles_for_each_piece() -> None:
    source = "def f(x):\n    y = x + 1\n    return y\n"
    _, weights = _compiled_weights(source, "instructions")
    namespace: dict[str, Any] = {}
    exec(source, namespace)
    ops = [i.opname for i in dis.get_instructions(namespace["f"])]
    assert sum(map(sum, weights)) == len(ops) - ops.count("RESUME")
    assert [w for w in weights if w] == [[4, 2]]  # ``y = x + 1``, ``return y``


def test_a_with_exit_counts_no_instructions() -> None:
    cfg, weights = _compiled_weights("def f(m):\n    with m:\n        x = 1\n", "instructions")
    for block, ws in zip(cfg.blocks, weights, strict=True):
        for piece, w in zip(block.pieces, ws, strict=True):
            if piece.role is Role.WITH_EXIT:
                assert w == 0
            if piece.role is Role.WITH_ENTER:
                assert w > 0


def test_instructions_without_the_code_are_zero() -> None:
    cfg = _cfg("def f(x):\n    return x\n")
    assert piece_weights(cfg, "instructions") == [[0] * len(b.pieces) for b in cfg.blocks]


def test_an_unknown_event_kind_is_refused() -> None:
    with pytest.raises(ValueError, match=r"unknown event kind 'lines'.*statements, instructions"):
        piece_weights(_cfg("def f():\n    pass\n"), "lines")
    assert EVENT_KINDS == ("statements", "instructions")


def test_an_unknown_placement_is_refused() -> None:
    cfg = _cfg("def f():\n    pass\n")
    with pytest.raises(ValueError, match="unknown event placement 'edges'"):
        plan_events_for(cfg, piece_weights(cfg, "statements"), "edges")
    assert PLACEMENTS == ("tree", "blocks", "statements")


# ---------------------------------------------------------------------------
# Plans, adds and metadata


@pytest.mark.parametrize(("increment", "adds", "parts"), [
    (7, 3, [2, 2, 3]), (5, 1, [5]), (5, 0, [5]), (0, 2, [0, 0]), (-4, 2, [-2, -2]),
    (1, 3, [0, 0, 1]),
])
def test_an_increment_is_split_into_adds_that_sum_to_it(increment: int, adds: int,
                                                        parts: list[int]) -> None:
    assert split_increment(increment, adds) == parts


@settings(max_examples=50, deadline=None)
@given(st.integers(-1000, 1000), st.integers(0, 20))
def test_a_split_always_sums_to_the_increment(increment: int, adds: int) -> None:
    parts = split_increment(increment, adds)
    assert sum(parts) == increment
    assert len(parts) == max(adds, 1)


def test_rest_after_is_the_events_of_the_pieces_still_to_come() -> None:
    weights = [[], [1, 2, 3, 4]]
    assert rest_after(weights, 1, 0) == 9
    assert rest_after(weights, 1, 2) == 4
    assert rest_after(weights, 1, 3) == 0


def test_the_statements_baseline_adds_once_per_statement_of_an_edge() -> None:
    source = "def f(x):\n    a = 1\n    b = 2\n    return a + b\n"
    cfg = _cfg(source)
    meta = function_metadata(plan_function(cfg))
    adds = statement_adds(cfg, piece_weights(cfg, "statements"), "statements", None, meta)
    # one straight block of 3 statements: 3 adds where its events are added
    assert sorted(v for v in adds.values() if v) == [3]


def test_event_metadata_tells_the_runtime_the_pieces_and_the_increment_left_with() -> None:
    cfg = _cfg("def f(x):\n    a = 1\n    if x:\n        return a\n    return 2\n")
    weights = piece_weights(cfg, "statements")
    plan = plan_events_for(cfg, weights)
    tables = event_metadata(cfg, plan, weights, "statements")
    assert tables.kind == "statements"
    assert tables.pieces == tuple(tuple(w) for w in weights)
    assert len(tables.query) == len(cfg.blocks)
    assert tables.chords == len(plan.code_edges)
    returns = {e.src for eid, e in enumerate(cfg.edges)
               if e.label == "return" and plan.increment.get(eid)}
    assert set(tables.leave) == returns
    for block, amount in tables.leave.items():
        (eid,) = [i for i, e in enumerate(cfg.edges) if e.src == block and e.label == "return"]
        assert amount == plan.increment[eid]


def test_the_backedges_are_the_graphs() -> None:
    cfg = _cfg("def f(n):\n    while n:\n        n -= 1\n")
    assert eventcode.backedges_of(cfg) == frozenset(cfg.backedges)


# ---------------------------------------------------------------------------
# The prologue and the plain compile


def test_the_prologue_registers_the_module_and_binds_its_tables() -> None:
    register, bind = event_prologue(3, "m.py", "key", "{}")
    assert isinstance(register, ast.Assign)
    call = register.value
    assert isinstance(call, ast.Call)
    assert isinstance(call.func, ast.Attribute)
    assert call.func.attr == "register"
    constants = [a.value for a in call.args if isinstance(a, ast.Constant)]
    assert constants[:4] == ["m.py", "key", 3, "{}"]  # after the module's __name__
    assert isinstance(bind, ast.Assign)
    assert ast.unparse(bind.value).endswith("._@pp_m.bindings")


def test_plain_codes_are_every_function_as_written() -> None:
    source = textwrap.dedent("""\
        def f():
            def g():
                pass
            return g

        class C:
            @staticmethod
            def m():
                pass
        """)
    codes = plain_codes(ast.parse(source), "<plain>")
    assert set(codes) == {("<module>", 1), ("f", 1), ("f.<locals>.g", 2), ("C", 6),
                          ("C.m", 7)}
    assert codes[("f", 1)].co_name == "f"


def test_plain_codes_keep_the_compilers_warnings_to_themselves() -> None:
    source = "def f():\n    try:\n        pass\n    finally:\n        return 1\n"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        codes = plain_codes(ast.parse(source), "<warns>")
    assert ("f", 1) in codes


# ---------------------------------------------------------------------------
# Counting, run


PROGRAM = """\
def leaf(x):
    y = x + 1
    return y

def f(n):
    t = 0
    for i in range(n):
        t += leaf(i)
    return t
"""


@pytest.mark.parametrize("placement", PLACEMENTS)
def test_each_call_counts_its_statements_and_its_callees(fresh_events: None,
                                                         placement: str) -> None:
    _module, namespace, state = _load(PROGRAM, placement=placement)
    assert namespace["f"](3) == 6
    # leaf: 2 statements a call, 3 calls; f: t = 0, the for step 4 times (3 items and
    # the end), t += ... 3 times, the return
    assert _self_counts(state) == [6, 9]
    assert _inclusive(state) == [6, 15]


def test_instructions_are_counted_per_call(fresh_events: None) -> None:
    source = "def f(x):\n    y = x + 1\n    return y\n"
    _module, namespace, state = _load(source, events="instructions")
    plain: dict[str, Any] = {}
    exec(source, plain)
    ops = [i.opname for i in dis.get_instructions(plain["f"])]
    namespace["f"](1)
    namespace["f"](2)
    assert _self_counts(state) == [2 * (len(ops) - ops.count("RESUME"))]


def test_totals_only_counts_the_threads_total_alone(fresh_events: None) -> None:
    _module, namespace, state = _load(PROGRAM, totals_only=True)
    table = eventrt.local.t
    before = table[0]
    namespace["f"](3)
    eventrt.drain()
    assert table[0] - before == 15
    assert _self_counts(state) == [0, 0]


def test_a_generator_hands_its_count_over_at_each_yield(fresh_events: None) -> None:
    _module, namespace, state = _load("""\
        def g(n):
            a = 1
            yield a
            b = yield n
            yield a + b
        """)
    generator = namespace["g"](5)
    assert next(generator) == 1
    assert _self_counts(state) == [2]  # a = 1, yield a
    assert next(generator) == 5
    assert _self_counts(state) == [3]
    assert generator.send(10) == 11
    assert _self_counts(state) == [4]
    with pytest.raises(StopIteration):
        next(generator)
    assert _self_counts(state) == [4]


def test_a_yield_inside_an_expression_hands_over_too(fresh_events: None) -> None:
    _module, namespace, state = _load("""\
        def g():
            total = (yield 1) + (yield 2)
            return total
        """)
    generator = namespace["g"]()
    assert next(generator) == 1
    assert generator.send(10) == 2
    with pytest.raises(StopIteration) as stopped:
        generator.send(20)
    assert stopped.value.value == 30
    assert _self_counts(state) == [2]  # the assignment and the return


def test_an_exception_counts_up_to_the_statement_that_raised(fresh_events: None) -> None:
    _module, namespace, state = _load("""\
        def boom(x):
            a = 1
            if x:
                b = 2
                raise ValueError(a)
            return a
        """)
    with pytest.raises(ValueError, match="1"):
        namespace["boom"](1)
    assert _self_counts(state) == [4]  # a = 1, if x, b = 2, raise
    assert namespace["boom"](0) == 1
    assert _self_counts(state) == [4 + 3]
    assert state.unattributed == [0]


def test_a_handled_exception_restarts_the_count_in_its_handler(fresh_events: None) -> None:
    _module, namespace, state = _load("""\
        def f(x):
            try:
                a = 1
                raise KeyError
                a = 2
            except KeyError:
                a = 3
            return a
        """)
    assert namespace["f"](0) == 3
    # a = 1, raise; the handler's a = 3; the return (``try`` and ``except`` themselves
    # run no statement of their own)
    assert _self_counts(state) == [4]


def test_a_with_that_swallows_counts_on_after_it(fresh_events: None) -> None:
    _module, namespace, state = _load("""\
        class Quiet:
            def __enter__(self):
                return self
            def __exit__(self, *exc):
                return True

        def f():
            with Quiet():
                a = 1
                raise KeyError
                a = 2
            return a
        """)
    assert namespace["f"]() == 1
    counts = _self_counts(state)
    # Quiet.__enter__ and __exit__ one return each; f: the with, a = 1, raise, return
    assert counts == [1, 1, 4]


def test_a_recursive_function_counts_once_per_outermost_call(fresh_events: None) -> None:
    _module, namespace, state = _load("""\
        def fact(n):
            if n <= 1:
                return 1
            return n * fact(n - 1)
        """)
    assert namespace["fact"](4) == 24
    # 4 calls of 2 statements each: self 8; inclusive, the outermost call's own 8
    assert _self_counts(state) == [8]
    assert _inclusive(state) == [8]


def test_a_finally_counts_on_every_way_out(fresh_events: None) -> None:
    _module, namespace, state = _load("""\
        def f(x):
            try:
                a = 1
                if x:
                    raise KeyError
            finally:
                b = 2
            return a
        """)
    with pytest.raises(KeyError):
        namespace["f"](1)
    assert _self_counts(state) == [4]  # a = 1, if x, raise, b = 2
    assert namespace["f"](0) == 1
    assert _self_counts(state) == [8]  # and a = 1, if x, b = 2, return


def test_an_awaited_object_counts_in_its_own_functions(fresh_events: None) -> None:
    _module, namespace, state = _load("""\
        class Wait:
            def __await__(self):
                yield "suspended"
                return 5

        async def g():
            a = 1
            b = await Wait()
            return a + b
        """)
    coroutine = namespace["g"]()
    assert coroutine.send(None) == "suspended"
    with pytest.raises(StopIteration) as stopped:
        coroutine.send(None)
    assert stopped.value.value == 6
    # __await__: its yield and its return; g: a = 1, the await, the return
    assert _self_counts(state) == [2, 3]
    assert _inclusive(state) == [2, 3]


def test_a_generator_delegated_to_counts_in_its_own_function(fresh_events: None) -> None:
    _module, namespace, state = _load("""\
        def inner():
            yield 1
            yield 2

        def outer():
            yield from inner()
            x = 3
            yield x
        """)
    assert list(namespace["outer"]()) == [1, 2, 3]
    assert _self_counts(state) == [2, 3]  # outer: the yield from, x = 3, yield x
    # inner's statements run while outer is handed over: not in outer's inclusive
    assert _inclusive(state) == [2, 3]
