"""Tests for pathprof.graph.placement: spanning tree, increments, probe plans."""

from __future__ import annotations

import random

import networkx as nx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pathprof.exceptions import CfgError
from pathprof.graph import (
    Cfg,
    Counted,
    Cut,
    EdgeKind,
    ProbeOp,
    event_increments,
    maximum_spanning_tree,
    naive_plan,
    number_paths,
    path_number,
    place,
    plan_probes,
    regenerate,
    regenerate_prefix,
    to_dag,
)

from .oracle import all_dag_paths
from .strategies import Walk, cfgs, random_walk
from .test_numbering import BL_FIGURE_2, spell


def test_spanning_tree_prefers_heavy_edges_and_honours_constraints() -> None:
    endpoints = [(0, 1), (1, 2), (0, 2), (2, 3), (1, 3)]
    weights = [5, 1, 4, 2, 3]
    assert maximum_spanning_tree(4, endpoints, weights) == {0, 2, 4}
    assert maximum_spanning_tree(4, endpoints, weights, forced={1}) == {0, 1, 4}
    assert maximum_spanning_tree(4, endpoints, weights, excluded={0}) == {2, 3, 4}


def test_forced_cycle_is_an_error() -> None:
    with pytest.raises(CfgError, match="form a cycle"):
        maximum_spanning_tree(3, [(0, 1), (1, 2), (2, 0)], [1, 1, 1], forced={0, 1, 2})
    with pytest.raises(CfgError, match="both forced into and excluded"):
        maximum_spanning_tree(3, [(0, 1)], [1], forced={0}, excluded={0})


@given(st.data())
def test_spanning_tree_weight_matches_networkx(data: st.DataObject) -> None:
    n = data.draw(st.integers(2, 9))
    endpoints = data.draw(
        st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), min_size=1, max_size=25)
    )
    weights = data.draw(st.lists(st.integers(0, 50), min_size=len(endpoints),
                                 max_size=len(endpoints)))
    tree = maximum_spanning_tree(n, endpoints, weights)
    graph = nx.MultiGraph()
    graph.add_nodes_from(range(n))
    for eid, (a, b) in enumerate(endpoints):
        graph.add_edge(a, b, key=eid, weight=weights[eid])
    expected = nx.maximum_spanning_tree(graph)
    assert sum(weights[e] for e in tree) == expected.size(weight="weight")
    forest = nx.Graph([endpoints[e] for e in tree])
    assert nx.is_forest(forest) if tree else True
    assert len(tree) == n - nx.number_connected_components(graph)


def test_event_increments_on_a_diamond() -> None:
    # Diamond 0 -> 1 -> 3 and 0 -> 2 -> 3 closed by EXIT -> ENTRY (3 -> 0), as in
    # Ball 1994's example: events on edges, the tree {3->0, 0->1, 2->3}.
    endpoints = [(0, 1), (0, 2), (1, 3), (2, 3), (3, 0)]
    events = [1, 10, 100, 1000, 0]
    increments, phi = event_increments(4, endpoints, {4, 0, 3}, events, 0)
    assert phi == [0, 1, -1000, 0]
    # Each chord's increment is the signed event sum around its fundamental cycle.
    assert increments == {1: 10 + 1000, 2: 1 + 100}
    # Each complete path's chord increments sum to its events.
    assert increments[2] == 1 + 100
    assert increments[1] == 10 + 1000
    # Query increment: after the prefix 0 -> 2 the counter holds 1010; adding
    # phi[2] gives the 10 events really executed.
    assert increments[1] + phi[2] == 10


def test_ball_larus_figure_2_plan() -> None:
    numbering = number_paths(to_dag(BL_FIGURE_2))
    dag = numbering.dag
    plan = plan_probes(place(numbering))
    for number in range(6):
        path = regenerate(numbering, number)
        counted = plan.simulate([dag.edges[e].cfg_edge for e in path.edges])
        assert counted == [Counted(number)], spell(path.blocks)
    shown = {spell((dag.edges[e].src, dag.edges[e].dst)): str(p) for e, p in plan.probes.items()}
    # With all weights equal, the edges into EXIT (which count anyway) become chords.
    assert shown == {
        "AC": "r = 0",
        "BC": "r = 2",
        "BD": "r = 0",
        "CD": "r -= 4",
        "DF": "count[r + 4] += 1",
        "EF": "count[r + 5] += 1",
    }
    naive = naive_plan(numbering)
    assert (plan.static_count(), naive.static_count()) == (6, 6)
    # Executed probes summed over the six paths: 16 against the naive plan's 21
    # (which sets r = 0 on entry and adds Val on A->B, B->D and D->E).
    paths = [regenerate(numbering, n) for n in range(6)]
    assert sum(plan.dynamic_count(p) for p in paths) == 16
    assert sum(naive.dynamic_count(p) for p in paths) == 21


def test_backedge_probe_is_count_then_set() -> None:
    g = Cfg(4, 0, 3, [(0, 1), (1, 2), (2, 1), (1, 3)])
    plan = plan_probes(place(number_paths(to_dag(g))))
    probes = plan.cfg_edge_probes(2)
    assert [p.op for p in probes] in (
        [ProbeOp.COUNT, ProbeOp.SET],
        [ProbeOp.COUNT_CONST, ProbeOp.SET],
    )


def test_profile_guided_weights_keep_the_hot_edge_free() -> None:
    numbering = number_paths(to_dag(BL_FIGURE_2))
    dag = numbering.dag
    hot = dag.normal_edges[6]  # D -> E
    weights = [1.0] * len(dag.edges)
    weights[hot] = 1000.0
    assert hot in place(numbering, weights).tree
    weights[hot] = 0.0
    forced = place(numbering, weights, forced_tree=[hot])
    assert hot in forced.tree


def check_walk(plan_numbering, plan, walk: Walk) -> None:
    """The plan records exactly the walk's acyclic paths, cut ones included."""
    numbering = plan_numbering
    recorded = plan.simulate(walk.steps)
    assert len(recorded) == len(walk.segments)
    for record, segment in zip(recorded, walk.segments, strict=True):
        if segment.end == "cut":
            assert record.cut_at == segment.blocks[-1]
            path = regenerate_prefix(numbering, record.cut_at, record.value)
        else:
            assert record.cut_at is None
            path = regenerate(numbering, record.value)
        assert path.blocks == segment.blocks
        assert path.start.value == segment.start
        assert path.end.value == segment.end


@given(cfgs(), st.randoms(use_true_random=False))
def test_probe_plans_record_exactly_the_walked_paths(g: Cfg, rng: random.Random) -> None:
    numbering = number_paths(to_dag(g))
    placement = place(numbering)
    plans = [plan_probes(placement), naive_plan(numbering)]
    for _ in range(5):
        walk = random_walk(g, rng)
        for plan in plans:
            check_walk(numbering, plan, walk)


@given(cfgs(), st.randoms(use_true_random=False))
def test_moved_counts_are_exact_on_walks_without_exceptions(g: Cfg, rng: random.Random) -> None:
    """Moving counts before the exit (the paper's optimization) is exact only when
    no exception can cut a path between the count and EXIT."""
    numbering = number_paths(to_dag(g))
    weights = [rng.random() for _ in numbering.dag.edges]
    plan = plan_probes(place(numbering, weights), move_counts=True)
    for _ in range(5):
        walk = random_walk(g, rng, cut_chance=0.0)
        if all(s.end != "cut" for s in walk.segments):
            check_walk(numbering, plan, walk)


def test_moved_count_runs_before_an_exception_can_cut_the_path() -> None:
    """Why the Python front end keeps counts at the exit: with moved counts, an
    exception after the count records the path twice (complete and cut)."""
    g = Cfg(5, 0, 4, [(0, 1), (0, 2), (1, 3), (2, 3), (3, 4)])
    numbering = number_paths(to_dag(g))
    weights = [1.0, 1.0, 1.0, 1.0, 10.0]  # keep 3 -> EXIT in the tree so the count can move
    moved = plan_probes(place(numbering, weights), move_counts=True)
    exact = plan_probes(place(numbering, weights))
    doubled = 0
    for walk, blocks in (([0, 2, Cut(3)], (0, 1, 3)), ([1, 3, Cut(3)], (0, 2, 3))):
        (record,) = exact.simulate(walk)
        assert regenerate_prefix(numbering, 3, record.value).blocks == blocks
        doubled += len(moved.simulate(walk)) == 2
    assert doubled >= 1


@given(cfgs(), st.randoms(use_true_random=False))
def test_random_weights_give_equally_exact_plans(g: Cfg, rng: random.Random) -> None:
    numbering = number_paths(to_dag(g))
    weights = [rng.random() for _ in numbering.dag.edges]
    plan = plan_probes(place(numbering, weights))
    for _ in range(3):
        check_walk(numbering, plan, random_walk(g, rng))


@given(cfgs())
def test_chord_increments_sum_to_the_path_number(g: Cfg) -> None:
    dag = to_dag(g)
    numbering = number_paths(dag)
    placement = place(numbering)
    chords = set(range(len(dag.edges))) - placement.tree
    assert chords == set(placement.increment)
    assert len(chords) == len(dag.edges) + 1 - (len(dag.reachable) - 1)
    for count, edges in enumerate(all_dag_paths(dag, limit=10**9)):
        if count > 2_000:
            break
        assert sum(placement.increment.get(e, 0) for e in edges) == path_number(numbering, edges)


@given(cfgs())
def test_query_increments_recover_every_prefix_value(g: Cfg) -> None:
    dag = to_dag(g)
    numbering = number_paths(dag)
    placement = place(numbering)
    for count, edges in enumerate(all_dag_paths(dag, limit=10**9)):
        if count > 500:
            break
        running = 0
        for i, eid in enumerate(edges):
            running += placement.increment.get(eid, 0)
            block = dag.edges[eid].dst
            assert running + placement.query[block] == path_number(numbering, edges[: i + 1])


@given(cfgs())
def test_plan_shapes(g: Cfg) -> None:
    """Counts sit exactly on the edges into EXIT; dummy starts always set."""
    dag = to_dag(g)
    plan = plan_probes(place(number_paths(dag)))
    for eid, edge in enumerate(dag.edges):
        probe = plan.probes.get(eid)
        if edge.dst == dag.exit:
            assert probe is not None
            assert probe.op in (ProbeOp.COUNT, ProbeOp.COUNT_CONST)
        elif edge.kind in (EdgeKind.LOOP_START, EdgeKind.RESTART):
            assert probe is not None
            assert probe.op is ProbeOp.SET
        elif probe is not None:
            assert probe.op in (ProbeOp.SET, ProbeOp.ADD)
            assert probe.op is ProbeOp.SET or eid in plan.placement.increment


