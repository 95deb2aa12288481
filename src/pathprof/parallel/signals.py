"""How a parallel run takes SIGINT and SIGTERM while its copies run.

The copies share the run's process group, as any child does: a Ctrl-C at the
terminal (or a signal sent to the group) reaches every copy, which then does what
the program does under ``pathprof run`` (saves, and ends as the signal says). A
signal sent to the run's process alone reaches no copy. The run cannot tell the two
apart, so it gives the copies :data:`GRACE` seconds to end by themselves, then
sends the ones still running SIGTERM, which a copy answers by saving what it
measured and ending (it waits for a save under way to finish). A second signal
sends SIGTERM at once, a third SIGKILL (what a copy measured is then lost).
Nothing here sends a copy SIGINT: if the copy had one already, a second arriving
in the middle of its save would lose the save.

While :class:`Interruption` is active the run's own process records the signals
instead of raising ``KeyboardInterrupt`` or dying, so that it can wait for the
copies, merge what they saved and remove its temporary files; its caller then
ends as the signal would have ended it (:func:`die_of`).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from types import FrameType, TracebackType

__all__ = ["GRACE", "Interruption", "die_of", "signal_name"]

#: Seconds the copies get to end by themselves after the run is signalled, before
#: they are sent SIGTERM.
GRACE = 2.0

#: The signals a parallel run takes (those that exist here).
SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM") if hasattr(signal, name))


class Interruption:
    """While active (``with``), SIGINT and SIGTERM are recorded, not acted on.

    Only in the main thread (elsewhere Python lets no one handle signals, and
    nothing is recorded); a signal this process ignores stays ignored, so that the
    copies, which inherit that, ignore it too. On leaving, the handlers are put back.
    """

    def __init__(self) -> None:
        #: the last signal received, None if none
        self.signal: int | None = None
        #: how many were received
        self.count = 0
        #: when the first came (``time.monotonic``)
        self.since = 0.0
        #: each signal's handler before (a Python function, or SIG_DFL)
        self._previous: dict[int, Callable[[int, FrameType | None], object] | int] = {}

    def __enter__(self) -> Interruption:
        if threading.current_thread() is not threading.main_thread():
            return self
        for signum in SIGNALS:
            previous = signal.getsignal(signum)
            if previous is signal.SIG_IGN or previous is None:  # None: not set from Python
                continue
            signal.signal(signum, self._record)
            self._previous[signum] = previous
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        for signum, previous in self._previous.items():
            signal.signal(signum, previous)
        self._previous.clear()

    def _record(self, signum: int, frame: FrameType | None) -> None:
        if self.signal is None:
            self.since = time.monotonic()
        self.signal = signum
        self.count += 1

    def escalation(self) -> int | None:
        """What the copies still running should be sent now: None (nothing, or not
        yet), SIGTERM (:data:`GRACE` has passed, or a second signal came) or SIGKILL
        (a third)."""
        if self.signal is None:
            return None
        if self.count >= 3:
            return getattr(signal, "SIGKILL", signal.SIGTERM)
        if self.count >= 2 or time.monotonic() - self.since >= GRACE:
            return signal.SIGTERM
        return None


def signal_name(signum: int) -> str:
    """``SIGINT`` for 2, and so on."""
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def die_of(signum: int) -> None:
    """End this process as ``signum`` ends a process that does not handle it (a
    shell sees 128 + ``signum``), after flushing what was written."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        sys.stdout.flush()
        sys.stderr.flush()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)
