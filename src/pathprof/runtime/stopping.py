"""Counter tables that say when a path runs for the first time (standard library only).

Coverage that stops paying (docs/python.md): in a coverage mode a function goes back to
its original code once the paths that ran tell everything coverage can learn from it
(:mod:`pathprof.measure.stopping` decides when). Instrumented code counts as always,
``table[r] += 1``; what changes is the table's initial content, so the fast path
keeps CPython's list specializations:

* a list table starts with one :class:`Unseen` per path instead of 0; the first
  ``+= 1`` on a slot calls :meth:`Unseen.__add__`, which reports the path and
  leaves the int 1 in its place, so every later increment is an int add;
* a hash table (functions with too many paths to list) is a :class:`FirstSeen`
  dict whose ``__missing__`` reports the path.

Invariant: a slot of a watched function's table holds an :class:`Unseen` exactly
until the first count of that path since the tables were armed (:func:`arm`), and
each first count is reported to :data:`watcher` once, when one is set. Reporting
never raises into the program, except what a signal handler of the program's raised
while it ran (:func:`pathprof.runtime.passthrough.must_pass`): that goes on to the
program from the probe, as from the program's own code at that point, and the call's
path is recorded as one an exception cut there (the slot stays unseen).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pathprof.runtime.passthrough import must_pass

if TYPE_CHECKING:
    from collections import defaultdict
    from collections.abc import Callable
    from typing import Literal, Protocol, TypeAlias

    from pathprof.runtime import ModuleState

    class Watcher(Protocol):
        """What hears of first runs (:data:`watcher`)."""

        def seen(self, state: ModuleState, index: int, number: int) -> object: ...

    #: A function's counter table: a list of path counts whose slots hold an
    #: :class:`Unseen` until their path first runs (a watched function's), or a hash
    #: table for too many paths to list (a ``defaultdict(int)``, or a :class:`FirstSeen`).
    Table: TypeAlias = "list[int | Unseen] | defaultdict[int, int] | FirstSeen"

__all__ = ["PARKED", "FirstSeen", "Parked", "Unseen", "UnseenVector", "arm", "new_table",
           "vector_runs", "watcher"]

#: What hears of first runs: an object with ``seen(state, index, number)``, set by
#: the profiler while a coverage mode measures (None: nobody listens); ``number`` is a
#: path's, or ``-1 - slot`` for the decision vector counted at ``slot``.
watcher: Watcher | None = None


def _report(state: ModuleState, index: int, number: int,
            passes: Callable[[BaseException], bool] = must_pass) -> None:
    try:
        listener = watcher
        if listener is not None:
            listener.seen(state, index, number)
    except BaseException as err:  # never into the program, but what is the program's
        if passes(err):
            raise


class Unseen:
    """The content of a list slot whose path has not run since the table was armed."""

    __slots__ = ("index", "number", "state", "table")
    #: (a class attribute: there even as the interpreter shuts down)
    _passes = staticmethod(must_pass)

    def __init__(self, state: ModuleState, index: int, number: int, table: list[int | Unseen]
                 ) -> None:
        self.state = state
        self.index = index
        self.number = number
        self.table = table

    def __add__(self, other: int) -> int:
        try:
            _report(self.state, self.index, self.number)
        except BaseException as err:  # (the interpreter shutting down: its globals are gone)
            if self._passes(err):  # a signal handler's: it leaves the probe as from the
                raise  # program's own code there, which ends the path by exception
        # Another thread may have counted this path while the report ran: add to
        # its count. From here to the caller's store nothing lets another thread run
        # (no call, no backward jump), so no increment is lost.
        current = self.table[self.number]
        return current + other if type(current) is int else other

    __radd__ = __add__

    def __sub__(self, other: int) -> int:
        return -other

    def __bool__(self) -> Literal[False]:
        return False

    def __repr__(self) -> str:
        return "0"

    def __reduce__(self) -> tuple[type[int], tuple[()]]:
        # A program that pickles a measured function by value (cloudpickle) takes its
        # globals along, this table among them: it goes as the 0 it stands for, not
        # with the module state behind it.
        return int, ()


class UnseenVector:
    """What the counter of a decision's vector holds until the vector first runs
    (:mod:`pathprof.python.conditioncode`): a module global the rewritten decision
    adds one to (``(_@pp_v3 := (_@pp_v3 or 0) + 1)``). The first add reports the
    vector and gives the int that follows ``runs`` (what it had counted before), which
    the decision stores in its place, so every later add is an int add.
    ``__bool__`` is left to ``object`` (true, without a call)."""

    __slots__ = ("index", "runs", "slot", "state")
    _passes = staticmethod(must_pass)  # (see Unseen)

    def __init__(self, state: ModuleState, index: int, slot: int, runs: int) -> None:
        self.state = state
        self.index = index
        self.slot = slot
        self.runs = runs

    def __add__(self, other: int) -> int:
        try:
            _report(self.state, self.index, -1 - self.slot)  # (a vector: negative)
        except BaseException as err:  # (the interpreter shutting down: its globals are gone)
            if self._passes(err):  # a signal handler's (see Unseen)
                raise
        return self.runs + other

    __radd__ = __add__

    def __reduce__(self) -> tuple[type[int], tuple[()]]:
        # pickled with a measured function's globals (see Unseen.__reduce__): as 0
        return int, ()


def vector_runs(counter: object) -> int:
    """How many times the vector whose counter holds ``counter`` ran (``counter``: what
    the module global holds, an int or an :class:`UnseenVector`; None once the
    module's globals are gone)."""
    if type(counter) is int:
        return counter
    if type(counter) is UnseenVector:
        return counter.runs
    return 0  # (None: the module's globals are gone)


class FirstSeen(dict):  # type: ignore[type-arg]
    """A hash table of path counts that reports each path's first count."""

    __slots__ = ("index", "state")
    _passes = staticmethod(must_pass)  # (see Unseen)

    def __init__(self, state: ModuleState, index: int) -> None:
        super().__init__()
        self.state = state
        self.index = index

    def __missing__(self, number: int) -> int:
        try:
            if type(number) is int:
                _report(self.state, self.index, number)
        except BaseException as err:  # (the interpreter shutting down: its globals are gone)
            if self._passes(err):  # a signal handler's (see Unseen)
                raise
        counted: int = dict.get(self, number, 0)  # what another thread counted meanwhile
        return counted

    def __reduce__(self) -> tuple[type[dict[int, int]], tuple[dict[int, int]]]:
        return dict, (dict(self),)  # a plain dict of counts (see Unseen.__reduce__)


class Parked:
    """The register of a call while a loop of it runs its original body
    (:class:`pathprof.python.plan.LoopSwitch`): the path under way is one
    already known, and nothing it would count is recorded.

    Adding to it leaves it as it is; as a list index it is -1, the spare last slot
    a table of a function with such loops has (:func:`new_table`); as a hash
    table's key it equals nothing but itself. The runtime records no path cut
    with it (:meth:`pathprof.runtime.ModuleState.handler`), and a snapshot leaves
    out the spare slot and the key."""

    __slots__ = ()

    def __add__(self, other: object) -> Parked:
        return self

    __radd__ = __sub__ = __add__

    def __index__(self) -> int:
        return -1

    def __repr__(self) -> str:
        return "PARKED"

    def __reduce__(self) -> str:
        return "PARKED"


#: The one parked register.
PARKED = Parked()


def new_table(state: ModuleState, index: int, size: int, spare: bool = False
              ) -> list[int | Unseen] | FirstSeen:
    """A watched function's empty counter table: a list of ``size`` slots, or a hash
    table for ``size`` -1; with ``spare``, a list has one more slot at its end, for
    counts made with the :data:`PARKED` register (it is never reported)."""
    if size < 0:
        return FirstSeen(state, index)
    table: list[int | Unseen] = [0] * size
    table[:] = [Unseen(state, index, number, table) for number in range(size)]
    if spare:
        table.append(0)
    return table


def arm(state: ModuleState, index: int, table: Table, size: int | None = None) -> None:
    """Make every path of ``table`` report its next count as a first one, whatever
    ran before; slots past ``size`` (a spare slot) hold 0. For counts already taken
    away (a snapshot): a count in the table is dropped."""
    if isinstance(table, list):
        slots = len(table) if size is None else size
        table[:] = [*(Unseen(state, index, number, table) for number in range(slots)),
                    *([0] * (len(table) - slots))]
    else:
        table.clear()
