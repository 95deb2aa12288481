"""An independent statement counter for event counts: ``sys.settrace`` with opcode
events over the *uninstrumented* program.

Each executed instruction is mapped to the piece of a block it belongs to (a simple
statement, or a compound statement's header) by its source position; a piece
*starts* when control moves to it from another piece, or jumps back to its first
instruction. Its events (weights from the metadata: 1 per statement, or the
instructions of the piece) are then added to the function's self count and the
thread's running total. An activation (a call, or a generator's run between resume
and suspension) adds the growth of the thread total to the function's inclusive
count unless an outer activation of the same function is on the thread's stack. A ``yield from``
or ``await`` ends the activation as it starts delegating, and a new one starts as
control is back in the frame's own code (pathprof's definition: the delegated code
counts in its own functions).

Nothing here reads pathprof's registers, increments, query increments or counters.
"""

from __future__ import annotations

import dis
import sys
import threading
import types
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pathprof.python.instrument import instrument_source
from pathprof.runtime.blockmap import BlockMap

from .oracles import _BOOKKEEPING_OPS

_SUSPEND_OPS = {"YIELD_VALUE", "SEND"}
#: Exception-handling plumbing: CPython locates it at a neighbouring statement (3.11
#: puts PUSH_EXC_INFO at the try body's last statement), but it starts none.
_PLUMBING_OPS = {"PUSH_EXC_INFO", "POP_EXCEPT", "CHECK_EXC_MATCH", "CHECK_EG_MATCH",
                 "RERAISE", "WITH_EXCEPT_START", "CLEANUP_THROW", "PREP_RERAISE_STAR",
                 "CALL_INTRINSIC_1"}  # 3.12: a generator's StopIteration guard


@dataclass
class _Function:
    meta: dict[str, Any]
    code: types.CodeType
    weights: list[list[int]] = field(init=False)
    pieces: dict[int, tuple[int, int]] = field(init=False)
    first: dict[tuple[int, int], int] = field(init=False)

    def __post_init__(self) -> None:
        self.weights = self.meta.events.pieces
        blockmap = BlockMap(self.meta, self.code)
        self.pieces = {}
        self.first = {}
        jumps_only: dict[tuple[int, int], list[int]] = {}
        for offset in range(0, len(self.code.co_code), 2):
            if blockmap.positions[offset // 2][0] is None:
                # The compiler's own plumbing at no location (the cleanup that
                # unbinds an ``except ... as name`` as an exception leaves the
                # clause): it starts no piece.
                continue
            located = blockmap.locate_piece(offset)
            if located is None:
                continue
            key = (located[0], located[1])
            op = blockmap.opname(offset)
            prefixed = offset
            while op == "EXTENDED_ARG" and prefixed + 2 < len(self.code.co_code):
                # The tracer reports a prefixed instruction at its prefix (3.11: the
                # FOR_ITER of a loop whose exit is far away): the two are one.
                prefixed += 2
                op = blockmap.opname(prefixed)
            if op in _PLUMBING_OPS:
                continue
            if op in _BOOKKEEPING_OPS:
                # A piece that is nothing but its jump (break, continue, a `while
                # True:` header on 3.12) starts with it.
                jumps_only.setdefault(key, []).append(offset)
                continue
            self.pieces[offset] = key
            self.first.setdefault(key, offset)
        for key, offsets in jumps_only.items():
            if key not in self.first:
                for offset in offsets:
                    self.pieces[offset] = key
                self.first[key] = offsets[0]


@dataclass
class _Frame:
    key: tuple[int, int] | None = None
    offset: int = -1
    #: the activation's entry on the thread's stack, while it is open
    active: bool = False
    #: in a ``yield from`` or ``await``: the activation ended as it began
    delegating: bool = False


#: Instructions of a ``yield from``/``await`` loop (send, suspend, resume, repeat).
_DELEGATION_OPS = {"SEND", "YIELD_VALUE", "RESUME", "JUMP_BACKWARD_NO_INTERRUPT", "END_SEND",
                   "CLEANUP_THROW", "JUMP_BACKWARD"}


class StatementCounter:
    """Count events of the given functions (metadata, plain code object) by tracing."""

    def __init__(self, functions: list[tuple[dict[str, Any], types.CodeType]],
                 probe: Any = None) -> None:
        # By where the code comes from, not by identity: a module imported afresh
        # (or from its .pyc) runs code objects equal to these.
        self.by_code = {_code_key(code): _Function(meta, code) for meta, code in functions}
        self.self_counts: Counter[str] = Counter()
        self.inclusive: Counter[str] = Counter()
        self.thread_totals: Counter[Any] = Counter()
        self.frames: dict[int, _Frame] = {}
        self.stacks: dict[Any, list[tuple[str, int]]] = defaultdict(list)
        #: with ``probe`` (a code object): the thread's total at each call of it
        self.probe = probe
        self.probes: list[int] = []

    def run(self, fn: Callable[[], Any]) -> Any:
        old = sys.gettrace()
        here = sys._getframe()
        here.f_trace_opcodes = True
        threading.settrace(self._global)
        sys.settrace(self._global)
        try:
            return fn()
        finally:
            sys.settrace(old)
            threading.settrace(None)  # type: ignore[arg-type]
            here.f_trace_opcodes = False

    def _global(self, frame: Any, event: str, arg: Any) -> Any:
        if self.probe is not None and frame.f_code is self.probe and event == "call":
            self.probes.append(self.thread_totals[_thread_key()])
            return None
        function = self.by_code.get(_code_key(frame.f_code))
        if function is None:
            return None
        frame.f_trace = self._local
        frame.f_trace_opcodes = True
        self._event(function, frame, event)
        return self._local

    def _local(self, frame: Any, event: str, arg: Any) -> Any:
        function = self.by_code.get(_code_key(frame.f_code))
        if function is not None:
            self._event(function, frame, event)
        return self._local

    @staticmethod
    def _implicit(function: _Function, frame: Any) -> bool:
        """An await of ``async for`` or ``async with``, which pathprof does not treat
        as a hand-over (documented: the inclusive count then includes what other
        tasks run while the coroutine waits there)."""
        key = function.pieces.get(frame.f_lasti)
        if key is None:
            return False
        role = function.meta.blocks[key[0]].pieces[key[1]].role
        return role in ("for-next", "with-enter", "with-exit")

    def _open(self, thread: Any, name: str, state: _Frame) -> None:
        self.stacks[thread].append((name, self.thread_totals[thread]))
        state.active = True

    def _close(self, thread: Any, name: str, state: _Frame) -> None:
        if not state.active:
            return
        state.active = False
        stack = self.stacks[thread]
        _, start = stack.pop()
        if all(outer != name for outer, _ in stack):
            self.inclusive[name] += self.thread_totals[thread] - start

    def _event(self, function: _Function, frame: Any, event: str) -> None:
        thread = _thread_key()
        name = function.meta.qualname
        state = self.frames.setdefault(id(frame), _Frame())
        if event == "call":  # a call, or a generator resumed
            if not state.delegating:
                self._open(thread, name, state)
            return
        code = frame.f_code.co_code
        op = dis.opname[code[frame.f_lasti]] if frame.f_lasti >= 0 else "NOP"
        if event == "return":  # a return, a suspension, or an exception leaving
            self._close(thread, name, state)
            suspended = op in _SUSPEND_OPS or (
                op == "RESUME" and frame.f_lasti >= 2
                and dis.opname[code[frame.f_lasti - 2]] == "YIELD_VALUE")
            if not suspended:
                self.frames.pop(id(frame), None)
            return
        if event != "opcode":
            return
        if op == "SEND" and not state.delegating and not self._implicit(function, frame):
            self._close(thread, name, state)
            state.delegating = True
        elif state.delegating and op not in _DELEGATION_OPS:
            state.delegating = False
            self._open(thread, name, state)
        offset = frame.f_lasti
        key = function.pieces.get(offset)
        if key is None:
            return
        if key != state.key or (offset == function.first[key] and offset <= state.offset):
            weight = function.weights[key[0]][key[1]]
            self.self_counts[name] += weight
            self.thread_totals[thread] += weight
        state.key = key
        state.offset = offset


def _code_key(code: types.CodeType) -> tuple[str, str, int]:
    return (code.co_filename, code.co_qualname, code.co_firstlineno)


def _thread_key() -> Any:
    """The running thread, by its object (an ident can be reused by a later thread)."""
    return threading.current_thread()


def plain_functions(path: Path, kind: str = "statements"
                    ) -> tuple[types.ModuleType, list[tuple[dict[str, Any], types.CodeType]]]:
    """A plain (uninstrumented) module for ``path`` and its functions' metadata, from
    event-mode instrumentation of the same source, paired with their plain code."""
    source = path.read_text(encoding="utf-8")
    metadata = instrument_source(source, str(path), mode="events", events=kind).metadata
    code = compile(source, str(path), "exec", dont_inherit=True)
    codes = {}
    stack = [code]
    while stack:
        current = stack.pop()
        codes[(current.co_qualname, current.co_firstlineno)] = current
        stack.extend(c for c in current.co_consts if isinstance(c, types.CodeType))
    module = types.ModuleType(f"pathprof_plain_events_{path.stem}")
    module.__file__ = str(path)
    sys.modules[module.__name__] = module
    module.__dict__["__pathprof_code__"] = code
    functions = [(meta, codes[(meta.qualname, meta.code_line)])
                 for meta in metadata.functions]
    return module, functions
