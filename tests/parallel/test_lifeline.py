"""Unit tests of :mod:`pathprof.parallel.lifeline`, the watchdog a Dask worker runs each
copy under. :func:`main`'s usage check; two short real copies (the module's job is a
child process's): one that ends by itself with its status while the worker holds the
pipe (the scratch directory kept), one whose worker is gone (the pipe closed with no
byte: the copy is stopped by SIGTERM and its scratch directory removed). The watcher
``_watch`` is also run on a pipe of the test's own with a stand-in for the copy's
process, for the byte the worker writes (the copy stopped, the scratch not given up),
a copy that ended first, and a copy that does not stop in time (killed); ``_end``
exits with a status (the negative case kills the process, so it is not run here)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from pathprof.parallel import lifeline
from pathprof.parallel.lifeline import _end, _watch, main


def _let_go(read_end: int) -> None:
    """Wait for the lifeline's watcher to see the pipe's end, then close its end."""
    for thread in threading.enumerate():
        if getattr(thread, "_target", None) is _watch:
            thread.join(10)
    os.close(read_end)


@pytest.mark.parametrize("argv", [[], ["3", "/tmp/s"], ["3", "/tmp/s", "--"],
                                  ["3", "/tmp/s", "cmd", "x"]])
def test_a_command_line_without_fd_scratch_and_command_is_a_usage_error(
        argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    assert capsys.readouterr().err == ("usage: python -m pathprof.parallel.lifeline FD "
                                       "SCRATCH -- COMMAND...\n")


def test_a_copy_that_ends_by_itself_ends_the_lifeline_with_its_status(tmp_path: Path) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    read_end, write_end = os.pipe()
    try:
        status = main([str(read_end), str(scratch), "--", sys.executable, "-c",
                       "import sys; sys.exit(3)"])
    finally:
        os.close(write_end)  # the worker lets go once the copy ended: that means nothing
        _let_go(read_end)
    assert status == 3
    assert scratch.exists()  # the worker still wants what is there


def test_a_copy_whose_worker_is_gone_is_stopped_and_its_scratch_removed(tmp_path: Path) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    (scratch / "copy.pathprof").write_text("half a profile")
    read_end, write_end = os.pipe()
    os.close(write_end)  # the worker died: the kernel closed its end
    status = main([str(read_end), str(scratch), "--", sys.executable, "-c",
                   "import time; time.sleep(60)"])
    _let_go(read_end)
    assert status == -signal.SIGTERM
    assert not scratch.exists()


class _Copy:
    """A stand-in for the copy's process: it ends as a signal ends it, unless told to
    outlast the stop."""

    def __init__(self, *, ended: int | None = None, stubborn: bool = False) -> None:
        self.returncode = ended
        self.stubborn = stubborn

    def poll(self) -> int | None:
        return self.returncode

    def send_signal(self, signum: int) -> None:
        if not self.stubborn:
            self.returncode = -signum

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            raise subprocess.TimeoutExpired("copy", timeout or 0)
        return self.returncode

    def kill(self) -> None:
        self.returncode = -signal.SIGKILL


def _watched(copy: _Copy, note: bytes | None) -> bool:
    """Run ``_watch`` on a pipe whose other end writes ``note`` (None: closes with no
    byte); whether it says the worker is gone."""
    read_end, write_end = os.pipe()
    gone = threading.Event()
    try:
        if note is not None:
            os.write(write_end, note)
        else:
            os.close(write_end)
            write_end = -1
        _watch(read_end, copy, gone)  # type: ignore[arg-type]
    finally:
        os.close(read_end)
        if write_end >= 0:
            os.close(write_end)
    return gone.is_set()


def test_a_byte_from_the_worker_stops_the_copy_which_keeps_its_data() -> None:
    copy = _Copy()
    assert _watched(copy, b"s") is False  # the worker still wants its data
    assert copy.returncode == -signal.SIGTERM


def test_the_pipe_closing_while_the_copy_runs_means_the_worker_is_gone() -> None:
    copy = _Copy()
    assert _watched(copy, None) is True
    assert copy.returncode == -signal.SIGTERM


def test_the_pipe_closing_after_the_copy_ended_means_nothing() -> None:
    copy = _Copy(ended=0)
    assert _watched(copy, None) is False
    assert copy.returncode == 0  # not signalled


def test_a_copy_that_does_not_stop_in_time_is_killed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lifeline, "STOP_TIMEOUT", 0.0)
    copy = _Copy(stubborn=True)
    assert _watched(copy, b"s") is False
    assert copy.returncode == -signal.SIGKILL


def test_an_unreadable_lifeline_is_taken_as_the_worker_gone() -> None:
    copy = _Copy()
    gone = threading.Event()
    _watch(987_654, copy, gone)  # type: ignore[arg-type]  # (no such descriptor)
    assert gone.is_set()
    assert copy.returncode == -signal.SIGTERM


@pytest.mark.parametrize("status", [0, 3, 255])
def test_end_exits_with_a_status_that_is_not_negative(status: int) -> None:
    with pytest.raises(SystemExit) as ended:
        _end(status)
    assert ended.value.code == status

