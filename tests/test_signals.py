"""Signals belong to the program (DESIGN.md §7): what a signal handler raises passes
through pathprof's code inside the program, and a signal that comes once the
program has ended waits for pathprof to keep what was measured, then ends the
process as it would have ended it. Real processes and real signals; waits are
bounded and poll for markers the programs write (no timing is asserted)."""

from __future__ import annotations

import contextlib
import json
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
from pathprof.runtime.passthrough import SafeLock, must_pass

pytestmark = pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="POSIX signals")

PACKAGE = os.path.dirname(os.path.abspath(pathprof.__file__))


def _default_sigint() -> None:
    """In a child: SIGINT at its default, as from a terminal, whatever the test runner
    inherited (a shell's background job has it ignored)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTEST_", "PATHPROF_")) or k == "PATHPROF_CACHE_DIR"}
    env["COLUMNS"] = "160"
    return env


def _run(cwd: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], cwd=cwd, env=_environment(),
                          capture_output=True, text=True, timeout=timeout,
                          preexec_fn=_default_sigint)


def _start(cwd: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, *args], cwd=cwd, env=_environment(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=_default_sigint)


def _wait_until(condition: Callable[[], bool], what: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.0005)


def _stop(process: subprocess.Popen[str]) -> None:
    """Whatever is left of a process a test started (by its id)."""
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        process.wait()


# -- A program whose first runs keep happening -------------------------------------

#: Bits the functions test, so that each argument below runs a path of its own.
LIST_BITS, HASH_BITS = 10, 13  # 1,024 paths: a list table; 8,192: a hash table
ARGUMENTS = [0, *(1 << b for b in range(HASH_BITS)), *range(3, 40)]


def _work_module(lists: int = 150, hashes: int = 50, compound: int = 50) -> str:
    """Functions with many paths, each run for the first time by most arguments:
    ``f*`` count into lists of ``Unseen`` slots, ``g*`` into a ``FirstSeen`` dict, and
    ``h*`` have decisions of two conditions (counted, with ``--conditions``, by
    ``UnseenVector``)."""
    parts = []
    for kind, count, bits in (("f", lists, LIST_BITS), ("g", hashes, HASH_BITS)):
        for k in range(count):
            body = "".join(f"    if x & {1 << b}:\n        r += {b + 1}\n" for b in range(bits))
            parts.append(f"def {kind}{k}(x):\n    r = 0\n{body}    return r\n")
    for k in range(compound):
        body = "".join(f"    if x & {1 << b} and x & {1 << (b + 1)}:\n        r += 1\n"
                       f"    if x & {1 << b} or x & {4 << b}:\n        r += 2\n"
                       for b in range(0, 8, 2))
        parts.append(f"def h{k}(x):\n    r = 0\n{body}    return r\n")
    names = [f"f{k}" for k in range(lists)] + [f"g{k}" for k in range(hashes)] + [
        f"h{k}" for k in range(compound)]
    parts.append(f"FUNCS = [{', '.join(names)}]\nARGUMENTS = {ARGUMENTS!r}\n")
    return "\n".join(parts)


#: Every call runs with an alarm due every half millisecond whose handler raises
#: ``Timeout`` (once per call: the flag makes sure the program catches each one);
#: most of the time goes into pathprof's first-run reports. Each Timeout raised
#: must reach the program.
ALARMS = textwrap.dedent("""
    import signal
    import work

    class Timeout(Exception):
        pass

    armed = False
    raised = caught = 0

    def on_alarm(signum, frame):
        global armed, raised
        if armed:
            armed = False
            raised += 1
            raise Timeout

    work.FUNCS[0](0)  # (the module's metadata is read at its first report: before)
    signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, 0.0005, 0.0005)
    for x in work.ARGUMENTS:
        for f in work.FUNCS:
            try:
                armed = True
                f(x)
                armed = False
            except Timeout:
                caught += 1
    signal.setitimer(signal.ITIMER_REAL, 0)
    print(f"raised {raised} caught {caught}")
""")


def _counts(stdout: str) -> dict[str, int]:
    words = stdout.split()
    return {words[i]: int(words[i + 1]) for i in range(0, len(words) - 1, 2)}


@pytest.mark.parametrize("options", [["--stop-counting", "basis"],
                                     ["--stop-counting", "paths"],
                                     ["--stop-counting", "basis", "--conditions"]],
                         ids=["basis", "paths", "conditions"])
def test_an_exception_an_alarm_raises_during_a_first_run_report_reaches_the_program(
        tmp_path: Path, options: list[str]) -> None:
    (tmp_path / "work.py").write_text(_work_module())
    (tmp_path / "alarms.py").write_text(ALARMS)
    done = _run(tmp_path, "-m", "pathprof", "run", *options, "alarms.py")
    assert done.returncode == 0, done.stderr
    found = _counts(done.stdout)
    assert found["raised"] > 0
    assert found["caught"] == found["raised"], done.stdout  # none swallowed
    assert PACKAGE not in done.stderr


#: SIGINT at its default handler, sent to the process (``os.kill``) by another
#: thread, one at a time: each must come out as a KeyboardInterrupt in the main
#: thread, which the program catches and acknowledges; one that does not within two
#: seconds was swallowed. The loops test their end inside their bodies: on 3.13 a
#: KeyboardInterrupt raised as ``while <condition>:`` jumps back leaves the ``try``
#: around it uncaught, with pathprof or without (CPython gh-130279; measured with
#: plain 3.13.0, 3 of 3 runs of this program written so).
CTRL_C = textwrap.dedent("""
    import os, signal, threading, time
    import work

    acked, go = threading.Event(), threading.Event()
    done = False
    sent = lost = caught = 0

    def send():
        global sent, lost
        go.wait()
        while not done:
            acked.clear()
            os.kill(os.getpid(), signal.SIGINT)
            sent += 1
            if not acked.wait(2.0):
                lost += 1
            time.sleep(0.02)

    work.FUNCS[0](0)
    calls = [(f, x) for x in work.ARGUMENTS for f in work.FUNCS]
    i = 0
    sender = threading.Thread(target=send)
    sender.start()
    while True:
        if i >= len(calls):
            break
        try:
            try:
                go.set()
                while True:
                    if i >= len(calls):
                        break
                    f, x = calls[i]
                    i += 1
                    f(x)
            except KeyboardInterrupt:
                caught += 1
                acked.set()
        except KeyboardInterrupt:
            caught += 1
            acked.set()
    done = True
    while True:
        try:
            sender.join()
            break
        except KeyboardInterrupt:
            caught += 1
            acked.set()
    print(f"sent {sent} caught {caught} lost {lost}")
""")


def test_ctrl_c_during_first_run_reports_is_a_keyboard_interrupt_in_the_program(
        tmp_path: Path) -> None:
    (tmp_path / "work.py").write_text(_work_module())
    (tmp_path / "ctrl_c.py").write_text(CTRL_C)
    done = _run(tmp_path, "-m", "pathprof", "run", "--stop-counting", "basis", "ctrl_c.py")
    assert done.returncode == 0, done.stderr
    found = _counts(done.stdout)
    assert found["sent"] > 0
    assert found["lost"] == 0, done.stdout
    assert found["caught"] == found["sent"], done.stdout


#: Threads run first runs too while the alarms come: the kernel hands a
#: process-directed signal to any thread, whose C handler has Python run the handler
#: in the main thread, inside pathprof's reports, while the other threads report too.
THREADS = textwrap.dedent("""
    import signal, threading
    import work

    class Timeout(Exception):
        pass

    armed = False
    raised = caught = 0

    def on_alarm(signum, frame):
        global armed, raised
        if armed:
            armed = False
            raised += 1
            raise Timeout

    def other(share):
        for x in work.ARGUMENTS:
            for f in share:
                f(x)

    work.FUNCS[0](0)
    mine, theirs = work.FUNCS[0::3], [work.FUNCS[1::3], work.FUNCS[2::3]]
    workers = [threading.Thread(target=other, args=(share,)) for share in theirs]
    signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, 0.0005, 0.0005)
    for worker in workers:
        worker.start()
    for x in work.ARGUMENTS:
        for f in mine:
            try:
                armed = True
                f(x)
                armed = False
            except Timeout:
                caught += 1
    signal.setitimer(signal.ITIMER_REAL, 0)
    for worker in workers:
        worker.join()
    print(f"raised {raised} caught {caught}")
""")


def test_alarms_the_kernel_hands_to_other_threads_still_reach_the_program(
        tmp_path: Path) -> None:
    # (more functions: with threads about, fewer alarms reach the handler)
    (tmp_path / "work.py").write_text(_work_module(lists=300, hashes=100, compound=100))
    (tmp_path / "threads.py").write_text(THREADS)
    done = _run(tmp_path, "-m", "pathprof", "run", "--stop-counting", "basis", "threads.py")
    assert done.returncode == 0, done.stderr
    found = _counts(done.stdout)
    assert found["raised"] > 0
    assert found["caught"] == found["raised"], done.stdout
    assert PACKAGE not in done.stderr


# -- What must_pass tells apart, and the lock no handler leaves held --------------


class _Timeout(Exception):
    pass


def _passes(handler: Callable[..., object], wrap: bool = False) -> bool:
    """Whether :func:`must_pass` lets through what ``handler`` (installed for SIGUSR1)
    raises when the signal comes while pathprof-like code runs inside a ``try``,
    asked there, while the handler is installed; ``wrap``: the code turned it into
    an exception of its own (``raise ... from``)."""
    previous = signal.signal(signal.SIGUSR1, handler)
    try:
        try:
            try:
                signal.raise_signal(signal.SIGUSR1)
                for _ in range(3):  # (the handler runs at the next eval-breaker check)
                    pass
            except _Timeout as err:
                if not wrap:
                    raise
                raise LookupError("turned into pathprof's own") from err
        except Exception as err:  # (what pathprof's code catches)
            return must_pass(err)
    finally:
        signal.signal(signal.SIGUSR1, previous)
    raise AssertionError("the handler raised nothing")


def _raise_timeout(signum: int, frame: object) -> None:
    raise _Timeout


def test_must_pass_tells_a_handlers_exception_from_pathprofs_own_failure() -> None:
    assert _passes(_raise_timeout)  # an installed handler's frame

    def leaves(signum: int, frame: object) -> None:  # puts the default back first
        signal.signal(signal.SIGUSR1, signal.SIG_DFL)
        raise _Timeout

    assert _passes(leaves)  # called with the interrupted frame

    def forgets(signum: int, frame: object) -> None:  # drops the frame it was given
        del frame
        raise _Timeout

    assert _passes(forgets)  # installed

    class Handler:
        def __call__(self, signum: int, frame: object) -> None:
            del frame
            raise _Timeout

    assert _passes(Handler())
    assert _passes(_raise_timeout, wrap=True)  # through its cause
    assert must_pass(KeyboardInterrupt())
    assert must_pass(SystemExit(3))
    with pytest.raises(KeyError) as own:
        {}["missing"]  # pathprof's own failure
    assert not must_pass(own.value)


#: ``with lock:`` under a storm of alarms whose handler raises: afterwards, is the
#: lock still held? (On 3.14 a ``threading`` lock can be, CPython gh-148874.)
LOCK_STORM = textwrap.dedent("""
    import signal, sys
    from pathprof.runtime.passthrough import SafeLock

    class Timeout(Exception):
        pass

    armed = False

    def on_alarm(signum, frame):
        global armed
        if armed:
            armed = False
            raise Timeout

    lock = SafeLock()
    signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, 0.00002, 0.00002)
    raised = left_held = 0
    for _ in range(100_000):
        try:
            armed = True
            with lock:
                pass
            armed = False
        except Timeout:
            raised += 1
        if lock._is_owned():
            left_held += 1
            while lock._is_owned():
                lock.release()
    signal.setitimer(signal.ITIMER_REAL, 0)
    print(f"raised {raised} held {left_held}")
""")


def test_no_handlers_exception_leaves_the_runtimes_lock_held(tmp_path: Path) -> None:
    (tmp_path / "storm.py").write_text(LOCK_STORM)
    done = _run(tmp_path, "storm.py")
    assert done.returncode == 0, done.stderr
    found = _counts(done.stdout)
    assert found["raised"] > 0
    assert found["held"] == 0


def test_the_lock_is_reentrant_for_a_handler_in_the_thread_that_holds_it() -> None:
    lock = SafeLock()
    with lock, lock:
        assert lock._is_owned()
    assert not lock._is_owned()


# -- A signal just after the program's last line ------------------------------------

#: Runs every function of the work module (150 of them) with 16 arguments, then
#: writes the marker on its last line: what pathprof does then (decode 150
#: functions' counts, save them) is the window the signal comes in.
LAST_LINE = textwrap.dedent("""
    import work
    for f in work.FUNCS:
        for x in range(16):
            f(x)
    with open("marker", "w"):
        pass
""")


def _complete(data_file: Path, functions: int) -> bool:
    """Whether the data file holds the whole run: every function, 16 calls each."""
    measured = pathprof.load(str(data_file)).functions
    calls = {fn.qualname: sum(fn.counts.values()) for fn in measured
             if fn.qualname[0] in "fgh"}
    return len(calls) == functions and set(calls.values()) == {16}


#: Delays (seconds) after the marker is seen: the signal comes at different moments
#: of the decoding and the save.
DELAYS = [0.0, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3]


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_after_the_programs_last_line_waits_for_the_whole_save(
        tmp_path: Path, signum: int) -> None:
    (tmp_path / "work.py").write_text(_work_module(lists=100, hashes=20, compound=30))
    (tmp_path / "last.py").write_text(LAST_LINE)
    data_file = tmp_path / ".pathprof"
    warm = _run(tmp_path, "-m", "pathprof", "run", "last.py")  # (the cache, and old data)
    assert warm.returncode == 0, warm.stderr
    assert _complete(data_file, 150)
    outcomes = []
    for delay in DELAYS:
        (tmp_path / "marker").unlink()
        run = _start(tmp_path, "-m", "pathprof", "run", "last.py")
        try:
            _wait_until(lambda run=run: (tmp_path / "marker").exists()  # type: ignore[misc]
                        or run.poll() is not None, "the program's last line")
            time.sleep(delay)
            run.send_signal(signum)
            _stdout, stderr = run.communicate(timeout=120)
        finally:
            _stop(run)
        # It dies of the signal, as Python would (or it was done before the signal);
        # a SIGINT that came on the last line is the program's KeyboardInterrupt.
        assert run.returncode in (-signum, 0), stderr
        assert PACKAGE not in stderr, stderr
        outcomes.append((delay, run.returncode, _complete(data_file, 150)))
    assert all(complete for _delay, _status, complete in outcomes), outcomes
    assert any(status == -signum for _delay, status, _complete in outcomes), outcomes


FOREVER = textwrap.dedent("""
    def grade(n):
        if n % 3 == 0:
            return "fizz"
        return "plain"

    n = 0
    while True:
        grade(n)
        n += 1
        if n == 1000:
            with open("marker", "w"):
                pass
""")


def test_sigterm_while_the_program_runs_saves_the_run_so_far_and_says_so(
        tmp_path: Path) -> None:
    (tmp_path / "forever.py").write_text(FOREVER)
    run = _start(tmp_path, "-m", "pathprof", "run", "forever.py")
    try:
        _wait_until(lambda: (tmp_path / "marker").exists(), "the program to run")
        run.send_signal(signal.SIGTERM)
        _stdout, stderr = run.communicate(timeout=120)
    finally:
        _stop(run)
    assert run.returncode == -signal.SIGTERM
    assert "pathprof: terminated by SIGTERM: the run's data up to the signal was saved to " \
           ".pathprof" in stderr
    grade = next(fn for fn in pathprof.load(str(tmp_path / ".pathprof")).functions
                 if fn.qualname == "grade")
    assert sum(grade.counts.values()) >= 1000


# -- pytest --pathprof, its parallel session, hot and count, when terminated ------

CALC = textwrap.dedent("""
    def grade(n):
        if n % 3 == 0:
            return "fizz"
        return "plain"
""")

SUITE = textwrap.dedent("""
    import os, time
    from calc import grade

    def test_grade():
        assert [grade(n) for n in range(6)] == ["fizz", "plain", "plain", "fizz",
                                                "plain", "plain"]

    def test_never_ends():
        with open(f"started-{os.getpid()}", "w"):
            pass
        while True:
            time.sleep(0.01)
""")


def _suite(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    (project / "calc.py").write_text(CALC)
    (project / "test_calc.py").write_text(SUITE)
    return project


def _started(directory: Path) -> list[Path]:
    return list(directory.glob("started-*"))


def _terminate_when_started(process: subprocess.Popen[str], directory: Path, copies: int
                            ) -> tuple[str, str]:
    try:
        _wait_until(lambda: len(_started(directory)) >= copies, "the tests to start")
        process.send_signal(signal.SIGTERM)  # to this process alone
        return process.communicate(timeout=180)
    finally:
        _stop(process)


def test_a_terminated_pytest_session_saves_what_its_tests_ran(tmp_path: Path) -> None:
    project = _suite(tmp_path)
    session = _start(project, "-m", "pytest", "-p", "no:cacheprovider", "-q",
                     "--pathprof=calc.py", "test_calc.py")
    _stdout, stderr = _terminate_when_started(session, project, 1)
    assert session.returncode == -signal.SIGTERM  # as plain pytest dies of it
    assert "pathprof: terminated by SIGTERM: the paths the tests ran so far were saved " \
           "to .pathprof" in stderr
    grade = next(fn for fn in pathprof.load(str(project / ".pathprof")).functions
                 if fn.qualname == "grade")
    assert set(grade.counts) == {0, 1}  # both paths test_grade ran


def test_a_terminated_parallel_session_merges_what_its_copies_saved(tmp_path: Path) -> None:
    project = _suite(tmp_path)
    session = _start(project, "-m", "pytest", "-p", "no:cacheprovider", "-q",
                     "--pathprof=calc.py", "--pathprof-parallel=2", "test_calc.py")
    stdout, _stderr = _terminate_when_started(session, project, 2)
    assert session.returncode == -signal.SIGTERM
    assert "the run was interrupted (SIGTERM) while its 2 copies ran" in stdout
    grade = next(fn for fn in pathprof.load(str(project / ".pathprof")).functions
                 if fn.qualname == "grade")
    assert grade.counts == {0: 2, 1: 4}  # the copy that profiles it: every run


def test_hot_terminated_shows_and_writes_what_it_sampled(tmp_path: Path) -> None:
    (tmp_path / "forever.py").write_text(FOREVER)
    run = _start(tmp_path, "-m", "pathprof", "hot", "--no-live", "--period", "20",
                 "--json", "hot.json", "forever.py")
    try:
        _wait_until(lambda: (tmp_path / "marker").exists(), "the program to run")
        run.send_signal(signal.SIGTERM)
        _stdout, stderr = run.communicate(timeout=120)
    finally:
        _stop(run)
    assert run.returncode == -signal.SIGTERM
    assert "pathprof: terminated by SIGTERM: what was measured up to the signal follows" \
           in stderr
    assert "Hottest subpaths" in stderr
    report = json.loads((tmp_path / "hot.json").read_text())
    assert report["positions"] > 0
    assert report["subpaths"]


def test_count_terminated_shows_what_it_counted(tmp_path: Path) -> None:
    (tmp_path / "forever.py").write_text(FOREVER)
    run = _start(tmp_path, "-m", "pathprof", "count", "forever.py")
    try:
        _wait_until(lambda: (tmp_path / "marker").exists(), "the program to run")
        run.send_signal(signal.SIGTERM)
        _stdout, stderr = run.communicate(timeout=120)
    finally:
        _stop(run)
    assert run.returncode == -signal.SIGTERM
    assert "statements counted" in stderr
    assert "grade" in stderr
