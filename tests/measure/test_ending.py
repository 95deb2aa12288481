"""pathprof.measure.ending: a run's end holds its signals. Between ``begin`` and
``end`` SIGINT and SIGTERM (unless ignored) are recorded, not acted on, and other
signals with a Python handler of the program's are recorded and dropped; ``end`` puts
every handler back as it was; ``die`` ends the process by the first SIGINT or SIGTERM
held. ``on_sigterm`` ends a running program's run on SIGTERM (keeping what was
measured, then dying of it), hidden from the program by ``hide_handler``. In-process
tests put every handler, and ``signal.getsignal``/``signal.signal``, back as they were;
the two ways the process dies are run in forked children."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Iterator
from types import FrameType

import pytest

from pathprof.measure import ending
from pathprof.measure.ending import RunEnd, hide_handler

pytestmark = pytest.mark.skipif(not (hasattr(signal, "SIGUSR1") and hasattr(os, "fork")),
                                reason="POSIX signals and fork")

RAW_GETSIGNAL = getattr(signal.getsignal, "__wrapped__", signal.getsignal)
RAW_SIGNAL = getattr(signal.signal, "__wrapped__", signal.signal)


@pytest.fixture(autouse=True)
def signals_kept() -> Iterator[None]:
    """Every handler, and the module's functions, as they were before the test."""
    functions = (signal.getsignal, signal.signal)
    before = {}
    for signum in ending._CATCHABLE:
        try:
            before[signum] = RAW_GETSIGNAL(signum)
        except (ValueError, OSError):
            continue
    yield
    signal.getsignal, signal.signal = functions
    for signum, handler in before.items():
        if handler is not None and RAW_GETSIGNAL(signum) is not handler:
            RAW_SIGNAL(signum, handler)


class Handler:
    """A handler of the program's that notes each call."""

    def __init__(self) -> None:
        self.calls: list[int] = []

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        self.calls.append(signum)


def _held(end: RunEnd, signum: int) -> None:
    """Raise ``signum`` in this process, having checked that ``end`` records it (were it
    not held, SIGTERM would end the test run)."""
    assert RAW_GETSIGNAL(signum) == end._record
    signal.raise_signal(signum)


def test_sigint_and_sigterm_are_held_in_order_and_their_handlers_put_back() -> None:
    sigint_before = RAW_GETSIGNAL(signal.SIGINT)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    end = RunEnd()
    assert (end.holding, end.signal, end.held) == (False, None, [])
    end.begin()
    assert end.holding
    _held(end, signal.SIGTERM)  # no KeyboardInterrupt, no death: recorded
    _held(end, signal.SIGINT)
    _held(end, signal.SIGTERM)
    assert end.held == [signal.SIGTERM, signal.SIGINT]
    assert end.signal == signal.SIGTERM  # the first
    end.end()
    assert not end.holding
    assert RAW_GETSIGNAL(signal.SIGINT) is sigint_before
    assert RAW_GETSIGNAL(signal.SIGTERM) is signal.SIG_DFL
    assert end.held == [signal.SIGTERM, signal.SIGINT]  # what was held stays known


def test_another_signal_of_the_programs_is_recorded_and_dropped() -> None:
    programs = Handler()
    signal.signal(signal.SIGUSR1, programs)
    end = RunEnd()
    end.begin()
    _held(end, signal.SIGUSR1)
    _held(end, signal.SIGUSR1)
    assert programs.calls == []  # the program's code is done
    assert (end.dropped, end.held, end.signal) == ([signal.SIGUSR1] * 2, [], None)
    end.end()
    assert RAW_GETSIGNAL(signal.SIGUSR1) is programs
    signal.raise_signal(signal.SIGUSR1)
    assert programs.calls == [signal.SIGUSR1]


def test_what_no_python_handles_is_left_as_it_is() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGUSR2, signal.SIG_DFL)
    signal.signal(signal.SIGUSR1, signal.SIG_IGN)
    end = RunEnd()
    end.begin()
    assert RAW_GETSIGNAL(signal.SIGINT) is signal.SIG_IGN  # ignored: not held
    assert RAW_GETSIGNAL(signal.SIGUSR2) is signal.SIG_DFL
    assert RAW_GETSIGNAL(signal.SIGUSR1) is signal.SIG_IGN
    signal.raise_signal(signal.SIGINT)
    assert end.held == []
    end.end()
    assert RAW_GETSIGNAL(signal.SIGINT) is signal.SIG_IGN


def test_begin_again_and_end_again_do_nothing_more() -> None:
    programs = Handler()
    signal.signal(signal.SIGUSR1, programs)
    end = RunEnd()
    end.end()  # not holding: nothing to put back
    assert RAW_GETSIGNAL(signal.SIGUSR1) is programs
    end.begin()
    end.begin()  # would otherwise take the recorder for the program's handler
    end.end()
    end.end()
    assert RAW_GETSIGNAL(signal.SIGUSR1) is programs
    assert not end.holding


def test_a_run_end_can_hold_again_after_it_ended() -> None:
    programs = Handler()
    signal.signal(signal.SIGUSR1, programs)
    end = RunEnd()
    end.begin()
    end.end()
    end.begin()
    _held(end, signal.SIGUSR1)
    end.end()
    assert (end.dropped, programs.calls) == ([signal.SIGUSR1], [])
    assert RAW_GETSIGNAL(signal.SIGUSR1) is programs


def test_a_keyboard_interrupt_just_before_the_holding_counts_as_a_sigint_held() -> None:
    end = RunEnd()
    end.hold_sigint()
    end.hold_sigint()
    assert (end.held, end.signal) == ([signal.SIGINT], signal.SIGINT)


def test_nothing_is_held_outside_the_main_thread() -> None:
    programs = Handler()
    signal.signal(signal.SIGUSR1, programs)
    end = RunEnd()
    thread = threading.Thread(target=end.begin)
    thread.start()
    thread.join()
    assert not end.holding
    assert RAW_GETSIGNAL(signal.SIGUSR1) is programs


def test_die_without_a_signal_held_returns() -> None:
    end = RunEnd()
    end.begin()
    end.die()
    assert end.holding  # nothing to die of: the handlers stay held until end()
    end.end()


def test_on_sigterm_is_installed_only_where_sigterm_is_at_its_default() -> None:
    programs = Handler()
    signal.signal(signal.SIGTERM, programs)
    RunEnd().on_sigterm(lambda: None)
    assert RAW_GETSIGNAL(signal.SIGTERM) is programs
    assert signal.getsignal(signal.SIGTERM) is programs


def test_on_sigterms_handler_is_hidden_and_gives_way_to_the_programs() -> None:
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    RunEnd().on_sigterm(lambda: None)
    installed = RAW_GETSIGNAL(signal.SIGTERM)
    assert callable(installed)
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # what the program sees
    programs = Handler()
    assert signal.signal(signal.SIGTERM, programs) is signal.SIG_DFL
    assert RAW_GETSIGNAL(signal.SIGTERM) is programs  # its handler takes the place
    assert signal.getsignal(signal.SIGTERM) is programs
    assert signal.signal(signal.SIGTERM, signal.SIG_DFL) is programs


def test_hide_handler_hides_one_signal_from_the_functions_of_signal() -> None:
    def mine(signum: int, frame: FrameType | None) -> None:
        pass

    before = RAW_GETSIGNAL(signal.SIGUSR1)
    RAW_SIGNAL(signal.SIGUSR1, mine)
    bound_before: Callable[[int], object] = signal.getsignal
    hide_handler(signal.SIGUSR1, mine, before)
    assert signal.getsignal(signal.SIGUSR1) is before
    assert bound_before(signal.SIGUSR1) is mine  # bound before: sees the handler
    assert signal.getsignal(signal.SIGUSR2) is RAW_GETSIGNAL(signal.SIGUSR2)
    hide_handler(signal.SIGUSR1, mine, before)  # again: wraps the functions once
    assert signal.getsignal.__wrapped__ is RAW_GETSIGNAL  # type: ignore[attr-defined]
    assert signal.signal.__wrapped__ is RAW_SIGNAL  # type: ignore[attr-defined]
    assert signal.getsignal(signal.SIGUSR1) is before
    assert signal.signal(signal.SIGUSR1, signal.SIG_IGN) is before
    assert signal.getsignal(signal.SIGUSR1) is signal.SIG_IGN


def _in_child(body: Callable[[int], None]) -> tuple[int, bytes]:
    """Run ``body(fd)`` in a forked child; its wait status and what it wrote to ``fd``."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child never returns into the test run
        try:
            os.close(read_end)
            body(write_end)
        finally:
            os._exit(99)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as output:
        written = output.read()
    _pid, status = os.waitpid(pid, 0)
    return status, written


def test_a_held_sigterm_ends_the_process_by_sigterm_once_die_is_called() -> None:
    def child(fd: int) -> None:
        RAW_SIGNAL(signal.SIGTERM, signal.SIG_DFL)
        end = RunEnd()
        end.begin()
        signal.raise_signal(signal.SIGTERM)
        os.write(fd, b"held;")
        end.die()
        os.write(fd, b"still alive")

    status, written = _in_child(child)
    assert written == b"held;"
    assert os.WIFSIGNALED(status)
    assert os.WTERMSIG(status) == signal.SIGTERM


def test_a_sigterm_while_the_program_runs_keeps_what_was_measured_then_dies_of_it(
        ) -> None:
    def child(fd: int) -> None:
        RAW_SIGNAL(signal.SIGTERM, signal.SIG_DFL)
        RunEnd().on_sigterm(lambda: os.write(fd, b"kept;"))
        os.write(fd, b"sees %d;" % int(signal.getsignal(signal.SIGTERM)))
        os.kill(os.getpid(), signal.SIGTERM)
        os.write(fd, b"still alive")

    status, written = _in_child(child)
    assert written == b"sees %d;kept;" % int(signal.SIG_DFL)
    assert os.WIFSIGNALED(status)
    assert os.WTERMSIG(status) == signal.SIGTERM
