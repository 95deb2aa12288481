"""One copy's share of a split function (:mod:`pathprof.graph.copyplan`): on random
CFGs, tasks and copies, what every copy records for every path and every prefix a
path can be cut at, translated back, gives that path exactly once, in Ball-Larus
numbers -- the merge of a parallel run is exact."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pathprof.graph import (
    EdgeKind,
    assign,
    find_partition,
    iter_paths,
    number_paths,
    place,
    plan_probes,
    to_dag,
)
from pathprof.graph.copyplan import CopyShare, decode_prefix, pending_values, poisoned_edges
from pathprof.graph.pspp import pspp

from .strategies import cfgs, examples


def _shares(dag, delta: int, copies: int) -> tuple[object, list[CopyShare]]:
    numbering = number_paths(dag)
    tasks = find_partition(dag, delta)
    owners = assign([task.cost for task in tasks], copies)
    edges = tuple(task.edges for task in tasks)
    return numbering, [CopyShare(numbering, edges, owners, k) for k in range(copies)]


def _recorded(share: CopyShare, edges: tuple[int, ...], cut_at: int | None) -> int:
    """What the copy's probes leave: the register summed along ``edges`` (plus the
    block's query increment where the path is cut there)."""
    if share.whole:
        placement = place(share.numbering)
    else:
        placement = share.placement()
        assert plan_probes(placement).probes is not None
    value = sum(placement.increment.get(e, 0) for e in edges)
    return value if cut_at is None else value + placement.query[cut_at]


@settings(max_examples=examples(200), deadline=None)
@given(cfg=cfgs(), delta=st.integers(1, 8), copies=st.integers(1, 8))
def test_every_complete_path_is_counted_by_exactly_one_copy(cfg, delta: int, copies: int
                                                            ) -> None:
    numbering, shares = _shares(to_dag(cfg), delta, copies)
    for path in iter_paths(numbering, limit=200):
        kept = [share.path(_recorded(share, path.edges, None)) for share in shares]
        assert sorted(k for k in kept if k is not None) == [path.number]


@settings(max_examples=examples(200), deadline=None)
@given(cfg=cfgs(), delta=st.integers(1, 8), copies=st.integers(1, 8))
def test_every_cut_prefix_is_counted_by_exactly_one_copy(cfg, delta: int, copies: int
                                                         ) -> None:
    dag = to_dag(cfg)
    numbering, shares = _shares(dag, delta, copies)
    seen: set[tuple[int, int]] = set()
    for path in iter_paths(numbering, limit=100):
        for i, eid in enumerate(path.edges):
            edge = dag.edges[eid]
            if edge.kind is EdgeKind.LOOP_END or edge.dst == dag.exit:
                continue
            prefix = path.edges[: i + 1]
            block = edge.dst
            bl_value = sum(numbering.val[e] for e in prefix)
            if (block, bl_value) in seen:
                continue
            seen.add((block, bl_value))
            kept = [share.cut(block, _recorded(share, prefix, block)) for share in shares]
            assert sorted(k for k in kept if k is not None) == [bl_value]


@settings(max_examples=examples(200), deadline=None)
@given(cfg=cfgs(), data=st.data())
def test_prefixes_decode_and_poison_marks_every_uninteresting_one(cfg, data) -> None:
    dag = to_dag(cfg)
    interesting = data.draw(st.sets(st.integers(0, len(dag.edges) - 1)))
    labeling = pspp(dag, interesting)
    pending = pending_values(labeling)
    poison = poisoned_edges(labeling)
    for path in iter_paths(number_paths(dag), limit=100):
        for i, eid in enumerate(path.edges):
            if dag.edges[eid].kind is EdgeKind.LOOP_END or dag.edges[eid].dst == dag.exit:
                continue
            prefix = path.edges[: i + 1]
            block = dag.edges[eid].dst
            value = sum(labeling.total if e in poison else labeling.labels[e]
                        for e in prefix) + pending[block]
            if set(prefix) <= labeling.interesting:
                assert decode_prefix(labeling, block, value) == prefix
            else:
                assert value >= labeling.total
