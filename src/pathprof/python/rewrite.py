"""Turn probe plans into code: the function rewriter of path and edge mode.

For every function the CFG of :mod:`pathprof.python.cfg` is numbered and planned by
:mod:`pathprof.graph` (edges with no site are forced into the spanning tree), then
the probes are inserted at the edges' sites:

* ``@pp_r`` is the path register, a local of the frame (so recursion, threads and
  generators need no locking), set to 0 on entry;
* chords get ``@pp_r = c`` or ``@pp_r += c``; a backedge counts and resets,
  ``_@pp_c3[@pp_r + c] += 1; @pp_r = c2``;
* the body is wrapped in ``try: ... except BaseException: ... finally:`` whose
  ``finally`` counts the path of every return (``_@pp_c3[@pp_r] += 1``) after all
  of the function's own ``with`` exits and ``finally`` clauses have run, and whose
  handler records the path an exception cuts short;
* exception handlers, ``finally`` clauses and ``with`` statements get the calls into
  :mod:`pathprof.runtime` that record cut paths and start new ones.

Inserted code is located where the program's code that runs next starts, with no
width (:func:`_locate_at`), or where no such code is known, left without a location
(line -1), which CPython fills in from the instructions before it. Either way it
makes no line event of its own and, as probe code does not raise, shows in no
traceback; the original nodes keep their locations, so tracebacks,
``co_firstlineno``, ``co_qualname`` and coverage tools see the program as written.
Tests' builds (:attr:`FunctionPlan.mark_probes`) locate nothing and mark inserted
code instead (:func:`mark_unlocated`). The names the inserted code uses are
:mod:`pathprof.python.names`.
"""

from __future__ import annotations

import ast
import copy
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from pathprof.exceptions import CfgError
from pathprof.graph import (
    CounterKind,
    EdgeCounterPlan,
    Numbering,
    Probe,
    ProbeOp,
    ProbePlan,
    counter_kind,
    number_paths,
    place,
    plan_edge_counters,
    plan_probes,
    static_weights,
    to_dag,
)
from pathprof.graph.copyplan import CopyShare
from pathprof.python.cfg import (
    ROUTE_RAISE,
    FunctionCfg,
    Role,
    Site,
    SiteKind,
    is_constant_true,
)
from pathprof.python.names import (
    CLOCK,
    COUNTDOWN,
    LOCAL_TABLE,
    MODULE,
    NOW,
    OBSERVING,
    PARKED,
    PATH_START,
    REGISTER,
    RETURN_VALUE,
    captured_name,
    counter_name,
    flag_name,
    is_capturable,
    lengths_name,
    loop_mode_name,
    loop_switch_name,
    star_name,
    switch_name,
    timer_name,
)

#: Version of the code the instrumentation writes: part of the cache tag, so that a
#: change to the probes never runs with a cached module the runtime no longer fits.
#: 6: every edge from a loop's body to its header counts and restarts the path; a
#: finally that hands a return, break or continue on to an enclosing finally sets
#: that one's route flag.
#: 7: a return counted before its value is located at the value's first code.
#: 8: exception exits counted in a dict. 9: observers keep the frame's last
#: instruction (:mod:`pathprof.python.lasti`). 10: locals named ``@pp_*``, and
#: ``locals()``, ``vars()`` and ``dir()`` calls filtered. 11: OSP's countdown.
#: 12: with OSP's countdown, no path counts. 13: a generator's exit key says
#: whether it was closed. 14: a function with a loop holds its counter table in a
#: local. 15: in a coverage mode, a loop whose hidden paths are all known runs
#: its original body for the rest of the loop. 16: an exit reads a lasti from a
#: traceback entry of its own frame only (the program may clear or replace it).
#: 17: the end of an except* clause flows on; its hand-over is noted and counted later.
#: 18: the runtime reached through the module state only; generators read pathprof's
#: globals into locals as they start; inserted code located with no width.
CODE_VERSION = 18


# ---------------------------------------------------------------------------
# Planning


@dataclass
class LoopSwitch:
    """A loop that can run its original body for the rest of the loop, once every
    path its original body would leave uncounted is known (coverage that stops
    paying, DESIGN.md §4).

    While the original body runs, no path that *starts* inside the loop is
    counted: the loop's *body paths* (from its header after a backedge -- the dummy
    edge ENTRY -> header of Ball-Larus 1996, §4 -- into its body: ``start_edge``
    then ``body_edge``, both dag edges), and every path from a path start inside
    its body (an inner loop's header, a handler, the code after a ``with`` that
    swallowed an exception: ``inner_starts``, their dummy or restart dag edges).
    Those are the *hidden paths*. The register is *parked* meanwhile, so that
    whatever counts before the next path start (a ``break``'s way on, a return, an
    exception) counts nowhere; the loop's normal exit (the test false, the
    iterator exhausted) sets the register to ``start_value``, as a measured
    iteration would have left it, and is counted exactly; a ``break`` that ends
    an enclosing loop's iteration starts that loop's next path as measured code
    would (:attr:`breaks`).
    """

    node: ast.For | ast.AsyncFor | ast.While
    ordinal: int
    header: int
    start_edge: int
    body_edge: int
    #: the register at the header after a backedge
    start_value: int
    #: the loop's body as written (a copy taken before the probes go in)
    original: list[ast.stmt]
    #: the loop's own ``break`` statements (by id) that end an enclosing loop's
    #: iteration (their edge is its backedge) -> their copy in :attr:`original`
    breaks: dict[int, ast.Break] = field(default_factory=dict)
    #: dummy and restart dag edges of the path starts inside the loop's body
    inner_starts: tuple[int, ...] = ()

    def _starts(self, numbering: Numbering) -> list[tuple[int, int]]:
        """``(first number, first block)`` of each kind of hidden path."""
        dag, val = numbering.dag, numbering.val
        starts = [(val[self.start_edge] + val[self.body_edge],
                   dag.edges[self.body_edge].dst)]
        starts += [(val[edge], dag.edges[edge].dst) for edge in self.inner_starts]
        return starts

    def hidden_paths(self, numbering: Numbering) -> list[tuple[int, int]]:
        """``(first, count)`` ranges of path numbers, disjoint, that hold the hidden
        paths: a path's number is the sum of its Ball-Larus edge values, so the
        paths that begin with given edges are consecutive numbers."""
        return [(first, numbering.num_paths[block])
                for first, block in self._starts(numbering)]

    def spanning_paths(self, numbering: Numbering) -> list[int]:
        """Hidden paths whose edge vectors span those of every hidden path. For each
        kind: one path through each dag edge that such a path can take, made of a
        fixed way from its first block to the edge (a breadth-first tree) and a
        fixed way from the edge on (the out-edge of value 0 at each block, so it
        adds nothing to the number).

        Why they span: for a path of edges e1..ek through blocks u1..uk, the sum
        of the spanning paths through e1..ek counts each ei once and, at each
        inner block ui, one fixed way in and one fixed way on -- which is the
        spanning path through the tree edge into ui; subtract those, and
        e1..ek remain, with the leading edges once."""
        dag, val = numbering.dag, numbering.val
        spanning: set[int] = set()
        for first, start in self._starts(numbering):
            prefix = {start: 0}
            order = [start]
            for block in order:
                for eid in dag.out_edges[block]:
                    dst = dag.edges[eid].dst
                    if dst not in prefix:
                        prefix[dst] = prefix[block] + val[eid]
                        order.append(dst)
            spanning.update(first + prefix[block] + val[eid]
                            for block in order for eid in dag.out_edges[block])
        return sorted(spanning)


@dataclass
class FunctionPlan:
    """One function's CFG, numbering and probe plan."""

    index: int
    cfg: FunctionCfg
    numbering: Numbering
    plan: ProbePlan
    kind: CounterKind
    #: In edge mode: which edges carry counters (counter slot i counts chord i).
    edge_plan: EdgeCounterPlan | None = None
    #: ``metric="time"``: also add the wall time of each path to a second table.
    timed: bool = False
    #: Blocks ending in a return statement whose path is counted before the return
    #: value is computed (see :meth:`_FunctionRewriter.return_code`).
    early_returns: set[int] = field(default_factory=set)
    #: In one copy of a parallel run (:mod:`pathprof.parallel`), a function another
    #: copy profiles: only its calls are counted, in slot 0 of a one-slot table.
    calls_only: bool = False
    #: In one copy of a parallel run, a function whose paths the copies share: this
    #: copy's share (:class:`~pathprof.graph.copyplan.CopyShare`).
    share: Any = None
    #: Subpath sampling: every path end counts its blocks down in bulk, and the
    #: runtime hears of path ends and calls while blocks are observed.
    subpaths: bool = False
    #: Carries its original body beside the measured one (:func:`add_switch`): every
    #: return counts after its value, so no count is ever taken back.
    switch: bool = False
    #: Counts through :data:`LOCAL_TABLE` (:func:`uses_local_table`).
    local_table: bool = False
    #: Loops that can go back to their original body (:func:`plan_loop_switches`).
    loop_switches: list[LoopSwitch] = field(default_factory=list)
    #: For tests (``instrument_source(mark_probes=True)``): inserted code is left
    #: unlocated, for :func:`mark_unlocated` to put at :data:`PROBE_MARK_LINE` once
    #: the module is done, instead of located where the code that runs next starts.
    mark_probes: bool = False

    @property
    def num_paths(self) -> int:
        return self.numbering.total

    @property
    def table_size(self) -> int:
        """Size of the counter list, or -1 for a hash table."""
        if self.calls_only:
            return 1
        if self.edge_plan is not None:
            return len(self.edge_plan.chords)
        return self.num_paths if self.kind is CounterKind.ARRAY else -1

    def chord_slot(self, extended_edge: int) -> int | None:
        assert self.edge_plan is not None
        return self._slots.get(extended_edge)

    @cached_property
    def _slots(self) -> dict[int, int]:
        assert self.edge_plan is not None
        return {e: i for i, e in enumerate(self.edge_plan.chords)}


def plan_function(cfg: FunctionCfg, index: int = 0, weights: Sequence[float] | None = None
                  ) -> FunctionPlan:
    """Number a function's paths and place its probes.

    Edges whose site is NONE are forced into the spanning tree. ``weights`` (one per
    dag edge) replace the static loop-depth estimate, e.g. with measured counts.
    """
    dag = to_dag(cfg.to_graph())
    numbering = number_paths(dag)
    forced = [
        dag.normal_edges[eid]
        for eid, edge in enumerate(cfg.edges)
        if edge.site.kind is SiteKind.NONE and eid in dag.normal_edges
    ]
    placement = place(numbering, weights or static_weights(dag), forced_tree=forced)
    plan = plan_probes(placement)
    return FunctionPlan(index, cfg, numbering, plan, counter_kind(numbering.total))


def share_feasible(cfg: FunctionCfg, plan: ProbePlan) -> bool:
    """Whether every probe of ``plan`` has a place in the code (no probe on an edge
    whose site is NONE)."""
    dag = plan.dag
    nowhere = {dag.normal_edges[eid] for eid, edge in enumerate(cfg.edges)
               if edge.site.kind is SiteKind.NONE and eid in dag.normal_edges}
    return not (nowhere & set(plan.probes))


def plan_share_function(cfg: FunctionCfg, index: int, share: CopyShare) -> FunctionPlan:
    """A copy's share of a function split among the copies of a parallel run
    (:mod:`pathprof.graph.copyplan`): Ball-Larus when the copy holds every edge,
    PSPP's probes otherwise; what it records is translated and filtered by the
    copy's ownership when the run saves."""
    if share.whole:
        fp = plan_function(cfg, index)
    else:
        plan = plan_probes(share.placement())
        fp = FunctionPlan(index, cfg, share.numbering, plan, CounterKind.HASH)
    fp.share = share
    return fp


def plan_edge_function(cfg: FunctionCfg, index: int = 0) -> FunctionPlan:
    """Place edge counters (Knuth; Ball-Larus [BL94]): counters on the chords of a
    spanning tree whose uninstrumentable edges (site NONE) are forced in; every
    block may raise, so each gets a virtual exception edge, counted by the runtime."""
    graph = cfg.to_graph()
    fp = plan_function(cfg, index)
    forced = [eid for eid, edge in enumerate(cfg.edges) if edge.site.kind is SiteKind.NONE]
    raising = [b for b in range(graph.num_blocks) if b not in (graph.entry, graph.exit)]
    fp.edge_plan = plan_edge_counters(graph, raising=raising, forced_tree=forced)
    return fp


# ---------------------------------------------------------------------------
# Small AST builders. Every node they make is artificial: no source location.

#: The line artificial nodes get. -1 means "no location": CPython then gives the
#: instructions the location of the instruction before them (so no line event and
#: no traceback ever shows them).
UNLOCATED = -1
#: A line no source file has, which tests' builds give inserted code
#: (:func:`mark_unlocated`); the block mapper treats it like "no location".
PROBE_MARK_LINE = (1 << 30) - 1


def _artificial(node: ast.AST) -> ast.AST:
    for child in ast.walk(node):
        if "lineno" in child._attributes:
            child.lineno = UNLOCATED  # type: ignore[attr-defined]
            child.end_lineno = UNLOCATED  # type: ignore[attr-defined]
            child.col_offset = -1  # type: ignore[attr-defined]
            child.end_col_offset = -1  # type: ignore[attr-defined]
    return node


def _locate_at(nodes: list[ast.stmt], anchor: ast.AST) -> list[ast.stmt]:
    """Give the unlocated parts of inserted ``nodes`` the location of ``anchor``
    (production builds only: a build with ``mark_probes`` leaves inserted code
    unlocated, the callers ask).

    Code without a location that starts a basic block makes the next real line
    look new to tracers (an extra ``line`` event); code located at the line that
    runs next anyway adds no event and never shows in a traceback, since probe
    code does not raise. The location is ``anchor``'s start, with no width: the end
    of a span over several lines is where CPython 3.11 locates the loading of a
    method, which would make a line event for a line that has not run.
    """
    line, column = anchor.lineno, anchor.col_offset  # type: ignore[attr-defined]
    for node in nodes:
        for part in ast.walk(node):
            if "lineno" in part._attributes and getattr(part, "lineno", -1) in (-1, None):
                part.lineno = part.end_lineno = line  # type: ignore[attr-defined]
                part.col_offset = part.end_col_offset = column  # type: ignore[attr-defined]
    return nodes


def mark_unlocated(tree: ast.AST) -> None:
    """Put every unlocated node of ``tree`` (all inserted code, in a build with
    ``mark_probes``) at :data:`PROBE_MARK_LINE`."""
    for node in ast.walk(tree):
        if getattr(node, "lineno", None) == UNLOCATED:
            node.lineno = PROBE_MARK_LINE  # type: ignore[attr-defined]
            if getattr(node, "end_lineno", None) == UNLOCATED:
                node.end_lineno = PROBE_MARK_LINE  # type: ignore[attr-defined]


def _first_evaluated(expr: ast.expr) -> ast.expr:
    """The part of ``expr`` whose code runs first, as far as locations go: a code
    located there runs on the line CPython reports first for ``expr`` (a list whose
    first item is on the next line reports that line first, not its bracket's)."""
    while True:
        if isinstance(expr, ast.Call):
            nxt: ast.expr | None = expr.func
        elif isinstance(expr, ast.Attribute | ast.Subscript | ast.Starred | ast.Await
                        | ast.NamedExpr | ast.FormattedValue):
            nxt = expr.value
        elif isinstance(expr, ast.BinOp | ast.Compare):
            nxt = expr.left
        elif isinstance(expr, ast.BoolOp | ast.JoinedStr):
            nxt = expr.values[0] if expr.values else None
        elif isinstance(expr, ast.List | ast.Tuple | ast.Set):
            nxt = expr.elts[0] if expr.elts else None
        elif isinstance(expr, ast.Dict):
            nxt = expr.keys[0] if expr.keys and expr.keys[0] is not None else None
        elif isinstance(expr, ast.IfExp):
            nxt = expr.test
        elif isinstance(expr, ast.UnaryOp):
            nxt = expr.operand
        else:
            nxt = None
        if nxt is None or getattr(nxt, "lineno", None) is None:
            return expr
        expr = nxt


def _load(name: str) -> ast.Name:
    return ast.Name(id=name, ctx=ast.Load())


def _store(name: str) -> ast.Name:
    return ast.Name(id=name, ctx=ast.Store())


def _const(value: Any) -> ast.Constant:
    return ast.Constant(value=value)


def _assign(name: str, value: ast.expr) -> ast.stmt:
    return _artificial(ast.Assign(targets=[_store(name)], value=value))  # type: ignore[return-value]


def _add(name: str, value: int) -> ast.stmt:
    return _artificial(ast.AugAssign(target=_store(name), op=ast.Add(), value=_const(value)))  # type: ignore[return-value]


def _register_plus(value: int) -> ast.expr:
    if value == 0:
        return _load(REGISTER)
    return ast.BinOp(left=_load(REGISTER), op=ast.Add(), right=_const(value))


def _count(counter: str, index: ast.expr) -> ast.stmt:
    target = ast.Subscript(value=_load(counter), slice=index, ctx=ast.Store())
    return _artificial(ast.AugAssign(target=target, op=ast.Add(), value=_const(1)))  # type: ignore[return-value]


def _call_module(method: str, *args: ast.expr) -> ast.expr:
    func = ast.Attribute(value=_load(MODULE), attr=method, ctx=ast.Load())
    return ast.Call(func=func, args=list(args), keywords=[])


def _observer(effects: list[tuple[str, ast.expr]]) -> ast.ExceptHandler:
    """An except clause that never matches, whose type expression has effects.

    ``except ((@pp_r := call(...)), ())[1]: pass``: when an exception passes, the
    type expression runs (``sys.exception()`` is the exception), assigns, and
    evaluates to ``()``, which matches nothing. CPython then re-raises the
    exception itself (a ``raise`` in a handler would add to the traceback), and
    :func:`pathprof.python.lasti.keep_last_instruction` makes that re-raise put the
    frame back at the instruction the exception came from, so tracebacks,
    ``f_lineno`` and the ``return`` event of tracers stay exactly as without
    pathprof.
    """
    parts: list[ast.expr] = [ast.NamedExpr(target=_store(name), value=value)
                             for name, value in effects]
    parts.append(ast.Tuple(elts=[], ctx=ast.Load()))
    kind = ast.Subscript(value=ast.Tuple(elts=parts, ctx=ast.Load()),
                         slice=_const(len(parts) - 1), ctx=ast.Load())
    handler = ast.ExceptHandler(type=kind, name=None, body=[ast.Pass()])
    _artificial(handler)
    return handler


# ---------------------------------------------------------------------------
# Rewriting one function


@dataclass
class _Edits:
    """Statements to insert, keyed by statement list; applied all at once."""

    inserts: dict[int, tuple[list[ast.stmt], list[tuple[int, int, list[ast.stmt]]]]] = field(
        default_factory=dict
    )

    def add(self, stmts: list[ast.stmt], index: int, nodes: list[ast.stmt], priority: int
            ) -> None:
        if not nodes:
            return
        entry = self.inserts.setdefault(id(stmts), (stmts, []))
        entry[1].append((index, priority, nodes))

    def apply(self) -> None:
        for stmts, items in self.inserts.values():
            by_index: dict[int, list[tuple[int, list[ast.stmt]]]] = defaultdict(list)
            for index, priority, nodes in items:
                by_index[index].append((priority, nodes))
            for index in sorted(by_index, reverse=True):
                ordered = [n for _, nodes in sorted(by_index[index], key=lambda x: x[0])
                           for n in nodes]
                stmts[index:index] = ordered


# Priorities at one insertion point: restarting a path comes first, then route
# flags, then edge probes, then the code of a return statement.
RESTART, FLAG, PROBE, RETURN_CODE = 0, 1, 2, 3


class _FunctionRewriter:
    def __init__(self, fp: FunctionPlan, edits: _Edits) -> None:
        self.fp = fp
        self.cfg = fp.cfg
        self.dag = fp.numbering.dag
        self.plan = fp.plan
        self.edits = edits
        self.counter = LOCAL_TABLE if fp.local_table else counter_name(fp.index)
        self.timed = fp.timed
        #: Statement lists (by id) from which a return still runs code of this
        #: function: inside a with, or a try with a finally or except* clauses.
        self.enclosed = _enclosed_lists(fp.cfg.node)
        #: each ``while``'s else list (by id): see :meth:`locate_in_empty_else`
        self._while_elses: dict[int, ast.While] | None = None

    def locate(self, nodes: list[ast.stmt], anchor: ast.AST) -> list[ast.stmt]:
        """:func:`_locate_at`, unless the build marks probes
        (:attr:`FunctionPlan.mark_probes`)."""
        return nodes if self.fp.mark_probes else _locate_at(nodes, anchor)

    # -- probe code ---------------------------------------------------------

    def probe_code(self, probe: Probe | None, *, ends_call: bool, dummy: bool = False
                   ) -> list[ast.stmt]:
        if probe is None:
            return []
        if probe.op is ProbeOp.SET:
            if probe.value == 0 and not dummy:
                return []  # the register is 0 from the function's start
            return [_assign(REGISTER, _const(probe.value))]
        if probe.op is ProbeOp.ADD:
            return [_add(REGISTER, probe.value)]
        index = _register_plus(probe.value) if probe.op is ProbeOp.COUNT else _const(probe.value)
        if self.fp.subpaths:
            # OSP needs no path counts: the countdown alone, where a path ends.
            code = _count_down(self.fp.index, probe)
        else:
            code = [_count(self.counter, index)]
        if self.timed:
            code += _time_path(timer_name(self.fp.index), probe)
        if ends_call:
            code.append(_assign(REGISTER, _const(None)))
        return code

    def plain_return(self, eid: int) -> bool:
        """Whether edge ``eid`` returns from the function with no code of it running
        afterwards (no with's ``__exit__``, no finally): then nothing needs to know
        that the call's path has been counted, and the register is not reset."""
        edge = self.cfg.edges[eid]
        site = edge.site
        return (edge.label == "return" and site.kind in (SiteKind.RETURN, SiteKind.INSERT)
                and site.stmts is not None and id(site.stmts) not in self.enclosed)

    def edge_code(self, eid: int) -> list[ast.stmt]:
        """Code for CFG edge ``eid`` at its site."""
        if self.fp.edge_plan is not None:
            slot = self.fp.chord_slot(eid)
            code = [] if slot is None else [_count(self.counter, _const(slot))]
            edge = self.cfg.edges[eid]
            if ((edge.dst == self.cfg.exit or edge.label == "re-raise")
                    and not self.plain_return(eid)):
                code.append(_assign(REGISTER, _const(None)))  # the call's flow has ended
            return code
        dag = self.dag
        if eid in dag.backedges:
            end, start = dag.backedges[eid]
            return (self.probe_code(self.plan.probes.get(end), ends_call=False)
                    + self.probe_code(self.plan.probes.get(start), ends_call=False, dummy=True))
        dag_edge = dag.normal_edges.get(eid)
        if dag_edge is None:
            return []  # leaves an unreachable block
        into_exit = dag.edges[dag_edge].dst == dag.exit
        code = self.probe_code(self.plan.probes.get(dag_edge),
                               ends_call=into_exit and not self.plain_return(eid))
        return code

    def original_break_code(self, eid: int, stmt: ast.stmt, code: list[ast.stmt]) -> None:
        """A ``break`` that ends an enclosing loop's iteration starts that loop's next
        path: in a loop's original body too, its copy sets the register (and may
        send the enclosing loop back); the path it ends was parked, so no count."""
        if eid not in self.dag.backedges:
            return
        for loop in self.fp.loop_switches:
            twin = loop.breaks.get(id(stmt))
            if twin is None:
                continue
            kept = [copy.deepcopy(c) for c in code
                    if not (isinstance(c, ast.AugAssign) and isinstance(c.target, ast.Subscript))]
            shell = ast.Module(body=loop.original, type_ignores=[])
            stmts, _ = _parents(shell)[id(twin)]
            index = next(i for i, s in enumerate(stmts) if s is twin)
            stmts[index:index] = self.locate(kept, twin)

    def loop_switch_code(self, eid: int, stmts: list[ast.stmt]) -> list[ast.stmt]:
        """After the code of backedge ``eid`` into a loop that can go back to its
        original body, at a site where the header runs next (not one that a
        ``with`` exit or a ``finally`` follows)::

            if _@pp_j<i>_<k>: @pp_r = _@pp_P; @pp_o<k> = True

        One global test per measured iteration; the loop's next iterations run
        its original body (:func:`wrap_loop_switches`)."""
        if eid not in self.dag.backedges or id(stmts) in self.enclosed:
            return []
        _, start = self.dag.backedges[eid]
        for loop in self.fp.loop_switches:
            if loop.start_edge == start:
                switch = ast.If(
                    test=_load(loop_switch_name(self.fp.index, loop.ordinal)),
                    body=[_assign(REGISTER, _load(PARKED)),
                          _assign(loop_mode_name(loop.ordinal), _const(True))],
                    orelse=[])
                return [_artificial(switch)]  # type: ignore[list-item]
        return []

    def restart_value(self, block: int) -> int:
        """The register value a path starting at restart ``block`` begins with; in
        edge mode, the counter slot of the virtual edge ENTRY -> ``block``."""
        if self.fp.edge_plan is not None:
            slot = self.fp.chord_slot(self.fp.edge_plan.restart_edge(block))
            assert slot is not None
            return slot
        probe = self.plan.probes.get(self.dag.restart_edges[block])
        assert probe is not None
        assert probe.op is ProbeOp.SET
        return probe.value

    # -- the rewrite --------------------------------------------------------

    def rewrite(self) -> None:
        cfg = self.cfg
        dispatch: dict[int, dict[int, list[ast.stmt]]] = defaultdict(dict)
        flows: dict[int, list[tuple[Site, list[ast.stmt]]]] = defaultdict(list)
        for eid, edge in enumerate(cfg.edges):
            site = edge.site
            if site.kind is SiteKind.NONE:
                # No place for code: its probe must be nothing (forced into the spanning
                # tree), or a raise's count, which the runtime makes. Anything else would
                # be lost silently: refuse, and the function runs unmeasured.
                if edge.label != "raise" and self.edge_code(eid):
                    raise CfgError(f"{cfg.qualname}: the {edge.label!r} edge out of block "
                                   f"{edge.src} needs code and has no place for it")
                continue
            if site.kind is SiteKind.INSERT:
                assert site.stmts is not None
                code = self.edge_code(eid) + self.loop_switch_code(eid, site.stmts)
                if site.index < len(site.stmts):
                    self.original_break_code(eid, site.stmts[site.index], code)
                    self.locate(code, _first_code(site.stmts[site.index:])
                                or site.stmts[site.index])
                elif not site.stmts:
                    self.locate_in_empty_else(code, site.stmts)
                self.edits.add(site.stmts, site.index, code, PROBE)
            elif site.kind is SiteKind.RETURN:
                self.return_code(site, self.edge_code(eid), early=self.plain_return(eid),
                                 block=edge.src)
            elif site.kind is SiteKind.GUARD:
                self.wrap_guard(site.node, self.edge_code(eid))  # type: ignore[arg-type]
            elif site.kind is SiteKind.PENDING:
                assert site.stmts is not None
                code = self.pending_code(eid)
                if site.index < len(site.stmts):
                    self.locate(code, _first_code(site.stmts[site.index:])
                                or site.stmts[site.index])
                self.edits.add(site.stmts, site.index, code, PROBE)
            elif site.kind is SiteKind.FLOW:
                flows[id(site.node)].append((site, self.edge_code(eid)))
            else:  # DISPATCH
                code = self.edge_code(eid)
                if edge.label == "re-raise" and not code:
                    # A re-raise must still end the path even where it adds nothing.
                    code = [_assign(REGISTER, _const(None))]
                dispatch[id(site.node)][site.route] = code
        for flag in cfg.route_flags:
            self.edits.add(flag.stmts, flag.index,
                           [_assign(flag_name(self.flag_index(flag.finally_index)),
                                    _const(flag.code))], FLAG)
        for node in cfg.star_flows:
            stmts, index = self.location_of(node)
            self.edits.add(stmts, index, [_assign(self.star_of(node), _const(None))], FLAG)
            if not node.finalbody:  # with one, the finally's observer hands over
                self.structural.append(("star", node, _observer(self.handover(node))))
            self.flow_code(node, flows.get(id(node), []))
        self.restart_code()
        for info in cfg.finallies:
            self.finally_code(info, dispatch.get(id(info.node), {}))

    def locate_in_empty_else(self, code: list[ast.stmt], stmts: list[ast.stmt]) -> None:
        """Code in the empty ``else`` of a ``while`` whose test is on one line runs
        after that test (both its copies jump there): it is located at that line, so
        what follows it (the function's return, when the loop ends the function) has
        a line too -- CPython 3.12 gave such a return none (``sys.monitoring``'s
        ``PY_RETURN`` at no line)."""
        if self._while_elses is None:  # one walk for the function, not one per else
            self._while_elses = {id(node.orelse): node for node in ast.walk(self.cfg.node)
                                 if isinstance(node, ast.While)}
        loop = self._while_elses.get(id(stmts))
        if loop is not None:
            line = _loop_exit_line(loop)
            if line is not None:
                self.locate(code, _line_anchor(line))

    def flag_index(self, finally_index: int) -> int:
        # Route flags are locals: the same names in every function are fine.
        return finally_index

    # -- except* clauses that flow on -----------------------------------------------

    def star_of(self, node: ast.AST) -> str:
        """The pending-count local of flowing ``try`` ``node`` (see :func:`star_name`)."""
        return star_name(next(i for i, t in enumerate(self.cfg.star_flows) if t is node))

    def star_try_of(self, handler: ast.ExceptHandler) -> ast.TryStar | None:
        for node in self.cfg.star_flows:
            if any(h is handler for h in node.handlers):
                return node
        return None

    def pending_code(self, eid: int) -> list[ast.stmt]:
        """At the end of an ``except*`` clause: ``@pp_e<n> = (<the count of the
        clause's hand-over edge>, <the clause end's route>)`` -- a path number
        (``@pp_r + k`` or ``k``) in path mode, a counter slot (-1 for a tree edge's)
        in edge mode. Nothing else runs there: which way the clause goes on is known
        only after it (:meth:`flow_code`, :meth:`ModuleState.handover`)."""
        edge = self.cfg.edges[eid]
        name = self.star_of(edge.site.node)  # type: ignore[arg-type]
        count: ast.expr
        if self.fp.edge_plan is not None:
            slot = self.fp.chord_slot(eid)
            count = _const(-1 if slot is None else slot)
        else:
            probe = self.plan.probes.get(self.dag.normal_edges[eid])
            assert probe is not None, eid
            assert probe.op in (ProbeOp.COUNT, ProbeOp.COUNT_CONST), probe
            count = _path_index(probe)
        return [_assign(name, ast.Tuple(elts=[count, _const(edge.site.route)],
                                        ctx=ast.Load()))]

    def flow_code(self, node: ast.TryStar, flows: list[tuple[Site, list[ast.stmt]]]) -> None:
        """Where the code after flowing ``try`` ``node`` starts (its ``finally``, if it
        has one): an ``except*`` clause whose group was fully handled flows on here,
        with the code of its end's edge into it::

            if @pp_e<n> is not None:
                if @pp_e<n>[1] == 1: <flow of clause end 1>
                elif ...
                @pp_e<n> = None
        """
        name = self.star_of(node)
        chain: list[ast.stmt] = []
        for site, code in reversed(flows):
            if not code:
                continue
            test = ast.Compare(left=ast.Subscript(value=_load(name), slice=_const(1),
                                                  ctx=ast.Load()),
                               ops=[ast.Eq()], comparators=[_const(site.route)])
            chain = [ast.If(test=test, body=code, orelse=chain)]
        body = [*chain, _assign(name, _const(None))]
        guard = ast.If(test=ast.Compare(left=_load(name), ops=[ast.IsNot()],
                                        comparators=[_const(None)]),
                       body=body, orelse=[])
        for stmt in ast.walk(guard):
            if isinstance(stmt, ast.If):
                _artificial_shell(stmt)
        if not flows:
            return
        site = flows[0][0]
        assert site.stmts is not None
        located = [guard]
        if site.index < len(site.stmts):
            self.locate(located, _first_code(site.stmts[site.index:]) or site.stmts[site.index])
            setattr(guard, _LOCATED_LATER, True)
        self.edits.add(site.stmts, site.index, located, RESTART)  # type: ignore[arg-type]

    def handover(self, node: ast.AST) -> list[tuple[str, ast.expr]]:
        """Effects of a group leaving flowing ``try`` ``node`` by an exception: the
        hand-over noted by a clause that ran is counted (the register then says the
        path was counted: None), and nothing is pending any more."""
        name = self.star_of(node)
        call = _call_module("handover", _const(self.fp.index), _load(REGISTER), _load(name))
        return [(REGISTER, call), (name, _const(None))]

    def return_code(self, site: Any, code: list[ast.stmt], *, early: bool, block: int
                    ) -> None:
        """Count the path of a return statement.

        A plain return (:meth:`plain_return`) whose value cannot suspend the frame
        is counted before its value is computed: ``<code>; return value``. Should the
        value raise, the runtime takes the count back and records the cut path
        instead (the exception is located at the return statement: "return-value").
        Otherwise the code runs after the value is computed: ``@pp_v = value;
        <code>; return @pp_v`` (a constant needs no temporary). The value keeps
        its locations, the return statement its own."""
        if not code:
            return
        node: ast.Return = site.node
        value = node.value
        if (early and not self.timed and not self.fp.switch and value is not None
                and not any(isinstance(n, ast.Yield | ast.YieldFrom | ast.Await)
                            for n in ast.walk(value))):
            self.fp.early_returns.add(block)
            # The code runs just before the value's first instruction: located there,
            # it makes no line event of its own (a value starting on a later line
            # than ``return`` would otherwise get its return line reported first).
            self.edits.add(site.stmts, site.index, self.locate(code, _first_evaluated(value)),
                           RETURN_CODE)
            return
        elif value is not None and not isinstance(value, ast.Constant):
            keep = ast.Assign(targets=[_store(RETURN_VALUE)], value=value)
            _artificial(keep.targets[0])
            keep.lineno = keep.end_lineno = UNLOCATED
            keep.col_offset = keep.end_col_offset = -1
            node.value = ast.Name(id=RETURN_VALUE, ctx=ast.Load())
            ast.copy_location(node.value, node)
            code = [keep, *code]
        self.edits.add(site.stmts, site.index, self.locate(code, node), RETURN_CODE)

    def wrap_guard(self, case: ast.match_case, code: list[ast.stmt]) -> None:
        if not code or case.guard is None:
            return
        effects: list[ast.expr] = []
        for stmt in code:
            # Guard probes are register updates: turn them into := expressions.
            if isinstance(stmt, ast.Assign):
                effects.append(ast.NamedExpr(target=_store(REGISTER), value=stmt.value))
            elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
                effects.append(ast.NamedExpr(
                    target=_store(REGISTER),
                    value=ast.BinOp(left=_load(REGISTER), op=ast.Add(), right=stmt.value)))
            elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Subscript):
                # Edge mode counts a guard edge: ``c.__setitem__(k, c[k] + 1)``, as
                # free of thread switches as ``c[k] += 1`` (the only call is the C
                # method that stores; CPython checks for switches after it returns).
                table, slot = stmt.target.value, stmt.target.slice
                read = ast.Subscript(value=_load(table.id), slice=slot, ctx=ast.Load())  # type: ignore[attr-defined]
                effects.append(ast.Call(
                    func=ast.Attribute(value=_load(table.id), attr="__setitem__",  # type: ignore[attr-defined]
                                       ctx=ast.Load()),
                    args=[slot, ast.BinOp(left=read, op=ast.Add(), right=_const(1))],
                    keywords=[]))
            else:  # pragma: no cover - nothing else sits on a guard edge
                raise AssertionError("unexpected probe on a guard edge")
        for effect in effects:
            _artificial(effect)
        elements = ast.Tuple(elts=[*effects, case.guard], ctx=ast.Load())
        wrapper = ast.Subscript(value=elements, slice=_const(len(effects)), ctx=ast.Load())
        # The wrapper stands where the guard stands, so that the jump on its value
        # is located at the guard, as it is without pathprof.
        for node in (elements, wrapper, wrapper.slice):
            ast.copy_location(node, case.guard)
        case.guard = wrapper

    def restart_code(self) -> None:
        fidx = _const(self.fp.index)
        for restart in self.cfg.restarts:
            if restart.block not in self.dag.restart_edges:
                continue
            start = _const(self.restart_value(restart.block))
            node = restart.node
            if restart.kind in ("handler", "except*") and isinstance(node, ast.ExceptHandler):
                register: ast.expr = _load(REGISTER)
                flowing = self.star_try_of(node) if restart.kind == "except*" else None
                if flowing is not None:
                    # A clause before this one handed its group's rest over: count that
                    register = _call_module("handover", fidx, register,
                                            _load(self.star_of(flowing)))
                call = _call_module("handler", fidx, register, start)
                code = [_assign(REGISTER, call)]
                if flowing is not None:
                    code.append(_assign(self.star_of(flowing), _const(None)))
                if self.timed:
                    code.append(_restart_clock())
                self.edits.add(node.body, 0, code, RESTART)
            elif restart.kind == "with":
                assert isinstance(node, ast.With | ast.AsyncWith)
                self.wrap_with(node, restart.block)
            elif restart.kind == "except*":
                # The code after a try with except* clauses.
                self.after_statement(node, start)
            # "finally" restarts are made in finally_code.

    def after_statement(self, node: ast.stmt, start: ast.expr) -> None:
        """``if @pp_r is None: @pp_r = start`` right after ``node`` (a ``try`` with
        ``except*`` clauses: where the code after its clauses starts, its
        ``finally`` if it has one)."""
        stmts, index = self.after_location(node)
        body = [_assign(REGISTER, start)]
        if self.timed:
            body.append(_restart_clock())
        if self.fp.edge_plan is not None:
            # Edge mode: count the virtual restart edge; the register only says
            # whether the call's flow is live (0) or has ended (None).
            body = [_count(self.counter, start), _assign(REGISTER, _const(0))]
        check = ast.If(
            test=ast.Compare(left=_load(REGISTER), ops=[ast.Is()], comparators=[_const(None)]),
            body=body, orelse=[])
        self.edits.add(stmts, index, [_artificial(check)], RESTART)  # type: ignore[list-item]

    def location_of(self, node: ast.stmt) -> tuple[list[ast.stmt], int]:
        return self.parents[id(node)]

    def after_location(self, node: ast.stmt) -> tuple[list[ast.stmt], int]:
        """Where the code that runs after ``node``'s clauses starts: its ``finally``
        for a ``try`` that has one (run before what follows the statement), else
        right after the statement."""
        if isinstance(node, ast.Try | ast.TryStar) and node.finalbody:
            return node.finalbody, 0
        stmts, index = self.location_of(node)
        return stmts, index + 1

    def wrap_with(self, node: ast.With | ast.AsyncWith, after: int) -> None:
        """Record the path an exception cuts inside the body before ``__exit__`` sees
        the exception; restart after the ``with`` if ``__exit__`` swallowed it."""
        call = _call_module("cut", _const(self.fp.index), _load(REGISTER))
        self.structural.append(("with", node, _observer([(REGISTER, call)])))
        self.after_statement(node, _const(self.restart_value(after)))

    def finally_code(self, info: Any, branches: dict[int, list[ast.stmt]]) -> None:
        node = info.node
        flag = flag_name(self.flag_index(info.index))
        # Set the flag to "fall through" before the try.
        stmts, index = self.location_of(node)
        self.edits.add(stmts, index, [_assign(flag, _const(0))], FLAG)
        # Dispatch at the end of the finally on how it was entered. A return, break
        # or continue that goes on into an enclosing finally tells that one's flag.
        for code, outer in info.forwards.items():
            handover = _assign(flag_name(self.flag_index(outer)), _const(code))
            branches[code] = [handover, *branches.get(code, [])]
        chain: list[ast.stmt] = []
        fall = branches.pop(0, [])
        for code in sorted(branches):
            body = branches[code]
            if not body:
                if not fall:
                    continue  # nothing to do on this route, nor on falling through
                body = [_artificial(ast.Pass())]  # type: ignore[list-item]
            test = ast.Compare(left=_load(flag), ops=[ast.Eq()], comparators=[_const(code)])
            chain.append(ast.If(test=test, body=body, orelse=[]))  # type: ignore[arg-type]
        dispatch: list[ast.stmt] = fall
        for branch in reversed(chain):
            assert isinstance(branch, ast.If)
            branch.orelse = dispatch
            setattr(branch, _ROUTE_TEST, True)
            dispatch = [branch]
        for stmt in dispatch:
            _artificial_shell(stmt)
        self.edits.add(node.finalbody, len(node.finalbody), dispatch, PROBE)
        self.structural.append(("dispatch", node, dispatch))
        effects = [*self.finally_entry(info), (flag, _const(ROUTE_RAISE))]
        if any(t is node for t in self.cfg.star_flows):
            effects = [*self.handover(node), *effects]
        self.structural.append(("finally", node, _observer(effects)))

    def finally_entry(self, info: Any) -> list[tuple[str, ast.expr]]:
        """Effects of entering a finally by an exception: record the cut path, start
        a new one."""
        if info.start in self.dag.restart_edges:
            start = _const(self.restart_value(info.start))
        else:
            start = _const(0 if self.fp.edge_plan is None else -1)
        call = _call_module("handler", _const(self.fp.index), _load(REGISTER), start)
        effects: list[tuple[str, ast.expr]] = [(REGISTER, call)]
        if self.timed:
            effects.append((PATH_START, ast.Call(func=_load(CLOCK), args=[], keywords=[])))
        return effects

    structural: list[tuple[str, Any, Any]]
    parents: dict[int, tuple[list[ast.stmt], int]]


def apply_rewriter(rewriter: _FunctionRewriter, edits: _Edits) -> None:
    """Run ``rewriter`` over its function: the edits at sites, then the structural
    changes (new ``try`` statements, moved bodies) in an order that keeps the
    recorded parents valid."""
    rewriter.structural = []
    rewriter.parents = _parents(rewriter.fp.cfg.node)
    rewriter.rewrite()
    edits.apply()
    _apply_structural(rewriter.structural, rewriter.parents, rewriter.fp.mark_probes)


def count_calls(fp: FunctionPlan) -> None:
    """Count ``fp``'s calls, nothing else: ``_@pp_c<i>[0] += 1`` before its first
    statement (after the docstring), located at that statement's first code so
    that tracers see no extra line. A generator counts when its body starts."""
    fp.calls_only = True
    node = fp.cfg.node
    start = fp.cfg.body_start
    count = _count(counter_name(fp.index), _const(0))
    first = _first_code(node.body[start:])
    if first is not None and not fp.mark_probes:
        _locate_at([count], first)
    node.body[start:start] = [count]


def uses_local_table(fp: FunctionPlan) -> bool:
    """Whether ``fp``'s function counts through a local that holds its table.

    In a loop every iteration counts (a path ends at the backedge), and a local is
    the cheapest load there is: a measured A/B run of a tight loop (docs/benchmarks.md,
    issue 21) cut the probes' overhead by 14-16 % on 3.14 and 4-7 % on 3.11, for one
    store per call. So functions with a loop, except those whose locals move out of
    their frame (each use would be a call, :mod:`pathprof.python.outside`) and OSP's,
    which count no paths."""
    from pathprof.python.outside import reaches_own_frame

    return (bool(fp.numbering.dag.backedges) and not fp.subpaths and not fp.calls_only
            and not reaches_own_frame(fp.cfg.node))


def rewrite_function(fp: FunctionPlan) -> None:
    """Put path (or edge) mode's probes into ``fp``'s function, in place."""
    fp.local_table = uses_local_table(fp)
    edits = _Edits()
    apply_rewriter(_FunctionRewriter(fp, edits), edits)
    wrap_loop_switches(fp)
    _wrap_function(fp)


# ---------------------------------------------------------------------------
# Coverage that stops paying (DESIGN.md §4): measured code, then the original


def can_switch(fp: FunctionPlan) -> bool:
    """Whether ``fp``'s function can carry its original body beside its measured
    one. Not a function that defines functions or classes of its own: their
    definitions would be compiled once per branch, and twice again per level of
    nesting below; nor one with an empty body (nothing to save); nor one that
    returns from inside a ``with``, whose return counts its path before
    ``__exit__`` runs: should ``__exit__`` raise, the runtime takes the count back,
    and a first run reported in between would not have been one.

    A function given a switch has ``fp.switch`` set, so that its returns count after their
    value is computed (a value that raises never counted).
    """
    node = fp.cfg.node
    if fp.calls_only or fp.share is not None or fp.subpaths or fp.timed:
        return False
    if fp.edge_plan is not None or len(node.body) <= fp.cfg.body_start:
        return False
    pending = [(stmt, False) for stmt in node.body[fp.cfg.body_start:]]
    while pending:
        child, in_with = pending.pop()
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            return False
        if isinstance(child, ast.Return) and in_with:
            return False
        in_with = in_with or isinstance(child, ast.With | ast.AsyncWith)
        pending.extend((grandchild, in_with) for grandchild in ast.iter_child_nodes(child))
    return True


def original_body(fp: FunctionPlan) -> list[ast.stmt]:
    """A copy of ``fp``'s body as written (after the docstring), taken before the
    probes go in (:func:`_original_copy`)."""
    return _original_copy(fp.cfg.node.body[fp.cfg.body_start:])


def _original_copy(stmts: list[ast.stmt], memo: dict[int, Any] | None = None
                   ) -> list[ast.stmt]:
    """A copy of ``stmts`` without their ``global`` and ``nonlocal`` statements: the
    measured branch, which the compiler reads first, declares the same names, and a
    second declaration after their use would be a SyntaxError. (They make no code,
    so no line event goes with them.) ``memo`` receives the copy of each node by
    the original's id (:func:`copy.deepcopy`'s memo)."""
    shell = ast.Module(body=copy.deepcopy(stmts, memo), type_ignores=[])
    for node in ast.walk(shell):
        for name, value in ast.iter_fields(node):
            if isinstance(value, list) and any(isinstance(v, ast.Global | ast.Nonlocal)
                                               for v in value):
                kept = [v for v in value if not isinstance(v, ast.Global | ast.Nonlocal)]
                setattr(node, name, kept or [_artificial(ast.Pass())])
    return shell.body


def plan_loop_switches(fp: FunctionPlan) -> list[LoopSwitch]:
    """The loops of a function given a switch (:func:`can_switch`) that can go back
    to their original body for the rest of a loop: every ``for`` and ``while``
    whose backedges start a path with a register set to a constant, except loops
    inside a ``with`` or a ``try`` with a ``finally`` or ``except*`` (their
    measured exits pass route flags and cut records that an original body would
    not set), and loops with a ``break`` that ends an enclosing loop's iteration
    from inside a ``with`` or such a ``try`` of their own. Called before the probes
    go in: the originals are copies of the bodies as written."""
    cfg, dag = fp.cfg, fp.numbering.dag
    enclosed = _enclosed_lists(cfg.node)
    parents = _parents(cfg.node)
    starts = {dag.edges[start].dst: start for _, start in dag.backedges.values()}
    path_starts = {**dag.restart_edges, **starts}  # every block a path can start at
    # Breaks whose edge is an enclosing loop's backedge, and those of them whose
    # code is inserted right before them.
    break_edges = [eid for eid in cfg.backedges if cfg.edges[eid].label == "break"]
    outer_breaks = {id(piece.node) for eid in break_edges
                    for piece in cfg.blocks[cfg.edges[eid].src].pieces
                    if isinstance(piece.node, ast.Break)}
    ends_outer = {id(site.stmts[site.index]) for eid in break_edges
                  if (site := cfg.edges[eid].site).kind is SiteKind.INSERT
                  and site.stmts is not None and site.index < len(site.stmts)}
    headers = {id(piece.node): block.id for block in cfg.blocks for piece in block.pieces
               if piece.role in (Role.TEST, Role.FOR_NEXT)}
    loops: list[LoopSwitch] = []
    for node in ast.walk(cfg.node):
        if not isinstance(node, ast.For | ast.AsyncFor | ast.While):
            continue
        where = parents.get(id(node))
        if where is None or id(where[0]) in enclosed:
            continue
        header = headers.get(id(node.test if isinstance(node, ast.While) else node.target))
        start = starts.get(header) if header is not None else None
        if header is None or start is None:
            continue
        probe = fp.plan.probes.get(start)
        into_body = [dag.normal_edges.get(eid) for eid in cfg.out_edges(header)
                     if cfg.edges[eid].label in ("true", "next")]
        if probe is None or probe.op is not ProbeOp.SET or len(into_body) != 1 \
                or into_body[0] is None:
            continue
        own = _loop_breaks(node)
        if any(through or id(stmts) in enclosed for _, stmts, through in own):
            continue
        breaks = [b for b, _, _ in own if id(b) in ends_outer]
        if any(id(b) in outer_breaks and id(b) not in ends_outer for b, _, _ in own):
            continue  # (no such break is known: its code would be lost)
        memo: dict[int, Any] = {}
        original = _original_copy(node.body, memo)
        inside = next(loop.body for loop in cfg.loops if loop.header == header)
        inner_starts = tuple(sorted(edge for block, edge in path_starts.items()
                                    if block in inside and block != header))
        loops.append(LoopSwitch(node, len(loops), header, start, into_body[0], probe.value,
                                original, {id(b): memo[id(b)] for b in breaks},
                                inner_starts))
    return loops


def wrap_loop_switches(fp: FunctionPlan) -> None:
    """Give each loop of ``fp.loop_switches`` its original body, after the probes
    went in::

        @pp_o<k> = False
        while <test>:
            if @pp_o<k>: <original body>
            else: <measured body>        # its backedges may set @pp_o<k>
        else:
            if @pp_o<k>: @pp_r = <start value>      # (_restore_on_exit)
            <measured else>

    The first iteration of every loop entry is measured (its path comes from
    outside the loop). The inserted code is located where the code that runs next
    anyway is, so tracers see no extra line."""
    parents = _parents(fp.cfg.node)  # (statement lists stay the same objects below)
    for loop in fp.loop_switches:
        node = loop.node
        mode = loop_mode_name(loop.ordinal)
        test = _load(mode)
        first = _first_code(loop.original)
        if first is not None and not fp.mark_probes:
            ast.copy_location(test, first)
        else:
            _artificial(test)
        choose = ast.If(test=test, body=loop.original, orelse=node.body)
        ast.copy_location(choose, test)
        choose.end_lineno, choose.end_col_offset = test.end_lineno, test.end_col_offset
        node.body = [choose]
        if not (isinstance(node, ast.While) and is_constant_true(node.test)):
            _restore_on_exit(node, mode, loop.start_value, fp.mark_probes)
        stmts, _ = parents[id(node)]
        init = _assign(mode, _const(False))
        if not fp.mark_probes:
            _locate_at([init], _first_evaluated(node.test if isinstance(node, ast.While)
                                                else node.iter))
        stmts.insert(next(i for i, stmt in enumerate(stmts) if stmt is node), init)


def _restore_on_exit(node: ast.For | ast.AsyncFor | ast.While, mode: str, start: int,
                     mark_probes: bool) -> None:
    """At the start of ``node``'s ``else``: ``if @pp_o<k>: @pp_r = <start>``.

    Code after a jump starts a block of its own; code there without a location
    would leave CPython 3.12 the function's return after it without a line. So the
    test and the inserted code after it are located at the line the loop ends on
    (its ``for``'s iterable, its ``while``'s test), which runs just before anyway;
    where that line is not one line, the jump-free ``@pp_r = (@pp_r,
    <start>)[@pp_o<k>]`` does it (and in a build with ``mark_probes``, which
    locates nothing)."""
    line = _loop_exit_line(node)
    if line is None or mark_probes:
        restore = _assign(REGISTER, ast.Subscript(
            value=ast.Tuple(elts=[_load(REGISTER), _const(start)], ctx=ast.Load()),
            slice=_load(mode), ctx=ast.Load()))
        after = _first_code(node.orelse)
        if after is not None and not mark_probes:
            _locate_at([restore], after)
        node.orelse.insert(0, restore)
        return
    node.orelse.insert(0, _artificial(ast.If(  # type: ignore[arg-type]
        test=_load(mode), body=[_assign(REGISTER, _const(start))], orelse=[])))
    inserted = 0
    while inserted < len(node.orelse) and _is_inserted(node.orelse[inserted]):
        inserted += 1
    _locate_at(node.orelse[:inserted], _line_anchor(line))


def add_switch(fp: FunctionPlan, original: list[ast.stmt]) -> None:
    """``if _@pp_i<n>: <measured body> else: <original body>`` after the docstring.

    One global load and test per call; once the runtime sets the switch false,
    each call runs the program's own statements with no probe at all. A call that
    began measured ends measured, so every path counted is a whole path. The test
    is located at the first statement's code, as the register's start is, so
    tracers see no extra line."""
    node = fp.cfg.node
    start = fp.cfg.body_start
    head, measured = node.body[:start], node.body[start:]
    test = _load(switch_name(fp.index))
    first = _first_code(original)
    if first is not None and not fp.mark_probes:
        ast.copy_location(test, first)
    else:
        _artificial(test)
    switch = ast.If(test=test, body=measured, orelse=original)
    ast.copy_location(switch, test)
    switch.end_lineno, switch.end_col_offset = test.end_lineno, test.end_col_offset
    node.body = [*head, switch]


def capture_globals(fp: FunctionPlan) -> None:
    """In ``fp``'s function, if a generator or coroutine, read pathprof's other module
    globals into locals as it starts (``@pp_gc3 = _@pp_c3``...) and use those: one
    suspended as the interpreter shuts down, when every module global is set to
    None, can still run its ``finally`` clauses and handlers as ``close()`` throws
    ``GeneratorExit`` in (:mod:`pathprof.runtime.shutdown` freezes the code of
    functions that start afresh then); not the globals that change while the
    program runs (:func:`~pathprof.python.names.is_capturable`). The reads go after
    the docstring. Functions, classes and lambdas inside it are left alone."""
    node = fp.cfg.node
    start = fp.cfg.body_start
    if not (isinstance(node, ast.AsyncFunctionDef) or _is_generator(node)):
        return
    captured: dict[str, str] = {}
    pending: list[ast.AST] = list(node.body[start:])
    while pending:
        child = pending.pop()
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
                      | ast.Lambda):
            continue  # (their decorators, defaults and bases are the program's code)
        if (isinstance(child, ast.Name) and isinstance(child.ctx, ast.Load)
                and is_capturable(child.id)):
            local = captured_name(child.id)
            captured[local] = child.id
            child.id = local
        pending.extend(ast.iter_child_nodes(child))
    if not captured:
        return
    reads = [_assign(local, _load(name)) for local, name in sorted(captured.items())]
    first = _first_program_code(node.body[start:])
    if first is not None and not fp.mark_probes:
        _locate_at(reads, first)
    node.body[start:start] = reads


def _first_program_code(stmts: list[ast.stmt]) -> ast.AST | None:
    """:func:`_first_code`, looking into the statements pathprof wrapped the
    program's in (an inserted ``try``, the measured branch of a switch)."""
    for stmt in stmts:
        if _is_inserted(stmt) and isinstance(stmt, ast.Try | ast.If):
            found = _first_program_code(stmt.body)
            if found is not None:
                return found
            continue
        found = _first_code([stmt])
        if found is not None:
            return found
    return None


def _artificial_shell(node: ast.AST) -> None:
    """Make an inserted compound statement artificial without touching the probe
    statements inside it (already artificial)."""
    _artificial(node)


def _enclosed_lists(func: ast.AST) -> set[int]:
    """Ids of the statement lists of ``func`` (not of functions or classes nested in
    it) that lie inside a ``with``, or a ``try`` with a ``finally`` or ``except*``."""
    enclosed: set[int] = set()

    def visit(stmts: list[ast.stmt], inside: bool) -> None:
        if inside:
            enclosed.add(id(stmts))
        for stmt in stmts:
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                continue
            wraps = inside or isinstance(stmt, ast.With | ast.AsyncWith | ast.TryStar) or (
                isinstance(stmt, ast.Try) and bool(stmt.finalbody))
            for field_name in ("body", "orelse", "finalbody"):
                inner = getattr(stmt, field_name, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                    visit(inner, wraps)
            for handler in getattr(stmt, "handlers", ()):
                visit(handler.body, wraps)
            for case in getattr(stmt, "cases", ()):
                visit(case.body, wraps)

    visit(func.body, False)  # type: ignore[attr-defined]
    return enclosed


def _parents(func: ast.AST) -> dict[int, tuple[list[ast.stmt], int]]:
    """Statement id -> (the list holding it, its index), within one function."""
    result: dict[int, tuple[list[ast.stmt], int]] = {}
    for node in ast.walk(func):
        for field_name in ("body", "orelse", "finalbody"):
            stmts = getattr(node, field_name, None)
            if isinstance(stmts, list):
                for i, stmt in enumerate(stmts):
                    if isinstance(stmt, ast.stmt):
                        result[id(stmt)] = (stmts, i)
    return result


def _apply_structural(structural: list[tuple[str, Any, Any]],
                      parents: dict[int, tuple[list[ast.stmt], int]],
                      mark_probes: bool = False) -> None:
    """Wrap ``with`` bodies and ``try``/``finally`` statements, and move the dispatch
    at the end of each ``finally`` into its branches (after the inserts). Inner
    ``finally`` clauses sink first: where a ``break`` in an inner clause also ends
    the outer clause, the inner dispatch must come before the outer one's, as the
    inner clause ends first (the outer one would end the path and leave the inner
    one nothing to count)."""
    dispatches = [(node, handler) for kind, node, handler in structural if kind == "dispatch"]
    for node, handler in reversed(dispatches):
        setattr(node, _FALL_WAYS, _sink_dispatch(node.finalbody, handler, mark_probes))
    for kind, node, handler in structural:
        if kind == "dispatch":
            continue
        if kind == "with":
            inner = ast.Try(body=node.body, handlers=[handler], orelse=[], finalbody=[])
            node.body = [_artificial_try(inner)]
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


#: An attribute of the tests pathprof puts at the end of a ``finally`` clause, one
#: per way the clause was entered (its last ``orelse`` is the way of falling in).
_ROUTE_TEST = "_pathprof_route_test"
#: An attribute of a ``try`` whose ``finally`` dispatch was sunk: the statement lists
#: that end its clause's copies of the way of falling through (None: not sunk).
_FALL_WAYS = "_pathprof_fall_ways"


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
        if stmt is None or _is_inserted(stmt):
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
                _artificial(wildcard)
                stmt.cases.append(wildcard)
                cases.append(wildcard.body)
            return cases
        if isinstance(stmt, ast.Try) and not stmt.finalbody:
            return [stmt.orelse or stmt.body, *(h.body for h in stmt.handlers)]
        if isinstance(stmt, ast.Try | ast.TryStar) and stmt.finalbody:
            # falls through at the end of its own clause's copies of falling through
            return getattr(stmt, _FALL_WAYS, None)
        if isinstance(stmt, ast.For | ast.AsyncFor | ast.While):
            breaks = _breaks_of(stmt)
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

    def sink(stmts: list[ast.stmt], entry_line: int | None, breaks: bool = False) -> None:
        """Put a copy of the dispatch at the end of ``stmts`` or of each of its
        ways out; ``entry_line`` is the line of the code that leads into ``stmts``
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
            loop = isinstance(tail, ast.For | ast.AsyncFor | ast.While)
            for number, way in enumerate(ways):
                sink(way, _entry_line(tail, way), breaks=loop and number > 0)  # type: ignore[arg-type]
            return
        # Several ways may lead here (a with's normal and swallowing exits, a
        # loop's two tests, the artificial code after them): the copy and that code
        # are located at the one line they all come from, so the re-raise after
        # them has it too; at that line already, tracers see no new line.
        program = [i for i, stmt in enumerate(stmts) if not _is_inserted(stmt)]
        line = _exit_line(stmts[program[-1]]) if program else entry_line
        copies = placed(copy.deepcopy(dispatch))
        if line is not None and not mark_probes:
            after = stmts[program[-1] + 1:] if program else stmts
            _locate_at([*after, *copies], _line_anchor(line))
        stmts.extend(copies)

    sink(finalbody, None)
    return falls


def _is_inserted(stmt: ast.stmt) -> bool:
    return stmt.lineno in (UNLOCATED, PROBE_MARK_LINE)


def _line_anchor(line: int) -> ast.AST:
    return ast.Pass(lineno=line, end_lineno=line, col_offset=0, end_col_offset=0)


def _entry_line(stmt: ast.stmt, way: list[ast.stmt]) -> int | None:
    """The line of the jumps into ``way``, one of ``stmt``'s ways out, if there may
    be several and they share a line: a ``while``'s ``else`` (both copies of its
    test), an ``if``'s empty ``else`` (a test of several conditions), the ``case _``
    pathprof adds after a last case whose pattern and guard fail on one line."""
    if isinstance(stmt, ast.While) and way is stmt.orelse:
        return _loop_exit_line(stmt)
    if isinstance(stmt, ast.If) and way is stmt.orelse and all(map(_is_inserted, way)):
        return _one_line(stmt.test)
    if isinstance(stmt, ast.Match) and len(stmt.cases) > 1 and way is stmt.cases[-1].body \
            and _is_inserted(stmt.cases[-1].pattern):
        last = stmt.cases[-2]
        line = _one_line(last.pattern)
        if line is not None and (last.guard is None or _one_line(last.guard) == line):
            return line
    return None


def _one_line(node: ast.AST) -> int | None:
    lineno = getattr(node, "lineno", None)
    return lineno if lineno is not None and lineno == node.end_lineno else None


def _loop_exit_line(stmt: ast.stmt | None) -> int | None:
    """The line of the instructions that leave loop ``stmt`` when it ends without a
    break (``for``: getting the next item; ``while``: its test, if on one line)."""
    if isinstance(stmt, ast.For | ast.AsyncFor):
        return stmt.iter.lineno
    if isinstance(stmt, ast.While):
        return _one_line(stmt.test)
    return None


def _exit_line(stmt: ast.stmt) -> int | None:
    """The one line every instruction that falls out of ``stmt`` has, if it is
    known statically: a ``with``'s exit, a loop's end without breaks, the end of a
    ``finally``, a simple statement's own line; None where it varies by way out."""
    if isinstance(stmt, ast.With | ast.AsyncWith):
        return stmt.lineno
    if isinstance(stmt, ast.For | ast.AsyncFor | ast.While):
        if _breaks_of(stmt) != []:
            return None
        if stmt.orelse:
            return _list_exit_line(stmt.orelse)
        return _loop_exit_line(stmt)
    if isinstance(stmt, ast.Try | ast.TryStar) and stmt.finalbody:
        return _list_exit_line(stmt.finalbody)
    if isinstance(stmt, ast.Try | ast.TryStar | ast.If | ast.Match | ast.FunctionDef
                  | ast.AsyncFunctionDef | ast.ClassDef):
        return None
    return stmt.lineno


def _list_exit_line(stmts: list[ast.stmt]) -> int | None:
    program = [stmt for stmt in stmts if not _is_inserted(stmt)]
    return _exit_line(program[-1]) if program else None


def _loop_breaks(loop: ast.For | ast.AsyncFor | ast.While
                 ) -> list[tuple[ast.Break, list[ast.stmt], bool]]:
    """The ``break`` statements of ``loop`` (not of a loop inside it), each with its
    statement list and whether it leaves through a ``with`` or a ``finally`` (code
    runs between the break and the loop's end)."""
    found: list[tuple[ast.Break, list[ast.stmt], bool]] = []

    def visit(stmts: list[ast.stmt], through_cleanup: bool) -> None:
        for stmt in stmts:
            if isinstance(stmt, ast.Break):
                found.append((stmt, stmts, through_cleanup))
            elif isinstance(stmt, ast.For | ast.AsyncFor | ast.While):
                visit(stmt.orelse, through_cleanup)  # its body's breaks are its own
            elif isinstance(stmt, ast.If):
                visit(stmt.body, through_cleanup)
                visit(stmt.orelse, through_cleanup)
            elif isinstance(stmt, ast.With | ast.AsyncWith):
                visit(stmt.body, True)
            elif isinstance(stmt, ast.Try | ast.TryStar):
                inner = through_cleanup or bool(stmt.finalbody)
                for part in (stmt.body, stmt.orelse, *(h.body for h in stmt.handlers)):
                    visit(part, inner)
                visit(stmt.finalbody, through_cleanup)
            elif isinstance(stmt, ast.Match):
                for case in stmt.cases:
                    visit(case.body, through_cleanup)

    visit(loop.body, False)
    return found


def _breaks_of(loop: ast.For | ast.AsyncFor | ast.While) -> list[list[ast.stmt]] | None:
    """The statement lists that end in a ``break`` of ``loop``, or None if a break
    of it leaves through a ``with`` or a ``finally`` or is not the last statement
    of its list."""
    breaks = _loop_breaks(loop)
    if any(through or stmts[-1] is not brk for brk, stmts, through in breaks):
        return None
    return [stmts for _, stmts, _ in breaks]


def _time_path(table: str, probe: Probe) -> list[ast.stmt]:
    """``--metric time``: add the time since the path started to the path's total,
    and start the next path's clock (Ball-Larus path numbers index both tables)."""
    index = _register_plus(probe.value) if probe.op is ProbeOp.COUNT else _const(probe.value)
    target = ast.Subscript(value=_load(table), slice=index, ctx=ast.Load())
    target.ctx = ast.Store()
    code = [
        _assign(NOW, ast.Call(func=_load(CLOCK), args=[], keywords=[])),
        _artificial(ast.AugAssign(target=target, op=ast.Add(),
                                  value=ast.BinOp(left=_load(NOW), op=ast.Sub(),
                                                  right=_load(PATH_START)))),
        _assign(PATH_START, _load(NOW)),
    ]
    return code  # type: ignore[return-value]


def _path_index(probe: Probe) -> ast.expr:
    return _register_plus(probe.value) if probe.op is ProbeOp.COUNT else _const(probe.value)


def _count_down(index: int, probe: Probe) -> list[ast.stmt]:
    """OSP's bulk skipping where a path ends (:mod:`pathprof.measure.subpaths`):
    ``_@pp_Q[0] -= _@pp_l<i>[path]``, and ``if _@pp_Q[0] <= 0: _@pp_m.osp_path(i,
    path)`` -- the runtime is called when a sample is near, and for every path while
    blocks are observed."""
    countdown = ast.Subscript(value=_load(COUNTDOWN), slice=_const(0), ctx=ast.Store())
    step = ast.AugAssign(target=countdown, op=ast.Sub(), value=ast.Subscript(
        value=_load(lengths_name(index)), slice=_path_index(probe), ctx=ast.Load()))
    near = ast.Compare(left=ast.Subscript(value=_load(COUNTDOWN), slice=_const(0),
                                          ctx=ast.Load()),
                       ops=[ast.LtE()], comparators=[_const(0)])
    call = ast.Expr(value=_call_module("osp_path", _const(index), _path_index(probe)))
    return [_artificial(step), _artificial(ast.If(test=near, body=[call], orelse=[]))]  # type: ignore[list-item]


def _restart_clock() -> ast.stmt:
    return _assign(PATH_START, ast.Call(func=_load(CLOCK), args=[], keywords=[]))


def exception_position() -> list[ast.expr]:
    """``lasti`` of the leaving exception in this frame, the frame's code, and the
    lasti of the exception's context (-1 if none), with C calls and attribute loads
    only: evaluated as the exception leaves, nothing can raise anew (a call into
    Python could, at the recursion limit). The module state ``_@pp_m`` offers
    ``exception``, ``getframe`` and ``getattr`` (class attributes, there even as the
    interpreter shuts down).

    A lasti is read only from a traceback entry of this very frame, and is -1
    otherwise: the program may have cleared the exception's ``__traceback__``
    (``e.__traceback__ = None; raise``), given it another frame's, or chained
    another exception as its context; a bare ``raise`` adds no entry for the frame
    it runs in. The test is ``(tb.tb_frame is frame) * (tb.tb_lasti + 1) - 1``,
    through ``getattr`` with defaults: no conditional expression, since CPython
    3.13.0 fails to compile a ``:=`` in one inside an except clause ("Invalid
    CFG, stack underflow")."""
    def runtime(name: str) -> ast.expr:
        return ast.Attribute(value=_load(MODULE), attr=name, ctx=ast.Load())

    def call(func: ast.expr, *args: ast.expr) -> ast.expr:
        return ast.Call(func=func, args=list(args), keywords=[])

    def getattr_or(value: ast.expr, name: str, default: Any) -> ast.expr:
        return call(runtime("getattr"), value, _const(name), _const(default))

    def lasti_here(exc: ast.expr) -> ast.expr:
        tb = getattr_or(exc, "__traceback__", None)
        here = ast.Compare(left=getattr_or(tb, "tb_frame", None), ops=[ast.Is()],
                           comparators=[call(runtime("getframe"))])
        plus_one = ast.BinOp(left=getattr_or(tb, "tb_lasti", -1), op=ast.Add(),
                             right=_const(1))
        return ast.BinOp(left=ast.BinOp(left=here, op=ast.Mult(), right=plus_one),
                         op=ast.Sub(), right=_const(1))

    exception = call(runtime("exception"))
    code = ast.Attribute(value=call(runtime("getframe")), attr="f_code", ctx=ast.Load())
    # Raised while matching an except clause, the exception's own instruction is the
    # clause's: where the path was is where its context (the exception being
    # matched, caught in this frame) was raised.
    context = getattr_or(call(runtime("exception")), "__context__", None)
    return [lasti_here(exception), code, lasti_here(context)]


def _note_exit(fp: FunctionPlan, register: ast.expr) -> list[tuple[str, ast.expr]]:
    """The observer's effects: count the exit in ``_@pp_m.exits``, a dict from
    ``(index, @pp_r, lasti, code, context lasti, closed)`` (see
    :func:`exception_position`; ``closed``: a generator closed by its consumer)
    to how often it happened, so that its size is bounded by the code, not by how
    many exceptions leave (with ``--metric time``, also add the path's time so far
    to ``_@pp_m.exit_times``). Only C calls: nothing can raise anew as the exception
    leaves. The frame is ending, so its register holds the key meanwhile::

        @pp_r := (index, @pp_r, ...)
        @pp_r := _@pp_m.exits.__setitem__(@pp_r, _@pp_m.exits.get(@pp_r, 0) + 1)
    """
    # A generator's: whether its consumer closed it (close() throws GeneratorExit in).
    closed: ast.expr = _const(False)
    if _is_generator(fp.cfg.node):
        thrown = ast.Attribute(value=ast.Call(func=ast.Attribute(
            value=_load(MODULE), attr="exception", ctx=ast.Load()), args=[], keywords=[]),
            attr="__class__", ctx=ast.Load())
        closed = ast.Compare(left=thrown, ops=[ast.Is()], comparators=[ast.Attribute(
            value=_load(MODULE), attr="closed_type", ctx=ast.Load())])
    key = ast.Tuple(elts=[_const(fp.index), register, *exception_position(), closed],
                    ctx=ast.Load())

    def add_to(table: str, amount: ast.expr) -> ast.expr:
        mapping = ast.Attribute(value=_load(MODULE), attr=table, ctx=ast.Load())
        current = ast.Call(func=ast.Attribute(value=mapping, attr="get", ctx=ast.Load()),
                           args=[_load(REGISTER), _const(0)], keywords=[])
        return ast.Call(func=ast.Attribute(value=mapping, attr="__setitem__", ctx=ast.Load()),
                        args=[_load(REGISTER), ast.BinOp(left=current, op=ast.Add(),
                                                         right=amount)],
                        keywords=[])

    effects: list[tuple[str, ast.expr]] = [(REGISTER, key)]
    if fp.timed:
        elapsed = ast.BinOp(left=ast.Call(func=_load(CLOCK), args=[], keywords=[]),
                            op=ast.Sub(), right=_load(PATH_START))
        # @pp_r := (<add the time>, @pp_r)[1]: the key stays in the register
        both = ast.Tuple(elts=[add_to("exit_times", elapsed), _load(REGISTER)], ctx=ast.Load())
        effects.append((REGISTER, ast.Subscript(value=both, slice=_const(1), ctx=ast.Load())))
    effects.append((REGISTER, add_to("exits", _const(1))))
    return effects


def _is_generator(node: ast.AST) -> bool:
    """Whether the function ``node`` is a generator (or an async generator): a
    ``yield`` of its own, not of a function, lambda or class inside it. (Kept on the
    node, asked twice: the instrumentation adds no ``yield``.)"""
    known = getattr(node, _GENERATOR, None)
    if known is not None:
        return known
    pending = list(ast.iter_child_nodes(node))
    found = False
    while pending and not found:
        child = pending.pop()
        if isinstance(child, ast.Yield | ast.YieldFrom):
            found = True
        elif not isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
                            | ast.ClassDef):
            pending.extend(ast.iter_child_nodes(child))
    setattr(node, _GENERATOR, found)
    return found


#: the attribute of a function's node that keeps :func:`_is_generator`'s answer
_GENERATOR = "_pathprof_generator"


def _artificial_try(node: ast.Try) -> ast.Try:
    node.lineno = node.end_lineno = UNLOCATED
    node.col_offset = node.end_col_offset = -1
    return node


def _wrap_function(fp: FunctionPlan) -> None:
    """Set the register on entry; record the path an exception cuts as it leaves.

    The body goes in ``try: ... except <observer>: pass`` whose clause never matches:
    returns are counted where they happen, so nothing runs after the body on the
    way out, and an exception leaves exactly as it would without pathprof.
    """
    node = fp.cfg.node
    start = fp.cfg.body_start
    head, body = node.body[:start], node.body[start:]
    if not body:
        body = [_artificial(ast.Pass())]  # type: ignore[list-item]
    # A function whose probes never use the register (each path counted by a constant
    # index: single-path functions, most small ones) needs no register at all: its
    # value would always be 0.
    uses_register = any(isinstance(n, ast.Name) and n.id == REGISTER
                        for stmt in body for n in ast.walk(stmt))
    observer = _observer(_note_exit(fp, _load(REGISTER) if uses_register else _const(0)))
    # The observer has no location; after compiling, pathprof.python.lasti makes it
    # re-raise as a with statement does, so the frame an exception leaves stands at
    # the instruction the exception came from (its f_lineno is the program's).
    wrapper = ast.Try(body=body, handlers=[observer], orelse=[], finalbody=[])
    _artificial_try(wrapper)
    init = _assign(REGISTER, _const(0))
    starts = [_restart_clock()] if fp.timed else []
    # Code at the very start would inherit the location of the def line (from
    # RESUME) and make tracers see that line again: place it where the first
    # statement's code starts, whose line comes next anyway.
    first = _first_code(body)
    if first is not None and not fp.mark_probes:
        _locate_at([init], first)
    if fp.subpaths:  # OSP: while blocks are observed, the runtime hears of the call
        call = ast.Expr(value=_call_module("osp_enter", _const(fp.index)))
        starts.append(_artificial(ast.If(test=_load(OBSERVING), body=[call], orelse=[])))  # type: ignore[arg-type]
    table = ([_artificial(_assign(LOCAL_TABLE, _load(counter_name(fp.index))))]
             if fp.local_table else [])
    if not fp.mark_probes:
        for stmt in [*starts, *table]:
            _locate_at([stmt], init)
    node.body = [*head, *([init] if uses_register else []), *table, *starts, wrapper]


#: An attribute set on inserted code located at a later statement of the program
#: (:meth:`_FunctionRewriter.flow_code`): it is not where the program's code begins.
_LOCATED_LATER = "_pathprof_located_later"


def _first_code(stmts: list[ast.stmt]) -> ast.AST | None:
    """Where the first statement that compiles to code begins: a location of no
    width at its start. (Not the statement's own span: code located at an ``if``
    that spans lines 4 to 5 would put a method call's instruction on line 5, the
    span's end, where CPython 3.11 locates the loading of a method, and a tracer
    would see line 5 before line 4 ran.)"""
    for stmt in stmts:
        if isinstance(stmt, ast.Global | ast.Nonlocal):
            continue
        if getattr(stmt, "lineno", -1) in (UNLOCATED, PROBE_MARK_LINE):
            continue
        if getattr(stmt, _LOCATED_LATER, False):
            continue
        decorators = getattr(stmt, "decorator_list", None)
        start = decorators[0] if decorators else stmt
        return ast.Pass(lineno=start.lineno, end_lineno=start.lineno,
                        col_offset=start.col_offset, end_col_offset=start.col_offset)
    return None
