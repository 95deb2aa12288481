"""Precise selective path profiling: ids for a subset of paths that no other path takes.

Implements PSPP, Algorithm 1 of Afraz, Saha and Kanade, "P3: Partitioned Path
Profiling", ESEC/FSE 2015, §3.1 (correctness: Appendix A), and the selective path
profiling (SPP) of Apiwattanapong and Harrold as that paper describes it (§2.2),
kept to show what PSPP fixes.

A path is *interesting* when all its edges are in the interesting edge set ``EI``
(§2.1, §2.2: an instance profiles the paths drawn solid in it). A labeling is
*valid* (§2.1) when (a) interesting paths get distinct ids and (b) no other path
gets the id of an interesting path; then one copy counts its interesting paths
exactly, whatever else runs. Both algorithms take three steps (§2.2, §3.1):

1. *initial step*: Ball-Larus numbering in reverse topological order, where each
   block's uninteresting out-edges come first (value 0 on the edge itself); SPP
   then takes the interesting ones in an arbitrary order, PSPP in decreasing
   order of ``w.min``, the least step-1 id of an interesting path from ``w``;
2. *propagation*: in topological order, a block ``v`` with a single in-edge of
   non-zero value pushes that value onto all its out-edges and zeroes the in-edge;
3. *absorption*: every uninteresting edge gets 0.

Only PSPP's labeling is valid (Appendix A, Theorem 2); SPP's may give an
uninteresting path an interesting path's id (§2.2, Example 2).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from pathprof.exceptions import CfgError
from pathprof.graph.cfg import Dag
from pathprof.types import DagEdgeId, PathId

__all__ = ["PsppLabeling", "decode", "path_id", "pspp", "spp"]


@dataclass(frozen=True)
class PsppLabeling:
    """The edge labels of PSPP or SPP for one DAG and one interesting edge set.

    Attributes
    ----------
    dag : Dag
    interesting : frozenset of int
        The interesting dag edges ``EI``. Interesting paths are the ENTRY -> EXIT
        paths all of whose edges are in it.
    initial : tuple of int
        Step-1 label of every dag edge (Algorithm 1, lines 4-13): 0 on
        uninteresting edges; on the interesting out-edges of ``v``, in their order,
        the number of paths from ``v`` through the out-edges labeled before them
        (uninteresting ones included) -- Ball-Larus values with the uninteresting
        edges first.
    propagated : tuple of int
        Labels after propagation (lines 14-21), before absorption: the second
        step of SPP (Figure 4(b) of the paper).
    labels : tuple of int
        Final label of every dag edge, after propagation and absorption. A probe
        goes on every edge with a non-zero label.
    num_paths : tuple of int
        ``N_v``: the number of paths from each block to EXIT (0 where unreachable).
    min_id : tuple of (int or None)
        ``v.min``: the least step-1 id of an interesting path from ``v`` to EXIT;
        None where no interesting path leaves ``v`` (the paper's infinity).

    Invariants: the step-1 sum of every path from a block ``v`` to EXIT lies in
    ``[0, N_v)``, and step-1 sums of interesting paths are distinct (see
    :func:`decode`); propagation keeps every path's sum; absorption only lowers
    sums of uninteresting paths. So every path id lies in ``[0, N_entry)``, and an
    interesting path's final id is its step-1 sum.
    """

    dag: Dag
    interesting: frozenset[DagEdgeId]
    initial: tuple[int, ...]
    propagated: tuple[int, ...]
    labels: tuple[int, ...]
    num_paths: tuple[int, ...]
    min_id: tuple[int | None, ...]

    @property
    def total(self) -> int:
        """``N_entry``: the number of ENTRY -> EXIT paths; all ids are below it."""
        return self.num_paths[self.dag.entry]

    @property
    def probes(self) -> tuple[DagEdgeId, ...]:
        """The dag edges with a non-zero final label, in edge order."""
        return tuple(e for e, label in enumerate(self.labels) if label)

    @property
    def cost(self) -> int:
        """Number of probes: the paper's ``overhead`` (§2.1) and task cost (§3.2)."""
        return len(self.probes)

    @cached_property
    def _out_initial(self) -> tuple[tuple[tuple[int, ...], tuple[DagEdgeId, ...]], ...]:
        """Per block: interesting out-edges sorted by step-1 label, for decoding."""
        result = []
        for block in range(self.dag.num_blocks):
            pairs = sorted(
                (self.initial[e], e) for e in self.dag.out_edges[block] if e in self.interesting
            )
            result.append((tuple(v for v, _ in pairs), tuple(e for _, e in pairs)))
        return tuple(result)


def pspp(dag: Dag, interesting: Iterable[DagEdgeId]) -> PsppLabeling:
    """Label the edges of ``dag`` by PSPP (P3 paper, §3.1, Algorithm 1).

    In the initial step, a block's interesting out-edges ``v -> w`` are taken in
    decreasing order of ``w.min``; a ``w`` with no interesting path to EXIT (the
    paper's infinity) comes first, and ties keep dag-edge order.

    Parameters
    ----------
    dag : Dag
    interesting : iterable of int
        Dag edge ids of ``EI``. The paper takes ``EI`` to be the edges of the
        interesting paths; any subset is accepted here (an edge on no
        all-interesting path is labeled like the others), and the tests check
        validity for arbitrary subsets too.

    Returns
    -------
    PsppLabeling
        Invariant (Theorem 2, Appendix A): the final labeling is valid -- the
        interesting paths have distinct ids, and no other path has one of them.

    Examples
    --------
    A diamond whose left branch is uninteresting: the interesting path gets 1,
    the other path 0, and the only probe is on the interesting branch.

    >>> from pathprof.graph.cfg import Cfg, to_dag
    >>> dag = to_dag(Cfg(4, 0, 3, [(0, 1), (0, 2), (1, 3), (2, 3)]))
    >>> lab = pspp(dag, {1, 3})
    >>> lab.initial, lab.labels
    ((0, 1, 0, 0), (0, 0, 0, 1))
    >>> decode(lab, 1), decode(lab, 0)
    ((1, 3), None)
    """
    return _label(dag, interesting, order=None)


def spp(
    dag: Dag,
    interesting: Iterable[DagEdgeId],
    *,
    edge_key: Callable[[DagEdgeId], object] | None = None,
) -> PsppLabeling:
    """Label the edges of ``dag`` by SPP as the P3 paper describes it (§2.2, §3.1).

    The same three steps as :func:`pspp`, but a block's interesting out-edges are
    taken in an arbitrary order: dag-edge order, or sorted by ``edge_key``.
    Interesting paths still get distinct ids (step 1 numbers them as Ball-Larus
    would, see :func:`decode`); an uninteresting path may share one (§2.2,
    Example 2).
    Kept for comparison; do not profile with it.
    """
    return _label(dag, interesting, order=edge_key if edge_key is not None else (lambda e: e))


def path_id(labeling: PsppLabeling, edges: Iterable[DagEdgeId]) -> PathId:
    """The id a probe run computes along ``edges``: the sum of their final labels."""
    return sum(labeling.labels[e] for e in edges)


def decode(labeling: PsppLabeling, value: PathId) -> tuple[DagEdgeId, ...] | None:
    """Return the interesting path whose id is ``value``, or None if there is none.

    Decoding is Ball-Larus regeneration (Ball-Larus 1996, §3.4) over the step-1
    labels of the interesting edges. Why that is right:

    * Propagation keeps the sum along every ENTRY -> EXIT path: a block ``v`` it
      acts on has one in-edge ``e``, so a path through ``v`` holds ``e`` and
      exactly one out-edge of ``v`` (``v`` is not EXIT); moving ``e``'s value onto
      every out-edge leaves that path's sum unchanged, and other paths hold none of
      these edges. Absorption zeroes uninteresting edges only. So an interesting
      path's final id is its step-1 sum.
    * Step 1 is *not* a Ball-Larus numbering of all paths: every uninteresting
      edge gets 0 (Algorithm 1, line 7), so uninteresting paths may share sums.
      But by induction in reverse topological order, every path from ``w`` to EXIT
      has a step-1 sum in ``[0, N_w)``; and at a block ``v`` whose uninteresting
      out-edges lead to ``U`` paths, the interesting out-edges ``e = (v, w)`` take
      the disjoint ranges ``[e.val, e.val + N_w)``, which tile ``[U, N_v)``.
    * So from ENTRY with ``r = value``, an interesting path with sum ``value`` must
      leave each block by the interesting edge with the largest ``e.val <= r``
      (none if ``r < U``: then no interesting path has that sum); subtracting
      ``e.val`` keeps ``r < N_w``, and ``r = 0`` at EXIT. The walk finds that path
      if it exists, and any path it returns is interesting with sum ``value``.
      Distinct interesting paths thus have distinct ids: validity (a).

    That an *uninteresting* path never produces an interesting path's id at run
    time is validity (b), Theorem 2; decoding does not depend on it.

    Returns
    -------
    tuple of int or None
        Dag edge ids from ENTRY to EXIT.
    """
    if not 0 <= value < labeling.total:
        return None
    dag = labeling.dag
    remaining = value
    block = dag.entry
    edges: list[DagEdgeId] = []
    out_initial = labeling._out_initial
    while block != dag.exit:
        vals, eids = out_initial[block]
        index = bisect_right(vals, remaining) - 1
        if index < 0:
            return None
        remaining -= vals[index]
        edges.append(eids[index])
        block = dag.edges[eids[index]].dst
    return tuple(edges) if remaining == 0 else None


def _label(
    dag: Dag,
    interesting_edges: Iterable[DagEdgeId],
    order: Callable[[DagEdgeId], Any] | None,
) -> PsppLabeling:
    """The three steps; ``order=None`` is PSPP's order, otherwise SPP's with that key."""
    interesting = frozenset(interesting_edges)
    for eid in interesting:
        if not 0 <= eid < len(dag.edges):
            raise ValueError(f"interesting edge {eid} is not a dag edge (0..{len(dag.edges) - 1})")
    initial, num_paths, min_id = _initial_step(dag, interesting, order)
    propagated = propagate(dag, initial)
    # Absorption (Algorithm 1, line 22).
    labels = [value if eid in interesting else 0 for eid, value in enumerate(propagated)]
    return PsppLabeling(
        dag=dag,
        interesting=interesting,
        initial=tuple(initial),
        propagated=tuple(propagated),
        labels=tuple(labels),
        num_paths=tuple(num_paths),
        min_id=tuple(min_id),
    )


def _initial_step(
    dag: Dag,
    interesting: Collection[DagEdgeId],
    order: Callable[[DagEdgeId], Any] | None,
) -> tuple[list[int], list[int], list[int | None]]:
    """Algorithm 1, lines 2-13: step-1 labels, ``N_v`` and ``v.min``."""
    val = [0] * len(dag.edges)
    num_paths = [0] * dag.num_blocks
    min_id: list[int | None] = [None] * dag.num_blocks
    num_paths[dag.exit] = 1
    min_id[dag.exit] = 0
    for block in reversed(dag.topo_order):
        if block == dag.exit:
            continue
        out = dag.out_edges[block]
        dull = [e for e in out if e not in interesting]
        chosen = [e for e in out if e in interesting]
        if order is None:
            # Decreasing w.min; None (infinity) first; stable, so ties keep edge order.
            chosen.sort(key=lambda e: _descending_min(min_id[dag.edges[e].dst]))
        else:
            chosen.sort(key=order)
        total = 0
        for eid in dull:
            val[eid] = 0
            total += num_paths[dag.edges[eid].dst]
        best: int | None = None
        for eid in chosen:
            val[eid] = total
            dst = dag.edges[eid].dst
            total += num_paths[dst]
            if min_id[dst] is not None:
                candidate = min_id[dst] + val[eid]  # type: ignore[operator]
                best = candidate if best is None else min(best, candidate)
        if total == 0:
            raise CfgError(f"block {block} has no path to EXIT")
        num_paths[block] = total
        min_id[block] = best
    return val, num_paths, min_id


def _descending_min(value: int | None) -> tuple[int, int]:
    """Sort key: infinity (None) first, then larger values first."""
    return (0, 0) if value is None else (1, -value)


def propagate(dag: Dag, initial: Sequence[int],
               moved: list[int] | None = None) -> list[int]:
    """Algorithm 1, lines 14-21: push single in-edge values onto the out-edges;
    ``moved``, if given, gets per block the value pushed off its in-edge.

    Invariant: the label sum along every ENTRY -> EXIT path is unchanged.
    """
    labels = list(initial)
    for block in dag.topo_order:
        if block == dag.exit:
            continue
        into = dag.in_edges[block]
        if len(into) != 1 or labels[into[0]] <= 0:
            continue
        value = labels[into[0]]
        if moved is not None:
            moved[block] = value
        for eid in dag.out_edges[block]:
            labels[eid] += value
        labels[into[0]] = 0
    return labels
