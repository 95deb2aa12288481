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
from pathprof.graph import Dag, EdgeKind, regenerate

__all__ = ["Completion", "CutShort", "NextPaths", "complete_basis", "next_paths"]

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
    #: suggested paths (by number) the tests took as far as an exception that ended them
    #: every time: suggested last, once nothing else was found, with the evidence
    cut_short: dict[int, CutShort] = field(default_factory=dict)
    unfound: int = 0

    @property
    def needed(self) -> int:
        """Independent paths missing from the basis."""
        return self.dimension - self.rank

    def cut_short_of(self, path: Path) -> CutShort | None:
        """The evidence that the tests took ``path`` as far as an exception that ended
        it every time (None: they did not, or the path is not one suggested)."""
        return self.cut_short.get(path.id) if isinstance(path.id, int) else None


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


def _entry_ways(space: PathSpace, ways: _Ways, edge_runs: dict[int, int]) -> dict[int, int]:
    """The most-run way into each block reached from the function's entry without a
    dummy edge (a path that starts where a call starts, which a test can take)."""
    dag = space.numbering.dag
    starts = {e for e in dag.out_edges[dag.entry]
              if dag.edges[e].kind is EdgeKind.NORMAL and e in space.edges}
    reached = {dag.entry}
    way_in: dict[int, int] = {}
    for block in dag.topo_order:
        if block == dag.entry:
            continue
        ins = [e for e in dag.in_edges[block] if e in space.edges
               and dag.edges[e].src in reached
               and (dag.edges[e].src != dag.entry or e in starts)]
        if ins:
            reached.add(block)
            way_in[block] = min(ins, key=lambda e: (-edge_runs.get(e, 0), e))
    return way_in


def _prefix(dag: Dag, way_in: dict[int, int], block: int) -> list[int]:
    edges = []
    while block != dag.entry:
        eid = way_in[block]
        edges.append(eid)
        block = dag.edges[eid].src
    return edges[::-1]


def _candidates(space: PathSpace, ran: list[tuple[int, list[int]]], ways: _Ways,
                edge_runs: dict[int, int]) -> Iterator[list[int]]:
    """Paths (as dag edges) to try, easiest to write first: each path that ran, hottest
    first, with one of its decisions taken the other way (ENTRY's choice of where a
    path starts is not a decision a test takes): a path that ran is one a test can
    take, and so, most often, is one that differs from it in one decision; then one
    path through each edge of the space, first from the function's entry (a call),
    then by the most-run ways in and out, which is what makes the basis complete
    (module docstring). (Trying every path from the entry first was worse on
    packaging's suite: an entry path with one flip the source cannot prove
    impossible came before a path that ran with one flip.)"""
    dag = space.numbering.dag

    def flips() -> Iterator[list[int]]:
        for _number, edges in ran:
            for index, eid in enumerate(edges):
                block = dag.edges[eid].src
                if block == dag.entry:
                    continue
                for other in dag.out_edges[block]:
                    if other != eid and other in space.edges:
                        yield [*edges[:index], other, *ways.suffix(dag.edges[other].dst)]

    order = {block: position for position, block in enumerate(dag.topo_order)}
    by_order = sorted(space.edges, key=lambda e: (order[dag.edges[e].src], e))
    entry_ways = _entry_ways(space, ways, edge_runs)
    yield from flips()
    for eid in by_order:
        src = dag.edges[eid].src
        if src == dag.entry and dag.edges[eid].kind is EdgeKind.NORMAL:
            yield [eid, *ways.suffix(dag.edges[eid].dst)]
        elif src in entry_ways:
            yield [*_prefix(dag, entry_ways, src), eid, *ways.suffix(dag.edges[eid].dst)]
    for eid in by_order:
        yield [*ways.prefix(dag.edges[eid].src), eid, *ways.suffix(dag.edges[eid].dst)]


@dataclass
class Completion:
    """Path numbers that complete a basis: ``rank`` of the paths that ran, the
    ``added`` paths (each raised it by one), the ``rejected`` ones with why."""

    rank: int
    dimension: int
    added: list[int] = field(default_factory=list)
    rejected: list[tuple[int, object]] = field(default_factory=list)
    #: added paths that were set aside first, and why (the last resort)
    deferred: dict[int, object] = field(default_factory=dict)


def complete_basis(space: PathSpace, ran: Sequence[tuple[int, int]],
                   reject: Callable[[int], object | None] = lambda number: None,
                   limit: int | None = None,
                   defer: Callable[[int], object | None] = lambda number: None
                   ) -> Completion:
    """Missed paths of ``space`` that raise the rank of the paths ``ran`` (``(count,
    number)`` pairs, numbers the space counts) to its dimension, one each, at most
    ``limit``; a path ``reject`` gives a reason for is passed over (the first
    :data:`IMPOSSIBLE_SHOWN` of those are kept with their reason), and one ``defer``
    gives a reason for is tried only once no other path can be found (kept in
    :attr:`Completion.deferred` with its reason if it is taken)."""
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
    set_aside: list[tuple[int, object]] = []

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
        later = defer(number)
        if later is not None:
            set_aside.append((number, later))
            return False
        builder.add(number)
        result.added.append(number)
        return len(result.added) >= wanted

    for edges in _candidates(space, taken, _Ways(space, edge_runs), edge_runs):
        if consider(sum(numbering.val[e] for e in edges)):
            return result
    for number in _search(space, seen):
        if consider(number):
            return result
    for number, why in set_aside:  # nothing better was found for what is left
        if builder.add(number):
            result.added.append(number)
            result.deferred[number] = why
            if len(result.added) >= wanted:
                break
    return result


@dataclass(frozen=True)
class CutShort:
    """Why a path is suggested last though the source proves nothing against it: the
    tests took it as far as ``line`` (the start of a block) ``times`` times, and an
    exception cut it there every time (a call that always raises, ``sys.exit``,
    ``self.fail``..., or tests that wanted that exception)."""

    line: int | None
    times: int
    #: the block's last line (the exception came from one of ``line`` .. ``end_line``)
    end_line: int | None = None

    def __str__(self) -> str:
        if self.line is None:
            where = "a block with no line"
        elif self.end_line is None or self.end_line == self.line:
            where = f"line {self.line}"
        else:
            where = f"lines {self.line}-{self.end_line}"
        times = "once" if self.times == 1 else f"{self.times:,} times"
        each = "then" if self.times == 1 else "each time"
        return (f"the tests ran this path as far as {where} {times}, and an exception "
                f"ended it there {each}")


def _cut_evidence(fn: FunctionProfile, space: PathSpace, ran: Sequence[tuple[int, int]]
                  ) -> dict[tuple[int, int], int]:
    """``(block, prefix value)`` -> times, for each prefix the tests cut short by an
    exception at that block and never took further (Ball 1994's prefix values, as
    :func:`~pathprof.graph.regenerate_prefix` reads the data file's cut keys)."""
    cut: dict[tuple[int, int], int] = {}
    for at, count in fn.cuts.items():
        if count:
            cut[at] = cut.get(at, 0) + count
    if not cut:
        return cut
    dag = space.numbering.dag
    val = space.numbering.val
    for _count, number in ran:
        total = 0
        for eid in regenerate(space.numbering, number).edges:
            total += val[eid]
            cut.pop((dag.edges[eid].dst, total), None)
    return cut


def next_paths(fn: FunctionProfile, space: PathSpace, facts: FunctionFacts | None = None,
               limit: int | None = None) -> NextPaths:
    """The missed paths of ``fn`` that complete its basis within ``space`` (at most
    ``limit`` of them), paths proved infeasible by ``facts`` left out; paths the tests
    already took as far as an exception that cut them short every time
    (:class:`CutShort`) are suggested last, only where nothing else was found."""
    numbering = space.numbering
    ran = [(count, number) for number, count in fn.counts.items()
           if count and space.counts(number)]
    # a generator's consumer ends it by closing it, and an exception a handler of
    # the function's own catches need not end a call: no evidence from those cuts
    cut = {} if facts is not None and facts.suspends else _cut_evidence(fn, space, ran)
    guarded = facts.guarded_lines if facts is not None else frozenset()
    dag, val = numbering.dag, numbering.val

    def decoded(number: int) -> Path:
        return decode_paths(fn.meta, {number: 0}, {}, numbering=numbering)[0]

    def cut_short(number: int) -> CutShort | None:
        total = 0
        for eid in regenerate(numbering, number).edges:
            total += val[eid]
            times = cut.get((dag.edges[eid].dst, total))
            if times:
                span = fn.block_lines(dag.edges[eid].dst)
                if span is not None and any(line in guarded
                                            for line in range(span[0], span[1] + 1)):
                    return None
                return CutShort(span[0] if span else None, times,
                                span[1] if span else None)
        return None

    def reject(number: int) -> Contradiction | None:
        return None if facts is None else infeasible(fn, decoded(number), facts)

    def defer(number: int) -> CutShort | None:
        return cut_short(number) if cut else None

    found = complete_basis(space, ran, reject, limit, defer)
    result = NextPaths(found.rank, found.dimension, [decoded(n) for n in found.added],
                       [(decoded(n), why) for n, why in found.rejected],  # type: ignore[misc]
                       cut_short={n: why for n, why in found.deferred.items()
                                  if isinstance(why, CutShort)})
    wanted = result.needed if limit is None else min(limit, result.needed)
    if len(result.paths) < wanted:  # the search ran out: no feasible path was found
        result.unfound = result.needed - len(result.paths)
    return result


def _search(space: PathSpace, seen: Iterable[int]) -> Iterator[int]:
    """The last round: missed paths shortest first, at most :data:`SEARCH_BUDGET`."""
    yield from space.missed(set(seen), SEARCH_BUDGET)
