"""Unit tests of :mod:`pathprof.python.statements`, what the rewrite asks of a
function's statements (read-only): where each statement sits, which statement lists
lie inside a cleanup (``with``, a ``try`` with ``finally`` or ``except*``), a loop's
own ``break`` statements and whether they leave through a cleanup, and the one line
a statement is left from or a way out is entered at, where there is one."""

from __future__ import annotations

import ast
import sys
import textwrap

import pytest

from pathprof.python.nodes import artificial, assign, const
from pathprof.python.statements import (
    STATEMENT_FIELDS,
    breaks_of,
    enclosed_lists,
    entry_line,
    exit_line,
    loop_breaks,
    loop_exit_line,
    one_line,
    statement_parents,
)


def _function(source: str) -> ast.FunctionDef:
    node = ast.parse(textwrap.dedent(source)).body[0]
    assert isinstance(node, ast.FunctionDef)
    return node


def _first(source: str) -> ast.stmt:
    return ast.parse(textwrap.dedent(source)).body[0]


def _by_line(func: ast.AST) -> dict[int, ast.stmt]:
    return {n.lineno: n for n in ast.walk(func) if isinstance(n, ast.stmt)}


def test_statement_fields_name_every_list_of_statements_or_clauses() -> None:
    assert set(STATEMENT_FIELDS) == {"body", "orelse", "finalbody", "handlers", "cases"}


# ---------------------------------------------------------------------------
# statement_parents


PARENTS = """\
def f(x):
    a = 1
    if x:
        b = 2
    else:
        c = 3
    try:
        d = 4
    except E:
        e = 5
    finally:
        g = 6
    match x:
        case 1:
            h = 7
    def inner():
        i = 8
    class K:
        j = 9
"""


def test_every_statement_is_found_in_its_list_at_its_index() -> None:
    func = _function(PARENTS)
    parents = statement_parents(func)
    statements = [n for n in ast.walk(func) if isinstance(n, ast.stmt) and n is not func]
    assert len(parents) == len(statements) == 14
    for stmt in statements:
        stmts, index = parents[id(stmt)]
        assert stmts[index] is stmt


def test_parents_reach_into_handlers_cases_and_nested_scopes() -> None:
    func = _function(PARENTS)
    parents = statement_parents(func)
    line = _by_line(func)
    handler = func.body[2].handlers[0]  # type: ignore[attr-defined]
    assert parents[id(line[10])] == (handler.body, 0)
    case = func.body[3].cases[0]  # type: ignore[attr-defined]
    assert parents[id(line[15])] == (case.body, 0)
    assert parents[id(line[12])] == (func.body[2].finalbody, 0)  # type: ignore[attr-defined]
    assert parents[id(line[17])] == (func.body[4].body, 0)  # type: ignore[attr-defined]
    assert parents[id(line[19])] == (func.body[5].body, 0)  # type: ignore[attr-defined]
    assert parents[id(line[2])] == (func.body, 0)
    assert id(func) not in parents


def test_an_empty_function_has_no_parents() -> None:
    assert statement_parents(ast.Module(body=[], type_ignores=[])) == {}


# ---------------------------------------------------------------------------
# enclosed_lists


def test_lists_inside_a_with_or_a_try_with_finally_are_enclosed() -> None:
    func = _function("""\
        def f():
            a = 1
            with m:
                if c:
                    b = 2
            try:
                d = 3
            except E:
                e = 4
            else:
                g = 5
            finally:
                h = 6
            try:
                i = 7
            except E:
                j = 8
        """)
    enclosed = enclosed_lists(func)
    with_, try_finally, try_except = func.body[1], func.body[2], func.body[3]
    assert id(func.body) not in enclosed
    assert id(with_.body) in enclosed  # type: ignore[attr-defined]
    assert id(with_.body[0].body) in enclosed  # type: ignore[attr-defined]  # if inside
    for part in (try_finally.body, try_finally.handlers[0].body,  # type: ignore[attr-defined]
                 try_finally.orelse, try_finally.finalbody):  # type: ignore[attr-defined]
        assert id(part) in enclosed
    # A try with only except clauses encloses nothing.
    assert id(try_except.body) not in enclosed  # type: ignore[attr-defined]
    assert id(try_except.handlers[0].body) not in enclosed  # type: ignore[attr-defined]
    assert len(enclosed) == 6


def test_a_nested_function_inside_a_with_is_not_looked_into() -> None:
    func = _function("""\
        def f():
            with m:
                def g():
                    x = 1
        """)
    enclosed = enclosed_lists(func)
    inner = func.body[0].body[0]  # type: ignore[attr-defined]
    assert id(func.body[0].body) in enclosed  # type: ignore[attr-defined]
    assert id(inner.body) not in enclosed


@pytest.mark.skipif(sys.version_info < (3, 11), reason="except* is 3.11's")
def test_a_try_with_star_clauses_encloses_its_lists() -> None:
    func = _function("""\
        def f():
            try:
                a = 1
            except* E:
                b = 2
        """)
    enclosed = enclosed_lists(func)
    node = func.body[0]
    assert id(node.body) in enclosed  # type: ignore[attr-defined]
    assert id(node.handlers[0].body) in enclosed  # type: ignore[attr-defined]


# ---------------------------------------------------------------------------
# loop_breaks and breaks_of


LOOP = """\
def f():
    while a:
        if b:
            break
        for x in y:
            break
        else:
            break
        with m:
            break
        try:
            break
        finally:
            pass
        try:
            break
        except E:
            break
        match v:
            case 1:
                break
"""


def test_a_loops_breaks_are_its_own_and_say_if_they_leave_through_a_cleanup() -> None:
    func = _function(LOOP)
    loop = func.body[0]
    assert isinstance(loop, ast.While)
    found = [(brk.lineno, through) for brk, _stmts, through in loop_breaks(loop)]
    # line 6 breaks the inner for (not this loop's); line 8 (its else) breaks this one
    assert found == [(4, False), (8, False), (10, True), (12, True), (16, False),
                     (18, False), (21, False)]
    for brk, stmts, _through in loop_breaks(loop):
        assert brk in stmts


def test_breaks_of_is_none_when_a_break_leaves_through_a_cleanup() -> None:
    loop = _function(LOOP).body[0]
    assert isinstance(loop, ast.While)
    assert breaks_of(loop) is None


def test_breaks_of_is_none_when_a_break_is_not_last_in_its_list() -> None:
    loop = _first("""\
        while a:
            if b:
                break
                x = 1
        """)
    assert isinstance(loop, ast.While)
    assert breaks_of(loop) is None


def test_breaks_of_lists_the_lists_that_end_in_a_break() -> None:
    loop = _first("""\
        for i in r:
            if b:
                x = 1
                break
            elif c:
                break
        """)
    assert isinstance(loop, ast.For)
    branch = loop.body[0]
    assert isinstance(branch, ast.If)
    inner = branch.orelse[0]
    assert isinstance(inner, ast.If)
    lists = breaks_of(loop)
    assert lists is not None
    assert [id(s) for s in lists] == [id(branch.body), id(inner.body)]


def test_a_loop_without_breaks_has_none() -> None:
    loop = _first("while a:\n    x = 1\n")
    assert isinstance(loop, ast.While)
    assert loop_breaks(loop) == []
    assert breaks_of(loop) == []


# ---------------------------------------------------------------------------
# Lines


def test_one_line_is_the_line_of_a_node_on_one_line() -> None:
    assert one_line(_first("\nx = 1\n")) == 2
    assert one_line(_first("x = (1,\n     2)\n")) is None
    assert one_line(ast.Pass()) is None  # no location at all


def test_a_for_loop_is_left_from_its_iterables_line() -> None:
    loop = _first("for x in (\n        items):\n    pass\n")
    assert loop_exit_line(loop) == 2


def test_a_while_loop_is_left_from_its_test_if_on_one_line() -> None:
    assert loop_exit_line(_first("while (\n    a):\n    pass\n")) == 2
    assert loop_exit_line(_first("while (a and\n       b):\n    pass\n")) is None


def test_only_loops_have_a_loop_exit_line() -> None:
    assert loop_exit_line(_first("if a:\n    pass\n")) is None
    assert loop_exit_line(None) is None


@pytest.mark.parametrize(("source", "line"), [
    ("x = 1\n", 1),
    ("with a:\n    x = 1\n", 1),  # a with's exit is at its header
    ("while a:\n    x = 1\n", 1),  # no break: left from its test
    ("for i in (\n   r):\n    x = 1\n", 2),  # left from its iterable
    ("while a:\n    pass\nelse:\n    y = 1\n", 4),  # left from its else's end
    ("try:\n    x = 1\nfinally:\n    y = 1\n    z = 2\n", 5),  # from its finally's end
    ("while a:\n    break\n", None),  # a break is a second way out
    ("if a:\n    x = 1\n", None),  # varies by branch
    ("try:\n    x = 1\nexcept E:\n    y = 1\n", None),
    ("match a:\n    case 1:\n        pass\n", None),
    ("def f():\n    pass\n", None),
    ("class C:\n    pass\n", None),
])
def test_exit_line_is_the_one_line_a_statement_falls_out_from(source: str,
                                                              line: int | None) -> None:
    assert exit_line(_first(source)) == line


def test_exit_line_passes_over_inserted_code_at_a_lists_end() -> None:
    stmt = _first("try:\n    x = 1\nfinally:\n    y = 1\n")
    assert isinstance(stmt, ast.Try)
    stmt.finalbody.append(assign("@pp_r", const(0)))
    assert exit_line(stmt) == 4
    only_inserted = _first("try:\n    x = 1\nfinally:\n    y = 1\n")
    assert isinstance(only_inserted, ast.Try)
    only_inserted.finalbody[:] = [assign("@pp_r", const(0))]
    assert exit_line(only_inserted) is None


def test_a_while_else_is_entered_from_its_test() -> None:
    loop = _first("while a:\n    pass\nelse:\n    x = 1\n")
    assert isinstance(loop, ast.While)
    assert entry_line(loop, loop.orelse) == 1
    assert entry_line(loop, loop.body) is None


def test_an_ifs_empty_else_is_entered_from_its_one_line_test() -> None:
    branch = _first("if a and b:\n    pass\n")
    assert isinstance(branch, ast.If)
    assert entry_line(branch, branch.orelse) == 1  # empty: all of it inserted
    branch.orelse.append(assign("@pp_r", const(1)))
    assert entry_line(branch, branch.orelse) == 1
    written = _first("if a:\n    pass\nelse:\n    y = 1\n")
    assert isinstance(written, ast.If)
    assert entry_line(written, written.orelse) is None  # the program's own else
    split = _first("if (a and\n    b):\n    pass\n")
    assert isinstance(split, ast.If)
    assert entry_line(split, split.orelse) is None


def _with_inserted_wildcard(source: str) -> ast.Match:
    match = _first(source)
    assert isinstance(match, ast.Match)
    wildcard = ast.match_case(pattern=ast.MatchAs(pattern=None, name=None), guard=None,
                              body=[])
    artificial(wildcard)
    match.cases.append(wildcard)
    return match


def test_an_inserted_wildcard_is_entered_from_the_last_cases_line() -> None:
    match = _with_inserted_wildcard("match v:\n    case 1 if g:\n        pass\n")
    assert entry_line(match, match.cases[-1].body) == 2
    assert entry_line(match, match.cases[0].body) is None


def test_an_inserted_wildcard_after_a_split_case_has_no_entry_line() -> None:
    guarded = _with_inserted_wildcard("match v:\n    case 1 if (\n        g):\n"
                                      "        pass\n")
    assert entry_line(guarded, guarded.cases[-1].body) is None
    split = _with_inserted_wildcard("match v:\n    case [1,\n          2]:\n        pass\n")
    assert entry_line(split, split.cases[-1].body) is None


def test_a_programs_own_last_case_has_no_entry_line() -> None:
    match = _first("match v:\n    case 1:\n        pass\n    case _:\n        pass\n")
    assert isinstance(match, ast.Match)
    assert entry_line(match, match.cases[-1].body) is None
