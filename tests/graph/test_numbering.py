"""Tests for pathprof.graph.numbering: Ball-Larus values and regeneration."""

from __future__ import annotations

import networkx as nx
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from pathprof.graph import (
    Cfg,
    PathEnd,
    PathStart,
    iter_paths,
    number_paths,
    path_number,
    paths_shortest_first,
    regenerate,
    regenerate_prefix,
    to_dag,
)

from .oracle import all_dag_paths
from .strategies import cfgs

A, B, C, D, E, F = range(6)
# Ball-Larus 1996, Figure 2: six paths from A to F.
BL_FIGURE_2 = Cfg(6, A, F, [(A, C), (A, B), (B, C), (B, D), (C, D), (D, F), (D, E), (E, F)])


def spell(blocks: tuple[int, ...]) -> str:
    return "".join("ABCDEF"[b] for b in blocks)


def test_ball_larus_figure_2_encoding() -> None:
    """The path encoding table of Ball-Larus 1996, Figure 2."""
    numbering = number_paths(to_dag(BL_FIGURE_2))
    assert numbering.total == 6
    assert numbering.num_paths == (6, 4, 2, 2, 1, 1)
    table = {spell(regenerate(numbering, n).blocks): n for n in range(6)}
    assert table == {"ACDF": 0, "ACDEF": 1, "ABCDF": 2, "ABCDEF": 3, "ABDF": 4, "ABDEF": 5}


def test_cs6120_blog_example() -> None:
    """The blog's example: v with edges e1, e2, e3 to w1, w2, w3, each one path to
    the sink, gets Val(e1)=0, Val(e2)=1, Val(e3)=2 and NumPaths(v)=3."""
    v, w1, w2, w3, sink = range(5)
    g = Cfg(5, v, sink, [(v, w1), (v, w2), (v, w3), (w1, sink), (w2, sink), (w3, sink)])
    numbering = number_paths(to_dag(g))
    assert numbering.val[:3] == (0, 1, 2)
    assert numbering.num_paths[v] == 3
    assert numbering.val[3:] == (0, 0, 0)


def test_loop_paths_are_told_apart() -> None:
    """Ball-Larus 1996, §4: with dummy edges, the paths of a loop body that start at
    ENTRY or at the header and end at EXIT or at the backedge are all distinct."""
    a, b, c, d, e, f = range(6)
    g = Cfg(6, a, f, [(a, b), (b, c), (b, d), (c, e), (d, e), (e, b), (e, f)])
    numbering = number_paths(to_dag(g))
    assert numbering.total == 8
    kinds = sorted(
        (p.start.value, p.end.value, spell(p.blocks)) for p in iter_paths(numbering)
    )
    assert kinds == [
        ("entry", "backedge", "ABCE"),
        ("entry", "backedge", "ABDE"),
        ("entry", "exit", "ABCEF"),
        ("entry", "exit", "ABDEF"),
        ("loop-header", "backedge", "BCE"),
        ("loop-header", "backedge", "BDE"),
        ("loop-header", "exit", "BCEF"),
        ("loop-header", "exit", "BDEF"),
    ]


def test_self_loop_path() -> None:
    g = Cfg(3, 0, 2, [(0, 1), (1, 1), (1, 2)])
    paths = {(p.start, p.end, p.blocks) for p in iter_paths(number_paths(to_dag(g)))}
    assert (PathStart.LOOP_HEADER, PathEnd.BACKEDGE, (1,)) in paths
    assert (PathStart.ENTRY, PathEnd.EXIT, (0, 1, 2)) in paths
    assert len(paths) == 4


def test_restart_paths_start_at_the_handler() -> None:
    g = Cfg(4, 0, 3, [(0, 1), (1, 3), (2, 3)], restarts=[2])
    paths = [(p.start, p.blocks) for p in iter_paths(number_paths(to_dag(g)))]
    assert paths == [(PathStart.ENTRY, (0, 1, 3)), (PathStart.RESTART, (2, 3))]


def test_regenerate_rejects_numbers_out_of_range() -> None:
    numbering = number_paths(to_dag(BL_FIGURE_2))
    with pytest.raises(ValueError, match=r"path number 6 is not in 0\.\.5"):
        regenerate(numbering, 6)
    with pytest.raises(ValueError, match="not in"):
        regenerate(numbering, -1)


def test_regenerate_prefix_rejects_a_value_no_prefix_has() -> None:
    numbering = number_paths(to_dag(BL_FIGURE_2))
    # Prefixes ending at C are AC (0) and ABC (2); 1 is not one of them.
    assert spell(regenerate_prefix(numbering, C, 2).blocks) == "ABC"
    with pytest.raises(ValueError, match="no path prefix ends at block 2 with value 1"):
        regenerate_prefix(numbering, C, 1)


def test_edge_key_orders_values() -> None:
    dag = to_dag(BL_FIGURE_2)
    numbering = number_paths(dag, edge_key=lambda e: dag.edges[e].dst)
    # Sorted by target, A->B (edge 1) comes first and gets 0; A->C gets NumPaths(B) = 4.
    assert numbering.val[1] == 0
    assert numbering.val[0] == 4
    sums = sorted(path_number(numbering, p) for p in all_dag_paths(dag))
    assert sums == list(range(6))


def test_huge_path_counts_do_not_overflow() -> None:
    # 80 diamonds in a row: 2**80 paths.
    edges = []
    block = 0
    for _ in range(80):
        edges += [(block, block + 1), (block, block + 2), (block + 1, block + 2)]
        block += 2
    g = Cfg(block + 1, 0, block, edges)
    numbering = number_paths(to_dag(g))
    assert numbering.total == 2**80
    last = regenerate(numbering, 2**80 - 1)
    assert path_number(numbering, last.edges) == 2**80 - 1


@given(cfgs())
def test_numbering_is_unique_and_compact(g: Cfg) -> None:
    dag = to_dag(g)
    numbering = number_paths(dag)
    assume(numbering.total <= 20_000)
    sums = sorted(path_number(numbering, p) for p in all_dag_paths(dag))
    assert sums == list(range(numbering.total))


@given(cfgs())
def test_path_count_matches_networkx(g: Cfg) -> None:
    dag = to_dag(g)
    numbering = number_paths(dag)
    assume(numbering.total <= 5_000)
    graph = nx.MultiDiGraph()
    graph.add_nodes_from(range(g.num_blocks))
    graph.add_edges_from((e.src, e.dst) for e in dag.edges)
    assert numbering.total == sum(1 for _ in nx.all_simple_edge_paths(graph, g.entry, g.exit))


@given(cfgs())
def test_regeneration_round_trips_every_path(g: Cfg) -> None:
    dag = to_dag(g)
    numbering = number_paths(dag)
    assume(numbering.total <= 5_000)
    for edges in all_dag_paths(dag):
        path = regenerate(numbering, path_number(numbering, edges))
        assert path.edges == edges


@given(cfgs())
def test_every_prefix_decodes(g: Cfg) -> None:
    dag = to_dag(g)
    numbering = number_paths(dag)
    assume(numbering.total <= 2_000)
    for edges in all_dag_paths(dag):
        for cut in range(1, len(edges)):
            prefix = edges[:cut]
            if dag.edges[prefix[-1]].dst == dag.exit:
                continue
            block = dag.edges[prefix[-1]].dst
            decoded = regenerate_prefix(numbering, block, path_number(numbering, prefix))
            assert decoded.edges == prefix
            assert decoded.end is PathEnd.CUT


@given(cfgs(), st.data())
def test_shortest_first_lists_missed_paths_in_length_order(g: Cfg, data: st.DataObject) -> None:
    """Against brute force: the unskipped paths, sorted by (length, number), are
    exactly what paths_shortest_first yields, and a limit keeps a prefix of them."""
    dag = to_dag(g)
    numbering = number_paths(dag)
    assume(numbering.total <= 2_000)
    everything = sorted((len(p), path_number(numbering, p)) for p in all_dag_paths(dag))
    skip = set(data.draw(st.lists(st.integers(0, numbering.total - 1), max_size=20)))
    expected = [number for _length, number in everything if number not in skip]
    assert list(paths_shortest_first(numbering, skip)) == expected
    limit = data.draw(st.integers(0, 5))
    assert list(paths_shortest_first(numbering, skip, limit)) == expected[:limit]


def test_shortest_first_needs_no_enumeration_of_huge_functions() -> None:
    """2**80 paths: the five shortest come out without visiting the rest."""
    blocks = 2 * 80 + 2
    edges = []
    for i in range(80):  # a diamond chain: 80 binary choices in a row
        top, bottom = 2 * i, 2 * i + 2
        edges += [(top, bottom), (top, 2 * i + 1), (2 * i + 1, bottom)]
    edges.append((160, blocks - 1))
    numbering = number_paths(to_dag(Cfg(blocks, 0, blocks - 1, edges)))
    assert numbering.total == 2**80
    first = list(paths_shortest_first(numbering, limit=5))
    assert first[0] == path_number(numbering, regenerate(numbering, first[0]).edges)
    lengths = [len(regenerate(numbering, n).edges) for n in first]
    assert lengths == [81, 82, 82, 82, 82]  # all direct edges, then one detour each
