"""Paths the source proves cannot run: one test, on names nothing changed in between,
taken both ways on one path.

The CFG knows nothing of what its tests mean, so some of its paths are infeasible
(Ball-Larus 1996, §1: "a path profile may include infeasible paths"; here, paths
that no input can run). This module proves the simplest and commonest kind
infeasible: the same condition is tested twice on a path, with opposite outcomes,
and nothing between the two tests can change its value. ``if x is None: ...`` and
later ``if x is not None:``, or one flag tested in two places, are the cases that
fill a function's missed paths with paths no test can run.

A test is *provable* when it is built of local names of the function (parameters
and names its own body binds, none declared ``global`` or ``nonlocal``, none a
nested function rebinds), constants, comparisons, ``and``/``or``/``not`` and
arithmetic; ``not E`` is ``E`` with the outcome flipped (so are ``is not`` and
``not in``). Between the two tests, a
statement that binds or deletes one of its names ends what is known of it; a call,
an ``await``, a ``yield``, a store into an attribute or item, or any part of a
compound statement other than a plain statement or test (a ``for``'s next item, a
``with``'s enter and exit) could change an object the names refer to, so it ends
what is known of every test but identity tests (``x is None``, ``a is b``), which
only rebinding can change. Operators' special methods are taken to change nothing.

Invariant: a path :func:`infeasible` names is one no execution can take (under the
assumption just stated); a path it does not name may still be infeasible (the
proof is sound, not complete).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from pathprof.analysis.decisions import decisions
from pathprof.contract import FunctionInfo, Piece
from pathprof.data.profile import FunctionProfile, Path

__all__ = ["Contradiction", "FunctionFacts", "function_facts", "infeasible"]

_PURE_EXPRESSIONS = (ast.Name, ast.Constant, ast.Compare, ast.BoolOp, ast.UnaryOp,
                     ast.BinOp, ast.Load, ast.boolop, ast.cmpop, ast.unaryop,
                     ast.operator)


@dataclass(frozen=True)
class _Test:
    """A provable test: its text with ``not`` taken off, which way ``not`` flips it,
    the names it reads and whether only rebinding can change it."""

    key: str
    flipped: bool
    names: frozenset[str]
    identity: bool


@dataclass(frozen=True)
class _Effect:
    """What a piece of code can change: the names it binds or deletes, and whether it
    can change objects (a call, a store into an attribute or item)."""

    binds: frozenset[str]
    opaque: bool


@dataclass(frozen=True)
class Contradiction:
    """Why a path cannot run: the test on ``first_line`` went one way, the same test
    on ``second_line`` the other."""

    test: str
    first_line: int
    second_line: int
    #: what the test was on ``first_line`` (the opposite on ``second_line``)
    first_outcome: bool = True

    def __str__(self) -> str:
        first, second = ("true", "false") if self.first_outcome else ("false", "true")
        return (f"`{self.test}` is {first} on line {self.first_line} but {second} on line "
                f"{self.second_line}, and nothing between can change it")


@dataclass
class FunctionFacts:
    """What the source says of each piece of one function."""

    tests: dict[Piece, _Test]
    effects: dict[Piece, _Effect]


_OPAQUE = _Effect(frozenset(), True)


def _function_node(tree: ast.Module, meta: FunctionInfo
                   ) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    for node in ast.walk(tree):
        if (isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
                and node.lineno == meta.first_line and node.name == meta.qualname.rsplit(
                    ".", 1)[-1]):
            return node
    return None


def _own_nodes(function: ast.AST) -> list[ast.AST]:
    """The nodes of a function's own scope (nested functions' and classes' bodies
    left out; their names and decorators kept)."""
    result: list[ast.AST] = []
    stack = list(ast.iter_child_nodes(function))
    while stack:
        node = stack.pop()
        result.append(node)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
                      | ast.Lambda):
            stack.extend(getattr(node, "decorator_list", []))
            continue
        if isinstance(node, ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp):
            continue
        stack.extend(ast.iter_child_nodes(node))
    return result


def _local_names(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """Names local to the function that nothing outside its own code can rebind."""
    arguments = function.args
    names = {a.arg for a in (*arguments.posonlyargs, *arguments.args,
                             *arguments.kwonlyargs)}
    names.update(a.arg for a in (arguments.vararg, arguments.kwarg) if a is not None)
    declared: set[str] = set()
    for node in _own_nodes(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            names.add(node.id)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            declared.update(node.names)
    for node in ast.walk(function):
        if node is not function and isinstance(node, ast.Nonlocal):
            declared.update(node.names)  # a nested function rebinds it
    return names - declared


def _position(node: ast.AST) -> tuple[int, int, int, int]:
    return (node.lineno, node.col_offset,  # type: ignore[attr-defined]
            node.end_lineno or node.lineno,  # type: ignore[attr-defined]
            node.end_col_offset or 0)  # type: ignore[attr-defined]


def _position_of(piece: Piece) -> tuple[int, int, int, int]:
    return (piece.line, piece.col, piece.end_line, piece.end_col)


def _inside(node: ast.AST, piece: Piece) -> bool:
    line, col, end_line, end_col = _position(node)
    return ((piece.line, piece.col) <= (line, col)
            and (end_line, end_col) <= (piece.end_line, piece.end_col))


def _test_of(node: ast.expr, local: set[str]) -> _Test | None:
    flipped = False
    while isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        node, flipped = node.operand, not flipped
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(
            node.ops[0], ast.IsNot | ast.NotIn):
        # ``a is not b`` is ``not (a is b)`` and ``a not in b`` ``not (a in b)``, by
        # the language's definition (``!=`` is left alone: ``__ne__`` may disagree)
        positive = ast.Is() if isinstance(node.ops[0], ast.IsNot) else ast.In()
        node, flipped = ast.Compare(node.left, [positive], node.comparators), not flipped
    parts = list(ast.walk(node))
    if not all(isinstance(part, _PURE_EXPRESSIONS) for part in parts):
        return None
    names = frozenset(part.id for part in parts if isinstance(part, ast.Name))
    if not names or not names <= local:
        return None
    identity = (isinstance(node, ast.Compare)
                and all(isinstance(op, ast.Is | ast.IsNot) for op in node.ops)
                and all(isinstance(o, ast.Name | ast.Constant)
                        for o in (node.left, *node.comparators)))
    return _Test(ast.unparse(node), flipped, names, identity)


def _effect_of(piece: Piece, by_line: dict[int, list[ast.AST]]) -> _Effect:
    if piece.role not in ("stmt", "test"):
        return _OPAQUE
    binds: set[str] = set()
    opaque = False
    for line in range(piece.line, piece.end_line + 1):
        for node in by_line.get(line, ()):
            if _inside(node, piece):
                opaque = _note_effect(node, binds) or opaque
    return _Effect(frozenset(binds), opaque)


def _note_effect(node: ast.AST, binds: set[str]) -> bool:
    """Add the names ``node`` binds to ``binds``; whether it can change objects."""
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
        binds.add(node.id)
    elif isinstance(node, ast.alias):
        binds.add((node.asname or node.name).split(".")[0])
    elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        binds.add(node.name)
    elif isinstance(node, ast.MatchAs | ast.MatchStar):
        if node.name:
            binds.add(node.name)
    elif isinstance(node, ast.Attribute | ast.Subscript):
        return isinstance(node.ctx, ast.Store | ast.Del)
    else:
        return isinstance(node, ast.Call | ast.Await | ast.Yield | ast.YieldFrom
                          | ast.Global | ast.Nonlocal | ast.Delete)
    return False


def function_facts(fn: FunctionProfile, tree: ast.Module) -> FunctionFacts | None:
    """The tests and effects of ``fn``'s pieces, from its module's parsed source; None
    when the source holds no such function (it changed since it was measured)."""
    meta = fn.meta
    function = _function_node(tree, meta)
    if function is None:
        return None
    local = _local_names(function)
    nodes = [n for n in _own_nodes(function) if hasattr(n, "lineno")]
    expressions: dict[tuple[int, int, int, int], ast.expr] = {
        _position(n): n for n in nodes if isinstance(n, ast.expr)}
    by_line: dict[int, list[ast.AST]] = {}
    for node in nodes:
        by_line.setdefault(getattr(node, "lineno"), []).append(node)  # noqa: B009
    facts = FunctionFacts({}, {})
    for block in meta.blocks:
        for piece in block.pieces:
            if piece.role == "test":
                found = expressions.get(_position_of(piece))
                test = _test_of(found, local) if found is not None else None
                if test is not None:
                    facts.tests[piece] = test
            facts.effects[piece] = _effect_of(piece, by_line)
    return facts


def infeasible(fn: FunctionProfile, path: Path, facts: FunctionFacts
               ) -> Contradiction | None:
    """The contradiction that proves ``path`` cannot run, or None if none is found."""
    meta = fn.meta
    taken = {d["block"]: d["taken"] for d in decisions(fn, path)}
    known: dict[str, tuple[bool, int, _Test]] = {}
    for block in path.blocks:
        pieces = meta.blocks[block].pieces
        if meta.blocks[block].kind == "handler":
            known.clear()  # what the exception's raise changed is not known
        for index, piece in enumerate(pieces):
            test = facts.tests.get(piece)
            branch = taken.get(block)
            if (test is not None and index == len(pieces) - 1
                    and branch in ("true", "false")):
                outcome = (branch == "true") != test.flipped
                earlier = known.get(test.key)
                if earlier is not None and earlier[0] != outcome:
                    return Contradiction(test.key, earlier[1], piece.line, earlier[0])
                known[test.key] = (outcome, piece.line, test)
                continue
            effect = facts.effects.get(piece, _OPAQUE)
            for key, (_outcome, _line, known_test) in list(known.items()):
                if known_test.names & effect.binds or (effect.opaque
                                                       and not known_test.identity):
                    del known[key]
    return None
