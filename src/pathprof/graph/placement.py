"""Where path-profiling code goes: spanning tree, chord and query increments, probes.

Implements Ball 1994 ("Efficiently counting program events with support for on-line
queries": increments on the chords of a spanning tree, computed by one depth-first
search; query increments) as used by Ball-Larus 1996, §3.2, and the probe
placement with its optimizations of Ball-Larus 1996, §3.3.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from pathprof.exceptions import CfgError
from pathprof.graph.cfg import Dag, EdgeKind, loop_depths
from pathprof.graph.numbering import AcyclicPath, Numbering, PathStart
from pathprof.types import BlockId, DagEdgeId, EdgeId

__all__ = [
    "Counted",
    "Cut",
    "Placement",
    "Probe",
    "ProbeOp",
    "ProbePlan",
    "Restart",
    "event_increments",
    "maximum_spanning_tree",
    "naive_plan",
    "place",
    "plan_probes",
    "static_weights",
]


class _UnionFind:
    """Disjoint sets over ``0..n-1`` with path halving and union by size."""

    def __init__(self, n: int) -> None:
        self.parent = list(range(n))
        self.size = [1] * n

    def find(self, x: int) -> int:
        parent = self.parent
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def union(self, a: int, b: int) -> bool:
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return False
        if self.size[ra] < self.size[rb]:
            ra, rb = rb, ra
        self.parent[rb] = ra
        self.size[ra] += self.size[rb]
        return True


def maximum_spanning_tree(
    num_vertices: int,
    endpoints: Sequence[tuple[int, int]],
    weights: Sequence[float],
    *,
    forced: Collection[int] = (),
    excluded: Collection[int] = (),
) -> frozenset[int]:
    """Kruskal's algorithm for a maximum-weight spanning forest of an undirected multigraph.

    Edge direction is ignored. Ties are broken by edge id, so the result is
    deterministic.

    Parameters
    ----------
    num_vertices : int
    endpoints : sequence of (int, int)
        Edge id -> its two vertices. Self-loops never enter the tree.
    weights : sequence of float
        Edge id -> weight.
    forced : collection of int
        Edges that must be in the tree (taken first).
    excluded : collection of int
        Edges that must not be in the tree.

    Returns
    -------
    frozenset of int
        Tree edge ids. Invariant: acyclic, and connects every pair of vertices
        that the non-excluded edges connect.

    Raises
    ------
    CfgError
        If the forced edges contain a cycle.

    Examples
    --------
    >>> sorted(maximum_spanning_tree(3, [(0, 1), (1, 2), (0, 2)], [5, 1, 3]))
    [0, 2]
    """
    bad = set(forced) & set(excluded)
    if bad:
        raise CfgError(f"edges {sorted(bad)} are both forced into and excluded from the tree")
    sets = _UnionFind(num_vertices)
    tree: set[int] = set()
    for eid in sorted(forced):
        a, b = endpoints[eid]
        if not sets.union(a, b):
            raise CfgError(f"edges that must stay uninstrumented form a cycle (at edge {eid})")
        tree.add(eid)
    skip = set(forced) | set(excluded)
    candidates = (e for e in range(len(endpoints)) if e not in skip)
    order = sorted(candidates, key=lambda e: (-weights[e], e))
    for eid in order:
        a, b = endpoints[eid]
        if sets.union(a, b):
            tree.add(eid)
    return frozenset(tree)


def event_increments(
    num_vertices: int,
    endpoints: Sequence[tuple[int, int]],
    tree: Collection[int],
    events: Sequence[int],
    root: int,
) -> tuple[dict[int, int], list[int]]:
    """Chord increments and vertex potentials for event counting on a spanning tree.

    Ball 1994 defines the increment of a chord ``c`` as the signed sum of events
    around its fundamental cycle (edges along ``c``'s direction count positive,
    against it negative) and computes all increments with one depth-first search
    of the tree. This function does that search: it walks the tree from ``root``
    and gives every vertex a potential ``phi`` with ``phi(root) = 0`` and
    ``phi(dst) = phi(src) + events(e)`` for every tree edge ``e``. Then for a chord
    ``u -> v``, ``inc = events(c) + phi(u) - phi(v)``, which is its fundamental-cycle
    sum. Time O(V + E).

    Returns
    -------
    (increments, potential)
        ``increments[c]`` for every chord (every non-tree edge); ``potential[v]``
        for every vertex. ``tree`` may be a forest: each of its trees gets its own
        potentials (the one holding ``root`` has ``phi(root) = 0``).

    Notes
    -----
    Invariant (Ball 1994, Theorem 2): for any directed cycle, and so for any
    ENTRY -> EXIT path closed by a tree edge EXIT -> ENTRY with no events, the sum
    of chord increments along it equals the sum of events along it. For a walk
    from ``root`` to ``v`` the chord increments sum to ``events - phi(v)``: adding
    ``phi(v)`` (the *query increment* of ``v``) gives the exact count so far.

    Examples
    --------
    Path A->B->C with a chord A->C; events 1, 2 on the tree edges, 5 on the chord:

    >>> inc, phi = event_increments(3, [(0, 1), (1, 2), (0, 2)], {0, 1}, [1, 2, 5], 0)
    >>> inc, phi
    ({2: 2}, [0, 1, 3])
    """
    tree_set = set(tree)
    adjacency: list[list[tuple[int, int]]] = [[] for _ in range(num_vertices)]
    for eid in tree_set:
        a, b = endpoints[eid]
        adjacency[a].append((eid, b))
        adjacency[b].append((eid, a))
    potential = [0] * num_vertices
    seen = [False] * num_vertices
    # From the root, then from any vertex the tree does not join to it (a forest:
    # each tree gets potentials of its own, and chords between trees stay exact).
    for start in (root, *range(num_vertices)):
        if seen[start]:
            continue
        seen[start] = True
        stack = [start]
        while stack:
            vertex = stack.pop()
            for eid, other in adjacency[vertex]:
                if seen[other]:
                    continue
                seen[other] = True
                src, _dst = endpoints[eid]
                if src == vertex:  # walking the edge forwards
                    potential[other] = potential[vertex] + events[eid]
                else:  # walking it backwards
                    potential[other] = potential[vertex] - events[eid]
                stack.append(other)
    increments = {}
    for eid, (src, dst) in enumerate(endpoints):
        if eid not in tree_set:
            increments[eid] = events[eid] + potential[src] - potential[dst]
    return increments, potential


def static_weights(dag: Dag, *, exit_factor: float = 0.5) -> list[float]:
    """Static edge-frequency estimates for choosing the spanning tree.

    A weight is the estimated frequency times the code an edge saves by being a
    tree edge. Frequency is ``10 ** d``, ``d`` the number of loops containing both
    ends (Ball-Larus 1996, §3.2 uses such static estimates). A NORMAL edge saves a
    whole ``r += c``. An edge into EXIT (a return, or a LOOP_END dummy standing for
    a backedge) carries a count either way; as a chord it only adds ``+ c`` inside
    the count, so it weighs ``exit_factor`` times its frequency (use 1.0 when the
    back end cannot fold the increment into the count). A LOOP_START or RESTART
    dummy sets the register either way (``r = c`` or ``r = 0``): weight 0. Light
    edges become chords and leave the tree, whose edges carry no code, to the hot
    ones.
    """
    depth = loop_depths(dag.cfg, dag.backedges.keys())
    weights: list[float] = []
    for edge in dag.edges:
        if edge.kind in (EdgeKind.LOOP_START, EdgeKind.RESTART):
            weights.append(0.0)
            continue
        frequency = 10.0 ** min(depth[edge.src], depth[edge.dst])
        if edge.kind is EdgeKind.LOOP_END:
            frequency = 10.0 ** depth[edge.src]
        weights.append(frequency * (exit_factor if edge.dst == dag.exit else 1.0))
    return weights


@dataclass(frozen=True)
class Placement:
    """A spanning tree of the DAG plus EXIT -> ENTRY, with chord and query increments.

    Attributes
    ----------
    numbering : Numbering
    tree : frozenset of int
        Dag edges in the spanning tree. The virtual edge EXIT -> ENTRY (id
        ``len(dag.edges)``) is always in the tree and is not listed.
    increment : dict
        Chord (dag edge id) -> increment. Every dag edge not in ``tree`` is a chord.
    query : tuple of int
        Per block: the query increment. If ``r`` is the sum of chord increments
        along a prefix from ENTRY (or from a dummy start) to block ``v``, the
        prefix's value sum is ``r + query[v]``.

    Invariant: along every ENTRY -> EXIT path the chord increments sum to the
    path's number (Ball-Larus 1996, §3.2).
    """

    numbering: Numbering
    tree: frozenset[DagEdgeId]
    increment: dict[DagEdgeId, int]
    query: tuple[int, ...]

    @property
    def dag(self) -> Dag:
        return self.numbering.dag

    @property
    def chords(self) -> tuple[DagEdgeId, ...]:
        return tuple(sorted(self.increment))


def place(
    numbering: Numbering,
    weights: Sequence[float] | None = None,
    *,
    forced_tree: Collection[DagEdgeId] = (),
) -> Placement:
    """Choose chords and compute their increments (Ball-Larus 1996, §3.2; Ball 1994).

    Adds the edge EXIT -> ENTRY, finds a maximum-weight spanning tree (weights from
    :func:`static_weights` unless given, for instance measured edge counts, which
    makes the placement profile-guided), and computes chord increments from the
    edge values with :func:`event_increments`.

    Parameters
    ----------
    numbering : Numbering
    weights : sequence of float, optional
        One per dag edge; higher means "keep this edge free of code".
    forced_tree : collection of int
        Dag edges that cannot carry code (no place to put it). They are put in the
        tree first.

    Returns
    -------
    Placement
        Invariant: on every ENTRY -> EXIT path, chord increments sum to its number.

    Raises
    ------
    CfgError
        If ``forced_tree`` contains a cycle.

    Examples
    --------
    >>> from pathprof.graph.cfg import Cfg, to_dag
    >>> from pathprof.graph.numbering import number_paths
    >>> g = Cfg(6, 0, 5, [(0, 2), (0, 1), (1, 2), (1, 3), (2, 3), (3, 5), (3, 4), (4, 5)])
    >>> p = place(number_paths(to_dag(g)))
    >>> len(p.increment)  # E - V + 1 chords: 9 edges with EXIT -> ENTRY, 6 blocks
    4
    """
    dag = numbering.dag
    if weights is None:
        weights = static_weights(dag)
    if len(weights) != len(dag.edges):
        raise ValueError(f"{len(weights)} weights given for {len(dag.edges)} dag edges")
    endpoints = [*dag.endpoints(), (dag.exit, dag.entry)]
    virtual = len(dag.edges)
    all_weights = [*weights, math.inf]
    tree = maximum_spanning_tree(
        dag.num_blocks, endpoints, all_weights, forced={virtual, *forced_tree}
    )
    events = [*numbering.val, 0]
    increments, potential = event_increments(dag.num_blocks, endpoints, tree, events, dag.entry)
    return Placement(
        numbering=numbering,
        tree=frozenset(tree - {virtual}),
        increment=increments,
        query=tuple(potential),
    )


class ProbeOp(enum.Enum):
    """The four shapes of path-profiling code (Ball-Larus 1996, §3.3)."""

    SET = "r = c"
    ADD = "r += c"
    COUNT = "count[r + c] += 1"
    COUNT_CONST = "count[c] += 1"


@dataclass(frozen=True)
class Probe:
    """Code on one dag edge: an operation and its constant."""

    op: ProbeOp
    value: int

    def __str__(self) -> str:
        value = self.value
        if self.op is ProbeOp.SET:
            return f"r = {value}"
        if self.op is ProbeOp.ADD:
            return f"r += {value}" if value >= 0 else f"r -= {-value}"
        if self.op is ProbeOp.COUNT_CONST:
            return f"count[{value}] += 1"
        if value == 0:
            return "count[r] += 1"
        return f"count[r + {value}] += 1" if value > 0 else f"count[r - {-value}] += 1"


@dataclass(frozen=True)
class ProbePlan:
    """Probes for the dag edges of one function.

    Attributes
    ----------
    placement : Placement
    probes : dict
        Dag edge -> its probe. Edges without a probe run no code.
    init_at_entry : bool
        True when the register is set to 0 on function entry (the naive plan);
        False when initialization is folded into edges.

    A CFG backedge runs the probe of its LOOP_END dummy (always a count) and then
    the probe of its LOOP_START dummy (always a SET): see :meth:`cfg_edge_probes`.
    """

    placement: Placement
    probes: dict[DagEdgeId, Probe]
    init_at_entry: bool = False

    @property
    def dag(self) -> Dag:
        return self.placement.dag

    def cfg_edge_probes(self, cfg_edge: EdgeId) -> tuple[Probe, ...]:
        """The probes executed when ``cfg_edge`` is taken, in order."""
        dag = self.dag
        if cfg_edge in dag.backedges:
            end, start = dag.backedges[cfg_edge]
            return tuple(self.probes[e] for e in (end, start) if e in self.probes)
        dag_edge = dag.normal_edges.get(cfg_edge)
        if dag_edge is None or dag_edge not in self.probes:
            return ()
        return (self.probes[dag_edge],)

    def static_count(self) -> int:
        """Number of probes in the code (a backedge's count and reset are two)."""
        return len(self.probes) + (1 if self.init_at_entry else 0)

    def dynamic_count(self, path: AcyclicPath) -> int:
        """Number of probes executed along one acyclic path (its start's reset included)."""
        executed = sum(1 for e in path.edges if e in self.probes)
        if self.init_at_entry and path.start is PathStart.ENTRY:
            executed += 1
        return executed

    def simulate(self, walk: Sequence[EdgeId | Cut | Restart]) -> list[Counted]:
        """Run the plan along one call and return what it records, in order.

        ``walk`` holds the call's CFG edges from ENTRY onward, backedges included,
        with :class:`Cut` where an exception leaves a block and :class:`Restart`
        where a path starts at a restart block. A complete path is recorded by its
        count; a cut path by its block and prefix value ``r + query[block]``. Tests
        use this to check that the plan records exactly the paths a walk executes.
        """
        register: int | None = 0 if self.init_at_entry else None
        recorded: list[Counted] = []
        query = self.placement.query
        for step in walk:
            if isinstance(step, Cut):
                value = (0 if register is None else register) + query[step.block]
                recorded.append(Counted(value, step.block))
                register = None
            elif isinstance(step, Restart):
                probe = self.probes.get(self.dag.restart_edges[step.block])
                register = _run(probe, register, recorded)
            else:
                for probe in self.cfg_edge_probes(step):
                    register = _run(probe, register, recorded)
        return recorded


@dataclass(frozen=True)
class Cut:
    """A walk step: an exception leaves ``block`` and cuts the current path there."""

    block: BlockId


@dataclass(frozen=True)
class Restart:
    """A walk step: a path starts at restart block ``block`` (an exception was caught)."""

    block: BlockId


@dataclass(frozen=True)
class Counted:
    """What a probe plan records: a path number, or a prefix value cut at a block."""

    value: int
    cut_at: BlockId | None = None


def _run(probe: Probe | None, register: int | None, recorded: list[Counted]) -> int | None:
    if probe is None:
        return register
    current = 0 if register is None else register  # an unset register reads as 0
    if probe.op is ProbeOp.SET:
        return probe.value
    if probe.op is ProbeOp.ADD:
        return current + probe.value
    if probe.op is ProbeOp.COUNT:
        recorded.append(Counted(current + probe.value))
    else:
        recorded.append(Counted(probe.value))
    return register


def plan_probes(placement: Placement, *, move_counts: bool = False) -> ProbePlan:
    """Place probes with the optimizations of Ball-Larus 1996, §3.3.

    * Initialization is folded forward from ENTRY: walking tree edges into blocks
      with a single in-edge, the first chord reached gets ``r = inc`` instead of
      ``r += inc``; a tree edge into a merge gets ``r = 0``. Dummy start edges
      (LOOP_START, RESTART) always get a SET, so that a path that starts after a
      backedge or an exception never reads the previous path's register.
    * Counts go on the edges into EXIT with the last increment folded in:
      ``count[r + inc]``; where that edge also initializes, ``count[inc]``.
    * With ``move_counts=True`` counts are also moved backwards over tree edges
      from blocks with a single out-edge onto the last chord, as in the paper.
      The Python front end keeps counts at the exit (``move_counts=False``)
      because an exception between the moved count and the exit would count a
      path that did not complete.
    * Chords with increment 0 that neither initialize nor count get no code.

    Returns
    -------
    ProbePlan
        Invariant: simulated along any ENTRY -> EXIT walk (backedges cutting it),
        the plan counts exactly the numbers of the acyclic paths of the walk.
    """
    dag = placement.dag
    inc = placement.increment
    init: dict[DagEdgeId, int] = {}
    # Forward pass from ENTRY's real edges (Ball-Larus 1996, §3.3, first loop).
    work = [dag.entry]
    while work:
        block = work.pop()
        for eid in dag.out_edges[block]:
            edge = dag.edges[eid]
            if edge.kind is not EdgeKind.NORMAL:
                continue
            if eid in inc:
                init[eid] = inc[eid]
            elif len(dag.in_edges[edge.dst]) == 1 and edge.dst != dag.exit:
                work.append(edge.dst)
            else:
                init[eid] = 0
    for eid, edge in enumerate(dag.edges):
        if edge.kind in (EdgeKind.LOOP_START, EdgeKind.RESTART):
            init[eid] = inc.get(eid, 0)
    # Count placement (second loop of §3.3).
    count_on: set[DagEdgeId] = set()
    work = [dag.exit]
    while work:
        block = work.pop()
        for eid in dag.in_edges[block]:
            edge = dag.edges[eid]
            movable = (
                move_counts
                and eid not in inc
                and eid not in init
                and edge.kind is EdgeKind.NORMAL
                and edge.src != dag.entry
                and len(dag.out_edges[edge.src]) == 1
            )
            if movable:
                work.append(edge.src)
            else:
                count_on.add(eid)
    probes: dict[DagEdgeId, Probe] = {}
    for eid in range(len(dag.edges)):
        if eid in count_on:
            if eid in init:
                probes[eid] = Probe(ProbeOp.COUNT_CONST, init[eid])
            else:
                probes[eid] = Probe(ProbeOp.COUNT, inc.get(eid, 0))
        elif eid in init:
            probes[eid] = Probe(ProbeOp.SET, init[eid])
        elif inc.get(eid, 0) != 0:
            probes[eid] = Probe(ProbeOp.ADD, inc[eid])
    return ProbePlan(placement=placement, probes=probes)


def naive_plan(numbering: Numbering) -> ProbePlan:
    """The plan without a spanning tree: ``r = 0`` on entry and ``r += Val(e)`` on
    every edge with a non-zero value, counts at the edges into EXIT. The baseline
    that :func:`plan_probes` is measured against."""
    dag = numbering.dag
    probes: dict[DagEdgeId, Probe] = {}
    for eid, edge in enumerate(dag.edges):
        value = numbering.val[eid]
        if edge.kind in (EdgeKind.LOOP_START, EdgeKind.RESTART):
            probes[eid] = Probe(ProbeOp.SET, value)
        elif edge.dst == dag.exit:
            probes[eid] = Probe(ProbeOp.COUNT, value)
        elif value:
            probes[eid] = Probe(ProbeOp.ADD, value)
    placement = Placement(
        numbering=numbering,
        tree=frozenset(),
        increment={e: numbering.val[e] for e in range(len(dag.edges))},
        query=(0,) * dag.num_blocks,
    )
    return ProbePlan(placement=placement, probes=probes, init_at_entry=True)
