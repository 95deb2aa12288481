"""The typed per-function contract (:mod:`pathprof.contract`): what the front end
writes is what every later layer reads back, and nothing else decodes."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pathprof.contract import (
    FORMAT_VERSION,
    Block,
    Compound,
    ContractError,
    CopyShareInfo,
    Edge,
    EdgeCounters,
    EventTables,
    FunctionInfo,
    ModuleInfo,
    Piece,
    Restart,
    ReturnCount,
    Span,
)
from pathprof.data.profile import numbering_of
from pathprof.python.instrument import instrument_source

from .loading import CORPUS

small = st.integers(min_value=0, max_value=40)
words = st.text(alphabet="abcdefgh -:_", max_size=8)
spans = st.builds(Span, small, small, small, small)


@st.composite
def functions(draw: st.DrawFn) -> FunctionInfo:
    nblocks = draw(st.integers(min_value=2, max_value=8))
    block_ids = st.integers(min_value=0, max_value=nblocks - 1)
    pieces = st.builds(Piece, small, small, small, small,
                       st.sampled_from(["stmt", "test", "for-iter", "with-exit"]),
                       st.sampled_from(["", "raise", "return"]))
    edges = draw(st.lists(st.builds(Edge, block_ids, block_ids, words), min_size=1,
                          max_size=12))
    edge_ids = st.integers(min_value=0, max_value=len(edges) - 1)
    maybe_block = st.none() | block_ids
    return FunctionInfo(
        qualname=draw(words), first_line=draw(small), last_line=draw(small),
        code_line=draw(small), is_async=draw(st.booleans()),
        entry=draw(block_ids), exit=draw(block_ids),
        blocks=tuple(draw(st.lists(st.builds(Block, words, words,
                                             st.lists(pieces, max_size=3).map(tuple)),
                                   min_size=nblocks, max_size=nblocks))),
        edges=tuple(edges),
        fall_off=draw(st.dictionaries(edge_ids, words, max_size=3)),
        restarts=tuple(draw(st.lists(st.builds(Restart, block_ids, words), max_size=3))),
        backedges=tuple(draw(st.lists(edge_ids, max_size=3))),
        # arbitrarily large: a function's paths can outnumber any machine integer
        num_paths=draw(st.integers(min_value=1, max_value=1 << 80)),
        counter=draw(st.sampled_from(["array", "dict"])),
        query=tuple(draw(st.lists(st.integers(-5, 1 << 70), min_size=nblocks,
                                  max_size=nblocks))),
        returns=draw(st.dictionaries(block_ids, st.builds(
            ReturnCount, st.sampled_from(["ADD", "COUNT_CONST", "SLOT"]), small), max_size=3)),
        early_returns=frozenset(draw(st.lists(block_ids, max_size=3))),
        compounds=tuple(draw(st.lists(st.builds(
            Compound, st.sampled_from(["for", "with"]), st.booleans(), spans,
            st.none() | spans, st.none() | spans, maybe_block, maybe_block, maybe_block,
            maybe_block), max_size=3))),
        unreachable=tuple(draw(st.lists(block_ids, max_size=2))),
        mode=draw(st.sampled_from(["path", "edge", "events"])),
        calls_only=draw(st.booleans()),
        share=draw(st.none() | st.builds(
            CopyShareInfo, st.lists(st.lists(edge_ids, max_size=3).map(tuple),
                                    min_size=1, max_size=3).map(tuple),
            st.lists(small, min_size=1, max_size=3).map(tuple), small)),
        edge_counters=draw(st.none() | st.builds(
            EdgeCounters, st.lists(block_ids, max_size=3).map(tuple),
            st.lists(st.tuples(block_ids, block_ids), max_size=3).map(tuple),
            st.lists(edge_ids, max_size=3).map(tuple))),
        events=draw(st.none() | st.builds(
            EventTables, st.sampled_from(["statements", "instructions"]),
            st.lists(st.lists(small, max_size=3).map(tuple), min_size=nblocks,
                     max_size=nblocks).map(tuple),
            st.lists(small, min_size=nblocks, max_size=nblocks).map(tuple),
            st.dictionaries(block_ids, small, max_size=2), small)),
    )


@settings(max_examples=150, deadline=None)
@given(functions())
def test_a_function_decodes_to_what_was_encoded(info: FunctionInfo) -> None:
    again = FunctionInfo.decode(info.encode())
    assert again == info
    assert again.encode() == info.encode()
    info.check()  # the strategy draws only valid references


@settings(max_examples=40, deadline=None)
@given(st.lists(functions(), max_size=4), st.none() | st.sampled_from(["statements"]),
       st.booleans())
def test_a_module_decodes_to_what_was_encoded(infos: list[FunctionInfo], events: str | None,
                                              totals_only: bool) -> None:
    module = ModuleInfo("m.py", "m.py:abc", "abc", tuple(infos), events, totals_only)
    assert ModuleInfo.decode(module.encode()) == module


def test_a_module_gives_outlines_without_decoding_a_function() -> None:
    infos = _instrumented()
    module = ModuleInfo.decode(ModuleInfo("m.py", "k", "abc", tuple(infos)).encode())
    outlines = [module.outline(i) for i in range(len(infos))]
    assert outlines == [info.outline for info in infos]
    assert [module.calls_only(i) for i in range(len(infos))] == [False] * len(infos)
    assert module.functions._decoded == [None] * len(infos)  # type: ignore[attr-defined]
    assert list(module.functions) == infos  # and each decodes to what was encoded


def test_a_format_8_module_is_still_read() -> None:
    """Data files written by pathprof before format 9 keep their modules inline."""
    infos = _instrumented()
    text = json.dumps([8, "m.py", "k", "abc", None, 0, [info._row() for info in infos]])
    module = ModuleInfo.decode(text)
    assert list(module.functions) == infos
    assert [module.outline(i) for i in range(len(infos))] == [i.outline for i in infos]


@pytest.mark.parametrize(("change", "message"), [
    (lambda data: data.__setitem__(6, data[6][:-1]), "not a module's metadata"),
    (lambda data: data[6].__setitem__(0, ["f", "1", 1, 1, 1, 0]), "index entry"),
    (lambda data: data.__setitem__(0, 10), "format 10"),
])
def test_a_damaged_module_index_is_refused(change: Any, message: str) -> None:
    infos = _instrumented()
    data = json.loads(ModuleInfo("m.py", "k", "abc", tuple(infos)).encode())
    change(data)
    with pytest.raises(ContractError, match=message):
        ModuleInfo.decode(json.dumps(data)).outline(0)


@pytest.mark.parametrize(("text", "message"), [
    ("{", "not JSON"),
    ("{}", "not a function's metadata"),
    ("[7, []]", "format 7; this pathprof reads formats 8 to 9"),
    ("[9, [1, 2]]", "malformed"),
])
def test_anything_else_is_refused_with_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(ContractError, match=message):
        FunctionInfo.decode(text)


def _instrumented(mode: str = "path", **options: object) -> list[FunctionInfo]:
    path = CORPUS / "withs.py"
    return list(instrument_source(path.read_text(), str(path), mode=mode,
                                  **options).metadata.functions)  # type: ignore[arg-type]


@pytest.mark.parametrize(("field", "value", "message"), [
    ("entry", 10_000, "block number out of range"),
    ("backedges", (10_000,), "edge number out of range"),
    ("query", (), "query increments"),
    ("num_paths", 0, "0 paths"),
    ("edges", (("short",),), "wrong length"),
])
def test_a_damaged_function_fails_its_check(field: str, value: object, message: str) -> None:
    info = _instrumented()[0]
    info.check()
    with pytest.raises(ContractError, match=message):
        dataclasses.replace(info, **{field: value}).check()


@pytest.mark.parametrize(("mode", "options"), [
    ("path", {}), ("edge", {}), ("events", {}), ("path", {"calls_only": {0}}),
    ("path", {"subpaths": True}),
])
def test_what_the_front_end_writes_survives_the_data_file(mode: str, options: dict) -> None:
    infos = _instrumented(mode, **options)
    assert infos
    for info in infos:
        info.check()
        assert FunctionInfo.decode(info.encode()) == info
        assert info.mode == mode
        assert (info.edge_counters is not None) == (mode == "edge")
        assert (info.events is not None) == (mode == "events")
    assert [info.calls_only for info in infos][:2] == [bool(options.get("calls_only")),
                                                        False]


def test_the_numbering_is_built_once_per_function() -> None:
    info = _instrumented()[0]
    first = numbering_of(info)
    assert numbering_of(info) is first
    assert first.total == info.num_paths
    # a copy (as a decode gives) has its own, equal numbering
    again = FunctionInfo.decode(info.encode())
    assert numbering_of(again) is not first
    assert numbering_of(again).total == first.total


def test_the_format_version_leads_the_text() -> None:
    info = _instrumented()[0]
    assert info.encode().startswith(f"[{FORMAT_VERSION},")
