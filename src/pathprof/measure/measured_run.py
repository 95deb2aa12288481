"""One measured run of a program: what ``pathprof run``, ``count`` and ``hot`` share.

The three commands differ in what measures (a :class:`~pathprof.measure.profiler.Profiler`,
an :class:`~pathprof.events.EventCounter`, a :class:`~pathprof.subpaths.SubpathSampling`:
each a :class:`~pathprof.measure.measuring.Measuring`) and in what they keep of it
(``run`` saves the data file; ``count`` and ``hot`` report): a :class:`Keeper` says that.
The order around them is this module's, once:

1. the main script is compiled instrumented where the measurement selects it;
2. the measurement starts as the program starts and stops once Python's end of it
   (its threads, its exit handlers) is done (:func:`~pathprof.measure.program.run_program`);
3. from the program's end, SIGINT and SIGTERM are held
   (:class:`~pathprof.measure.ending.RunEnd`) while the keeper keeps what was measured;
   then the process dies of a signal held, as it would have without pathprof;
4. a SIGTERM while the program runs stops the measurement, has the keeper keep what was
   measured so far (or say that nothing was, if the measurement had not started), and
   the process dies of it.

Invariant: the keeper keeps at most once a run, always after the measurement stopped;
when the run raised (a ``KeyboardInterrupt`` while the program ran), only a keeper
that :attr:`~Keeper.keeps_when_raised` keeps, before the exception goes on.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from pathprof.measure.measuring import Measuring
    from pathprof.measure.program import Program

__all__ = ["Keeper", "run_measured"]


class Keeper(Protocol):
    """What a command does around its measured run and keeps of it."""

    #: whether :meth:`keep` runs also when the run raised (``run``: the data file is
    #: saved whatever ends the run; ``count`` and ``hot`` report only a run that ended)
    keeps_when_raised: bool

    def program_starts(self) -> None:
        """Just before the measurement starts (``run``: its child processes measured)."""

    def program_ended(self) -> None:
        """The program ended, or a SIGTERM ended it, before anything is kept (``run``:
        its children no longer measured; ``hot``: its live view stopped)."""

    def keep(self, *, terminated: bool) -> None:
        """Keep what was measured (the measurement has stopped); ``terminated``: a
        SIGTERM ended the program, and what it had run so far is kept."""

    def nothing_measured(self) -> None:
        """A SIGTERM came before the measurement started: say so, keep nothing (an
        earlier data file or report stays as it was)."""


def run_measured(program: Program, measuring: Measuring, keeper: Keeper) -> int:
    """Run ``program`` measured by ``measuring``, what it measured kept by ``keeper``
    (the module docstring gives the order); the program's exit status."""
    from pathprof import runtime
    from pathprof.measure.ending import RunEnd
    from pathprof.measure.program import main_compiler, run_program

    compile_main = main_compiler(measuring.selection, measuring.options)
    end = RunEnd()
    started = kept = False

    def start() -> None:
        nonlocal started
        measuring.start()
        started = True

    def keep(*, terminated: bool) -> None:
        nonlocal kept
        if not kept:
            kept = True
            keeper.keep(terminated=terminated)

    def terminated() -> None:
        keeper.program_ended()
        if not started:
            keeper.nothing_measured()
            return
        with contextlib.suppress(Exception):  # (what it measured so far is still kept)
            measuring.stop()
        keep(terminated=True)

    end.on_sigterm(terminated)
    ended = False
    with runtime.own_work:
        keeper.program_starts()
        try:
            status = run_program(program, start, measuring.stop, compile_main, end)
            ended = True
        finally:
            end.begin()  # (as the program ended, unless it raised before)
            keeper.program_ended()
            if started and (ended or keeper.keeps_when_raised):
                keep(terminated=False)
    runtime.forget_decoded()  # (kept: the exit need not walk what was decoded)
    end.die()  # a SIGINT or SIGTERM that came once the program had ended
    end.end()
    return status
