""":mod:`pathprof.data.profile`, path profiles as data: :func:`path_key` names a path
(its number, or ``cut:<block>:<prefix value>``); :func:`decode_paths` turns recorded
path numbers and cut points back into paths — blocks in order without ENTRY and
EXIT, how each started (entry, loop header, handler) and ended (return, loop-back,
raise, reraise, exception) — hottest first, ties by key, from the metadata alone;
:func:`edge_counts` recovers edge mode's counts by flow conservation;
:class:`FunctionProfile` adds measurements up and marks contexts; :func:`merge`
merges measurements of one function. The expected paths below are read off each
small function's CFG by hand (Ball-Larus 1996: a loop's paths cut at its back edge,
a handler's paths starting at it)."""

from __future__ import annotations

import dataclasses

import pytest

from pathprof.contract import Block, Edge, FunctionInfo, ModuleInfo, Piece
from pathprof.data.modules import ModuleContract, Packed
from pathprof.data.profile import (
    END_KINDS,
    START_KINDS,
    FunctionProfile,
    Path,
    cfg_of,
    decision_vectors,
    decode_paths,
    edge_counts,
    end_kind,
    merge,
    numbering_of,
    path_key,
)
from pathprof.graph import PathEnd
from pathprof.python.instrument import instrument_source

SOURCE = '''\
def g(a):
    if a:
        return 1
    return 2


def f(n):
    if n < 0:
        raise ValueError(n)
    for i in range(n):
        if i:
            n += 1
    return n


def h(x):
    try:
        x()
    except KeyError:
        return 1
    finally:
        x = None
    return 2


def c(a, b, x):
    if a and b:
        return 1
    if x:
        return 2
    return 3
'''

_MODULES: dict[str, ModuleInfo] = {}


def _module(mode: str = "path", conditions: bool = False) -> ModuleInfo:
    key = f"{mode}-{conditions}"
    if key not in _MODULES:
        _MODULES[key] = instrument_source(SOURCE, "/nowhere/m.py", module_key="m",
                                          mode=mode, conditions=conditions).metadata
    return _MODULES[key]


def _meta(name: str, mode: str = "path", conditions: bool = False) -> FunctionInfo:
    (meta,) = [m for m in _module(mode, conditions).functions if m.qualname == name]
    return meta


def _all(meta: FunctionInfo) -> set[tuple[tuple[int, ...], str, str]]:
    """Every path of ``meta``, decoded: (blocks, start, end)."""
    paths = decode_paths(meta, dict.fromkeys(range(meta.num_paths), 1), {})
    assert sorted(p.id for p in paths) == list(range(meta.num_paths))
    return {(p.blocks, p.start, p.end) for p in paths}


# -- names -------------------------------------------------------------------------------

def test_the_start_and_end_kinds_are_those_documented() -> None:
    assert START_KINDS == ("entry", "loop-header", "handler")
    assert END_KINDS == ("return", "loop-back", "raise", "reraise", "exception")


@pytest.mark.parametrize(("path", "key"), [
    (0, "0"), (17, "17"), ((3, 0), "cut:3:0"), ((12, 40), "cut:12:40"),
])
def test_a_path_is_named_by_its_number_or_its_cut_point(path: int | tuple[int, int],
                                                         key: str) -> None:
    assert path_key(path) == key
    made = Path(path, (), "entry", "return", 1)
    assert made.key == key
    assert made.complete is isinstance(path, int)


# -- the CFG and its numbering -----------------------------------------------------------

def test_the_cfg_is_the_one_the_metadata_describes_built_once() -> None:
    meta = _meta("g")
    cfg = cfg_of(meta)
    assert (cfg.num_blocks, cfg.entry, cfg.exit) == (5, 0, 1)
    assert cfg.edges == ((0, 2), (2, 3), (3, 1), (2, 4), (4, 1))
    assert cfg.restarts == ()
    assert cfg_of(meta) is cfg
    assert cfg_of(_meta("h")).restarts == (3, 4)  # the finally and the handler
    assert cfg_of(_meta("f")).backedges == (7, 8)


def test_the_numbering_counts_the_functions_paths_and_is_kept() -> None:
    meta = _meta("f")
    numbering = numbering_of(meta)
    assert numbering.total == 7
    assert numbering_of(meta) is numbering


# -- decoding ----------------------------------------------------------------------------

def test_the_paths_of_a_branch_both_start_at_entry_and_return() -> None:
    assert _all(_meta("g")) == {((2, 3), "entry", "return"), ((2, 4), "entry", "return")}


def test_a_loop_cuts_paths_at_its_back_edges_and_a_raise_ends_one() -> None:
    # blocks: 2 ``n < 0``, 3 the raise, 4 ``range(n)``, 5 the loop's step (its header),
    # 6 ``if i``, 7 ``n += 1``, 8 the return; back edges 7 -> 5 and 6 -> 5
    assert _all(_meta("f")) == {
        ((2, 3), "entry", "raise"),
        ((2, 4, 5, 8), "entry", "return"),
        ((2, 4, 5, 6, 7), "entry", "loop-back"),
        ((2, 4, 5, 6), "entry", "loop-back"),
        ((5, 8), "loop-header", "return"),
        ((5, 6, 7), "loop-header", "loop-back"),
        ((5, 6), "loop-header", "loop-back"),
    }


def test_paths_start_at_handlers_and_a_finally_reraises() -> None:
    # blocks: 2 ``x()``, 3 the finally, 4 the handler, 5 ``return 2``; the finally
    # leaves by re-raising, by the handler's return, or on to ``return 2``
    ends = {"reraise", "return"}
    expected = {((2, 3), "entry", end) for end in ends} | {((2, 3, 5), "entry", "return")}
    expected |= {((3,), "handler", end) for end in ends} | {((3, 5), "handler", "return")}
    expected |= {((4, 3), "handler", end) for end in ends} | {((4, 3, 5), "handler",
                                                                "return")}
    assert _all(_meta("h")) == expected


def test_paths_come_hottest_first_and_ties_by_key() -> None:
    meta = _meta("f")
    paths = decode_paths(meta, {6: 2, 1: 9, 0: 2, 3: 2}, {})
    # keys "0" < "3" < "6" among the counts of 2
    assert [(p.id, p.count) for p in paths] == [(1, 9), (0, 2), (3, 2), (6, 2)]


def test_times_go_with_the_paths_they_were_measured_on() -> None:
    paths = decode_paths(_meta("g"), {0: 3, 1: 1}, {}, times={0: 900})
    assert [(p.id, p.time_ns) for p in paths] == [(0, 900), (1, None)]


def test_a_cut_path_is_the_prefix_that_ends_at_its_block() -> None:
    # g: ENTRY's one edge and ``if a``'s first edge (to block 3) are worth 0, its
    # second (to block 4) NumPaths(3) = 1: the register holds 0 at blocks 2 and 3,
    # 1 at block 4
    paths = decode_paths(_meta("g"), {}, {(2, 0): 4, (3, 0): 2, (4, 1): 1})
    assert [(p.id, p.blocks, p.start, p.end, p.count, p.complete) for p in paths] == [
        ((2, 0), (2,), "entry", "exception", 4, False),
        ((3, 0), (2, 3), "entry", "exception", 2, False),
        ((4, 1), (2, 4), "entry", "exception", 1, False)]


def test_complete_and_cut_paths_are_ordered_together() -> None:
    paths = decode_paths(_meta("g"), {1: 5, 0: 5}, {(2, 0): 5, (4, 1): 6})
    assert [p.key for p in paths] == ["cut:4:1", "0", "1", "cut:2:0"]


def test_nothing_recorded_decodes_to_no_paths() -> None:
    assert decode_paths(_meta("f"), {}, {}) == []


@pytest.mark.parametrize("number", [2, -1, 10**6])
def test_a_number_no_path_has_is_a_value_error(number: int) -> None:
    with pytest.raises(ValueError, match=f"path number {number} is not in 0..1"):
        decode_paths(_meta("g"), {number: 1}, {})


@pytest.mark.parametrize(("cut", "message"), [
    ((9, 0), "no path prefix ends at block 9 with value 0"),
    ((2, 5), "prefix value 5 at block 2 is not a valid path prefix"),
])
def test_a_cut_point_no_prefix_has_is_a_value_error(cut: tuple[int, int],
                                                    message: str) -> None:
    with pytest.raises(ValueError, match=message):
        decode_paths(_meta("g"), {}, {cut: 1})


def test_a_path_that_ends_at_a_back_edge_ends_loop_back() -> None:
    meta = _meta("f")
    assert end_kind(meta, numbering_of(meta), (), PathEnd.BACKEDGE) == "loop-back"


@pytest.mark.parametrize(("flags", "end"), [("raise", "raise"), ("", "reraise"),
                                            ("return", "reraise")])
def test_a_raise_edge_ends_raise_only_from_a_raise_statement(flags: str, end: str) -> None:
    # g with its first return (block 3) made to leave by a "raise" edge
    meta = _meta("g")
    blocks = list(meta.blocks)
    blocks[3] = Block("code", "", (Piece(3, 8, 3, 16, "stmt", flags),))
    edges = list(meta.edges)
    edges[2] = Edge(3, 1, "raise")
    changed = dataclasses.replace(meta, blocks=tuple(blocks), edges=tuple(edges))
    (path,) = decode_paths(changed, {0: 1}, {})
    assert (path.blocks, path.end) == ((2, 3), end)


# -- edge mode ---------------------------------------------------------------------------

def test_edge_counts_are_recovered_from_the_chord_counters() -> None:
    meta = _meta("g", mode="edge")
    counters = meta.edge_counters
    assert counters is not None
    # g ran ``if a`` true once, false twice, and never raised: what every endpoint
    # (the edges, the virtual edges of blocks that could raise, EXIT -> ENTRY) carried
    carried = {(0, 2): 3, (2, 3): 1, (3, 1): 1, (2, 4): 2, (4, 1): 2, (1, 0): 3}
    real = len(meta.edges)
    per_endpoint = [carried.get(end, 0) if i < real or end == (1, 0) else 0
                    for i, end in enumerate(counters.endpoints)]
    slots = {slot: per_endpoint[chord] for slot, chord in enumerate(counters.chords)}
    assert edge_counts(meta, slots) == {0: 3, 1: 1, 2: 1, 3: 2, 4: 2}


def test_edges_that_never_ran_are_left_out_of_edge_counts() -> None:
    meta = _meta("g", mode="edge")
    counters = meta.edge_counters
    assert counters is not None
    assert edge_counts(meta, dict.fromkeys(range(len(counters.chords)), 0)) == {}


def test_edge_counts_of_a_function_not_measured_in_edge_mode_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="g was not measured in edge mode"):
        edge_counts(_meta("g"), {})


# -- conditions --------------------------------------------------------------------------

def test_decision_vectors_read_each_decisions_own_slots() -> None:
    meta = _meta("c", conditions=True)
    first, second = meta.decisions
    # ``a and b`` owns 3 vector slots from its slot on; ``if x`` is counted by its
    # branches (slot -1): its slots are not read
    assert (first.slot, first.vectors, second.slot) == (0, 3, -1)
    slots: dict[int | tuple[int, int], int] = {0: 4, 1: 0, 2: 7, 3: 99, (0, -2): 1,
                                               (1, -1): 0}
    assert decision_vectors(meta, slots) == {(0, 0): 4, (0, 2): 7, (0, -2): 1}


# -- FunctionProfile ---------------------------------------------------------------------

def _profile(name: str = "f", **fields: object) -> FunctionProfile:
    meta = _meta(name)
    profile = FunctionProfile.of("/nowhere/m.py", "hash", meta)
    for field, value in fields.items():
        setattr(profile, field, value)
    return profile


def test_an_empty_profile_names_its_function_and_counts_nothing() -> None:
    profile = _profile("f")
    assert (profile.file, profile.qualname, profile.first_line, profile.source_hash) == (
        "/nowhere/m.py", "f", 7, "hash")
    assert (profile.total, profile.paths_run, profile.paths_possible) == (0, 0, 7)
    assert profile.paths == []
    assert profile.meta is _meta("f")


def test_totals_count_every_execution_and_paths_run_only_complete_ones() -> None:
    profile = _profile("f", counts={0: 3, 4: 2, 5: 0}, cuts={(2, 0): 4})
    assert profile.total == 9
    assert profile.paths_run == 2  # 0 and 4; path 5 counted 0, the cut not complete


def test_block_lines_are_the_first_and_last_line_of_a_blocks_code() -> None:
    profile = _profile("f")
    assert profile.block_lines(3) == (9, 9)  # the raise
    assert profile.block_lines(0) is None  # ENTRY holds no code


def test_adding_sums_every_count_and_keeps_the_union_of_contexts() -> None:
    one = _profile("f", counts={0: 1, 3: 2}, cuts={(2, 0): 1}, times={0: 10},
                   edges={1: 5}, vectors={(0, 1): 2}, raised=1, closed=0,
                   unattributed=2, contexts={0: {"a"}})
    other = _profile("f", counts={3: 4, 6: 1}, cuts={(2, 0): 2}, times={0: 5, 3: 7},
                     edges={1: 1, 2: 3}, vectors={(0, 1): 1, (0, 0): 1}, raised=2,
                     closed=1, unattributed=0, stopped=True,
                     contexts={0: {"b"}, 6: {"a"}})
    one.add(other)
    assert one.counts == {0: 1, 3: 6, 6: 1}
    assert one.cuts == {(2, 0): 3}
    assert one.times == {0: 15, 3: 7}
    assert one.edges == {1: 6, 2: 3}
    assert one.vectors == {(0, 1): 3, (0, 0): 1}
    assert (one.raised, one.closed, one.unattributed, one.stopped) == (3, 1, 2, True)
    assert one.contexts == {0: {"a", "b"}, 6: {"a"}}
    assert other.counts == {3: 4, 6: 1}  # the other is left as it was


def test_stopped_stays_once_any_measurement_stopped() -> None:
    stopped = _profile("f", stopped=True)
    stopped.add(_profile("f"))
    assert stopped.stopped


def test_adding_decodes_the_paths_again() -> None:
    profile = _profile("g", counts={0: 1})
    assert [(p.id, p.count) for p in profile.paths] == [(0, 1)]
    profile.add(_profile("g", counts={1: 3}))
    assert [(p.id, p.count) for p in profile.paths] == [(1, 3), (0, 1)]


def test_a_context_marks_every_path_that_ran_and_no_other() -> None:
    profile = _profile("f", counts={0: 2, 3: 0}, cuts={(2, 0): 1, (5, 0): 0},
                       contexts={0: {"earlier"}})
    profile.mark_context("test_x")
    assert profile.contexts == {0: {"earlier", "test_x"}, (2, 0): {"test_x"}}


def test_a_profile_of_a_module_row_decodes_its_contract_when_first_asked() -> None:
    info = _module()
    contract = ModuleContract("/nowhere/m.py", info.source_hash, Packed(info.encode()))
    profile = FunctionProfile("/nowhere/m.py", "f", 7, info.source_hash, None,
                              module=contract, position=1)
    # the outline is read from the contract's index, without decoding the function
    assert profile.outline == ("f", 7, 7, 9, 11)
    assert profile.info is None
    assert profile.meta.qualname == "f"
    assert profile.meta is profile.info
    assert profile.paths_possible == 7


def test_the_contract_can_be_replaced() -> None:
    profile = _profile("f")
    profile.meta = _meta("g")
    assert profile.meta is _meta("g")
    assert profile.outline[0] == "g"


def test_merging_adds_measurements_of_one_function_and_keeps_others_apart() -> None:
    first = _profile("f", counts={0: 1})
    again = _profile("f", counts={0: 2, 1: 1})
    changed = _profile("f", counts={0: 5})
    changed.source_hash = "another version"
    g = _profile("g", counts={1: 1})
    merged = merge([first, g, again, changed])
    assert [(p.qualname, p.source_hash, p.counts) for p in merged] == [
        ("f", "hash", {0: 3, 1: 1}), ("g", "hash", {1: 1}),
        ("f", "another version", {0: 5})]
    assert merged[0] is first  # the first of each is added to


def test_merging_nothing_gives_nothing() -> None:
    assert merge([]) == []
