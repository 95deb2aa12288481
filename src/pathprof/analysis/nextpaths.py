"""The next tests to write: missed paths that would complete a function's basis.

Basis path coverage (:mod:`pathprof.analysis.basis`) says how many linearly
independent paths of a function ran out of the dimension of the space its paths
span. What it leaves is ``dimension - rank`` directions no test has taken, and any
missed path that lies outside the space the run paths span adds exactly one. This
module picks such paths, one per missing dimension, as tests are easiest to write
from: a path that ran, hottest first, with one decision taken the other way and
the most-run way on from there (McCabe's "baseline method", Watson and McCabe,
NIST SP 500-235, 1996, §5.1, started from the paths the tests already run).

Those alone need not complete the basis, so a second round takes, for every edge of
the DAG, the path that reaches it by the most-run way in and leaves it by the
most-run way out. That round always completes it: with the way out fixed per block
(a tree into EXIT), the path through an edge less the path through its block's own
tree edge is the edge's fundamental cycle, and those cycles with one path span the
whole space (Watson and McCabe §2.3; the cycle space of the DAG with EXIT -> ENTRY
added). Paths the source proves cannot run (:mod:`pathprof.analysis.feasibility`)
are never suggested; when they stand in the way, a last, bounded round searches the
missed paths shortest first.

Invariant: the suggested paths are missed paths of the space, and adding their edge
vectors to those of the paths that ran raises the rank by exactly their number;
with no path proved infeasible, their number is ``dimension - rank``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from pathprof.analysis.basis import BasisBuilder
from pathprof.analysis.feasibility import Contradiction, FunctionFacts, infeasible
from pathprof.analysis.pathspace import PathSpace
from pathprof.data.profile import FunctionProfile, Path, decode_paths
from pathprof.graph import EdgeKind, regenerate

__all__ = ["Completion", "NextPaths", "complete_basis", "next_paths"]

#: missed paths the last round looks at before it gives up on a function
SEARCH_BUDGET = 2_000
#: paths proved infeasible kept to show, per function
IMPOSSIBLE_SHOWN = 10


@dataclass
class NextPaths:
    """One function's suggestions: ``paths`` to write tests for (each adds one to the
    rank), ``impossible`` missed paths proved infeasible on the way, and how many
    dimensions are still ``unfound`` (no feasible path was found for them)."""

    rank: int
    dimension: int
    paths: list[Path] = field(default_factory=list)
    impossible: list[tuple[Path, Contradiction]] = field(default_factory=list)
    unfound: int = 0

    @property
    def needed(self) -> int:
        """Independent paths missing from the basis."""
        return self.dimension - self.rank


class _Ways:
    """The most-run way into and out of every block of the space: by edge counts of
    the paths that ran, then by distance (fewest edges), then by edge id."""

    def __init__(self, space: PathSpace, edge_runs: dict[int, int]) -> None:
        dag = space.numbering.dag
        self.dag = dag
        allowed = space.edges
        far = len(dag.edges) + 1
        to_exit = [far] * dag.num_blocks
        to_exit[dag.exit] = 0
        self.way_out: dict[int, int] = {}
        for block in reversed(dag.topo_order):
            outs = [e for e in dag.out_edges[block] if e in allowed]
            if block == dag.exit or not outs:
                continue
            to_exit[block] = min(to_exit[dag.edges[e].dst] for e in outs) + 1
            self.way_out[block] = min(outs, key=lambda e: (-edge_runs.get(e, 0),
                                                           to_exit[dag.edges[e].dst], e))
        from_entry = [far] * dag.num_blocks
        from_entry[dag.entry] = 0
        self.way_in: dict[int, int] = {}
        for block in dag.topo_order:
            ins = [e for e in dag.in_edges[block] if e in allowed]
            if block == dag.entry or not ins:
                continue
            from_entry[block] = min(from_entry[dag.edges[e].src] for e in ins) + 1
            self.way_in[block] = min(ins, key=lambda e: (-edge_runs.get(e, 0),
                                                         from_entry[dag.edges[e].src], e))

    def suffix(self, block: int) -> list[int]:
        edges = []
        while block != self.dag.exit:
            eid = self.way_out[block]
            edges.append(eid)
            block = self.dag.edges[eid].dst
        return edges

    def prefix(self, block: int) -> list[int]:
        edges = []
        while block != self.dag.entry:
            eid = self.way_in[block]
            edges.append(eid)
            block = self.dag.edges[eid].src
        return edges[::-1]


def _candidates(space: PathSpace, ran: list[tuple[int, list[int]]], ways: _Ways
                ) -> Iterator[list[int]]:
    """Paths (as dag edges) to try, easiest to write first: each path that ran with one
    of its decisions taken the other way (ENTRY's choice of where a path starts is not
    a decision a test takes), then one path through each edge of the space, the
    paths from the function's entry first."""
    dag = space.numbering.dag
    for _number, edges in ran:
        for index, eid in enumerate(edges):
            block = dag.edges[eid].src
            if block == dag.entry:
                continue
            for other in dag.out_edges[block]:
                if other != eid and other in space.edges:
                    yield [*edges[:index], other, *ways.suffix(dag.edges[other].dst)]
    order = {block: position for position, block in enumerate(dag.topo_order)}
    every = [(ways.prefix(dag.edges[e].src), e) for e in space.edges]
    every.sort(key=lambda c: (dag.edges[(c[0] or [c[1]])[0]].kind is not EdgeKind.NORMAL,
                              order[dag.edges[c[1]].src], c[1]))
    for prefix, eid in every:
        yield [*prefix, eid, *ways.suffix(dag.edges[eid].dst)]


@dataclass
class Completion:
    """Path numbers that complete a basis: ``rank`` of the paths that ran, the
    ``added`` paths (each raised it by one), the ``rejected`` ones with why."""

    rank: int
    dimension: int
    added: list[int] = field(default_factory=list)
    rejected: list[tuple[int, object]] = field(default_factory=list)


def complete_basis(space: PathSpace, ran: Sequence[tuple[int, int]],
                   reject: Callable[[int], object | None] = lambda number: None,
                   limit: int | None = None) -> Completion:
    """Missed paths of ``space`` that raise the rank of the paths ``ran`` (``(count,
    number)`` pairs, numbers the space counts) to its dimension, one each, at most
    ``limit``; a path ``reject`` gives a reason for is passed over (the first
    :data:`IMPOSSIBLE_SHOWN` of those are kept with their reason)."""
    numbering = space.numbering
    builder = BasisBuilder(numbering, space.dimension)
    taken: list[tuple[int, list[int]]] = []
    edge_runs: dict[int, int] = {}
    for count, number in sorted(ran, key=lambda c: (-c[0], c[1])):
        edges = list(regenerate(numbering, number).edges)
        taken.append((number, edges))
        for eid in edges:
            edge_runs[eid] = edge_runs.get(eid, 0) + count
        builder.add(number)
    result = Completion(builder.rank, space.dimension)
    needed = space.dimension - builder.rank
    wanted = needed if limit is None else min(limit, needed)
    if wanted <= 0 or not space.edges:
        return result
    seen = {number for _count, number in ran}

    def consider(number: int) -> bool:
        """Try one missed path; whether enough have been found."""
        if number in seen:
            return False
        seen.add(number)
        if builder.spans(number):
            return False
        why = reject(number)
        if why is not None:
            if len(result.rejected) < IMPOSSIBLE_SHOWN:
                result.rejected.append((number, why))
            return False
        builder.add(number)
        result.added.append(number)
        return len(result.added) >= wanted

    for edges in _candidates(space, taken, _Ways(space, edge_runs)):
        if consider(sum(numbering.val[e] for e in edges)):
            return result
    for number in _search(space, seen):
        if consider(number):
            return result
    return result


def next_paths(fn: FunctionProfile, space: PathSpace, facts: FunctionFacts | None = None,
               limit: int | None = None) -> NextPaths:
    """The missed paths of ``fn`` that complete its basis within ``space`` (at most
    ``limit`` of them), paths proved infeasible by ``facts`` left out."""
    numbering = space.numbering
    ran = [(count, int(key)) for key, count in fn.counts.items()
           if count and space.counts(int(key))]

    def decoded(number: int) -> Path:
        return decode_paths(fn.meta, {str(number): 0}, {}, numbering=numbering)[0]

    def reject(number: int) -> Contradiction | None:
        return None if facts is None else infeasible(fn, decoded(number), facts)

    found = complete_basis(space, ran, reject, limit)
    result = NextPaths(found.rank, found.dimension, [decoded(n) for n in found.added],
                       [(decoded(n), why) for n, why in found.rejected])  # type: ignore[misc]
    wanted = result.needed if limit is None else min(limit, result.needed)
    if len(result.paths) < wanted:  # the search ran out: no feasible path was found
        result.unfound = result.needed - len(result.paths)
    return result


def _search(space: PathSpace, seen: Iterable[int]) -> Iterator[int]:
    """The last round: missed paths shortest first, at most :data:`SEARCH_BUDGET`."""
    yield from space.missed(set(seen), SEARCH_BUDGET)
