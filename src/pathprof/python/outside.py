"""Registers outside the frame, for functions whose source can look at their own.

pathprof's per-call state (the path register ``@pp_r`` and its companions, all
named ``@pp_*``) lives in locals of the measured function: recursion, threads and
generators then need no bookkeeping, and the code stays fast. A frame's locals are
visible, though, to code that reaches the frame: ``sys._getframe().f_locals``,
``inspect.currentframe()``, ``eval``/``exec`` with the default namespace, a
``breakpoint()``. CPython cannot hide a local of a function frame, so in the
functions whose own source can reach their frame this way, every ``@pp_*`` name
becomes an item of a dict the runtime keeps per frame, outside it
(:func:`pathprof.runtime.registers`). The program then sees only its own names,
at the cost of a call per probe in those functions only.

Invariant: the rewritten function computes exactly what it did with locals. Each
``@pp_*`` name is assigned before it is read in every call (the instrumentation
never reads an unbound local), so a dict left by an earlier frame at the same
address, which the next call may find, is never read before being overwritten.
"""

from __future__ import annotations

import ast
import sys
from typing import TypeVar

from pathprof.constructs import SCOPES
from pathprof.python.names import RETURN_VALUE
from pathprof.python.nodes import UNLOCATED, artificial_shell, load, walk
from pathprof.python.statements import STATEMENT_FIELDS


class _MoveOut(ast.NodeTransformer):
    """``@pp_x`` → ``_@pp_m.registers()['x']``; ``(@pp_x := v)`` →
    ``_@pp_m.assign('x', v)`` (the module state's, there even at shutdown). Nested
    functions and classes are left alone (each function is decided on its own)."""

    def __init__(self, prefix: str, runtime: str) -> None:
        self.prefix = prefix
        self.runtime = runtime

    def visit_FunctionDef(self, node: ast.AST) -> ast.AST:
        return node

    visit_AsyncFunctionDef = visit_ClassDef = visit_FunctionDef

    def _runtime(self, attr: str, node: ast.AST) -> ast.Attribute:
        func = ast.Attribute(value=load(self.runtime), attr=attr, ctx=ast.Load())
        return _located(func, node)

    def visit_Return(self, node: ast.Return) -> ast.AST:
        """``return @pp_v`` → ``return _@pp_m.registers().pop('v')``: the value a
        return kept while it counted its path leaves the table as it is returned (a
        table outlives its frame, for the next frame at that address: a value left in
        it would stay alive, where plain Python lets it go)."""
        value = node.value
        if isinstance(value, ast.Name) and value.id == RETURN_VALUE \
                and isinstance(value.ctx, ast.Load):
            table = _located(ast.Call(func=self._runtime("registers", value), args=[],
                                      keywords=[]), value)
            pop = _located(ast.Attribute(value=table, attr="pop", ctx=ast.Load()), value)
            key = _located(ast.Constant(value=value.id), value)
            node.value = _located(ast.Call(func=pop, args=[key], keywords=[]), value)
            return node
        self.generic_visit(node)
        return node

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if not node.id.startswith(self.prefix):
            return node
        table = _located(ast.Call(func=self._runtime("registers", node), args=[], keywords=[]),
                         node)
        key = _located(ast.Constant(value=node.id), node)
        return _located(ast.Subscript(value=table, slice=key, ctx=node.ctx), node)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> ast.AST:
        value = self.visit(node.value)
        if not node.target.id.startswith(self.prefix):
            node.value = value
            return node
        key = _located(ast.Constant(value=node.target.id), node)
        return _located(ast.Call(func=self._runtime("assign", node), args=[key, value],
                                 keywords=[]), node)


_Node = TypeVar("_Node", bound=ast.AST)


def _located(new: _Node, old: ast.AST) -> _Node:
    for field in ("lineno", "end_lineno", "col_offset", "end_col_offset"):
        setattr(new, field, getattr(old, field, -1))
    for part in walk(new):
        for field in ("lineno", "end_lineno", "col_offset", "end_col_offset"):
            if not hasattr(part, field) and field in part._attributes:
                setattr(part, field, getattr(old, field, -1))
    return new


def move_registers_out(func: ast.FunctionDef | ast.AsyncFunctionDef, prefix: str,
                       runtime: str) -> None:
    """Rewrite ``func``'s own code so that its ``prefix`` names live outside its frame."""
    mover = _MoveOut(prefix, runtime)
    func.body = [mover.visit(stmt) for stmt in func.body]
    if sys.version_info >= (3, 13):
        _guard_unlocated_calls(func.body, runtime)


def _guard_unlocated_calls(body: list[ast.stmt], runtime: str) -> None:
    """Each statement pathprof inserted without a location that now calls the runtime
    for its registers, put under ``if _@pp_m:`` (always true, no call).

    CPython 3.13 and 3.14 copy a block with no line number, an instruction that checks
    the eval breaker (a call) and several predecessors once per predecessor, so that
    each copy takes its predecessor's line (gh-107901); but they lay the copies out one
    after another, each falling into the next, so entering the second of three runs
    two of them. A count that runs twice counts another path, or one past the table
    (``IndexError``). Under the test, the call's block has one predecessor, and the
    test's own block, which several may reach, makes no call. Nested functions and
    classes are left alone (their own rewrite guards them)."""
    for index, stmt in enumerate(body):
        if isinstance(stmt, SCOPES):
            continue
        for field in STATEMENT_FIELDS:
            inner = getattr(stmt, field, None)
            if isinstance(inner, list) and inner:
                if field in ("handlers", "cases"):
                    for clause in inner:
                        _guard_unlocated_calls(clause.body, runtime)
                else:
                    _guard_unlocated_calls(inner, runtime)
        if (getattr(stmt, "lineno", None) == UNLOCATED
                and not isinstance(stmt, _COMPOUND) and _calls_runtime(stmt)):
            guard = ast.If(test=load(runtime), body=[stmt], orelse=[])
            body[index] = artificial_shell(guard)
            for part in walk(guard.test):
                if "lineno" in part._attributes:
                    part.lineno = part.end_lineno = UNLOCATED  # type: ignore[attr-defined]
                    part.col_offset = part.end_col_offset = -1  # type: ignore[attr-defined]


_COMPOUND = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try,
             ast.TryStar, ast.Match)


def _calls_runtime(stmt: ast.stmt) -> bool:
    """Whether ``stmt`` calls the runtime for a register (what ``_MoveOut`` wrote)."""
    return any(isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
               and node.func.attr in ("registers", "assign") for node in walk(stmt))
