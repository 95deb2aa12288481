"""One copy's share of a partitioned function: its probes, and turning what they
record back into Ball-Larus path numbers (P3, Afraz et al. 2015, §3.1-§3.2).

A copy that profiles some of a function's tasks labels the function's DAG by PSPP
(:func:`~pathprof.graph.pspp.pspp`) on the union of its tasks' edges, and puts a
probe on every edge with a non-zero label (no spanning tree: PSPP's point is that
absorbed edges carry nothing). Two additions make cut paths exact too (an
exception ends a path inside a block: only a prefix of it ran):

* **poison** -- an uninteresting edge leaving a block that an all-interesting
  prefix can reach adds ``N`` (the number of paths), so a prefix or path that
  took any uninteresting edge has a register of at least ``N`` and is dropped.
  PSPP's validity (b) covers complete paths only; a prefix through an absorbed
  edge could otherwise look like an interesting one.
* **pending values** -- propagation moves a block's single in-edge value onto its
  out-edges, so at block ``v`` the register lacks the value moved at ``v``; it is
  the query increment of ``v`` (:attr:`Placement.query`), and ``r + query[v]`` is
  the prefix's step-1 sum, which :func:`decode_prefix` decodes.

What a copy records is then translated into Ball-Larus numbers (path numbers for
complete paths, prefix values for cut ones) and kept only where the copy *owns*
the path: the task holding a complete path; for a cut prefix, the task holding
its least Ball-Larus completion. Every path and every prefix has exactly one
owner, and the owner's instrumentation records it exactly, so the copies' data
files add up to the sequential profile.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from functools import cached_property

from pathprof.graph.numbering import Numbering
from pathprof.graph.placement import Placement
from pathprof.graph.pspp import PsppLabeling, decode, propagate, pspp
from pathprof.types import BlockId, DagEdgeId

__all__ = ["CopyShare", "decode_prefix", "pending_values", "poisoned_edges"]


def pending_values(labeling: PsppLabeling) -> tuple[int, ...]:
    """Per block, the value propagation moved off its single in-edge (0 if none):
    along an all-interesting prefix to ``v``, final labels sum to the step-1 sum
    minus ``pending[v]``."""
    moved = [0] * labeling.dag.num_blocks
    propagate(labeling.dag, labeling.initial, moved)
    return tuple(moved)


def poisoned_edges(labeling: PsppLabeling) -> frozenset[DagEdgeId]:
    """Uninteresting edges leaving a block reached from ENTRY by interesting edges
    only (ENTRY included): the first uninteresting edge of any path takes one."""
    dag = labeling.dag
    reached = {dag.entry}
    work = [dag.entry]
    poisoned = set()
    while work:
        block = work.pop()
        for eid in dag.out_edges[block]:
            if eid not in labeling.interesting:
                poisoned.add(eid)
                continue
            dst = dag.edges[eid].dst
            if dst not in reached:
                reached.add(dst)
                work.append(dst)
    return frozenset(poisoned)


def decode_prefix(labeling: PsppLabeling, block: BlockId, value: int
                  ) -> tuple[DagEdgeId, ...] | None:
    """The all-interesting prefix from ENTRY to ``block`` whose step-1 sum is
    ``value``, or None. As :func:`~pathprof.graph.pspp.decode`, restricted at each
    block to interesting edges from which ``block`` can be reached: prefix sums
    from ``w`` to ``block`` lie in ``[0, N_w)``, so the ranges stay disjoint."""
    dag = labeling.dag
    reaches = {block}
    work = [block]
    while work:
        current = work.pop()
        for eid in dag.in_edges[current]:
            src = dag.edges[eid].src
            if eid in labeling.interesting and src not in reaches:
                reaches.add(src)
                work.append(src)
    if dag.entry not in reaches or value < 0:
        return None
    edges: list[DagEdgeId] = []
    current, remaining = dag.entry, value
    while current != block:
        options = sorted((labeling.initial[e], e) for e in dag.out_edges[current]
                         if e in labeling.interesting and dag.edges[e].dst in reaches)
        index = bisect_right([v for v, _ in options], remaining) - 1
        if index < 0:
            return None
        remaining -= options[index][0]
        edges.append(options[index][1])
        current = dag.edges[options[index][1]].dst
    return tuple(edges) if remaining == 0 else None


@dataclass(frozen=True)
class CopyShare:
    """What one copy does for one partitioned function.

    ``tasks`` are the edge sets of all the function's tasks and ``copies`` the copy
    each went to; ``index`` is this copy. A copy holding every edge profiles with
    Ball-Larus (``numbering``'s own values); one holding some, with PSPP.
    """

    numbering: Numbering
    tasks: tuple[frozenset[DagEdgeId], ...]
    copies: tuple[int, ...]
    index: int

    @cached_property
    def interesting(self) -> frozenset[DagEdgeId]:
        mine = [t for t, c in zip(self.tasks, self.copies, strict=True) if c == self.index]
        return frozenset().union(*mine) if mine else frozenset()

    @property
    def whole(self) -> bool:
        return len(self.interesting) == len(self.numbering.dag.edges)

    @cached_property
    def labeling(self) -> PsppLabeling:
        return pspp(self.numbering.dag, self.interesting)

    def placement(self) -> Placement:
        """Probes on every edge with a non-zero label (poisoned edges add ``N``);
        the query increments are the pending values."""
        labeling = self.labeling
        poison = poisoned_edges(labeling)
        total = labeling.total
        values = [total if e in poison else labeling.labels[e]
                  for e in range(len(self.numbering.dag.edges))]
        increment = {e: value for e, value in enumerate(values) if value}
        tree = frozenset(e for e, value in enumerate(values) if not value)
        return Placement(self.numbering, tree, increment, pending_values(labeling))

    def owner(self, edges: Collection[DagEdgeId]) -> int:
        """The copy whose task holds every edge of the complete path ``edges``."""
        wanted = set(edges)
        for task, copy in zip(self.tasks, self.copies, strict=True):
            if wanted <= task:
                return copy
        raise ValueError(f"no task holds the path {sorted(wanted)}")

    def _completion(self, block: BlockId) -> list[DagEdgeId]:
        """The least Ball-Larus suffix from ``block``: the edge of value 0 each step."""
        dag = self.numbering.dag
        suffix = []
        while block != dag.exit:
            eid = min(dag.out_edges[block], key=lambda e: self.numbering.val[e])
            suffix.append(eid)
            block = dag.edges[eid].dst
        return suffix

    def _bl(self, edges: Sequence[DagEdgeId]) -> int:
        return sum(self.numbering.val[e] for e in edges)

    def path(self, value: int) -> int | None:
        """The Ball-Larus number of the complete path this copy recorded as
        ``value``, if this copy owns it; None otherwise."""
        if self.whole:
            edges = _regenerate(self.numbering, value)
        else:
            edges = decode(self.labeling, value)
        if edges is None or self.owner(edges) != self.index:
            return None
        return self._bl(edges)

    def cut(self, block: BlockId, value: int) -> int | None:
        """The Ball-Larus prefix value of the prefix to ``block`` this copy recorded
        as ``value`` (register plus query increment), if this copy owns it."""
        if self.whole:
            edges = _regenerate_prefix(self.numbering, block, value)
        else:
            if value >= self.labeling.total:
                return None
            edges = decode_prefix(self.labeling, block, value)
        if edges is None or self.owner([*edges, *self._completion(block)]) != self.index:
            return None
        return self._bl(edges)


def _regenerate(numbering: Numbering, value: int) -> tuple[DagEdgeId, ...] | None:
    from pathprof.graph.numbering import regenerate

    if not 0 <= value < numbering.total:
        return None
    return regenerate(numbering, value).edges


def _regenerate_prefix(numbering: Numbering, block: BlockId, value: int
                       ) -> tuple[DagEdgeId, ...] | None:
    from pathprof.graph.numbering import regenerate_prefix

    try:
        path = regenerate_prefix(numbering, block, value)
    except ValueError:
        return None
    return path.edges

