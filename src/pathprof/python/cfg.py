"""Python source to control-flow graphs: one :class:`FunctionCfg` per function.

What a block and a path are in Python is the contract of docs/python.md: blocks are runs
of statements; decisions are ``if``/``elif``/``while`` tests, the ``for`` step, ``match``
cases and guards, ``try`` dispatch, ``with`` exits, and the statements that leave a
block (``return``, ``raise``, ``break``, ``continue``). Expressions (``and``/``or``,
conditional expressions, comprehensions, lambdas) do not split blocks.

Backedges come from the loop structure the syntax makes explicit, never from the
order of a search: every edge from a block inside a loop's body (handlers,
``finally`` and ``with`` exits reached by an exception, ``continue``, a nested
loop's exit included) to that loop's header is a backedge, and no other edge is.
So every iteration's path starts at the header, including an iteration that
follows an exception caught inside the body (docs/python.md).

Every CFG edge records its *site*: where code for that edge can go in the AST, or
that it has none (then it must stay uninstrumented, a tree edge). Blocks where a
path restarts after an exception (``except`` bodies, the code after a ``with`` whose
``__exit__`` may swallow an exception, a ``finally`` entered by an exception, the code
after an ``except*`` try) are the CFG's restart blocks.

What the graph is: :mod:`pathprof.python.cfgtypes`. This module knows nothing of
probes; :mod:`pathprof.python.instrument` turns the
sites into code.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from pathprof.constructs import FUNCTIONS, SIMPLE
from pathprof.contract import Role
from pathprof.python.cfgtypes import (
    NO_SITE,
    Block,
    Edge,
    FinallyInfo,
    FunctionCfg,
    Loop,
    Piece,
    Restart,
    RouteFlag,
    Site,
    SiteKind,
)
from pathprof.types import BlockId

__all__ = ["build_cfg", "is_constant_true", "iter_functions"]


# Continuation codes of a ``finally`` (stored in its route flag).
ROUTE_FALL, ROUTE_RETURN, ROUTE_BREAK, ROUTE_CONTINUE, ROUTE_RAISE = 0, 1, 2, 3, -1


# ---------------------------------------------------------------------------
# The builder


@dataclass
class _Pending:
    """An edge whose target is not known yet: control leaves ``src`` here."""

    src: BlockId
    label: str
    site: Site


@dataclass
class _Loop:
    header: BlockId
    breaks: list[_Pending]
    #: blocks made while the loop's body is built
    body: set[BlockId] = field(default_factory=set)


@dataclass
class _With:
    node: ast.With | ast.AsyncWith


@dataclass
class _Finally:
    info: FinallyInfo


_Context = _Loop | _With | _Finally

_CONSTANT_TRUE = (True, 1)


def is_constant_true(test: ast.expr) -> bool:
    return isinstance(test, ast.Constant) and test.value in _CONSTANT_TRUE and bool(test.value)


def _is_irrefutable(pattern: ast.pattern) -> bool:
    if isinstance(pattern, ast.MatchAs):
        return pattern.pattern is None or _is_irrefutable(pattern.pattern)
    if isinstance(pattern, ast.MatchOr):
        return any(_is_irrefutable(p) for p in pattern.patterns)
    return False


class _Builder:
    """Walks one function's statements, keeping the edges that leave the code so far."""

    def __init__(self, node: ast.FunctionDef | ast.AsyncFunctionDef, qualname: str,
                 star_flows_on: bool = True) -> None:
        self.node = node
        self.qualname = qualname
        self.blocks: list[Block] = []
        self.edges: list[Edge] = []
        self.restarts: list[Restart] = []
        self.finallies: list[FinallyInfo] = []
        self.route_flags: list[RouteFlag] = []
        self.bare_raises: list[tuple[list[ast.stmt], int, BlockId]] = []
        self.star_handler_ends: list[tuple[ast.ExceptHandler, BlockId]] = []
        self.star_flows_on = star_flows_on
        self.star_flows: list[ast.TryStar] = []
        self.context: list[_Context] = []
        self.loops: list[_Loop] = []
        self.entry = self.new_block("entry", f"entry to {qualname}")
        self.exit = self.new_block("exit", f"exit from {qualname}")
        # Control state: edges leaving the code so far, and the block that may still
        # take more statements (its only pending edge is a plain fall-through).
        self.pending: list[_Pending] = []
        self.open: BlockId | None = None
        self.has_out_edges: set[BlockId] = set()

    # -- blocks and edges -------------------------------------------------

    def new_block(self, kind: str, label: str = "") -> BlockId:
        block = len(self.blocks)
        self.blocks.append(Block(block, kind, label=label))
        for ctx in self.context:
            if isinstance(ctx, _Loop):
                ctx.body.add(block)
        return block

    def enter_loop(self, header: BlockId) -> _Loop:
        loop = _Loop(header, [])
        self.loops.append(loop)
        self.context.append(loop)
        return loop

    def edge(self, src: BlockId, dst: BlockId, label: str, site: Site) -> None:
        self.edges.append(Edge(src, dst, label, site))
        self.has_out_edges.add(src)

    def mergeable(self) -> BlockId | None:
        """The block the next statement can join: control just falls out of it."""
        if len(self.pending) != 1:
            return None
        p = self.pending[0]
        if p.label not in ("next", "with") or p.src in self.has_out_edges:
            return None
        return p.src

    def connect(self, pending: Sequence[_Pending], dst: BlockId) -> None:
        for p in pending:
            self.edge(p.src, dst, p.label, p.site)

    def start_block(self, kind: str, label: str = "") -> BlockId:
        """A new block that the pending edges flow into."""
        block = self.new_block(kind, label)
        self.connect(self.pending, block)
        self.pending = []
        self.open = block
        return block

    def current_block(self, kind: str = "code") -> BlockId:
        """The block the next piece goes into: the open block, or a new one."""
        merge = self.mergeable()
        if merge is not None:
            self.pending = []
            return merge
        if self.open is not None and not self.pending and not self.blocks[self.open].pieces:
            return self.open  # an empty block reached by edges made earlier
        return self.start_block(kind)

    def add_piece(self, piece: Piece, stmts: list[ast.stmt], index: int, kind: str = "code"
                  ) -> BlockId:
        """Append a piece; control falls through after ``stmts[index]``."""
        block = self.current_block(kind)
        self.blocks[block].pieces.append(piece)
        self.pending = [_Pending(block, "next", Site(SiteKind.INSERT, stmts, index + 1))]
        self.open = block
        return block

    def leave(self) -> None:
        """Control does not fall through (return, raise, break, continue)."""
        self.pending = []
        self.open = None

    # -- statement lists --------------------------------------------------

    def body(self, stmts: list[ast.stmt], start: int = 0) -> None:
        for index in range(start, len(stmts)):
            if not self.pending and self.open is None:
                # Unreachable code: give it a block of its own with no way in.
                self.open = self.new_block("code", "unreachable")
            self.statement(stmts, index)

    def statement(self, stmts: list[ast.stmt], index: int) -> None:
        node = stmts[index]
        handler = getattr(self, f"_handle_{type(node).__name__}", None)
        if handler is None:
            if not isinstance(node, SIMPLE):
                raise NotImplementedError(f"no CFG rule for {type(node).__name__}")
            self.add_piece(Piece(node, Role.STMT), stmts, index)
        else:
            handler(node, stmts, index)

    def branch(self, stmts: list[ast.stmt], entry: _Pending) -> list[_Pending]:
        """Build a nested statement list entered by one edge; return its exits.

        The entering edge's site is the start of the list, so the list always
        starts a new block."""
        self.pending = [entry]
        self.open = None
        self.start_block("code")
        self.body(stmts)
        exits = self.pending
        return exits

    # -- simple leaving statements -----------------------------------------

    def _route(self, stmts: list[ast.stmt], index: int, block: BlockId, kind: str) -> None:
        """Edges for return/break/continue from ``block``, through any finally."""
        code = {"return": ROUTE_RETURN, "break": ROUTE_BREAK, "continue": ROUTE_CONTINUE}[kind]
        if kind == "return":
            # Code for the return edge runs once the value is computed.
            site = Site(SiteKind.RETURN, stmts, index, stmts[index])
        else:
            site = Site(SiteKind.INSERT, stmts, index)
        src = block
        for ctx in reversed(self.context):
            if isinstance(ctx, _With):
                # __exit__ runs between the code before a break and the jump: no
                # site. (A return keeps its site; the runtime takes the count back
                # if __exit__ raises. A continue keeps its site too: see the docs.)
                site = NO_SITE if kind == "break" else site
            elif isinstance(ctx, _Finally):
                info = ctx.info
                self.route_flags.append(RouteFlag(stmts, index, info.index, code))
                # The finally runs between a return's value and its return: no site.
                self.edge(src, info.start, kind, NO_SITE if kind == "return" else site)
                # Where this continuation goes after the finally is decided by the
                # contexts outside it; remember the first hop.
                self._finally_continuation(info, code, kind, self.context.index(ctx))
                return
            elif isinstance(ctx, _Loop) and kind in ("break", "continue"):
                if kind == "break":
                    ctx.breaks.append(_Pending(src, "break", site))
                else:
                    self.edge(src, ctx.header, "continue", site)
                return
        if kind != "return":
            raise SyntaxError(f"'{kind}' outside loop")  # the compiler says the same
        self.edge(src, self.exit, "return", site)

    def _finally_continuation(self, info: FinallyInfo, code: int, kind: str, depth: int) -> None:
        """Record where ``info``'s finally goes next for continuation ``code``."""
        if code in info.continuations:
            return
        target: BlockId | None = None
        for ctx in reversed(self.context[:depth]):
            if isinstance(ctx, _Finally):
                target = ctx.info.start
                info.forwards[code] = ctx.info.index
                self._finally_continuation(ctx.info, code, kind, self.context.index(ctx))
                break
            if isinstance(ctx, _Loop) and kind in ("break", "continue"):
                target = ctx.header if kind == "continue" else -1
                break
        if target is None:
            target = self.exit
        info.continuations[code] = (target, kind)

    def _handle_Return(self, node: ast.Return, stmts: list[ast.stmt], index: int) -> None:
        block = self.add_piece(Piece(node, Role.STMT), stmts, index)
        self.leave()
        self._route(stmts, index, block, "return")

    def _handle_Break(self, node: ast.Break, stmts: list[ast.stmt], index: int) -> None:
        block = self.add_piece(Piece(node, Role.STMT), stmts, index)
        self.leave()
        self._route(stmts, index, block, "break")

    def _handle_Continue(self, node: ast.Continue, stmts: list[ast.stmt], index: int) -> None:
        block = self.add_piece(Piece(node, Role.STMT), stmts, index)
        self.leave()
        self._route(stmts, index, block, "continue")

    def _handle_Raise(self, node: ast.Raise, stmts: list[ast.stmt], index: int) -> None:
        block = self.add_piece(Piece(node, Role.STMT), stmts, index)
        self.leave()
        if node.exc is None:
            # A bare raise re-raises: the traceback still points where the exception
            # first arose, so the path is recorded by code placed just before it.
            self.bare_raises.append((stmts, index, block))
            self.edge(block, self.exit, "raise", Site(SiteKind.INSERT, stmts, index))
        else:
            self.edge(block, self.exit, "raise", NO_SITE)

    # -- compound statements ----------------------------------------------

    def _handle_If(self, node: ast.If, stmts: list[ast.stmt], index: int) -> None:
        test = self.add_piece(Piece(node.test, Role.TEST), stmts, index, kind="test")
        self.pending = []
        exits = self.branch(node.body, _Pending(test, "true", Site(SiteKind.INSERT, node.body, 0)))
        false = _Pending(test, "false", Site(SiteKind.INSERT, node.orelse, 0))
        if node.orelse:
            exits = exits + self.branch(node.orelse, false)
        else:
            exits = [*exits, false]
        self.pending = exits
        self.open = None

    def _loop_header(self, kind: str) -> BlockId:
        if self.open is not None and not self.pending and not self.blocks[self.open].pieces:
            self.blocks[self.open].kind = kind
            return self.open
        return self.start_block(kind)

    def close_loop(self, node: ast.While | ast.For | ast.AsyncFor, exits: list[_Pending],
                   header: BlockId) -> None:
        """Connect the edges that fall off the end of a loop's body to its header.

        These are backedges, and a backedge needs a site for its code (count the
        path, start the next). An edge that has none -- a ``break`` out of an inner
        loop through a ``with``, the last ``case`` of a ``match`` failing -- comes
        through a join block at the end of the body instead; the join's one edge to
        the header has the end of the body as its site, which every edge that falls
        off the body passes."""
        if all(p.site.kind is not SiteKind.NONE for p in exits):
            self.connect(exits, header)
            return
        join = self.new_block("code", f"end of loop body at line {node.body[-1].end_lineno}")
        self.connect(exits, join)
        self.edge(join, header, "next", Site(SiteKind.INSERT, node.body, len(node.body)))

    def _handle_While(self, node: ast.While, stmts: list[ast.stmt], index: int) -> None:
        header = self._loop_header("loop")
        self.blocks[header].pieces.append(Piece(node.test, Role.TEST))
        loop = self.enter_loop(header)
        body_site = Site(SiteKind.INSERT, node.body, 0)
        exits = self.branch(node.body, _Pending(header, "true", body_site))
        self.close_loop(node, exits, header)
        self.context.pop()
        self.pending = []
        if not is_constant_true(node.test):
            done = _Pending(header, "false", Site(SiteKind.INSERT, node.orelse, 0))
            if node.orelse:
                self.pending = self.branch(node.orelse, done)
            else:
                self.pending = [done]
        self.pending = self.pending + loop.breaks
        self.open = None

    def _handle_For(self, node: ast.For | ast.AsyncFor, stmts: list[ast.stmt], index: int) -> None:
        # The iterable is evaluated once, in the block before the loop. No code can go
        # between it and the first step, so the edge into the header has no site.
        self.add_piece(Piece(node.iter, Role.FOR_ITER, node), stmts, index)
        (before,) = self.pending
        self.pending = [_Pending(before.src, "loop", NO_SITE)]
        self.open = None
        header = self.start_block("for")
        self.blocks[header].pieces.append(Piece(node.target, Role.FOR_NEXT, node))
        loop = self.enter_loop(header)
        body_site = Site(SiteKind.INSERT, node.body, 0)
        exits = self.branch(node.body, _Pending(header, "next", body_site))
        self.close_loop(node, exits, header)
        self.context.pop()
        done = _Pending(header, "exhausted", Site(SiteKind.INSERT, node.orelse, 0))
        self.pending = self.branch(node.orelse, done) if node.orelse else [done]
        self.pending = self.pending + loop.breaks
        self.open = None

    _handle_AsyncFor = _handle_For

    def _handle_With(self, node: ast.With | ast.AsyncWith, stmts: list[ast.stmt], index: int
                     ) -> None:
        block = self.add_piece(Piece(node, Role.WITH_ENTER, node), stmts, index)
        # No decision on entry: the body continues the block.
        self.pending = [_Pending(block, "with", Site(SiteKind.INSERT, node.body, 0))]
        self.context.append(_With(node))
        self.body(node.body)
        exits = self.pending
        self.context.pop()
        # The code after the with starts with __exit__; an exception that __exit__
        # swallows restarts a path there.
        after = self.new_block("with-after", f"end of with at line {node.lineno}")
        self.blocks[after].pieces.append(Piece(node, Role.WITH_EXIT, node))
        self.connect(exits, after)
        self.restarts.append(Restart(after, "with", node))
        self.pending = [_Pending(after, "next", Site(SiteKind.INSERT, stmts, index + 1))]
        self.open = after

    _handle_AsyncWith = _handle_With

    def _handle_Try(self, node: ast.Try | ast.TryStar, stmts: list[ast.stmt], index: int) -> None:
        star = isinstance(node, ast.TryStar)
        info: FinallyInfo | None = None
        if node.finalbody:
            start = self.new_block("finally", f"finally at line {node.finalbody[0].lineno}")
            info = FinallyInfo(len(self.finallies), node, start)
            self.finallies.append(info)
            self.restarts.append(Restart(start, "finally", node))
            self.context.append(_Finally(info))
        # The try body continues the current code (a try costs nothing on entry).
        self.body(node.body)
        exits = self.pending
        if node.orelse and exits:
            self.body(node.orelse)
            exits = self.pending
        handler_exits: list[_Pending] = []
        ends: list[tuple[ast.ExceptHandler, list[_Pending]]] = []
        for handler in node.handlers:
            block = self.new_block("handler", f"except at line {handler.lineno}")
            self.restarts.append(Restart(block, "except*" if star else "handler", handler))
            self.pending = []
            self.open = block
            self.body(handler.body)
            if star:
                ends.append((handler, self.clause_end(handler)))
            else:
                handler_exits.extend(self.pending)
        # The end of an except* clause hands its group's rest over to the next matching
        # clause, or the try re-raises what no clause handled: a transfer, which ends
        # the path ("except* done"). Or the group is fully handled and the clause flows
        # on to the code after the try, with no cut, as an ordinary handler's end does.
        # Which of the two happens is known only after the clause: the hand-over is
        # noted at the clause's end (a PENDING edge) and counted when it happens
        # (:meth:`clause_end` gives every clause's end a place for that code). Event
        # counting needs no paths: there every clause of the try ends its path, and the
        # code after the try restarts one.
        flows_on = star and self.star_flows_on
        if flows_on:
            self.star_flows.append(node)  # type: ignore[arg-type]
        after = ((node.finalbody, 0) if node.finalbody else (stmts, index + 1))
        route = 0
        for handler, pending in ends:
            for p in pending:
                route += 1
                site = (Site(SiteKind.PENDING, p.site.stmts, p.site.index, node, route)
                        if flows_on else p.site)
                self.edge(p.src, self.exit, "except* done", site)
                self.star_handler_ends.append((handler, p.src))
                if flows_on:
                    handler_exits.append(_Pending(p.src, p.label, Site(
                        SiteKind.FLOW, after[0], after[1], node, route)))
        exits = exits + handler_exits
        if star and not flows_on:
            after_block = self.new_block("after-try*", f"after try at line {node.lineno}")
            self.restarts.append(Restart(after_block, "except*", node))
            self.connect(exits, after_block)
            exits = [_Pending(after_block, "next", Site(SiteKind.INSERT, stmts, index + 1))]
        if info is not None:
            self.context.pop()
            self.connect(exits, info.start)
            self.pending = []
            self.open = info.start
            self.body(node.finalbody)
            # The finally's end dispatches on how it was entered.
            end_site_index = len(node.finalbody)
            merge = self.mergeable()
            if merge is not None:
                finally_exit = merge
            else:
                finally_exit = self.new_block("finally-exit", f"end of finally at line "
                                              f"{node.finalbody[-1].end_lineno}")
                self.connect(self.pending, finally_exit)
            info.exit = finally_exit
            self.leave()
            self._finally_edges(info, node, stmts, index, end_site_index)
        else:
            self.pending = exits
            self.open = exits[0].src if len(exits) == 1 else None

    _handle_TryStar = _handle_Try

    def clause_end(self, handler: ast.ExceptHandler) -> list[_Pending]:
        """The edges out of the end of ``except*`` clause ``handler``, just built, each
        with a place for code before a statement (an INSERT site), where the clause's
        hand-over is noted (:attr:`SiteKind.PENDING`).

        A clause whose last statement is compound may end by edges with no such place:
        a ``finally``'s dispatch (a ``try``/``finally``, a ``break`` through one), a
        ``match`` no case of which matched, the flow of a nested ``try`` with
        ``except*`` clauses. Those edges then join in an empty block at the clause's
        end, whose one edge out is the clause's end (with paths: the end of a clause
        whose group is fully handled flows on, DESIGN §4, whatever it ends in)."""
        ends = self.pending
        if not self.star_flows_on or all(p.site.kind is SiteKind.INSERT for p in ends):
            return ends
        join = self.start_block("code", f"end of except* clause at line {handler.lineno}")
        self.pending = [_Pending(join, "next",
                                 Site(SiteKind.INSERT, handler.body, len(handler.body)))]
        return self.pending

    def _finally_edges(self, info: FinallyInfo, node: ast.Try | ast.TryStar,
                       stmts: list[ast.stmt], index: int, end: int) -> None:
        src = info.exit

        def site(code: int) -> Site:
            return Site(SiteKind.DISPATCH, node.finalbody, end, node, code)

        self.edge(src, self.exit, "re-raise", site(ROUTE_RAISE))
        pending = [_Pending(src, "next", site(ROUTE_FALL))]
        for code, (target, kind) in sorted(info.continuations.items()):
            if kind == "break" and target == -1:
                loop = next(c for c in reversed(self.context) if isinstance(c, _Loop))
                loop.breaks.append(_Pending(src, "break", site(code)))
            else:
                self.edge(src, target, kind, site(code))
        self.pending = pending
        self.open = None

    def _handle_Match(self, node: ast.Match, stmts: list[ast.stmt], index: int) -> None:
        self.add_piece(Piece(node.subject, Role.SUBJECT), stmts, index)
        (before,) = self.pending
        # Case blocks first, so that a failing case can point at the next one. No code
        # can go between matching steps: those edges have no site.
        cases = [self.new_block("case") for _ in node.cases]
        for block, case in zip(cases, node.cases, strict=True):
            self.blocks[block].pieces.append(Piece(case.pattern, Role.PATTERN))
        self.edge(before.src, cases[0], "match", NO_SITE)
        exits: list[_Pending] = []
        for number, (block, case) in enumerate(zip(cases, node.cases, strict=True), 1):
            body_site = Site(SiteKind.INSERT, case.body, 0)
            fails: list[_Pending] = []
            if case.guard is not None:
                guard = self.new_block("guard")
                self.blocks[guard].pieces.append(Piece(case.guard, Role.GUARD))
                self.edge(block, guard, f"case {number} matches", Site(SiteKind.GUARD, node=case))
                exits += self.branch(case.body, _Pending(guard, "guard true", body_site))
                fails = [_Pending(block, f"case {number} fails", NO_SITE),
                         _Pending(guard, "guard false", NO_SITE)]
            else:
                exits += self.branch(case.body, _Pending(block, f"case {number}", body_site))
                if not _is_irrefutable(case.pattern):
                    fails = [_Pending(block, f"case {number} fails", NO_SITE)]
            if number < len(cases):
                self.connect(fails, cases[number])
            else:
                exits += fails
        self.pending = exits
        self.open = None

    # Function and class definitions inside a function are simple statements here
    # (pathprof.constructs.SIMPLE): their bodies get CFGs of their own.


def _docstring_length(body: list[ast.stmt]) -> int:
    first = body[0] if body else None
    if (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    ):
        return 1
    return 0


def build_cfg(node: ast.FunctionDef | ast.AsyncFunctionDef, qualname: str,
              star_flows_on: bool = True) -> FunctionCfg:
    """Build the CFG of one function.

    Parameters
    ----------
    node : ast.FunctionDef or ast.AsyncFunctionDef
    qualname : str
        The function's qualified name (``Class.method``, ``outer.<locals>.inner``).
    star_flows_on : bool
        Whether the end of an ``except*`` clause flows on to the code after its
        ``try`` (paths, docs/python.md); False for event counting, which needs no paths:
        every clause's end then ends a path, and the code after the try restarts one.

    Returns
    -------
    FunctionCfg
        Invariant: every block that can be reached has a way to EXIT in the DAG of
        :func:`pathprof.graph.to_dag` (so it can be numbered); edges without a site
        never form a cycle (so the spanning tree can hold them all).
    """
    builder = _Builder(node, qualname, star_flows_on)
    start = _docstring_length(node.body)
    first = builder.new_block("code")
    site = Site(SiteKind.INSERT, node.body, start)
    builder.edge(builder.entry, first, "call", site)
    builder.open = first
    builder.pending = []
    if start < len(node.body):
        builder.body(node.body, start)
    # Falling off the end returns None. A way off the end with no place for code (a
    # match none of whose cases matched) joins the others first, so that the return
    # edge, which ends the path and must count it, has a place: the function's end.
    if any(p.site.kind is SiteKind.NONE for p in builder.pending):
        join = builder.start_block("code")
        builder.pending = [_Pending(join, "next", Site(SiteKind.INSERT, node.body,
                                                       len(node.body)))]
    fall_off = {}
    for p in builder.pending:
        if p.label not in ("next", "with"):
            fall_off[len(builder.edges)] = p.label
        builder.edge(p.src, builder.exit, "return", p.site)
    if not builder.blocks[first].pieces and start >= len(node.body):
        # A function with only a docstring: its one block returns.
        builder.edge(first, builder.exit, "return", Site(SiteKind.INSERT, node.body, start))
    return FunctionCfg(
        node=node,
        qualname=qualname,
        blocks=builder.blocks,
        edges=builder.edges,
        entry=builder.entry,
        exit=builder.exit,
        restarts=builder.restarts,
        finallies=builder.finallies,
        route_flags=builder.route_flags,
        bare_raises=builder.bare_raises,
        star_handler_ends=builder.star_handler_ends,
        star_flows=builder.star_flows,
        body_start=start,
        loops=[Loop(loop.header, frozenset(loop.body)) for loop in builder.loops],
        fall_off=fall_off,
    )


def iter_functions(
    tree: ast.Module,
) -> Iterator[tuple[ast.FunctionDef | ast.AsyncFunctionDef, str]]:
    """Every function in a module with its qualified name, outer before inner."""

    def walk(nodes: list[ast.stmt], prefix: str) -> Iterator[tuple[ast.AST, str]]:
        for node in nodes:
            yield from visit(node, prefix)

    def visit(node: ast.AST, prefix: str) -> Iterator[tuple[ast.AST, str]]:
        if isinstance(node, FUNCTIONS):
            qualname = f"{prefix}{node.name}"
            yield node, qualname
            yield from walk_children(node, f"{qualname}.<locals>.")
        elif isinstance(node, ast.ClassDef):
            yield from walk_children(node, f"{prefix}{node.name}.")
        else:
            yield from walk_children(node, prefix)

    def walk_children(node: ast.AST, prefix: str) -> Iterator[tuple[ast.AST, str]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.stmt | ast.excepthandler | ast.match_case):
                yield from visit(child, prefix)

    yield from walk(tree.body, "")  # type: ignore[misc]
