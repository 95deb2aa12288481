"""pathprof.measure.childexit: how a measured process not ended by its last line saves
first. ``patch_os_exit`` makes ``os._exit`` save, then exit, whatever the save raised
(patched once however often it is called); ``save_on_sigterm`` installs, only over
SIGTERM's default and only in the main thread, a hidden handler that saves and dies of
SIGTERM, or that lets a save under way finish; ``patch_fork_popen`` makes a forked
child that ``terminate()`` missed get SIGTERM again while its parent waits. The
``Popen`` class is a stand-in module's (``multiprocessing`` itself is not patched);
the two children are forked: the one SIGTERM must reach again, and the one that dies of
its SIGTERM."""

from __future__ import annotations

import os
import signal
import sys
import threading
import types
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from pathprof.measure import childexit
from pathprof.measure.childexit import patch_fork_popen, patch_os_exit, save_on_sigterm

pytestmark = pytest.mark.skipif(not (hasattr(os, "fork") and hasattr(signal, "SIGTERM")),
                                reason="POSIX fork and signals")

RAW_GETSIGNAL = getattr(signal.getsignal, "__wrapped__", signal.getsignal)
RAW_SIGNAL = getattr(signal.signal, "__wrapped__", signal.signal)


@pytest.fixture(autouse=True)
def sigterm_kept() -> Iterator[None]:
    """SIGTERM's handler, and ``signal.getsignal``/``signal.signal``, as they were."""
    functions = (signal.getsignal, signal.signal)
    before = RAW_GETSIGNAL(signal.SIGTERM)
    yield
    signal.getsignal, signal.signal = functions
    if before is not None:
        RAW_SIGNAL(signal.SIGTERM, before)


class Profiler:
    """What the functions read of a profiler: its save at exit, and whether it saves."""

    def __init__(self, save: Callable[[], object] | None = None) -> None:
        self.saves = 0
        self._saving = False
        self._terminated_while_saving = False
        self.then = save

    def _save_at_exit(self) -> None:
        self.saves += 1
        if self.then is not None:
            self.then()


# -- os._exit ------------------------------------------------------------------------

@pytest.fixture
def exits(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """``os._exit`` made one that notes its status instead of ending the process (the
    real one is put back after the test)."""
    noted: list[object] = []

    def _exit(status: int) -> None:
        noted.append(("exit", status))

    monkeypatch.setattr(os, "_exit", _exit)
    return noted


def test_os_exit_saves_then_exits(exits: list[object]) -> None:
    profiler = Profiler(save=lambda: exits.append("saved"))
    patch_os_exit(profiler)  # type: ignore[arg-type]
    os._exit(3)
    assert exits == ["saved", ("exit", 3)]
    assert os._exit.__name__ == "_exit"


def test_os_exit_exits_whatever_the_save_raised(exits: list[object]) -> None:
    for error in (RuntimeError("a failed save"), KeyboardInterrupt()):
        def fail(error: BaseException = error) -> None:
            raise error

        patch_os_exit(Profiler(save=fail))  # type: ignore[arg-type]
        os._exit(4)
    assert exits == [("exit", 4), ("exit", 4)]


def test_os_exit_patched_twice_saves_once_with_the_last_profiler(exits: list[object]
                                                                 ) -> None:
    first, second = Profiler(), Profiler()
    original = os._exit
    patch_os_exit(first)  # type: ignore[arg-type]
    patch_os_exit(second)  # type: ignore[arg-type]
    assert os._exit.__wrapped__ is original  # type: ignore[attr-defined]
    os._exit(0)
    assert (first.saves, second.saves, exits) == (0, 1, [("exit", 0)])


# -- SIGTERM -------------------------------------------------------------------------

def test_a_programs_own_sigterm_handler_is_left_in_place() -> None:
    def programs(signum: int, frame: object) -> None:
        pass

    RAW_SIGNAL(signal.SIGTERM, programs)
    save_on_sigterm(Profiler())  # type: ignore[arg-type]
    assert RAW_GETSIGNAL(signal.SIGTERM) is programs


def test_the_sigterm_handler_is_hidden_from_the_program() -> None:
    RAW_SIGNAL(signal.SIGTERM, signal.SIG_DFL)
    save_on_sigterm(Profiler())  # type: ignore[arg-type]
    installed = RAW_GETSIGNAL(signal.SIGTERM)
    assert callable(installed)
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


def test_outside_the_main_thread_signals_are_left_alone() -> None:
    RAW_SIGNAL(signal.SIGTERM, signal.SIG_DFL)
    getsignal = signal.getsignal
    failures: list[BaseException] = []

    def install() -> None:
        try:
            save_on_sigterm(Profiler())  # type: ignore[arg-type]
        except BaseException as err:
            failures.append(err)

    thread = threading.Thread(target=install)
    thread.start()
    thread.join()
    assert failures == []
    assert RAW_GETSIGNAL(signal.SIGTERM) is signal.SIG_DFL
    assert signal.getsignal is getsignal  # nothing hidden


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


def test_sigterm_lets_a_save_under_way_finish_else_saves_and_dies_of_it() -> None:
    def child(fd: int) -> None:
        RAW_SIGNAL(signal.SIGTERM, signal.SIG_DFL)
        profiler = Profiler(save=lambda: os.write(fd, b"profiler's save;"))
        save_on_sigterm(profiler, lambda: os.write(fd, b"saved;"))  # type: ignore[arg-type]
        handler = RAW_GETSIGNAL(signal.SIGTERM)
        profiler._saving = True  # a save under way: the handler returns at once
        handler(signal.SIGTERM, None)
        os.write(fd, b"returned %d;" % profiler._terminated_while_saving)
        profiler._saving = False
        os.kill(os.getpid(), signal.SIGTERM)
        os.write(fd, b"still alive")

    status, written = _in_child(child)
    assert written == b"returned 1;saved;"
    assert os.WIFSIGNALED(status)
    assert os.WTERMSIG(status) == signal.SIGTERM


# -- multiprocessing's forked children -----------------------------------------------

class _Popen:
    """Stands for ``multiprocessing.popen_fork.Popen``: its ``terminate`` loses its
    SIGTERM (the race the patch is for), and its ``wait`` notes each timeout it is
    given, says the child still runs to the first ``alive_for`` of them, and then
    waits for the child."""

    pid: int
    waits: list[float | None]
    alive_for = 1
    reaped = False

    def wait(self, timeout: float | None = None) -> int | None:
        self.waits.append(timeout)
        if timeout is not None and self.alive_for > 0:
            self.alive_for -= 1
            return None
        _pid, status = os.waitpid(self.pid, 0)
        self.reaped = True
        return os.waitstatus_to_exitcode(status)

    def terminate(self) -> None:
        self.waits.append(-1.0)  # (the SIGTERM it would send, lost)


_Popen.__module__ = "multiprocessing.popen_fork"


@pytest.fixture
def popen_fork(monkeypatch: pytest.MonkeyPatch) -> type[_Popen]:
    """A ``multiprocessing.popen_fork`` of the test's, with a ``Popen`` of its own."""
    popen: Any = type("Popen", (_Popen,), {"__module__": "multiprocessing.popen_fork"})
    module = types.ModuleType("multiprocessing.popen_fork")
    module.Popen = popen  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "multiprocessing.popen_fork", module)
    return popen  # type: ignore[no-any-return]


def test_without_multiprocessing_nothing_is_patched(monkeypatch: pytest.MonkeyPatch
                                                    ) -> None:
    monkeypatch.delitem(sys.modules, "multiprocessing.popen_fork", raising=False)
    patch_fork_popen()
    assert "multiprocessing.popen_fork" not in sys.modules  # not imported for it


def test_popen_is_patched_once(popen_fork: type[_Popen]) -> None:
    patch_fork_popen()
    wait, terminate = popen_fork.wait, popen_fork.terminate
    assert wait is not _Popen.wait
    assert terminate is not _Popen.terminate
    patch_fork_popen()
    assert (popen_fork.wait, popen_fork.terminate) == (wait, terminate)


def test_a_wait_with_a_timeout_or_without_terminate_is_the_original(
        popen_fork: type[_Popen]) -> None:
    patch_fork_popen()

    class Other(popen_fork):  # type: ignore[valid-type,misc]
        pass  # (a Popen of this module, not one of multiprocessing's)

    process = Other()
    process.waits = []
    process.terminate()
    assert not getattr(process, "_pathprof_terminated", False)
    assert process.wait(0.5) is None  # a timeout given: the original's answer
    assert process.waits == [-1.0, 0.5]


def test_a_terminated_child_still_alive_is_sent_sigterm_again(
        popen_fork: type[_Popen], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(childexit, "RESEND_SIGTERM_AFTER", 0.25)
    ready_read, ready_write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: dies with status 7 of the first SIGTERM that reaches it
        try:
            signal.alarm(20)  # (or of SIGALRM, if none ever does: the test fails, not hangs)
            signal.signal(signal.SIGTERM, lambda signum, frame: os._exit(7))
            os.write(ready_write, b"ready")
            while True:
                signal.pause()
        finally:
            os._exit(99)
    os.close(ready_write)
    process = popen_fork()
    process.pid, process.waits = pid, []
    try:
        assert os.read(ready_read, 5) == b"ready"
        patch_fork_popen()
        process.terminate()
        assert process._pathprof_terminated  # type: ignore[attr-defined]
        code = process.wait()
    finally:
        os.close(ready_read)
        if not process.reaped:  # (the test failed before its wait: end the child)
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
    assert code == 7  # the SIGTERM sent again reached it
    assert process.waits == [-1.0, 0.25, 0.25]
