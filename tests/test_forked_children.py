"""Every child's counts end in the data file exactly once, whichever of the run's
parent and the child ends first (issue 50; :mod:`pathprof.measure.handover`): a
child that ends just after the parent goes on, one that outlives the parent, a
daemon that never ends (not waited for, and named), one killed with SIGKILL (no
mark left behind); and a parallel run compares its copies once their children
are in. Real processes throughout; where a child outlives the run, the test polls
for the child to be gone, with generous bounds, and times nothing."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest

import pathprof
from pathprof.parallel.run import compare_profiles

from .test_run import default_sigint

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork")

#: The program of issue 50: the child tells the parent it is done, then exits; the
#: parent goes on at once, so the child saves while the parent saves.
TELLS_AND_EXITS = """
    import os
    def work(n):
        return sum(i for i in range(n) if i % 3)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        work(4)
        os.write(w, b"x")   # tell the parent, then exit
        os._exit(0)
    os.close(w)
    os.read(r, 1)           # the parent goes on as soon as the child said so
    print(work(6))
"""

#: Helpers of the programs below: stdio of a child that outlives the parent goes to
#: a log (so the test's pipes close when the parent ends), and the pid to a file.
CHILD_HELPERS = """
    import os, signal, sys, time

    def work(n):
        return sum(i for i in range(n) if i % 3)

    def detach(name):
        log = os.open(name + ".log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.dup2(log, 1)
        os.dup2(log, 2)
        with open(name + ".pid", "w") as f:
            f.write(str(os.getpid()))

    def gone(pid):
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                return f.read().rsplit(b")", 1)[1][1:2] in (b"Z", b"X")
        except OSError:
            return True

    def after(pid):
        while not gone(pid):
            time.sleep(0.05)
"""


def _run(cwd: Path, *args: str, wait: float | None = None, timeout: float = 120
         ) -> subprocess.CompletedProcess[str]:
    """``pathprof *args`` in ``cwd``; ``wait``: PATHPROF_CHILDREN_WAIT."""
    env = {**os.environ, "COLUMNS": "160", "PYTHONHASHSEED": "7"}
    env.pop("PATHPROF_CHILDREN_WAIT", None)
    if wait is not None:
        env["PATHPROF_CHILDREN_WAIT"] = str(wait)
    result = subprocess.run([sys.executable, "-m", "pathprof", *args], cwd=cwd, env=env,
                            capture_output=True, text=True, timeout=timeout,
                            preexec_fn=default_sigint)
    assert result.returncode == 0, result.stderr
    return result


def _totals(data_file: Path) -> dict[str, int]:
    return {fn.qualname: fn.total for fn in pathprof.load(str(data_file)).functions}


def _beside(project: Path, name: str = ".pathprof") -> list[str]:
    """What is left beside the data file: children's files, marks, claims."""
    return sorted(p.name for p in project.glob(f"{name}.*"))


def _marks(project: Path) -> list[str]:
    return [name for name in _beside(project)
            if name.endswith((".running", ".saving", ".forking", ".pending"))]


def _settled(project: Path) -> None:
    """Wait until no process of a run has a mark left: a child that had not begun its
    save when the parent looked (descheduled on a busy machine) adds its counts
    itself, just after the parent has ended."""
    _poll(lambda: _marks(project) == [], "the children's marks to go")


def _others(stderr: str) -> list[str]:
    """The lines on stderr but the one naming children that still run (it does when
    a child had not yet begun its save as the parent looked)."""
    return [line for line in stderr.splitlines() if "of this run still run" not in line]


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:  # ended, not yet waited for by whoever adopted it
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2:][:1] in (b"Z", b"X")


def _poll(condition: Callable[[], bool], what: str, bound: float = 60.0) -> None:
    deadline = time.monotonic() + bound
    while not condition():
        assert time.monotonic() < deadline, f"still waiting, after {bound:g} s, for {what}"
        time.sleep(0.05)


def _pids(project: Path, *names: str) -> list[int]:
    """The pids the programs' children wrote to ``<name>.pid``."""
    _poll(lambda: all((project / f"{name}.pid").exists() for name in names), "pid files")
    _poll(lambda: all((project / f"{name}.pid").read_text() for name in names), "pids")
    return [int((project / f"{name}.pid").read_text()) for name in names]


def _kill(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def test_a_child_that_ends_as_the_parent_goes_on_is_counted(tmp_path: Path) -> None:
    (tmp_path / "prog.py").write_text(textwrap.dedent(TELLS_AND_EXITS))
    for _ in range(3):  # (before: lost every time on this machine)
        result = _run(tmp_path, "run", "prog.py")
        assert result.stdout == "12\n"
        assert _others(result.stderr) == []
        _settled(tmp_path)
        assert _totals(tmp_path / ".pathprof")["work"] == 2  # the parent's and the child's
        assert _beside(tmp_path) == []  # no child's file, mark or claim left


def test_run_parallel_on_a_forking_program_runs_the_same_calls(tmp_path: Path) -> None:
    (tmp_path / "prog.py").write_text(textwrap.dedent(TELLS_AND_EXITS))
    sequential = _run(tmp_path, "run", "--data-file", "sequential", "prog.py")
    parallel = _run(tmp_path, "run", "--data-file", "parallel", "--parallel", "2", "prog.py")
    assert parallel.stdout == sequential.stdout == "12\n"
    assert "2 copies ran the same calls" in parallel.stderr, parallel.stderr
    assert "not deterministic" not in parallel.stderr
    expected = pathprof.load(str(tmp_path / "sequential")).functions
    merged = pathprof.load(str(tmp_path / "parallel")).functions
    assert _totals(tmp_path / "parallel")["work"] == _totals(tmp_path / "sequential")["work"] == 2
    assert compare_profiles(expected, merged) == []
    assert _beside(tmp_path, "parallel") == []
    assert _beside(tmp_path, "sequential") == []


def test_pytest_parallel_on_a_test_that_forks_runs_the_same_calls(tmp_path: Path) -> None:
    (tmp_path / "mod.py").write_text(textwrap.dedent("""
        def work(n):
            return sum(i for i in range(n) if i % 3)
    """))
    (tmp_path / "test_mod.py").write_text(textwrap.dedent("""
        import os
        from mod import work

        def test_fork():
            r, w = os.pipe()
            pid = os.fork()
            if pid == 0:
                os.close(r)
                work(4)
                os.write(w, b"x")   # tell the parent, then exit
                os._exit(0)
            os.close(w)
            os.read(r, 1)           # the parent goes on as soon as the child said so
            assert work(6) == 12
    """))
    env = {k: v for k, v in os.environ.items()
           if (not k.startswith(("PYTEST_", "PATHPROF_")) or k == "PATHPROF_CACHE_DIR")
           and k != "PYTHONHASHSEED"}
    env["COLUMNS"] = "120"
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider",
                           "--pathprof", "--pathprof-parallel=2", "test_mod.py"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout
    assert "pathprof: 2 copies ran the same calls" in done.stdout, done.stdout
    assert "not deterministic" not in done.stdout
    assert _totals(tmp_path / ".pathprof")["work"] == 2
    assert _beside(tmp_path) == []


def test_children_that_outlive_the_parent_end_in_the_data_file(tmp_path: Path) -> None:
    """A child, and a child of its own, that run on for two seconds after the parent
    has ended: each adds its counts into the data file itself as it ends."""
    (tmp_path / "prog.py").write_text(textwrap.dedent(CHILD_HELPERS) + textwrap.dedent("""
        parent = os.getpid()
        if os.fork() == 0:
            detach("child")
            if os.fork() == 0:
                detach("grandchild")
                after(parent)
                time.sleep(2)
                work(5)
                os._exit(0)
            after(parent)
            time.sleep(2)
            work(4)
            sys.exit(0)
        print(work(6))
    """))
    result = _run(tmp_path, "run", "prog.py")
    assert result.stdout == "12\n"
    assert "of this run still run" in result.stderr, result.stderr  # named at the end
    assert "(pid " in result.stderr
    for pid in _pids(tmp_path, "child", "grandchild"):
        _poll(lambda pid=pid: _gone(pid), f"child {pid} to end")
    _poll(lambda: _beside(tmp_path) == [], "the children's marks to go")
    assert _totals(tmp_path / ".pathprof")["work"] == 3  # parent, child, grandchild
    assert (tmp_path / "child.log").read_text() == ""
    assert (tmp_path / "grandchild.log").read_text() == ""


def test_a_daemon_child_is_not_waited_for_and_is_named(tmp_path: Path) -> None:
    """A child that never ends: the parent does not wait for it (the bound set far
    beyond the test's timeout), and says in one line that it still runs."""
    (tmp_path / "prog.py").write_text(textwrap.dedent(CHILD_HELPERS) + textwrap.dedent("""
        if os.fork() == 0:
            detach(f"daemon-{os.getpid()}")
            work(4)
            while True:
                time.sleep(1)
        print(work(6))
    """))

    def daemons() -> list[int]:
        _poll(lambda: all(p.read_text() for p in tmp_path.glob("daemon-*.pid")), "pids")
        return [int(p.read_text()) for p in tmp_path.glob("daemon-*.pid")]

    try:
        result = _run(tmp_path, "run", "prog.py", wait=3600)
        _poll(lambda: len(list(tmp_path.glob("daemon-*.pid"))) == 1, "the daemon's pid")
        [daemon] = daemons()
        assert result.stdout == "12\n"
        lines = result.stderr.splitlines()
        assert lines == [
            f"pathprof: 1 child process of this run still runs (pid {daemon}): it adds its "
            f"counts into {tmp_path / '.pathprof'} itself when it ends; if it cannot, it says "
            "so, and `pathprof combine` adds them"], result.stderr
        assert _totals(tmp_path / ".pathprof")["work"] == 1  # the parent's, saved
        assert not _gone(daemon)
    finally:
        _kill(daemons())
    _poll(lambda: _gone(daemon), "the daemon to die")
    assert [name for name in _beside(tmp_path) if f".{daemon}." in name]  # its mark, stale
    # killed with SIGKILL, it saved nothing; the next run removes its mark, names it not
    try:
        again = _run(tmp_path, "run", "prog.py", wait=0)
        _poll(lambda: len(list(tmp_path.glob("daemon-*.pid"))) == 2, "the next daemon's pid")
    finally:
        _kill(daemons())
    assert f"(pid {daemon})" not in again.stderr
    assert not [name for name in _beside(tmp_path) if f".{daemon}." in name]
    assert _totals(tmp_path / ".pathprof")["work"] == 1


def test_a_child_killed_with_sigkill_blocks_nothing_and_leaves_no_mark(tmp_path: Path
                                                                       ) -> None:
    """One child is killed with SIGKILL in the middle of its save and is never waited
    for (a zombie while the parent saves); another ends as the parent goes on. The
    parent does not wait for the killed one (the bound set far beyond the test's
    timeout), the other's counts are in, and no mark is left, for this run or the
    next."""
    (tmp_path / "prog.py").write_text(textwrap.dedent("""
        import os, signal
        def work(n):
            return sum(i for i in range(n) if i % 3)
        killed = os.fork()
        if killed == 0:
            work(3)
            import pathprof.data.store as store
            store.write = lambda *args, **kwargs: os.kill(os.getpid(), signal.SIGKILL)
            os._exit(0)  # it saves, and dies as it writes
        with open("killed.pid", "w") as f:
            f.write(str(killed))
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            work(4)
            os.write(w, b"x")   # tell the parent, then exit
            os._exit(0)
        os.close(w)
        os.read(r, 1)
        while True:  # the killed child has died (a zombie: nobody waits for it)
            with open(f"/proc/{killed}/stat", "rb") as f:
                if f.read().rsplit(b")", 1)[1][1:2] == b"Z":
                    break
        print(work(6))
    """))
    for _ in range(2):
        result = _run(tmp_path, "run", "prog.py", wait=3600)
        assert result.stdout == "12\n"
        assert _others(result.stderr) == []
        assert (tmp_path / "killed.pid").read_text() not in re.findall(r"\d+", result.stderr)
        _settled(tmp_path)
        assert _totals(tmp_path / ".pathprof")["work"] == 2  # the parent's and the other's
        assert _beside(tmp_path) == []


def test_a_parallel_run_names_a_copys_child_that_outlives_the_wait(tmp_path: Path
                                                                   ) -> None:
    """A copy's child that still runs once the run has waited for it: the run says
    so, instead of calling the program not deterministic."""
    (tmp_path / "prog.py").write_text(textwrap.dedent(CHILD_HELPERS) + textwrap.dedent("""
        if os.fork() == 0:
            detach(f"daemon-{os.getpid()}")
            work(4)
            while True:
                time.sleep(1)
        print(work(6))
    """))
    try:
        result = _run(tmp_path, "run", "--parallel", "2", "prog.py", wait=1)
        assert result.stdout == "12\n"
        assert "not deterministic" not in result.stderr
        assert "still ran 1 s after" in result.stderr, result.stderr
        assert "the merged profile in .pathprof is not exact" in result.stderr
    finally:
        daemons = [int(p.read_text()) for p in tmp_path.glob("daemon-*.pid") if p.read_text()]
        _kill(daemons)
    assert len(daemons) == 2
