"""Property tests of event counting on spanning-tree chords (Ball 1994)."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from pathprof.graph import Cfg
from pathprof.graph.events import plan_events, rest_of_block
from tests.graph.strategies import arbitrary_cfgs, examples, structured_cfgs


def _walk(cfg: Cfg, seed: int, max_steps: int = 60) -> list[int]:
    """A random walk of edge ids from ENTRY (it may stop before EXIT)."""
    rng = random.Random(seed)
    block, walk = cfg.entry, []
    for _ in range(max_steps):
        out = cfg.out_edges[block]
        if not out or block == cfg.exit:
            break
        edge = rng.choice(out)
        walk.append(edge)
        block = cfg.edges[edge][1]
    return walk


@settings(max_examples=examples(300), deadline=None)
@given(st.one_of(arbitrary_cfgs(), structured_cfgs()), st.data(), st.booleans())
def test_register_plus_query_is_the_exact_count_at_every_point(cfg: Cfg, data, naive) -> None:
    events = data.draw(st.lists(st.integers(0, 9), min_size=cfg.num_blocks,
                                max_size=cfg.num_blocks))
    plan = plan_events(cfg, events, naive=naive)
    walk = _walk(cfg, data.draw(st.integers(0, 10**6)))
    expected = events[cfg.entry]
    assert plan.count_at([]) == expected
    for i, edge in enumerate(walk):
        expected += events[cfg.edges[edge][1]]
        assert plan.count_at(walk[:i + 1]) == expected
    if walk and cfg.edges[walk[-1]][1] == cfg.exit:
        assert plan.register_after(walk) == expected  # query[EXIT] is 0


@settings(max_examples=examples(200), deadline=None)
@given(structured_cfgs(), st.data())
def test_only_chords_carry_code_and_forced_edges_stay_free(cfg: Cfg, data) -> None:
    events = [1] * cfg.num_blocks
    not_loops = [e for e, (src, dst) in enumerate(cfg.edges) if src != dst]
    forced = data.draw(st.sets(st.sampled_from(not_loops), max_size=1)) if not_loops else set()
    plan = plan_events(cfg, events, forced_tree=forced)
    assert set(plan.increment) == set(range(len(cfg.edges))) - plan.tree
    assert forced <= plan.tree
    # A spanning forest of the graph plus EXIT -> ENTRY: at most V - 1 tree edges of
    # the CFG, so at least E - V + 1 chords.
    assert len(plan.tree) <= cfg.num_blocks - 1


def test_fewer_increments_than_blocks_on_a_loop() -> None:
    # ENTRY -> 1; 1 -> 2 -> 3 -> 1 (loop of 3 blocks), 1 -> EXIT.
    cfg = Cfg(5, 0, 4, [(0, 1), (1, 2), (2, 3), (3, 1), (1, 4)])
    plan = plan_events(cfg, [0, 1, 2, 3, 0])
    loop = {1, 2, 3}
    in_loop = {e: inc for e, inc in plan.code_edges.items() if e in loop}
    assert list(in_loop.values()) == [6]  # one add per iteration (1 + 2 + 3), not three


def test_rest_of_block() -> None:
    assert rest_of_block([1, 0, 2, 1], 1) == 3
    assert rest_of_block([1, 0, 2, 1], 3) == 0


def test_the_naive_plan_adds_on_every_edge_into_a_block_with_events() -> None:
    cfg = Cfg(5, 0, 4, [(0, 1), (1, 2), (2, 3), (3, 1), (1, 4)])
    naive = plan_events(cfg, [0, 1, 2, 3, 0], naive=True)
    assert naive.code_edges == {0: 1, 1: 2, 2: 3, 3: 1}
    tree = plan_events(cfg, [0, 1, 2, 3, 0])
    assert len(tree.code_edges) < len(naive.code_edges)
