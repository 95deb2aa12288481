"""What the rewrite asks of a function's statements: where each one sits, which
statement lists lie inside a cleanup (``with``, ``finally``), a loop's ``break``
statements, and the one line a statement is left from, where there is one.

Read-only: nothing here changes the tree.
"""

from __future__ import annotations

import ast

from pathprof.constructs import FOR_LOOPS, LOOPS, SCOPES, TRIES, WITHS, construct, wraps
from pathprof.python.nodes import is_inserted

#: The fields of a statement (and of an ``except`` or ``case`` clause) that hold
#: statements or clauses: no expression holds a statement.
STATEMENT_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")


def statement_parents(func: ast.AST) -> dict[int, tuple[list[ast.stmt], int]]:
    """Statement id -> (the list holding it, its index), within one function (the
    functions and classes inside it included). Statements lie only in statement
    lists, so only statements, ``except`` clauses and ``case`` blocks are visited."""
    result: dict[int, tuple[list[ast.stmt], int]] = {}
    todo = [func]
    while todo:
        node = todo.pop()
        for field_name in ("body", "orelse", "finalbody"):
            stmts = getattr(node, field_name, None)
            if type(stmts) is list:
                for i, stmt in enumerate(stmts):
                    if isinstance(stmt, ast.stmt):
                        result[id(stmt)] = (stmts, i)
                        todo.append(stmt)
        for field_name in ("handlers", "cases"):
            todo += getattr(node, field_name, ())
    return result


def enclosed_lists(func: ast.AST) -> set[int]:
    """Ids of the statement lists of ``func`` (not of functions or classes nested in
    it) that lie inside a ``with``, or a ``try`` with a ``finally`` or ``except*``."""
    enclosed: set[int] = set()

    def visit(stmts: list[ast.stmt], inside: bool) -> None:
        if inside:
            enclosed.add(id(stmts))
        for stmt in stmts:
            if isinstance(stmt, SCOPES):
                continue
            inner_inside = inside or wraps(stmt)
            for field_name in ("body", "orelse", "finalbody"):
                inner = getattr(stmt, field_name, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                    visit(inner, inner_inside)
            for handler in getattr(stmt, "handlers", ()):
                visit(handler.body, inner_inside)
            for case in getattr(stmt, "cases", ()):
                visit(case.body, inner_inside)

    visit(func.body, False)  # type: ignore[attr-defined]
    return enclosed


def loop_breaks(loop: ast.For | ast.AsyncFor | ast.While
                ) -> list[tuple[ast.Break, list[ast.stmt], bool]]:
    """The ``break`` statements of ``loop`` (not of a loop inside it), each with its
    statement list and whether it leaves through a ``with`` or a ``finally`` (code
    runs between the break and the loop's end)."""
    found: list[tuple[ast.Break, list[ast.stmt], bool]] = []

    def visit(stmts: list[ast.stmt], through_cleanup: bool) -> None:
        for stmt in stmts:
            if isinstance(stmt, ast.Break):
                found.append((stmt, stmts, through_cleanup))
            elif isinstance(stmt, LOOPS):
                visit(stmt.orelse, through_cleanup)  # its body's breaks are its own
            elif isinstance(stmt, ast.If):
                visit(stmt.body, through_cleanup)
                visit(stmt.orelse, through_cleanup)
            elif isinstance(stmt, WITHS):
                visit(stmt.body, True)
            elif isinstance(stmt, TRIES):
                inner = through_cleanup or bool(stmt.finalbody)
                for part in (stmt.body, stmt.orelse, *(h.body for h in stmt.handlers)):
                    visit(part, inner)
                visit(stmt.finalbody, through_cleanup)
            elif isinstance(stmt, ast.Match):
                for case in stmt.cases:
                    visit(case.body, through_cleanup)

    visit(loop.body, False)
    return found


def breaks_of(loop: ast.For | ast.AsyncFor | ast.While) -> list[list[ast.stmt]] | None:
    """The statement lists that end in a ``break`` of ``loop``, or None if a break
    of it leaves through a ``with`` or a ``finally`` or is not the last statement
    of its list."""
    breaks = loop_breaks(loop)
    if any(through or stmts[-1] is not brk for brk, stmts, through in breaks):
        return None
    return [stmts for _, stmts, _ in breaks]


# ---------------------------------------------------------------------------
# The line a statement is left from


def one_line(node: ast.AST) -> int | None:
    """``node``'s line, if it lies on one line."""
    lineno = getattr(node, "lineno", None)
    return lineno if lineno is not None and lineno == getattr(node, "end_lineno", None) else None


def loop_exit_line(stmt: ast.stmt | None) -> int | None:
    """The line of the instructions that leave loop ``stmt`` when it ends without a
    break (``for``: getting the next item; ``while``: its test, if on one line)."""
    if isinstance(stmt, FOR_LOOPS):
        return stmt.iter.lineno
    if isinstance(stmt, ast.While):
        return one_line(stmt.test)
    return None


def exit_line(stmt: ast.stmt) -> int | None:
    """The one line every instruction that falls out of ``stmt`` has, if it is
    known statically: a ``with``'s exit, a loop's end without breaks, the end of a
    ``finally``, a simple statement's own line; None where it varies by way out."""
    if isinstance(stmt, WITHS):
        return stmt.lineno
    if isinstance(stmt, LOOPS):
        if breaks_of(stmt) != []:
            return None
        if stmt.orelse:
            return _list_exit_line(stmt.orelse)
        return loop_exit_line(stmt)
    if isinstance(stmt, TRIES) and stmt.finalbody:
        return _list_exit_line(stmt.finalbody)
    if isinstance(stmt, SCOPES) or construct(stmt) is not None:  # if, match, a try
        return None
    return stmt.lineno


def _list_exit_line(stmts: list[ast.stmt]) -> int | None:
    program = [stmt for stmt in stmts if not is_inserted(stmt)]
    return exit_line(program[-1]) if program else None


def entry_line(stmt: ast.stmt, way: list[ast.stmt]) -> int | None:
    """The line of the jumps into ``way``, one of ``stmt``'s ways out, if there may
    be several and they share a line: a ``while``'s ``else`` (both copies of its
    test), an ``if``'s empty ``else`` (a test of several conditions), the ``case _``
    pathprof adds after a last case whose pattern and guard fail on one line."""
    if isinstance(stmt, ast.While) and way is stmt.orelse:
        return loop_exit_line(stmt)
    if isinstance(stmt, ast.If) and way is stmt.orelse and all(map(is_inserted, way)):
        return one_line(stmt.test)
    if isinstance(stmt, ast.Match) and len(stmt.cases) > 1 and way is stmt.cases[-1].body \
            and is_inserted(stmt.cases[-1].pattern):  # type: ignore[arg-type]
        last = stmt.cases[-2]
        line = one_line(last.pattern)
        if line is not None and (last.guard is None or one_line(last.guard) == line):
            return line
    return None
