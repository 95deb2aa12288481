"""The paths of a function that coverage counts: its numbered DAG less the paths that
run excluded code a run of the function can avoid.

A function's paths are the ENTRY -> EXIT paths of its Ball-Larus DAG (Ball-Larus
1996, §4). An excluded region (:mod:`pathprof.analysis.exclusions`) is a set of
blocks all of whose code is excluded. Exclusion takes away the paths that run
excluded code a run of the function can avoid:

- an excluded block is *unavoidable* when every run from ENTRY to EXIT passes it: in
  the CFG, EXIT cannot be reached from ENTRY without it (a loop no edge leaves,
  ``while True:`` with no ``break``, counts as ending where its back edges leave). It
  is counted as code like any other, even where some paths (a loop's turns, a
  handler's) do not pass it: excluding a statement every path runs -- the last
  ``return``, the code before the first decision, the ``break`` that is a
  ``while True:`` loop's only way out -- removes nothing;
- where every way on from a block is one excluded block of its own (its only way in
  is from there) and they all lead to the same place by the same kind of edge (an
  ``if`` and its ``else`` whose bodies are both excluded straight-line code), paths
  could only differ in excluded code: the first of those blocks is counted as code,
  so that the decision counts as one way on;
- the space's paths are those that run no other excluded block. A path runs the
  blocks on it, and one that starts at a loop header after a back edge, or ends by
  taking one, the back edge's two ends too: a LOOP_START or LOOP_END dummy edge goes
  when every back edge it stands for has an end that is such a block (the path that
  starts again at the header after an excluded loop body's last block is run only by
  running it).

So an excluded branch takes the paths through it (an excluded ``if`` body or ``else``
the paths that go that way, an excluded handler the paths that start there, an
excluded ``case _:`` the paths that reach it), and where every run must pass one of
several excluded parts that are not such one-block ways on (an ``if`` and ``else``
whose bodies hold decisions of their own, all excluded), no path counts there. What
is left is pruned to the blocks and edges on some ENTRY -> EXIT path.

A space is a set of the DAG's paths (those within :attr:`PathSpace.edges`), so paths
that differ only in excluded code cannot count as one path except by keeping one of
them; the one-way-on rule keeps one only where the others are the same path but for
that block, which is what keeps the figures from rising as more is excluded.

Paths are still named by the function's own Ball-Larus numbers (the data file's),
so a recorded path counts when it uses no removed edge.

Invariant: with nothing excluded, :attr:`PathSpace.possible` is NumPaths(ENTRY) and
:attr:`PathSpace.dimension` is :func:`~pathprof.analysis.basis.path_space_dimension`;
excluding only unavoidable blocks changes neither (nor removes an edge); excluding
more never raises either figure (the paths of the larger exclusion map one to one, by
swapping one-way-on blocks for ways on the smaller one keeps, onto paths of the
smaller's, edge for edge); and every path a space counts is a path of the DAG that
uses only :attr:`PathSpace.edges`.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from dataclasses import dataclass

from pathprof.graph import Dag, EdgeKind, Numbering, regenerate
from pathprof.graph.numbering import paths_shortest_first

__all__ = ["PathSpace", "path_space"]


@dataclass(frozen=True)
class PathSpace:
    """The DAG edges whose paths count, how many paths those are and the dimension of
    the space they span (``E - N + 2`` over the edges and blocks on some path)."""

    numbering: Numbering
    #: dag edges on some ENTRY -> EXIT path that survived the exclusions
    edges: frozenset[int]
    possible: int
    dimension: int
    #: dag edges exclusion removed (empty when nothing is excluded)
    removed: frozenset[int]

    @property
    def excluded(self) -> bool:
        return bool(self.removed)

    def counts(self, number: int) -> bool:
        """Whether path ``number`` is one of the space's paths."""
        if not self.removed:
            return True
        return all(eid not in self.removed for eid in regenerate(self.numbering, number).edges)

    def missed(self, ran: Collection[int], limit: int | None = None) -> Iterator[int]:
        """The space's paths not in ``ran``, shortest first (then by number)."""
        allowed = None if not self.removed else self.edges
        return paths_shortest_first(self.numbering, ran, limit, allowed)


def _on_some_path(numbering: Numbering, edges: set[int]) -> tuple[set[int], set[int]]:
    """The blocks and edges of ``edges`` on some ENTRY -> EXIT path using only them."""
    dag = numbering.dag
    forward = {dag.entry}
    for block in dag.topo_order:
        if block in forward:
            forward.update(dag.edges[e].dst for e in dag.out_edges[block] if e in edges)
    backward = {dag.exit}
    for block in reversed(dag.topo_order):
        if any(e in edges and dag.edges[e].dst in backward for e in dag.out_edges[block]):
            backward.add(block)
    blocks = forward & backward
    kept = {e for e in edges if dag.edges[e].src in blocks and dag.edges[e].dst in blocks}
    return blocks, kept


def _count_paths(numbering: Numbering, edges: set[int]) -> int:
    """NumPaths(ENTRY) over ``edges`` (Ball-Larus 1996, §3.1, restricted)."""
    dag = numbering.dag
    paths = dict.fromkeys(range(dag.num_blocks), 0)
    paths[dag.exit] = 1
    for block in reversed(dag.topo_order):
        if block != dag.exit:
            paths[block] = sum(paths[dag.edges[e].dst] for e in dag.out_edges[block]
                               if e in edges)
    return paths[dag.entry]


def _unavoidable(dag: Dag, blocks: Collection[int]) -> set[int]:
    """Those of ``blocks`` every run from ENTRY to EXIT passes: EXIT cannot be reached
    from ENTRY in the CFG without them. A loop no CFG edge leaves (``while True:``
    with no ``break`` or ``return``) counts as ending where its back edges leave
    (their LOOP_END dummy edges), so the code every turn of it runs is unavoidable
    too."""
    cfg = dag.cfg
    succ: dict[int, list[int]] = {b: [] for b in dag.reachable}
    for edge in dag.edges:
        if edge.kind is EdgeKind.NORMAL:
            succ[edge.src].append(edge.dst)
    for back in dag.backedges:
        src, dst = cfg.edges[back]
        succ[src].append(dst)
    # the blocks that reach EXIT by CFG edges; a latch that cannot ends there
    pred: dict[int, list[int]] = {b: [] for b in succ}
    for src, targets in succ.items():
        for dst in targets:
            pred[dst].append(src)
    ends = {cfg.exit}
    todo = [cfg.exit]
    while todo:
        for src in pred[todo.pop()]:
            if src not in ends:
                ends.add(src)
                todo.append(src)
    for back in dag.backedges:
        src = cfg.edges[back][0]
        if src not in ends:
            succ[src].append(cfg.exit)

    def reaches_exit_without(block: int) -> bool:
        seen = {cfg.entry, block}
        todo = [cfg.entry]
        while todo:
            for dst in succ[todo.pop()]:
                if dst == cfg.exit:
                    return True
                if dst not in seen:
                    seen.add(dst)
                    todo.append(dst)
        return False

    return {b for b in blocks if b in succ and (b in (cfg.entry, cfg.exit)
                                                or not reaches_exit_without(b))}


def _one_way_on(dag: Dag, avoidable: set[int]) -> set[int]:
    """Where every way on from a block is one excluded block of its own (its only way
    in is from there, its only way out leads, by the same kind of edge, where the
    others' do), the first of them: paths through them could only differ in excluded
    code, and the first one's count for them all."""
    cfg = dag.cfg
    backedges = set(dag.backedges)
    restarts = set(cfg.restarts)
    chosen: set[int] = set()
    for block in dag.reachable:
        ways = cfg.out_edges[block]
        if len(ways) < 2:
            continue
        meeting: set[tuple[int, bool]] = set()
        for eid in ways:
            arm = cfg.edges[eid][1]
            if (eid in backedges or arm not in avoidable or arm in restarts
                    or cfg.in_edges[arm] != (eid,) or len(cfg.out_edges[arm]) != 1):
                break
            (out,) = cfg.out_edges[arm]
            meeting.add((cfg.edges[out][1], out in backedges))
            if len(meeting) > 1:
                break
        else:
            chosen.add(cfg.edges[ways[0]][1])
    return chosen


def _kept_edges(numbering: Numbering, excluded_blocks: Collection[int]) -> set[int]:
    """The dag edges of no path that runs avoidable excluded code (see the module's
    docstring): an edge is dropped when it runs an avoidable excluded block -- its
    ends, and for a dummy edge the ends of every back edge it stands for."""
    dag = numbering.dag
    given = {b for b in excluded_blocks if b in dag.reachable}
    avoidable = given - _unavoidable(dag, given)
    avoidable -= _one_way_on(dag, avoidable)  # what is left: the blocks no path runs
    if not avoidable:
        return set(range(len(dag.edges)))
    # the back edges each dummy edge stands for, and whether all of them run one
    bad: dict[int, bool] = {}
    for back, (end, start) in dag.backedges.items():
        runs = not avoidable.isdisjoint(dag.cfg.edges[back])
        for eid in (end, start):
            bad[eid] = bad.get(eid, True) and runs
    kept: set[int] = set()
    for eid, edge in enumerate(dag.edges):
        if edge.kind in (EdgeKind.LOOP_START, EdgeKind.LOOP_END):
            dropped = bad[eid]
        else:
            dropped = edge.src in avoidable or edge.dst in avoidable
        if not dropped:
            kept.add(eid)
    return kept


def path_space(numbering: Numbering, excluded_blocks: Collection[int] = ()) -> PathSpace:
    """The path space of a function's DAG once the blocks ``excluded_blocks`` are
    excluded (see the module's docstring for what that removes)."""
    dag = numbering.dag
    every = set(range(len(dag.edges)))
    if not excluded_blocks:
        blocks, edges = _on_some_path(numbering, every)
        dimension = len(edges) - len(blocks) + 2 if dag.entry in blocks else 0
        return PathSpace(numbering, frozenset(edges), numbering.total, dimension,
                         frozenset())
    _blocks, before = _on_some_path(numbering, every)
    blocks, edges = _on_some_path(numbering, _kept_edges(numbering, excluded_blocks))
    if dag.entry not in blocks:
        return PathSpace(numbering, frozenset(), 0, 0, frozenset(before))
    return PathSpace(numbering, frozenset(edges), _count_paths(numbering, edges),
                     len(edges) - len(blocks) + 2, frozenset(before - edges))
