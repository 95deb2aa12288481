"""What runs inside the program when it counts events: per-thread tables, exceptions,
suspensions, budgets. Standard library only (plus :mod:`pathprof.runtime` and the
stdlib-only :mod:`pathprof.runtime.blockmap`, loaded on the first exception or query).

Layout. Every thread has one list ``t`` (``local.t``): ``t[0]`` is the events its
finished calls ran, ``t[offset + i]`` the inclusive count of function ``i`` of the
module registered at ``offset`` (instrumented code reads that slot from the module's
name ``_@pp_g<i>``, in its holder: :mod:`pathprof.runtime.holder`). Self counts are
per module and shared by the threads (``module.self_counts[i]``): ``list[i] += n``
is one subscript, one add and one store, which CPython with the GIL never
interleaves with another thread's (see :mod:`pathprof.runtime`).

One thread. Looking up ``local.t`` costs a call about as much as the rest of its
hand-over, so while the process runs one thread, every module's name ``_@pp_G``
holds that thread's table and instrumented code takes it from there (``_@pp_G or
_@pp_L.t``). Starting a thread sets ``_@pp_G`` to None everywhere first: the thread
start functions of :mod:`_thread` and :mod:`threading` are wrapped for that (see
:func:`_watch_thread_starts`), and a process that already runs several threads when
this module is loaded starts with None. A forked child runs one thread again.

Exceptions. As an exception leaves a function, its observer appends a note to
:data:`pending` with C calls only (nothing that can raise anew, not even at the
recursion limit); :func:`drain` turns the notes into counts before any count is
read or added to -- each ``finally`` that hands a count over checks :data:`pending`
first -- so the notes of one thread are applied in the order they were made.
"""

from __future__ import annotations

import builtins
import sys
import threading
from types import FrameType
from typing import TYPE_CHECKING, Any

from pathprof.contract import EventTables
from pathprof.runtime import (
    InstrumentedModule,
    _raised_before,
    _wrapped,
    assign,
    program_names,
    registers,
)
from pathprof.runtime.holder import names_of
from pathprof.runtime.passthrough import SafeLock

if TYPE_CHECKING:
    from collections.abc import Callable
    from types import CodeType, ModuleType
    from typing import TypeAlias

    from pathprof.runtime.instrumented import _Sink

    #: An exit note (see :data:`pending`).
    Pending: TypeAlias = tuple["EventModule", int, int | None, int | None, int, CodeType, int,
                               list[int] | _Sink, int | None]

__all__ = ["EventBudgetExceeded", "EventModule", "assign", "drain", "local", "modules",
           "pending", "program_names", "register", "registers"]

#: What instrumented code calls as an exception leaves a function: C functions only.
exception = sys.exception
getframe = sys._getframe
getattr = builtins.getattr

#: Exit notes: (module, function, register, exact count or None, lasti, code,
#: context lasti, thread table, the activation's base or None (see
#: :meth:`EventModule.pause`)).
pending: list[Pending] = []
_modules: list[EventModule] = []
_tables: list[list[int]] = []
_size = [1]  # length of a thread table
_lock = SafeLock()  # (no signal handler's exception leaves it held)
_budgets_active = [0]
#: the table of the one thread running, or None once a second may run (see above)
_single: list[list[int] | None] = [None]


class EventBudgetExceeded(Exception):
    """Raised by :func:`pathprof.events.budget` when the code inside ran too many events."""

    def __init__(self, count: int, limit: int) -> None:
        super().__init__(f"the code ran {count:,} events, more than its budget of {limit:,}")
        self.count = count
        self.limit = limit


class _ThreadTable(threading.local):
    """``local.t``: the calling thread's table, made on its first use."""

    def __init__(self) -> None:
        with _lock:
            self.t = [0] * _size[0]
            _tables.append(self.t)
        #: this thread's budgets: [still armed, its thread total at start, the frame of
        #: its with statement, that frame's count at start, limit, exact count at start]
        #: (Any: a record of mixed types, a list so that it is switched off in place;
        #: written by pathprof.events.budget)
        self.budgets: list[list[Any]] = []


local = _ThreadTable()


def _set_single(table: list[int] | None) -> None:
    """Point every module's ``_@pp_G`` at ``table`` (None: look the table up)."""
    with _lock:
        _single[0] = table
        for state in _modules:
            state.globals["_@pp_G"] = table


def _several_threads() -> None:
    if _single[0] is not None:
        _set_single(None)


def _watch_thread_starts() -> None:
    """Wrap the functions that start threads so that a second thread never finds
    ``_@pp_G`` set: :mod:`threading` calls its own reference to them (3.11, 3.12:
    ``_start_new_thread``; 3.13: ``_start_joinable_thread``), other code
    :mod:`_thread`'s. Threads started by C code, or through a reference taken
    before this module was loaded, are not seen (docs/events.md)."""
    import _thread

    for owner, names in ((_thread, ("start_new_thread", "start_new", "start_joinable_thread")),
                         (threading, ("_start_new_thread", "_start_joinable_thread"))):
        for name in names:
            original = getattr(owner, name, None)
            if original is None or getattr(original, "_pathprof_watch", False):
                continue

            def start(*args: object, _original: Callable[..., object] = original,
                      **kwargs: object) -> object:
                _several_threads()
                return _original(*args, **kwargs)

            start._pathprof_watch = True  # type: ignore[attr-defined]
            start.__name__ = getattr(original, "__name__", name)
            start.__doc__ = original.__doc__
            setattr(owner, name, start)


_watch_thread_starts()
if threading.active_count() == 1 and len(sys._current_frames()) == 1:
    _single[0] = local.t


class EventModule(InstrumentedModule):
    """The event counts of one instrumented module."""

    _budget_error = EventBudgetExceeded

    def __init__(self, name: str, filename: str, key: str, nfunctions: int, meta_json: str,
                 names: dict[str, object]) -> None:
        super().__init__(name, filename, key, meta_json)
        self._codes: dict[CodeType, int | None] = {}
        self.self_counts = [0] * nfunctions
        #: per function: exceptions whose position could not be found (the count of
        #: that call is then short of the truth; reports say so)
        self.unattributed = [0] * nfunctions
        #: the names the module's code reads (its holder's: :mod:`pathprof.runtime.holder`)
        self._names = names
        with _lock:
            self.offset = _size[0]
            _size[0] += nfunctions
            for table in _tables:
                table.extend([0] * nfunctions)
        names["_@pp_B"] = _budgets_active[0] > 0
        for i in range(nfunctions):
            names[f"_@pp_g{i}"] = self.offset + i
        self.bindings = (local, pending, self.self_counts)

    @property
    def globals(self) -> dict[str, object]:
        """The names the module's code reads (its holder's)."""
        return self._names

    # -- called by instrumented code ----------------------------------------------

    def drain(self) -> None:
        try:
            drain()
        except Exception as err:  # never into the program (its interpreter may be shutting
            if self._passes(err):  # down), but a signal handler's is the program's
                raise

    def enter(self, index: int, register: int | None, done: int | None, block: int,
              base: int | None) -> tuple[int, list[int] | _Sink, int, None]:
        """An exception is caught (or a finally entered by one) in ``block``: the new
        register, the thread's table, the activation's base (see :meth:`pause`)."""
        try:
            drain()
            table = local.t
            frame = sys._getframe(1)
            if done is None:
                done = self._count_at_exception(index, register, frame, sys.exception())
            events = self._events(index)
            new = done + sum(events.pieces[block]) - events.query[block]
            if base is None:  # resumed by throw(): the activation starts now
                base = table[0] - table[self.offset + index]
            return new, table, base, None
        except Exception as err:  # never into the program (its interpreter may be shutting
            if self._passes(err):  # down), but a signal handler's is the program's
                raise
            return (0, self._sink(), 0, None)

    def cut(self, index: int, register: int, done: int | None) -> int:
        """An exception leaves a ``with`` body: the frame's exact count so far."""
        try:
            if done is not None:
                return done
            return self._count_at_exception(index, register, sys._getframe(1), sys.exception())
        except Exception as err:  # never into the program (its interpreter may be shutting
            if self._passes(err):  # down), but a signal handler's is the program's
                raise
            return 0

    def pause(self, index: int, table: list[int], register: int, done: int,
              base: int | None) -> int:
        """A generator or coroutine suspends: hand ``register + done`` over; the
        register restarts at ``-done`` (so that the block's count stays right).

        ``base`` is the thread's total at the activation's start less the
        function's inclusive count then: the inclusive count becomes the thread's
        total less ``base`` (None: the activation starts now)."""
        try:
            if pending:
                drain()
            count = register + done
            slot = self.offset + index
            if base is None:
                base = table[0] - table[slot]
            table[0] += count
            self.self_counts[index] += count
            table[slot] = table[0] - base
            if _budgets_active[0]:
                self.check(index, 0)
            return -done
        except self._budget_error:
            raise
        except Exception as err:  # never into the program (its interpreter may be shutting
            if self._passes(err):  # down), but a signal handler's is the program's
                raise
            return 0

    def check(self, index: int, partial: int) -> None:
        """A budget is active somewhere: raise if this thread's is exceeded. The
        count compared is the thread's finished calls plus ``partial`` (this frame's
        events so far), a lower bound of the exact count -- exact in the frame that
        loops, deterministic everywhere."""
        try:
            budgets = local.budgets
            if not budgets:
                return
            if pending:
                drain()
            frame = sys._getframe(1)
            table = local.t
            for budget in budgets:
                active, start, budget_frame, partial_at_start, n, read0 = budget
                if not active:
                    continue
                seen = table[0] - start + partial
                if frame is budget_frame:
                    seen -= partial_at_start
                if seen > n:
                    budget[0] = False  # raised once; the with statement's exit ends it
                    exact = read_thread(sys._getframe(1)) - read0
                    raise EventBudgetExceeded(max(exact, seen), n)
        except self._budget_error:  # (a class attribute: survives the shutdown)
            raise
        except Exception as err:  # never into the program (its interpreter may be shutting
            if self._passes(err):  # down), but a signal handler's is the program's
                raise

    # -- positions ------------------------------------------------------------------

    def _count_at_exception(self, index: int, register: int | None, frame: FrameType,
                            exc: BaseException | None) -> int:
        """The frame's exact count where ``exc`` left the code of this frame."""
        located = None
        seen = set()  # the program may have chained its exceptions in a cycle
        while exc is not None and located is None and id(exc) not in seen:
            seen.add(id(exc))
            tb = exc.__traceback__
            while tb is not None and tb.tb_frame is not frame:
                tb = tb.tb_next
            if tb is None:
                inner = _wrapped(exc)  # the plain exception an except* clause matched
                if inner is None:
                    break
                exc = inner
                continue
            located = self.locate(index, frame.f_code, tb.tb_lasti)
            exc = _raised_before(exc)
        return self.count_at(index, register or 0, located)

    def count_at(self, index: int, register: int, located: tuple[int, int, str] | None) -> int:
        if located is None:
            self.unattributed[index] += 1
            return register
        block, piece, how = located
        events = self._events(index)
        count = register + events.query[block] - sum(events.pieces[block][piece + 1:])
        if how in ("return-exit", "continue-exit"):
            count -= events.leave.get(block, 0)
        return count

    def _events(self, index: int) -> EventTables:
        events = self.meta.functions[index].events
        assert events is not None  # an event-counting module's functions all have them
        return events

    def locate(self, index: int, code: CodeType, lasti: int) -> tuple[int, int, str] | None:
        try:
            located: tuple[int, int, str] | None = self._blockmap(index, code).locate_piece(
                lasti)
            return located
        except Exception as err:
            if self._passes(err):  # a signal handler's: the program's
                raise
            return None

    def function_of(self, code: CodeType) -> int | None:
        """Index of the function whose code object ``code`` is, or None."""
        index = self._codes.get(code, -1)
        if index == -1:
            index = None
            for i, function in enumerate(self.meta.functions):
                if (function.qualname == code.co_qualname
                        and function.code_line == code.co_firstlineno):
                    index = i
                    break
            self._codes[code] = index
        return index

    def frame_count(self, frame: FrameType) -> int:
        """Events the active call in ``frame`` ran so far and has not handed over."""
        index = self.function_of(frame.f_code)
        if index is None:
            return 0
        names = frame.f_locals
        register = names.get("@pp_r")
        done = names.get("@pp_w")
        if register is None:
            return 0  # leaving by an exception: its note has been drained
        if done is not None:
            return int(done)
        return self.count_at(index, register, self.locate(index, frame.f_code, frame.f_lasti))


def register(name: str, filename: str, key: str, nfunctions: int, meta_json: str,
             holder: ModuleType) -> EventModule:
    """Called once by an instrumented module as it is executed, with the holder of its
    names (:mod:`pathprof.runtime.holder`)."""
    names = holder.__dict__
    state = EventModule(name, filename, key, nfunctions, meta_json, names)
    with _lock:  # a thread starting now finds the module in _modules, or G set already
        names["_@pp_G"] = _single[0]
        _modules.append(state)
    return state


def modules() -> list[EventModule]:
    return list(_modules)


def drain() -> None:
    """Turn the exit notes into counts, oldest first."""
    with _lock:
        while pending:
            (state, index, register, done, lasti, code, context_lasti, table,
             base) = pending.pop(0)
            if done is None:
                located = state.locate(index, code, lasti)
                if located is None and context_lasti >= 0:
                    located = state.locate(index, code, context_lasti)
                done = state.count_at(index, register or 0, located)
            slot = state.offset + index
            if base is None:  # thrown into a suspended generator: starts now
                base = table[0] - table[slot]
            table[0] += done
            state.self_counts[index] += done
            table[slot] = table[0] - base


def read_thread(frame: FrameType) -> int:
    """The calling thread's exact count: its finished calls plus every active frame's
    count so far, from ``frame`` down to the thread's first."""
    drain()
    return local.t[0] + _active(frame)


def _active(frame: FrameType | None) -> int:
    """Events of the counted calls active in ``frame`` and the frames below it."""
    total = 0
    while frame is not None:
        names = names_of(frame.f_code)
        state = names.get("_@pp_m") if names is not None else None
        if isinstance(state, EventModule):
            total += state.frame_count(frame)
        frame = frame.f_back
    return total


def read_all() -> int:
    """All threads' counts: finished calls of every thread plus the active frames of
    every thread, each read as the reading thread reaches it."""
    drain()
    with _lock:
        total = sum(table[0] for table in _tables)
    return total + sum(_active(frame) for frame in sys._current_frames().values())


def inclusive_counts() -> dict[tuple[int, int], int]:
    """(module position, function) -> inclusive count summed over threads."""
    drain()
    result: dict[tuple[int, int], int] = {}
    with _lock:
        tables = list(_tables)
    for position, state in enumerate(_modules):
        for i in range(len(state.self_counts)):
            result[(position, i)] = sum(t[state.offset + i] for t in tables
                                        if len(t) > state.offset + i)
    return result


def set_budget_flag(active: bool) -> None:
    """Count one more (or one fewer) active budget; switch the modules' check on
    while any is active."""
    with _lock:
        _budgets_active[0] += 1 if active else -1
        flag = _budgets_active[0] > 0
        for state in _modules:
            state.globals["_@pp_B"] = flag


def _after_fork_in_child() -> None:
    with _lock:
        pending.clear()
        for table in _tables:
            table[:] = [0] * len(table)
        for state in _modules:
            state.self_counts[:] = [0] * len(state.self_counts)
    _set_single(local.t)  # the child runs the forking thread only


if hasattr(__import__("os"), "register_at_fork"):
    __import__("os").register_at_fork(after_in_child=_after_fork_in_child)
