"""Counting events with chord increments and answering on-line queries (Ball 1994).

Every block ``b`` of a control-flow graph has an event weight ``w(b)`` (for Python:
the statements or bytecode instructions it runs). A naive counter adds ``w(b)`` as
each block runs. Ball 1994 ("Efficiently counting program events with support for
on-line queries", §2-§3) puts the events on edges instead -- here an edge carries
the events of the block it enters, and the virtual edge EXIT -> ENTRY those of ENTRY
-- picks a maximum-weight spanning tree of the graph plus EXIT -> ENTRY, and adds a
constant only on the chords (non-tree edges): the signed event sum around the
chord's fundamental cycle. One depth-first search of the tree computes all of them
(:func:`pathprof.graph.placement.event_increments`).

Unlike path numbering this works on the graph with its cycles: loops need no
cutting, a backedge is an edge like any other.

Invariants (checked by ``tests/graph/test_events.py``):

* along any walk from ENTRY to EXIT, the chord increments sum to the events of the
  blocks the walk entered (ENTRY included);
* along any walk from ENTRY to a block ``v``, chord increments plus ``query[v]``
  (the *query increment* of ``v``, §3.3) equal the events of the blocks entered so
  far, ``v``'s included. So the exact count is known at any point, not only at the
  end, and ``query[EXIT] == 0``.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from pathprof.exceptions import CfgError
from pathprof.graph.cfg import Cfg, find_backedges, loop_depths
from pathprof.graph.placement import _UnionFind, event_increments, maximum_spanning_tree
from pathprof.types import EdgeId

__all__ = ["EventPlan", "plan_events", "rest_of_block", "static_event_weights"]


@dataclass(frozen=True)
class EventPlan:
    """Where a function's event counter is incremented, and its query increments.

    Attributes
    ----------
    cfg : Cfg
    block_events : tuple of int
        ``w(b)`` per block.
    tree : frozenset of int
        CFG edges in the spanning tree: they carry no code.
    increment : dict
        Chord (CFG edge id) -> its increment. Every CFG edge not in ``tree`` is a
        chord; chords whose increment is 0 need no code either.
    query : tuple of int
        Per block: add to the register to get the events so far, that block's
        included (0 for blocks no walk from ENTRY reaches through edges, such as
        exception handlers: their register is set by whoever starts them).
    """

    cfg: Cfg
    block_events: tuple[int, ...]
    tree: frozenset[EdgeId]
    increment: dict[EdgeId, int]
    query: tuple[int, ...]

    @property
    def code_edges(self) -> dict[EdgeId, int]:
        """Chords with a non-zero increment: the edges that run ``r += inc``."""
        return {e: inc for e, inc in self.increment.items() if inc}

    def register_after(self, walk: Sequence[EdgeId]) -> int:
        """The register after following ``walk`` (CFG edge ids) from ENTRY."""
        return sum(self.increment.get(e, 0) for e in walk)

    def count_at(self, walk: Sequence[EdgeId]) -> int:
        """The exact events after ``walk`` from ENTRY: register plus query increment."""
        block = self.cfg.edges[walk[-1]][1] if walk else self.cfg.entry
        return self.register_after(walk) + self.query[block]


def static_event_weights(cfg: Cfg, *, exit_bonus: float = 1e9) -> list[float]:
    """Edge-frequency estimates for choosing the tree: ``10 ** d``, ``d`` the number
    of loops containing both ends (Ball-Larus 1996, §3.2). Edges into EXIT get a
    large bonus so that they stay in the tree: then the register already holds the
    call's count where it returns, and no code runs after a return's value."""
    depth = loop_depths(cfg, find_backedges(cfg))
    weights = []
    for src, dst in cfg.edges:
        weight = 10.0 ** min(depth[src], depth[dst])
        if dst == cfg.exit:
            weight += exit_bonus
        weights.append(weight)
    return weights


def plan_events(cfg: Cfg, block_events: Sequence[int], weights: Sequence[float] | None = None,
                *, forced_tree: Collection[EdgeId] = (), naive: bool = False) -> EventPlan:
    """Chord increments and query increments for counting ``block_events``.

    Parameters
    ----------
    cfg : Cfg
    block_events : sequence of int
        Events per block (ENTRY and EXIT may have events too).
    weights : sequence of float, optional
        One per CFG edge, higher means "keep code off this edge"; by default
        :func:`static_event_weights`.
    forced_tree : collection of int
        CFG edges that cannot carry code: put in the tree first.
    naive : bool
        The baseline without a spanning tree: only ``forced_tree`` stays free of
        code, every other edge adds the events of the block it enters (one add per
        block run). Exact too; used to measure what the tree saves.

    Raises
    ------
    CfgError
        If ``forced_tree`` contains a cycle, or the lengths disagree.

    Examples
    --------
    A loop ``1 -> 2 -> 1`` between ENTRY 0 and EXIT 3, with 1 event in block 1 and
    2 in block 2:

    >>> g = Cfg(4, 0, 3, [(0, 1), (1, 2), (2, 1), (1, 3)])
    >>> plan = plan_events(g, [0, 1, 2, 0])
    >>> walk = [0, 1, 2, 1, 2, 3]  # edge ids: blocks 1, 2, 1, 2, 1, EXIT
    >>> plan.count_at(walk), plan.register_after(walk), plan.count_at(walk[:2])
    (7, 7, 3)
    """
    n = cfg.num_blocks
    if len(block_events) != n:
        raise CfgError(f"{len(block_events)} block weights given for {n} blocks")
    if weights is None:
        weights = static_event_weights(cfg)
    if len(weights) != len(cfg.edges):
        raise CfgError(f"{len(weights)} edge weights given for {len(cfg.edges)} edges")
    endpoints = [*cfg.edges, (cfg.exit, cfg.entry)]
    events = [block_events[dst] for _src, dst in cfg.edges] + [block_events[cfg.entry]]
    all_weights = [*weights, float("inf")]
    # Blocks no edge path joins to ENTRY (handlers, unreachable code) get a virtual
    # tree edge from ENTRY, so that every block has a potential; it runs no code.
    sets = _UnionFind(n)
    for src, dst in endpoints:
        sets.union(src, dst)
    for block in range(n):
        if sets.find(block) != sets.find(cfg.entry):
            sets.union(block, cfg.entry)
            endpoints.append((cfg.entry, block))
            events.append(block_events[block])
            all_weights.append(float("inf"))
    virtual = set(range(len(cfg.edges), len(endpoints)))
    excluded = ({e for e in range(len(cfg.edges)) if e not in set(forced_tree)}
                if naive else set())
    tree = maximum_spanning_tree(n, endpoints, all_weights, forced={*virtual, *forced_tree},
                                 excluded=excluded)
    increments, potential = event_increments(n, endpoints, tree, events, cfg.entry)
    # Shift potentials so that the query of ENTRY counts ENTRY's own events (the
    # register starts at 0) and the query of EXIT is 0.
    shift = block_events[cfg.entry]
    query = tuple(p + shift for p in potential)
    assert query[cfg.exit] == 0
    return EventPlan(
        cfg=cfg,
        block_events=tuple(block_events),
        tree=frozenset(e for e in tree if e not in virtual),
        increment={e: inc for e, inc in increments.items() if e < len(cfg.edges)},
        query=query,
    )


def rest_of_block(piece_events: Sequence[int], piece: int) -> int:
    """Events of the pieces after ``piece`` in one block: what a query made while
    ``piece`` runs must subtract, since entering a block counts all of it."""
    return sum(piece_events[piece + 1:])
