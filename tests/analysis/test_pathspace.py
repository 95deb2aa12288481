"""Tests for pathprof.analysis.pathspace: the paths of a function that coverage counts
-- its Ball-Larus DAG (Ball-Larus 1996, §4) less the paths that run excluded code a run
can avoid -- with how many they are, the dimension of the space they span (checked
against the rank of their edge vectors, by elimination over the rationals), which
recorded numbers count, and the missed ones shortest first. Property tests check the
module's invariant: excluding blocks every run passes (found by networkx) removes
nothing, and excluding more never raises the paths or the dimension."""

from __future__ import annotations

import itertools
import random

import networkx as nx
from hypothesis import given, settings
from hypothesis import strategies as st

from pathprof.analysis.pathspace import PathSpace, path_space
from pathprof.graph import Cfg, Numbering, number_paths, regenerate, to_dag

from ..graph.strategies import cfgs, structured_cfgs
from ..test_basis import edge_vectors, oracle_rank

#: The CFG of
#:
#:     def two(a, b):        # ENTRY 0, EXIT 1
#:         x = 0             # block 2: x = 0; if a
#:         if a:
#:             x += 1        # block 3
#:         if b:             # block 4
#:             x += 2        # block 5
#:         return x          # block 6
#:
#: as the front end builds it: edges 0: 0->2, 1: 2->3, 2: 3->4, 3: 2->4, 4: 4->5,
#: 5: 5->6, 6: 4->6, 7: 6->1 (no backedge, so dag edge ids are the CFG's). Its paths,
#: numbered: 0 = TT (blocks 2 3 4 5 6), 1 = TF (2 3 4 6), 2 = FT (2 4 5 6), 3 = FF (2 4 6).
TWO = Cfg(7, 0, 1, [(0, 2), (2, 3), (3, 4), (2, 4), (4, 5), (5, 6), (4, 6), (6, 1)])


def numbering(cfg: Cfg = TWO) -> Numbering:
    return number_paths(to_dag(cfg))


def blocks_of(n: Numbering, number: int) -> tuple[int, ...]:
    return tuple(b for b in regenerate(n, number).blocks if b not in (0, 1))


def test_the_paths_are_numbered_as_the_comment_says() -> None:
    n = numbering()
    assert [blocks_of(n, k) for k in range(4)] == [
        (2, 3, 4, 5, 6), (2, 3, 4, 6), (2, 4, 5, 6), (2, 4, 6)]


def test_with_nothing_excluded_the_space_is_the_whole_dag() -> None:
    space = path_space(numbering())
    assert space.possible == 4
    # E - N + 2 = 8 edges - 7 blocks + 2
    assert space.dimension == 3
    assert space.edges == frozenset(range(8))
    assert space.removed == frozenset()
    assert not space.excluded
    assert all(space.counts(k) for k in range(4))


def test_an_excluded_branch_loses_the_paths_through_it() -> None:
    # `x += 1  # pragma: no cover`: block 3 is excluded, so the edge into it (1) goes,
    # and with it the edge out of it (2), on no path any more
    space = path_space(numbering(), {3})
    assert space.excluded
    assert space.removed == frozenset({1, 2})
    assert space.edges == frozenset({0, 3, 4, 5, 6, 7})
    assert space.possible == 2  # FT and FF
    assert space.dimension == 6 - 6 + 2
    assert [k for k in range(4) if space.counts(k)] == [2, 3]


def test_code_every_run_runs_counts_in_an_excluded_region_the_rest_goes() -> None:
    # `x = 0` and the whole first `if` excluded (blocks 2 and 3): every run runs block
    # 2, which counts as code; block 3 can be avoided and its paths go, so a's decision
    # no longer counts and b's does
    space = path_space(numbering(), {2, 3})
    assert space.removed == frozenset({1, 2})
    assert space.edges == frozenset({0, 3, 4, 5, 6, 7})
    assert (space.possible, space.dimension) == (2, 2)
    assert [k for k in range(4) if space.counts(k)] == [2, 3]


def test_missed_paths_come_shortest_first_then_by_number() -> None:
    space = path_space(numbering())
    # lengths in dag edges: FF 4, TF 5, FT 5, TT 6
    assert list(space.missed([])) == [3, 1, 2, 0]
    assert list(space.missed([3], limit=2)) == [1, 2]
    assert list(space.missed([0, 1, 2, 3])) == []
    assert list(space.missed([], limit=0)) == []


def test_missed_paths_of_an_excluded_space_are_only_its_own() -> None:
    space = path_space(numbering(), {3})
    assert list(space.missed([])) == [3, 2]
    assert list(space.missed([3, 0])) == [2]


def test_a_loop_counts_the_paths_from_its_header() -> None:
    # while: ENTRY 0 -> 2; 2 -> 3 -> 2 (backedge 2); 2 -> EXIT 1. DAG: 0->2, 2->3,
    # 2->1, 3->1 (loop end), 0->2 (loop start): 4 paths, 5 edges, 4 blocks
    loop = Cfg(4, 0, 1, [(0, 2), (2, 3), (3, 2), (2, 1)])
    space = path_space(numbering(loop))
    assert space.possible == 4
    assert space.dimension == 5 - 4 + 2


MAX_PATHS = 100


@settings(max_examples=50, deadline=None)
@given(cfgs(), st.randoms(use_true_random=False))
def test_a_space_counts_exactly_the_paths_inside_its_edges_and_spans_their_rank(
        g: Cfg, rng: random.Random) -> None:
    n = numbering(g)
    if not 0 < n.total <= MAX_PATHS:
        return
    inner = [b for b in range(g.num_blocks) if b not in (g.entry, g.exit)]
    excluded = {b for b in inner if rng.random() < 0.3}
    space = path_space(n, excluded)
    inside = [k for k in range(n.total) if set(regenerate(n, k).edges) <= space.edges]
    assert [k for k in range(n.total) if space.counts(k)] == inside
    assert space.possible == len(inside)
    assert space.dimension == (oracle_rank(edge_vectors(n, inside)) if inside else 0)
    assert not space.edges & space.removed
    # every kept edge lies on a path the space counts
    assert set().union(*(regenerate(n, k).edges for k in inside)) == space.edges
    assert sorted(space.missed([])) == inside


@settings(max_examples=50, deadline=None)
@given(cfgs())
def test_with_nothing_excluded_possible_is_numpaths_and_dimension_the_rank(g: Cfg) -> None:
    n = numbering(g)
    if not 0 < n.total <= MAX_PATHS:
        return
    space = path_space(n)
    assert space.possible == n.total
    assert space.dimension == oracle_rank(edge_vectors(n, list(range(n.total))))
    assert not space.excluded
    assert all(space.counts(k) for k in range(n.total))


def test_a_space_is_a_value() -> None:
    n = numbering()
    assert path_space(n, {3}) == PathSpace(n, frozenset({0, 3, 4, 5, 6, 7}), 2, 2,
                                           frozenset({1, 2}))


def test_excluding_a_statement_every_path_runs_removes_nothing() -> None:
    # `return x  # pragma: no cover` (block 6): every run returns there, though 4 has
    # another way on (4->5), which leads there too
    space = path_space(numbering(), {6})
    assert (space.possible, space.dimension) == (4, 3)
    assert space.removed == frozenset()
    assert not space.excluded


def test_excluding_the_second_if_keeps_the_first_ones_decision() -> None:
    # the whole `if b:` statement (blocks 4 and 5): every run tests b, so block 4
    # counts; the paths through `x += 2` go, a's decision stays: TF and FF
    space = path_space(numbering(), {4, 5})
    assert (space.possible, space.dimension) == (2, 2)
    assert space.removed == frozenset({4, 5})
    assert [k for k in range(4) if space.counts(k)] == [1, 3]


#: def both(a, b):          # ENTRY 0, EXIT 1
#:     if a:                # block 2
#:         x = 1            # block 3
#:     else:
#:         x = 2            # block 4
#:     if b:                # block 5
#:         x += 1           # block 6
#:     return x             # block 7
BOTH = Cfg(8, 0, 1, [(0, 2), (2, 3), (2, 4), (3, 5), (4, 5), (5, 6), (6, 7), (5, 7), (7, 1)])


def test_an_if_and_else_both_excluded_count_as_one_way_on() -> None:
    n = numbering(BOTH)
    assert n.total == 4
    # either body alone: its paths go, a's decision no longer counts
    for body in (3, 4):
        alone = path_space(n, {body})
        assert (alone.possible, alone.dimension) == (2, 2)
    # both: paths could only differ in excluded code; the first way on (2->3) stands
    # for both, b's decision still counts
    both = path_space(n, {3, 4})
    assert (both.possible, both.dimension) == (2, 2)
    assert both.removed == frozenset({2, 4})
    assert all(3 in regenerate(n, k).blocks for k in range(4) if both.counts(k))


def test_excluded_bodies_with_decisions_of_their_own_leave_no_path_there() -> None:
    # if a: (if c: x = 1) else: x = 2; then return: every run passes excluded code
    # (3: `if c`, 4: `x = 1`, 5: `x = 2`) and no one way on stands for the others
    g = Cfg(7, 0, 1, [(0, 2), (2, 3), (3, 4), (4, 6), (3, 6), (2, 5), (5, 6), (6, 1)])
    space = path_space(numbering(g), {3, 4, 5})
    assert (space.possible, space.dimension) == (0, 0)
    assert space.edges == frozenset()


#: def loop(items):          # ENTRY 0, EXIT 1
#:     n = 0                 # block 2 (+ the iterable)
#:     for x in items:       # block 3: next item
#:         n += x            # block 4 -> 3 (the backedge)
#:     return n              # block 5
LOOP = Cfg(6, 0, 1, [(0, 2), (2, 3), (3, 4), (4, 3), (3, 5), (5, 1)])


def test_after_a_loop_the_code_every_run_runs_removes_nothing() -> None:
    # the loop's turn (3 4, ended by the backedge) does not pass `return n`, but
    # every run does
    n = numbering(LOOP)
    space = path_space(n, {5})
    assert (space.possible, space.dimension) == (n.total, path_space(n).dimension)
    assert space.removed == frozenset()


def test_an_excluded_loop_body_takes_the_paths_that_start_after_it() -> None:
    # the body (4) excluded: the turn and the path that starts at the header after it
    # (ENTRY -> 3 -> 5, only run after the body ran) go; the loop not entered stays
    n = numbering(LOOP)
    assert n.total == 4
    space = path_space(n, {4})
    assert (space.possible, space.dimension) == (1, 1)
    assert [blocks_of(n, k) for k in range(n.total) if space.counts(k)] == [(2, 3, 5)]


def test_the_break_that_is_a_while_trues_only_way_out_removes_nothing() -> None:
    # while True: (header 2) if c: (3) break (4); n += 1 (5 -> 2); return n (6):
    # `break  # pragma: no cover` is run by every run that returns
    g = Cfg(7, 0, 1, [(0, 2), (2, 3), (3, 4), (3, 5), (5, 2), (4, 6), (6, 1)])
    n = numbering(g)
    space = path_space(n, {4})
    assert (space.possible, space.dimension) == (n.total, path_space(n).dimension)
    assert space.removed == frozenset()


def test_a_loop_no_edge_leaves_ends_at_its_backedge() -> None:
    # def serve(): setup() (2); while True: (3) handle() (4 -> 3): the body is
    # run by every run (none returns), so excluding it removes nothing
    g = Cfg(5, 0, 1, [(0, 2), (2, 3), (3, 4), (4, 3)])
    n = numbering(g)
    space = path_space(n, {4})
    assert (space.possible, space.dimension) == (n.total, path_space(n).dimension) == (2, 2)


def test_excluding_more_never_raises_the_paths_or_the_dimension() -> None:
    # ENTRY 0 -> 2 -> 3; 3 -> 5 -> 6 (a while loop: 6 -> 8 -> 9 -> 6, 6 -> 7) -> 4,
    # and 3 -> 4; 4 -> EXIT 1
    loop = Cfg(10, 0, 1, [(0, 2), (2, 3), (3, 5), (5, 6), (6, 8), (8, 9), (9, 6), (6, 7),
                          (7, 4), (3, 4), (4, 1)])
    n = numbering(loop)
    fewer = path_space(n, {2, 3, 4, 5, 8, 9})
    more = path_space(n, {2, 3, 4, 5, 6, 7, 8, 9})
    assert more.possible <= fewer.possible
    assert more.dimension <= fewer.dimension
    # 2, 3 and 4 are run by every run; the loop is reached only through 5: 2 3 4
    assert (fewer.possible, fewer.dimension) == (more.possible, more.dimension) == (1, 1)


def _unavoidable(g: Cfg) -> list[int]:
    """The blocks every walk of ``g`` from ENTRY to EXIT passes (networkx)."""
    graph = nx.MultiDiGraph()
    graph.add_nodes_from(range(g.num_blocks))
    graph.add_edges_from(g.edges)
    return [b for b in range(g.num_blocks)
            if b not in (g.entry, g.exit) and nx.has_path(graph, g.entry, b)
            and not nx.has_path(graph.subgraph(set(graph) - {b}), g.entry, g.exit)]


@settings(max_examples=50, deadline=None)
@given(structured_cfgs(), st.randoms(use_true_random=False))
def test_excluding_blocks_every_run_passes_removes_nothing(g: Cfg, rng: random.Random
                                                           ) -> None:
    n = numbering(g)
    if not 0 < n.total <= MAX_PATHS:
        return
    excluded = {b for b in _unavoidable(g) if rng.random() < 0.7}
    space, whole = path_space(n, excluded), path_space(n)
    assert (space.possible, space.dimension) == (whole.possible, whole.dimension)
    assert space.removed == frozenset()
    assert space.edges == whole.edges


@settings(max_examples=50, deadline=None)
@given(structured_cfgs(), st.randoms(use_true_random=False))
def test_excluding_more_never_raises_either_figure(g: Cfg, rng: random.Random) -> None:
    n = numbering(g)
    if not 0 < n.total <= MAX_PATHS:
        return
    inner = [b for b in range(g.num_blocks) if b not in (g.entry, g.exit)]
    fewer = {b for b in inner if rng.random() < 0.3}
    more = fewer | {b for b in inner if rng.random() < 0.3}
    spaces = [path_space(n, blocks) for blocks in ((), fewer, more, inner)]
    for wider, narrower in itertools.pairwise(spaces):
        assert narrower.possible <= wider.possible
        assert narrower.dimension <= wider.dimension
