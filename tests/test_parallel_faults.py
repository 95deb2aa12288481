"""Parallel runs when things go wrong: signals while the copies run, a scheduler
address that cannot be one (:mod:`pathprof.parallel`)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest

import pathprof

from .test_run import pathprof_cli

PACKAGE = os.path.dirname(os.path.abspath(pathprof.__file__))

#: Starts ``python -m pathprof ARGS`` with SIGINT as Python expects to find it (the
#: test runner may have been started with SIGINT ignored, which children inherit).
LAUNCH = ("import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
          "os.execv(sys.executable, [sys.executable, '-m', 'pathprof', *sys.argv[1:]])")

#: Runs until stopped. Each copy writes ``started-<pid>`` once every function has run.
FOREVER = textwrap.dedent("""
    import os, time

    def grade(n):
        if n % 3 == 0:
            return "fizz"
        return "plain"

    def weigh(n):
        return n * 2 if n % 2 else n + 1

    def main():
        n = 0
        while True:
            grade(n)
            weigh(n)
            n += 1
            if n == 10:
                with open(f"started-{os.getpid()}", "w") as f:
                    f.write("")
            if n % 100 == 0:
                time.sleep(0.01)

    main()
""")


def _alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie no longer does)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
    except OSError:  # no /proc
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True


def _wait_until(condition: Callable[[], bool], what: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.1)


def _started(directory: Path) -> list[int]:
    return [int(p.name.split("-")[1]) for p in directory.glob("started-*")]


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="POSIX signals")
@pytest.mark.parametrize(("target", "signum"), [
    ("group", signal.SIGINT),  # Ctrl-C at a terminal: the whole process group
    ("parent", signal.SIGINT),  # kill -INT <pid>: the copies get nothing
    ("parent", signal.SIGTERM),  # kill <pid>
    ("group", signal.SIGTERM),  # a supervisor stopping the group
], ids=["group-SIGINT", "parent-SIGINT", "parent-SIGTERM", "group-SIGTERM"])
def test_a_signalled_run_stops_its_copies_merges_what_they_saved_and_dies_of_the_signal(
        tmp_path: Path, target: str, signum: int) -> None:
    (tmp_path / "prog.py").write_text(FOREVER)
    temp = tmp_path / "tmp"
    temp.mkdir()
    run = subprocess.Popen([sys.executable, "-c", LAUNCH, "run", "--parallel", "3", "prog.py"],
                           cwd=tmp_path, env={**os.environ, "TMPDIR": str(temp)},
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           start_new_session=True)
    try:
        _wait_until(lambda: len(_started(tmp_path)) == 3, "the 3 copies to start")
        copies = _started(tmp_path)
        if target == "group":
            os.killpg(run.pid, signum)
        else:
            os.kill(run.pid, signum)
        stdout, stderr = run.communicate(timeout=120)
        left = [pid for pid in copies if _alive(pid)]
    finally:
        with contextlib.suppress(ProcessLookupError):  # whatever is left of the group
            os.killpg(run.pid, signal.SIGKILL)
        run.wait()
    assert run.returncode == -signum, stderr  # it dies of the signal, as Python would
    assert stdout == ""
    assert PACKAGE not in stderr  # no pathprof traceback
    ours = [line for line in stderr.splitlines() if line.startswith("pathprof:")]
    assert ours == [f"pathprof: the run was interrupted ({signal.Signals(signum).name}) while "
                    "its 3 copies ran: each stopped at its own point, so the profile merged "
                    "into .pathprof covers part of the run and is not exact"]
    if (target, signum) == ("group", signal.SIGINT):  # copy 0 is the program
        assert stderr.rstrip().splitlines()[-2] == "KeyboardInterrupt"
    merged = pathprof.load(str(tmp_path / ".pathprof")).functions
    measured = {fn.qualname: fn.total for fn in merged}
    assert set(measured) == {"grade", "weigh", "main"}  # every copy's share is there
    assert all(measured.values())
    assert list(temp.iterdir()) == []  # no temporary directory left
    assert left == []  # and no copy left running


@pytest.mark.parametrize(("address", "message"), [
    ("tcp://127.0.0.1", "missing port number"),
    ("http://127.0.0.1:8786", "Dask has no protocol 'http'"),
    ("tcp://127.0.0.1:99999", "port 99999 is not between 1 and 65535"),
])
def test_a_scheduler_address_that_cannot_be_one_is_a_usage_error(
        tmp_path: Path, address: str, message: str) -> None:
    pytest.importorskip("distributed")
    (tmp_path / "prog.py").write_text("print(1)\n")
    result = pathprof_cli(tmp_path, "run", "--parallel", "2", "--executor", "dask",
                          "--scheduler", address, "prog.py", check=False)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.startswith(f"pathprof: --scheduler {address}: {message}")
    assert result.stderr.count("\n") == 1


def test_a_scheduler_without_the_dask_executor_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "prog.py").write_text("print(1)\n")
    result = pathprof_cli(tmp_path, "run", "--parallel", "2", "--scheduler", "tcp://h:8786",
                          "prog.py", check=False)
    assert result.returncode == 2
    assert result.stderr == "pathprof: --scheduler goes with --executor dask\n"
