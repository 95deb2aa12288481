"""Unit tests of :mod:`pathprof.python.plan`, one function's plan: the numbering of
its paths and the probes placed on them (edges with no site forced into the
spanning tree, so no probe lands where no code can go), the plan's counter table
(array, hash, one slot for calls only, a slot per chord in edge mode), the length
of every path and the one length of the paths that end at a counting probe, the
hidden paths of a loop that can go back to its original body and the paths that
span them, and whether a path count can be written as decimal digits. Probes are
checked by simulating the register along every path: each path counts once, at its
own number."""

from __future__ import annotations

import ast
import sys
import textwrap
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pathprof.graph import (
    ARRAY_THRESHOLD,
    CounterKind,
    EdgeKind,
    PathStart,
    ProbeOp,
    iter_paths,
    number_paths,
    place,
    plan_probes,
    regenerate,
    to_dag,
)
from pathprof.graph.copyplan import CopyShare
from pathprof.python.cfg import build_cfg, iter_functions
from pathprof.python.cfgtypes import FunctionCfg, SiteKind
from pathprof.python.plan import (
    FunctionPlan,
    LoopSwitch,
    plan_edge_function,
    plan_function,
    plan_share_function,
    share_feasible,
    writable_path_count,
)

from .random_programs import functions


def _cfg(source: str, name: str | None = None) -> FunctionCfg:
    tree = ast.parse(textwrap.dedent(source))
    for node, qualname in iter_functions(tree):
        if name is None or qualname == name:
            return build_cfg(node, qualname)
    raise LookupError(name)


def _counts_along(fp: FunctionPlan, edges: tuple[int, ...]) -> list[int]:
    """The counts the probes make along a path of dag ``edges``: the register starts
    at 0 (set on entry), a SET sets it, an ADD adds, a COUNT counts ``r + c``. As
    the rewriter writes them, a SET of 0 on a normal edge is no code (the register is
    0 from the function's start); a dummy start edge always sets."""
    dag = fp.numbering.dag
    register, counted = 0, []
    for edge in edges:
        probe = fp.plan.probes.get(edge)
        if probe is None:
            continue
        if probe.op is ProbeOp.SET and probe.value == 0 and dag.edges[edge].kind is EdgeKind.NORMAL:
            continue
        if probe.op is ProbeOp.SET:
            register = probe.value
        elif probe.op is ProbeOp.ADD:
            register += probe.value
        elif probe.op is ProbeOp.COUNT:
            counted.append(register + probe.value)
        else:
            counted.append(probe.value)
    return counted


def _assert_every_path_counts_its_number(fp: FunctionPlan) -> None:
    numbers = []
    for path in iter_paths(fp.numbering):
        assert _counts_along(fp, path.edges) == [path.number], path
        numbers.append(path.number)
    assert sorted(numbers) == list(range(fp.num_paths))


def _no_probe_where_no_code_goes(fp: FunctionPlan) -> None:
    """Edges with no site are in the spanning tree (no increment); none has a probe
    but a raise's count into EXIT, which the runtime makes."""
    dag = fp.numbering.dag
    for eid, edge in enumerate(fp.cfg.edges):
        if edge.site.kind is SiteKind.NONE and eid in dag.normal_edges:
            dag_edge = dag.normal_edges[eid]
            assert dag_edge in fp.plan.placement.tree, edge
            probe = fp.plan.probes.get(dag_edge)
            if edge.label == "raise":
                assert probe is None or probe.op in (ProbeOp.COUNT, ProbeOp.COUNT_CONST)
            else:  # nothing, or ``r = 0`` where r is 0 from the start: no code
                assert probe is None or (probe.op is ProbeOp.SET and probe.value == 0), edge


IF_ELSE = """\
def f(x):
    if x:
        y = 1
    else:
        y = 2
    return y
"""

LOOP = """\
def g(n):
    t = 0
    while n:
        n -= 1
        t += 1
    return t
"""

RAISES = """\
def h(x):
    try:
        if x:
            raise ValueError
        y = 1
    except ValueError:
        y = 2
    return y
"""


# ---------------------------------------------------------------------------
# Numbering and probes


def test_an_if_else_has_two_paths_counted_in_an_array() -> None:
    fp = plan_function(_cfg(IF_ELSE), index=4)
    assert fp.index == 4
    assert fp.num_paths == 2
    assert fp.kind is CounterKind.ARRAY
    assert fp.table_size == 2
    _assert_every_path_counts_its_number(fp)


def test_a_loop_has_paths_from_entry_and_from_its_header() -> None:
    # entry -> header -> body (to the backedge) | entry -> header -> return,
    # and the same two from the header after a backedge: four paths
    fp = plan_function(_cfg(LOOP))
    assert fp.num_paths == 4
    starts = sorted(p.start.name for p in iter_paths(fp.numbering))
    assert starts == ["ENTRY", "ENTRY", "LOOP_HEADER", "LOOP_HEADER"]
    _assert_every_path_counts_its_number(fp)


def test_a_raise_with_no_place_for_code_gets_no_probe() -> None:
    cfg = _cfg(RAISES)
    assert any(e.site.kind is SiteKind.NONE for e in cfg.edges)
    fp = plan_function(cfg)
    _no_probe_where_no_code_goes(fp)
    # the raise's count stands where no code goes: fine for Ball-Larus (the runtime
    # counts it), not for a copy's share, whose probes must all be code
    assert not share_feasible(cfg, fp.plan)
    # the raising path, the one falling through, and the handler's path
    assert fp.num_paths == 3
    _assert_every_path_counts_its_number(fp)


@settings(max_examples=20, deadline=None)
@given(functions(max_depth=2))
def test_every_path_of_a_random_function_counts_its_own_number(source: str) -> None:
    tree = ast.parse(source)
    for i, (node, qualname) in enumerate(iter_functions(tree)):
        fp = plan_function(build_cfg(node, qualname), i)
        _no_probe_where_no_code_goes(fp)
        if fp.num_paths <= 2000:
            _assert_every_path_counts_its_number(fp)


def test_measured_weights_change_the_probes_not_the_numbers() -> None:
    cfg = _cfg(LOOP)
    static = plan_function(cfg)
    dag_edges = len(static.numbering.dag.edges)
    weighted = plan_function(cfg, weights=[float(e) for e in range(dag_edges)])
    assert weighted.num_paths == static.num_paths
    assert weighted.numbering.val == static.numbering.val
    _assert_every_path_counts_its_number(weighted)


def test_many_paths_are_counted_in_a_hash_table() -> None:
    # 13 ifs in a row: 2**13 = 8192 paths, over the array threshold
    ifs = "".join(f"    if x{i}:\n        y = {i}\n" for i in range(13))
    args = ", ".join(f"x{i}" for i in range(13))
    fp = plan_function(_cfg(f"def f({args}):\n{ifs}"))
    assert ARRAY_THRESHOLD < fp.num_paths == 8192
    assert fp.kind is CounterKind.HASH
    assert fp.table_size == -1
    assert fp.path_lengths is None
    assert fp.end_lengths == {}


def test_calls_only_needs_one_slot() -> None:
    fp = plan_function(_cfg(IF_ELSE))
    fp.calls_only = True
    assert fp.table_size == 1


# ---------------------------------------------------------------------------
# Path lengths


def test_path_lengths_count_the_blocks_between_entry_and_exit() -> None:
    # each way through f: the test, one branch, the return -- 3 blocks
    fp = plan_function(_cfg(IF_ELSE))
    assert fp.path_lengths == (3, 3)
    # both end at the return's count: that edge's paths are all 3 blocks long
    assert list(fp.end_lengths.values()) == [3]


def test_path_lengths_of_a_loop_by_where_its_paths_start_and_end() -> None:
    fp = plan_function(_cfg(LOOP))
    assert fp.path_lengths is not None
    by_shape = {(p.start.name, p.end.name): fp.path_lengths[p.number]
                for p in iter_paths(fp.numbering)}
    # from entry: t = 0, the test, the body (3) or the return (3);
    # from the header: the test, the body (2) or the return (2)
    assert by_shape == {("ENTRY", "BACKEDGE"): 3, ("ENTRY", "EXIT"): 3,
                        ("LOOP_HEADER", "BACKEDGE"): 2, ("LOOP_HEADER", "EXIT"): 2}
    # each counting edge ends paths of two lengths: none is uniform
    assert fp.end_lengths == {}


@settings(max_examples=20, deadline=None)
@given(functions(max_depth=2))
def test_an_end_length_is_the_length_of_every_path_ending_there(source: str) -> None:
    for i, (node, qualname) in enumerate(iter_functions(ast.parse(source))):
        fp = plan_function(build_cfg(node, qualname), i)
        if fp.path_lengths is None or fp.num_paths > 2000:
            continue
        for path in iter_paths(fp.numbering):
            inner = [b for b in path.blocks if b not in (fp.cfg.entry, fp.cfg.exit)]
            assert fp.path_lengths[path.number] == len(inner)
            for edge in path.edges:
                if edge in fp.end_lengths:
                    assert fp.end_lengths[edge] == len(inner)


# ---------------------------------------------------------------------------
# Edge mode


def test_edge_mode_counts_on_chords_and_every_inner_block_may_raise() -> None:
    cfg = _cfg(RAISES)
    fp = plan_edge_function(cfg, index=1)
    assert fp.edge_plan is not None
    assert fp.table_size == len(fp.edge_plan.chords) > 0
    inner = sorted(set(range(len(cfg.blocks))) - {cfg.entry, cfg.exit})
    assert sorted(fp.edge_plan.raising) == inner
    for slot, chord in enumerate(fp.edge_plan.chords):
        assert fp.chord_slot(chord) == slot
    # edges with no place for code are never chords
    for eid, edge in enumerate(cfg.edges):
        if edge.site.kind is SiteKind.NONE:
            assert fp.chord_slot(eid) is None
    # the path plan is made too (the metadata's numbering)
    assert fp.num_paths == 3


# ---------------------------------------------------------------------------
# Shares of a parallel run


def test_a_plan_whose_every_probe_has_a_site_is_feasible() -> None:
    cfg = _cfg(IF_ELSE)
    assert share_feasible(cfg, plan_function(cfg).plan)


def test_a_plan_with_a_chord_where_no_code_goes_is_not_feasible() -> None:
    cfg = _cfg(RAISES)
    dag = to_dag(cfg.to_graph())
    numbering = number_paths(dag)
    nowhere = {dag.normal_edges[eid] for eid, e in enumerate(cfg.edges)
               if e.site.kind is SiteKind.NONE}
    # the lightest edges are left out of a maximum spanning tree: make the raise's
    # edge the lightest, and it is a chord
    weights = [0.0 if e in nowhere else 100.0 for e in range(len(dag.edges))]
    plan = plan_probes(place(numbering, weights))
    assert nowhere - plan.placement.tree
    assert not share_feasible(cfg, plan)


def test_a_copy_holding_every_edge_plans_as_ball_larus() -> None:
    cfg = _cfg(IF_ELSE)
    numbering = number_paths(to_dag(cfg.to_graph()))
    every = frozenset(range(len(numbering.dag.edges)))
    share = CopyShare(numbering, (every,), (0,), 0)
    fp = plan_share_function(cfg, 2, share)
    assert fp.share is share
    assert fp.index == 2
    assert fp.kind is CounterKind.ARRAY
    _assert_every_path_counts_its_number(fp)


def test_a_copy_holding_some_edges_counts_in_a_hash_table() -> None:
    cfg = _cfg(IF_ELSE)
    numbering = number_paths(to_dag(cfg.to_graph()))
    edges = range(len(numbering.dag.edges))
    half = frozenset(e for e in edges if e % 2 == 0)
    share = CopyShare(numbering, (half, frozenset(edges) - half), (0, 1), 0)
    fp = plan_share_function(cfg, 0, share)
    assert fp.share is share
    assert fp.kind is CounterKind.HASH
    assert fp.table_size == -1


# ---------------------------------------------------------------------------
# Loop switches: hidden and spanning paths


def _loop_switch(fp: FunctionPlan) -> LoopSwitch:
    """The LoopSwitch of ``fp``'s one loop, made from its graph: the dummy start of
    its backedge's path and the dag edge from its header into its body."""
    dag = fp.numbering.dag
    (start,) = {start for _end, start in dag.backedges.values()}
    header = dag.edges[start].dst
    (body_cfg_edge,) = [eid for eid, e in enumerate(fp.cfg.edges)
                        if e.src == header and e.label in ("true", "next")]
    node = next(n for n in ast.walk(fp.cfg.node) if isinstance(n, ast.While | ast.For))
    assert isinstance(node, ast.While | ast.For)
    probe = fp.plan.probes[start]
    return LoopSwitch(node, 0, header, start, dag.normal_edges[body_cfg_edge], probe.value,
                      [])


def _body_paths(fp: FunctionPlan, header: int) -> set[int]:
    """The numbers of the paths that start at ``header`` after a backedge and go
    into the loop's body (whose blocks the CFG's loop lists), not out of the loop."""
    (body,) = [loop.body for loop in fp.cfg.loops if loop.header == header]
    return {path.number for path in iter_paths(fp.numbering)
            if path.start is PathStart.LOOP_HEADER and path.blocks[0] == header
            and path.blocks[1] in body}


def _rank(vectors: list[list[int]]) -> int:
    rows = [[Fraction(v) for v in row] for row in vectors]
    rank, columns = 0, len(rows[0]) if rows else 0
    for column in range(columns):
        pivot = next((r for r in range(rank, len(rows)) if rows[r][column]), None)
        if pivot is None:
            continue
        rows[rank], rows[pivot] = rows[pivot], rows[rank]
        for r in range(len(rows)):
            if r != rank and rows[r][column]:
                factor = rows[r][column] / rows[rank][column]
                rows[r] = [a - factor * b for a, b in zip(rows[r], rows[rank], strict=True)]
        rank += 1
    return rank


def _edge_vector(fp: FunctionPlan, number: int) -> list[int]:
    vector = [0] * len(fp.numbering.dag.edges)
    for edge in regenerate(fp.numbering, number).edges:
        vector[edge] += 1
    return vector


SIMPLE_LOOP_BODY = """\
def g(n):
    t = 0
    while n:
        n -= 1
    return t
"""

TWO_IFS_IN_A_LOOP = """\
def g(n):
    t = 0
    while n:
        if t:
            n -= 1
        if n:
            t += 1
    return t
"""


def test_a_straight_loop_body_hides_one_path() -> None:
    fp = plan_function(_cfg(SIMPLE_LOOP_BODY))
    loop = _loop_switch(fp)
    ((first, count),) = loop.hidden_paths(fp.numbering)
    assert count == 1
    path = regenerate(fp.numbering, first)
    assert path.start is PathStart.LOOP_HEADER
    assert [fp.cfg.blocks[b].lines() for b in path.blocks] == [(3, 3), (4, 4)]
    assert loop.spanning_paths(fp.numbering) == [first]


def test_the_hidden_paths_of_a_loop_are_its_body_paths() -> None:
    fp = plan_function(_cfg(TWO_IFS_IN_A_LOOP))
    loop = _loop_switch(fp)
    ranges = loop.hidden_paths(fp.numbering)
    hidden = {first + k for first, count in ranges for k in range(count)}
    assert len(hidden) == sum(count for _, count in ranges) == 4  # two ifs: 2 * 2
    assert hidden == _body_paths(fp, loop.header)


def test_the_spanning_paths_span_every_hidden_path() -> None:
    fp = plan_function(_cfg(TWO_IFS_IN_A_LOOP))
    loop = _loop_switch(fp)
    hidden = sorted(first + k for first, count in loop.hidden_paths(fp.numbering)
                    for k in range(count))
    spanning = loop.spanning_paths(fp.numbering)
    assert spanning == sorted(set(spanning))
    assert set(spanning) <= set(hidden)
    # two independent choices after a fixed start: 1 + 1 + 1 dimensions
    assert len(spanning) == 3
    vectors = [_edge_vector(fp, n) for n in spanning]
    assert _rank(vectors) == 3
    assert _rank(vectors + [_edge_vector(fp, n) for n in hidden]) == 3


def test_inner_path_starts_are_hidden_too() -> None:
    source = """\
def g(n):
    while n:
        n -= 1
        try:
            n += 0
        except ValueError:
            n = 0
    return n
"""
    fp = plan_function(_cfg(source))
    loop = _loop_switch(fp)
    handler = next(b.id for b in fp.cfg.blocks if b.kind == "handler")
    restart = fp.numbering.dag.restart_edges[handler]
    with_handler = LoopSwitch(loop.node, 0, loop.header, loop.start_edge, loop.body_edge,
                              loop.start_value, [], inner_starts=(restart,))
    plain = loop.hidden_paths(fp.numbering)
    ranges = with_handler.hidden_paths(fp.numbering)
    assert ranges[:len(plain)] == plain
    ((first, count),) = ranges[len(plain):]
    starting = {p.number for p in iter_paths(fp.numbering) if p.blocks[0] == handler}
    assert set(range(first, first + count)) == starting


# ---------------------------------------------------------------------------
# Writable path counts


def test_small_counts_are_writable_and_huge_ones_are_not() -> None:
    assert writable_path_count(1)
    assert writable_path_count(10**100)
    if sys.get_int_max_str_digits():
        assert not writable_path_count(2**20000)  # ~6,000 digits, past 4,300


def test_with_no_digit_limit_every_count_is_writable(monkeypatch: pytest.MonkeyPatch
                                                    ) -> None:
    monkeypatch.setattr(sys, "get_int_max_str_digits", lambda: 0)
    assert writable_path_count(2**100000)


@settings(max_examples=50, deadline=None)
@given(bits=st.integers(min_value=2000, max_value=2200), low=st.integers(min_value=0))
def test_a_writable_count_never_has_more_digits_than_the_limit(bits: int, low: int) -> None:
    limit = 640  # the least limit Python allows
    number = (1 << (bits - 1)) | (low % (1 << (bits - 1)))
    original = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(limit)
    try:
        writable = writable_path_count(number)
    finally:
        sys.set_int_max_str_digits(original)
    if writable:
        assert len(str(number)) <= limit
