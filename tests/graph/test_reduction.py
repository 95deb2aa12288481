"""Tests for pathprof.graph.reduction: P3's reduced DAG (Afraz, Saha and Kanade 2015,
§3.2) -- diamonds and triangles whose branches are straight-line code collapsed into
single-entry single-exit dummies, repeated to a fixed point, nested conditionals left
alone -- and the helpers partitioning reads it through (``src``/``dst``, ``out_edges``,
``reachable``, ``original_edges``). The property tests check the class invariant: a dag
path less its inner edges is a reduced path, and the dag paths that give one reduced
path are exactly those inside its edges plus the inner edges of the vertices it passes."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pathprof.graph.cfg import Cfg, Dag, to_dag
from pathprof.graph.numbering import number_paths
from pathprof.graph.reduction import ReducedDag, reduced_graph

from .oracle import all_dag_paths
from .strategies import cfgs
from .test_partition import conditional_dags


def reduced_paths(r: ReducedDag) -> list[tuple[int, ...]]:
    """Every ENTRY -> EXIT path of the reduced DAG, as reduced (dag) edge ids, by DFS."""
    found: list[tuple[int, ...]] = []
    stack: list[tuple[int, tuple[int, ...]]] = [(r.entry, ())]
    while stack:
        vertex, edges = stack.pop()
        if vertex == r.exit:
            found.append(edges)
            continue
        for eid in r.out_edges[vertex]:
            stack.append((r.dst(eid), (*edges, eid)))
    return found


def dummies(r: ReducedDag) -> list[int]:
    return [v for v in r.topo_order if r.is_dummy(v)]


# ---------------------------------------------------------------------------
# Shapes worked by hand


def test_a_triangle_becomes_one_dummy_between_its_neighbours() -> None:
    # ENTRY 0 -> a 1; a -> b 2 -> d 3 and a -> d; d -> EXIT 4
    dag = to_dag(Cfg(5, 0, 4, [(0, 1), (1, 2), (1, 3), (2, 3), (3, 4)]))
    r = reduced_graph(dag)
    assert dummies(r) == [5]  # the first id past the dag's blocks
    assert r.members[5] == frozenset({1, 2, 3})
    assert r.inner[5] == frozenset({1, 2, 3})  # a->b, a->d, b->d
    assert r.edges == (0, 4)
    assert r.topo_order == (0, 5, 4)
    assert (r.entry, r.exit) == (0, 4)
    assert {b: r.vertex_of[b] for b in range(5)} == {0: 0, 1: 5, 2: 5, 3: 5, 4: 4}
    assert [(r.src(e), r.dst(e)) for e in r.edges] == [(0, 5), (5, 4)]
    assert r.out_edges == {0: (0,), 5: (4,), 4: ()}


def test_blocks_left_alone_keep_their_ids_and_hold_only_themselves() -> None:
    dag = to_dag(Cfg(4, 0, 3, [(0, 1), (1, 2), (2, 3)]))  # straight-line code only
    r = reduced_graph(dag)
    assert dummies(r) == []
    assert r.edges == (0, 1, 2)
    assert all(r.members[b] == {b} and not r.inner[b] for b in range(4))
    assert not any(r.is_dummy(b) for b in range(4))


def test_a_sequence_of_three_conditionals_collapses_to_one_dummy() -> None:
    # diamond 1{2,3}4, triangle 4{5}6, diamond 6{7,8}9, then EXIT 10
    edges = [(0, 1), (1, 2), (1, 3), (2, 4), (3, 4), (4, 5), (4, 6), (5, 6),
             (6, 7), (6, 8), (7, 9), (8, 9), (9, 10)]
    r = reduced_graph(to_dag(Cfg(11, 0, 10, edges)))
    (dummy,) = dummies(r)
    assert r.members[dummy] == frozenset(range(1, 10))
    assert [(r.src(e), r.dst(e)) for e in r.edges] == [(0, dummy), (dummy, 10)]
    assert len(reduced_paths(r)) == 1  # 2 * 2 * 2 dag paths, one reduced path


def test_a_diamond_from_entry_to_exit_collapses_everything() -> None:
    r = reduced_graph(to_dag(Cfg(4, 0, 3, [(0, 1), (0, 2), (1, 3), (2, 3)])))
    assert r.entry == r.exit == 4
    assert r.edges == ()
    assert r.topo_order == (4,)
    assert r.members[4] == frozenset({0, 1, 2, 3})
    assert r.inner[4] == frozenset({0, 1, 2, 3})
    assert reduced_paths(r) == [()]


def test_a_switch_of_three_ways_is_no_diamond() -> None:
    r = reduced_graph(to_dag(Cfg(6, 0, 5, [(0, 1), (1, 2), (1, 3), (1, 4), (2, 5), (3, 5),
                                           (4, 5)])))
    assert dummies(r) == []


def test_a_branch_through_a_dummy_is_not_straight_line_code() -> None:
    # if a: (if b: x) else: z -- the inner triangle 2{3}4 collapses, the outer if
    # holding it does not
    edges = [(0, 1), (1, 2), (1, 5), (2, 3), (2, 4), (3, 4), (4, 6), (5, 6), (6, 7)]
    r = reduced_graph(to_dag(Cfg(8, 0, 7, edges)))
    assert [r.members[d] for d in dummies(r)] == [frozenset({2, 3, 4})]
    assert len(reduced_paths(r)) == 2


def test_a_loop_whose_body_and_exit_meet_at_the_exit_collapses() -> None:
    # while-loop: 1 -> 2 -> 1 (backedge) and 1 -> 3 -> EXIT 4. In the DAG, 2 ends at
    # EXIT by its LOOP_END dummy: 1{2,3}4 is a diamond, entered by ENTRY's two edges
    dag = to_dag(Cfg(5, 0, 4, [(0, 1), (1, 2), (2, 1), (1, 3), (3, 4)]))
    r = reduced_graph(dag)
    (dummy,) = dummies(r)
    assert r.members[dummy] == frozenset({1, 2, 3, 4})
    assert r.exit == dummy
    kinds = sorted(dag.edges[e].kind.value for e in r.edges)
    assert kinds == ["loop-start", "normal"]


def test_reachable_follows_the_reduced_edges_after_those_given() -> None:
    dag = to_dag(Cfg(5, 0, 4, [(0, 1), (1, 2), (1, 3), (2, 3), (3, 4)]))
    r = reduced_graph(dag)
    edges, vertices = r.reachable([0])
    assert edges == frozenset({0, 4})
    assert vertices == frozenset({5, 4})
    assert r.reachable([]) == (frozenset(), frozenset())
    assert r.reachable([4]) == (frozenset({4}), frozenset({4}))


def test_original_edges_add_the_inner_edges_of_the_vertices_named() -> None:
    dag = to_dag(Cfg(5, 0, 4, [(0, 1), (1, 2), (1, 3), (2, 3), (3, 4)]))
    r = reduced_graph(dag)
    assert r.original_edges([0, 4], [0, 5, 4]) == frozenset(range(5))
    assert r.original_edges([0], []) == frozenset({0})
    assert r.original_edges([], [5]) == frozenset({1, 2, 3})


def test_the_reduction_leaves_the_dag_itself_alone() -> None:
    dag = to_dag(Cfg(5, 0, 4, [(0, 1), (1, 2), (1, 3), (2, 3), (3, 4)]))
    before = (dag.edges, dag.out_edges, dag.in_edges)
    r = reduced_graph(dag)
    assert r.dag is dag
    assert (dag.edges, dag.out_edges, dag.in_edges) == before


# ---------------------------------------------------------------------------
# The invariant, on random graphs


def _checked(dag: Dag) -> None:
    r = reduced_graph(dag)
    every = set(range(len(dag.edges)))
    inner = [e for v in r.topo_order for e in r.inner[v]]
    # reduced and inner edges split the dag's edges; members split its blocks
    assert len(inner) == len(set(inner))
    assert set(inner) | set(r.edges) == every
    assert not set(inner) & set(r.edges)
    assert sorted(b for v in r.topo_order for b in r.members[v]) == sorted(dag.reachable)
    assert set(r.vertex_of) == set(dag.reachable)
    assert r.vertex_of[dag.entry] == r.entry
    assert r.vertex_of[dag.exit] == r.exit
    position = {v: i for i, v in enumerate(r.topo_order)}
    for eid in r.edges:
        assert r.src(eid) != r.dst(eid)  # joins two different vertices
        assert position[r.src(eid)] < position[r.dst(eid)]  # topological
    for vertex in dummies(r):
        # single entry, single exit
        assert len({dag.edges[e].dst for e in r.edges if r.dst(e) == vertex}) <= 1
        assert len({dag.edges[e].src for e in r.edges if r.src(e) == vertex}) <= 1
    reduced = set(reduced_paths(r))
    kept = set(r.edges)
    dag_paths = list(all_dag_paths(dag))
    # every dag path, less its inner edges, is a reduced path, and every reduced path
    # comes from some dag path
    assert {tuple(e for e in path if e in kept) for path in dag_paths} == reduced
    # the dag paths giving one reduced path are exactly those inside its edges plus
    # the inner edges of the vertices it passes
    for path in reduced:
        passed = {r.entry, *(r.dst(e) for e in path)}
        allowed = r.original_edges(path, passed)
        inside = {p for p in dag_paths if set(p) <= allowed}
        giving = {p for p in dag_paths if tuple(e for e in p if e in kept) == path}
        assert inside == giving


@settings(max_examples=50, deadline=None)
@given(st.one_of(cfgs().map(to_dag), conditional_dags()))
def test_reduction_keeps_every_path_in_exactly_its_reduced_path(dag: Dag) -> None:
    if number_paths(dag).total > 300:
        return
    _checked(dag)
