"""What a measured module's conditions count (``--conditions``): the state a module
has only when its decisions are measured (:attr:`pathprof.runtime.ModuleState.conditions`).

The rewritten decisions (:mod:`pathprof.python.conditioncode`) count each evaluation
vector in a module global of their own, ``__@pp_v<slot>__``, with no call: this object
names those globals, reads them (subtracting what a snapshot already took, since a
counter cannot be set back without losing a run counted meanwhile), arms them to
report a vector's first run (:class:`pathprof.runtime.stopping.UnseenVector`), and
counts the evaluations a condition ended by raising, found from the instruction an
exception left.

Invariant: the runs :meth:`Conditions.counts` returns for a slot, summed over every
call with ``reset``, are the runs its counter counted (or kept, once the module was
executed again in the same globals).
"""

from __future__ import annotations

import opcode
import weakref
from collections.abc import Iterable
from types import CodeType, FrameType, TracebackType
from typing import TYPE_CHECKING

from pathprof.runtime import stopping
from pathprof.runtime.blockmap import code_positions

if TYPE_CHECKING:
    from pathprof.runtime import ModuleState

__all__ = ["Conditions"]

#: The instruction an ``assert`` raises its AssertionError with (a decision's
#: conditions hold no raise statement).
_RAISE_VARARGS = bytes([opcode.opmap["RAISE_VARARGS"]])
#: The jumps that ask a value's truth themselves (3.11: no ``TO_BOOL`` before them),
#: located at the whole statement rather than at the value they test.
_TRUTH_JUMPS = frozenset(opcode.opmap[name] for name in (
    "POP_JUMP_FORWARD_IF_FALSE", "POP_JUMP_FORWARD_IF_TRUE", "POP_JUMP_BACKWARD_IF_FALSE",
    "POP_JUMP_BACKWARD_IF_TRUE", "JUMP_IF_FALSE_OR_POP", "JUMP_IF_TRUE_OR_POP")
    if name in opcode.opmap)
_EXTENDED_ARG = opcode.opmap["EXTENDED_ARG"]

_code_positions: weakref.WeakKeyDictionary[CodeType, list[tuple[int | None, ...]]] = (
    weakref.WeakKeyDictionary())


def _holds(outer: CodeType, code: CodeType) -> bool:
    """Whether ``code`` is a comprehension, generator expression or lambda compiled
    within ``outer``'s code (its constants, at any depth through such code)."""
    for const in outer.co_consts:
        if (type(const) is type(outer) and const.co_name.startswith("<")
                and (const is code or _holds(const, code))):
            return True
    return False


def _positions(code: CodeType) -> list[tuple[int | None, ...]]:
    """Each code unit's source position in ``code`` (``co_positions``), kept per code."""
    found = _code_positions.get(code)
    if found is None:
        found = _code_positions[code] = code_positions(code)
    return found


class Conditions:
    """The vector counters of one module's decisions, and what ended evaluations."""

    __slots__ = ("kept", "names", "raises", "slots", "state", "taken")

    def __init__(self, state: ModuleState, vectors: tuple[int, ...]) -> None:
        self.state = state
        first = 0
        slots = []
        for count in vectors:
            slots.append(range(first, first + count))
            first += count
        #: per function, the range of the module's vector counters its decisions own;
        #: counter ``slot`` is the module global ``__@pp_v<slot>__``
        #: (:func:`pathprof.runtime.stopping.vector_runs` reads one)
        self.slots: tuple[range, ...] = tuple(slots)
        #: the names of the counters, by slot
        self.names: tuple[str, ...] = tuple(f"__@pp_v{slot}__" for slot in range(first))
        #: per counter, the runs already taken (a snapshot), subtracted on reading
        self.taken: list[int] = [0] * first
        #: the runs its counters held when its module was executed again in the same
        #: globals (:meth:`keep`); None while it counts
        self.kept: dict[str, int] | None = None
        #: per function: (decision, -1 - condition) -> evaluations that condition
        #: ended by raising (found where the exception is recorded, from the
        #: instruction it left)
        self.raises: tuple[dict[tuple[int, int], int], ...] = tuple({} for _ in vectors)

    def start(self, namespace: dict[str, object] | None, earlier: Iterable[ModuleState],
              switches: Iterable[int]) -> None:
        """Set the counters in the module's globals (``namespace``) to 0, after the
        states of the same globals ``earlier`` (a module executed again:
        ``importlib.reload``) kept what theirs hold, and arm the functions that can
        stop counting."""
        if namespace is not None and self.names:  # (the program may iterate over its
            # globals: a rewritten decision must not add one as it stores)
            for state in earlier:
                if state.conditions is not None and state.namespace is namespace:
                    state.conditions.keep()
            namespace.update(dict.fromkeys(self.names, 0))
            namespace.setdefault("__@pp_d__", None)
        for index in switches:
            self.arm(index)

    def arm(self, index: int) -> None:
        """Hear of each vector of function ``index`` as it next runs."""
        namespace = self.state.namespace
        if index < len(self.slots) and namespace is not None and self.kept is None:
            for slot in self.slots[index]:
                name = self.names[slot]
                namespace[name] = stopping.UnseenVector(
                    self.state, index, slot, stopping.vector_runs(namespace.get(name)))

    def keep(self) -> None:
        """The module is executed again (``importlib.reload``) in the same globals,
        whose vector counters its new state sets to 0 and counts in from then on: this
        state keeps the runs its counters hold now, and reads nothing from them later."""
        namespace = self.state.namespace
        if namespace is None or self.kept is not None:
            return
        self.kept = {name: stopping.vector_runs(namespace.get(name)) for name in self.names}

    def counts(self, index: int, reset: bool) -> dict[int | tuple[int, int], int]:
        """Runs of function ``index``'s vectors since the last reset, by counter
        slot, and its evaluations that a condition ended by raising, by
        ``(decision, -1 - condition)``; with ``reset``, those count as taken."""
        counts: dict[int | tuple[int, int], int] = {}
        namespace = self.state.namespace
        if index >= len(self.slots) or namespace is None:
            return counts
        raises = self.raises[index]
        if raises:
            for key, runs in list(raises.items()):
                if runs:
                    counts[key] = runs
                    if reset:
                        raises[key] -= runs
        names, taken, kept = self.names, self.taken, self.kept
        for slot in self.slots[index]:
            name = names[slot]
            runs = (kept[name] if kept is not None
                    else stopping.vector_runs(namespace.get(name))) - taken[slot]
            if runs:
                counts[slot] = runs
                if reset:
                    taken[slot] += runs
        return counts

    def reset(self) -> None:
        """Take every function's runs so far (counted as taken, returned to nobody)."""
        for index in range(len(self.slots)):
            self.counts(index, reset=True)

    def raised_in(self, index: int, frame: FrameType, tb: TracebackType | None) -> None:
        """An exception whose traceback is ``tb`` is recorded in ``frame``, function
        ``index``'s: the instruction it left is in the frame, or in a comprehension
        or lambda of the function's own (3.11 runs a comprehension in a frame of its
        own)."""
        if tb is None or tb.tb_frame is not frame:
            return
        inner = tb.tb_next
        while inner is not None and _holds(frame.f_code, inner.tb_frame.f_code):
            tb, inner = inner, inner.tb_next
        self.raised(index, tb.tb_frame.f_code, tb.tb_lasti, 1)

    def raised(self, index: int, code: CodeType, lasti: int, count: int) -> None:
        """An exception left instruction ``lasti`` of function ``index``'s ``code``
        ``count`` times: where that instruction lies in a condition, the decision's
        evaluation ended there (in every decision whose condition holds it: one
        inside another's)."""
        state = self.state
        try:
            decisions = state.meta.functions[index].decisions
            if not decisions:
                return
            positions = _positions(code)
            unit = lasti // 2
            if code.co_code[lasti:lasti + 1] == _RAISE_VARARGS:
                return  # an assert's own AssertionError: its test had an outcome
            if 0 <= unit < len(positions) and code.co_code[lasti] in _TRUTH_JUMPS:
                # (3.11: a value's ``__bool__`` raised in the jump that tests it, which
                # is located at the whole statement: the value is the instruction's
                # before, whose inline caches share its position)
                unit -= 1
                while unit > 0 and code.co_code[2 * unit] == _EXTENDED_ARG:
                    unit -= 1
            where = positions[unit] if 0 <= unit < len(positions) else None
            if where is None or None in where:
                return
            line, end_line, col, end_col = where
            raises = self.raises[index]
            for d, decision in enumerate(decisions):
                if not decision.vectors:
                    continue
                for c, span in enumerate(decision.condition_spans):
                    if ((span.line, span.col) <= (line, col)
                            and (end_line, end_col) <= (span.end_line, span.end_col)):
                        raises[(d, -1 - c)] = raises.get((d, -1 - c), 0) + count
        except Exception as err:  # never let profiling change the program's exception
            if state._passes(err):  # (but a signal handler's is the program's)
                raise
