"""The rewrite's structural changes, made once every insert is in place.

While the rewriter collects its code, no statement list of the function changes
(:class:`~pathprof.python.rewrite.FunctionRewriter`); what moves statements comes
last, here: the ``try`` statements that put an observer around a ``with`` body,
a ``try`` with ``except*`` clauses, or a ``try`` with a ``finally``; and the
dispatch at the end of each ``finally``, sunk into the clause's branches.
"""

from __future__ import annotations

import ast
import copy
from typing import Any

from pathprof.constructs import LOOPS, TRIES
from pathprof.python.nodes import artificial, artificial_shell, is_inserted, line_anchor, locate_at
from pathprof.python.statements import breaks_of, entry_line, exit_line

__all__ = ["Structural", "apply_structural", "mark_route_test"]

#: One structural change the rewriter asks for: ``(kind, statement, what goes in)``.
#: ``("with", with, observer)``: the ``with`` body goes in ``try: ... except
#: <observer>``. ``("star", try, observer)``: a ``try`` with ``except*`` clauses
#: goes in one. ``("finally", try, observer)``: a ``try`` with a ``finally`` becomes
#: ``try: <its other clauses> except <observer>: ... finally: ...``, the observer
#: running before the ``finally`` when an exception leaves. ``("dispatch", try,
#: statements)``: the statements at the end of its ``finally`` are sunk.
#: (Any: the statement's and the third item's types follow the kind, which a tuple's
#: type cannot say so that code testing the kind is checked)
Structural = tuple[str, Any, Any]

#: An attribute of the tests pathprof puts at the end of a ``finally`` clause, one
#: per way the clause was entered (its last ``orelse`` is the way of falling in).
_ROUTE_TEST = "_pathprof_route_test"
#: An attribute of a ``try`` whose ``finally`` dispatch was sunk: the statement lists
#: that end its clause's copies of the way of falling through (None: not sunk).
_FALL_WAYS = "_pathprof_fall_ways"


def mark_route_test(branch: ast.If) -> None:
    """Note that ``branch`` tests how a ``finally`` clause was entered: its
    ``orelse`` goes on to the ways the clause was entered otherwise."""
    setattr(branch, _ROUTE_TEST, True)


def apply_structural(structural: list[Structural],
                     parents: dict[int, tuple[list[ast.stmt], int]],
                     mark_probes: bool = False) -> None:
    """Wrap ``with`` bodies and ``try``/``finally`` statements, and move the dispatch
    at the end of each ``finally`` into its branches (after the inserts). Inner
    ``finally`` clauses sink first: where a ``break`` in an inner clause also ends
    the outer clause, the inner dispatch must come before the outer one's, as the
    inner clause ends first (the outer one would end the path and leave the inner
    one nothing to count). ``parents``: the list holding each statement
    (:func:`~pathprof.python.statements.statement_parents`, taken before the
    inserts: the lists are the same, the indexes may have moved); ``mark_probes``:
    inserted code left unlocated (:attr:`~pathprof.python.plan.FunctionPlan.mark_probes`)."""
    dispatches = [(node, handler) for kind, node, handler in structural if kind == "dispatch"]
    for node, handler in reversed(dispatches):
        setattr(node, _FALL_WAYS, _sink_dispatch(node.finalbody, handler, mark_probes))
    for kind, node, handler in structural:
        if kind == "dispatch":
            continue
        if kind == "with":
            inner = ast.Try(body=node.body, handlers=[handler], orelse=[], finalbody=[])
            node.body = [artificial_shell(inner)]
            continue
        if kind == "star":
            # try/except* (no finally): our handler sees a group the try re-raises
            outer = ast.Try(body=[node], handlers=[handler], orelse=[], finalbody=[])
            ast.copy_location(outer, node)  # where the program's code begins
            stmts = parents[id(node)][0]
            stmts[next(i for i, s in enumerate(stmts) if s is node)] = outer
            continue
        # try/finally: the user's clauses move into an inner try, and the outer one
        # gets our handler, which runs before the finally when an exception leaves.
        body = node.body
        if node.handlers or node.orelse or isinstance(node, ast.TryStar):
            inner = type(node)(body=node.body, handlers=node.handlers, orelse=node.orelse,
                               finalbody=[])
            ast.copy_location(inner, node)
            body = [inner]
        outer = ast.Try(body=body, handlers=[handler], orelse=[], finalbody=node.finalbody)
        ast.copy_location(outer, node)
        stmts = parents[id(node)][0]
        stmts[next(i for i, s in enumerate(stmts) if s is node)] = outer


def _sink_dispatch(finalbody: list[ast.stmt], dispatch: list[ast.stmt],
                   mark_probes: bool = False) -> list[list[ast.stmt]] | None:
    """Move ``dispatch``, the code at the end of a ``finally`` clause, into each
    branch of the clause's last ``if`` (recursively), so that every copy follows
    one statement of the program's. Returns the statement lists where the copies'
    ways of falling through the clause end (None if nothing was moved): a clause
    whose last statement is this ``try`` goes on from there, and puts its own copies
    there (inner clauses are sunk first).

    The clause's exceptional copy ends in a ``RERAISE`` that CPython locates where
    the code before it is (each of the program's ways out gets a copy of the exit and
    the line of the code that leads to it); code without a location that several
    branches lead to would leave it with no line, and the frame the exception leaves
    with ``f_lineno`` None. A copy with one way in takes that line instead, so it
    starts no line of its own and tracers see nothing new. A copy that several ways
    reach, all from one line (a ``with``'s exits, a ``while``'s two tests), is located
    at that line, with the inserted code before it, for the same effect."""
    def branches(stmt: ast.stmt | None) -> list[list[ast.stmt]] | None:
        """The statement lists whose ends are ``stmt``'s ways out, if it has several
        and they are the ends of such lists (an ``if``, a ``match``, a ``try``
        without ``finally``)."""
        if stmt is None or is_inserted(stmt):
            return None
        if isinstance(stmt, ast.If):
            return [stmt.body, stmt.orelse]
        if isinstance(stmt, ast.Match):
            cases = [case.body for case in stmt.cases]
            last = stmt.cases[-1]
            if not (isinstance(last.pattern, ast.MatchAs) and last.pattern.pattern is None
                    and last.guard is None):  # no case may match: a way out of its own
                wildcard = ast.match_case(pattern=ast.MatchAs(pattern=None, name=None),
                                          guard=None, body=[])
                artificial(wildcard)
                stmt.cases.append(wildcard)
                cases.append(wildcard.body)
            return cases
        if isinstance(stmt, ast.Try) and not stmt.finalbody:
            return [stmt.orelse or stmt.body, *(h.body for h in stmt.handlers)]
        if isinstance(stmt, TRIES) and stmt.finalbody:
            # falls through at the end of its own clause's copies of falling through
            return getattr(stmt, _FALL_WAYS, None)
        if isinstance(stmt, LOOPS):
            breaks = breaks_of(stmt)
            if breaks is None:
                return None
            # The loop's else runs when it ends without a break; each break leaves
            # from the statement list it ends.
            return [stmt.orelse, *breaks]
        return None

    n = len(dispatch)
    if not n or len(finalbody) <= n or any(
            a is not b for a, b in zip(finalbody[-n:], dispatch, strict=True)):
        return None
    del finalbody[-n:]
    falls: list[list[ast.stmt]] = []

    def placed(copies: list[ast.stmt]) -> list[ast.stmt]:
        """``copies`` (a copy of the dispatch, about to be placed), its way of
        falling through noted."""
        way = copies
        while way and getattr(way[-1], _ROUTE_TEST, False):
            way = way[-1].orelse  # type: ignore[attr-defined]
        falls.append(way)
        return copies

    def sink(stmts: list[ast.stmt], way_in: int | None, breaks: bool = False) -> None:
        """Put a copy of the dispatch at the end of ``stmts`` or of each of its
        ways out; ``way_in`` is the line of the code that leads into ``stmts``
        if that list is empty (a loop's ``else``); ``breaks``: ``stmts`` ends in a
        ``break`` of a loop inside the clause, which goes on to the clause's end.
        A ``break`` met otherwise leaves a loop around the clause: the clause's end
        is not reached that way, and gets no copy."""
        tail = stmts[-1] if stmts else None
        if isinstance(tail, ast.Break):
            if breaks:
                stmts[-1:-1] = placed(copy.deepcopy(dispatch))  # before the break
            return
        ways = branches(tail)
        if ways is not None:
            loop = isinstance(tail, LOOPS)
            for number, way in enumerate(ways):
                sink(way, entry_line(tail, way), breaks=loop and number > 0)  # type: ignore[arg-type]
            return
        # Several ways may lead here (a with's normal and swallowing exits, a
        # loop's two tests, the artificial code after them): the copy and that code
        # are located at the one line they all come from, so the re-raise after
        # them has it too; at that line already, tracers see no new line.
        program = [i for i, stmt in enumerate(stmts) if not is_inserted(stmt)]
        line = exit_line(stmts[program[-1]]) if program else way_in
        copies = placed(copy.deepcopy(dispatch))
        if line is not None and not mark_probes:
            after = stmts[program[-1] + 1:] if program else stmts
            locate_at([*after, *copies], line_anchor(line))
        stmts.extend(copies)

    sink(finalbody, None)
    return falls
