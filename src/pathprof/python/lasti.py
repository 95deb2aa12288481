"""Observers leave the frame's last instruction where the exception left it.

An exception that passes an ``except`` clause which does not match is re-raised by
the clause's ``RERAISE 0``, and that instruction becomes the frame's last one: the
frame's ``f_lineno`` reads the clause's line from then on (``None`` for pathprof's
observers, which have no location), in a traceback's frame after the frame has
ended, in ``pdb.post_mortem`` and in a tracer's ``return`` event. Without pathprof
the frame would still stand at the instruction the exception came from.

CPython already has the means to keep that instruction (see CPython's
``Objects/exception_handling_notes.txt``): an exception-table entry with the
``lasti`` flag pushes the offset of the instruction that raised below the
exception, and ``RERAISE n`` with ``n > 0`` puts the frame back at the offset found
``n`` items below the exception before raising; ``with`` statements rely on it.
:func:`keep_last_instruction` gives pathprof's observers the same treatment after
the compiler has run:

* every entry whose handler is an observer gets the ``lasti`` flag;
* the observer's cleanup handler (``COPY 3; POP_EXCEPT; RERAISE 1``) keeps one item
  more below it (its depth + 1), the pushed offset;
* each ``RERAISE 0`` of the observer (no clause matched, or the end of a
  ``finally``; the compiler may copy it) becomes ``RERAISE 2``, which finds the
  offset under the previous exception and the exception;
* the code's stack size grows by one.

Offsets of instructions do not change, so line numbers, the block map and the
probes are untouched. An observer is recognised by its code: a handler whose
instructions up to its ``CHECK_EXC_MATCH`` (an ``except`` clause) or its first
``RERAISE 0`` (a ``finally`` clause) have no source location. Only pathprof writes
such handlers: the compiler locates a program's clauses at their source (no code
object of CPython's standard library or its tests has one). The invariant: after
any exception leaves (or passes) an observer, the frame's last instruction is the
one it had when the exception reached the observer.
"""

from __future__ import annotations

import dis
from dataclasses import dataclass
from types import CodeType

__all__ = ["keep_last_instruction"]

_RERAISE = dis.opmap["RERAISE"]
#: Lines pathprof gives its own code: none, or the marker line of test builds.
_NO_LINE = {None, -1, (1 << 30) - 1}


@dataclass
class _Entry:
    """One row of ``co_exceptiontable``; offsets in code units (two bytes)."""

    start: int
    end: int
    target: int
    depth: int
    lasti: bool


def _read_varint(table: bytes, at: int) -> tuple[int, int]:
    value = table[at] & 63
    while table[at] & 64:
        at += 1
        value = (value << 6) | (table[at] & 63)
    return value, at + 1


def _parse(table: bytes) -> list[_Entry]:
    entries = []
    at = 0
    while at < len(table):
        start, at = _read_varint(table, at)
        length, at = _read_varint(table, at)
        target, at = _read_varint(table, at)
        depth_lasti, at = _read_varint(table, at)
        entries.append(_Entry(start, start + length, target, depth_lasti >> 1,
                              bool(depth_lasti & 1)))
    return entries


def _write_varint(value: int, first: bool) -> bytes:
    chunks = [value & 63]
    value >>= 6
    while value:
        chunks.append(value & 63)
        value >>= 6
    chunks.reverse()
    out = bytearray(chunk | 64 for chunk in chunks[:-1])
    out.append(chunks[-1])
    if first:
        out[0] |= 128
    return bytes(out)


def _encode(entries: list[_Entry]) -> bytes:
    out = bytearray()
    for e in entries:
        out += _write_varint(e.start, True)
        out += _write_varint(e.end - e.start, False)
        out += _write_varint(e.target, False)
        out += _write_varint(e.depth << 1 | int(e.lasti), False)
    return bytes(out)


def _observer_end(instructions: list[dis.Instruction], at: dict[int, int],
                  handler: int) -> int | None:
    """If the handler starting at byte offset ``handler`` is pathprof's, the offset
    of the instruction that decides it (the ``CHECK_EXC_MATCH`` of an except clause,
    the ``RERAISE 0`` of a finally clause); else None. pathprof's handlers are the
    ones whose code up to there has no source location."""
    index = at.get(handler)
    if index is None or instructions[index].opname != "PUSH_EXC_INFO":
        return None
    for instruction in instructions[index + 1:]:
        line = instruction.positions.lineno if instruction.positions else None
        if line not in _NO_LINE:
            return None
        if (instruction.opname == "CHECK_EXC_MATCH"
                or (instruction.opname == "RERAISE" and instruction.arg == 0)):
            return instruction.offset
    return None


def keep_last_instruction(code: CodeType) -> CodeType:
    """``code`` and the code objects in its constants, with every observer made to
    keep the frame's last instruction (see the module docstring)."""
    consts = tuple(keep_last_instruction(c) if isinstance(c, CodeType) else c
                   for c in code.co_consts)
    if consts != code.co_consts:
        code = code.replace(co_consts=consts)
    entries = _parse(code.co_exceptiontable)
    if not entries:
        return code
    instructions = list(dis.get_instructions(code))
    at = {ins.offset: i for i, ins in enumerate(instructions)}
    cleanup_of: dict[int, int] = {}  # observer's handler -> its cleanup (code units)
    for handler in {e.target for e in entries} - {e.target for e in entries if e.lasti}:
        first = _observer_end(instructions, at, handler * 2)
        if first is None:
            continue
        # The cleanup is the handler of the entries covering the observer's code.
        covering = {e.target for position in (handler, first // 2) for e in entries
                    if e.start <= position < e.end}
        if len(covering) == 1:
            cleanup_of[handler] = covering.pop()
    if not cleanup_of:
        return code
    cleanups = set(cleanup_of.values())
    raw = bytearray(code.co_code)
    for e in entries:
        if e.target in cleanup_of:
            e.lasti = True
        elif e.target in cleanups:
            e.depth += 1
            # Every way out of the observer's code (the compiler may copy it)
            for ins in instructions[at[e.start * 2]:]:
                if ins.offset >= e.end * 2:
                    break
                if ins.opname == "RERAISE" and ins.arg == 0:
                    assert raw[ins.offset] == _RERAISE
                    assert raw[ins.offset + 1] == 0
                    raw[ins.offset + 1] = 2
    return code.replace(co_code=bytes(raw), co_exceptiontable=_encode(entries),
                        co_stacksize=code.co_stacksize + 1)
