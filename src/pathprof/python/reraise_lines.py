"""The re-raise that ends a ``finally`` keeps the line it has without pathprof.

When an exception passes a ``finally`` clause, the clause's copy for exceptions ends
in a ``RERAISE 0`` that the compiler gives no location of its own: it takes the
location of the instruction before it, the clause's last (CPython's
``Python/flowgraph.c``, ``propagate_line_numbers``; 3.11 gives it the line being
compiled, the same one). That ``RERAISE`` is the frame's last instruction once the
exception has left, so it is the frame's ``f_lineno`` in a traceback's frame, in
``pdb.post_mortem`` and in a tracer's ``return`` event.

pathprof counts a path where the clause ends, so the instruction before the
``RERAISE`` is pathprof's, which has no location, and the frame's ``f_lineno`` read
``None`` where plain Python shows the clause's last line. :func:`locate_reraises`
gives every unlocated ``RERAISE 0`` that pathprof's code stands right before (an
instruction between it and the nearest located one names one of pathprof's ``@pp``
names) the location of that located instruction, which is the program's
instruction the compiler would have taken it from. A plain program's own
unlocated re-raises (the compiler leaves a few, in ``async with`` and ``except*``
code) stay as they are. It runs after :func:`pathprof.python.lasti.keep_last_instruction`, whose
observers' re-raises are ``RERAISE 2`` by then and are left alone.

The location table is read with :meth:`code.co_positions` and written back in the
format of CPython's ``Objects/locations.md`` (3.11 and later); every other
instruction keeps its position exactly (:func:`encode_positions` then
:meth:`code.co_positions` gives the positions back).

Invariant: only the positions of unlocated ``RERAISE 0`` instructions that follow
pathprof's code change, each to the position of the nearest located instruction
before it; code with none of pathprof's names comes back as it is.
"""

from __future__ import annotations

import dis
from collections.abc import Sequence
from types import CodeType

from pathprof.python.lasti import reraises_0

__all__ = ["encode_positions", "locate_reraises"]

Position = tuple[int | None, int | None, int | None, int | None]

#: Lines pathprof gives its own code: none, or the marker line of test builds.
_NO_LINE = {None, -1, (1 << 30) - 1}
_NO_LOCATION, _LONG, _NO_COLUMNS = 15, 14, 13


def _varint(value: int, out: bytearray) -> None:
    while value >= 64:
        out.append(0x40 | (value & 63))
        value >>= 6
    out.append(value)


def _svarint(value: int, out: bytearray) -> None:
    _varint((-value << 1) | 1 if value < 0 else value << 1, out)


def encode_positions(positions: Sequence[Position], first_line: int) -> bytes:
    """A ``co_linetable`` holding ``positions`` (one per code unit), in the long and
    no-location forms only."""
    out = bytearray()
    line = first_line
    index = 0
    while index < len(positions):
        position = positions[index]
        end = index + 1
        while end < len(positions) and end - index < 8 and positions[end] == position:
            end += 1
        start_line, end_line, col, end_col = position
        length = end - index - 1
        if start_line is None:
            out.append(0x80 | _NO_LOCATION << 3 | length)
        elif col is None or end_col is None or end_line is None:
            out.append(0x80 | _NO_COLUMNS << 3 | length)
            _svarint(start_line - line, out)
            line = start_line
        else:
            out.append(0x80 | _LONG << 3 | length)
            _svarint(start_line - line, out)
            _varint(end_line - start_line, out)
            _varint(col + 1, out)
            _varint(end_col + 1, out)
            line = start_line
        index = end
    return bytes(out)


def locate_reraises(code: CodeType) -> CodeType:
    """``code`` and the code objects in its constants, with every ``RERAISE 0`` that
    has no location given the location of the nearest located instruction before it."""
    consts = tuple(locate_reraises(c) if isinstance(c, CodeType) else c
                   for c in code.co_consts)
    if consts != code.co_consts:
        code = code.replace(co_consts=consts)
    raw = code.co_code
    original: list[Position] | None = None
    positions: list[Position] = []
    for at in reraises_0(raw, 0, len(raw)):
        if original is None:
            original = list(code.co_positions())
            positions = list(original)
            own = _own_units(code)
        unit = at // 2
        if original[unit][0] not in _NO_LINE:
            continue
        before = unit - 1
        while before >= 0 and original[before][0] in _NO_LINE:
            before -= 1
        # only where pathprof's code stands between: the compiler leaves some of a
        # plain program's re-raises without a line, and so must pathprof
        if before >= 0 and any(u in own for u in range(before + 1, unit)):
            positions[unit] = original[before]
    if original is None or positions == original:
        return code
    return code.replace(co_linetable=encode_positions(positions, code.co_firstlineno))


def _own_units(code: CodeType) -> set[int]:
    """The code units of instructions that name one of pathprof's own names (every
    one has ``@pp`` in it, which no Python identifier can; a constant string too): what
    :func:`dis.get_instructions` tells of each instruction's ``argval``, read from the
    raw code at a tenth of its cost (``tests/python/test_reraise_lines.py`` compares
    the two on the standard library)."""
    own_names = {i for i, name in enumerate(code.co_names) if "@pp" in name}
    own_consts = {i for i, value in enumerate(code.co_consts)
                  if type(value) is str and "@pp" in value}
    local_names = code.co_varnames + code.co_cellvars + code.co_freevars
    if not own_names and not own_consts and not any("@pp" in name for name in local_names):
        return set()
    raw = code.co_code
    found = set()
    extended = 0
    for at in range(0, len(raw), 2):
        op, arg = raw[at], raw[at + 1] | extended
        extended = arg << 8 if op == _EXTENDED_ARG else 0
        if op in _NAME_OPS:
            if (arg >> _NAME_SHIFT.get(op, 0)) in own_names:
                found.add(at // 2)
        elif op in _CONST_OPS:
            if arg in own_consts:
                found.add(at // 2)
        elif op in _LOCAL_OPS:
            indexes = (arg >> 4, arg & 15) if op in _TWO_LOCALS else (arg,)
            if any("@pp" in code._varname_from_oparg(i)  # type: ignore[attr-defined]
                   for i in indexes):
                found.add(at // 2)
    return found


_EXTENDED_ARG = dis.opmap["EXTENDED_ARG"]
_NAME_OPS = frozenset(dis.hasname)
_CONST_OPS = frozenset(dis.hasconst)
_LOCAL_OPS = frozenset(dis.haslocal) | frozenset(dis.hasfree)
#: instructions whose argument holds two locals' indexes, four bits each (3.13 on)
_TWO_LOCALS = frozenset(dis.opmap[name] for name in (
    "LOAD_FAST_LOAD_FAST", "STORE_FAST_LOAD_FAST", "STORE_FAST_STORE_FAST",
    "LOAD_FAST_BORROW_LOAD_FAST_BORROW") if name in dis.opmap)
#: instructions whose name index is shifted past flag bits (as :mod:`dis` reads them)
_NAME_SHIFT = {dis.opmap[name]: shift for name, shift in (
    ("LOAD_GLOBAL", 1), *((("LOAD_ATTR", 1), ("LOAD_SUPER_ATTR", 2))
                          if "LOAD_SUPER_ATTR" in dis.opmap else ()))
    if name in dis.opmap}
