"""The function rewriter of path and edge mode: a function's probe plan
(:mod:`pathprof.python.plan`) put into its tree as code.

The probes go in at the sites of the CFG's edges (:mod:`pathprof.python.cfg`):

* ``@pp_r`` is the path register, a local of the frame (so recursion, threads and
  generators need no locking), set to 0 on entry where a probe uses it;
* chords get ``@pp_r = c`` or ``@pp_r += c``; a backedge counts and resets,
  ``_@pp_c3[@pp_r + c] += 1; @pp_r = c2``; in edge mode, chords count
  ``_@pp_c3[k] += 1``;
* a return counts its path where it happens: before its value is computed when
  nothing of the function runs after it and the value cannot suspend the frame
  (should the value raise, the runtime takes the count back), after it otherwise;
* the body goes in ``try: ... except <observer>: pass``, whose clause never matches:
  its type expression notes the path an exception cuts short as it leaves
  (:mod:`pathprof.python.exits`), and the exception leaves as without pathprof;
* exception handlers, ``finally`` clauses (which dispatch at their end on how they
  were entered), ``except*`` clauses and ``with`` statements get the calls into
  :mod:`pathprof.runtime` that record cut paths and start new ones.

Inserted code is located where the program's code that runs next starts, with no
width, or where no such code is known, left without a location (line -1), which
CPython fills in from the instructions before it (:mod:`pathprof.python.nodes`).
Either way it makes no line event of its own and, as probe code does not raise,
shows in no traceback; the program's nodes keep their own locations, so
tracebacks, ``co_firstlineno``, ``co_qualname`` and coverage tools see the program
as written.

The names the code uses are :mod:`pathprof.python.names`; the original bodies of
coverage that stops paying are :mod:`pathprof.python.switches`; event mode's
rewriter builds on this one (:mod:`pathprof.python.eventcode`).
"""

from __future__ import annotations

import ast
import copy
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from pathprof.constructs import TRIES, WITHS
from pathprof.exceptions import CfgError
from pathprof.graph import Probe, ProbeOp
from pathprof.python.cfg import ROUTE_RAISE
from pathprof.python.cfgtypes import FinallyInfo, Site, SiteKind
from pathprof.python.exits import exit_effects
from pathprof.python.names import (
    CLOCK,
    CODE_VERSION,
    LOCAL_TABLE,
    MODULE,
    OBSERVING,
    PARKED,
    PATH_START,
    REGISTER,
    RETURN_VALUE,
    TRACK,
    counter_name,
    flag_name,
    loop_mode_name,
    loop_switch_name,
    star_name,
    timer_name,
)
from pathprof.python.nodes import (
    add,
    artificial,
    artificial_shell,
    assign,
    call_module,
    child_nodes,
    const,
    copy_tree,
    count,
    first_code,
    first_evaluated,
    line_anchor,
    load,
    locate_at,
    mark_located_later,
    observer,
    store,
    walk,
)
from pathprof.python.plan import FunctionPlan
from pathprof.python.probecode import (
    count_down,
    note_call,
    path_index,
    register_plus,
    restart_clock,
    time_path,
)
from pathprof.python.statements import enclosed_lists, loop_exit_line, statement_parents
from pathprof.python.structural import Structural, apply_structural, mark_route_test
from pathprof.python.switches import wrap_loop_switches

__all__ = [
    "CODE_VERSION",
    "FLAG",
    "PROBE",
    "RESTART",
    "RETURN_CODE",
    "Edits",
    "FunctionRewriter",
    "count_calls",
    "rewrite_function",
    "uses_local_table",
]


def _loaded(node: ast.expr) -> ast.expr:
    """A fresh read of what ``node`` (a name, or a read of the module's holder) stores
    to or reads."""
    copied = copy_tree(node)
    copied.ctx = ast.Load()  # type: ignore[attr-defined]
    return copied


@dataclass
class Edits:
    """Statements to insert, keyed by statement list; applied all at once, each
    list's insertion points from the last to the first (so that every index still
    means the place it was recorded for). At one insertion point, the code goes in
    by priority (:data:`RESTART` first), then in the order it was added."""

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


#: Priorities at one insertion point: restarting a path comes first, then route
#: flags, then edge probes, then the code of a return statement.
RESTART, FLAG, PROBE, RETURN_CODE = 0, 1, 2, 3


class FunctionRewriter:
    """Puts the probes of one function's plan into its tree, in place (:meth:`run`).

    :meth:`rewrite` goes over the CFG's edges and puts the code of each one's probe
    (:meth:`edge_code`) at its site, as the kind of site asks (before a statement,
    around a return, into a ``case`` guard, in a ``finally``'s dispatch...); then
    the route flags and dispatch of ``finally`` clauses, the restarts of handlers
    and ``with`` statements, and the hand-overs of ``except*`` clauses that flow
    on. A subclass changes what code goes where by overriding those methods (event
    mode: :class:`pathprof.python.eventcode.EventRewriter`).

    The invariant: while :meth:`rewrite` runs, no statement list in the function's
    tree changes, so that the sites the CFG recorded (a list, an index in it) and
    :attr:`parents` stay right. Code to insert is collected in :attr:`edits`, and
    the changes that move statements (the ``try`` statements around bodies, the
    dispatch sunk into a ``finally``'s branches) in :attr:`structural`; :meth:`run`
    applies the first, then the second. Only expressions are replaced in place (a
    return's value, a guard, a suspension), and the loops' original bodies, copies
    not in the tree yet, get their code directly. Inserted code is artificial or
    located at the code that runs next (:meth:`locate`); the program's nodes keep
    their locations.
    """

    def __init__(self, fp: FunctionPlan) -> None:
        self.fp = fp
        self.cfg = fp.cfg
        self.dag = fp.numbering.dag
        self.plan = fp.plan
        #: code to insert at the sites, applied after :meth:`rewrite`
        self.edits = Edits()
        #: statement changes, applied after the edits (:mod:`pathprof.python.structural`)
        self.structural: list[Structural] = []
        #: statement id -> (the list holding it, its index), as before the rewrite
        self.parents = statement_parents(fp.cfg.node)
        self.counter = LOCAL_TABLE if fp.local_table else counter_name(fp.index)
        self.timed = fp.timed
        #: Statement lists (by id) from which a return still runs code of this
        #: function: inside a with, or a try with a finally or except* clauses.
        self.enclosed = enclosed_lists(fp.cfg.node)
        #: each ``while``'s else list (by id): see :meth:`locate_in_empty_else`
        self._while_elses: dict[int, ast.While] | None = None

    def run(self) -> None:
        """Rewrite the function: collect the code (:meth:`rewrite`), insert it, then
        make the structural changes."""
        self.rewrite()
        self.edits.apply()
        apply_structural(self.structural, self.parents, self.fp.mark_probes)

    def locate(self, nodes: list[ast.stmt], anchor: ast.AST) -> list[ast.stmt]:
        """:func:`~pathprof.python.nodes.locate_at`, unless the build marks probes
        (:attr:`~pathprof.python.plan.FunctionPlan.mark_probes`)."""
        return nodes if self.fp.mark_probes else locate_at(nodes, anchor)

    # -- probe code ---------------------------------------------------------

    def probe_code(self, probe: Probe | None, *, ends_call: bool, dummy: bool = False,
                   edge: int | None = None) -> list[ast.stmt]:
        """The code of ``probe``, the probe on dag edge ``edge``."""
        if probe is None:
            return []
        if probe.op is ProbeOp.SET:
            if probe.value == 0 and not dummy:
                return []  # the register is 0 from the function's start
            return [assign(REGISTER, const(probe.value))]
        if probe.op is ProbeOp.ADD:
            return [add(REGISTER, probe.value)]
        index = register_plus(probe.value) if probe.op is ProbeOp.COUNT else const(probe.value)
        if self.fp.subpaths:
            # OSP needs no path counts: the countdown alone, where a path ends.
            code = count_down(self.fp.index, probe,
                               None if edge is None else self.fp.end_lengths.get(edge))
        else:
            code = [count(self.counter, index)]
        if self.timed:
            code += time_path(timer_name(self.fp.index), probe)
        if ends_call:
            code.append(assign(REGISTER, const(None)))
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
            code = [] if slot is None else [count(self.counter, const(slot))]
            edge = self.cfg.edges[eid]
            if ((edge.dst == self.cfg.exit or edge.label == "re-raise")
                    and not self.plain_return(eid)):
                code.append(assign(REGISTER, const(None)))  # the call's flow has ended
            return code
        dag = self.dag
        if eid in dag.backedges:
            end, start = dag.backedges[eid]
            return (self.probe_code(self.plan.probes.get(end), ends_call=False, edge=end)
                    + self.probe_code(self.plan.probes.get(start), ends_call=False, dummy=True,
                                      edge=start))
        dag_edge = dag.normal_edges.get(eid)
        if dag_edge is None:
            return []  # leaves an unreachable block
        into_exit = dag.edges[dag_edge].dst == dag.exit
        code = self.probe_code(self.plan.probes.get(dag_edge),
                               ends_call=into_exit and not self.plain_return(eid), edge=dag_edge)
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
            stmts, _ = statement_parents(shell)[id(twin)]
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
                    test=load(loop_switch_name(self.fp.index, loop.ordinal)),
                    body=[assign(REGISTER, load(PARKED)),
                          assign(loop_mode_name(loop.ordinal), const(True))],
                    orelse=[])
                return [artificial(switch)]
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
        """Collect the code of every edge at its site, then that of the ``finally``
        and ``except*`` clauses and of the restarts, in :attr:`edits` and
        :attr:`structural`: the function's statement lists stay as they are."""
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
                    self.locate(code, first_code(site.stmts[site.index:])
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
                    self.locate(code, first_code(site.stmts[site.index:])
                                or site.stmts[site.index])
                self.edits.add(site.stmts, site.index, code, PROBE)
            elif site.kind is SiteKind.FLOW:
                flows[id(site.node)].append((site, self.edge_code(eid)))
            else:  # DISPATCH
                code = self.edge_code(eid)
                if edge.label == "re-raise" and not code:
                    # A re-raise must still end the path even where it adds nothing.
                    code = [assign(REGISTER, const(None))]
                dispatch[id(site.node)][site.route] = code
        for flag in cfg.route_flags:
            self.edits.add(flag.stmts, flag.index,
                           [assign(flag_name(flag.finally_index),
                                   const(flag.code))], FLAG)
        for node in cfg.star_flows:
            stmts, index = self.location_of(node)
            self.edits.add(stmts, index, [assign(self.star_of(node), const(None))], FLAG)
            if not node.finalbody:  # with one, the finally's observer hands over
                self.structural.append(("star", node, observer(self.handover(node))))
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
        if self._while_elses is None:  # once for the function, from its statements
            self._while_elses = {id(stmts[i].orelse): stmts[i]  # type: ignore[attr-defined,misc]
                                 for stmts, i in self.parents.values()
                                 if type(stmts[i]) is ast.While}
        loop = self._while_elses.get(id(stmts))
        if loop is not None:
            line = loop_exit_line(loop)
            if line is not None:
                self.locate(code, line_anchor(line))

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
        counted: ast.expr
        if self.fp.edge_plan is not None:
            slot = self.fp.chord_slot(eid)
            counted = const(-1 if slot is None else slot)
        else:
            probe = self.plan.probes.get(self.dag.normal_edges[eid])
            assert probe is not None, eid
            assert probe.op in (ProbeOp.COUNT, ProbeOp.COUNT_CONST), probe
            counted = path_index(probe)
        return [assign(name, ast.Tuple(elts=[counted, const(edge.site.route)],
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
            test = ast.Compare(left=ast.Subscript(value=load(name), slice=const(1),
                                                  ctx=ast.Load()),
                               ops=[ast.Eq()], comparators=[const(site.route)])
            chain = [ast.If(test=test, body=code, orelse=chain)]
        body = [*chain, assign(name, const(None))]
        guard = ast.If(test=ast.Compare(left=load(name), ops=[ast.IsNot()],
                                        comparators=[const(None)]),
                       body=body, orelse=[])
        for stmt in walk(guard):
            if isinstance(stmt, ast.If):
                artificial(stmt)  # (the probe code in it is artificial already)
        if not flows:
            return
        site = flows[0][0]
        assert site.stmts is not None
        located: list[ast.stmt] = [guard]
        if site.index < len(site.stmts):
            self.locate(located, first_code(site.stmts[site.index:]) or site.stmts[site.index])
            mark_located_later(guard)
        self.edits.add(site.stmts, site.index, located, RESTART)

    def handover(self, node: ast.AST) -> list[tuple[str, ast.expr]]:
        """Effects of a group leaving flowing ``try`` ``node`` by an exception: the
        hand-over noted by a clause that ran is counted (the register then says the
        path was counted: None), and nothing is pending any more."""
        name = self.star_of(node)
        call = call_module("handover", const(self.fp.index), load(REGISTER), load(name))
        return [(REGISTER, call), (name, const(None))]

    def return_code(self, site: Any, code: list[ast.stmt], *, early: bool, block: int
                    ) -> None:
        """Count the path of a return statement (``site``: a RETURN site, whose node is
        the Return and whose stmts are set, which Site's types do not say).

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
                            for n in walk(value))):
            self.fp.early_returns.add(block)
            # The code runs just before the value's first instruction: located there,
            # it makes no line event of its own (a value starting on a later line
            # than ``return`` would otherwise get its return line reported first).
            self.edits.add(site.stmts, site.index, self.locate(code, first_evaluated(value)),
                           RETURN_CODE)
            return
        elif value is not None and not isinstance(value, ast.Constant):
            keep = ast.Assign(targets=[store(RETURN_VALUE)], value=value)
            artificial(keep.targets[0])
            artificial_shell(keep)  # the value keeps its locations
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
                effects.append(ast.NamedExpr(target=store(REGISTER), value=stmt.value))
            elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
                effects.append(ast.NamedExpr(
                    target=store(REGISTER),
                    value=ast.BinOp(left=load(REGISTER), op=ast.Add(), right=stmt.value)))
            elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Subscript):
                # Edge mode counts a guard edge: ``c.__setitem__(k, c[k] + 1)``, as
                # free of thread switches as ``c[k] += 1`` (the only call is the C
                # method that stores; CPython checks for switches after it returns).
                table, slot = stmt.target.value, stmt.target.slice
                read = ast.Subscript(value=_loaded(table), slice=slot, ctx=ast.Load())
                effects.append(ast.Call(
                    func=ast.Attribute(value=_loaded(table), attr="__setitem__",
                                       ctx=ast.Load()),
                    args=[slot, ast.BinOp(left=read, op=ast.Add(), right=const(1))],
                    keywords=[]))
            else:  # pragma: no cover - nothing else sits on a guard edge
                raise AssertionError("unexpected probe on a guard edge")
        for effect in effects:
            artificial(effect)
        elements = ast.Tuple(elts=[*effects, case.guard], ctx=ast.Load())
        wrapper = ast.Subscript(value=elements, slice=const(len(effects)), ctx=ast.Load())
        # The wrapper stands where the guard stands, so that the jump on its value
        # is located at the guard, as it is without pathprof.
        for node in (elements, wrapper, wrapper.slice):
            ast.copy_location(node, case.guard)
        case.guard = wrapper

    def restart_code(self) -> None:
        fidx = const(self.fp.index)
        for restart in self.cfg.restarts:
            if restart.block not in self.dag.restart_edges:
                continue
            start = const(self.restart_value(restart.block))
            node = restart.node
            if restart.kind in ("handler", "except*") and isinstance(node, ast.ExceptHandler):
                register: ast.expr = load(REGISTER)
                flowing = self.star_try_of(node) if restart.kind == "except*" else None
                if flowing is not None:
                    # A clause before this one handed its group's rest over: count that
                    register = call_module("handover", fidx, register,
                                           load(self.star_of(flowing)))
                code = [self.handler_entry(node, register, start)]
                if flowing is not None:
                    code.append(assign(self.star_of(flowing), const(None)))
                if self.timed:
                    code.append(restart_clock())
                self.edits.add(node.body, 0, code, RESTART)
            elif restart.kind == "with":
                assert isinstance(node, WITHS)
                self.wrap_with(node, restart.block)
            elif restart.kind == "except*":
                # The code after a try with except* clauses.
                assert isinstance(node, ast.stmt)
                self.after_statement(node, start)
            # "finally" restarts are made in finally_code.

    def handler_entry(self, clause: ast.ExceptHandler, register: ast.expr,
                      start: ast.Constant) -> ast.stmt:
        """An except clause is entered: record the path the exception cut and start
        the handler's (``@pp_r = _@pp_m.handler(i, register, start)``).

        The call needs a frame: where the program caught an exception at the recursion
        limit (a recursive function that handles its own RecursionError), it raises a
        RecursionError anew, which would leave the program's handler unrun. Then the
        path is counted as one whose block is unknown and the handler's path starts
        all the same, with no call (subscripts and attribute loads only)::

            try:
                @pp_r = _@pp_m.handler(i, register, start)
            except RecursionError:
                _@pp_m.unattributed[i] += 1
                @pp_r = start          # edge mode: count the edge in, then @pp_r = 0

        The ``except RecursionError`` is located at the program's clause (``clause``),
        which is where the frame stands then: an unlocated clause would be taken for
        an observer (:mod:`pathprof.python.lasti`), and only the rare fallback runs
        it."""
        index = const(self.fp.index)
        call = assign(REGISTER, call_module("handler", index, register, start))
        unattributed = ast.Subscript(
            value=ast.Attribute(value=load(MODULE), attr="unattributed", ctx=ast.Load()),
            slice=const(self.fp.index), ctx=ast.Store())
        fallback: list[ast.stmt] = [ast.AugAssign(target=unattributed, op=ast.Add(),
                                                  value=const(1))]
        if self.fp.edge_plan is None:
            fallback.append(assign(REGISTER, start))
        else:
            if isinstance(start.value, int) and start.value >= 0:
                fallback.append(count(self.counter, start))
            fallback.append(assign(REGISTER, const(0)))
        kind = load("RecursionError")
        catch = ast.ExceptHandler(type=kind, name=None, body=fallback)
        guarded = artificial(ast.Try(body=[call], handlers=[catch], orelse=[], finalbody=[]))
        for node in (catch, kind):
            ast.copy_location(node, clause)
            node.end_lineno, node.end_col_offset = clause.lineno, clause.col_offset
        return guarded

    def after_statement(self, node: ast.stmt, start: ast.expr) -> None:
        """``if @pp_r is None: @pp_r = start`` right after ``node`` (a ``try`` with
        ``except*`` clauses: where the code after its clauses starts, its
        ``finally`` if it has one)."""
        stmts, index = self.after_location(node)
        body = [assign(REGISTER, start)]
        if self.timed:
            body.append(restart_clock())
        if self.fp.edge_plan is not None:
            # Edge mode: count the virtual restart edge; the register only says
            # whether the call's flow is live (0) or has ended (None).
            body = [count(self.counter, start), assign(REGISTER, const(0))]
        check = ast.If(
            test=ast.Compare(left=load(REGISTER), ops=[ast.Is()], comparators=[const(None)]),
            body=body, orelse=[])
        self.edits.add(stmts, index, [artificial(check)], RESTART)

    def location_of(self, node: ast.stmt) -> tuple[list[ast.stmt], int]:
        return self.parents[id(node)]

    def after_location(self, node: ast.stmt) -> tuple[list[ast.stmt], int]:
        """Where the code that runs after ``node``'s clauses starts: its ``finally``
        for a ``try`` that has one (run before what follows the statement), else
        right after the statement."""
        if isinstance(node, TRIES) and node.finalbody:
            return node.finalbody, 0
        stmts, index = self.location_of(node)
        return stmts, index + 1

    def wrap_with(self, node: ast.With | ast.AsyncWith, after: int) -> None:
        """Record the path an exception cuts inside the body before ``__exit__`` sees
        the exception; restart after the ``with`` if ``__exit__`` swallowed it."""
        call = call_module("cut", const(self.fp.index), load(REGISTER))
        self.structural.append(("with", node, observer([(REGISTER, call)])))
        self.after_statement(node, const(self.restart_value(after)))

    def finally_code(self, info: FinallyInfo, branches: dict[int, list[ast.stmt]]) -> None:
        node = info.node
        flag = flag_name(info.index)
        # Set the flag to "fall through" before the try.
        stmts, index = self.location_of(node)
        self.edits.add(stmts, index, [assign(flag, const(0))], FLAG)
        # Dispatch at the end of the finally on how it was entered. A return, break
        # or continue that goes on into an enclosing finally tells that one's flag.
        for code, outer in info.forwards.items():
            handover = assign(flag_name(outer), const(code))
            branches[code] = [handover, *branches.get(code, [])]
        chain: list[ast.stmt] = []
        fall = branches.pop(0, [])
        for code in sorted(branches):
            body = branches[code]
            if not body:
                if not fall:
                    continue  # nothing to do on this route, nor on falling through
                body = [artificial(ast.Pass())]
            test = ast.Compare(left=load(flag), ops=[ast.Eq()], comparators=[const(code)])
            chain.append(ast.If(test=test, body=body, orelse=[]))
        dispatch: list[ast.stmt] = fall
        for branch in reversed(chain):
            assert isinstance(branch, ast.If)
            branch.orelse = dispatch
            mark_route_test(branch)
            dispatch = [branch]
        for stmt in dispatch:
            artificial(stmt)  # (the probe code in it is artificial already)
        self.edits.add(node.finalbody, len(node.finalbody), dispatch, PROBE)
        self.structural.append(("dispatch", node, dispatch))
        effects = [*self.finally_entry(info), (flag, const(ROUTE_RAISE))]
        if any(t is node for t in self.cfg.star_flows):
            effects = [*self.handover(node), *effects]
        self.structural.append(("finally", node, observer(effects)))

    def finally_entry(self, info: FinallyInfo) -> list[tuple[str, ast.expr]]:
        """Effects of entering a finally by an exception: record the cut path, start
        a new one."""
        if info.start in self.dag.restart_edges:
            start = const(self.restart_value(info.start))
        else:
            start = const(0 if self.fp.edge_plan is None else -1)
        call = call_module("handler", const(self.fp.index), load(REGISTER), start)
        effects: list[tuple[str, ast.expr]] = [(REGISTER, call)]
        if self.timed:
            effects.append((PATH_START, ast.Call(func=load(CLOCK), args=[], keywords=[])))
        return effects


# ---------------------------------------------------------------------------
# Whole functions


def count_calls(fp: FunctionPlan) -> None:
    """Count ``fp``'s calls, nothing else: ``_@pp_c<i>[0] += 1`` before its first
    statement (after the docstring), located at that statement's first code so
    that tracers see no extra line. A generator counts when its body starts."""
    fp.calls_only = True
    node = fp.cfg.node
    start = fp.cfg.body_start
    counting = count(counter_name(fp.index), const(0))
    first = first_code(node.body[start:])
    if first is not None and not fp.mark_probes:
        locate_at([counting], first)
    node.body[start:start] = [counting]


def uses_local_table(fp: FunctionPlan) -> bool:
    """Whether ``fp``'s function counts through a local that holds its table.

    In a loop every iteration counts (a path ends at the backedge), and a local is
    the cheapest load there is: a measured A/B run of a tight loop (docs/benchmarks.md,
    issue 21) cut the probes' overhead by 14-16 % on 3.14 and 4-7 % on 3.11, for one
    store per call. So functions with a loop, except those whose locals move out of
    their frame (each use would be a call, :mod:`pathprof.python.outside`) and OSP's,
    which count no paths."""
    from pathprof.python.scan import reaches_own_frame

    return (bool(fp.numbering.dag.backedges) and not fp.subpaths and not fp.calls_only
            and not reaches_own_frame(fp.cfg.node))


def rewrite_function(fp: FunctionPlan) -> None:
    """Put path (or edge) mode's probes into ``fp``'s function, in place."""
    fp.local_table = uses_local_table(fp)
    FunctionRewriter(fp).run()
    wrap_loop_switches(fp)
    _wrap_function(fp)


# ---------------------------------------------------------------------------
# Probe code


def _names(stmts: list[ast.stmt], name: str) -> bool:
    """Whether ``stmts`` name ``name``, outside the functions, classes and lambdas in
    them (scopes of their own)."""
    pending: list[ast.AST] = list(stmts)
    while pending:
        node = pending.pop()
        if type(node) is ast.Name:
            if node.id == name:
                return True
        elif not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
                            | ast.Lambda):
            pending += child_nodes(node)
    return False


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
        body = [artificial(ast.Pass())]
    # A function whose probes never use the register (each path counted by a constant
    # index: single-path functions, most small ones) needs no register at all: its
    # value would always be 0.
    uses_register = _names(body, REGISTER)
    exit_note = observer(exit_effects(fp, load(REGISTER) if uses_register else const(0)))
    # The observer has no location; after compiling, pathprof.python.lasti makes it
    # re-raise as a with statement does, so the frame an exception leaves stands at
    # the instruction the exception came from (its f_lineno is the program's).
    wrapper = ast.Try(body=body, handlers=[exit_note], orelse=[], finalbody=[])
    artificial_shell(wrapper)
    init = assign(REGISTER, const(0))
    starts = [restart_clock()] if fp.timed else []
    # Code at the very start would inherit the location of the def line (from
    # RESUME) and make tracers see that line again: place it where the first
    # statement's code starts, whose line comes next anyway.
    first = first_code(body)
    if first is not None and not fp.mark_probes:
        locate_at([init], first)
    if fp.subpaths:  # OSP: while blocks are observed, the call is noted, or the
        # runtime hears of it, and the frame gets its track (see count_down)
        starts += [assign(TRACK, const(None)),
                   artificial(ast.If(test=load(OBSERVING), body=note_call(fp), orelse=[]))]
    table = ([artificial(assign(LOCAL_TABLE, load(counter_name(fp.index))))]
             if fp.local_table else [])
    if not fp.mark_probes:
        for stmt in [*starts, *table]:
            locate_at([stmt], init)
    node.body = [*head, *([init] if uses_register else []), *table, *starts, wrapper]
