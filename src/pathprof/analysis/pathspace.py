"""The paths of a function that coverage counts: its numbered DAG less what exclusions
remove.

A function's paths are the ENTRY -> EXIT paths of its Ball-Larus DAG (Ball-Larus
1996, §4). An excluded region (:mod:`pathprof.analysis.exclusions`) is a set of
blocks all of whose code is excluded. Exclusion removes *decisions*, not code that
every path runs: at a block outside the region with a way on that stays outside, the
edges into the region are removed (the branch into an excluded ``else``, the start of
a path at an excluded handler); inside a region, where paths could only differ in
excluded code, one way on is kept (one that leaves the region, if any), so that the
region counts as one path. Excluding a statement every path runs removes nothing.
What is left is pruned to the blocks and edges on some ENTRY -> EXIT path.

Paths are still named by the function's own Ball-Larus numbers (the data file's),
so a recorded path counts when it uses no removed edge.

Invariant: with nothing excluded, :attr:`PathSpace.possible` is NumPaths(ENTRY) and
:attr:`PathSpace.dimension` is :func:`~pathprof.analysis.basis.path_space_dimension`;
excluding more never raises either, and every path a space counts is a path of the
DAG that uses only :attr:`PathSpace.edges`.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from dataclasses import dataclass

from pathprof.graph import Numbering, regenerate
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


def _kept_edges(numbering: Numbering, excluded_blocks: Collection[int]) -> set[int]:
    """The dag edges left once decisions into excluded blocks are removed."""
    dag = numbering.dag
    kept: set[int] = set()
    for block in range(dag.num_blocks):
        out = list(dag.out_edges[block])
        if not out:
            continue
        outside = [e for e in out if dag.edges[e].dst not in excluded_blocks]
        if block not in excluded_blocks:
            kept.update(outside or out)
        else:  # one way on through excluded code: out of it if it can
            kept.add(min(outside) if outside else min(out))
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
