"""Exact event counts with on-line queries (Ball 1994): the Python API.

    from pathprof import events

    with events.EventCounter(source=["myapp"]) as counter:
        import myapp
        myapp.run()
        print(events.read())          # statements run so far by this thread
    print(counter.counts().total)

An event is a statement (the default: a simple statement, or the header of an
``if``/``elif``/``while``, a ``for`` step, a ``with`` entry, a ``match`` subject) or a
bytecode instruction (``kind="instructions"``: the instructions CPython compiled for
a block's statements on the running version). Only code instrumented by an active
:class:`EventCounter` (or ``pathprof count``, or ``pytest --pathprof-events``) is
counted; module and class bodies are not (like paths, events belong to functions).

Counts are deterministic: the same program on the same input counts the same
events, whatever the machine's load -- a measure of work for performance tests
that does not depend on timing noise.
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

from pathprof.exceptions import ConfigError, PathprofError
from pathprof.measure.measuring import Measuring
from pathprof.runtime import events as _eventrt
from pathprof.runtime import holder as _holder
from pathprof.runtime.events import EventBudgetExceeded

if TYPE_CHECKING:
    from typing import ParamSpec

    _P = ParamSpec("_P")

__all__ = ["EventBudgetExceeded", "EventCounter", "EventCounts", "FunctionEvents",
           "assert_events_at_most", "budget", "counts", "is_counting", "read"]

KINDS = ("statements", "instructions")


def read(*, all_threads: bool = False) -> int:
    """The exact number of events run so far by the calling thread (or, with
    ``all_threads``, by every thread), from anywhere in the program.

    Finished calls have handed their counts over; for the calls still active the
    query walks the thread's frames and adds each frame's count at its current
    position: its register plus the query increment of its block, less the events
    of the block's statements not yet started (Ball 1994, §3.3)."""
    if all_threads:
        return _eventrt.read_all()
    return _eventrt.read_thread(sys._getframe(1))


def is_counting() -> bool:
    """Whether any code has been instrumented to count events in this process."""
    return bool(_eventrt.modules())


@contextlib.contextmanager
def budget(limit: int) -> Iterator[None]:
    """Raise :class:`EventBudgetExceeded` once the code inside has run more than
    ``limit`` events in this thread: a deterministic timeout for runaway loops.

    The check runs at every loop back edge and function return of counted code
    (one global test each while no budget is active anywhere). It compares the
    events of the calls finished inside the block plus those of the frame making
    the check, so it fires at the first back edge or return after the limit is
    passed in the code that keeps running; the exception's ``count`` is the exact
    count at that point. Budgets nest; the innermost exceeded one raises."""
    if limit < 0:
        raise ValueError(f"an event budget must be at least 0, not {limit}")
    frame = sys._getframe(2)  # the frame running the with statement
    thread = _eventrt.local
    start_read = _eventrt.read_thread(frame)
    partial = 0
    names = _holder.names_of(frame.f_code)
    owner = names.get("_@pp_m") if names is not None else None
    if isinstance(owner, _eventrt.EventModule):
        partial = owner.frame_count(frame)
    record = [True, thread.t[0], frame, partial, limit, start_read]
    thread.budgets.append(record)
    _eventrt.set_budget_flag(True)
    try:
        yield
    finally:
        _eventrt.set_budget_flag(False)
        thread.budgets.remove(record)


def assert_events_at_most(fn: Callable[_P, object], limit: int, *args: _P.args,
                          **kwargs: _P.kwargs) -> int:
    """Call ``fn(*args, **kwargs)`` and fail if it ran more than ``limit`` events.

    Returns the number of events the call ran. Raises :class:`AssertionError`
    naming the count and the limit; :class:`RuntimeError` if no code is counted
    at all (an assertion about zero counted events would always pass)."""
    if not is_counting():
        raise RuntimeError("no code is instrumented to count events: run under "
                           "`pathprof count`, `pytest --pathprof-events=SOURCE` or "
                           "pathprof.events.EventCounter")
    before = _eventrt.read_thread(sys._getframe(1))
    fn(*args, **kwargs)
    ran = _eventrt.read_thread(sys._getframe(1)) - before
    if ran > limit:
        name = getattr(fn, "__qualname__", repr(fn))
        raise AssertionError(f"{name} ran {ran:,} events, more than the {limit:,} allowed")
    return ran


@dataclass
class FunctionEvents:
    """Events of one function: its own (``self``) and with its callees'
    (``inclusive``: everything between its outermost calls' entries and exits)."""

    file: str
    qualname: str
    first_line: int
    self: int
    inclusive: int
    #: exceptions whose position in the function could not be found: the count of
    #: each such call is short by the statements of its last block
    unattributed: int = 0


@dataclass
class EventCounts:
    """What was counted: the total and each function's counts."""

    kind: str
    total: int
    functions: list[FunctionEvents] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        return {"kind": self.kind, "total": self.total,
                "functions": [asdict(f) for f in self.functions]}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)

    def by_name(self) -> dict[str, FunctionEvents]:
        return {f.qualname: f for f in self.functions}


def counts() -> EventCounts:
    """Every counted function's self and inclusive counts, summed over threads, and
    the total of all threads (finished calls; active calls are not included).
    Raises :class:`~pathprof.exceptions.PathprofError` when some module keeps totals
    only (``pytest --pathprof-events``, ``EventCounter(per_function=False)``)."""
    if any(state.meta.totals_only for state in _eventrt.modules()):
        raise PathprofError("per-function event counts were not kept: the code was "
                            "instrumented for totals only (pytest --pathprof-events, or "
                            "EventCounter(per_function=False)); events.read() and budgets "
                            "work")
    inclusive = _eventrt.inclusive_counts()
    kinds = set()
    functions = []
    for position, state in enumerate(_eventrt.modules()):
        kinds.add(state.meta.events or "statements")
        for index, meta in enumerate(state.meta.functions):
            own = state.self_counts[index]
            whole = inclusive.get((position, index), 0)
            if own or whole or state.unattributed[index]:
                functions.append(FunctionEvents(state.filename, meta.qualname,
                                                meta.code_line, own, whole,
                                                state.unattributed[index]))
    total = sum(f.self for f in functions)
    kind = kinds.pop() if len(kinds) == 1 else "statements"
    return EventCounts(kind, total, functions)


class EventCounter(Measuring):
    """Instrument the selected modules imported while started so that they count
    events. Selection works as for :class:`pathprof.Profiler`. ``placement`` other
    than ``"tree"`` (the chords of a spanning tree) is a baseline: ``"blocks"`` adds
    on every edge into a block, ``"statements"`` once per statement -- the same counts,
    more work; the benchmarks measure the difference. ``per_function=False`` keeps
    the threads' totals only -- what :func:`read`, :func:`budget` and
    :func:`assert_events_at_most` need -- at about half the cost of a call's
    hand-over; :func:`counts` then refuses to answer."""

    def __init__(self, *, source: Sequence[str] = (), include: Sequence[str] = (),
                 omit: Sequence[str] = (), default_dirs: Sequence[str] | None = None,
                 kind: str = "statements", cache: bool = True, placement: str = "tree",
                 per_function: bool = True, cache_dir: str | None = None) -> None:
        from pathprof.config import cache_dir as find_cache_dir
        from pathprof.measure.importhook import InstrumentOptions

        if kind not in KINDS:
            raise ConfigError(f"event kind must be one of {', '.join(KINDS)}, not {kind!r}")
        self.kind = kind
        from pathprof.python.eventcode import PLACEMENTS

        if placement not in PLACEMENTS:
            raise ConfigError(f"placement must be one of {', '.join(PLACEMENTS)}, "
                              f"not {placement!r}")
        super().__init__(InstrumentOptions(mode="events", cache=cache, events=kind,
                                           placement=placement, totals_only=not per_function,
                                           cache_dir=find_cache_dir(cache_dir)),
                         source=source, include=include, omit=omit, default_dirs=default_dirs)

    def start(self) -> EventCounter:
        # Unlike Profiler, counting does not switch functions in place (yet).
        self.install_hook("counting", "counted")
        return self

    def stop(self) -> None:
        self.hook.uninstall()

    def counts(self) -> EventCounts:
        found = counts()
        found.kind = self.kind
        return found

    def totals(self) -> EventCounts:
        """The events of every thread, with no per-function counts (what
        ``per_function=False`` keeps): the calls still active included."""
        return EventCounts(self.kind, read(all_threads=True), [])
