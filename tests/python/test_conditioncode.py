"""Unit tests of :mod:`pathprof.python.conditioncode`, counting each way a decision is
evaluated: which expressions are decisions (and where they are left unmeasured),
their contract (kind, span, conditions, tree, the counters they own, in source
order), and the module's invariant, checked by running the rewritten test against
the original one: it takes the truth of the same conditions in the same order, is
true exactly when the original is, and adds one to the counter of the vector that
ran -- numbered as a search that takes each condition false before true numbers
them, worked out here from the original's own evaluations."""

from __future__ import annotations

import ast
import itertools
import sys
import textwrap
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pathprof.contract import DecisionInfo, Span
from pathprof.python.conditioncode import (
    FROM_BRANCHES,
    MAX_NODES,
    TEST_ONCE,
    counted,
    counter_names,
    decision_sites,
    instrument_decisions,
)
from pathprof.python.names import DECISION_VALUE, vector_name


def _body(source: str) -> list[ast.stmt]:
    node = ast.parse(textwrap.dedent(source)).body[0]
    assert isinstance(node, ast.FunctionDef)
    return node.body


def _kinds(source: str) -> list[tuple[str, str, bool]]:
    return [(site.kind, ast.unparse(site.test), site.measurable)
            for site in decision_sites(_body(source))]


# ---------------------------------------------------------------------------
# Which expressions are decisions


def test_decisions_of_every_kind_in_source_order() -> None:
    assert _kinds("""\
        def f(a, b, c, xs):
            if a and b or c:
                pass
            elif not a:
                pass
            x = [i for i in xs if i and a]
            assert a or b
            while a and (b or c):
                break
            z = b if a or c else c
            match a:
                case 1 if b and c:
                    pass
        """) == [
        ("if", "a and b or c", True),
        ("elif", "not a", True),
        ("comprehension if", "i and a", True),
        ("assert", "a or b", True),
        ("while", "a and (b or c)", True),
        ("conditional expression", "a or c", True),
        ("guard", "b and c", True),
    ]


def test_an_if_written_inside_an_else_is_no_elif() -> None:
    assert [k for k, _, _ in _kinds("""\
        def f(a, b):
            if a:
                pass
            else:
                if b:
                    pass
        """)] == ["if", "if"]


def test_a_decision_in_a_comprehensions_iterable_is_not_measurable() -> None:
    assert _kinds("""\
        def f(xs, b):
            return [i for i in (j for j in xs if j or b) if i]
        """) == [("comprehension if", "j or b", False), ("comprehension if", "i", True)]


def test_constant_tests_are_no_decisions() -> None:
    assert _kinds("""\
        def f(a):
            while True:
                break
            if 0:
                pass
            if __debug__:
                pass
            if True and False:
                pass
            if a and True:
                pass
        """) == [("if", "a and True", True)]


def test_nested_scopes_keep_their_decisions_but_not_their_defaults() -> None:
    assert _kinds("""\
        def f(a, b):
            g = lambda: a if b else a
            def inner(x=a if b else 0):
                if x:
                    pass
            class K(a if b else object):
                y = 1 if a else 2
            @(a if b else a)
            def decorated():
                pass
        """) == [("conditional expression", "b", True), ("conditional expression", "b", True),
                 ("conditional expression", "b", True)]


def test_a_site_reads_and_replaces_its_test() -> None:
    body = _body("def f(xs, a):\n    return [x for x in xs if a if x]\n")
    first, second = decision_sites(body)
    assert (first.index, second.index) == (0, 1)
    assert ast.unparse(second.test) == "x"
    second.replace(ast.Name(id="y", ctx=ast.Load()))
    assert ast.unparse(body[0]) == "return [x for x in xs if a if y]"
    (branch,) = decision_sites(_body("def f(a):\n    if a:\n        pass\n"))
    assert branch.index is None
    branch.replace(ast.Name(id="b", ctx=ast.Load()))
    assert ast.unparse(branch.holder) == "if b:\n    pass"


# ---------------------------------------------------------------------------
# The contract


def test_each_decision_owns_its_vectors_counters_in_source_order() -> None:
    body = _body("""\
        def f(a, b, c):
            if a and b or c:
                pass
            while a and b:
                pass
            x = 1 if a or b else 2
        """)
    infos = instrument_decisions(body, 7)
    assert infos[0] == DecisionInfo(
        "if", Span(2, 7, 2, 19), "a and b or c", ("a", "b", "c"),
        (Span(2, 7, 2, 8), Span(2, 13, 2, 14), Span(2, 18, 2, 19)), "|(&(0,1),2)", 7, 5)
    # ``a and b``: (F,-), (T,F), (T,T); ``a or b``: (F,F), (F,T), (T,-)
    assert [(i.kind, i.slot, i.vectors) for i in infos] == [
        ("if", 7, 5), ("while", 12, 3), ("conditional expression", 15, 3)]
    assert counted(infos) == 11
    assert counter_names(infos) == [vector_name(k) for k in range(7, 18)] + [DECISION_VALUE]


def test_a_one_condition_branch_is_counted_by_its_branches() -> None:
    body = _body("""\
        def f(a, b):
            if a:
                pass
            while not b:
                pass
        """)
    spans = {Span(2, 7, 2, 8), Span(4, 10, 4, 15)}
    before = ast.dump(ast.Module(body=body, type_ignores=[]))
    infos = instrument_decisions(body, 0, spans)
    assert [(i.slot, i.vectors) for i in infos] == [(FROM_BRANCHES, 2), (FROM_BRANCHES, 2)]
    assert ast.dump(ast.Module(body=body, type_ignores=[])) == before  # left as written
    assert counted(infos) == 0
    assert counter_names(infos) == []


def test_a_one_condition_test_without_its_branches_is_measured() -> None:
    # (no spans given, or a kind whose block has no true and false edge)
    infos = instrument_decisions(_body("def f(a):\n    if a:\n        pass\n"), 3)
    assert [(i.slot, i.vectors) for i in infos] == [(3, 2)]
    expression = instrument_decisions(_body("def f(a):\n    return 1 if a else 2\n"), 0,
                                      {Span(2, 16, 2, 17)})
    assert [(i.slot, i.vectors) for i in expression] == [(0, 2)]


def test_an_unmeasurable_decision_owns_no_counter_and_is_left_as_written() -> None:
    body = _body("def f(xs, b):\n    return [i for i in (j for j in xs if j or b)]\n")
    before = ast.dump(body[0])
    (info,) = instrument_decisions(body, 4)
    assert (info.slot, info.vectors) == (0, 0)
    assert ast.dump(body[0]) == before
    assert counted([info]) == 0


def test_a_decision_too_big_to_unfold_is_left_as_written() -> None:
    # (a0 or b0) and (a1 or b1) and ...: 3 ways through each pair, 3**8 vectors
    test = " and ".join(f"(a{i} or b{i})" for i in range(8))
    body = _body(f"def f():\n    if {test}:\n        pass\n")
    before = ast.dump(body[0])
    (info,) = instrument_decisions(body, 0)
    assert MAX_NODES < 4 * 3**8
    assert (info.slot, info.vectors) == (0, 0)
    assert len(info.conditions) == 16
    assert ast.dump(body[0]) == before


def test_counted_and_counter_names_of_no_decision() -> None:
    assert counted([]) == 0
    assert counter_names([]) == []


# ---------------------------------------------------------------------------
# Running the rewritten test


def _compiled(source: str, first_slot: int = 0) -> tuple[Callable[..., Any], dict[str, Any],
                                                         list[DecisionInfo]]:
    """``f`` of ``source`` with its decisions rewritten, and its globals (every counter
    0, as the runtime sets them)."""
    tree = ast.parse(textwrap.dedent(source))
    node = tree.body[0]
    assert isinstance(node, ast.FunctionDef)
    infos = instrument_decisions(node.body, first_slot)
    names = counter_names(infos)
    if names:
        node.body.insert(0, ast.Global(names=names))
    namespace: dict[str, Any] = {name: 0 for name in names}
    exec(compile(ast.fix_missing_locations(tree), "<conditions>", "exec"), namespace)
    return namespace["f"], namespace, infos


def _vectors(namespace: dict[str, Any], info: DecisionInfo) -> dict[int, int]:
    """Runs of each vector of ``info`` since the counters were 0."""
    runs = {k: namespace[vector_name(info.slot + k)] for k in range(info.vectors)}
    return {k: n for k, n in runs.items() if n}


def _reset(namespace: dict[str, Any], infos: list[DecisionInfo]) -> None:
    for name in counter_names(infos):
        namespace[name] = 0


def _recorder(values: dict[int, bool], seen: list[tuple[int, bool]]) -> Callable[[int], bool]:
    def c(i: int) -> bool:
        seen.append((i, values[i]))
        return values[i]
    return c


def _check_against_the_original(source: str, conditions: int) -> None:
    """For every assignment of the conditions: same evaluations, same truth, one add
    to the vector numbered as the false-first search numbers the evaluations."""
    plain: dict[str, Any] = {}
    exec(textwrap.dedent(source), plain)
    traces: dict[tuple[bool, ...], Any] = {}
    assignments = [dict(enumerate(v)) for v in itertools.product([False, True],
                                                                 repeat=conditions)]
    for values in assignments:
        seen: list[tuple[int, bool]] = []
        result = plain["f"](_recorder(values, seen))
        traces[tuple(v for _, v in seen)] = (seen, result)
    # distinct evaluations, in the order of a search taking each condition false first
    number = {trace: k for k, trace in enumerate(sorted(traces))}
    f, namespace, infos = _compiled(source)
    (info,) = infos
    assert info.vectors == len(number)
    for values in assignments:
        seen = []
        _reset(namespace, infos)
        result = f(_recorder(values, seen))
        trace = tuple(v for _, v in seen)
        assert (seen, result) == traces[trace], values
        assert _vectors(namespace, info) == {number[trace]: 1}, values


def test_and_or_counts_each_of_its_five_vectors() -> None:
    _check_against_the_original("""\
        def f(c):
            if c(0) and c(1) or c(2):
                return "yes"
            return "no"
        """, 3)


@pytest.mark.parametrize("source", [
    "def f(c):\n    while c(0) or not c(1):\n        return 'in'\n    return 'out'\n",
    "def f(c):\n    return 'a' if not (c(0) and c(1)) else 'b'\n",
    "def f(c):\n    return [x for x in 'xy' if c(0) or c(1)]\n",
    "def f(c):\n    try:\n        assert c(0) and c(1)\n    except AssertionError:\n"
    "        return 'failed'\n    return 'held'\n",
    "def f(c):\n    match 1:\n        case 1 if c(0) or c(1) and c(2):\n            return 'g'\n"
    "    return 'n'\n",
])
def test_every_kind_of_decision_counts_its_vectors(source: str) -> None:
    conditions = source.count("c(")
    if "for x in 'xy'" in source:  # the comprehension's if runs once per item
        f, namespace, infos = _compiled(source)
        (info,) = infos
        seen: list[tuple[int, bool]] = []
        assert f(_recorder({0: False, 1: True}, seen)) == ["x", "y"]
        assert _vectors(namespace, info) == {1: 2}  # (F,T) twice
        return
    _check_against_the_original(source, conditions)


@st.composite
def _tests(draw: st.DrawFn, depth: int = 3) -> str:
    """A boolean expression of ``c(i)`` calls (``and``, ``or``, ``not``), its
    conditions numbered left to right."""
    def build(level: int) -> str:
        kind = draw(st.sampled_from(["leaf", "leaf", "and", "or", "not"] if level else
                                    ["leaf"]))
        if kind == "leaf":
            return "c(#)"
        if kind == "not":
            return f"not ({build(level - 1)})"
        parts = [build(level - 1) for _ in range(draw(st.integers(2, 3)))]
        return "(" + f" {kind} ".join(parts) + ")"

    text = build(depth)
    pieces = text.split("#")
    numbered = pieces[0] + "".join(f"{i}{piece}" for i, piece in enumerate(pieces[1:]))
    return numbered


@settings(max_examples=50, deadline=None)
@given(_tests(depth=2))
def test_a_rewritten_test_evaluates_as_the_original_and_counts_its_vector(test: str) -> None:
    conditions = test.count("c(")
    if conditions > 6:  # (2**6 assignments each)
        return
    source = f"def f(c):\n    if {test}:\n        return True\n    return False\n"
    _check_against_the_original(source, conditions)


def test_an_inner_decision_counts_once_per_evaluation_of_the_outer_one() -> None:
    source = """\
        def f(c):
            if (c(1) if c(0) else c(2)) and c(3):
                return 1
            return 0
        """
    f, namespace, infos = _compiled(source)
    inner, outer = sorted(infos, key=lambda i: i.kind != "conditional expression")
    assert inner.kind == "conditional expression"
    assert outer.conditions == ("c(1) if c(0) else c(2)", "c(3)")
    for values in itertools.product([False, True], repeat=4):
        _reset(namespace, infos)
        seen: list[tuple[int, bool]] = []
        f(_recorder(dict(enumerate(values)), seen))
        assert sum(_vectors(namespace, inner).values()) == 1
        assert sum(_vectors(namespace, outer).values()) == 1
        # c(0) ran once, then one of its arms, and c(3) only if that arm was true
        assert [i for i, _ in seen][:2] in ([0, 1], [0, 2])


def test_the_value_tested_is_stored_once_on_newer_pythons() -> None:
    assert TEST_ONCE is (sys.version_info >= (3, 13))
    f, namespace, _infos = _compiled("def f(a, b):\n    if a and b:\n        return 1\n")
    namespace[DECISION_VALUE] = None
    f(True, True)
    if TEST_ONCE:
        assert namespace[DECISION_VALUE]  # the true way out: a count, truthy
        f(True, False)
        assert not namespace[DECISION_VALUE]
    else:
        assert namespace[DECISION_VALUE] is None


def test_counters_cleared_to_none_keep_counting_from_zero() -> None:
    # (``or 0``: what an interpreter shutting down leaves in the globals)
    f, namespace, infos = _compiled("def f(a, b):\n    if a or b:\n        return 1\n")
    for name in counter_names(infos):
        namespace[name] = None
    f(False, True)
    assert namespace[vector_name(1)] == 1  # (F,T)


def test_what_is_added_stands_on_the_tests_line() -> None:
    body = _body("def f(a, b, c):\n    x = 0\n    if a and b or c:\n        pass\n")
    instrument_decisions(body, 0)
    lines = {getattr(n, "lineno", None) for n in ast.walk(body[1].test)}  # type: ignore[attr-defined]
    assert lines - {None} == {3}
