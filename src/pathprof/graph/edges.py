"""Optimal edge profiling: counters on the chords of a spanning tree, the rest by flow.

Knuth's observation, as used by Ball-Larus ("Optimally profiling and tracing
programs", cited as [BL94] in Ball-Larus 1996, §2) and restated in Ball 1994,
Theorem 1: with an edge EXIT -> ENTRY added, the count of every edge is fixed by
the counts of the chords of any spanning tree, through flow conservation at each
block. This is the baseline path profiling is compared with, and it gives branch
counts.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from pathprof.graph.cfg import Cfg, find_backedges, loop_depths
from pathprof.graph.placement import maximum_spanning_tree
from pathprof.types import BlockId, EdgeId

__all__ = ["EdgeCounterPlan", "plan_edge_counters", "recover_edge_counts"]


@dataclass(frozen=True)
class EdgeCounterPlan:
    """Which edges carry a counter.

    The plan works on an *extended* edge list: the CFG's edges, then one virtual
    edge ENTRY -> ``h`` per restart block (entered by a caught exception), then one
    virtual edge ``v -> EXIT`` per block in ``raising`` (an exception left ``v``),
    then EXIT -> ENTRY. The virtual exception edges are always counted: they are
    observed by exception handlers, off the normal path.

    Attributes
    ----------
    cfg : Cfg
    raising : tuple of int
        Blocks whose exceptional exits are counted.
    endpoints : tuple of (int, int)
        The extended edge list.
    chords : tuple of int
        Extended edge ids that carry a counter.
    """

    cfg: Cfg
    raising: tuple[BlockId, ...]
    endpoints: tuple[tuple[BlockId, BlockId], ...]
    chords: tuple[int, ...]

    @property
    def num_cfg_edges(self) -> int:
        return len(self.cfg.edges)

    def restart_edge(self, block: BlockId) -> int:
        """Extended edge id of the virtual ENTRY -> restart ``block`` edge."""
        return self.num_cfg_edges + self.cfg.restarts.index(block)

    def raise_edge(self, block: BlockId) -> int:
        """Extended edge id of the virtual ``block`` -> EXIT exception edge."""
        return self.num_cfg_edges + len(self.cfg.restarts) + self.raising.index(block)

    @property
    def return_edge(self) -> int:
        """Extended edge id of EXIT -> ENTRY (its count is the number of exits)."""
        return len(self.endpoints) - 1


def _static_weights(cfg: Cfg) -> list[float]:
    depth = loop_depths(cfg, find_backedges(cfg))
    return [10.0 ** min(depth[s], depth[d]) for s, d in cfg.edges]


def plan_edge_counters(
    cfg: Cfg,
    weights: Sequence[float] | None = None,
    *,
    raising: Collection[BlockId] = (),
    forced_tree: Collection[EdgeId] = (),
) -> EdgeCounterPlan:
    """Choose the edges that need counters for an exact edge profile.

    Parameters
    ----------
    cfg : Cfg
    weights : sequence of float, optional
        One per CFG edge (default ``10 ** loop depth``); heavy edges stay uncounted.
    raising : collection of int
        Blocks that may end by an exception (every Python block may).
    forced_tree : collection of int
        CFG edges with no place for a counter.

    Returns
    -------
    EdgeCounterPlan
        Invariant: ``len(chords) == E - V + 1`` over the reachable part of the
        extended graph, and :func:`recover_edge_counts` determines every edge.

    Examples
    --------
    >>> g = Cfg(4, 0, 3, [(0, 1), (0, 2), (1, 3), (2, 3)])
    >>> len(plan_edge_counters(g).chords)  # 5 edges with EXIT -> ENTRY, 4 blocks
    2
    """
    if weights is None:
        weights = _static_weights(cfg)
    raising_t = tuple(sorted(set(raising)))
    endpoints = [
        *cfg.edges,
        *((cfg.entry, h) for h in cfg.restarts),
        *((v, cfg.exit) for v in raising_t),
        (cfg.exit, cfg.entry),
    ]
    virtual = range(len(cfg.edges), len(endpoints) - 1)
    all_weights = [*weights, *(0.0 for _ in virtual), math.inf]
    tree = maximum_spanning_tree(
        cfg.num_blocks,
        endpoints,
        all_weights,
        forced={len(endpoints) - 1, *forced_tree},
        excluded=set(virtual),
    )
    chords = tuple(e for e in range(len(endpoints)) if e not in tree)
    return EdgeCounterPlan(cfg=cfg, raising=raising_t, endpoints=tuple(endpoints), chords=chords)


def recover_edge_counts(plan: EdgeCounterPlan, chord_counts: Mapping[int, int]) -> list[int]:
    """Every edge's count from the chords' counts, by flow conservation.

    Repeatedly finds a block with exactly one incident edge of unknown count and
    solves it from ``inflow == outflow`` (with EXIT -> ENTRY closing the flow). Each
    edge is solved once: O(V + E).

    Parameters
    ----------
    plan : EdgeCounterPlan
    chord_counts : mapping
        Extended edge id -> count, for chords (missing chords count 0).

    Returns
    -------
    list of int
        One count per extended edge (``plan.endpoints``).

    Raises
    ------
    ValueError
        If the counts are not a flow (some block's in and out disagree).
    """
    endpoints = plan.endpoints
    chords = set(plan.chords)
    counts: list[int | None] = [None] * len(endpoints)
    for eid in chords:
        counts[eid] = int(chord_counts.get(eid, 0))
    n = plan.cfg.num_blocks
    incident: list[list[int]] = [[] for _ in range(n)]
    for eid, (src, dst) in enumerate(endpoints):
        if src == dst:  # a self-loop is always a chord and does not affect balance
            continue
        incident[src].append(eid)
        incident[dst].append(eid)
    unknown = [sum(1 for e in incident[v] if counts[e] is None) for v in range(n)]
    ready = [v for v in range(n) if unknown[v] == 1]
    while ready:
        block = ready.pop()
        if unknown[block] != 1:
            continue
        balance = 0  # inflow - outflow over the known edges
        missing = -1
        for eid in incident[block]:
            value = counts[eid]
            if value is None:
                missing = eid
                continue
            src, _dst = endpoints[eid]
            balance += -value if src == block else value
        src, dst = endpoints[missing]
        counts[missing] = balance if src == block else -balance
        for end in (src, dst):
            unknown[end] -= 1
            if unknown[end] == 1:
                ready.append(end)
    result = [0 if c is None else c for c in counts]
    _check_flow(plan, result)
    return result


def _check_flow(plan: EdgeCounterPlan, counts: Sequence[int]) -> None:
    balance = [0] * plan.cfg.num_blocks
    for eid, (src, dst) in enumerate(plan.endpoints):
        balance[src] -= counts[eid]
        balance[dst] += counts[eid]
    for block, value in enumerate(balance):
        if value:
            raise ValueError(f"edge counts are not a flow: block {block} is off by {value}")
    negative = [e for e, c in enumerate(counts) if c < 0]
    if negative:
        raise ValueError(f"edge counts are not a flow: edges {negative} come out negative")
