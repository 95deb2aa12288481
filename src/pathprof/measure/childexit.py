"""How a measured process that is not ended by its own last line saves first: a
forked child that calls ``os._exit`` (:func:`patch_os_exit`) or is killed by SIGTERM
(:func:`save_on_sigterm`, then :func:`die_of_sigterm`), and ``multiprocessing``'s
children that a SIGTERM reaches at the wrong instant (:func:`patch_fork_popen`).
Standard library only: it runs in the program's process.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import sys
from collections.abc import Callable
from types import FrameType
from typing import TYPE_CHECKING, Protocol

from pathprof.measure.ending import RunEnd
from pathprof.measure.ending import hide_handler as _hide_handler

if TYPE_CHECKING:
    from pathprof.measure.profiler import Profiler

    class _Popen(Protocol):
        """A ``multiprocessing`` child's ``Popen`` as :func:`patch_fork_popen` uses
        it: its pid, and the mark its ``terminate`` leaves."""

        pid: int
        _pathprof_terminated: bool

__all__ = ["RESEND_SIGTERM_AFTER", "die_of_sigterm", "patch_fork_popen", "patch_os_exit",
           "save_on_sigterm"]


#: A forked child that ``multiprocessing`` terminated and that is still alive after
#: this many seconds is sent SIGTERM again (see :func:`patch_fork_popen`).
RESEND_SIGTERM_AFTER = 1.0


def patch_fork_popen() -> None:
    """Make ``terminate()`` of ``multiprocessing``'s forked children robust to a race
    in CPython's signal handling that pathprof's SIGTERM handler in the child exposes.

    A Python signal handler runs only when the main thread next executes bytecode.
    A SIGTERM that arrives just before the child's main thread blocks in a call
    that the signal then cannot interrupt (a ``Pool`` worker waiting for its queue's
    lock) is never handled: the child waits forever, and so does the parent's
    ``join()``. Sent again, SIGTERM interrupts the blocked call, the handler runs
    and the child saves its counts and dies. So a child terminated through
    ``Popen.terminate`` that is still alive after :data:`RESEND_SIGTERM_AFTER`
    seconds is sent SIGTERM again, every as many seconds, while the parent waits
    for it. Called in the parent after each fork, and before the first child that
    spawn or forkserver starts (:mod:`pathprof.measure.children`); patches ``popen_fork``
    (whose ``Popen`` the other two extend) once.
    """
    popen_fork = sys.modules.get("multiprocessing.popen_fork")
    if popen_fork is None or getattr(popen_fork.Popen.wait, "_pathprof", False):
        return
    popen = popen_fork.Popen
    original_wait: Callable[[_Popen, float | None], int | None]
    original_terminate: Callable[[_Popen], None]
    original_wait, original_terminate = popen.wait, popen.terminate

    def forked_by_us(process: object) -> bool:
        # the children pathprof measures: forked, or new interpreters started by
        # spawn and forkserver (pathprof.measure.children), with the same handler
        return type(process).__module__ in ("multiprocessing.popen_fork",
                                            "multiprocessing.popen_forkserver",
                                            "multiprocessing.popen_spawn_posix")

    def terminate(self: _Popen) -> None:
        if forked_by_us(self):
            self._pathprof_terminated = True
        original_terminate(self)

    def wait(self: _Popen, timeout: float | None = None) -> int | None:
        if timeout is not None or not getattr(self, "_pathprof_terminated", False):
            return original_wait(self, timeout)
        while True:
            code = original_wait(self, RESEND_SIGTERM_AFTER)
            if code is not None:
                return code
            with contextlib.suppress(OSError):
                os.kill(self.pid, signal.SIGTERM)

    wait._pathprof = True  # type: ignore[attr-defined]
    popen.wait, popen.terminate = wait, terminate


def die_of_sigterm() -> None:
    """End the process as an unhandled SIGTERM would have."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGTERM)


def patch_os_exit(profiler: Profiler) -> None:
    """Make ``os._exit`` in a forked child save the child's counts first."""
    original = getattr(os._exit, "__wrapped__", os._exit)

    @functools.wraps(original)
    def _exit(status: int) -> None:
        # Never keep a child from exiting: os._exit returns to nothing, so what a
        # signal handler raised during the save has nowhere to go.
        with contextlib.suppress(BaseException):
            profiler._save_at_exit()
        original(status)

    os._exit = _exit  # type: ignore[assignment]


def save_on_sigterm(profiler: Profiler, save: Callable[[], object] | None = None) -> None:
    """Killed by SIGTERM, save first, then die of the signal as the process would
    have (``multiprocessing.Pool.terminate`` in a forked child; coverage.py's
    ``sigterm = true``; ``pathprof run`` has its own,
    :meth:`pathprof.measure.ending.RunEnd.on_sigterm`). ``save`` is what saves
    (default: a forked child's save). Only when the program has not installed a
    SIGTERM handler of its own."""
    if not hasattr(signal, "SIGTERM"):  # pragma: no cover - Windows
        return
    save = save or profiler._save_at_exit
    try:
        if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
            return

        def on_sigterm(signum: int, frame: FrameType | None) -> None:
            if getattr(profiler, "_saving", False):  # a save is under way: finish it first
                profiler._terminated_while_saving = True
                return
            RunEnd().begin()  # what comes meanwhile (a Ctrl-C to the group) waits
            with contextlib.suppress(Exception):
                save()
            with contextlib.suppress(Exception):
                sys.stdout.flush()
                sys.stderr.flush()
            die_of_sigterm()

        signal.signal(signal.SIGTERM, on_sigterm)
        _hide_handler(signal.SIGTERM, on_sigterm, signal.SIG_DFL)
    except ValueError:  # not the main thread: leave signals alone
        pass
