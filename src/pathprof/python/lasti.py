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

import bisect
import dis
from collections.abc import Iterator
from dataclasses import dataclass
from types import CodeType

__all__ = ["keep_last_instruction", "reraises_0"]

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


_PUSH_EXC_INFO = dis.opmap["PUSH_EXC_INFO"]
_CHECK_EXC_MATCH = dis.opmap["CHECK_EXC_MATCH"]
_EXTENDED_ARG = dis.opmap["EXTENDED_ARG"]


def _opcodes(raw: bytes, op: int, start: int, end: int) -> Iterator[int]:
    """The byte offsets in ``[start, end)`` of ``raw`` (``co_code``) where an
    instruction ``op`` is, found by :meth:`bytes.find` instead of decoding each
    instruction: an opcode sits at an even offset, and neither an argument byte
    (odd offsets) nor an inline cache unit (``co_code`` shows caches as zeros,
    opcode 0 being ``CACHE``) can be taken for one there."""
    needle = bytes([op])
    at = raw.find(needle, start, end)
    while at >= 0:
        if at % 2 == 0:
            yield at
            at = raw.find(needle, at + 2, end)
        else:
            at = raw.find(needle, at + 1, end)


def reraises_0(raw: bytes, start: int, end: int) -> Iterator[int]:
    """The byte offsets of the ``RERAISE 0`` instructions in ``[start, end)``."""
    for at in _opcodes(raw, _RERAISE, start, end):
        if raw[at + 1] == 0 and not (at >= 2 and raw[at - 2] == _EXTENDED_ARG):
            yield at


class _Lines:
    """Which code units of a code object have a source line: from ``co_lines()``
    (a few ranges per line), not one position per code unit."""

    def __init__(self, code: CodeType) -> None:
        located = [(start, end) for start, end, line in code.co_lines()
                   if line not in _NO_LINE and end > start]
        self.starts = [start for start, _ in located]
        self.ends = [end for _, end in located]

    def first_located(self, offset: int) -> int:
        """The first byte offset at or after ``offset`` with a source line."""
        index = bisect.bisect_right(self.ends, offset)
        if index == len(self.ends):
            return 1 << 62
        return max(self.starts[index], offset)


def _observer_end(raw: bytes, lines: _Lines, handler: int) -> int | None:
    """If the handler starting at byte offset ``handler`` is pathprof's, the byte
    offset of the instruction that decides it (the ``CHECK_EXC_MATCH`` of an except
    clause, the ``RERAISE 0`` of a finally clause); else None. pathprof's handlers
    are the ones whose code up to there has no source location."""
    if handler >= len(raw) or raw[handler] != _PUSH_EXC_INFO:
        return None
    after = handler + 2
    located = lines.first_located(after)
    ends = [at for at in (next(_opcodes(raw, _CHECK_EXC_MATCH, after, len(raw)), None),
                          next(reraises_0(raw, after, len(raw)), None))
            if at is not None]
    if not ends or min(ends) >= located:
        return None
    return min(ends)


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
    raw = code.co_code
    lines = _Lines(code)
    cleanup_of: dict[int, int] = {}  # observer's handler -> its cleanup (code units)
    for handler in {e.target for e in entries} - {e.target for e in entries if e.lasti}:
        first = _observer_end(raw, lines, handler * 2)
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
    patched = bytearray(raw)
    for e in entries:
        if e.target in cleanup_of:
            e.lasti = True
        elif e.target in cleanups:
            e.depth += 1
            # Every way out of the observer's code (the compiler may copy it)
            for at in reraises_0(raw, e.start * 2, e.end * 2):
                patched[at + 1] = 2
    return code.replace(co_code=bytes(patched), co_exceptiontable=_encode(entries),
                        co_stacksize=code.co_stacksize + 1)
