"""Unit tests of :mod:`pathprof.measure.subpath_decoder`, the pure decoder of OSP's
stream. A small module is instrumented for subpaths in memory and run: its functions
call a probe that reads the calling frame, so :meth:`PathDecoder.function`,
:meth:`PathDecoder.frame_prefix` (the blocks a frame has run of its current path, from
its register), :meth:`PathDecoder.path_counted` and :meth:`PathDecoder.call_prefix` are
checked against the blocks of the lines the frame stood at; :meth:`PathDecoder.path`
(the blocks of a path and whether it returns), the stream's block ids
(:meth:`~PathDecoder.block_id`, :meth:`~PathDecoder.idents`, with a-priori costs),
:func:`inside`, :func:`jumps_out`, :func:`register_of` and :func:`track_of` against the
module's contract, worked out by hand from its lines. The module's state is
registered in an empty runtime module list, put back (with the sampler's countdown,
which the module's code counts down) once the file's tests are done."""

from __future__ import annotations

import sys
import textwrap
import types
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from pathprof import runtime
from pathprof.contract import FunctionInfo
from pathprof.measure.subpath_decoder import (
    BlockInfo,
    PathDecoder,
    call_site,
    inside,
    jumps_out,
    register_of,
    track_of,
)
from pathprof.runtime import ModuleState
from pathprof.runtime.subpaths import SubpathSampler
from pathprof.runtime.tracks import Track

from ..loading import load_instrumented

SOURCE = textwrap.dedent('''\
    def two_ways(x, probe):
        if x:
            probe()
            return 1
        probe()
        return 2


    def returns_the_call(probe):
        return probe()


    def raises(x):
        if x:
            raise ValueError(x)
        return 0


    def looping(n, cm):
        t = 0
        for i in range(n):
            with cm:
                t += 1
        return t
''')
# Lines of the blocks, as the front end splits them: two_ways: the test (line 2), the
# true branch (3-4), the false branch (5-6). raises: the test (14), the raise (15), the
# return (16). looping: ``t = 0`` and the loop's iterator (20-21), the loop's header
# (21), the with's entry and body (22-23), the with's exit (22), whose back edge goes
# to the header, and the return (24).
NAME = "pp_subpath_decoder_subject"


@dataclass
class Subject:
    module: types.ModuleType
    state: ModuleState
    index: dict[str, int]

    def function(self, qualname: str) -> FunctionInfo:
        return self.state.meta.functions[self.index[qualname]]

    def block_of_lines(self, qualname: str, first: int, last: int) -> int:
        """The block whose code spans lines ``first..last``."""
        function = self.function(qualname)
        (block,) = [b for b, info in enumerate(function.blocks)
                    if info.lines() == (first, last)]
        return block


@pytest.fixture(scope="module")
def subject(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Subject]:
    path = tmp_path_factory.mktemp("decoder") / "subject.py"
    path.write_text(SOURCE, encoding="utf-8")
    countdown = runtime.countdown[0]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(runtime, "_modules", [])
        patch.setattr(runtime, "_subpath_modules", [])
        patch.setattr(runtime, "longest_path", runtime.longest_path)
        try:
            loaded = load_instrumented(path, NAME, mark_probes=False, subpaths=True)
            loaded.execute()
            (state,) = runtime.modules()
            index = {f.qualname: i for i, f in enumerate(state.meta.functions)}
            yield Subject(loaded.module, state, index)
        finally:
            sys.modules.pop(NAME, None)
            runtime.countdown[0] = countdown


def _lines(subject: Subject, qualname: str, blocks: tuple[int, ...]) -> list[tuple[int, int]]:
    function = subject.function(qualname)
    return [function.blocks[b].lines() for b in blocks]  # type: ignore[misc]


# -- frames ------------------------------------------------------------------------------


def test_a_frame_is_told_its_function_and_its_prefix_through_the_call(subject: Subject) -> None:
    decoder = PathDecoder(SubpathSampler())
    seen: list[tuple[object, tuple[int, ...] | None, int | None, object]] = []

    def probe() -> None:
        frame = sys._getframe(1)
        found = decoder.function(frame)
        assert found is not None
        state, index = found
        seen.append((found, decoder.frame_prefix(frame, state, index), register_of(frame),
                     track_of(frame)))

    assert subject.module.two_ways(1, probe) == 1
    assert subject.module.two_ways(0, probe) == 2
    index = subject.index["two_ways"]
    (through_true, prefix_true, register_true, track_true), (through_false, prefix_false,
                                                             _r, _t) = seen
    assert through_true == through_false == (subject.state, index)
    # called from the true branch: the test, then the branch (lines 2; 3-4)
    assert _lines(subject, "two_ways", prefix_true) == [(2, 2), (3, 4)]  # type: ignore[arg-type]
    assert _lines(subject, "two_ways", prefix_false) == [(2, 2), (5, 6)]  # type: ignore[arg-type]
    assert isinstance(register_true, int)
    assert track_true is None  # blocks are not observed: the frame holds no track


def test_a_frame_of_code_not_instrumented_is_no_function() -> None:
    decoder = PathDecoder(SubpathSampler())
    frame = sys._getframe()
    assert decoder.function(frame) is None
    assert decoder._functions[frame.f_code] is None  # worked out once
    assert register_of(frame) == 0  # keeps no register: 0
    assert track_of(frame) is None


def test_a_call_in_a_returns_value_counted_its_path_before(subject: Subject) -> None:
    decoder = PathDecoder(SubpathSampler())
    told: list[bool] = []

    def probe() -> int:
        frame = sys._getframe(1)
        state, index = decoder.function(frame)  # type: ignore[misc]
        told.append(decoder.path_counted(frame, state, index))
        return 7

    def other_probe() -> None:
        frame = sys._getframe(1)
        state, index = decoder.function(frame)  # type: ignore[misc]
        told.append(decoder.path_counted(frame, state, index))

    assert subject.module.returns_the_call(probe) == 7
    subject.module.two_ways(1, other_probe)  # a call as a statement, not a return's value
    assert told == [True, False]


def test_call_prefix_locates_a_tracks_call_and_keeps_the_answer(subject: Subject) -> None:
    decoder = PathDecoder(SubpathSampler())
    where: list[tuple[types.CodeType, int, int]] = []

    def probe() -> None:
        frame = sys._getframe(1)
        where.append((frame.f_code, frame.f_lasti, register_of(frame)))  # type: ignore[arg-type]

    subject.module.two_ways(0, probe)
    ((code, offset, register),) = where
    track = Track()
    track.state, track.index, track.code = subject.state, subject.index["two_ways"], code
    found = decoder.call_prefix(track, offset, register)
    assert found is not None
    count, idents, prefix = found
    assert _lines(subject, "two_ways", prefix) == [(2, 2), (5, 6)]
    assert count == 2
    assert idents == [0, 1]  # the stream's first two blocks
    assert decoder.call_prefixes[(code, offset, register)] == found


def test_call_prefix_of_an_unreadable_frame_is_none(subject: Subject) -> None:
    decoder = PathDecoder(SubpathSampler())
    track = Track()
    track.state, track.index, track.code = subject.state, subject.index["two_ways"], None
    assert decoder.call_prefix(track, 0, 0) is None


# -- paths, prefixes and block ids ---------------------------------------------------------


def test_the_paths_of_a_function_are_its_blocks_and_whether_they_return(
        subject: Subject) -> None:
    decoder = PathDecoder(SubpathSampler())
    index = subject.index["two_ways"]
    assert subject.function("two_ways").num_paths == 2
    decoded = [decoder.path(subject.state, index, n) for n in range(2)]
    assert sorted((_lines(subject, "two_ways", blocks), returns)
                  for blocks, returns in decoded) == [([(2, 2), (3, 4)], True),
                                                      ([(2, 2), (5, 6)], True)]
    assert decoder.path(subject.state, index, 0) is decoded[0]  # worked out once


def test_a_path_that_raises_does_not_end_the_call(subject: Subject) -> None:
    decoder = PathDecoder(SubpathSampler())
    index = subject.index["raises"]
    ends = {tuple(_lines(subject, "raises", blocks)): returns
            for blocks, returns in (decoder.path(subject.state, index, n)
                                    for n in range(subject.function("raises").num_paths))}
    assert ends == {((14, 14), (15, 15)): False, ((14, 14), (16, 16)): True}


def test_a_prefix_ends_at_its_block(subject: Subject) -> None:
    decoder = PathDecoder(SubpathSampler())
    index = subject.index["two_ways"]
    test = subject.block_of_lines("two_ways", 2, 2)
    assert decoder.prefix(subject.state, index, test, 0) == (test,)  # from ENTRY to it


def test_block_ids_are_given_in_the_order_the_stream_meets_them(subject: Subject) -> None:
    decoder = PathDecoder(SubpathSampler())
    index = subject.index["two_ways"]
    test = subject.block_of_lines("two_ways", 2, 2)
    true_branch = subject.block_of_lines("two_ways", 3, 4)
    false_branch = subject.block_of_lines("two_ways", 5, 6)
    assert decoder.idents(subject.state, index, (test, true_branch)) == [0, 1]
    assert decoder.idents(subject.state, index, (test, false_branch)) == [0, 2]
    assert decoder.idents(subject.state, index, (false_branch,)) == [2]
    file = subject.state.filename
    assert decoder.blocks == [BlockInfo(file, "two_ways", 1, test, (2, 2)),
                              BlockInfo(file, "two_ways", 1, true_branch, (3, 4)),
                              BlockInfo(file, "two_ways", 1, false_branch, (5, 6))]


def test_a_block_of_another_key_is_another_id(subject: Subject) -> None:
    decoder = PathDecoder(SubpathSampler())
    index = subject.index["two_ways"]
    test = subject.block_of_lines("two_ways", 2, 2)
    assert decoder.block_id(subject.state, index, test, 1) == 0
    assert decoder.block_id(subject.state, index, test, 2) == 1
    assert decoder.block_id(subject.state, index, test, 1) == 0
    assert len(decoder.blocks) == 2


def test_block_costs_are_their_statements_up_to_the_highest(subject: Subject) -> None:
    sampler = SubpathSampler(costs={}, highest_cost=1.5)
    decoder = PathDecoder(sampler)
    index = subject.index["looping"]
    first = subject.block_of_lines("looping", 20, 21)  # t = 0, and the iterator: 2 pieces
    last = subject.block_of_lines("looping", 24, 24)  # return t: 1 piece
    ids = decoder.idents(subject.state, index, (first, last))
    assert ids == [0, 1]
    assert sampler.costs == {0: 1.5, 1: 1}
    assert SubpathSampler().costs is None  # no costs asked for: none kept


# -- the contract ------------------------------------------------------------------------------


def test_inside_is_whether_a_blocks_source_lies_in_the_lines(subject: Subject) -> None:
    looping = subject.function("looping")
    header = subject.block_of_lines("looping", 21, 21)
    body = subject.block_of_lines("looping", 22, 23)
    with_exit = subject.block_of_lines("looping", 22, 22)
    assert inside(looping, body, 22, 23)
    assert inside(looping, with_exit, 22, 23)
    assert not inside(looping, header, 22, 23)
    assert inside(looping, header, 21, 24)
    assert not inside(looping, body, 23, 23)  # it starts on line 22
    assert inside(looping, looping.entry, 22, 23)  # no code of its own: inside
    assert inside(looping, looping.exit, 22, 23)


def test_jumps_out_is_a_back_edge_from_inside_to_outside(subject: Subject) -> None:
    looping = subject.function("looping")
    header = subject.block_of_lines("looping", 21, 21)
    body = subject.block_of_lines("looping", 22, 23)
    with_exit = subject.block_of_lines("looping", 22, 22)
    (back,) = looping.backedges
    assert (looping.edges[back].src, looping.edges[back].dst) == (with_exit, header)
    assert jumps_out(looping, with_exit, 22, 23)
    assert not jumps_out(looping, with_exit, 21, 24)  # the header is inside these lines
    assert not jumps_out(looping, header, 22, 23)  # not inside
    assert not jumps_out(looping, body, 22, 23)  # no back edge from it


def test_call_site_is_worked_out_once_per_offset(subject: Subject) -> None:
    offsets: list[tuple[types.CodeType, int]] = []

    def probe() -> None:
        frame = sys._getframe(1)
        offsets.append((frame.f_code, frame.f_lasti))

    subject.module.two_ways(1, probe)
    ((code, offset),) = offsets
    blockmap = subject.state._blockmap(subject.index["two_ways"], code)
    located = call_site(blockmap, offset)
    assert located is not None
    assert located[0] == subject.block_of_lines("two_ways", 3, 4)
    assert blockmap.call_sites[offset] == located
    assert call_site(blockmap, offset) is located


def test_a_withs_normal_exit_follows_its_body(subject: Subject) -> None:
    decoder = PathDecoder(SubpathSampler())
    before: list[tuple[int, ...] | None] = []

    class Manager:
        def __enter__(self) -> None:
            pass

        def __exit__(self, *exc: object) -> None:
            caller = sys._getframe(1)
            state, index = decoder.function(caller)  # type: ignore[misc]
            blockmap = state._blockmap(index, caller.f_code)
            span = blockmap.position(caller.f_lasti)
            compound = blockmap.with_code(caller.f_lasti, span)  # type: ignore[arg-type]
            assert compound is not None
            before.append(decoder.exit_prefix(caller, state, index, blockmap, compound))

    assert subject.module.looping(2, Manager()) == 2
    first, second = before
    # the first turn's path starts at ENTRY; the second's at the header, after the
    # back edge; neither holds the with's exit block (the exit is under way)
    assert _lines(subject, "looping", first) == [(20, 21), (21, 21), (22, 23)]  # type: ignore[arg-type]
    assert _lines(subject, "looping", second) == [(21, 21), (22, 23)]  # type: ignore[arg-type]
