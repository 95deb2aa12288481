"""Unit tests of :mod:`pathprof.python.structural`, the rewrite's changes that move
statements: a ``with`` body put in ``try: ... except <observer>``, a ``try`` with
``except*`` clauses put in one, a ``try`` with a ``finally`` split so that the
observer runs before the ``finally`` when an exception leaves, and the dispatch at
the end of a ``finally`` sunk into the clause's branches (one copy per way of
falling out, inner clauses first). The rewritten code is run: it must do what the
original did, with the observer and the dispatch running where the docstrings say."""

from __future__ import annotations

import ast
import itertools
import sys
import textwrap

import pytest

from pathprof.python.nodes import PROBE_MARK_LINE, UNLOCATED, artificial, observer, walk
from pathprof.python.statements import statement_parents
from pathprof.python.structural import apply_structural, mark_route_test


def _module(source: str) -> ast.Module:
    return ast.parse(textwrap.dedent(source))


def _note(word: str) -> ast.expr:
    """``log.append(word)``: an observer's effect (the observer's ``:=`` target is
    the throwaway name ``seen``)."""
    return ast.Call(func=ast.Attribute(value=ast.Name(id="log", ctx=ast.Load()),
                                       attr="append", ctx=ast.Load()),
                    args=[ast.Constant(value=word)], keywords=[])


def _logging_observer(word: str) -> ast.ExceptHandler:
    return observer([("seen", _note(word))])


def _run(tree: ast.Module, **inputs: object) -> tuple[list[str], str | None]:
    """Run ``tree``'s ``f(**inputs)``: what it logged, and the exception that left."""
    namespace: dict[str, object] = {}
    exec(compile(ast.fix_missing_locations(tree), "<structural>", "exec"), namespace)
    log: list[str] = []
    namespace["log"] = log
    function = namespace["f"]
    assert callable(function)
    try:
        function(**inputs)
    except Exception as exc:
        return log, type(exc).__name__
    return log, None


def _function(tree: ast.Module) -> ast.FunctionDef:
    node = tree.body[-1]
    assert isinstance(node, ast.FunctionDef)
    return node


CONTEXT = """\
class Manager:
    def __init__(self, swallow):
        self.swallow = swallow
    def __enter__(self):
        log.append("enter")
    def __exit__(self, *exc):
        log.append("exit")
        return self.swallow
"""


# ---------------------------------------------------------------------------
# Wrapping


@pytest.mark.parametrize("swallow", [False, True])
def test_a_with_bodys_observer_sees_the_exception_before_exit(swallow: bool) -> None:
    tree = _module(CONTEXT + """\
def f(fail, swallow):
    with Manager(swallow):
        log.append("body")
        if fail:
            raise KeyError
    log.append("after")
""")
    node = _function(tree).body[0]
    assert isinstance(node, ast.With)
    body = node.body
    apply_structural([("with", node, _logging_observer("observer"))],
                     statement_parents(_function(tree)))
    (inner,) = node.body
    assert isinstance(inner, ast.Try)
    assert inner.body is body  # the program's statements, not copies
    assert (inner.lineno, inner.col_offset) == (UNLOCATED, -1)
    assert _run(tree, fail=False, swallow=swallow) == (["enter", "body", "exit", "after"],
                                                       None)
    log, raised = _run(tree, fail=True, swallow=swallow)
    after = ["after"] if swallow else []
    assert log == ["enter", "body", "observer", "exit", *after]
    assert raised == (None if swallow else "KeyError")


TRY_FINALLY = """\
def f(fail, catch):
    try:
        log.append("body")
        if fail:
            raise KeyError if catch else ValueError
    except KeyError:
        log.append("handler")
    finally:
        log.append("finally")
    log.append("after")
"""


def test_a_try_with_a_finally_gets_its_observer_before_the_finally() -> None:
    tree = _module(TRY_FINALLY)
    func = _function(tree)
    node = func.body[0]
    assert isinstance(node, ast.Try)
    finalbody, handlers = node.finalbody, node.handlers
    apply_structural([("finally", node, _logging_observer("observer"))],
                     statement_parents(func))
    (outer,) = func.body[:1]
    assert isinstance(outer, ast.Try)
    assert outer is not node
    assert outer.finalbody is finalbody
    (inner,) = outer.body
    assert isinstance(inner, ast.Try)
    assert inner.handlers is handlers
    assert inner.finalbody == []
    assert (outer.lineno, inner.lineno) == (2, 2)  # where the program's try is
    assert _run(tree, fail=False, catch=False) == (["body", "finally", "after"], None)
    assert _run(tree, fail=True, catch=True) == (["body", "handler", "finally", "after"],
                                                 None)
    assert _run(tree, fail=True, catch=False) == (["body", "observer", "finally"],
                                                  "ValueError")


def test_a_try_with_only_a_finally_keeps_its_body_in_the_outer_try() -> None:
    tree = _module("""\
def f(fail):
    try:
        log.append("body")
        if fail:
            raise KeyError
    finally:
        log.append("finally")
""")
    func = _function(tree)
    node = func.body[0]
    assert isinstance(node, ast.Try)
    body = node.body
    apply_structural([("finally", node, _logging_observer("observer"))],
                     statement_parents(func))
    outer = func.body[0]
    assert isinstance(outer, ast.Try)
    assert outer.body is body  # no inner try
    assert _run(tree, fail=True) == (["body", "observer", "finally"], "KeyError")
    assert _run(tree, fail=False) == (["body", "finally"], None)


@pytest.mark.skipif(sys.version_info < (3, 11), reason="except* is 3.11's")
def test_a_try_with_star_clauses_is_wrapped_whole() -> None:
    tree = _module("""\
def f(fail):
    log.append("before")
    try:
        if fail:
            raise ExceptionGroup("g", [KeyError(), ValueError()])
    except* KeyError:
        log.append("star")
    log.append("after")
""")
    func = _function(tree)
    node = func.body[1]
    apply_structural([("star", node, _logging_observer("observer"))],
                     statement_parents(func))
    outer = func.body[1]
    assert isinstance(outer, ast.Try)
    assert outer.body == [node]
    assert (outer.lineno, outer.col_offset) == (3, 4)
    assert len(func.body) == 3
    # the group's rest (ValueError) leaves the except* try, then passes the observer
    assert _run(tree, fail=True) == (["before", "star", "observer"], "ExceptionGroup")
    assert _run(tree, fail=False) == (["before", "after"], None)


# ---------------------------------------------------------------------------
# Sinking a finally's dispatch


def _sunk(source: str, *, mark_probes: bool = True, words: int = 1
          ) -> tuple[ast.Module, ast.Try, list[ast.stmt]]:
    """``f``'s first ``try`` with its finally's last ``words`` statements taken for the
    dispatch (made artificial, as inserted code is) and sunk."""
    tree = _module(source)
    func = _function(tree)
    node = next(n for n in ast.walk(func) if isinstance(n, ast.Try) and n.finalbody)
    dispatch = node.finalbody[-words:]
    for stmt in dispatch:
        artificial(stmt)
    apply_structural([("dispatch", node, dispatch)], statement_parents(func),
                     mark_probes=mark_probes)
    return tree, node, dispatch


def _dispatches(tree: ast.Module) -> int:
    return sum(1 for n in ast.walk(tree) if isinstance(n, ast.Constant) and n.value == "D")


def _same_runs(source: str, tree: ast.Module, names: list[str]) -> None:
    """For every combination of boolean inputs, the sunk tree logs what the original
    does: the dispatch once, at the end of the finally, whatever way it ended."""
    original = _module(source)
    for values in itertools.product([False, True], repeat=len(names)):
        inputs = dict(zip(names, values, strict=True))
        expected = _run(original, **inputs)
        assert _run(tree, **inputs) == expected, inputs
        assert expected[0].count("D") == 1


IF_FINALLY = """\
def f(a, b):
    try:
        log.append("body")
    finally:
        if a:
            log.append("then")
        elif b:
            log.append("elif")
        log.append("D")
"""


def test_a_dispatch_is_sunk_into_every_branch_of_the_last_if() -> None:
    tree, node, dispatch = _sunk(IF_FINALLY)
    (branch,) = node.finalbody
    assert isinstance(branch, ast.If)
    # then, elif, and the empty else: one copy each, at the end of each list
    assert _dispatches(tree) == 3
    assert not any(stmt is dispatch[0] for stmt in walk(tree))  # copies only
    _same_runs(IF_FINALLY, tree, ["a", "b"])


MATCH_FINALLY = """\
def f(a, b):
    try:
        pass
    finally:
        match (a, b):
            case (True, _):
                log.append("first")
            case (False, True):
                log.append("second")
        log.append("D")
"""


def test_a_match_without_a_wildcard_gets_one_for_the_way_no_case_matches() -> None:
    tree, node, _ = _sunk(MATCH_FINALLY)
    (match,) = node.finalbody
    assert isinstance(match, ast.Match)
    assert len(match.cases) == 3  # a wildcard added
    wildcard = match.cases[-1]
    assert isinstance(wildcard.pattern, ast.MatchAs)
    assert wildcard.pattern.name is None
    assert _dispatches(tree) == 3
    _same_runs(MATCH_FINALLY, tree, ["a", "b"])


LOOP_FINALLY = """\
def f(a, b):
    try:
        pass
    finally:
        for x in (a, b):
            if x:
                log.append("break")
                break
        log.append("D")
"""


def test_a_loops_breaks_and_its_end_each_get_a_copy() -> None:
    tree, node, _ = _sunk(LOOP_FINALLY)
    (loop,) = node.finalbody
    assert isinstance(loop, ast.For)
    assert _dispatches(tree) == 2  # its else (exhausted) and before its break
    branch = loop.body[0]
    assert isinstance(branch, ast.If)
    assert isinstance(branch.body[-1], ast.Break)
    _same_runs(LOOP_FINALLY, tree, ["a", "b"])


TRY_IN_FINALLY = """\
def f(a, b):
    try:
        pass
    finally:
        try:
            if a:
                raise KeyError
            log.append("inner body")
        except KeyError:
            log.append("inner handler")
        log.append("D")
"""


def test_a_try_without_finally_gets_a_copy_after_its_body_and_each_handler() -> None:
    tree, _, _ = _sunk(TRY_IN_FINALLY)
    assert _dispatches(tree) == 2
    _same_runs(TRY_IN_FINALLY, tree, ["a", "b"])


def test_a_dispatch_of_several_statements_is_sunk_whole() -> None:
    source = IF_FINALLY.replace('        log.append("D")\n',
                                '        log.append("D")\n        log.append("E")\n')
    tree, node, _ = _sunk(source, words=2)
    assert _dispatches(tree) == 3
    branch = node.finalbody[0]
    assert isinstance(branch, ast.If)
    assert [ast.unparse(s) for s in branch.body[-2:]] == ["log.append('D')",
                                                          "log.append('E')"]
    for a, b in itertools.product([False, True], repeat=2):
        log, _raised = _run(tree, a=a, b=b)
        assert log[-2:] == ["D", "E"]


def test_a_dispatch_that_is_not_the_finallys_end_is_left_in_place() -> None:
    tree = _module(IF_FINALLY)
    func = _function(tree)
    node = func.body[0]
    assert isinstance(node, ast.Try)
    not_the_end = [node.finalbody[0]]  # the if, not the end of the clause
    before = ast.dump(tree)
    apply_structural([("dispatch", node, not_the_end)], statement_parents(func))
    assert ast.dump(tree) == before


def test_a_finally_of_nothing_but_the_dispatch_is_left_in_place() -> None:
    source = 'def f():\n    try:\n        pass\n    finally:\n        log.append("D")\n'
    _tree, node, dispatch = _sunk(source)
    assert node.finalbody == dispatch


def test_a_route_tests_fall_through_is_followed_to_its_last_else() -> None:
    # A dispatch whose last statement tests the route (an if marked so): its way of
    # falling through is its last orelse, where an outer clause's copy goes.
    source = """\
def f(a, b, route):
    try:
        pass
    finally:
        try:
            pass
        finally:
            if a:
                log.append("a")
            if route:
                log.append("route")
            else:
                log.append("inner fall")
        log.append("D")
"""
    tree = _module(source)
    func = _function(tree)
    outer = func.body[0]
    assert isinstance(outer, ast.Try)
    inner = outer.finalbody[0]
    assert isinstance(inner, ast.Try)
    route_test = inner.finalbody[-1]
    assert isinstance(route_test, ast.If)
    mark_route_test(route_test)
    inner_dispatch = [artificial(route_test)]
    outer_dispatch = [artificial(outer.finalbody[-1])]
    apply_structural([("dispatch", outer, outer_dispatch), ("dispatch", inner, inner_dispatch)],
                     statement_parents(func))
    # The inner dispatch went into the inner if's two ways; the outer one follows the
    # inner copies' ways of falling through: the end of each copy's ``else``.
    assert _dispatches(tree) == 2
    for a, route in itertools.product([False, True], repeat=2):
        log, _raised = _run(tree, a=a, b=False, route=route)
        assert log.count("D") == (0 if route else 1), (a, route)
        if not route:
            assert log[-2:] == ["inner fall", "D"]


# ---------------------------------------------------------------------------
# Locations of the copies


WITH_FINALLY = CONTEXT + """\
def f(a, b):
    try:
        pass
    finally:
        if a:
            log.append("then")
        else:
            with Manager(b):
                log.append("inside")
        log.append("D")
"""


def test_copies_are_located_at_the_one_line_their_way_comes_from() -> None:
    tree, node, _ = _sunk(WITH_FINALLY, mark_probes=False)
    branch = node.finalbody[0]
    assert isinstance(branch, ast.If)
    then_copy, else_copy = branch.body[-1], branch.orelse[-1]
    assert then_copy.lineno == 14  # ``log.append("then")`` is left from its line
    assert else_copy.lineno == 16  # a with is left from its header
    assert (else_copy.col_offset, else_copy.end_lineno) == (0, 16)  # no width
    _same_runs(WITH_FINALLY, tree, ["a", "b"])


def test_copies_stay_unlocated_in_a_build_that_marks_probes() -> None:
    _tree, node, _ = _sunk(WITH_FINALLY, mark_probes=True)
    branch = node.finalbody[0]
    assert isinstance(branch, ast.If)
    for copy in (branch.body[-1], branch.orelse[-1]):
        assert copy.lineno in (UNLOCATED, PROBE_MARK_LINE)


def test_the_structural_changes_leave_what_they_do_not_name_alone() -> None:
    tree = _module(TRY_FINALLY)
    before = ast.dump(tree, include_attributes=True)
    apply_structural([], statement_parents(_function(tree)))
    assert ast.dump(tree, include_attributes=True) == before
