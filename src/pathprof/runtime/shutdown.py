"""Measured code that runs while the interpreter shuts down behaves as the original
(standard library only).

Instrumented functions read pathprof's names (``_@pp_c3``, the module state
``_@pp_m``...) as globals of their module: the fast path is a global load. As the
interpreter shuts down it sets every module's globals to None, and code that runs
after that (a ``__del__``, an ``IOBase.close()``, a weakref callback, a generator
closed as it is collected) would fail on pathprof's names where the original code
does not fail at all.

Once the last save is made nothing counted matters any more: :func:`freeze` gives
every instrumented function a copy of its code whose loads of pathprof's globals
load the objects those names hold then, as constants (the copy of each function
defined inside it too, so functions made later are frozen as well). The bytecode
is changed in place, instruction for instruction: a ``LOAD_GLOBAL`` (with its
inline cache) becomes a ``LOAD_CONST`` (with ``PUSH_NULL`` before or after it
where the global was to be called, as each Python version orders them) padded
with ``NOP``; offsets, line numbers and the exception table are unchanged. Most code
objects are patched a name at a time by ``bytearray.replace`` (in C), where the bytes of
a LOAD_GLOBAL cannot match anything else in that code; the others an instruction at a
time.

A generator or coroutine suspended at that moment keeps the code it runs: those
take what they need into locals as they start (:mod:`pathprof.python.generator_globals`).

Invariant: a frozen function loads, for each pathprof name, the object the name was
bound to in its module when :func:`freeze` ran; nothing else in its code differs.
"""

from __future__ import annotations

import gc
import opcode
import sys
from types import CodeType, FunctionType
from typing import Any

__all__ = ["freeze", "freeze_code"]

#: The prefix of pathprof's module globals.
GLOBAL_PREFIX = "_@pp_"

_LOAD_GLOBAL = opcode.opmap["LOAD_GLOBAL"]
_LOAD_CONST = opcode.opmap["LOAD_CONST"]
_PUSH_NULL = opcode.opmap["PUSH_NULL"]
_EXTENDED_ARG = opcode.opmap["EXTENDED_ARG"]
_NOP = opcode.opmap["NOP"]
#: 3.11 and 3.12 push the NULL of a global that is called before it, 3.13 after.
_NULL_FIRST = sys.version_info < (3, 13)
_CACHES = opcode._inline_cache_entries  # type: ignore[attr-defined]


def _caches(op: int) -> int:
    if isinstance(_CACHES, dict):
        return int(_CACHES.get(opcode.opname[op], 0))
    return int(_CACHES[op])


#: The inline cache units that follow a LOAD_GLOBAL.
_GLOBAL_CACHES = _caches(_LOAD_GLOBAL)


def _load_globals(raw: bytearray) -> list[int]:
    """The offsets of the LOAD_GLOBAL instructions in ``raw`` (a code object's
    ``co_code``), found without decoding every instruction: an instruction's
    opcode sits at an even offset, and neither an argument byte (odd offsets) nor
    an inline cache unit (``co_code`` shows caches as zeros, opcode 0 being
    ``CACHE``) can be taken for one at an even offset."""
    found = []
    needle = bytes([_LOAD_GLOBAL])
    offset = raw.find(needle)
    while offset >= 0:
        if offset % 2 == 0:
            found.append(offset)
            offset = raw.find(needle, offset + 2)
        else:
            offset = raw.find(needle, offset + 1)
    return found


#: The bytes of a LOAD_GLOBAL of each argument below 256 (with its zeroed caches).
_SITES: dict[int, bytes] = {}
_GLOBAL_CACHE_BYTES = bytes(2 * _GLOBAL_CACHES)
_LOAD_GLOBAL_BYTE = bytes([_LOAD_GLOBAL])
_PREFIXED_LOAD = bytes([_EXTENDED_ARG, _LOAD_GLOBAL])
#: Each patch of the fast path, by (constant slot, called): its bytes, and whether
#: its argument bytes hold a LOAD_GLOBAL opcode.
_PATCHES: dict[tuple[int, int], tuple[bytes, bool]] = {}
#: A match at an argument byte would have these at the following argument bytes.
_ODD_ZEROS = bytes(_GLOBAL_CACHES)


def _aligned_only(raw: bytearray) -> bool:
    """Whether ``bytearray.replace`` of a LOAD_GLOBAL's bytes (opcode, argument, its
    zeroed caches) can only match whole LOAD_GLOBALs of ``raw``: no LOAD_GLOBAL has an
    EXTENDED_ARG (``raw``'s opcodes hold no EXTENDED_ARG followed by a LOAD_GLOBAL),
    and no match can start at an argument byte (``raw``'s argument bytes hold no
    LOAD_GLOBAL opcode followed by as many zeros as a match has at those places)."""
    return (_PREFIXED_LOAD not in raw[0::2]
            and _LOAD_GLOBAL_BYTE + _ODD_ZEROS not in raw[1::2])


def _replaced(code: CodeType, raw: bytearray, targets: set[int], names: dict[str, Any],
              consts: list[Any]) -> bytearray | None:
    """``raw`` with every LOAD_GLOBAL of a name in ``names`` replaced, in C, pattern by
    pattern (a code object holds a few of pathprof's names, loaded at many places);
    its values appended to ``consts``. None where :func:`_aligned_only` does not hold
    (then nothing is appended, and the caller goes an instruction at a time). It is
    checked again after a replacement only where the patch has a LOAD_GLOBAL opcode
    among its argument bytes: a patch's opcodes are never zero (CACHE), so no other
    patch can complete a match that starts before it."""
    if not _aligned_only(raw):
        return None
    for index in targets:
        slot = None
        for called in (0, 1):
            arg = index << 1 | called
            if arg > 0xFF:  # needs an EXTENDED_ARG, which no LOAD_GLOBAL here has
                continue
            old = _SITES.get(arg)
            if old is None:
                old = _SITES[arg] = bytes([_LOAD_GLOBAL, arg]) + _GLOBAL_CACHE_BYTES
            if old not in raw:
                continue
            if slot is None:
                slot = len(consts)
                consts.append(names[code.co_names[index]])
            key = (slot, called)
            found = _PATCHES.get(key)
            if found is None:
                patch = _patch(slot, bool(called), len(old))
                found = _PATCHES[key] = (patch, _LOAD_GLOBAL_BYTE in patch[1::2])
            patch, recheck = found
            if patch:
                raw = raw.replace(old, patch)
                if recheck and not _aligned_only(raw):
                    del consts[len(code.co_consts):]
                    return None
    return raw


def _patch(slot: int, called: bool, room: int) -> bytes:
    """The ``room`` bytes that load constant ``slot`` in place of a LOAD_GLOBAL (its
    NULL too when ``called``), padded with NOPs; empty when they do not fit."""
    units = _arg_units(slot, _LOAD_CONST)
    if called:
        units = [(_PUSH_NULL, 0), *units] if _NULL_FIRST else [*units, (_PUSH_NULL, 0)]
    if 2 * len(units) > room:
        return b""
    units += [(_NOP, 0)] * (room // 2 - len(units))
    return bytes(byte for unit in units for byte in unit)


def _arg_units(value: int, op: int) -> list[tuple[int, int]]:
    """``op`` with argument ``value``, with the EXTENDED_ARG prefixes it needs."""
    units = []
    shift = 8
    while value >> shift:
        shift += 8
    while shift > 8:
        shift -= 8
        units.append((_EXTENDED_ARG, (value >> shift) & 0xFF))
    units.append((op, value & 0xFF))
    return units


def freeze_code(code: CodeType, names: dict[str, Any],
                done: dict[int, CodeType] | None = None) -> CodeType:
    """``code`` (and every code object among its constants) with its loads of the
    globals in ``names`` made loads of their values (see the module docstring);
    ``code`` itself where nothing changes."""
    done = {} if done is None else done
    known = done.get(id(code))
    if known is not None:
        return known
    consts = list(code.co_consts)
    changed = False
    for i, const in enumerate(consts):
        if isinstance(const, CodeType):
            frozen = freeze_code(const, names, done)
            if frozen is not const:
                consts[i] = frozen
                changed = True
    targets = {i for i, name in enumerate(code.co_names) if name in names}
    raw = bytearray(code.co_code)
    replaced = _replaced(code, raw, targets, names, consts) if targets else None
    if replaced is not None:
        raw, changed = replaced, changed or replaced != raw
    elif targets:  # an instruction at a time
        slots: dict[int, int] = {}
        patches: dict[tuple[int, int, int], bytes] = {}
        for offset in _load_globals(raw):
            first = offset
            arg = raw[offset + 1]
            shift = 8
            while first >= 2 and raw[first - 2] == _EXTENDED_ARG:
                first -= 2
                arg |= raw[first + 1] << shift
                shift += 8
            if arg >> 1 not in targets:
                continue
            value = names[code.co_names[arg >> 1]]
            slot = slots.get(id(value))
            if slot is None:
                slot = slots[id(value)] = len(consts)
                consts.append(value)
            room = offset + 2 + 2 * _GLOBAL_CACHES - first
            key = (slot, arg & 1, room)
            patch = patches.get(key)
            if patch is None:
                patch = patches[key] = _patch(slot, bool(arg & 1), room)
            if patch:
                raw[first:first + room] = patch
                changed = True
    frozen = code.replace(co_code=bytes(raw), co_consts=tuple(consts)) if changed else code
    done[id(code)] = frozen
    return frozen


def _names_in(namespace: dict[str, Any]) -> dict[str, Any]:
    """pathprof's globals in a module's ``namespace``, with what each holds."""
    return {name: value for name, value in namespace.items()
            if type(name) is str and name.startswith(GLOBAL_PREFIX)}


def freeze() -> int:
    """Freeze every instrumented function (one whose module holds pathprof's state,
    ``_@pp_m``): see the module docstring. Returns how many were changed. Never
    raises: it runs as the program ends."""
    changed = 0
    try:
        # per module: its names, and each code object frozen (once, however many
        # functions run it or hold it among their constants)
        modules: dict[int, tuple[dict[str, Any], dict[int, CodeType]]] = {}
        for obj in gc.get_objects():
            if type(obj) is not FunctionType:
                continue
            namespace = obj.__globals__
            if namespace.get(GLOBAL_PREFIX + "m") is None:
                continue
            module = modules.get(id(namespace))
            if module is None:
                module = modules[id(namespace)] = (_names_in(namespace), {})
            code = obj.__code__
            frozen = freeze_code(code, *module)
            if frozen is not code:
                try:
                    obj.__code__ = frozen
                except ValueError:  # (a closure's free variables: never differ)
                    continue
                changed += 1
    except Exception:
        pass
    return changed
