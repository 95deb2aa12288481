"""Tests for pathprof.graph.edges: chord counters and flow recovery."""

from __future__ import annotations

import itertools
import math
import random

import networkx as nx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pathprof.graph import Cfg, plan_edge_counters, recover_edge_counts

from .strategies import cfgs, random_walk


def measure(plan, walks) -> tuple[dict[int, int], list[int]]:
    """Chord counts the instrumented program would record, and the true counts."""
    truth = [0] * len(plan.endpoints)
    for walk in walks:
        for eid, count in walk.edge_counts.items():
            truth[eid] += count
        for block, count in walk.raises.items():
            truth[plan.raise_edge(block)] += count
        for block, count in walk.restarts.items():
            truth[plan.restart_edge(block)] += count
        returned = 1 if walk.segments[-1].end == "exit" else 0
        truth[plan.return_edge] += returned + sum(walk.raises.values())
    chords = {e: truth[e] for e in plan.chords}
    return chords, truth


@given(cfgs(), st.randoms(use_true_random=False))
def test_chord_counts_recover_the_exact_edge_profile(g: Cfg, rng: random.Random) -> None:
    plan = plan_edge_counters(g, raising=range(g.num_blocks))
    walks = [random_walk(g, rng) for _ in range(rng.randint(1, 6))]
    chords, truth = measure(plan, walks)
    assert recover_edge_counts(plan, chords) == truth


@given(cfgs(), st.randoms(use_true_random=False))
def test_measured_weights_give_a_maximum_spanning_tree(g: Cfg, rng: random.Random) -> None:
    """Cycle property: no chord outweighs a tree edge on its fundamental cycle."""
    walks = [random_walk(g, rng, cut_chance=0.0) for _ in range(3)]
    weights = [0.0] * len(g.edges)
    for walk in walks:
        for eid, count in walk.edge_counts.items():
            weights[eid] += count
    plan = plan_edge_counters(g, weights, raising=range(g.num_blocks))
    chords, truth = measure(plan, walks)
    assert recover_edge_counts(plan, chords) == truth
    tree = set(range(len(plan.endpoints))) - set(plan.chords)
    graph = nx.MultiGraph()
    for eid in tree:
        graph.add_edge(*plan.endpoints[eid], key=eid)
    assert nx.is_forest(nx.Graph(graph))
    assert graph.number_of_edges() == nx.Graph(graph).size()
    all_weights = [*weights, *([0.0] * (len(plan.endpoints) - len(weights) - 1)), math.inf]
    for chord in plan.chords:
        if chord >= len(g.edges):
            continue  # virtual exception edges are always counted
        a, b = plan.endpoints[chord]
        if a == b or a not in graph or b not in graph or not nx.has_path(graph, a, b):
            continue
        nodes = nx.shortest_path(graph, a, b)
        for u, v in itertools.pairwise(nodes):
            key = next(iter(graph[u][v]))
            assert all_weights[key] >= weights[chord]


def test_diamond_needs_two_counters() -> None:
    """E - V + 1 = 2 counters (the number of calls is not known either)."""
    g = Cfg(4, 0, 3, [(0, 1), (0, 2), (1, 3), (2, 3)])
    plan = plan_edge_counters(g)
    assert len(plan.chords) == 2
    # 3 calls through 0->1->3 and 4 through 0->2->3; EXIT -> ENTRY ran 7 times.
    truth = [3, 4, 3, 4, 7]
    assert recover_edge_counts(plan, {e: truth[e] for e in plan.chords}) == truth


def test_counts_that_are_not_a_flow_are_rejected() -> None:
    g = Cfg(4, 0, 3, [(0, 1), (0, 2), (1, 3), (2, 3)])
    plan = plan_edge_counters(g)
    first, second = plan.chords
    with pytest.raises(ValueError, match=r"not a flow: edges .* negative"):
        recover_edge_counts(plan, {first: 5, second: -9})
