"""What pathprof knows of each kind of Python statement, in one table.

A path is a route through a function's statements (docs/python.md), so what a
statement kind *is* -- whether it loops, which of its fields hold statements, whether
code runs on the way out of its body, whether it opens a scope of its own -- decides
the CFG (:mod:`pathprof.python.cfg`), the rewrite (:mod:`pathprof.python`) and the
analyses that read the source (:mod:`pathprof.analysis`). They all ask here, so a
new statement kind is described once: :data:`CONSTRUCTS` for a compound statement,
:data:`SIMPLE` for a statement that runs straight through, :data:`LEAVING` for one
that leaves its statement list (``return``, ``raise``, ``break``, ``continue``).
``tests/test_constructs.py`` checks that every subclass of :class:`ast.stmt` of the
running Python is in exactly one of the three, so a Python that adds a statement
fails there, loudly, before any program meets it.

Invariant: the groups below (:data:`LOOPS`, :data:`WITHS`, ...) are unions of table
rows: a statement kind is a loop exactly when its row says so.

Imports nothing of pathprof (the front end and the analyses both read it).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Final

__all__ = [
    "CONSTRUCTS",
    "FOR_LOOPS",
    "FUNCTIONS",
    "LEAVING",
    "LOOPS",
    "SCOPES",
    "SIMPLE",
    "TRIES",
    "WITHS",
    "Construct",
    "construct",
    "wraps",
]


@dataclass(frozen=True)
class Construct:
    """One compound statement kind."""

    #: the fields that hold statement lists, in the order they can run
    bodies: tuple[str, ...]
    #: the fields that hold clauses with bodies of their own (``except``, ``case``)
    clauses: tuple[str, ...] = ()
    #: runs its body again (``for``, ``while``): its back edges end paths
    loop: bool = False
    #: code runs on every way out of its body (a ``with``'s ``__exit__``; a ``try``
    #: does where it has a ``finally`` or ``except*`` clauses)
    wraps: bool = False
    #: chooses among its bodies by a test, a pattern or an exception
    branches: bool = False
    #: ``async`` form (``async for``, ``async with``)
    is_async: bool = False


#: Every compound statement kind the CFG has a rule for.
CONSTRUCTS: Final[dict[type[ast.AST], Construct]] = {
    ast.If: Construct(bodies=("body", "orelse"), branches=True),
    ast.While: Construct(bodies=("body", "orelse"), loop=True, branches=True),
    ast.For: Construct(bodies=("body", "orelse"), loop=True, branches=True),
    ast.AsyncFor: Construct(bodies=("body", "orelse"), loop=True, branches=True,
                            is_async=True),
    ast.With: Construct(bodies=("body",), wraps=True),
    ast.AsyncWith: Construct(bodies=("body",), wraps=True, is_async=True),
    ast.Try: Construct(bodies=("body", "orelse", "finalbody"), clauses=("handlers",),
                       branches=True),
    ast.Match: Construct(bodies=(), clauses=("cases",), branches=True),
}
if hasattr(ast, "TryStar"):  # (3.11+, the baseline: always there)
    CONSTRUCTS[ast.TryStar] = Construct(bodies=("body", "orelse", "finalbody"),
                                        clauses=("handlers",), wraps=True, branches=True)

#: Statements that leave their statement list: each has a CFG rule of its own.
LEAVING: Final[tuple[type[ast.stmt], ...]] = (ast.Return, ast.Raise, ast.Break,
                                              ast.Continue)

#: Statements that run straight through: one piece of a block each. A ``def`` or
#: ``class`` is one too, here: its body is a function (or namespace) of its own.
SIMPLE: tuple[type[ast.stmt], ...] = (
    ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Import, ast.ImportFrom,
    ast.Global, ast.Nonlocal, ast.Pass, ast.Delete, ast.Assert,
    ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
)
if hasattr(ast, "TypeAlias"):  # Python 3.12+
    SIMPLE = (*SIMPLE, ast.TypeAlias)

#: ``def`` and ``async def``.
FUNCTIONS: Final = (ast.FunctionDef, ast.AsyncFunctionDef)
#: The statements whose bodies are scopes of their own: not part of the enclosing
#: function's paths.
SCOPES: Final = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
#: The loops (rows with ``loop``).
LOOPS: Final = (ast.For, ast.AsyncFor, ast.While)
#: The loops over an iterator.
FOR_LOOPS: Final = (ast.For, ast.AsyncFor)
#: The ``with`` statements.
WITHS: Final = (ast.With, ast.AsyncWith)
#: The ``try`` statements, with ``except`` or ``except*`` clauses.
TRIES: Final = (ast.Try, ast.TryStar)


def wraps(node: ast.AST) -> bool:
    """Whether code runs on every way out of ``node``'s body: a ``with``, a ``try``
    with a ``finally``, or one with ``except*`` clauses (a group's rest goes on)."""
    row = CONSTRUCTS.get(type(node))
    if row is None:
        return False
    return row.wraps or (isinstance(node, ast.Try) and bool(node.finalbody))


def construct(node: ast.AST) -> Construct | None:
    """The row of ``node``'s kind; None for a simple or leaving statement (and for
    anything that is not a statement)."""
    return CONSTRUCTS.get(type(node))
