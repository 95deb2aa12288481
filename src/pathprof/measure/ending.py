"""A run's end, and the signals that come then (standard library only).

Once the program has ended (its last line, the threads Python waits for, its exit
handlers), what is left is pathprof's: taking the counts, decoding them, saving the
data file (``run``), or writing the report (``hot``, ``count``; the pytest plugin's
save at the end of the session). A signal that came then used to cut that work
short wherever it stood: SIGINT raised ``KeyboardInterrupt`` in the middle of the
decoding, and the run was saved with part of its counts or none -- replacing, without
``--append``, a good data file -- or not at all; SIGTERM killed the process with
nothing said.

:class:`RunEnd` holds them instead, from the program's end until the work is done:

* SIGINT and SIGTERM (unless ignored) are recorded, not acted on (as a parallel
  run's :class:`pathprof.parallel.signals.Interruption` does while its copies run);
  once the work is done the process dies of the signal (its
  :func:`~pathprof.parallel.signals.die_of`), as it would have without pathprof:
  a shell sees 130 for SIGINT (Python's own end after an uncaught
  ``KeyboardInterrupt``), 143 for SIGTERM (a parent, ``-SIGTERM``);
* any other signal with a Python handler of the program's (an alarm it armed that
  fires only now) is recorded and dropped: the program's code is done, as its
  handler's exception would have nowhere to go but into pathprof's save (Python
  itself runs no handler once it is shutting down);
* a ``KeyboardInterrupt`` that the default handler raised just before the holding
  began (after the program's last exit handler) counts as a SIGINT held.

A SIGTERM that comes while the program still runs is the other case: the SIGTERM
handler :meth:`RunEnd.on_sigterm` installs (where the program left SIGTERM at its
default, hidden from the program as :func:`hide_handler` says) ends the run there,
holding the signals as above: it keeps what was measured (``run`` saves;
``hot`` and ``count`` report), then the process dies of SIGTERM.

Only the main thread handles signals (Python's rule): elsewhere nothing is held.
A signal nothing can hold (SIGKILL) still ends the process at once; the data file
is then as it was (its writes are atomic).
"""

from __future__ import annotations

import contextlib
import functools
import signal
import sys
import threading
from collections.abc import Callable
from types import FrameType
from typing import TYPE_CHECKING, TypeVar

from pathprof.parallel.signals import die_of

if TYPE_CHECKING:
    #: A signal's disposition, as :func:`signal.getsignal` gives it and
    #: :func:`signal.signal` takes it.
    _Handler = Callable[[int, FrameType | None], object] | int | signal.Handlers | None

    _F = TypeVar("_F", bound=Callable[..., object])

__all__ = ["RunEnd", "hide_handler"]

#: The signals a run's end holds and then dies of.
_DEADLY = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM") if hasattr(signal, name))
#: Every signal a handler can be installed for.
_CATCHABLE = tuple(sorted(
    int(signum) for signum in signal.valid_signals()
    if signum not in {getattr(signal, name, None) for name in ("SIGKILL", "SIGSTOP")}))


def _raw(function: _F) -> _F:
    """``signal.getsignal`` or ``signal.signal`` as :mod:`signal` has them, without
    the wrapper :func:`hide_handler` put in their place."""
    return getattr(function, "__wrapped__", function)


class RunEnd:
    """Holds signals from a run's end until what it measured is kept (see the module
    docstring)."""

    def __init__(self) -> None:
        #: while holding: each signal held -> the handler it had before
        self._saved: dict[int, _Handler] = {}
        self._holding = False
        #: SIGINT and SIGTERM held (the process dies of the first), in order
        self.held: list[int] = []
        #: other signals that came while held, and were dropped
        self.dropped: list[int] = []
        #: the program's exit status, once its end was reported (None before)
        self.status: int | None = None

    @property
    def holding(self) -> bool:
        return self._holding

    @property
    def signal(self) -> int | None:
        """The SIGINT or SIGTERM held (the first, if both came), None if none."""
        return self.held[0] if self.held else None

    def _note(self, signum: int) -> None:
        if signum not in self.held:
            self.held.append(signum)

    def hold_sigint(self) -> None:
        """A ``KeyboardInterrupt`` the default handler raised once the program had
        ended, before :meth:`begin` held SIGINT: as if held."""
        self._note(signal.SIGINT)

    def _record(self, signum: int, frame: FrameType | None) -> None:
        if signum in _DEADLY:
            self._note(signum)
        else:
            self.dropped.append(signum)

    def begin(self) -> None:
        """Hold SIGINT, SIGTERM and the program's other Python handlers until
        :meth:`end` (in the main thread; called again: nothing more). What a handler
        raises while they are being put in place is the program's last word, come
        after its end: a ``KeyboardInterrupt`` is a SIGINT held, anything else is
        dropped. (Nothing here leaves a handler half put in place: what was there is
        read first, in full, then each signal gets the recorder, again if need be.)"""
        if self._holding or threading.current_thread() is not threading.main_thread():
            return
        self._holding = True
        getsignal, set_handler = _raw(signal.getsignal), _raw(signal.signal)
        for _attempt in range(64):  # (each attempt is short: a signal storm, not a loop)
            try:
                if not self._saved:
                    saved: dict[int, _Handler] = {}
                    for signum in _CATCHABLE:
                        try:
                            handler = getsignal(signum)
                        except (ValueError, OSError):
                            continue
                        if signum in _DEADLY:  # held unless ignored (None: set from C)
                            if handler is not signal.SIG_IGN and handler is not None:
                                saved[signum] = handler
                        elif callable(handler):  # SIG_DFL, SIG_IGN, None: no Python runs
                            saved[signum] = handler
                    self._saved = saved
                for signum in self._saved:
                    set_handler(signum, self._record)
                return
            except BaseException as err:  # a handler ran before it was held
                if isinstance(err, KeyboardInterrupt):
                    self._note(signal.SIGINT)

    def end(self) -> None:
        """Put the handlers back (the signals held stay in :attr:`held`): the
        program's others first, SIGINT last. A ``KeyboardInterrupt`` the default
        handler raises as soon as it is back is a SIGINT held."""
        if not self._holding:
            return
        set_handler = _raw(signal.signal)
        order = sorted(self._saved, key=lambda signum: (signum in _DEADLY, -signum))
        for _attempt in range(64):
            try:
                while order:
                    signum = order[0]
                    with contextlib.suppress(ValueError, OSError):
                        set_handler(signum, self._saved[signum])
                    order.pop(0)
                break
            except BaseException as err:  # a handler put back ran at once
                if isinstance(err, KeyboardInterrupt):
                    self._note(signal.SIGINT)
        self._saved = {}
        self._holding = False

    def die(self) -> None:
        """If a SIGINT or SIGTERM was held, end the process by it now (the handlers
        put back first); otherwise return."""
        signum = self.signal
        if signum is not None:
            self.end()
            die_of(signum)

    def on_sigterm(self, finish: Callable[[], object]) -> None:
        """While SIGTERM is at its default (in the main thread): a SIGTERM ends the run
        where it stands -- signals held (:meth:`begin`), ``finish()`` keeps what was
        measured (its failure is its own to tell), then the process dies of SIGTERM.
        Hidden from the program (:func:`hide_handler`): it sees SIGTERM at its default,
        and a handler it installs takes its place."""
        if not hasattr(signal, "SIGTERM"):  # pragma: no cover - Windows
            return
        getsignal = _raw(signal.getsignal)

        def on_sigterm(signum: int, frame: FrameType | None) -> None:
            self.begin()
            self._note(signal.SIGTERM)
            with contextlib.suppress(Exception):
                finish()
            with contextlib.suppress(Exception):
                sys.stdout.flush()
                sys.stderr.flush()
            self.die()

        try:
            if getsignal(signal.SIGTERM) is not signal.SIG_DFL:
                return
            _raw(signal.signal)(signal.SIGTERM, on_sigterm)
        except ValueError:  # not the main thread: leave signals alone
            return
        hide_handler(signal.SIGTERM, on_sigterm, signal.SIG_DFL)


def hide_handler(signum: int, handler: _Handler, previous: _Handler) -> None:
    """The program sees the disposition of ``signum`` as it was before pathprof put
    ``handler`` there (``previous``): :func:`signal.getsignal` says so, and so does
    :func:`signal.signal` as it returns what it replaced -- a program or a library
    that installs its own handler only where none is set still does. Functions of
    :mod:`signal` bound before this (``from signal import getsignal``) see the
    handler."""
    getsignal, set_handler = signal.getsignal, signal.signal
    if getattr(getsignal, "_pathprof_hides", None) is not None:
        getsignal, set_handler = getsignal.__wrapped__, set_handler.__wrapped__  # type: ignore[attr-defined]

    @functools.wraps(getsignal)
    def hiding_getsignal(number: int) -> _Handler:
        current = getsignal(number)
        return previous if number == signum and current is handler else current

    @functools.wraps(set_handler)
    def hiding_signal(number: int, new: _Handler) -> _Handler:
        replaced = set_handler(number, new)
        return previous if number == signum and replaced is handler else replaced

    hiding_getsignal._pathprof_hides = handler  # type: ignore[attr-defined]
    signal.getsignal, signal.signal = hiding_getsignal, hiding_signal  # type: ignore[assignment]
