"""Where the copies of a parallel run execute: processes on this machine, or tasks
on a Dask distributed cluster.

An executor gets one :class:`CopyJob` per copy and returns one :class:`CopyOutcome`
each. Copy 0's output is the run's: on this machine it goes straight to the
terminal while the copies run; from a cluster it comes back with the task and is
written out afterwards. The other copies' output is kept apart (their scratch
directory on this machine; dropped on a cluster).
"""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass

from pathprof.exceptions import PathprofError
from pathprof.measure.partial import ENVIRONMENT

__all__ = ["CopyJob", "CopyOutcome", "run_here", "run_on_dask"]


@dataclass(frozen=True)
class CopyJob:
    """One copy: what it runs, the environment (without :data:`ENVIRONMENT`, added
    here), and what it needs. ``kind`` ``"run"``: ``args`` are ``pathprof run``'s
    arguments after ``--data-file FILE`` (added here); ``"pytest"``: ``args`` are the
    interpreter's arguments (``-m pytest ...``), the plugin in the copy measures, and
    its data file is named in :data:`ENVIRONMENT`."""

    index: int
    args: tuple[str, ...]
    environment: dict[str, str]
    cwd: str
    plan_json: str
    stdin: bytes | None
    #: stdin is the terminal: copy 0 reads it, the others read nothing
    stdin_is_terminal: bool = False
    kind: str = "run"


@dataclass(frozen=True)
class CopyOutcome:
    index: int
    returncode: int
    data: bytes | None  #: the copy's data file, None if it wrote none
    calls: str | None  #: the copy's call counts (JSON), None if it wrote none
    stdout: bytes = b""  #: only for output that did not go to the terminal
    stderr: bytes = b""


def _prepare(job: CopyJob, scratch: str) -> tuple[list[str], dict[str, str], str, str]:
    """Command, environment, data file and calls file of ``job`` in ``scratch``."""
    plan = os.path.join(scratch, "plan.json")
    with open(plan, "w", encoding="utf-8") as f:
        f.write(job.plan_json)
    data = os.path.join(scratch, "copy.pathprof")
    calls = os.path.join(scratch, "calls.json")
    temp = os.path.join(scratch, "tmp")
    os.makedirs(temp, exist_ok=True)
    environment = dict(job.environment)
    settings = {"plan": plan, "index": job.index, "calls": calls}
    if job.kind == "pytest":
        settings["data"] = data
        command = [sys.executable, *job.args]
    else:
        command = [sys.executable, "-m", "pathprof", "run", "--data-file", data, *job.args]
    environment[ENVIRONMENT] = json.dumps(settings)
    for name in ("TMPDIR", "TEMP", "TMP"):
        environment[name] = temp
    return command, environment, data, calls


def _read(path: str, text: bool = False) -> bytes | str | None:
    try:
        with open(path, "r" if text else "rb", **({"encoding": "utf-8"} if text else {})) as f:
            return f.read()
    except OSError:
        return None


def _read_calls(path: str) -> str | None:
    """The calls a copy and its child processes counted, added up (JSON): each
    process wrote ``<path>.<pid>-<token>``."""
    files = sorted(glob.glob(glob.escape(path) + ".*"))
    total: dict[str, int] = {}
    found = False
    for name in files:
        if name.endswith(".tmp"):
            continue
        text = _read(name, text=True)
        if text is None:
            continue
        found = True
        for key, count in json.loads(text).items():  # type: ignore[arg-type]
            total[key] = total.get(key, 0) + count
    return json.dumps(total) if found else None


def run_here(jobs: list[CopyJob], scratch: str) -> list[CopyOutcome]:
    """Run the copies as processes on this machine, all at once."""
    started = []
    for job in jobs:
        directory = os.path.join(scratch, f"copy-{job.index}")
        os.makedirs(directory, exist_ok=True)
        command, environment, data, calls = _prepare(job, directory)
        shown = job.index == 0
        if job.stdin is not None:
            stdin: int | None = subprocess.PIPE
        elif job.stdin_is_terminal and shown:
            stdin = None
        else:
            stdin = subprocess.DEVNULL
        out = None if shown else open(os.path.join(directory, "stdout"), "wb")  # noqa: SIM115
        err = None if shown else open(os.path.join(directory, "stderr"), "wb")  # noqa: SIM115
        process = subprocess.Popen(command, cwd=job.cwd, env=environment, stdin=stdin,
                                   stdout=out, stderr=err)
        feeder = None
        if job.stdin is not None:
            feeder = threading.Thread(target=_feed, args=(process, job.stdin), daemon=True)
            feeder.start()
        started.append((job, process, feeder, data, calls, out, err))
    outcomes = []
    for job, process, feeder, data, calls, out, err in started:
        returncode = process.wait()
        if feeder is not None:
            feeder.join()
        for f in (out, err):
            if f is not None:
                f.close()
        outcomes.append(CopyOutcome(job.index, returncode, _read(data),  # type: ignore[arg-type]
                                    _read_calls(calls)))
    return outcomes


def _feed(process: subprocess.Popen, data: bytes) -> None:
    try:
        assert process.stdin is not None
        process.stdin.write(data)
        process.stdin.close()
    except (BrokenPipeError, OSError):
        pass  # the copy stopped reading, as the program would


def run_copy_remotely(job: CopyJob) -> CopyOutcome:
    """Run one copy where this function runs (a Dask worker), in a scratch directory
    of its own, and bring back its data, calls and output."""
    with tempfile.TemporaryDirectory(prefix="pathprof-copy-") as scratch:
        command, environment, data, calls = _prepare(job, scratch)
        result = subprocess.run(command, cwd=job.cwd, env=environment, input=job.stdin or b"",
                                capture_output=True, check=False)
        return CopyOutcome(job.index, result.returncode, _read(data),  # type: ignore[arg-type]
                           _read_calls(calls), result.stdout,
                           result.stderr)


def run_on_dask(jobs: list[CopyJob], scheduler: str) -> list[CopyOutcome]:
    """Run the copies as tasks of the Dask distributed cluster at ``scheduler``. The
    workers need the program at the same path (a shared or identical file system)
    and an interpreter with pathprof, as they run ``python -m pathprof run``."""
    try:
        from distributed import Client
    except ImportError as err:
        raise PathprofError("--executor dask needs Dask's distributed scheduler: "
                            "pip install 'pathprof[dask]'") from err
    try:
        client = Client(scheduler, timeout=10)
    except (OSError, TimeoutError) as err:
        raise PathprofError(f"cannot reach the Dask scheduler at {scheduler}: {err}") from err
    try:
        futures = [client.submit(run_copy_remotely, job, pure=False) for job in jobs]
        return list(client.gather(futures))
    finally:
        client.close()
