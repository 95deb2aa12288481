"""The reduced DAG of P3: diamonds and triangles of straight-line code collapsed.

Afraz, Saha and Kanade, "P3: Partitioned Path Profiling", ESEC/FSE 2015, §3.2
(``reduced_graph``): an if/else or if whose branches hold no nested decision
becomes one dummy vertex, so that the paths through a sequence of such
conditionals fall into one task of :func:`pathprof.graph.partition.find_partition`
and share their probes in one copy. What counts as a diamond or a triangle is
decided in :func:`reduced_graph`'s docstring.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property

from pathprof.graph.cfg import Dag
from pathprof.types import BlockId, DagEdgeId

__all__ = ["ReducedDag", "reduced_graph"]


@dataclass(frozen=True)
class ReducedDag:
    """A DAG whose diamonds and triangles are collapsed into dummy vertices (§3.2).

    Reduced vertices are the blocks left alone (same id) and the dummies (ids from
    ``dag.num_blocks`` up). Reduced edges are the dag edges that join two
    different reduced vertices, with their dag edge ids; every other dag edge is
    inside one dummy.

    Attributes
    ----------
    dag : Dag
    vertex_of : dict
        Reachable block -> the reduced vertex that holds it.
    members : dict
        Reduced vertex -> its blocks (one block for a vertex left alone).
    inner : dict
        Reduced vertex -> the dag edges inside it (empty for a vertex left alone).
    edges : tuple of int
        The reduced edges, in dag-edge order.
    entry, exit : int
        The reduced vertices holding ENTRY and EXIT (one vertex when everything
        collapsed).
    topo_order : tuple of int
        The reduced vertices in a topological order.

    Invariant: every dummy is single-entry single-exit -- its in-edges enter its
    begin block, its out-edges leave its end block -- so every ENTRY -> EXIT path
    of the dag, less its inner edges, is an ENTRY -> EXIT path of the reduced DAG,
    and the dag paths that give one reduced path are exactly the dag paths inside
    its edges plus the inner edges of the vertices it passes.
    """

    dag: Dag
    vertex_of: Mapping[BlockId, int]
    members: Mapping[int, frozenset[BlockId]]
    inner: Mapping[int, frozenset[DagEdgeId]]
    edges: tuple[DagEdgeId, ...]
    entry: int
    exit: int
    topo_order: tuple[int, ...]

    def src(self, edge: DagEdgeId) -> int:
        return self.vertex_of[self.dag.edges[edge].src]

    def dst(self, edge: DagEdgeId) -> int:
        return self.vertex_of[self.dag.edges[edge].dst]

    def is_dummy(self, vertex: int) -> bool:
        return vertex >= self.dag.num_blocks

    @cached_property
    def out_edges(self) -> Mapping[int, tuple[DagEdgeId, ...]]:
        """Reduced vertex -> its reduced out-edges, in dag-edge order."""
        out: dict[int, list[DagEdgeId]] = {v: [] for v in self.topo_order}
        for eid in self.edges:
            out[self.src(eid)].append(eid)
        return {v: tuple(es) for v, es in out.items()}

    def reachable(
        self, edges: Iterable[DagEdgeId]
    ) -> tuple[frozenset[DagEdgeId], frozenset[int]]:
        """``edges`` plus every reduced edge reachable after them, and the vertices
        they reach (the paper's ``reachable_edges``)."""
        seen_edges = set(edges)
        seen_vertices: set[int] = set()
        todo = [self.dst(e) for e in seen_edges]
        while todo:
            vertex = todo.pop()
            if vertex in seen_vertices:
                continue
            seen_vertices.add(vertex)
            for eid in self.out_edges[vertex]:
                seen_edges.add(eid)
                todo.append(self.dst(eid))
        return frozenset(seen_edges), frozenset(seen_vertices)

    def original_edges(
        self, edges: Iterable[DagEdgeId], vertices: Iterable[int]
    ) -> frozenset[DagEdgeId]:
        """The paper's ``get_original_edges``: reduced edges plus the inner edges of
        the given reduced vertices."""
        result = set(edges)
        for vertex in vertices:
            result |= self.inner[vertex]
        return frozenset(result)


def reduced_graph(dag: Dag) -> ReducedDag:
    """Collapse the diamonds and triangles of ``dag`` into dummy vertices (§3.2).

    The paper: ``{a, b, c, d}`` is a diamond when ``(a, b), (a, c), (b, d), (c, d)``
    are edges, ``{a, b, d}`` a triangle when ``(a, b), (a, d), (b, d)`` are; they
    stand for ``if``-``else`` and ``if`` "containing only straightline code within
    the branches (equivalently, they do not contain nested conditionals)". The
    dummy takes the in-edges of ``a`` and the out-edges of ``d``. Made precise here,
    comparing edges (a dag may hold parallel edges), not vertex pairs:

    * ``a`` has exactly two out-edges, to two different vertices;
    * a *branch* is one of them followed by a chain of one or more straight-line
      blocks -- blocks left alone (not dummies) with one in-edge and one
      out-edge -- or, in a triangle, the direct edge alone; the figures draw a
      branch as one block, a chain is the same straight-line code split in
      blocks;
    * both branches end at the same vertex ``d``, and those are ``d``'s only two
      in-edges (so the dummy has one entry and one exit and loses no edge).

    ``a`` and ``d`` may themselves be dummies, so the reduction repeats to a fixed
    point: a sequence of diamonds and triangles (the paper's Figure 3, "a sequence
    of conditionals") becomes one dummy. A conditional whose branch holds a
    conditional is *not* collapsed, even after the inner one is: the inner dummy
    is not straight-line code, and the paper excludes nested conditionals. Two
    parallel edges ``a -> d`` alone are no diamond (no branch has a block).

    Returns
    -------
    ReducedDag
        Invariant: see :class:`ReducedDag`.

    Examples
    --------
    ``if``-``else`` then ``if`` then the exit: the diamond and the triangle after
    it become one dummy between ENTRY and EXIT.

    >>> from pathprof.graph.cfg import Cfg, to_dag
    >>> g = Cfg(7, 0, 6, [(0, 1), (1, 2), (1, 3), (2, 4), (3, 4), (4, 5), (4, 6), (5, 6)])
    >>> r = reduced_graph(to_dag(g))
    >>> r.topo_order, [(r.src(e), r.dst(e)) for e in r.edges]
    ((0, 8), [(0, 8)])
    >>> sorted(r.members[8])
    [1, 2, 3, 4, 5, 6]
    """
    return _Reducer(dag).run()


class _Reducer:
    """Mutable state of :func:`reduced_graph`: adjacency over current vertices."""

    def __init__(self, dag: Dag) -> None:
        self.dag = dag
        self.vertex_of = {b: b for b in dag.reachable}
        self.members: dict[int, frozenset[BlockId]] = {b: frozenset((b,)) for b in dag.reachable}
        self.inner: dict[int, frozenset[DagEdgeId]] = {b: frozenset() for b in dag.reachable}
        self.out = {b: list(dag.out_edges[b]) for b in dag.reachable}
        self.into = {b: list(dag.in_edges[b]) for b in dag.reachable}
        self.entry, self.exit = dag.entry, dag.exit
        self.next_id = dag.num_blocks

    def dst(self, edge: DagEdgeId) -> int:
        return self.vertex_of[self.dag.edges[edge].dst]

    def order(self) -> tuple[int, ...]:
        """Current vertices in the order their first block has in ``dag.topo_order``.

        A dummy's first block is its begin block, which precedes all its members,
        so this is a topological order of the reduced DAG.
        """
        return tuple(dict.fromkeys(self.vertex_of[b] for b in self.dag.topo_order))

    def run(self) -> ReducedDag:
        changed = True
        while changed:
            changed = False
            for vertex in self.order():
                while vertex in self.out:  # still a vertex (not merged away)
                    merged = self.collapse_at(vertex)
                    if merged is None:
                        break
                    vertex, changed = merged, True
        inside = set().union(*self.inner.values())
        return ReducedDag(
            dag=self.dag,
            vertex_of=dict(self.vertex_of),
            members=dict(self.members),
            inner=dict(self.inner),
            edges=tuple(e for e in range(len(self.dag.edges)) if e not in inside),
            entry=self.entry,
            exit=self.exit,
            topo_order=self.order(),
        )

    def straight(self, vertex: int) -> bool:
        return (
            vertex < self.dag.num_blocks and len(self.into[vertex]) == 1
            and len(self.out[vertex]) == 1
        )

    def branch(self, edge: DagEdgeId) -> tuple[int, list[DagEdgeId], list[int]]:
        """Follow ``edge`` through straight-line blocks: (join, edges, blocks)."""
        edges, blocks = [edge], []
        vertex = self.dst(edge)
        while self.straight(vertex):
            blocks.append(vertex)
            edges.append(self.out[vertex][0])
            vertex = self.dst(edges[-1])
        return vertex, edges, blocks

    def collapse_at(self, begin: int) -> int | None:
        """Collapse the diamond or triangle that begins at ``begin``; return the dummy."""
        if len(self.out[begin]) != 2:
            return None
        first, second = self.out[begin]
        if self.dst(first) == self.dst(second):
            return None
        end, edges_1, blocks_1 = self.branch(first)
        end_2, edges_2, blocks_2 = self.branch(second)
        if end != end_2 or len(self.into[end]) != 2:
            return None
        dummy = self.next_id
        self.next_id += 1
        members = self.members[begin] | self.members[end] | frozenset(blocks_1 + blocks_2)
        inner = self.inner[begin] | self.inner[end] | frozenset(edges_1 + edges_2)
        self.out[dummy], self.into[dummy] = self.out[end], self.into[begin]
        for old in (begin, end, *blocks_1, *blocks_2):
            del self.out[old], self.into[old], self.members[old], self.inner[old]
        self.members[dummy], self.inner[dummy] = members, inner
        for block in members:
            self.vertex_of[block] = dummy
        if begin == self.entry:
            self.entry = dummy
        if end == self.exit:
            self.exit = dummy
        return dummy
