"""Freezing measured code as the program ends (:mod:`pathprof.runtime.shutdown`): every
load of one of pathprof's globals becomes a load of the object the name held, whether
the code is patched a name at a time (``bytearray.replace``) or an instruction at a time."""

from __future__ import annotations

import dis
import opcode
import types
from pathlib import Path
from typing import Any

import pytest

from pathprof.runtime import shutdown

from .loading import corpus_programs, load_instrumented


def _instructions(code: types.CodeType) -> list[Any]:
    """What ``code`` does: each instruction and what its argument resolves to, then
    the same of each code object among its constants."""
    found: list[Any] = [(i.opname, None if isinstance(i.argval, types.CodeType) else i.argval)
                        for i in dis.get_instructions(code)]
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found.append(_instructions(const))
    return found


def _global_loads(code: types.CodeType) -> set[str]:
    loads = {i.argval for i in dis.get_instructions(code) if i.opname == "LOAD_GLOBAL"}
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            loads |= _global_loads(const)
    return loads


@pytest.mark.parametrize("path", corpus_programs(), ids=lambda p: p.stem)
def test_both_ways_of_freezing_load_what_the_names_held(path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    loaded = load_instrumented(path, mark_probes=False)
    loaded.execute()
    names = {name: value for name, value in loaded.module.__dict__.items()
             if name.startswith(shutdown.GLOBAL_PREFIX)}
    assert names
    fast = shutdown.freeze_code(loaded.code, names)
    monkeypatch.setattr(shutdown, "_aligned_only", lambda raw: False)
    slow = shutdown.freeze_code(loaded.code, names)
    assert _instructions(fast) == _instructions(slow)
    assert not _global_loads(fast) & names.keys()
    assert _global_loads(loaded.code) & names.keys()  # (there was something to freeze)


def test_a_load_with_an_extended_argument_is_frozen_an_instruction_at_a_time() -> None:
    """A name past the 128th of a code object is loaded with an EXTENDED_ARG, which the
    bytes of a one-byte LOAD_GLOBAL would not match: that code goes the slow way."""
    names = [f"g{i}" for i in range(200)]
    source = "def f():\n    return (" + ", ".join(names) + ")\n"
    namespace: dict[str, Any] = dict.fromkeys(names, 0)
    exec(compile(source, "<frozen test>", "exec"), namespace)
    marker = object()
    namespace["g150"] = marker
    function = namespace["f"]
    assert not shutdown._aligned_only(bytearray(function.__code__.co_code))
    function.__code__ = shutdown.freeze_code(function.__code__, {"g150": marker})
    namespace["g150"] = None  # as the interpreter's shutdown does
    assert function()[150] is marker
    assert function()[149] == 0


def test_the_fast_way_refuses_code_where_a_load_could_match_inside_an_instruction() -> None:
    caches = bytes(2 * shutdown._GLOBAL_CACHES)
    load = bytes([opcode.opmap["LOAD_GLOBAL"], 4]) + caches
    nop = bytes([opcode.opmap["NOP"], 0])
    assert shutdown._aligned_only(bytearray(nop + load))
    # an argument byte equal to LOAD_GLOBAL's opcode, zeros after it
    odd = bytes([opcode.opmap["LOAD_CONST"], opcode.opmap["LOAD_GLOBAL"]]) + caches
    assert not shutdown._aligned_only(bytearray(odd + load))
    prefixed = bytes([opcode.opmap["EXTENDED_ARG"], 1]) + load
    assert not shutdown._aligned_only(bytearray(nop + prefixed))
