"""What a function's control-flow graph is, as :mod:`pathprof.python.cfg` builds it:
blocks of source pieces, edges with the site where code for them can go in the AST,
the loops the syntax makes, ``finally`` bodies and the blocks where a path restarts
after an exception (the contract of docs/python.md).
"""

from __future__ import annotations

import ast
import enum
from dataclasses import dataclass, field

from pathprof.constructs import WITHS
from pathprof.contract import Role
from pathprof.graph.cfg import Cfg
from pathprof.types import BlockId

__all__ = ["NO_SITE", "Block", "Edge", "FinallyInfo", "FunctionCfg", "Loop", "Piece",
           "Restart", "RouteFlag", "Site", "SiteKind"]


@dataclass
class Piece:
    """One statement, or one part of a compound statement, inside a block."""

    node: ast.AST
    role: Role
    #: for FOR_ITER/FOR_NEXT/WITH_*: the compound statement the piece belongs to
    owner: ast.AST | None = None

    def span(self) -> tuple[int, int, int, int]:
        """``(line, col, end_line, end_col)`` of the source this piece stands for.

        A ``with`` piece stands for the header only (up to the last context
        manager), not for the body the statement node spans."""
        node = self.node
        if self.role in (Role.WITH_ENTER, Role.WITH_EXIT):
            assert isinstance(node, WITHS)
            last = node.items[-1]
            tail = last.optional_vars or last.context_expr
            return (node.lineno, node.col_offset, tail.end_lineno or node.lineno,
                    tail.end_col_offset or 0)
        decorators = getattr(node, "decorator_list", None)
        if decorators:  # a def or class statement starts with its decorators
            first = decorators[0]
            return (first.lineno, first.col_offset, node.end_lineno or node.lineno,  # type: ignore[attr-defined]
                    node.end_col_offset or 0)  # type: ignore[attr-defined]
        return (node.lineno, node.col_offset,  # type: ignore[attr-defined]
                node.end_lineno or node.lineno,  # type: ignore[attr-defined]
                node.end_col_offset or 0)  # type: ignore[attr-defined]


@dataclass
class Block:
    id: BlockId
    kind: str
    pieces: list[Piece] = field(default_factory=list)
    #: a short description for blocks without source (entry, exit, synthetic joins)
    label: str = ""

    def lines(self) -> tuple[int, int] | None:
        """First and last source line of the block's pieces, or None if it has none."""
        spans = [p.span() for p in self.pieces]
        if not spans:
            return None
        return min(s[0] for s in spans), max(s[2] for s in spans)


class SiteKind(enum.Enum):
    INSERT = "insert"  #: before ``stmts[index]`` (``index == len(stmts)``: at the end)
    RETURN = "return"  #: in ``return`` statement ``stmts[index]``, after its value
    GUARD = "guard"  #: inside a ``case`` guard, before the guard is evaluated
    DISPATCH = "dispatch"  #: at the end of a ``finally``, for one continuation
    #: before ``stmts[index]``, at the end of an ``except*`` clause (``node``: its
    #: ``try``; ``route``: which clause end, from 1), for the clause's hand-over: its
    #: count is noted there with the route, and made by the next clause's start or as
    #: the exception group leaves the ``try``
    PENDING = "pending"
    #: before ``stmts[index]`` (after the ``try`` ``node``, or at the start of its
    #: ``finally``), for the flow of an ``except*`` clause end into the code after
    #: it (its group fully handled): run there when that end's note is pending
    FLOW = "flow"
    NONE = "none"  #: nowhere: the edge must stay uninstrumented


@dataclass(frozen=True, eq=False)
class Site:
    """Where code for an edge goes."""

    kind: SiteKind
    stmts: list[ast.stmt] | None = None
    index: int = 0
    node: ast.AST | None = None  # match_case (GUARD) or Try (DISPATCH)
    route: int = 0  # DISPATCH: the continuation code


NO_SITE = Site(SiteKind.NONE)


@dataclass
class Edge:
    src: BlockId
    dst: BlockId
    label: str
    site: Site


@dataclass
class FinallyInfo:
    """A ``try`` statement with a ``finally`` clause."""

    index: int  # numbers the route flag ``@pp_k<index>``
    node: ast.Try | ast.TryStar
    start: BlockId  # first block of the finally (a restart block)
    exit: BlockId = -1  # block at whose end the continuation is dispatched
    #: continuation code -> (target block, label); filled as leaving statements are seen
    continuations: dict[int, tuple[BlockId, str]] = field(default_factory=dict)
    #: continuation code -> index of the enclosing finally it hands over to: that
    #: finally's route flag must say the same when this one dispatches to it
    forwards: dict[int, int] = field(default_factory=dict)


@dataclass
class RouteFlag:
    """``@pp_k<finally> = code`` before a leaving statement ``stmts[index]``."""

    stmts: list[ast.stmt]
    index: int
    finally_index: int
    code: int


@dataclass
class Restart:
    """A restart block and what enters it."""

    block: BlockId
    kind: str  # "handler", "with", "finally", "except*"
    node: ast.AST  # the ExceptHandler, With, or Try node


@dataclass(frozen=True)
class Loop:
    """A ``for`` or ``while`` loop: its header block and the blocks of its body."""

    header: BlockId
    body: frozenset[BlockId]


@dataclass
class FunctionCfg:
    """The CFG of one function, with what the instrumenter needs to find its sites."""

    node: ast.FunctionDef | ast.AsyncFunctionDef
    qualname: str
    blocks: list[Block]
    edges: list[Edge]
    entry: BlockId
    exit: BlockId
    restarts: list[Restart]
    finallies: list[FinallyInfo]
    route_flags: list[RouteFlag]
    #: bare ``raise`` statements: (statement list, index, block)
    bare_raises: list[tuple[list[ast.stmt], int, BlockId]]
    #: ``except*`` handlers whose end records the path: (handler, block at its end)
    star_handler_ends: list[tuple[ast.ExceptHandler, BlockId]]
    #: ``try`` statements with ``except*`` clauses whose ends flow on (docs/python.md):
    #: their clauses' hand-overs are PENDING edges
    star_flows: list[ast.TryStar]
    #: where the function body starts (after the docstring)
    body_start: int
    #: every loop, outer before inner
    loops: list[Loop] = field(default_factory=list)
    #: edge id -> the branch taken, for a branch that falls off the function's end
    #: (an ``if``'s false branch, a loop's exit): its edge is labelled "return"
    fall_off: dict[int, str] = field(default_factory=dict)

    @property
    def backedges(self) -> tuple[int, ...]:
        """Edge ids of the edges from a loop's body (or header) to its header."""
        inside: dict[BlockId, list[frozenset[BlockId]]] = {}
        for loop in self.loops:
            inside.setdefault(loop.header, []).append(loop.body | {loop.header})
        return tuple(eid for eid, e in enumerate(self.edges)
                     if any(e.src in body for body in inside.get(e.dst, ())))

    def to_graph(self) -> Cfg:
        return Cfg(
            len(self.blocks),
            self.entry,
            self.exit,
            tuple((e.src, e.dst) for e in self.edges),
            tuple(r.block for r in self.restarts),
            backedges=self.backedges,
        )

    def out_edges(self, block: BlockId) -> list[int]:
        return [i for i, e in enumerate(self.edges) if e.src == block]
