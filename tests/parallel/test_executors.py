"""Unit tests of :mod:`pathprof.parallel.executors`: where the copies of a parallel run
execute. :func:`run_here` runs two short real copies (``python -m pathprof run`` with
this copy's plan, the module's own job): each brings back its status, data file and the
calls it counted, copy 0's output going to the terminal and copy 1's to its scratch
directory. The parts around it are checked alone: ``_prepare`` (command, environment,
plan file, temporary directory), ``_read_calls`` (the calls of a copy's processes
added up), :func:`wait_for` and ``_end`` on stand-ins for the copies' processes (each
signal sent once; a copy that does not stop in time killed), :func:`feed_stdin` on a
real pipe, :func:`children_left` on the marks beside a data file, and what needs Dask
(:func:`check_scheduler`'s checks of an address, ``_no_workers_timeout``,
``_abandoned`` off a worker), skipped without ``distributed``; no cluster is
started."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pathprof.data import store
from pathprof.data.files import parallel_name
from pathprof.exceptions import ConfigError
from pathprof.measure import handover
from pathprof.measure.partial import ENVIRONMENT
from pathprof.parallel import executors
from pathprof.parallel.executors import (
    CopyJob,
    CopyOutcome,
    _abandoned,
    _end,
    _no_workers_timeout,
    _prepare,
    _read,
    _read_calls,
    check_scheduler,
    children_left,
    feed_stdin,
    run_here,
    run_on_dask,
    wait_for,
)
from pathprof.parallel.plan import plan_copies
from pathprof.parallel.signals import Interruption


def _job(index: int, *, kind: str = "run", args: tuple[str, ...] = ("prog.py",),
         cwd: str = "/work", plan: str = '{"format": 1}') -> CopyJob:
    return CopyJob(index, args, {"KEPT": "yes", ENVIRONMENT: "the parent's"}, cwd, plan, None,
                   kind=kind)


# -- _prepare ----------------------------------------------------------------------------------


def test_a_run_copy_runs_pathprof_run_with_its_plan_and_temporary_directory(
        tmp_path: Path) -> None:
    command, environment, data, calls = _prepare(_job(1, args=("-m", "app", "x")),
                                                 str(tmp_path))
    assert data == str(tmp_path / "copy.pathprof")
    assert calls == str(tmp_path / "calls.json")
    assert command == [sys.executable, "-m", "pathprof", "run", "--data-file", data,
                       "-m", "app", "x"]
    assert (tmp_path / "plan.json").read_text(encoding="utf-8") == '{"format": 1}'
    assert json.loads(environment[ENVIRONMENT]) == {"plan": str(tmp_path / "plan.json"),
                                                    "index": 1, "calls": calls}
    assert environment["KEPT"] == "yes"
    temp = str(tmp_path / "tmp")
    assert (environment["TMPDIR"], environment["TEMP"], environment["TMP"]) == (temp,) * 3
    assert os.path.isdir(temp)


def test_a_pytest_copy_runs_the_interpreter_and_is_told_its_data_file(tmp_path: Path) -> None:
    job = _job(0, kind="pytest", args=("-m", "pytest", "-q"))
    command, environment, data, calls = _prepare(job, str(tmp_path))
    assert command == [sys.executable, "-m", "pytest", "-q"]
    assert json.loads(environment[ENVIRONMENT]) == {"plan": str(tmp_path / "plan.json"),
                                                    "index": 0, "calls": calls, "data": data}
    assert job.environment[ENVIRONMENT] == "the parent's"  # the job's own is not changed


# -- reading what a copy wrote -----------------------------------------------------------------


def test_read_gives_bytes_or_text_or_none(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes("é".encode())
    assert _read(str(tmp_path / "f")) == b"\xc3\xa9"
    assert _read(str(tmp_path / "f"), text=True) == "é"
    assert _read(str(tmp_path / "missing")) is None


def test_the_calls_of_a_copys_processes_are_added_up(tmp_path: Path) -> None:
    calls = str(tmp_path / "calls.json")
    for counted in ({"a|f|1|h": 2, "b|g|3|h": 1}, {"a|f|1|h": 5}):
        Path(parallel_name(calls, "copy", copy=(1, 2), fresh=True)).write_text(
            json.dumps(counted), encoding="utf-8")
    (tmp_path / "calls.json.unrelated").write_text("{}")
    assert json.loads(_read_calls(calls)) == {"a|f|1|h": 7, "b|g|3|h": 1}  # type: ignore[arg-type]


def test_no_calls_written_is_none(tmp_path: Path) -> None:
    assert _read_calls(str(tmp_path / "calls.json")) is None


def test_an_empty_count_of_calls_is_an_empty_object(tmp_path: Path) -> None:
    calls = str(tmp_path / "calls.json")
    Path(parallel_name(calls, "copy", copy=(0, 1), fresh=True)).write_text("{}")
    assert _read_calls(calls) == "{}"


# -- waiting for and ending copies ------------------------------------------------------------


class _Process:
    """A stand-in for a copy's process: it runs for ``polls`` looks, or until a signal
    it does not outlast ends it."""

    next_pid = 70_000

    def __init__(self, polls: int = 10 ** 6, *, outlasts: tuple[int, ...] = ()) -> None:
        self.polls, self.outlasts = polls, outlasts
        self.pid = _Process.next_pid = _Process.next_pid + 1
        self.returncode: int | None = None
        self.received: list[int] = []

    def poll(self) -> int | None:
        if self.returncode is None:
            self.polls -= 1
            if self.polls < 0:
                self.returncode = 0
        return self.returncode

    def send_signal(self, signum: int) -> None:
        self.received.append(signum)
        if signum not in self.outlasts:
            self.returncode = -signum

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            if timeout is not None:
                raise subprocess.TimeoutExpired("copy", timeout)
            self.returncode = 0
        return self.returncode

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


def test_wait_for_returns_once_every_process_ended(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(executors, "POLL", 0.0)
    processes = [_Process(2), _Process(0), _Process(5)]
    wait_for(processes, Interruption())  # type: ignore[arg-type]
    assert [p.returncode for p in processes] == [0, 0, 0]
    assert all(p.received == [] for p in processes)  # no signal: none sent


def test_a_second_signal_sends_sigterm_to_the_copies_still_running_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(executors, "POLL", 0.0)
    interruption = Interruption()
    interruption.signal, interruption.count = signal.SIGINT, 2
    done, saving = _Process(0), _Process(3, outlasts=(signal.SIGTERM,))
    wait_for([done, saving], interruption)  # type: ignore[list-item]
    assert done.received == []  # it had ended
    assert saving.received == [signal.SIGTERM]  # once, though it ran on three looks
    assert saving.returncode == 0  # it saved and ended by itself


def test_a_third_signal_sends_sigkill(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(executors, "POLL", 0.0)
    interruption = Interruption()
    interruption.signal, interruption.count = signal.SIGTERM, 3
    stuck = _Process(outlasts=(signal.SIGTERM,))
    wait_for([stuck], interruption)  # type: ignore[list-item]
    assert stuck.received == [signal.SIGKILL]
    assert stuck.returncode == -signal.SIGKILL


def test_end_stops_the_copies_still_running_and_kills_those_too_slow(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(executors, "STOP_TIMEOUT", 0.0)
    ended, stops, stuck = _Process(0), _Process(), _Process(outlasts=(signal.SIGTERM,))
    ended.poll()
    _end([ended, stops, stuck])  # type: ignore[list-item]
    assert ended.received == []
    assert (stops.received, stops.returncode) == ([signal.SIGTERM], -signal.SIGTERM)
    assert (stuck.received, stuck.returncode) == ([signal.SIGTERM, signal.SIGKILL],
                                                  -signal.SIGKILL)


def test_feed_stdin_writes_everything_and_closes() -> None:
    read_end, write_end = os.pipe()

    class Copy:
        stdin = os.fdopen(write_end, "wb")

    feed_stdin(Copy(), b"the program's input")  # type: ignore[arg-type]
    with os.fdopen(read_end, "rb") as reading:
        assert reading.read() == b"the program's input"  # then end of file: closed


def test_feed_stdin_to_a_copy_that_stopped_reading_is_quiet() -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)

    class Copy:
        stdin = os.fdopen(write_end, "wb")

    feed_stdin(Copy(), b"x" * 1_000_000)  # type: ignore[arg-type]  # a broken pipe: no error
    with contextlib.suppress(OSError):  # (what it could not write is still buffered)
        Copy.stdin.close()


def test_children_left_names_the_children_still_running(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(handover.WAIT_VARIABLE, "0")
    with_child, without = str(tmp_path / "copy-0.pathprof"), str(tmp_path / "copy-1.pathprof")
    handover.announce(with_child, "0123456789ab")  # this process, as a running child
    assert children_left([with_child, without]) == [(os.getpid(),), ()]
    assert children_left([with_child], interrupted=True) == [()]  # only those saving
    assert children_left([]) == []


# -- a run on this machine -------------------------------------------------------------------

PROGRAM = textwrap.dedent('''\
    def f(x):
        return x + 1


    for i in range(3):
        f(i)
    print("the program ran")
''')


def test_run_here_runs_every_copy_and_brings_back_what_each_wrote(
        tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    project, scratch = tmp_path / "project", tmp_path / "scratch"
    project.mkdir()
    program = project / "prog.py"
    program.write_text(PROGRAM, encoding="utf-8")
    plan = plan_copies([str(program)], 2, partition=False)
    (owner,) = next(iter(plan.owners.values()))
    environment = {name: value for name, value in os.environ.items()
                   if name != "PATHPROF_CACHE_DIR"}
    environment["PATHPROF_CACHE_DIR"] = str(tmp_path / "cache")
    jobs = [CopyJob(k, ("--source", str(project), str(program)), environment, str(project),
                    json.dumps(plan.to_json()), None) for k in range(2)]
    outcomes = run_here(jobs, str(scratch))
    assert [o.index for o in outcomes] == [0, 1]
    assert [o.returncode for o in outcomes] == [0, 0]
    assert capfd.readouterr().out == "the program ran\n"  # copy 0's, to the terminal
    assert (scratch / "copy-1" / "stdout").read_text() == "the program ran\n"
    for outcome in outcomes:
        assert outcome.data is not None
        assert outcome.data.startswith(b"SQLite format 3\x00")
        assert outcome.children == ()
    profiled, counted = outcomes[owner], outcomes[1 - owner]
    data_file = tmp_path / "profiled.pathprof"
    data_file.write_bytes(profiled.data)  # type: ignore[arg-type]
    (f,) = store.read(str(data_file)).functions
    assert (f.qualname, f.total) == ("f", 3)
    calls = json.loads(counted.calls)  # type: ignore[arg-type]
    assert list(calls.values()) == [3]  # the other copy counted f's 3 calls
    assert next(iter(calls)).split("|")[1:3] == ["f", "1"]


def test_a_run_that_was_signalled_before_it_began_starts_no_copy(tmp_path: Path) -> None:
    interruption = Interruption()
    interruption.signal = signal.SIGINT
    assert run_here([_job(0), _job(1)], str(tmp_path), interruption) == []
    assert list(tmp_path.iterdir()) == []


def test_an_outcome_defaults_to_no_output_and_no_children() -> None:
    outcome = CopyOutcome(0, 0, None, None)
    assert (outcome.stdout, outcome.stderr, outcome.children) == (b"", b"", ())


# -- Dask --------------------------------------------------------------------------------------


@pytest.mark.parametrize("address", [None, ""])
def test_dask_needs_a_scheduler_address(address: str | None) -> None:
    with pytest.raises(ConfigError) as refused:
        check_scheduler(address)
    assert str(refused.value) == ("--executor dask needs --scheduler ADDRESS (such as "
                                  "tcp://HOST:8786)")
    with pytest.raises(ConfigError, match="needs --scheduler ADDRESS"):
        run_on_dask([], address)  # type: ignore[arg-type]  # checked before anything


@pytest.mark.parametrize(("address", "message"), [
    ("foo://host:1", "--scheduler foo://host:1: Dask has no protocol 'foo' (it knows "),
    ("inproc://host/1", "--scheduler inproc://host/1: an inproc address names a scheduler "
                        "in the same process"),
    ("tcp://host:70000", "--scheduler tcp://host:70000: port 70000 is not between 1 and 65535"),
    ("tcp://host:0", "--scheduler tcp://host:0: port 0 is not between 1 and 65535"),
    ("tcp://host", "--scheduler tcp://host: missing port number"),
])
def test_an_address_dask_cannot_use_is_one_line(address: str, message: str) -> None:
    pytest.importorskip("distributed")
    with pytest.raises(ConfigError) as refused:
        check_scheduler(address)
    text = str(refused.value)
    assert text.startswith(message)
    assert text.endswith("expected an address such as tcp://HOST:8786")
    assert "\n" not in text


@pytest.mark.parametrize("address", ["tcp://host:8786", "tcp://10.0.0.1:1", "host:65535",
                                     "tls://host:8786", "ucx://host:13337"])
def test_an_address_dask_can_use_is_given_back(address: str) -> None:
    pytest.importorskip("distributed")
    assert check_scheduler(address) == address


def test_the_wait_for_workers_is_dasks_setting_or_a_minute() -> None:
    dask_config = pytest.importorskip("dask.config")
    assert _no_workers_timeout() == executors.NO_WORKERS_TIMEOUT == 60.0
    with dask_config.set({"distributed.scheduler.no-workers-timeout": "5s"}):
        assert _no_workers_timeout() == 5.0
    with dask_config.set({"distributed.scheduler.no-workers-timeout": "2 minutes"}):
        assert _no_workers_timeout() == 120.0


def test_off_a_dask_worker_a_copy_is_never_abandoned() -> None:
    pytest.importorskip("distributed")
    assert _abandoned(None) is False
    assert _abandoned("pathprof-stop-0123") is False
