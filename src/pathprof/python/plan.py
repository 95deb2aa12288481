"""One function's plan: its CFG, the numbering of its paths and where its probes go.

For every function the CFG of :mod:`pathprof.python.cfg` is numbered and planned by
:mod:`pathprof.graph` (Ball-Larus path numbering and probe placement; edges with no
site, where no code can go, are forced into the spanning tree). The
:class:`FunctionPlan` also carries the options the rewrite follows (edge counters,
time, subpath sampling, switches back to the original code); the rewrite itself is
:mod:`pathprof.python.rewrite`.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

from pathprof.contract import DecisionInfo
from pathprof.graph import (
    CounterKind,
    EdgeCounterPlan,
    Numbering,
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
from pathprof.graph.numbering import regenerate
from pathprof.graph.placement import ProbeOp
from pathprof.python.cfgtypes import FunctionCfg, SiteKind

__all__ = [
    "FunctionPlan",
    "LoopSwitch",
    "plan_edge_function",
    "plan_function",
    "plan_share_function",
    "share_feasible",
]


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
    """One function's CFG, numbering and probe plan, and the options its rewrite
    follows."""

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
    #: value is computed
    #: (see :meth:`~pathprof.python.rewrite.FunctionRewriter.return_code`).
    early_returns: set[int] = field(default_factory=set)
    #: In one copy of a parallel run (:mod:`pathprof.parallel`), a function another
    #: copy profiles: only its calls are counted, in slot 0 of a one-slot table.
    calls_only: bool = False
    #: In one copy of a parallel run, a function whose paths the copies share: this
    #: copy's share (:class:`~pathprof.graph.copyplan.CopyShare`).
    share: CopyShare | None = None
    #: Subpath sampling: every path end counts its blocks down in bulk, and the
    #: runtime hears of path ends and calls while blocks are observed.
    subpaths: bool = False
    #: Carries its original body beside the measured one
    #: (:func:`~pathprof.python.switches.add_switch`): every return counts after its
    #: value, so no count is ever taken back.
    switch: bool = False
    #: Counts through :data:`~pathprof.python.names.LOCAL_TABLE`
    #: (:func:`~pathprof.python.rewrite.uses_local_table`).
    local_table: bool = False
    #: Loops that can go back to their original body
    #: (:func:`~pathprof.python.switches.plan_loop_switches`).
    loop_switches: list[LoopSwitch] = field(default_factory=list)
    #: with conditions measured: the function's decisions
    #: (:func:`pathprof.python.conditioncode.instrument_decisions`)
    decisions: list[DecisionInfo] = field(default_factory=list)
    #: For tests (``instrument_source(mark_probes=True)``): inserted code is left
    #: unlocated, for :func:`~pathprof.python.nodes.mark_unlocated` to put at
    #: :data:`~pathprof.python.nodes.PROBE_MARK_LINE` once the module is done,
    #: instead of located where the code that runs next starts.
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

    @cached_property
    def path_lengths(self) -> tuple[int, ...] | None:
        """Blocks on each path, by path number (entry and exit not counted); None
        where the paths are too many to list (the runtime then works a length out
        the first time a path runs). Subpath sampling counts these down."""
        return None if self._path_shapes is None else self._path_shapes[0]

    @cached_property
    def end_lengths(self) -> dict[int, int]:
        """For each dag edge whose probe counts paths, the one length every path
        counted there has, where they all have the same: subpath sampling then
        counts that constant down instead of looking the path's length up
        (:func:`~pathprof.python.probecode.count_down`).

        Invariant: every path passes exactly one counting probe (Ball-Larus 1996,
        §3.3: the count where the path ends), so for an edge in this mapping,
        ``path_lengths[p] == end_lengths[e]`` for every path ``p`` through ``e``."""
        return {} if self._path_shapes is None else self._path_shapes[1]

    @cached_property
    def _path_shapes(self) -> tuple[tuple[int, ...], dict[int, int]] | None:
        if self.table_size < 0:
            return None
        numbering = self.numbering
        ends = (self.cfg.entry, self.cfg.exit)
        counting = {eid for eid, probe in self.plan.probes.items()
                    if probe.op in (ProbeOp.COUNT, ProbeOp.COUNT_CONST)}
        lengths: list[int] = []
        at_end: dict[int, set[int]] = {}
        for number in range(numbering.total):
            path = regenerate(numbering, number)
            length = sum(1 for b in path.blocks if b not in ends)
            lengths.append(length)
            for eid in path.edges:
                if eid in counting:
                    at_end.setdefault(eid, set()).add(length)
        uniform = {eid: next(iter(seen)) for eid, seen in at_end.items() if len(seen) == 1}
        return tuple(lengths), uniform


def writable_path_count(num_paths: int) -> bool:
    """Whether a function with ``num_paths`` paths can be measured: its path numbers
    (and the sums of its probes) can be written in decimal, which Python allows up to
    ``sys.get_int_max_str_digits()`` digits (4,300 by default; 0: no limit). A function
    past that (some 14,000 decisions in a row) is left as written, and its module
    measured without it: the data file, the reports and the runtime's notes all write
    path numbers as text. ``log10(2) < 0.30103``, so the estimate is never short."""
    limit = sys.get_int_max_str_digits() if hasattr(sys, "get_int_max_str_digits") else 0
    return not limit or num_paths.bit_length() * 0.30103 + 1 < limit


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

