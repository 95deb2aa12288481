"""Event-counting code for Python functions: chord increments of Ball 1994 as probes.

Events are statements (the default) or bytecode instructions. A block's events are
counted as control enters it (:mod:`pathprof.graph.events` puts them on the edges
into it); a query made part-way through a block, or an exception that leaves it,
subtracts the events of the pieces still to come (their weights are in the
metadata). Each function keeps a register ``@pp_r`` in its frame and changes it
only on chords with a non-zero increment -- on a loop, typically one add per
iteration instead of one per statement. The frame's count is handed over once, as
the call ends, in a ``finally`` that:

* adds it to the thread's total (``@pp_T[0]``, a list per thread) and to the
  function's self count (``_@pp_S[i]``);
* sets the function's inclusive count in this thread to its value at entry plus
  the growth of the thread's total during the call: the prologue keeps one number,
  the *base* ``@pp_a = T[0] - T[slot]``, and the hand-over sets ``T[slot] = T[0] -
  @pp_a``. Ball 1994, §4 counts the events
  of callees per call site with a global counter read before and after the call;
  reading the thread's total at entry and exit is that scheme applied to the call
  of the function itself (every call site of it at once, implicit calls included).
  Setting rather than adding makes a recursive call's count be overwritten by the
  outer call's, which contains it: a recursive function is counted once per
  outermost call, like ``cProfile``'s cumulative time.

Generators and coroutines hand their count over at every ``yield``, ``yield from``
and ``await`` and start afresh when resumed (possibly in another thread).

Exceptions are the one slow path: where the exception left the frame decides how
many events ran (:mod:`pathprof.runtime.events`). ``@pp_w``, when not None, holds the
frame's exact count already worked out (by a ``with`` body's observer, a ``finally``
that re-raises, or a bare ``raise``), because by then the traceback points at the
original raise, not where control is.
"""

from __future__ import annotations

import ast
import dis
import warnings
from types import CodeType
from typing import TYPE_CHECKING, Any

from pathprof.constructs import SCOPES, WITHS
from pathprof.contract import EventTables, FunctionInfo, Role
from pathprof.graph import find_backedges
from pathprof.graph.events import EventPlan, plan_events, rest_of_block, static_event_weights
from pathprof.python.cfgtypes import FinallyInfo, FunctionCfg, Piece, Site, SiteKind
from pathprof.python.exits import exception_position
from pathprof.python.names import (
    BASE,
    BUDGET,
    DONE,
    HOLDER,
    LOCAL,
    MODULE,
    PENDING,
    REGISTER,
    RUNTIME,
    SELF,
    SENT,
    SINGLE,
    TEMP,
    THREAD,
    TOTAL,
    slot_name,
)
from pathprof.python.nodes import (
    add,
    artificial,
    artificial_shell,
    assign,
    call_module,
    const,
    first_code,
    load,
    locate_at,
    observer,
    store,
    walk,
)
from pathprof.python.rewrite import RESTART, RETURN_CODE, FunctionRewriter

if TYPE_CHECKING:
    from pathprof.python.plan import FunctionPlan

__all__ = ["EVENT_KINDS", "PLACEMENTS", "piece_weights", "plan_events_for"]

EVENT_KINDS = ("statements", "instructions")

#: Where the adds go. ``tree``: on the chords of a spanning tree (Ball 1994, what
#: pathprof uses). The two baselines the benchmarks compare it with count the same:
#: ``statements`` is the naive instrumentation, one add per statement (per piece of
#: code with instructions, for the instructions kind); ``blocks`` one add per block
#: run, on every edge into a block -- the better of the naive ones.
PLACEMENTS = ("tree", "blocks", "statements")

#: Roles whose piece is one statement event: a simple statement, or the header of a
#: compound statement as it is evaluated (if/elif/while test, the for step that
#: fetches the next item, the with statement's entry, the match subject).
_STATEMENT_ROLES = {Role.STMT, Role.TEST, Role.FOR_NEXT, Role.WITH_ENTER, Role.SUBJECT}


#: Instructions that only serve the code's layout, placed where the compiler's
#: block order needs them (a loop's jump back sits after the body on 3.12, before
#: it on 3.11): not counted, so that an instruction count is the same whichever way
#: the compiler laid the loop out. Line-number NOPs likewise.
#: Exception machinery likewise: the instructions that enter, match, leave and
#: re-raise in handlers belong to no statement (3.12+ locates ``PUSH_EXC_INFO`` at
#: the ``try`` body's last line, e.g. a ``while True:`` counted every iteration, and
#: ``POP_EXCEPT`` at the handler's last statement).
_LAYOUT_OPS = {"NOP", "CACHE", "EXTENDED_ARG", "JUMP_FORWARD", "JUMP_BACKWARD",
               "JUMP_BACKWARD_NO_INTERRUPT", "JUMP", "JUMP_NO_INTERRUPT",
               "PUSH_EXC_INFO", "POP_EXCEPT", "CHECK_EXC_MATCH", "CHECK_EG_MATCH", "RERAISE",
               "WITH_EXCEPT_START", "CLEANUP_THROW", "PREP_RERAISE_STAR"}


def _is_statement_event(piece: Piece) -> bool:
    if piece.role not in _STATEMENT_ROLES or isinstance(piece.node, ast.Global | ast.Nonlocal):
        return False
    # ``while True:`` evaluates nothing: its test is not an event.
    return not (piece.role is Role.TEST and isinstance(piece.node, ast.Constant)
                and bool(piece.node.value))


def piece_weights(cfg: FunctionCfg, kind: str, code: CodeType | None = None,
                  meta: FunctionInfo | None = None) -> list[list[int]]:
    """Events of every piece of every block.

    ``statements``: 1 for each simple statement (declarations ``global`` and
    ``nonlocal`` excepted: they run no code) and for each evaluation of a compound
    statement's header; 0 for the rest (``else``, ``try``, ``case`` patterns...) and
    for statements the compiler removed (no instruction in ``code``).
    ``instructions``: the bytecode instructions CPython compiled for the piece in
    ``code``, the function compiled without instrumentation on the running Python,
    layout instructions (``NOP``, unconditional jumps) excepted. Static: a
    conditional expression counts both arms, a loop inside an expression its body
    once; a ``with``'s exit counts nothing."""
    if kind not in EVENT_KINDS:
        raise ValueError(f"unknown event kind {kind!r}; choose from {', '.join(EVENT_KINDS)}")
    if code is None or meta is None:
        compiled = None
    else:
        from pathprof.runtime.blockmap import BlockMap

        blockmap = BlockMap(meta, code)
        compiled = [blockmap.locate_piece(i.offset) for i in dis.get_instructions(code)]
    if kind == "statements":
        weights = [[int(_is_statement_event(p)) for p in block.pieces] for block in cfg.blocks]
        if compiled is not None:
            # A statement the compiler removed (``if 0 and x:``, the test of ``while
            # 1:``) never runs: it is no event.
            present = {(b, p) for b, p, _how in filter(None, compiled)}
            for block, block_weights in enumerate(weights):
                for index in range(len(block_weights)):
                    if (block, index) not in present:
                        block_weights[index] = 0
        return weights
    weights = [[0] * len(block.pieces) for block in cfg.blocks]
    if code is None or meta is None:
        return weights
    for instruction in dis.get_instructions(code):
        if instruction.opname in _LAYOUT_OPS:
            continue
        located = blockmap.locate_piece(instruction.offset)
        if located is not None and located[1] < len(weights[located[0]]):
            weights[located[0]][located[1]] += 1
    for cfg_block, block_weights in zip(cfg.blocks, weights, strict=True):
        for index, piece in enumerate(cfg_block.pieces):
            if piece.role is Role.WITH_EXIT:
                # Leaving a with runs one of two instruction sequences (normal or
                # exceptional exit): neither is counted.
                block_weights[index] = 0
    return weights


def plan_events_for(cfg: FunctionCfg, weights: list[list[int]], placement: str = "tree"
                    ) -> EventPlan:
    """The event plan of one function: block events from its piece weights; edges
    with no site (no place for code) forced into the tree. The baselines (see
    :data:`PLACEMENTS`) add on every edge (:func:`pathprof.graph.events.plan_events`
    with ``naive``)."""
    if placement not in PLACEMENTS:
        raise ValueError(f"unknown event placement {placement!r}; choose from "
                         f"{', '.join(PLACEMENTS)}")
    graph = cfg.to_graph()
    forced = [eid for eid, edge in enumerate(cfg.edges) if edge.site.kind is SiteKind.NONE]
    return plan_events(graph, [sum(w) for w in weights], static_event_weights(graph),
                       forced_tree=forced, naive=placement != "tree")


def statement_adds(cfg: FunctionCfg, weights: list[list[int]], kind: str, code: CodeType | None,
                   meta: FunctionInfo) -> dict[int, int]:
    """For the ``statements`` baseline: edge -> how many statements its increment
    stands for, i.e. how many adds the naive instrumentation would run there. The
    baselines' tree depends on no weights, so the statements' plan has the same
    chords as ``kind``'s."""
    if kind != "statements":
        weights = piece_weights(cfg, "statements", code, meta)
    return plan_events_for(cfg, weights, "statements").increment


def split_increment(increment: int, adds: int) -> list[int]:
    """``increment`` as ``adds`` adds (at least one), summing to it."""
    if adds <= 1:
        return [increment]
    share = increment // adds
    return [share] * (adds - 1) + [increment - share * (adds - 1)]


def backedges_of(cfg: FunctionCfg) -> frozenset[int]:
    return find_backedges(cfg.to_graph())


def event_metadata(cfg: FunctionCfg, plan: EventPlan, weights: list[list[int]], kind: str
                   ) -> EventTables:
    """What the runtime needs to answer queries: per-piece events, query increments,
    and the increment already added when a return or continue left a block (a
    ``with``'s ``__exit__`` can raise after it)."""
    leave: dict[int, int] = {}
    for eid, edge in enumerate(cfg.edges):
        if edge.label in ("return", "continue") and plan.increment.get(eid):
            leave[edge.src] = plan.increment[eid]
    return EventTables(kind, tuple(tuple(w) for w in weights), tuple(plan.query), leave,
                       len(plan.code_edges))


def rest_after(weights: list[list[int]], block: int, piece: int) -> int:
    return rest_of_block(weights[block], piece)


# ---------------------------------------------------------------------------
# Rewriting (builds on the path-mode rewriter, :mod:`pathprof.python.rewrite`, and
# the node builders of :mod:`pathprof.python.nodes`)


def _subscript(table: str, index: ast.expr, store: bool = False) -> ast.Subscript:
    return ast.Subscript(value=load(table), slice=index,
                         ctx=ast.Store() if store else ast.Load())


def _plus(left: ast.expr, value: int) -> ast.expr:
    if value == 0:
        return left
    op: ast.operator = ast.Add() if value > 0 else ast.Sub()
    return ast.BinOp(left=left, op=op, right=const(abs(value)))


def _if(test: ast.expr, body: list[ast.stmt]) -> ast.stmt:
    return artificial(ast.If(test=test, body=body, orelse=[]))


def _is_not_none(name: str) -> ast.expr:
    return ast.Compare(left=load(name), ops=[ast.IsNot()], comparators=[const(None)])


def _budget_check(index: int, partial: ast.expr) -> ast.stmt:
    """``if _@pp_B: _@pp_m.check(i, partial)``: one global test while no budget is
    active anywhere (see :func:`pathprof.events.budget`)."""
    call = call_module("check", const(index), partial)
    return _if(load(BUDGET), [artificial(ast.Expr(value=call))])


class EventRewriter(FunctionRewriter):
    """Puts event-counting probes on a function's sites (see the module docstring)."""

    def __init__(self, fp: FunctionPlan, plan: EventPlan, weights: list[list[int]],
                 adds: dict[int, int] | None = None, totals_only: bool = False) -> None:
        super().__init__(fp)
        #: hand over to the thread's total only (:func:`_hand_over`)
        self.totals_only = totals_only
        self.events = plan
        self.weights = weights
        self.backedges = backedges_of(fp.cfg)
        #: the ``statements`` baseline: adds per edge (see :func:`statement_adds`)
        self.adds = adds

    def done_before(self, block: int) -> int:
        """Add to the register for the frame's exact count with ``block`` finished."""
        return self.events.query[block]

    def edge_code(self, eid: int) -> list[ast.stmt]:
        edge = self.cfg.edges[eid]
        code: list[ast.stmt] = []
        if eid in self.backedges:
            code.append(_budget_check(self.fp.index, _plus(load(REGISTER),
                                                           self.done_before(edge.src))))
        if edge.label == "re-raise":
            # The traceback still points at the original raise: note the exact count.
            code.append(assign(DONE, _plus(load(REGISTER),
                                           self.done_before(edge.src))))
        increment = self.events.increment.get(eid, 0)
        if increment and self.adds is not None:
            code.extend(add(REGISTER, part)
                        for part in split_increment(increment, self.adds.get(eid, 1)))
        elif increment:
            code.append(add(REGISTER, increment))
        return code

    def return_code(self, site: Site, code: list[ast.stmt], *, early: bool, block: int) -> None:
        # The count is handed over after the return value is computed (a callee in
        # the value belongs to this call's inclusive count): never early.
        super().return_code(site, code, early=False, block=block)

    def enter_call(self, block: int) -> ast.expr:
        return call_module("enter", const(self.fp.index), load(REGISTER),
                           load(DONE), const(block), load(BASE))

    def restart_code(self) -> None:
        targets = ast.Tuple(elts=[store(n) for n in ENTER_RESULT], ctx=ast.Store())
        for restart in self.cfg.restarts:
            if restart.block not in self.dag.restart_edges:
                continue
            node = restart.node
            if restart.kind in ("handler", "except*") and isinstance(node, ast.ExceptHandler):
                unpack = ast.Assign(targets=[targets], value=self.enter_call(restart.block))
                self.edits.add(node.body, 0, [artificial(unpack)], RESTART)
            elif restart.kind == "with":
                assert isinstance(node, WITHS)
                call = call_module("cut", const(self.fp.index),
                                   load(REGISTER), load(DONE))
                # Thrown into a suspended generator (base None): the activation
                # starts here, in the thread that threw, before ``__exit__`` runs.
                effects = [
                    (DONE, call),
                    (THREAD, ast.IfExp(test=_is_none(BASE), body=_thread_table(),
                                       orelse=load(THREAD))),
                    (BASE, ast.IfExp(test=_is_none(BASE), body=_base(self.fp.index),
                                     orelse=load(BASE))),
                ]
                self.structural.append(("with", node, observer(effects)))
                self.after_statement(node, restart.block)
            elif restart.kind == "except*":
                assert isinstance(node, ast.stmt)
                self.after_statement(node, restart.block)

    # Starts from a block, not the base's expression: its callers in the base (the
    # restart and ``with`` code) are replaced here by restart_code, which passes blocks.
    def after_statement(self, node: ast.stmt, block: int) -> None:  # type: ignore[override]
        """After a ``with`` whose ``__exit__`` swallowed an exception: the frame's count
        was noted in ``@pp_w``; start ``block`` (the code after it) from there."""
        stmts, index = self.after_location(node)
        start = self.weights_of(block) - self.events.query[block]
        check = _if(_is_not_none(DONE), [
            assign(REGISTER, _plus(load(DONE), start)),
            assign(DONE, const(None)),
        ])
        self.edits.add(stmts, index, [check], RESTART)

    def weights_of(self, block: int) -> int:
        return sum(self.weights[block])

    def bare_raise_code(self) -> None:
        for stmts, index, block in self.cfg.bare_raises:
            note = assign(DONE, _plus(load(REGISTER), self.done_before(block)))
            self.edits.add(stmts, index, [note], RETURN_CODE)

    def finally_entry(self, info: FinallyInfo) -> list[tuple[str, ast.expr]]:
        """Entering a finally by an exception: the count so far, and a fresh start."""
        effects: list[tuple[str, ast.expr]] = [(TEMP, self.enter_call(info.start))]
        for position, name in enumerate(ENTER_RESULT):
            effects.append((name, ast.Subscript(value=load(TEMP), slice=const(position),
                                                ctx=ast.Load())))
        return effects

    def rewrite(self) -> None:
        self.suspension_code()  # first: return_code may move a return's value
        super().rewrite()
        self.bare_raise_code()
        for handler, block in self.cfg.star_handler_ends:
            # The next except* clause (or the code after the try) continues this
            # count; its exception's traceback still points at the original raise.
            note = assign(DONE, _plus(load(REGISTER), self.done_before(block)))
            self.edits.add(handler.body, len(handler.body), [note], RETURN_CODE)

    # -- yield, yield from, await ------------------------------------------------

    def suspension_code(self) -> None:
        """Hand the count over before every suspension and start afresh after it."""
        parents: dict[int, tuple[ast.AST, str]] | None = None
        for block_id, block in enumerate(self.cfg.blocks):
            for piece_index, piece in enumerate(block.pieces):
                done = self.events.query[block_id] - rest_after(self.weights, block_id,
                                                                piece_index)
                found = _suspensions(piece)
                if len(found) == 1 and _is_statement_suspension(piece, found[0]):
                    assert isinstance(piece.node, ast.stmt)
                    self.suspend_statement(piece.node, found[0], done)
                    continue
                for node in found:
                    if parents is None:
                        parents = _parents(self.cfg.node)
                    holder, field_name = parents[id(node)]
                    wrapped = self.suspend(node, done)
                    if isinstance(getattr(holder, field_name), list):
                        items = getattr(holder, field_name)
                        items[items.index(node)] = wrapped
                    else:
                        setattr(holder, field_name, wrapped)

    def suspend_statement(self, stmt: ast.stmt, node: ast.Yield | ast.YieldFrom | ast.Await,
                          done: int) -> None:
        """``yield x`` / ``y = await v`` as a statement of its own (see
        :func:`_is_statement_suspension`): the hand-over is inline statements around
        it, not a call into the runtime (see :meth:`EventModule.pause
        <pathprof.runtime.events.EventModule.pause>` for what they do)::

            @pp_y = v; <hand over r + done>; @pp_r = -done; @pp_a = None
            y = await @pp_y
            @pp_y = None; <restart: the table of the thread that resumed, a new base>

        The awaited object (or the generator delegated to) is held in ``@pp_y``
        only while it would be on the frame's stack anyway."""
        index = self.fp.index
        stmts, position = self.location_of(stmt)
        before: list[ast.stmt] = []
        after: list[ast.stmt] = []
        if not isinstance(node, ast.Yield):
            operand = node.value  # keeps its location: tracebacks in it are the user's
            target = artificial(store(SENT))
            before.append(ast.copy_location(ast.Assign(targets=[target], value=operand),
                                            operand))
            node.value = ast.copy_location(load(SENT), operand)
            after.append(assign(SENT, const(None)))
        before += [
            *_hand_over(index, done, self.totals_only),
            assign(REGISTER, const(-done)),
            assign(BASE, const(None)),
            _budget_check(index, const(0)),
        ]
        after += [
            _drain_if_pending(),
            assign(THREAD, _thread_table()),
            assign(BASE, _base(index)),
        ]
        # Located at the statement (production builds): CPython 3.13 fails to compile
        # code without line numbers between two ``yield from`` ("Invalid CFG").
        self.edits.add(stmts, position, self.locate(before, stmt), SUSPEND)
        self.edits.add(stmts, position + 1, self.locate(after, stmt), RESTART)

    def suspend(self, node: _Suspension, done: int) -> ast.expr:
        """``yield v`` becomes ``((yield (v, <pause>)[0]), <resume>)[0]``: the count
        is handed over once ``v`` is computed (a call in it is part of this
        activation), and the activation restarts when the frame resumes. ``yield
        from`` and ``await`` likewise around their operand: the delegated generator or
        awaited coroutine counts in its own functions, not in this one's inclusive."""
        pause = call_module("pause", const(self.fp.index), load(THREAD),
                            load(REGISTER), const(done), load(BASE))
        operand = (node.value if node.value is not None
                   else artificial(const(None)))
        before: list[ast.expr] = [
            ast.NamedExpr(target=store(REGISTER), value=pause),
            ast.NamedExpr(target=store(BASE), value=const(None)),
        ]
        after: list[ast.expr] = [
            ast.BoolOp(op=ast.And(), values=[load(PENDING), call_module("drain")]),
            ast.NamedExpr(target=store(THREAD), value=_thread_table()),
            ast.NamedExpr(target=store(BASE), value=_base(self.fp.index)),
        ]
        for part in (*before, *after):
            artificial(part)
        node.value = _first_of([operand, *before], operand)
        return _first_of([node, *after], node)


#: Priority of the hand-over before a suspension among the code inserted at one
#: place: after everything else (the adds of the edge into its block come first).
SUSPEND = RETURN_CODE + 1


def _is_statement_suspension(piece: Piece, node: ast.expr) -> bool:
    """``yield x``, ``await v``, ``y = yield from v``... as a whole statement,
    assigning (if at all) to plain names: nothing runs between the resumption and the
    next statement, so the restart can be a statement after it. A ``yield`` only of
    a name or a constant: evaluating it runs no code, so the hand-over can come first
    without a temporary (one holding the value would keep it alive while the
    generator is suspended)."""
    stmt = piece.node
    if piece.role is not Role.STMT:
        return False
    if isinstance(node, ast.Yield) and not (node.value is None or isinstance(
            node.value, ast.Name | ast.Constant)):
        return False
    if isinstance(stmt, ast.Expr):
        return stmt.value is node
    return (isinstance(stmt, ast.Assign) and stmt.value is node
            and all(isinstance(t, ast.Name) for t in stmt.targets))


def _drain_if_pending() -> ast.stmt:
    return _if(load(PENDING), [artificial(ast.Expr(
        value=call_module("drain")))])


def _hand_over(index: int, done: int = 0, totals_only: bool = False) -> list[ast.stmt]:
    """Hand the frame's count (register plus ``done``) over: pending exit notes
    first, then ``T[0] = u = T[0] + r`` (thread total), ``T[slot] = u - base``
    (inclusive count) and ``S[i] += r`` (self count). The total is read once.

    ``totals_only`` (nothing asks for per-function counts: budgets, ``read()``, the
    ``pathprof_events`` fixture): ``T[0] += r`` alone, the least a hand-over can be
    (issue 7's measurements put the per-function counts' part of it at about half)."""
    if totals_only:
        return [
            _drain_if_pending(),
            *([add(REGISTER, done)] if done else []),
            artificial(ast.AugAssign(target=_subscript(THREAD, const(0), store=True),
                                     op=ast.Add(), value=load(REGISTER))),
        ]
    total_store = ast.Assign(targets=[_subscript(THREAD, const(0), store=True),
                                      store(TOTAL)],
                             value=ast.BinOp(left=_subscript(THREAD, const(0)),
                                             op=ast.Add(), right=load(REGISTER)))
    return [
        _drain_if_pending(),
        *([add(REGISTER, done)] if done else []),
        artificial(total_store),
        artificial(ast.Assign(
            targets=[_subscript(THREAD, load(slot_name(index)), store=True)],
            value=ast.BinOp(left=load(TOTAL), op=ast.Sub(), right=load(BASE)))),
        artificial(ast.AugAssign(target=_subscript(SELF, const(index), store=True),
                                 op=ast.Add(), value=load(REGISTER))),
    ]


def _is_none(name: str) -> ast.expr:
    return ast.Compare(left=load(name), ops=[ast.Is()], comparators=[const(None)])


#: What ``_@pp_m.enter`` returns, in order.
ENTER_RESULT = (REGISTER, THREAD, BASE, DONE)


def _thread_table() -> ast.expr:
    """``_@pp_G or _@pp_L.t``: the one thread's table, or the calling thread's."""
    return ast.BoolOp(op=ast.Or(), values=[
        load(SINGLE), ast.Attribute(value=load(LOCAL), attr="t", ctx=ast.Load())])


def _base(index: int) -> ast.expr:
    """``@pp_T[0] - @pp_T[slot]``: the base of an activation starting now."""
    return ast.BinOp(left=_subscript(THREAD, const(0)), op=ast.Sub(),
                     right=_subscript(THREAD, load(slot_name(index))))


def _stores(node: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)
               for n in walk(node))


def _first_of(parts: list[ast.expr], anchor: ast.expr) -> ast.expr:
    """``(parts...)[0]`` located where ``anchor`` is."""
    whole = ast.Subscript(value=ast.Tuple(elts=parts, ctx=ast.Load()),
                          slice=const(0), ctx=ast.Load())
    for outer in (whole, whole.value, whole.slice):
        ast.copy_location(outer, anchor)
    return whole


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef,
           ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


_Suspension = ast.Yield | ast.YieldFrom | ast.Await


def _suspensions(piece: Piece) -> list[_Suspension]:
    """The yield, yield from and await expressions a piece evaluates itself (not
    those of nested functions, classes or comprehensions), inner ones first."""
    # a With for a WITH_ENTER piece (its role says so, not its node's type)
    node: Any = piece.node
    if piece.role is Role.WITH_EXIT:
        return []
    if piece.role is Role.WITH_ENTER:
        roots: list[ast.AST] = list(node.items)
    elif isinstance(node, SCOPES):
        roots = [*node.decorator_list]
        if isinstance(node, ast.ClassDef):
            roots += [*node.bases, *node.keywords]
        else:
            roots += [*node.args.defaults, *(d for d in node.args.kw_defaults if d)]
    else:
        roots = [node]
    found: list[_Suspension] = []

    def visit(current: ast.AST) -> None:
        if isinstance(current, _SCOPES):
            return
        for child in ast.iter_child_nodes(current):
            visit(child)
        if isinstance(current, ast.Yield | ast.YieldFrom | ast.Await):
            found.append(current)

    for root in roots:
        visit(root)
    return found


def _parents(func: ast.AST) -> dict[int, tuple[ast.AST, str]]:
    """Expression id -> (parent, field) within one function, nested scopes excluded."""
    parents: dict[int, tuple[ast.AST, str]] = {}
    stack = [func]
    while stack:
        current = stack.pop()
        for field_name, value in ast.iter_fields(current):
            for child in value if isinstance(value, list) else [value]:
                if isinstance(child, ast.AST):
                    parents[id(child)] = (current, field_name)
                    if not isinstance(child, _SCOPES):
                        stack.append(child)
    return parents


def rewrite_event_function(fp: FunctionPlan, plan: EventPlan, weights: list[list[int]],
                           adds: dict[int, int] | None, totals_only: bool = False) -> None:
    """Put the event-counting probes of ``plan`` into ``fp``'s function, in place;
    with ``totals_only``, its count goes to the thread's total alone."""
    EventRewriter(fp, plan, weights, adds, totals_only).run()
    wrap_event_function(fp, plan, totals_only)


def wrap_event_function(fp: FunctionPlan, plan: EventPlan, totals_only: bool = False) -> None:
    """Entry, exit and exception code of one function (see the module docstring).

    Per call, on the way in: ``@pp_T = _@pp_G or _@pp_L.t``, the base, and the
    register (started at the entry chord's increment when the body begins with it);
    ``@pp_w = None`` only in functions that set ``@pp_w``."""
    node = fp.cfg.node
    index = fp.index
    start = fp.cfg.body_start
    head, body = node.body[:start], node.body[start:]
    initial = 0
    if (body and isinstance(body[0], ast.AugAssign) and isinstance(body[0].target, ast.Name)
            and body[0].target.id == REGISTER and isinstance(body[0].op, ast.Add)
            and isinstance(body[0].value, ast.Constant)):
        # The entry chord's add: nothing runs between the prologue and it.
        initial = int(body[0].value.value)  # type: ignore[arg-type]
        body = body[1:]
    if not body:
        body = [artificial(ast.Pass())]
    sets_done = _stores(node, DONE)
    register = load(REGISTER)
    note = ast.Call(
        func=ast.Attribute(value=load(PENDING), attr="append", ctx=ast.Load()),
        args=[ast.Tuple(elts=[load(MODULE), const(index), register,
                              load(DONE) if sets_done else const(None),
                              *exception_position(),
                              ast.Attribute(value=load(LOCAL), attr="t", ctx=ast.Load()),
                              load(BASE)], ctx=ast.Load())],
        keywords=[])
    exit_note = observer([(REGISTER, note)])
    inner = artificial_shell(ast.Try(body=body, handlers=[exit_note], orelse=[],
                                     finalbody=[]))
    flush = [*_hand_over(index, 0, totals_only), _budget_check(index, const(0))]
    outer = artificial_shell(ast.Try(
        body=[inner], handlers=[], orelse=[],
        finalbody=[_if(_is_not_none(REGISTER), flush)]))
    prologue = [
        # Exits by exception noted but not yet counted would be missing from the
        # thread's total read here: count them first.
        _drain_if_pending(),
        assign(THREAD, _thread_table()),
        # totals only: no inclusive count, so no base (the runtime's slow paths work
        # one out where they need it)
        assign(BASE, const(None) if totals_only else _base(index)),
        assign(REGISTER, const(initial)),
    ]
    if sets_done:
        prologue.append(assign(DONE, const(None)))
    first = first_code(body)
    if first is not None and not fp.mark_probes:
        locate_at(prologue, first)
    node.body = [*head, *prologue, outer]


def event_prologue(nfunctions: int, filename: str, key: str, meta_json: str
                   ) -> list[ast.stmt]:
    """Register the module with :mod:`pathprof.runtime.events` (which its holder
    holds); bind its tables."""
    register = ast.Call(
        func=ast.Attribute(value=load(RUNTIME), attr="register", ctx=ast.Load()),
        args=[load("__name__"), const(filename), const(key),
              const(nfunctions), const(meta_json), load(HOLDER)],
        keywords=[])
    names = ast.Tuple(elts=[store(n) for n in (LOCAL, PENDING, SELF)],
                      ctx=ast.Store())
    return [
        ast.Assign(targets=[store(MODULE)], value=register),
        ast.Assign(targets=[names],
                   value=ast.Attribute(value=load(MODULE), attr="bindings",
                                       ctx=ast.Load())),
    ]


def plain_codes(tree: ast.Module, filename: str) -> dict[tuple[str, int], CodeType]:
    """The module compiled as written: function code objects by (qualname, first line).

    Only read, never run: the compile of the instrumented module that runs is the
    one that gives the program its own compile-time warnings (3.14's SyntaxWarning
    for a return in a finally), so this one keeps them to itself."""
    codes: dict[tuple[str, int], CodeType] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        stack = [compile(tree, filename, "exec", dont_inherit=True)]
    while stack:
        code = stack.pop()
        codes[(code.co_qualname, code.co_firstlineno)] = code
        stack.extend(c for c in code.co_consts if isinstance(c, CodeType))
    return codes
