"""Tests for pathprof.graph.cfg: the CFG type, backedges, loop depths, the DAG."""

from __future__ import annotations

import networkx as nx
import pytest
from hypothesis import given

from pathprof.exceptions import CfgError
from pathprof.graph import Cfg, EdgeKind, find_backedges, loop_depths, to_dag
from pathprof.graph.serial import cfg_from_data

from .strategies import arbitrary_cfgs, cfgs, structured_cfgs


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((3, 0, 0, []), "same block"),
        ((3, 0, 5, []), "exit block 5"),
        ((3, 0, 2, [(0, 7)]), "outside"),
        ((3, 0, 2, [(1, 0)]), "enters ENTRY"),
        ((3, 0, 2, [(2, 1)]), "leaves EXIT"),
        ((3, 0, 2, [(0, 1), (1, 2)], [1, 1]), "listed twice"),
        ((3, 0, 2, [(0, 1), (1, 2)], [2]), "other than ENTRY and EXIT"),
    ],
)
def test_invalid_cfgs_are_rejected(args: tuple, message: str) -> None:
    with pytest.raises(CfgError, match=message):
        Cfg(*args)


def test_multi_edges_are_distinct_edges() -> None:
    g = Cfg(3, 0, 2, [(0, 1), (1, 2), (1, 2), (1, 2)])
    assert g.out_edges[1] == (1, 2, 3)
    assert g.successors(1) == (2, 2, 2)
    assert g.in_edges[2] == (1, 2, 3)


def test_self_loop_becomes_two_dummies() -> None:
    g = Cfg(3, 0, 2, [(0, 1), (1, 1), (1, 2)])
    assert find_backedges(g) == {1}
    dag = to_dag(g)
    kinds = [(e.src, e.dst, e.kind) for e in dag.edges]
    assert kinds == [
        (0, 1, EdgeKind.NORMAL),
        (1, 2, EdgeKind.NORMAL),
        (1, 2, EdgeKind.LOOP_END),
        (0, 1, EdgeKind.LOOP_START),
    ]
    assert dag.backedges == {1: (2, 3)}


def test_unreachable_blocks_are_left_out() -> None:
    g = Cfg(4, 0, 3, [(0, 3), (1, 2), (2, 3)])
    dag = to_dag(g)
    assert dag.reachable == {0, 3}
    assert [(e.src, e.dst) for e in dag.edges] == [(0, 3)]


def test_dead_end_block_is_an_error() -> None:
    g = Cfg(4, 0, 3, [(0, 1), (0, 3), (1, 2)])
    with pytest.raises(CfgError, match=r"\[1, 2\] are reachable from ENTRY but cannot reach EXIT"):
        to_dag(g)


def test_given_backedges_that_leave_a_cycle_are_an_error() -> None:
    g = Cfg(4, 0, 3, [(0, 1), (1, 2), (2, 1), (2, 3)])
    with pytest.raises(CfgError, match="still has a cycle"):
        to_dag(g, backedges=[])


def test_restart_gets_a_dummy_edge_and_is_reachable() -> None:
    # 0 -> 1 -> 3, handler 2 only reached by an exception
    g = Cfg(4, 0, 3, [(0, 1), (1, 3), (2, 3)], restarts=[2])
    dag = to_dag(g)
    assert 2 in dag.reachable
    restart = dag.edges[dag.restart_edges[2]]
    assert (restart.src, restart.dst, restart.kind) == (0, 2, EdgeKind.RESTART)


def test_restarts_are_explored_after_entry() -> None:
    # A loop 1 -> 2 -> 4 -> 1 with a handler 3 inside it (3 -> 4). Exploring the
    # handler first would wrongly make 2 -> 4 a backedge.
    g = Cfg(6, 0, 5, [(0, 1), (1, 2), (2, 4), (4, 1), (3, 4), (1, 5)], restarts=[3])
    assert find_backedges(g) == {3}


def test_nested_loop_depths() -> None:
    # 1: outer header, 2: inner header, 3: inner body
    g = Cfg(5, 0, 4, [(0, 1), (1, 2), (2, 3), (3, 2), (2, 1), (1, 4)])
    assert loop_depths(g) == (0, 1, 2, 2, 0)


@given(cfgs())
def test_dag_is_acyclic_and_every_reachable_block_reaches_exit(g: Cfg) -> None:
    dag = to_dag(g)
    graph = nx.MultiDiGraph()
    graph.add_nodes_from(dag.reachable)
    graph.add_edges_from((e.src, e.dst) for e in dag.edges)
    assert nx.is_directed_acyclic_graph(graph)
    for block in dag.reachable:
        assert block == g.exit or nx.has_path(graph, block, g.exit)
    position = {b: i for i, b in enumerate(dag.topo_order)}
    assert all(position[e.src] < position[e.dst] for e in dag.edges)
    assert set(dag.topo_order) == set(dag.reachable)


@given(cfgs())
def test_every_backedge_is_replaced_by_its_two_dummies(g: Cfg) -> None:
    dag = to_dag(g)
    for eid, (end, start) in dag.backedges.items():
        src, dst = g.edges[eid]
        assert (dag.edges[end].src, dag.edges[end].dst, dag.edges[end].kind) == (
            src, g.exit, EdgeKind.LOOP_END)
        assert (dag.edges[start].src, dag.edges[start].dst, dag.edges[start].kind) == (
            g.entry, dst, EdgeKind.LOOP_START)
    normal = [e.cfg_edge for e in dag.edges if e.kind is EdgeKind.NORMAL]
    reachable_cfg_edges = [e for e, (s, _) in enumerate(g.edges) if s in dag.reachable]
    assert sorted(normal + list(dag.backedges)) == reachable_cfg_edges


@given(structured_cfgs())
def test_structured_backedges_close_natural_loops(g: Cfg) -> None:
    """In a reducible graph every backedge target dominates its source."""
    graph = nx.MultiDiGraph()
    graph.add_edges_from(g.edges)
    dominators = nx.immediate_dominators(graph, g.entry)
    for eid in find_backedges(g):
        src, dst = g.edges[eid]
        node = src
        while node != dst and node != g.entry:
            node = dominators[node]
        assert node == dst


@given(arbitrary_cfgs())
def test_loop_depth_is_zero_outside_loops(g: Cfg) -> None:
    depth = loop_depths(g)
    assert depth[g.entry] == 0
    back = find_backedges(g)
    for eid in back:
        src, dst = g.edges[eid]
        if src in to_dag(g).reachable:
            assert depth[dst] >= 1
            assert depth[src] >= 1


def test_declared_backedges_are_used_whatever_the_search_would_find() -> None:
    # Loop 1 -> 2 -> 4 -> 1 with a handler 3 inside it that goes back to the header
    # 1: the search meets 3 -> 1 as a cross edge; the loop structure says backedge.
    edges = [(0, 1), (1, 2), (2, 4), (4, 1), (3, 1), (1, 5)]
    searched = Cfg(6, 0, 5, edges, restarts=[3])
    declared = Cfg(6, 0, 5, edges, restarts=[3], backedges=[3, 4])
    assert find_backedges(searched) == {3}
    assert find_backedges(declared) == {3, 4}
    dag = to_dag(declared)
    assert set(dag.backedges) == {3, 4}
    # The handler's path ends at the header: H -> EXIT (loop-end), never H -> 1 -> ...
    assert {(e.src, e.dst, e.kind) for e in dag.edges if e.src == 3} == {
        (3, 5, EdgeKind.LOOP_END)}


def test_declared_backedges_must_be_edges() -> None:
    with pytest.raises(CfgError, match="declared backedge 7"):
        Cfg(3, 0, 2, [(0, 1), (1, 2)], backedges=[7])


def test_declared_backedges_must_break_every_cycle() -> None:
    with pytest.raises(CfgError, match="still has a cycle"):
        to_dag(Cfg(4, 0, 3, [(0, 1), (1, 2), (2, 1), (2, 3)], backedges=[]))


def test_backedges_from_json_name_edges() -> None:
    named = cfg_from_data({"blocks": ["in", "h", "b", "x", "out"], "entry": "in", "exit": "out",
                           "edges": [["in", "h"], ["h", "b"], ["b", "h"], ["x", "h"],
                                     ["h", "out"]],
                           "restarts": ["x"], "backedges": [["b", "h"], ["x", "h"]]})
    assert named.cfg.backedges == (2, 3)
    with pytest.raises(CfgError, match="not edges"):
        cfg_from_data({"blocks": ["in", "out"], "entry": "in", "exit": "out",
                       "edges": [["in", "out"]], "backedges": [["out", "in"]]})
