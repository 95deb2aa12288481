"""What runs inside the profiled program: counter tables, cut paths, and their hand-over.

Imports only the standard library, the stdlib-only :mod:`pathprof.runtime.blockmap` and
the typed metadata it reads (:mod:`pathprof.contract`, standard library only too), up
front: nothing pathprof runs inside the program imports anything while the program runs
(an import inside the program's ``except`` clause could fail where the program has
changed ``sys.meta_path`` or ``sys.modules``). An instrumented module calls
:func:`register` once as it is executed; its functions then index their counter
tables directly (``_@pp_c3[@pp_r] += 1``), which is the whole fast path. Exceptions
call :meth:`ModuleState.handler`, :meth:`ModuleState.cut` and
:meth:`ModuleState.drain` (for the exits noted in :attr:`ModuleState.exits`), which
find the block that raised from the traceback.

Its parts: :mod:`~pathprof.runtime.instrumented` (what every instrumented module
keeps, and the names the program sees), :mod:`~pathprof.runtime.ownwork` (pathprof's
own work kept out of the counts), :mod:`~pathprof.runtime.conditions` (a module's
vector counters, there only with ``--conditions``), :mod:`~pathprof.runtime.stopping`
(first runs and going back), :mod:`~pathprof.runtime.subpaths` (OSP's sampler) and
:mod:`~pathprof.runtime.events` (event counting's own runtime).

Counts are exact under threads on the CPython versions pathprof supports (3.11 to
3.14 with the GIL): ``table[r] += 1`` on a list or a ``defaultdict(int)`` compiles to
a subscript, an integer add and a store, none of which can drop the GIL (CPython
only switches threads at instructions that check the eval breaker: calls, backward
jumps and function entry); ``tests/test_processes.py`` hammers it from eight threads
with ``sys.setswitchinterval(1e-6)`` (``tests/programs/threads_and_forks.py``).
Free-threaded builds are not supported.
"""

from __future__ import annotations

import builtins
import collections
import os
import sys
import time
from collections.abc import Callable
from types import FrameType
from typing import TYPE_CHECKING, Any, Protocol

from pathprof.contract import FunctionInfo
from pathprof.runtime import stopping
from pathprof.runtime.conditions import Conditions
from pathprof.runtime.instrumented import (
    InstrumentedModule,
    NamespaceRef,
    assign,
    program_names,
    registers,
)
from pathprof.runtime.ownwork import own_work
from pathprof.runtime.stopping import PARKED, Parked
from pathprof.runtime.switching import Switching
from pathprof.runtime.tracks import Track

if TYPE_CHECKING:
    from collections import defaultdict
    from types import CodeType, ModuleType
    from typing import TypeAlias, TypeVar

    from pathprof.runtime.stopping import Table, Unseen
    from pathprof.runtime.switching import LoopPlan
    from pathprof.runtime.tracks import Note

    _R = TypeVar("_R")

    #: An exit by exception as instrumented code counts it (:attr:`ModuleState.exits`):
    #: (function, register, lasti, code, context's lasti or -1, closed). (Any: the
    #: register is an int, :data:`PARKED` or None, and :meth:`ModuleState.drain` skips
    #: PARKED by identity, which mypy does not narrow by.)
    ExitKey: TypeAlias = tuple[int, Any, int, CodeType, int, bool]

__all__ = ["InstrumentedModule", "ModuleState", "assign", "countdown", "forget_decoded",
           "modules", "observe_blocks", "own_work", "program_names", "register", "registers",
           "set_hooks", "share", "subpath_modules", "take_snapshot", "zero"]

_modules: list[ModuleState] = []
#: The clock of ``--metric time``: wall time in nanoseconds.
clock = time.perf_counter_ns
#: What instrumented code calls as an exception leaves a function: C functions only.
exception = sys.exception
getframe = sys._getframe
getattr = builtins.getattr
#: What a generator's ``close()`` throws in: a generator's exit key says whether it
#: was that (the generator's consumer stopped early), compared by identity.
closed_type = GeneratorExit
_hooks: dict[str, Callable[[], object] | None] = {"after_fork_in_child": None,
                                                 "after_fork_in_parent": None}




class ModuleState(InstrumentedModule):
    """The counters of one instrumented module, and what decodes its exceptions."""

    __slots__ = (
        "_namespace",
        "closed",
        "conditions",
        "counters",
        "cuts",
        "exit_times",
        "exits",
        "lengths",
        "names",
        "raised",
        "sizes",
        "switching",
        "timed",
        "times",
        "unattributed",
        "unmeasured",
    )

    def __init__(self, name: str, filename: str, key: str, sizes: tuple[int, ...],
                 meta_json: str, timed: bool = False,
                 lengths: tuple[tuple[int, ...] | None, ...] | None = None,
                 namespace: dict[str, object] | None = None,
                 switches: tuple[int, ...] = (),
                 loops: tuple[tuple[int, tuple[LoopPlan, ...]], ...] = (),
                 vectors: tuple[int, ...] = (),
                 names: dict[str, object] | None = None,
                 swaps: tuple[int, ...] = ()) -> None:
        super().__init__(name, filename, key, meta_json)
        #: the names the module's code reads (its holder's, :mod:`pathprof.runtime.holder`),
        #: where the switches, ``_@pp_O`` and the shared tables are set
        self.names: dict[str, object] = names if names is not None else {}
        #: subpath sampling: per function, the blocks on each path (a tuple, or a
        #: table that asks :data:`subpaths` the first time a path runs)
        self.lengths: tuple[tuple[int, ...] | _Lengths, ...] = tuple(
            known if known is not None else _Lengths(self, i)
            for i, known in enumerate(lengths or ()))
        #: the module's globals (see :class:`NamespaceRef`), where the vector counters
        #: of ``--conditions`` are
        self._namespace = NamespaceRef(name, namespace) if namespace is not None else None
        #: coverage that stops paying (:mod:`pathprof.runtime.switching`): which
        #: functions and loops can go back to code that counts nothing, and which
        #: did; None where none can (measured without ``--stop-counting``)
        self.switching: Switching | None = (
            Switching(self.names, switches, swaps, loops) if switches or swaps else None)
        switchable = self.switches
        looping = self.switching.loops if self.switching is not None else {}
        #: per function, how many paths its table counts (a list may have a spare
        #: slot after them: :data:`pathprof.runtime.stopping.PARKED`)
        self.sizes = tuple(sizes)
        self.counters: tuple[Table, ...] = tuple(
            stopping.new_table(self, i, n, spare=i in looping) if i in switchable
            else _new_table(n)
            for i, n in enumerate(sizes))
        #: per function, with ``--metric time``: nanoseconds spent on each path
        self.timed = timed
        self.times: tuple[list[int | Unseen] | defaultdict[int, int], ...] = tuple(
            _new_table(n if timed else -1) for n in sizes)
        #: per function: (block, prefix value) -> count, for paths cut by an exception
        self.cuts: tuple[dict[tuple[int, int], int], ...] = tuple({} for _ in sizes)
        #: per function: calls that ended by an exception
        self.raised: list[int] = [0] * len(sizes)
        #: per function: of those, generators closed early (``GeneratorExit``)
        self.closed: list[int] = [0] * len(sizes)
        #: Exits by exception, counted by instrumented code without calling Python
        #: (``exits[(index, register, lasti, code, context's lasti or -1, closed)] += 1``) so
        #: that nothing can raise anew as the exception leaves — not even a
        #: RecursionError at the recursion limit. :meth:`drain` records them. A
        #: count per distinct exit, so its size is bounded by the code measured,
        #: however many exceptions leave.
        self.exits: dict[ExitKey, int] = {}
        #: with ``--metric time``: the same keys -> nanoseconds from path start to exit
        self.exit_times: dict[ExitKey, int] = {}
        #: per function: exceptions whose block could not be found
        self.unattributed: list[int] = [0] * len(sizes)
        #: functions that count nothing, whatever runs: a module measured after it
        #: was imported whose function could not be given its instrumented code
        #: (:mod:`pathprof.measure.inplace`). Not reported as "never run".
        self.unmeasured: set[int] = set()
        #: conditions measured (:mod:`pathprof.python.conditioncode`): the vector
        #: counters of its decisions and what ended evaluations; None without them
        self.conditions: Conditions | None = None
        if vectors:
            self.conditions = Conditions(self, vectors)
            self.conditions.start(namespace, _modules, switchable)

    @property
    def namespace(self) -> dict[str, object] | None:
        """The module's globals while the module lives."""
        return self._namespace() if self._namespace is not None else None

    def __reduce__(self) -> tuple[Callable[[str], ModuleState], tuple[str]]:
        """Pickled as a reference by key: a program that pickles a measured function
        by value (cloudpickle) takes the function's globals along, this state among
        them, which would otherwise carry the module's tables, metadata and namespace.
        Unpickled where the module is registered, it is that module's live state."""
        return _state_for_key, (self.key,)

    # -- coverage that stops paying --------------------------------------------

    @property
    def switches(self) -> frozenset[int]:
        """The functions that can stop counting (:attr:`Switching.switches`; none
        without :attr:`switching`)."""
        return self.switching.switches if self.switching is not None else frozenset()

    def stopped(self, index: int) -> bool:
        """Whether function ``index`` or one of its loops went back to original code."""
        return self.switching is not None and self.switching.stopped(index)

    def rearm(self) -> None:
        """Measure every function again, and hear of each path's next run as a first
        one (a new measurement starts; what the tables held was taken)."""
        switching = self.switching
        if switching is None:
            return
        conditions = self.conditions
        for index in switching.switches:
            if conditions is not None:
                conditions.arm(index)
            stopping.arm(self, index, self.counters[index], self.sizes[index])
        switching.rearm()

    def zero(self) -> None:
        """Forget what the module counted so far (an unseen path stays unseen)."""
        for table in (*self.counters, *self.times):
            if isinstance(table, list):  # an unseen path stays unseen
                table[:] = [c if type(c) is stopping.Unseen else 0 for c in table]
            else:
                table.clear()
        for cuts in self.cuts:
            cuts.clear()
        self.exits.clear()
        self.exit_times.clear()
        self.raised[:] = [0] * len(self.raised)
        self.closed[:] = [0] * len(self.closed)
        self.unattributed[:] = [0] * len(self.unattributed)
        if self.conditions is not None:
            self.conditions.reset()

    # -- called by instrumented code for subpath sampling ----------------------

    def osp_path(self, index: int, number: int, track: Track | None = None) -> Track | None:
        """A path ended and the countdown is at or below 0: a sample is near, or
        blocks are observed and the frame has no track yet (``track`` None) or the
        notes are due. Returns the frame's track (see
        :func:`pathprof.python.probecode.count_down`)."""
        sampler = subpath_sampler
        if sampler is None:
            countdown[0] = FAR
            return None
        return sampler.path_end(self, index, number, getframe(1), track)

    def osp_enter(self, index: int) -> Track | None:
        """A call begins while blocks are observed: returns the frame's track."""
        sampler = subpath_sampler
        if sampler is None:
            return None
        return sampler.enter(self, index, getframe(1))

    # -- called by instrumented code on exceptions --------------------------

    def handler(self, index: int, register: int | Parked | None, start: int) -> int:
        """An exception is caught: record the path it cut; start the handler's path.

        In edge mode ``start`` is the counter slot of the virtual edge into the
        handler (negative: none) and the register is 0 while the call's flow is live.
        """
        if isinstance(register, int):  # not None (flow ended), not PARKED (switched off)
            self._record(index, register, sys._getframe(1))
        if self.meta.functions[index].mode == "edge":
            if start >= 0:
                self.counters[index][start] += 1
            return 0
        return start

    def handover(self, index: int, register: _R, pending: tuple[int, int] | None
                 ) -> _R | None:
        """An ``except*`` clause that ran handed its group's rest over -- to the next
        matching clause, or to the ``try``'s re-raise -- instead of flowing on to
        the code after the ``try``: count the path its end noted (``pending``:
        ``(path number, route)``; in edge mode ``(counter slot or -1, route)``).
        Returns the register for what comes next: None (the path was counted) if
        something was pending, else ``register``."""
        if pending is None:
            return register
        try:
            count = pending[0]
            if self.meta.functions[index].mode == "edge":
                if count >= 0:
                    self.counters[index][count] += 1
                return None
            frame = getframe(1)
            if self.lengths:  # subpath sampling: the path's end, as its probe would
                countdown[0] -= self.lengths[index][count]
                if countdown[0] <= 0:
                    sampler = subpath_sampler
                    if sampler is None:
                        countdown[0] = FAR
                    else:
                        sampler.path_end(self, index, count, frame)
                return None
            self.counters[index][count] += 1
            if self.timed:
                started = frame.f_locals.get("@pp_s")
                if started is not None:
                    self.times[index][count] += clock() - started
        except Exception as err:  # never let profiling change the program's exception
            if self._passes(err):  # (but a signal handler's is the program's)
                raise
            self.unattributed[index] += 1
        return None

    def cut(self, index: int, register: int | Parked | None) -> None:
        """An exception leaves a ``with`` body: record the path it cut."""
        if isinstance(register, int):  # not None (flow ended), not PARKED (switched off)
            self._record(index, register, sys._getframe(1))

    def drain(self) -> None:
        """Record the exits counted by instrumented code (see :attr:`exits`).

        What is taken is subtracted entry by entry, so a count another thread adds
        meanwhile stays for the next drain (as :func:`take_snapshot` does)."""
        for key, count in list(self.exits.items()):
            if not count:
                continue
            self.exits[key] -= count
            elapsed = self.exit_times.get(key, 0) if self.timed else 0
            if elapsed:
                self.exit_times[key] -= elapsed
            index, register, lasti, code, context_lasti, closed = key
            self.raised[index] += count
            if closed:
                self.closed[index] += count
            if register is None or register is PARKED:
                continue
            if self.conditions is not None:
                self.conditions.raised(index, code, lasti, count)
            try:
                blockmap = self._blockmap(index, code)
                located = blockmap.locate(lasti)
                if located is None and context_lasti >= 0:
                    located = blockmap.locate(context_lasti)
            except Exception as err:  # never let decoding lose the other notes
                if self._passes(err):  # (but a signal handler's is the program's)
                    raise
                located = None
            self._record_at(index, register, located, count, elapsed if self.timed else None)

    def _record(self, index: int, register: int, frame: FrameType) -> None:
        exc = sys.exception()
        located = self.locate(index, frame, exc)
        if self.conditions is not None:
            self.conditions.raised_in(index, frame, getattr(exc, "__traceback__", None))
        sampler = subpath_sampler
        if sampler is not None and self.lengths:
            sampler.cut(self, index, frame, located, register)
        started = frame.f_locals.get("@pp_s") if self.timed else None
        elapsed = clock() - started if started is not None else None
        self._record_at(index, register, located, 1, elapsed)

    def _record_at(self, index: int, register: int, located: tuple[int, str] | None,
                   count: int, elapsed: int | None) -> None:
        """Record ``count`` paths an exception cut where ``located`` says (``elapsed``:
        their nanoseconds in all, with ``--metric time``)."""
        try:
            if located is None:
                self.unattributed[index] += count
                return
            block, how = located
            function = self.meta.functions[index]
            if function.mode == "edge":
                self._record_edge(index, function, block, how, count)
                return
            if how == "raise":
                # An explicit raise statement: the path ends by its edge to EXIT,
                # whose number is the register (the edge carries no code).
                self.counters[index][register] += count
                if elapsed is not None:
                    self.times[index][register] += elapsed
                return
            if how == "continue-exit":
                # __exit__ raised while a continue left a with: the backedge has
                # already counted and reset the register (documented limitation).
                self.unattributed[index] += count
                return
            if how == "return-exit" or (how == "return-value"
                                        and block in function.early_returns):
                # __exit__ raised after a return counted its path, or the value of a
                # return counted before its value (instrument.return_code): take
                # the count back.
                op, value = function.returns[block]
                self.counters[index][value if op == "COUNT_CONST" else register + value] -= count
            key = (block, register + function.query[block])
            cuts = self.cuts[index]
            cuts[key] = cuts.get(key, 0) + count
        except Exception as err:  # never let profiling change the program's exception
            if self._passes(err):  # (but a signal handler's is the program's)
                raise
            self.unattributed[index] += count

    def _record_edge(self, index: int, function: FunctionInfo, block: int, how: str,
                     count: int = 1) -> None:
        """Edge mode: an exception left ``block`` — count its virtual exception edge
        (a raise statement's own edge is in the spanning tree: flow gives it)."""
        if how == "raise":
            return
        if how == "continue-exit":
            self.unattributed[index] += count
            return
        table = self.counters[index]
        if how == "return-exit" or (how == "return-value"
                                    and block in function.early_returns):
            returned = function.returns.get(block)
            if returned is not None:
                table[returned.value] -= count
        plan = function.edge_counters
        assert plan is not None
        raise_edge = (len(function.edges) + len(function.restarts)
                      + plan.raising.index(block))
        table[plan.chords.index(raise_edge)] += count

    def locate(self, index: int, frame: FrameType, exc: BaseException | None
               ) -> tuple[int, str] | None:
        """Where ``exc`` arose in ``frame``: ``(block, how)``, how being "cut",
        "raise" (a raise statement), "return-exit" or "continue-exit" (a with's
        ``__exit__`` called on the way out of a return or continue), "return-value"
        (a return statement computing its value)."""
        seen = set()  # the program may have chained its exceptions in a cycle
        while exc is not None and id(exc) not in seen:
            seen.add(id(exc))
            tb = getattr(exc, "__traceback__", None)
            if tb is None or tb.tb_frame is not frame:
                inner = _wrapped(exc)
                if inner is None:
                    return None
                exc = inner  # the plain exception an except* clause matched
                continue
            located = self._blockmap(index, frame.f_code).locate(tb.tb_lasti)
            if located is not None:
                return located
            exc = _raised_before(exc)
        return None


def _wrapped(exc: BaseException) -> BaseException | None:
    """The plain exception in ``exc`` if ``exc`` is a group of that one exception
    alone: what an ``except*`` clause that matched a plain exception has (its
    traceback is None on 3.11, the clause's from 3.12)."""
    group = getattr(builtins, "BaseExceptionGroup", None)
    if group is not None and isinstance(exc, group) and len(exc.exceptions) == 1:
        inner = exc.exceptions[0]
        if not isinstance(inner, group):
            return inner  # type: ignore[no-any-return]
    return None


def _raised_before(exc: BaseException) -> BaseException | None:
    """What an exception that was not raised where its frame's traceback entry
    points came from: the plain exception an ``except*`` clause wrapped in a group
    (:func:`_wrapped`), or, raised while matching an ``except`` clause, the
    exception being matched (its context)."""
    return _wrapped(exc) or getattr(exc, "__context__", None)


def _state_for_key(key: str) -> ModuleState:
    """The registered state of the module ``key``; where none is (another process),
    an empty one of that key, registered nowhere, that counts into tables nobody reads."""
    for state in _modules:
        if state.key == key:
            return state
    return ModuleState("", "", key, (), "{}")


def _new_table(size: int) -> list[int | Unseen] | defaultdict[int, int]:
    if size < 0:
        return collections.defaultdict(int)
    return [0] * size


def register(name: str, filename: str, key: str, sizes: tuple[int, ...], meta_json: str,
             timed: bool = False, subpaths: tuple[tuple[int, ...] | None, ...] | None = None,
             switches: tuple[int, ...] = (),
             loops: tuple[tuple[int, tuple[LoopPlan, ...]], ...] = (),
             vectors: tuple[int, ...] = (), holder: ModuleType | None = None,
             unmeasured: tuple[tuple[str, int, int], ...] = (),
             swaps: tuple[int, ...] = ()) -> ModuleState:
    """Called once by an instrumented module when it is executed, with the holder of
    its names (:mod:`pathprof.runtime.holder`) and the functions left unmeasured
    because their path numbers would be too long to write (``(qualname, line, bits of
    the path count)``: said once per process, on every run)."""
    if unmeasured:
        _say_unmeasured(filename, unmeasured)
    namespace = getframe(1).f_globals
    state = ModuleState(name, filename, key, sizes, meta_json, timed, subpaths, namespace,
                        switches, loops, vectors,
                        holder.__dict__ if holder is not None else None, swaps)
    _modules.append(state)
    if own_work.active:
        own_work._registered(state)
    if subpaths is not None:
        _subpath_modules.append(state)
        global longest_path
        for lengths in subpaths:
            longest = max(lengths, default=0) if lengths is not None else LONGEST_LISTED
            longest_path = max(longest_path, longest)
    return state


_said_unmeasured: set[tuple[str, str]] = set()


def _say_unmeasured(filename: str, functions: tuple[tuple[str, int, int], ...]) -> None:
    for qualname, line, bits in functions:
        if (filename, qualname) in _said_unmeasured:
            continue
        _said_unmeasured.add((filename, qualname))
        try:  # noqa: SIM105 - no contextlib: it may be a measured module
            sys.stderr.write(
                f"pathprof: {filename}:{line}: {qualname} has about 2**{bits - 1} paths, "
                "more than a path number can be written (Python's limit on the digits "
                "of an integer); it runs unmeasured, the rest of its module measured\n")
        except Exception:  # never into the program (its stderr may be closed)
            pass


# -- subpath sampling (OSP): see pathprof.measure.subpaths ----------------------------

class Sampler(Protocol):
    """What the runtime calls of OSP's profiler while blocks are observed
    (:class:`pathprof.measure.subpaths.SubpathProfiler` is the one there is)."""

    def path_end(self, state: ModuleState, index: int, number: int, frame: FrameType,
                 track: Track | None = None) -> Track | None: ...

    def enter(self, state: ModuleState, index: int, frame: FrameType) -> Track | None: ...

    def cut(self, state: ModuleState, index: int, frame: FrameType,
            located: tuple[int, str] | None, register: int) -> None: ...

    def path_length(self, state: ModuleState, index: int, number: int) -> int: ...



#: Far from any sample: the countdown of instrumented code seldom reaches 0 (a
#: billion blocks), and stays an int CPython subtracts on its fast path (below 2^30).
FAR = (1 << 30) - 1
#: What every module instrumented for subpaths counts down as its paths end
#: (``_@pp_Q[0] -= length``); the sampler sets it, and calls come when it reaches 0.
countdown = [FAR]
#: While blocks are observed, instrumented code notes ``(track, path number)`` here
#: at each path end, and a call whose caller holds a track (see
#: :func:`pathprof.python.probecode.note_call`), and the sampler decodes the notes in
#: bulk; the list is never replaced (modules hold its ``append``).
osp_notes: list[Note] = []
#: What instrumented code notes a call with (:func:`pathprof.python.probecode.note_call`):
#: the class of a blank track, and the empty locals of a caller pathprof does not
#: measure (a dict that stays empty: the code clears what it read).
osp_track_type = Track
osp_no_locals: dict[str, object] = {}
osp_getattr = builtins.getattr
osp_id = builtins.id
_subpath_modules: list[ModuleState] = []
#: The most blocks on one path of the functions instrumented for subpaths (those
#: with too many paths to list count as LONGEST_LISTED): how soon before a sample
#: the sampler starts observing, so that no path's end passes its start.
LONGEST_LISTED = 256
longest_path = 0
#: The sampler (:class:`pathprof.measure.subpaths.SubpathProfiler`) while one runs.
#: (Not named ``subpaths``: importing the submodule :mod:`pathprof.runtime.subpaths`
#: binds that name in this package, and a module is not None.)
subpath_sampler: Sampler | None = None


class _Lengths(dict):  # type: ignore[type-arg]
    """Path lengths of a function with too many paths to list: worked out by the
    sampler the first time each path runs."""

    __slots__ = ("index", "state")

    def __init__(self, state: ModuleState, index: int) -> None:
        super().__init__()
        self.state = state
        self.index = index

    def __missing__(self, number: int) -> int:
        sampler = subpath_sampler
        length = sampler.path_length(self.state, self.index, number) if sampler else 0
        self[number] = length
        return length


#: Whether blocks are observed now: a module instrumented for subpaths starts so.
blocks_observed = False


def observe_blocks(flag: bool) -> None:
    """Switch the block observation of every module instrumented for subpaths."""
    global blocks_observed
    blocks_observed = flag
    for state in _subpath_modules:
        state.names["_@pp_O"] = flag


def subpath_modules() -> list[ModuleState]:
    return list(_subpath_modules)


def forget_decoded() -> None:
    """Let go of every module's decoded contract and block maps (each is decoded again
    when next asked for): what a session that has saved and reported no longer
    needs, and the garbage collector would otherwise walk until the interpreter
    exits."""
    for state in _modules:
        state._meta = None
        state._maps.clear()


def modules() -> list[ModuleState]:
    return list(_modules)


def measured_namespaces() -> set[int]:
    """The ``id`` of the globals of every live module registered (instrumented)."""
    found = set()
    for state in _modules:
        namespace = state.namespace
        if namespace is not None:
            found.add(id(namespace))
    return found


def share(state: ModuleState) -> None:
    """``state``'s module is one pathprof itself may call: see :class:`OwnWork`."""
    own_work.share(state)


def set_hooks(*, after_fork_in_child: Callable[[], object] | None = None,
              after_fork_in_parent: Callable[[], object] | None = None) -> None:
    """Install the callables the runtime calls after ``fork``, in the child and in
    the parent."""
    _hooks["after_fork_in_child"] = after_fork_in_child
    _hooks["after_fork_in_parent"] = after_fork_in_parent


def _copy_table(table: Table, reset: bool, size: int = -1) -> dict[int, int]:
    """The counts of ``table``; a list's slots from ``size`` on (a spare slot) and a
    hash table's :data:`~pathprof.runtime.stopping.PARKED` key are left out."""
    if isinstance(table, list):
        copy = table[:size] if size >= 0 else table[:]
        if not any(copy):  # (most functions of a big program never ran)
            return {}
        counts = {i: c for i, c in enumerate(copy) if c}
    else:
        if not table:
            return {}
        counts = {i: c for i, c in dict(table).items() if c and i is not PARKED}
    if reset:
        for i, c in counts.items():
            table[i] -= c
    return counts


Snapshot = tuple[ModuleState, list[dict[int, int]], list[dict[tuple[int, int], int]],
                 list[int], list[int], list[dict[int, int]], list[int],
                 list[dict[int | tuple[int, int], int]]]


def take_snapshot(reset: bool = True) -> list[Snapshot]:
    """Copy every module's counts; with ``reset``, subtract what was copied.

    Returns, per module: path counts per function ({path: count}), cut counts per
    function, calls ended by an exception per function, unattributed exceptions
    per function, nanoseconds per path per function, and of the calls ended by an
    exception, generators closed early, per function, and runs of each vector of the
    function's decisions (by offset from its first counter). Copying a table and
    subtracting the copy entry by entry loses no increment made meanwhile by
    another thread: each subtraction is as atomic as the increments are.
    """
    result = []
    for state in list(_modules):
        state.drain()
        paths = [_copy_table(table, reset, size)
                 for table, size in zip(state.counters, state.sizes, strict=True)]
        times = [_copy_table(table, reset) for table in state.times]
        cuts: list[dict[tuple[int, int], int]] = []
        for table_c in state.cuts:
            copy_c = {k: c for k, c in dict(table_c).items() if c}
            if reset:
                for k, c in copy_c.items():
                    table_c[k] -= c
            cuts.append(copy_c)
        raised = list(state.raised)
        unattributed = list(state.unattributed)
        closed = list(state.closed)
        if reset:
            for i, c in enumerate(raised):
                state.raised[i] -= c
            for i, c in enumerate(unattributed):
                state.unattributed[i] -= c
            for i, c in enumerate(closed):
                state.closed[i] -= c
        conditions = state.conditions
        vectors = ([conditions.counts(index, reset) for index in range(len(conditions.slots))]
                   if conditions is not None else [])
        result.append((state, paths, cuts, raised, unattributed, times, closed, vectors))
    return result


def _zero_all() -> None:
    for state in _modules:
        zero(state)


def zero(state: ModuleState) -> None:
    """Forget what ``state``'s module counted so far (an unseen path stays unseen)."""
    state.zero()


def _after_fork_in_child() -> None:
    # The child starts with a copy of the parent's counts, which the parent will
    # save itself: start from zero so nothing is counted twice.
    _zero_all()
    hook = _hooks["after_fork_in_child"]
    if hook is not None:
        hook()


def _after_fork_in_parent() -> None:
    hook = _hooks["after_fork_in_parent"]
    if hook is not None:
        hook()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child,
                        after_in_parent=_after_fork_in_parent)
