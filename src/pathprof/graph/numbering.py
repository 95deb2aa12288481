"""Ball-Larus path numbering and path regeneration.

Implements Ball-Larus 1996, §3.1 ("Compactly representing paths with sums") and
§3.4 ("Regenerating a path"), plus the decoding of a path cut short (a prefix),
which Python needs when an exception ends a path inside a block.
"""

from __future__ import annotations

import enum
import heapq
from bisect import bisect_right
from collections.abc import Callable, Container, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from pathprof.exceptions import CfgError
from pathprof.graph.cfg import Dag, EdgeKind
from pathprof.types import BlockId, DagEdgeId, PathId

__all__ = [
    "AcyclicPath",
    "Numbering",
    "PathEnd",
    "PathStart",
    "iter_paths",
    "number_paths",
    "path_number",
    "paths_shortest_first",
    "regenerate",
    "regenerate_prefix",
]


class PathStart(enum.Enum):
    """Where an acyclic path begins."""

    ENTRY = "entry"  #: at the function's entry
    LOOP_HEADER = "loop-header"  #: at a loop header, after a backedge
    RESTART = "restart"  #: at an exception handler (or other restart block)


class PathEnd(enum.Enum):
    """How an acyclic path ends."""

    EXIT = "exit"  #: the function returned
    BACKEDGE = "backedge"  #: a loop backedge was taken
    CUT = "cut"  #: cut short inside a block (an exception left it)


@dataclass(frozen=True)
class Numbering:
    """Edge values and path counts of a DAG (Ball-Larus 1996, §3.1).

    Attributes
    ----------
    dag : Dag
    val : tuple of int
        ``val[e]`` for every dag edge.
    num_paths : tuple of int
        Number of paths from each block to EXIT (0 for unreachable blocks).

    Invariant: the ``val`` sums of the ``num_paths[entry]`` ENTRY -> EXIT paths
    are distinct and are exactly ``0 .. num_paths[entry] - 1``.
    """

    dag: Dag
    val: tuple[int, ...]
    num_paths: tuple[int, ...]

    @property
    def total(self) -> int:
        """Number of acyclic paths: ``num_paths[entry]``."""
        return self.num_paths[self.dag.entry]

    @cached_property
    def _out_vals(self) -> tuple[tuple[tuple[int, ...], tuple[DagEdgeId, ...]], ...]:
        """Per block: out-edges sorted by val (for regeneration by bisection)."""
        result = []
        for block in range(self.dag.num_blocks):
            pairs = sorted((self.val[e], e) for e in self.dag.out_edges[block])
            result.append((tuple(v for v, _ in pairs), tuple(e for _, e in pairs)))
        return tuple(result)


def number_paths(
    dag: Dag, *, edge_key: Callable[[DagEdgeId], Any] | None = None
) -> Numbering:
    """Assign Ball-Larus values to the edges of a DAG.

    Visits blocks in reverse topological order. ``NumPaths(EXIT) = 1``; for a block
    ``v`` with out-edges ``e1..en`` (in dag-edge order, or sorted by ``edge_key``),
    ``Val(ei) = NumPaths(dst e1) + ... + NumPaths(dst e(i-1))`` and ``NumPaths(v)``
    is the sum over all out-edges.

    Parameters
    ----------
    dag : Dag
    edge_key : callable, optional
        Sort key for the out-edges of a block; the first edge gets value 0.

    Returns
    -------
    Numbering
        Invariant: every ENTRY -> EXIT path has a distinct value sum, and the sums
        are exactly ``range(num_paths[entry])`` (Ball-Larus 1996, Theorem 1).

    Examples
    --------
    The graph of Ball-Larus 1996, Figure 2 (A=0 ... F=5):

    >>> from pathprof.graph.cfg import Cfg, to_dag
    >>> A, B, C, D, E, F = range(6)
    >>> g = Cfg(6, A, F, [(A, C), (A, B), (B, C), (B, D), (C, D), (D, F), (D, E), (E, F)])
    >>> n = number_paths(to_dag(g))
    >>> n.total, n.val
    (6, (0, 2, 0, 2, 0, 0, 1, 0))

    Notes
    -----
    Python integers do not overflow, so no path truncation is needed however many
    paths a function has (Ball-Larus 1996, §5.3 truncates at 32 bits).

    References
    ----------
    T. Ball and J. R. Larus, "Efficient Path Profiling", MICRO-29, 1996, §3.1.
    """
    val = [0] * len(dag.edges)
    num_paths = [0] * dag.num_blocks
    num_paths[dag.exit] = 1
    for block in reversed(dag.topo_order):
        if block == dag.exit:
            continue
        out = dag.out_edges[block]
        if edge_key is not None:
            out = tuple(sorted(out, key=edge_key))
        total = 0
        for eid in out:
            val[eid] = total
            total += num_paths[dag.edges[eid].dst]
        if total == 0:
            raise CfgError(f"block {block} has no path to EXIT")
        num_paths[block] = total
    return Numbering(dag=dag, val=tuple(val), num_paths=tuple(num_paths))


def path_number(numbering: Numbering, edges: Iterable[DagEdgeId]) -> PathId:
    """Sum of ``val`` along a sequence of dag edges."""
    return sum(numbering.val[e] for e in edges)


@dataclass(frozen=True)
class AcyclicPath:
    """A path regenerated from its number.

    ``edges`` are dag edge ids from ENTRY (or the first dummy edge) onward;
    ``blocks`` are the blocks the path executes, in order: ENTRY only when the
    path starts there, EXIT only when it ends there by a NORMAL edge.
    """

    number: PathId
    edges: tuple[DagEdgeId, ...]
    blocks: tuple[BlockId, ...]
    start: PathStart
    end: PathEnd


_START_OF = {
    EdgeKind.NORMAL: PathStart.ENTRY,
    EdgeKind.LOOP_START: PathStart.LOOP_HEADER,
    EdgeKind.RESTART: PathStart.RESTART,
}


def _make_path(
    numbering: Numbering, number: PathId, edges: Sequence[DagEdgeId], end: PathEnd
) -> AcyclicPath:
    dag = numbering.dag
    first = dag.edges[edges[0]] if edges else None
    start = _START_OF[first.kind] if first is not None else PathStart.ENTRY
    blocks: list[BlockId] = [] if start is not PathStart.ENTRY else [dag.entry]
    for eid in edges:
        edge = dag.edges[eid]
        if edge.kind is not EdgeKind.LOOP_END:
            blocks.append(edge.dst)
    return AcyclicPath(
        number=number, edges=tuple(edges), blocks=tuple(blocks), start=start, end=end
    )


def regenerate(numbering: Numbering, number: PathId) -> AcyclicPath:
    """Rebuild the path whose value sum is ``number`` (Ball-Larus 1996, §3.4).

    From ENTRY, repeatedly take the out-edge with the largest value not above the
    remaining number, subtract that value, and continue until EXIT. Dummy edges
    tell how the path started and ended.

    Raises
    ------
    ValueError
        If ``number`` is not in ``range(numbering.total)``.

    Examples
    --------
    >>> from pathprof.graph.cfg import Cfg, to_dag
    >>> g = Cfg(6, 0, 5, [(0, 2), (0, 1), (1, 2), (1, 3), (2, 3), (3, 5), (3, 4), (4, 5)])
    >>> "".join("ABCDEF"[b] for b in regenerate(number_paths(to_dag(g)), 3).blocks)
    'ABCDEF'
    """
    if not 0 <= number < numbering.total:
        raise ValueError(f"path number {number} is not in 0..{numbering.total - 1}")
    dag = numbering.dag
    remaining = number
    block = dag.entry
    edges: list[DagEdgeId] = []
    out_vals = numbering._out_vals
    while block != dag.exit:
        vals, eids = out_vals[block]
        index = bisect_right(vals, remaining) - 1
        eid = eids[index]
        remaining -= vals[index]
        edges.append(eid)
        block = dag.edges[eid].dst
    last = dag.edges[edges[-1]]
    end = PathEnd.BACKEDGE if last.kind is EdgeKind.LOOP_END else PathEnd.EXIT
    return _make_path(numbering, number, edges, end)


def regenerate_prefix(numbering: Numbering, block: BlockId, value: int) -> AcyclicPath:
    """Rebuild a path that was cut short at ``block`` with prefix value ``value``.

    The value sums of the distinct ENTRY -> ``block`` prefixes are distinct (two
    prefixes followed by one suffix would otherwise give two equal path sums).
    The first out-edge of every block has value 0, so the prefix followed by the
    all-first-edges suffix is a complete path numbered ``value``; regenerating it
    and stopping at ``block`` recovers the prefix.

    Raises
    ------
    ValueError
        If no prefix ending at ``block`` has this value.
    """
    if not 0 <= value < numbering.total:
        raise ValueError(f"prefix value {value} at block {block} is not a valid path prefix")
    whole = regenerate(numbering, value)
    dag = numbering.dag
    for i, eid in enumerate(whole.edges):
        edge = dag.edges[eid]
        if edge.kind is not EdgeKind.LOOP_END and edge.dst == block:
            prefix = whole.edges[: i + 1]
            suffix_sum = sum(numbering.val[e] for e in whole.edges[i + 1 :])
            if suffix_sum != 0:
                break
            return _make_path(numbering, value, prefix, PathEnd.CUT)
    if block == dag.entry and whole.start is PathStart.ENTRY and value == 0:
        return _make_path(numbering, value, (), PathEnd.CUT)
    raise ValueError(f"no path prefix ends at block {block} with value {value}")


def iter_paths(numbering: Numbering, limit: int | None = None) -> Iterator[AcyclicPath]:
    """Yield every ENTRY -> EXIT path in increasing number order (at most ``limit``)."""
    count = numbering.total if limit is None else min(limit, numbering.total)
    for number in range(count):
        yield regenerate(numbering, number)


def paths_shortest_first(numbering: Numbering, skip: Container[PathId] = (),
                         limit: int | None = None,
                         allowed: Container[DagEdgeId] | None = None) -> Iterator[PathId]:
    """Yield path numbers in order of path length (dag edges), shortest first.

    Numbers in ``skip`` (the paths that ran) are passed over; at most ``limit``
    numbers are yielded; with ``allowed``, only paths whose every edge it holds.
    Ties in length come in increasing number order. This is
    how a report lists the *missed* paths of a function with more paths than
    anyone could read: best-first search (A*) over the DAG from ENTRY, with the
    exact shortest distance to EXIT as the heuristic, so the k-th path costs
    O(k * length * out-degree) heap operations however many paths there are.

    Invariant: the yielded numbers are distinct, in ``range(numbering.total)``,
    not in ``skip``, and non-decreasing in length; no path of the DAG that is
    shorter than the last yielded one is left out (unless skipped).

    >>> from pathprof.graph.cfg import Cfg, to_dag
    >>> g = Cfg(6, 0, 5, [(0, 2), (0, 1), (1, 2), (1, 3), (2, 3), (3, 5), (3, 4), (4, 5)])
    >>> list(paths_shortest_first(number_paths(to_dag(g)), skip={0}))
    [4, 1, 2, 5, 3]
    """
    dag = numbering.dag
    if limit is not None and limit <= 0:
        return
    # Shortest distance (in edges) from each block to EXIT, by reverse topological order.
    far = len(dag.edges) + 1
    to_exit = [far] * dag.num_blocks
    to_exit[dag.exit] = 0
    for block in reversed(dag.topo_order):
        for eid in dag.out_edges[block]:
            if allowed is None or eid in allowed:
                to_exit[block] = min(to_exit[block], to_exit[dag.edges[eid].dst] + 1)
    # Heap entries: (length bound, partial value sum, edges so far, block). For the same
    # bound, a smaller partial sum is popped first; complete paths end with their number,
    # so ties between complete paths of one length come out in number order.
    heap: list[tuple[int, int, int, BlockId]] = [(to_exit[dag.entry], 0, 0, dag.entry)]
    yielded = 0
    while heap:
        _bound, value, length, block = heapq.heappop(heap)
        if block == dag.exit:
            if value in skip:
                continue
            yield value
            yielded += 1
            if limit is not None and yielded >= limit:
                return
            continue
        for eid in dag.out_edges[block]:
            dst = dag.edges[eid].dst
            if to_exit[dst] < far and (allowed is None or eid in allowed):
                heapq.heappush(heap, (length + 1 + to_exit[dst], value + numbering.val[eid],
                                      length + 1, dst))
