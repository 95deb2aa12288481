"""Coverage that stops paying (docs/python.md): when a function goes back to its
original code.

A coverage mode asks *whether* each path ran, not how often. The runtime's tables
report each path's first run (:mod:`pathprof.runtime.stopping`); :class:`StopCounting`
keeps, per function, what those first runs have shown, and sends the function back
to its original code (:func:`pathprof.measure.goback.send_back`: the code its module's
loader compiles; :meth:`pathprof.runtime.switching.Switching.send_back`: the original body it
carries, for a nested function and with conditions measured) as soon as no
later run can change what is reported:

* ``"basis"``: the paths that ran span the space of all its paths (their rank
  reaches the dimension E - N + 2 of its numbered DAG,
  :class:`~pathprof.analysis.basis.BasisBuilder`). The basis headline, the lines and
  the branches it ran are then final -- every edge on an ENTRY -> EXIT path lies on
  a path that ran -- while "paths run" and every count are lower bounds. This is
  the point where coverage.py's ``sys.monitoring`` core returns ``DISABLE``, one
  probe at a time, carried over to paths: far sooner than every path, which big
  functions never reach.
* ``"paths"``: every one of its ``NumPaths(ENTRY)`` paths ran; "paths run" is then
  final too (counts are still lower bounds). Functions with an infeasible path
  never get there.

With conditions measured (``--conditions``), a function's decisions stop apart from
its paths: once the paths tell all, its calls run the original code with the decisions
still counting (:func:`pathprof.python.switches.add_switch`); once each decision is
done too (:func:`decision_done`), the original code as written. Vector counts are
then lower bounds; the verdicts are final.

The same holds loop by loop, sooner: a loop whose *hidden paths* (those its
original body leaves uncounted: the paths that start at its header after a
backedge and enter its body, and every path that starts inside its body,
:class:`pathprof.python.plan.LoopSwitch`) all ran (``"paths"``), or all lie
in the span of the paths that ran (``"basis"``: checked on a spanning set of
them), can run its original body for the rest of each loop entry: the paths it
then leaves uncounted would change nothing reported but counts.

Invariant: a function (a loop) is sent back only once the criterion holds for the
paths reported since the tables were armed; a call under way when it is sent back
ends measured, so every path recorded is a whole path; a loop sent back leaves
uncounted only its hidden paths, and counts its normal exit exactly.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pathprof import runtime
from pathprof.analysis.basis import BasisBuilder
from pathprof.analysis.conditions import Decision, mcdc
from pathprof.contract import DecisionInfo, FunctionInfo
from pathprof.data.profile import numbering_of
from pathprof.measure import goback
from pathprof.runtime import stopping

if TYPE_CHECKING:
    from pathprof.runtime import ModuleState

    #: a loop that can go back to its original body, as the module registers it
    #: (:attr:`pathprof.runtime.switching.Switching.loops`): the ``(first, count)``
    #: ranges of its hidden paths, and the paths that span them
    _Loop = tuple[tuple[tuple[int, int], ...], tuple[int, ...]]

__all__ = ["WHEN", "StopCounting", "decision_done"]

#: When a function stops counting: never (every count exact), once its basis is
#: full, once every path ran.
WHEN = ("never", "basis", "paths")


def decision_done(decision: DecisionInfo, seen: set[int]) -> bool:
    """Whether a decision has nothing more to tell: every vector it allows ran, or
    MC/DC is shown for each of its conditions in both forms (a unique-cause pair is a
    masking pair too): the counts are then the only thing more runs would change."""
    if len(seen) >= decision.vectors:
        return True
    if len(seen) < 2:
        return False
    verdicts = mcdc(Decision.from_info(decision), seen)
    return all(v.unique_cause is not None for v in verdicts)  # (implies masking)


class _Function:
    """What the first runs of one function's paths have shown.

    Distinct paths are linearly independent two at a time, so a function of one or
    two paths has a basis of all of them, and its numbering (the costly part, built
    from the metadata) is never needed."""

    __slots__ = ("basis", "decisions", "loops", "meta", "numbers", "possible", "when")

    def __init__(self, meta: FunctionInfo, when: str, loops: tuple[_Loop, ...] = ()
                 ) -> None:
        self.meta = meta
        self.when = when
        self.numbers: set[int] = set()
        self.possible = meta.num_paths
        self.basis: BasisBuilder | None = None
        #: conditions measured: the decisions not done yet, each with the vectors
        #: seen (:func:`decision_done`)
        self.decisions: dict[int, set[int]] = {
            d: set() for d, decision in enumerate(meta.decisions)
            if decision.vectors and decision.slot >= 0}  # (not those its branches count)
        #: loops still measured: ordinal -> [hidden path ranges, how many hidden
        #: paths, spanning paths, progress] (progress: hidden paths seen with
        #: "paths", spanning paths known to be spanned with "basis" -- a span
        #: only grows; Any: a list of four kinds of item, the last updated in place)
        self.loops: dict[int, list[Any]] = {
            ordinal: [ranges, sum(count for _, count in ranges), spanning, 0]
            for ordinal, (ranges, spanning) in enumerate(loops)}

    def add(self, number: int) -> tuple[bool, list[int]]:
        """Record a first run; whether nothing more is to be learned, and the loops
        whose hidden paths have nothing more to tell."""
        if not 0 <= number < self.possible:
            return False, []
        if number in self.numbers:  # (reported again: what stopped its work went on)
            return self._complete(), []
        if self.when == "paths" or self.possible <= 2:
            self.numbers.add(number)
            return len(self.numbers) >= self.possible, self._loops_known(number, True)
        # (the number is kept once the basis has it: an exception that stops the work
        # half-way, a signal handler's, leaves both as they were)
        if self.basis is None:
            grew = True  # (a third path may not raise the rank: checking is harmless)
            if len(self.numbers) >= 2:
                basis = BasisBuilder(numbering_of(self.meta))
                for seen in (*self.numbers, number):
                    basis.add(seen)
                self.basis = basis
        else:
            grew = self.basis.add(number)  # (its one change is its last store)
        self.numbers.add(number)
        full = self.basis is not None and self.basis.full
        return full, self._loops_known(number, grew)

    def _complete(self) -> bool:
        """Whether the paths seen tell all (see :meth:`add`)."""
        if self.when == "paths" or self.possible <= 2:
            return len(self.numbers) >= self.possible
        return self.basis is not None and self.basis.full

    def add_vector(self, slot: int) -> bool:
        """Record a vector's first run (by its counter slot); whether this made the
        function's decisions all done (nothing later runs can change a verdict)."""
        for d, seen in list(self.decisions.items()):
            decision = self.meta.decisions[d]
            if decision.slot <= slot < decision.slot + decision.vectors:
                seen.add(slot - decision.slot)
                if decision_done(decision, seen):
                    del self.decisions[d]
                    return not self.decisions
                break
        return False

    def _loops_known(self, number: int, grew: bool) -> list[int]:
        known = []
        for ordinal, loop in self.loops.items():
            ranges, count, spanning, progress = loop
            if self.when == "paths":
                progress += any(first <= number < first + size for first, size in ranges)
                done = progress >= count
            else:
                while grew and progress < len(spanning) and self._spans(spanning[progress]):
                    progress += 1
                done = progress >= len(spanning)
            loop[3] = progress
            if done:
                known.append(ordinal)
        for ordinal in known:
            del self.loops[ordinal]
        return known

    def _spans(self, number: int) -> bool:
        """Whether path ``number`` is in the span of the paths that ran (two distinct
        paths span no third: each path's edge vector has one ENTRY edge and the
        others 0 or 1, so a combination of two that is a path is one of them)."""
        if self.basis is None:
            return number in self.numbers
        return self.basis.spans(number)


class StopCounting:
    """Hears of first runs (:data:`pathprof.runtime.stopping.watcher`) and sends each
    function back to its original code once ``when`` holds for it.

    Thread-safe without blocking the program: a thread that finds another one at
    work leaves its report in the queue the other drains.

    A signal handler of the program's may raise in the middle of the work (Python
    runs it in the main thread between two bytecodes, here too): the exception goes
    on to the program (:func:`pathprof.runtime.passthrough.must_pass`), and the
    work is left so that the next report goes on with the others: no lock is held
    across a call (who drains is a flag tested and set with no bytecode between
    that lets another thread or a handler run, under the GIL), and a function's
    state changes only once what it learnt is complete (:meth:`_Function.add`). The
    report under way is dropped, not made again: work that takes longer than the
    time between two signals would otherwise be started again and again. Its path
    was counted all the same; the function may only stop counting later, or not
    at all (its counts then stay exact).
    """

    def __init__(self, when: str) -> None:
        if when not in WHEN[1:]:
            raise ValueError(f"stop counting when: {', '.join(WHEN[1:])}, not {when!r}")
        self.when = when
        self._functions: dict[tuple[int, int], _Function] = {}
        self._queue: list[tuple[ModuleState, int, int]] = []
        #: whether a thread drains the queue (see the class docstring)
        self._draining = False

    def start(self) -> None:
        """Listen, with every function measured again from its next call."""
        self._functions.clear()
        for state in runtime.modules():
            state.rearm()
        stopping.watcher = self

    def stop(self) -> None:
        """Listen no more; what the first runs showed is let go (:meth:`start` begins
        afresh)."""
        if stopping.watcher is self:
            stopping.watcher = None
        self._functions.clear()

    def seen(self, state: ModuleState, index: int, number: int) -> None:
        """Path ``number`` of function ``index`` of ``state``'s module ran for the
        first time (called from the program, by the function's table); a negative
        ``number`` is the decision vector counted at slot ``-1 - number``, by its
        counter."""
        queue = self._queue
        queue.append((state, index, number))
        while queue and not self._draining:
            mine = False
            try:
                if self._draining:  # (a thread switch came since the test above)
                    return
                self._draining = mine = True  # (no bytecode between test and set
                # lets another thread run: no call, no backward jump)
                with runtime.own_work:
                    while queue:
                        self._add(*queue.pop())
            finally:
                if mine:
                    self._draining = False

    def _add(self, state: ModuleState, index: int, number: int) -> None:
        """A first run: path ``number``, or (negative) the vector at ``-1 - number``."""
        switching = state.switching
        assert switching is not None, "a first run reported by a table that cannot stop"
        key = (id(state), index)
        function = self._functions.get(key)
        if function is None:
            function = self._functions[key] = _Function(
                state.meta.functions[index], self.when, switching.loops.get(index, ()))
        if number < 0:
            if function.add_vector(-1 - number):
                switching.send_conditions_back(index)
            return
        full, loops = function.add(number)
        if full:
            if index in switching.swaps:  # (by its __code__; else by its body's switch)
                goback.send_back(state, index)
            else:
                switching.send_back(index)
        for ordinal in loops:
            switching.send_loop_back(index, ordinal)
