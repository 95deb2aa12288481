"""Control-flow graphs, their backedges, and the DAG that Ball-Larus numbering runs on.

The graph layer knows nothing of Python: blocks are integers, edges are pairs of
blocks. A :class:`Cfg` may hold multi-edges (a ``match`` can reach one block twice)
and self-loops. :func:`to_dag` applies Ball and Larus's transformation for
loops (Ball-Larus 1996, §4 "Path profiling of arbitrary control flow"), extended
with *restart* edges: blocks where a path begins after an exception transfer,
treated like loop headers.

Which edges are backedges is part of the graph: a front end that knows its loops
(Python's are explicit in the syntax) declares them in :attr:`Cfg.backedges`, and
every algorithm here uses exactly those. Only a graph that declares none gets them
from a depth-first search, whose answer can depend on the order of the search when
blocks are reached other than from ENTRY (restart blocks).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property

from pathprof.exceptions import CfgError
from pathprof.types import BlockId, DagEdgeId, EdgeId

__all__ = [
    "Cfg",
    "Dag",
    "DagEdge",
    "EdgeKind",
    "find_backedges",
    "loop_depths",
    "to_dag",
]


@dataclass(frozen=True)
class Cfg:
    """A control-flow graph: blocks ``0..num_blocks-1``, edges, ENTRY and EXIT.

    Parameters
    ----------
    num_blocks : int
        Number of blocks; blocks are the integers ``0 .. num_blocks - 1``.
    entry, exit : int
        The unique source and sink. No edge may enter ``entry`` or leave ``exit``.
    edges : sequence of (int, int)
        Directed edges ``(src, dst)``. An edge's id is its index. Repeated pairs
        are distinct edges (multi-edges); ``(v, v)`` is a self-loop.
    restarts : sequence of int
        Blocks where a path may begin other than at ENTRY and loop headers: the
        first block of an exception handler. Each gets a dummy edge from ENTRY in
        the DAG. Order matters only for the DFS that finds backedges when none
        are declared: restarts are explored after everything reachable from
        ENTRY, in the order given.
    backedges : sequence of int, optional
        The edges that close loops, declared by the front end from the loop
        structure it knows (for Python: every edge from a block inside a loop's
        body to that loop's header). ``None`` (the default) means "not declared":
        :func:`find_backedges` then searches for them.

    Raises
    ------
    CfgError
        If a block id is out of range, ENTRY equals EXIT, an edge enters ENTRY
        or leaves EXIT, a restart is ENTRY, EXIT or listed twice, or a declared
        backedge is not an edge of the graph.

    Examples
    --------
    >>> g = Cfg(4, entry=0, exit=3, edges=[(0, 1), (1, 2), (2, 1), (1, 3)])
    >>> g.successors(1)
    (2, 3)
    """

    num_blocks: int
    entry: BlockId
    exit: BlockId
    edges: tuple[tuple[BlockId, BlockId], ...]
    restarts: tuple[BlockId, ...] = ()
    backedges: tuple[EdgeId, ...] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "edges", tuple((int(s), int(d)) for s, d in self.edges))
        object.__setattr__(self, "restarts", tuple(int(b) for b in self.restarts))
        if self.backedges is not None:
            object.__setattr__(self, "backedges", tuple(sorted({int(e) for e in self.backedges})))
        n = self.num_blocks
        for name, block in (("entry", self.entry), ("exit", self.exit)):
            if not 0 <= block < n:
                raise CfgError(f"{name} block {block} is not in 0..{n - 1}")
        if self.entry == self.exit:
            raise CfgError(f"entry and exit are the same block ({self.entry})")
        for eid, (src, dst) in enumerate(self.edges):
            if not (0 <= src < n and 0 <= dst < n):
                raise CfgError(f"edge {eid} ({src}->{dst}) has a block outside 0..{n - 1}")
            if dst == self.entry:
                raise CfgError(f"edge {eid} ({src}->{dst}) enters ENTRY block {self.entry}")
            if src == self.exit:
                raise CfgError(f"edge {eid} ({src}->{dst}) leaves EXIT block {self.exit}")
        if len(set(self.restarts)) != len(self.restarts):
            raise CfgError(f"restart blocks listed twice: {self.restarts}")
        for block in self.restarts:
            if not 0 <= block < n or block in (self.entry, self.exit):
                raise CfgError(f"restart block {block} must be a block other than ENTRY and EXIT")
        for eid in self.backedges or ():
            if not 0 <= eid < len(self.edges):
                raise CfgError(f"declared backedge {eid} is not an edge (0..{len(self.edges) - 1})")

    @cached_property
    def out_edges(self) -> tuple[tuple[EdgeId, ...], ...]:
        """Out-edge ids of every block, in edge-id order."""
        out: list[list[EdgeId]] = [[] for _ in range(self.num_blocks)]
        for eid, (src, _dst) in enumerate(self.edges):
            out[src].append(eid)
        return tuple(tuple(x) for x in out)

    @cached_property
    def in_edges(self) -> tuple[tuple[EdgeId, ...], ...]:
        """In-edge ids of every block, in edge-id order."""
        into: list[list[EdgeId]] = [[] for _ in range(self.num_blocks)]
        for eid, (_src, dst) in enumerate(self.edges):
            into[dst].append(eid)
        return tuple(tuple(x) for x in into)

    def successors(self, block: BlockId) -> tuple[BlockId, ...]:
        """Targets of ``block``'s out-edges, one per edge (repeats for multi-edges)."""
        return tuple(self.edges[e][1] for e in self.out_edges[block])


class EdgeKind(enum.Enum):
    """What a DAG edge stands for."""

    #: A CFG edge that is not a backedge.
    NORMAL = "normal"
    #: Dummy ENTRY -> loop header: a path that starts after a backedge.
    LOOP_START = "loop-start"
    #: Dummy backedge source -> EXIT: a path that ends by taking a backedge.
    LOOP_END = "loop-end"
    #: Dummy ENTRY -> restart block: a path that starts where an exception was caught.
    RESTART = "restart"


@dataclass(frozen=True)
class DagEdge:
    """One edge of a :class:`Dag`; ``cfg_edge`` is set for NORMAL edges only."""

    src: BlockId
    dst: BlockId
    kind: EdgeKind
    cfg_edge: EdgeId | None = None


@dataclass(frozen=True)
class Dag:
    """The acyclic graph of Ball-Larus §4 built from a :class:`Cfg` by :func:`to_dag`.

    Attributes
    ----------
    cfg : Cfg
        The graph it was built from.
    edges : tuple of DagEdge
        NORMAL edges first (CFG order), then LOOP_END, LOOP_START and RESTART dummies.
    backedges : dict
        CFG backedge id -> (LOOP_END dag edge, LOOP_START dag edge) that replace it.
    restart_edges : dict
        Restart block -> its RESTART dag edge.
    normal_edges : dict
        CFG edge id -> dag edge id, for every CFG edge that is not a backedge and
        leaves a reachable block.
    reachable : frozenset of int
        Blocks reachable from ENTRY (through restarts too), and EXIT. Other blocks
        have no edges here.
    topo_order : tuple of int
        The reachable blocks in a topological order (ENTRY first, EXIT last).
    """

    cfg: Cfg
    edges: tuple[DagEdge, ...]
    backedges: dict[EdgeId, tuple[DagEdgeId, DagEdgeId]]
    restart_edges: dict[BlockId, DagEdgeId]
    normal_edges: dict[EdgeId, DagEdgeId]
    reachable: frozenset[BlockId]
    topo_order: tuple[BlockId, ...] = field(repr=False)

    @property
    def entry(self) -> BlockId:
        return self.cfg.entry

    @property
    def exit(self) -> BlockId:
        return self.cfg.exit

    @property
    def num_blocks(self) -> int:
        return self.cfg.num_blocks

    @cached_property
    def out_edges(self) -> tuple[tuple[DagEdgeId, ...], ...]:
        """Out-edge ids of every block, in dag-edge order (the order Val is assigned in)."""
        out: list[list[DagEdgeId]] = [[] for _ in range(self.num_blocks)]
        for eid, edge in enumerate(self.edges):
            out[edge.src].append(eid)
        return tuple(tuple(x) for x in out)

    @cached_property
    def in_edges(self) -> tuple[tuple[DagEdgeId, ...], ...]:
        """In-edge ids of every block."""
        into: list[list[DagEdgeId]] = [[] for _ in range(self.num_blocks)]
        for eid, edge in enumerate(self.edges):
            into[edge.dst].append(eid)
        return tuple(tuple(x) for x in into)

    def endpoints(self) -> list[tuple[BlockId, BlockId]]:
        """``(src, dst)`` of every dag edge, indexed by dag edge id."""
        return [(e.src, e.dst) for e in self.edges]


def _dfs_roots(cfg: Cfg) -> Iterator[tuple[EdgeId | None, BlockId]]:
    """Out-edges of ENTRY followed by virtual ENTRY->restart edges (edge id None)."""
    for eid in cfg.out_edges[cfg.entry]:
        yield eid, cfg.edges[eid][1]
    for block in cfg.restarts:
        yield None, block


def find_backedges(cfg: Cfg) -> frozenset[EdgeId]:
    """Return the CFG's backedges: the declared ones, or those a search finds.

    A graph that declares its backedges (:attr:`Cfg.backedges`, the front end's
    loop structure) gets exactly those: for Python, every edge from a block inside
    a loop's body -- handlers, ``finally`` and ``with`` exits, ``continue`` included
    -- to that loop's header, so every iteration's path starts at the header.

    Otherwise an edge ``u -> v`` is a backedge when ``v`` is on the stack of a
    depth-first search from ENTRY as the edge is explored (Ball-Larus 1996, §4:
    "each cycle contains a backedge, identified by a depth-first search").
    Self-loops are backedges. The search follows out-edges in edge-id order and
    explores restart blocks after everything reachable from ENTRY's own edges.
    Its answer depends on that order where restart blocks reach a loop from
    outside the search tree (an edge from an exception handler back to its loop's
    header is then a cross edge, not a backedge): a front end must declare its
    loops instead.

    Parameters
    ----------
    cfg : Cfg

    Returns
    -------
    frozenset of int
        Edge ids. Invariant: removing them leaves the reachable graph acyclic.

    Examples
    --------
    >>> g = Cfg(4, entry=0, exit=3, edges=[(0, 1), (1, 2), (2, 1), (1, 3), (2, 2)])
    >>> sorted(find_backedges(g))
    [2, 4]
    >>> g = Cfg(5, 0, 4, [(0, 1), (1, 2), (2, 1), (3, 1), (1, 4)], restarts=[3], backedges=[2, 3])
    >>> sorted(find_backedges(g))  # the handler 3 -> header 1 edge closes the loop too
    [2, 3]
    """
    if cfg.backedges is not None:
        return frozenset(cfg.backedges)
    white, gray, black = 0, 1, 2
    color = [white] * cfg.num_blocks
    back: set[EdgeId] = set()
    color[cfg.entry] = gray
    # Each stack frame: (block, iterator over (edge id or None, target)).
    stack: list[tuple[BlockId, Iterator[tuple[EdgeId | None, BlockId]]]] = [
        (cfg.entry, _dfs_roots(cfg))
    ]
    while stack:
        block, successors = stack[-1]
        for eid, target in successors:
            if color[target] == white:
                color[target] = gray
                stack.append((target, ((e, cfg.edges[e][1]) for e in cfg.out_edges[target])))
                break
            if color[target] == gray and eid is not None:
                back.add(eid)
        else:
            color[block] = black
            stack.pop()
    return frozenset(back)


def _reachable(cfg: Cfg) -> frozenset[BlockId]:
    """Blocks reachable from ENTRY or a restart, plus EXIT (which dummy edges reach)."""
    seen = {cfg.entry, cfg.exit}
    todo = [cfg.entry, *cfg.restarts]
    seen.update(cfg.restarts)
    while todo:
        block = todo.pop()
        for eid in cfg.out_edges[block]:
            target = cfg.edges[eid][1]
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return frozenset(seen)


def to_dag(cfg: Cfg, backedges: Iterable[EdgeId] | None = None) -> Dag:
    """Turn a CFG into the DAG of Ball-Larus 1996, §4.

    Every backedge ``v -> w`` is removed; a dummy LOOP_END edge ``v -> EXIT`` and a
    dummy LOOP_START edge ``ENTRY -> w`` are added (one per distinct ``v`` and one
    per distinct ``w``). Every restart block ``h`` gets a dummy RESTART edge
    ``ENTRY -> h``. Blocks unreachable from ENTRY are left out. A self-loop
    ``v -> v`` becomes the two dummies ``v -> EXIT`` and ``ENTRY -> v``, so the
    one-block path around it is a path of its own.

    Parameters
    ----------
    cfg : Cfg
    backedges : iterable of int, optional
        Precomputed backedges (default: :func:`find_backedges`). They must break
        every cycle.

    Returns
    -------
    Dag
        Invariant: acyclic; every reachable block lies on some ENTRY -> EXIT path.

    Raises
    ------
    CfgError
        If the given backedges leave a cycle, or a reachable block cannot reach EXIT.

    Examples
    --------
    >>> g = Cfg(4, entry=0, exit=3, edges=[(0, 1), (1, 2), (2, 1), (1, 3)])
    >>> dag = to_dag(g)
    >>> [(e.src, e.dst, e.kind.value) for e in dag.edges]  # doctest: +NORMALIZE_WHITESPACE
    [(0, 1, 'normal'), (1, 2, 'normal'), (1, 3, 'normal'),
     (2, 3, 'loop-end'), (0, 1, 'loop-start')]
    """
    back = find_backedges(cfg) if backedges is None else frozenset(backedges)
    reachable = _reachable(cfg)
    edges: list[DagEdge] = []
    normal: dict[EdgeId, DagEdgeId] = {}
    for eid, (src, dst) in enumerate(cfg.edges):
        if src in reachable and eid not in back:
            normal[eid] = len(edges)
            edges.append(DagEdge(src, dst, EdgeKind.NORMAL, eid))
    ends: dict[BlockId, DagEdgeId] = {}
    starts: dict[BlockId, DagEdgeId] = {}
    ordered_back = sorted(e for e in back if cfg.edges[e][0] in reachable)
    for eid in ordered_back:
        src = cfg.edges[eid][0]
        if src not in ends:
            ends[src] = len(edges)
            edges.append(DagEdge(src, cfg.exit, EdgeKind.LOOP_END))
    for eid in ordered_back:
        dst = cfg.edges[eid][1]
        if dst not in starts:
            starts[dst] = len(edges)
            edges.append(DagEdge(cfg.entry, dst, EdgeKind.LOOP_START))
    restart_edges: dict[BlockId, DagEdgeId] = {}
    for block in cfg.restarts:
        restart_edges[block] = len(edges)
        edges.append(DagEdge(cfg.entry, block, EdgeKind.RESTART))
    backedges_map = {
        eid: (ends[cfg.edges[eid][0]], starts[cfg.edges[eid][1]]) for eid in ordered_back
    }
    topo = _topological_order(cfg.num_blocks, cfg.entry, reachable, edges)
    _check_reaches_exit(cfg, reachable, edges)
    return Dag(
        cfg=cfg,
        edges=tuple(edges),
        backedges=backedges_map,
        restart_edges=restart_edges,
        normal_edges=normal,
        reachable=reachable,
        topo_order=topo,
    )


def _topological_order(
    num_blocks: int, entry: BlockId, reachable: frozenset[BlockId], edges: Sequence[DagEdge]
) -> tuple[BlockId, ...]:
    """Kahn's algorithm over the reachable blocks; raises CfgError on a cycle."""
    indegree = [0] * num_blocks
    out: list[list[BlockId]] = [[] for _ in range(num_blocks)]
    for edge in edges:
        indegree[edge.dst] += 1
        out[edge.src].append(edge.dst)
    ready = [entry]
    order: list[BlockId] = []
    while ready:
        block = ready.pop()
        order.append(block)
        for target in reversed(out[block]):
            indegree[target] -= 1
            if indegree[target] == 0:
                ready.append(target)
    if len(order) != len(reachable):
        stuck = sorted(reachable - set(order))
        raise CfgError(f"the graph without its backedges still has a cycle through {stuck}")
    return tuple(order)


def _check_reaches_exit(cfg: Cfg, reachable: frozenset[BlockId], edges: Sequence[DagEdge]) -> None:
    into: list[list[BlockId]] = [[] for _ in range(cfg.num_blocks)]
    for edge in edges:
        into[edge.dst].append(edge.src)
    seen = {cfg.exit}
    todo = [cfg.exit]
    while todo:
        block = todo.pop()
        for src in into[block]:
            if src not in seen:
                seen.add(src)
                todo.append(src)
    stuck = sorted(reachable - seen)
    if stuck:
        raise CfgError(f"blocks {stuck} are reachable from ENTRY but cannot reach EXIT")


def loop_depths(cfg: Cfg, backedges: Iterable[EdgeId] | None = None) -> tuple[int, ...]:
    """Return, for every block, how many loops contain it.

    A loop is the natural loop of a header ``w``: ``w`` plus every block that
    reaches a backedge source ``v -> w`` without passing through ``w``. Loops
    that share a header count once. These depths give the static edge weights
    ``10 ** depth`` used to choose a spanning tree (Ball-Larus 1996, §3.2). In an
    irreducible graph the backward walk stops at ENTRY, which is in no loop.

    Examples
    --------
    >>> g = Cfg(5, entry=0, exit=4, edges=[(0, 1), (1, 2), (2, 3), (3, 2), (2, 1), (1, 4)])
    >>> loop_depths(g)
    (0, 1, 2, 2, 0)
    """
    back = find_backedges(cfg) if backedges is None else frozenset(backedges)
    reachable = _reachable(cfg)
    bodies: dict[BlockId, set[BlockId]] = {}
    for eid in back:
        src, header = cfg.edges[eid]
        if src not in reachable:
            continue
        body = bodies.setdefault(header, {header})
        todo = [src] if src not in body else []
        body.add(src)
        while todo:
            block = todo.pop()
            for in_eid in cfg.in_edges[block]:
                pred = cfg.edges[in_eid][0]
                if pred not in body and pred in reachable and pred != cfg.entry:
                    body.add(pred)
                    todo.append(pred)
    depth = [0] * cfg.num_blocks
    for body in bodies.values():
        for block in body:
            depth[block] += 1
    return tuple(depth)
