"""Parallel runs when things go wrong: signals while the copies run, a Dask cluster
that loses its workers, a scheduler address that cannot be one, and what the copies
can and cannot compare (:mod:`pathprof.parallel`)."""

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


def test_randomness_in_branches_only_is_said_to_be_beyond_the_comparison(
        tmp_path: Path) -> None:
    """The copies split the paths: each branch is measured by one copy alone, so a
    program whose branches (and no calls) vary between runs agrees on every call
    count. The message says that only calls were compared."""
    (tmp_path / "prog.py").write_text(textwrap.dedent("""
        import random

        def low(x):
            if x < 0.5:
                return 1
            return 2

        def high(x):
            if x < 0.5:
                return 3
            return 4

        print(sum(low(x) + high(x) for x in (random.random() for _ in range(200))) > 0)
    """))
    result = pathprof_cli(tmp_path, "run", "--parallel", "3", "prog.py")
    assert result.stdout == "True\n"
    assert result.stderr == (
        "pathprof: 3 copies ran the same calls; their profiles are merged into .pathprof. "
        "Only calls were compared: each path is measured by one copy, so randomness that "
        "changes branches but no calls goes unseen (--verify compares the merge with a "
        "sequential run)\n")
    verified = pathprof_cli(tmp_path, "run", "--parallel", "3", "--verify", "prog.py",
                            check=False)
    assert "--verify: the merged profile" in verified.stderr  # the check that catches it
    assert "Only calls were compared" not in verified.stderr


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


def test_a_cluster_that_loses_every_worker_is_given_up_on_and_leaves_nothing_behind(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every worker of the cluster closes while the copies run: the run says so in
    one line and ends (it does not wait for a worker forever), its temporary
    directory is gone, and so are the copies and their scratch directories."""
    import tempfile

    distributed = pytest.importorskip("distributed")
    (tmp_path / "prog.py").write_text(FOREVER)
    parent_temp, worker_temp = tmp_path / "tmp", tmp_path / "workers"
    parent_temp.mkdir()
    worker_temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(worker_temp))  # the workers run here
    environment = {**os.environ, "TMPDIR": str(parent_temp),
                   "DASK_DISTRIBUTED__SCHEDULER__NO_WORKERS_TIMEOUT": "2s"}
    with distributed.LocalCluster(n_workers=2, threads_per_worker=2, processes=False,
                                  protocol="tcp", dashboard_address=None) as cluster:
        run = subprocess.Popen(
            [sys.executable, "-m", "pathprof", "run", "--parallel", "3", "--executor", "dask",
             "--scheduler", cluster.scheduler_address, "prog.py"], cwd=tmp_path,
            env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        copies: list[int] = []
        try:
            _wait_until(lambda: len(_started(tmp_path)) == 3, "the 3 copies to start")
            copies = _started(tmp_path)
            cluster.scale(0)
            stdout, stderr = run.communicate(timeout=120)
            _wait_until(lambda: not any(_alive(pid) for pid in copies), "the copies to end")
            _wait_until(lambda: not list(worker_temp.glob("pathprof-copy-*")),
                        "the copies' scratch directories to go")
        finally:
            if run.poll() is None:
                run.kill()
                run.wait()
            for pid in copies:
                if _alive(pid):
                    os.kill(pid, signal.SIGKILL)
    assert run.returncode == 1
    assert stdout == ""
    assert stderr.startswith(f"pathprof: the Dask cluster at {cluster.scheduler_address} "
                             "lost the copies: it has had no worker for 2 s")
    assert stderr.count("\n") == 1
    assert list(parent_temp.iterdir()) == []


def test_the_lifeline_stops_its_copy_when_the_worker_is_gone(tmp_path: Path) -> None:
    """A worker's process that dies closes its end of the pipe: the watchdog stops
    the copy and removes the copy's scratch directory, which no one will read. A
    worker that asks (a byte, then closing) gets the copy stopped and its files."""
    for note in (b"", b"s"):
        scratch = tmp_path / f"scratch-{len(note)}"
        scratch.mkdir()
        (scratch / "copy.pathprof").write_text("")
        read, write = os.pipe()
        # (short sleeps: a signal that comes just before a long sleep starts would
        # be handled only when it ends)
        copy = ("import os, signal, sys, time\n"
                "signal.signal(signal.SIGTERM, lambda *_: sys.exit(7))\n"
                "print(os.getpid(), flush=True)\n"
                "while True:\n"
                "    time.sleep(0.05)\n")
        watchdog = subprocess.Popen(
            [sys.executable, "-m", "pathprof.parallel.lifeline", str(read), str(scratch), "--",
             sys.executable, "-c", copy], pass_fds=(read,), stdout=subprocess.PIPE, text=True)
        os.close(read)
        assert watchdog.stdout is not None
        pid = int(watchdog.stdout.readline())
        if note:
            os.write(write, note)
        os.close(write)
        assert watchdog.wait(timeout=120) == 7  # it ends as its copy did
        assert not _alive(pid)
        assert scratch.exists() == bool(note)
