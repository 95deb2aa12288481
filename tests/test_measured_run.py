"""pathprof.measure.measured_run: the one order of a measured run that ``run``, ``count``
and ``hot`` share, checked on a recording measurement and keeper in a child process
(the run replaces ``__main__``, ``sys.argv`` and the SIGTERM handler, and a SIGTERM
ends the process)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

DRIVER = textwrap.dedent("""
    import json, sys
    from pathprof.measure.measured_run import run_measured
    from pathprof.measure.program import resolve

    def note(*event):
        print(json.dumps(event), flush=True)

    class Nothing:
        def wants(self, module, filename):
            return False

    class Measuring:
        selection, options = Nothing(), None
        def __init__(self, terminate_in_start):
            self.terminate_in_start = terminate_in_start
        def start(self):
            if self.terminate_in_start:
                import os, signal, time
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(5)
            note("start")
            return self
        def stop(self):
            note("stop")

    class Keeper:
        def __init__(self, keeps_when_raised):
            self.keeps_when_raised = keeps_when_raised
        def program_starts(self):
            note("program_starts")
        def program_ended(self):
            note("program_ended")
        def keep(self, *, terminated):
            note("keep", terminated)
        def nothing_measured(self):
            note("nothing_measured")

    script, keeps, in_start = sys.argv[1], sys.argv[2] == "keeps", sys.argv[3] == "yes"
    try:
        status = run_measured(resolve(script, [], False), Measuring(in_start),
                              Keeper(keeps))
    except BaseException as err:
        note("raised", type(err).__name__)
    else:
        note("status", status)
""")

PROGRAMS = {
    "exits": "import json\nprint(json.dumps(['program']), flush=True)\nraise SystemExit(3)\n",
    "interrupted": ("import json\nprint(json.dumps(['program']), flush=True)\n"
                    "raise KeyboardInterrupt\n"),
    # (an exception of pathprof's own leaves the run: a failure of pathprof's part)
    "raises": ("import json\nfrom pathprof.exceptions import PathprofError\n"
               "print(json.dumps(['program']), flush=True)\nraise PathprofError('broken')\n"),
    "terminated": ("import json, os, signal, time\nprint(json.dumps(['program']), flush=True)\n"
                   "os.kill(os.getpid(), signal.SIGTERM)\ntime.sleep(5)\n"
                   "print(json.dumps(['not reached']), flush=True)\n"),
}


def _run(tmp_path: Path, program: str, keeps: bool, *, in_start: bool = False
         ) -> tuple[list[list[object]], int]:
    (tmp_path / "driver.py").write_text(DRIVER)
    (tmp_path / "program.py").write_text(PROGRAMS[program])
    done = subprocess.run([sys.executable, "driver.py", "program.py",
                           "keeps" if keeps else "reports", "yes" if in_start else "no"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("[")]
    return events, done.returncode


@pytest.mark.parametrize("keeps", [True, False])
def test_a_run_that_ends_is_kept_once_after_the_measurement_stopped(tmp_path: Path,
                                                                    keeps: bool) -> None:
    events, returncode = _run(tmp_path, "exits", keeps)
    assert events == [["program_starts"], ["start"], ["program"], ["stop"],
                      ["program_ended"], ["keep", False], ["status", 3]]
    assert returncode == 0


@pytest.mark.parametrize("keeps", [True, False])
def test_a_program_a_keyboard_interrupt_ended_has_ended(tmp_path: Path, keeps: bool) -> None:
    events, _ = _run(tmp_path, "interrupted", keeps)
    assert events == [["program_starts"], ["start"], ["program"], ["stop"],
                      ["program_ended"], ["keep", False], ["status", -2]]


def test_a_run_that_raised_is_kept_only_by_a_keeper_that_keeps_then(tmp_path: Path) -> None:
    kept, _ = _run(tmp_path, "raises", True)
    assert kept == [["program_starts"], ["start"], ["program"], ["stop"],
                    ["program_ended"], ["keep", False], ["raised", "PathprofError"]]
    reported, _ = _run(tmp_path, "raises", False)
    assert reported == [["program_starts"], ["start"], ["program"], ["stop"],
                        ["program_ended"], ["raised", "PathprofError"]]


@pytest.mark.skipif(not hasattr(signal, "SIGTERM") or sys.platform == "win32",
                    reason="POSIX signals")
@pytest.mark.parametrize("keeps", [True, False])
def test_a_sigterm_while_the_program_runs_keeps_what_ran_then_the_process_dies_of_it(
        tmp_path: Path, keeps: bool) -> None:
    events, returncode = _run(tmp_path, "terminated", keeps)
    assert events == [["program_starts"], ["start"], ["program"], ["program_ended"],
                      ["stop"], ["keep", True]]
    assert returncode == -signal.SIGTERM


@pytest.mark.skipif(not hasattr(signal, "SIGTERM") or sys.platform == "win32",
                    reason="POSIX signals")
def test_a_sigterm_before_the_measurement_started_keeps_nothing(tmp_path: Path) -> None:
    events, returncode = _run(tmp_path, "exits", True, in_start=True)
    assert events == [["program_starts"], ["program_ended"], ["nothing_measured"]]
    assert returncode == -signal.SIGTERM
