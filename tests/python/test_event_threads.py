"""Event counts while threads start and run: pathprof takes the one thread's table from a
module global until a second thread may run (see :mod:`pathprof.runtime.events`); counts
must stay exact per thread across that switch, whichever way the thread is started."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from pathprof.runtime import events as _eventrt  # noqa: F401  (threads.py's mode() runs the same code here)

from ..event_oracle import StatementCounter, plain_functions
from ..test_run import pathprof_cli

THREADS = Path(__file__).resolve().parent.parent / "events_corpus" / "threads.py"


@pytest.mark.parametrize("kind", ["statements", "instructions"])
def test_counts_stay_exact_when_threads_start(tmp_path: Path, kind: str) -> None:
    plain, functions = plain_functions(THREADS, kind)
    oracle = StatementCounter(functions)

    def execute_and_drive() -> Any:
        exec(plain.__pathprof_code__, plain.__dict__)
        # Threads taking turns rarely: the settrace oracle itself once missed a
        # statement of a thread starting while others were traced (CPython 3.13,
        # switch interval 1e-5). Counts do not depend on the interleaving; pathprof's
        # run below keeps the short interval.
        plain.SWITCH = 1.0
        return plain.drive()

    expected = oracle.run(execute_and_drive)
    shutil.copy(THREADS, tmp_path / "threads.py")
    result = pathprof_cli(tmp_path, "count", "--kind", kind, "--json", "counts.json",
                          "threads.py")
    # The one-thread table was in use until the first thread started, then no more.
    assert result.stdout.splitlines()[0] == f"{expected} ['one', 'many']"
    data = json.loads((tmp_path / "counts.json").read_text())
    ours = {f["qualname"]: (f["self"], f["inclusive"]) for f in data["functions"]}
    theirs = {name: (oracle.self_counts[name], oracle.inclusive[name]) for name in ours}
    assert ours == theirs
    assert data["total"] == sum(oracle.self_counts.values()) > 0


SWITCH = textwrap.dedent('''
    import _thread, sys, threading, time
    from pathprof.runtime import events as _eventrt

    def state():
        return "one" if _eventrt._single[0] is _eventrt.local.t else (
            "many" if _eventrt._single[0] is None else "wrong")

    seen = [state()]
    how = sys.argv[1]
    ran = threading.Event()
    if how == "threading":
        thread = threading.Thread(target=ran.set)
        thread.start()
        thread.join()
    else:
        start = getattr(_thread, how)
        start(ran.set, ())
        ran.wait(10)
    seen.append(state())
    print(" ".join(seen))
''')


@pytest.mark.parametrize("how", ["threading", "start_new_thread", "start_new"])
def test_any_thread_start_ends_the_one_thread_table(how: str) -> None:
    result = subprocess.run([sys.executable, "-c", SWITCH, how], capture_output=True,
                            text=True, timeout=60, check=True)
    assert result.stdout.split() == ["one", "many"]


def test_a_process_with_threads_never_uses_the_one_thread_table() -> None:
    script = textwrap.dedent('''
        import threading
        stop = threading.Event()
        threading.Thread(target=stop.wait).start()
        from pathprof.runtime import events as _eventrt
        print(_eventrt._single[0] is None)
        stop.set()
    ''')
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            timeout=60, check=True)
    assert result.stdout.strip() == "True"


def test_a_forked_child_uses_the_one_thread_table_again() -> None:
    if not hasattr(__import__("os"), "fork"):
        pytest.skip("no fork on this platform")
    script = textwrap.dedent('''
        import os, threading
        from pathprof.runtime import events as _eventrt
        thread = threading.Thread(target=lambda: None)
        thread.start()
        thread.join()
        assert _eventrt._single[0] is None
        pid = os.fork()
        if pid == 0:
            os._exit(0 if _eventrt._single[0] is _eventrt.local.t else 3)
        print(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
    ''')
    result = subprocess.run([sys.executable, "-W", "ignore", "-c", script],
                            capture_output=True, text=True, timeout=60, check=True)
    assert result.stdout.strip() == "0"
