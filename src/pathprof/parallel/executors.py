"""Where the copies of a parallel run execute: processes on this machine, or tasks
on a Dask distributed cluster.

An executor gets one :class:`CopyJob` per copy and returns one :class:`CopyOutcome`
each. Copy 0's output is the run's: on this machine it goes straight to the
terminal while the copies run; from a cluster it comes back with the task and is
written out afterwards. The other copies' output is kept apart (their scratch
directory on this machine; dropped on a cluster).

Either executor stops its copies when the run is signalled (:mod:`.signals`), each
copy saving what it measured, and leaves no copy running when it returns or
raises; on a cluster, a watchdog (:mod:`.lifeline`) ends a copy whose worker is
gone.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, BinaryIO

from pathprof.data.files import files_of
from pathprof.exceptions import ConfigError, PathprofError
from pathprof.measure import handover
from pathprof.measure.partial import ENVIRONMENT
from pathprof.parallel.signals import Interruption

if TYPE_CHECKING:
    from distributed import Client, Event, Future

__all__ = ["CopyJob", "CopyOutcome", "check_scheduler", "feed_stdin", "run_here", "run_on_dask",
           "wait_for"]

#: Seconds between two looks at running copies (their end, signals received).
POLL = 0.1
#: Seconds between two looks, on a Dask cluster, at the copies and the workers.
CLUSTER_POLL = 1.0
#: Seconds a cluster may have no worker while copies remain, unless Dask's own
#: ``distributed.scheduler.no-workers-timeout`` says how long tasks may wait for one.
NO_WORKERS_TIMEOUT = 60.0
#: Seconds a copy gets to save and end after SIGTERM, when the run must end it
#: after an error of its own, before it is killed.
STOP_TIMEOUT = 60.0


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
    #: the pids of the copy's child processes that still ran when the run stopped
    #: waiting for them (:func:`children_left`): their counts may be missing
    children: tuple[int, ...] = ()


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
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    return data.decode("utf-8") if text else data


def _read_calls(path: str) -> str | None:
    """The calls a copy and its child processes counted, added up (JSON): each
    process wrote a file of its own beside ``path``
    (:meth:`pathprof.measure.partial.CopyPlan.write_calls`)."""
    total: dict[str, int] = {}
    found = False
    for name in files_of(path, "copy"):
        text = _read(name, text=True)
        if text is None:
            continue
        found = True
        for key, count in json.loads(text).items():
            total[key] = total.get(key, 0) + count
    return json.dumps(total) if found else None


def wait_for(processes: Sequence[subprocess.Popen], interruption: Interruption) -> None:
    """Return once every process has ended. Once the run has been signalled, the
    ones still running are sent what :meth:`Interruption.escalation` says, each
    signal once (:mod:`pathprof.parallel.signals`)."""
    sent: dict[int, int] = {}
    while True:
        running = [process for process in processes if process.poll() is None]
        if not running:
            return
        wanted = interruption.escalation()
        if wanted is not None:
            for process in running:
                if sent.get(process.pid) != wanted:
                    process.send_signal(wanted)
                    sent[process.pid] = wanted
        time.sleep(POLL)


def _end(processes: Sequence[subprocess.Popen]) -> None:
    """Stop the processes still running (SIGTERM: a copy saves and ends) and wait
    for them; kill those that take longer than :data:`STOP_TIMEOUT`."""
    running = [process for process in processes if process.poll() is None]
    for process in running:
        process.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT
    for process in running:
        try:
            process.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@dataclass
class _Started:
    """A copy running on this machine, and what to collect when it ends."""

    job: CopyJob
    process: subprocess.Popen
    data: str
    calls: str
    feeder: threading.Thread | None
    #: where its output goes (copies other than 0)
    files: tuple[BinaryIO, ...]

    def close(self) -> None:
        if self.feeder is not None:
            self.feeder.join()
        for f in self.files:
            f.close()

    def outcome(self, children: tuple[int, ...] = ()) -> CopyOutcome:
        return CopyOutcome(self.job.index, self.process.returncode,
                           _read(self.data), _read_calls(self.calls),  # type: ignore[arg-type]
                           children=children)


def children_left(data_files: Sequence[str], interrupted: bool = False,
                  give_up: Callable[[], bool] | None = None) -> list[tuple[int, ...]]:
    """Once the copies have ended: wait for their child processes (the ones each
    copy's marks name beside its data file, :mod:`pathprof.measure.handover`) to
    hand their counts over, at most :func:`~pathprof.measure.handover.wait_limit`
    seconds in all (only for those saving when the run was ``interrupted``, or once
    ``give_up()``); the pids of those of each copy still running then."""
    states = ("saving",) if interrupted else handover.CHILD_STATES
    deadline = time.monotonic() + handover.wait_limit()
    left = []
    for data in data_files:
        marks = handover.wait(data, states=states, give_up=give_up,
                              timeout=max(0.0, deadline - time.monotonic()))
        left.append(tuple(sorted({mark.pid for mark in marks})))
    return left


def run_here(jobs: list[CopyJob], scratch: str, interruption: Interruption | None = None
             ) -> list[CopyOutcome]:
    """Run the copies as processes on this machine, all at once, and wait for them.

    With an active ``interruption``, a run signalled meanwhile starts no more copies
    and ends the running ones as :mod:`~pathprof.parallel.signals` says; the copies
    it never started have no outcome. Whatever happens, no copy still runs when
    this returns or raises."""
    interruption = interruption or Interruption()
    started: list[_Started] = []
    left: list[tuple[int, ...]] = []
    try:
        for job in jobs:
            if interruption.signal is not None:
                break
            started.append(_start(job, os.path.join(scratch, f"copy-{job.index}")))
        wait_for([copy.process for copy in started], interruption)
        # a copy's profile is whole once its children have handed theirs over
        signalled = interruption.signal is not None
        left = children_left([copy.data for copy in started], signalled,
                             lambda: not signalled and interruption.signal is not None)
    finally:
        _end([copy.process for copy in started])  # only after an error of ours
        for copy in started:
            copy.close()
    return [copy.outcome(left[k] if k < len(left) else ())
            for k, copy in enumerate(started)]


def _start(job: CopyJob, directory: str) -> _Started:
    """Start one copy, in its scratch ``directory``."""
    os.makedirs(directory, exist_ok=True)
    command, environment, data, calls = _prepare(job, directory)
    shown = job.index == 0
    if job.stdin is not None:
        stdin: int | None = subprocess.PIPE
    elif job.stdin_is_terminal and shown:
        stdin = None
    else:
        stdin = subprocess.DEVNULL
    files = () if shown else tuple(open(os.path.join(directory, name), "wb")  # noqa: SIM115
                                   for name in ("stdout", "stderr"))
    try:
        process = subprocess.Popen(command, cwd=job.cwd, env=environment, stdin=stdin,
                                   stdout=files[0] if files else None,
                                   stderr=files[1] if files else None)
    except BaseException:
        for f in files:
            f.close()
        raise
    feeder = None
    if job.stdin is not None:
        feeder = threading.Thread(target=feed_stdin, args=(process, job.stdin), daemon=True)
        feeder.start()
    return _Started(job, process, data, calls, feeder, files)


def feed_stdin(process: subprocess.Popen, data: bytes) -> None:
    """Write ``data`` to the process's standard input and close it (a thread's job)."""
    try:
        assert process.stdin is not None
        process.stdin.write(data)
        process.stdin.close()
    except (BrokenPipeError, OSError):
        pass  # the copy stopped reading, as the program would


def run_copy_remotely(job: CopyJob, stop: str | None = None) -> CopyOutcome:
    """Run one copy where this function runs (a Dask worker), in a scratch directory
    of its own, and bring back its data, calls and output.

    The copy runs under a watchdog (:mod:`.lifeline`) that holds one end of a pipe
    whose other end this function holds. The copy is stopped (SIGTERM: it saves
    what it measured and ends) when the Dask event named ``stop`` is set (the run
    was interrupted, or gave up) or when this worker closes; if the worker's
    process dies, the pipe closes with it and the watchdog stops the copy and
    removes its scratch directory. No copy outlives the worker that runs it."""
    with tempfile.TemporaryDirectory(prefix="pathprof-copy-",
                                     ignore_cleanup_errors=True) as scratch:
        command, environment, data, calls = _prepare(job, scratch)
        lifeline, keep = os.pipe()  # the watchdog reads, this function holds the other end
        try:
            try:
                process = subprocess.Popen(
                    [sys.executable, "-m", "pathprof.parallel.lifeline", str(lifeline), scratch,
                     "--", *command], pass_fds=(lifeline,), cwd=job.cwd, env=environment,
                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            finally:
                os.close(lifeline)
            stdout, stderr = _communicate(process, job.stdin or b"",
                                          lambda: _abandoned(stop),
                                          lambda: os.write(keep, b"s"))
            # the copy's children hand their counts over into its data file
            left = children_left([data], give_up=lambda: _abandoned(stop))[0]
        finally:
            os.close(keep)
        return CopyOutcome(job.index, process.returncode, _read(data),  # type: ignore[arg-type]
                           _read_calls(calls), stdout, stderr, children=left)


def _communicate(process: subprocess.Popen, data: bytes, abandoned: Callable[[], bool],
                 stop: Callable[[], object]) -> tuple[bytes, bytes]:
    """``process.communicate(data)``, calling ``stop`` once if ``abandoned()`` turns
    true meanwhile (asked every :data:`CLUSTER_POLL` seconds)."""
    first, stopped = True, False
    while True:
        try:
            return process.communicate(data if first else None, timeout=CLUSTER_POLL)
        except subprocess.TimeoutExpired:
            first = False
            if not stopped and abandoned():
                stop()
                stopped = True


def _abandoned(stop: str | None) -> bool:
    """Whether the copy running in this task should stop: its worker is closing, or
    the run set the event ``stop``."""
    try:
        from distributed import Event, get_worker

        worker = get_worker()
    except (ImportError, ValueError):  # not on a Dask worker (called directly)
        return False
    if getattr(worker.status, "name", "running") not in ("running", "paused",
                                                         "closing_gracefully"):
        return True
    try:
        return stop is not None and bool(Event(stop).is_set())
    except Exception:  # the scheduler is out of reach: the worker will know soon
        return False


def check_scheduler(address: str | None) -> str:
    """``address`` if it can name a Dask scheduler (``tcp://HOST:PORT``, or another
    of Dask's protocols); raises :class:`~pathprof.exceptions.ConfigError`, in one
    line, otherwise. Checked before anything runs, by Dask's own address parser
    when Dask is installed."""
    if not address:
        raise ConfigError("--executor dask needs --scheduler ADDRESS (such as tcp://HOST:8786)")
    try:
        from distributed.comm.addressing import get_address_host_port, parse_address
        from distributed.comm.registry import backends
    except ImportError:
        return address  # run_on_dask says what is missing
    example = "an address such as tcp://HOST:8786"
    scheme, _location = parse_address(address, strict=False)
    if scheme not in backends:
        raise ConfigError(f"--scheduler {address}: Dask has no protocol {scheme!r} "
                          f"(it knows {', '.join(sorted(backends))}); expected {example}")
    if scheme == "inproc":
        raise ConfigError(f"--scheduler {address}: an inproc address names a scheduler in "
                          f"the same process; expected {example}")
    if scheme not in ("tcp", "tls", "ws", "wss"):
        return address  # a protocol of its own (ucx...): Dask will tell
    try:
        _host, port = get_address_host_port(address)
    except ValueError as err:
        raise ConfigError(f"--scheduler {address}: {err}; expected {example}") from None
    if not 0 < port < 65536:
        raise ConfigError(f"--scheduler {address}: port {port} is not between 1 and 65535; "
                          f"expected {example}")
    return address


def run_on_dask(jobs: list[CopyJob], scheduler: str,
                interruption: Interruption | None = None) -> list[CopyOutcome]:
    """Run the copies as tasks of the Dask distributed cluster at ``scheduler``. The
    workers need the program at the same path (a shared or identical file system)
    and an interpreter with pathprof, as they run ``python -m pathprof run``.

    Gives up, raising :class:`~pathprof.exceptions.PathprofError`, when the cluster
    loses the copies: it has had no worker for :func:`_no_workers_timeout` seconds
    while some remain, or a copy's task failed (Dask retries a copy whose worker
    died a few times, then says ``KilledWorker``). The copies still running are then
    stopped. With an active ``interruption``, a signalled run stops the copies (each
    saves what it measured) and returns what they brought back."""
    check_scheduler(scheduler)
    try:
        from distributed import Client, Event
    except ImportError as err:
        raise PathprofError("--executor dask needs Dask's distributed scheduler: "
                            "pip install 'pathprof[dask]'") from err
    try:
        client = Client(scheduler, timeout=10)
    except (OSError, TimeoutError) as err:
        raise PathprofError(f"cannot reach the Dask scheduler at {scheduler}: {err}") from err
    except Exception as err:  # refused by Dask: not a scheduler, a protocol not installed
        raise PathprofError(f"cannot use the Dask scheduler at {scheduler}: "
                            f"{type(err).__name__}: {err}") from err
    interruption = interruption or Interruption()
    stop = Event(f"pathprof-stop-{uuid.uuid4().hex}", client=client)
    futures = []
    try:
        futures = [client.submit(run_copy_remotely, job, stop.name, pure=False)
                   for job in jobs]
        _await_copies(client, futures, scheduler, interruption, stop)
        try:
            return list(client.gather(futures))
        except Exception as err:
            failed = next((k for k, future in enumerate(futures)
                           if future.status == "error"), None)
            which = "a copy" if failed is None else f"copy {failed}"
            raise PathprofError(f"{which} of the parallel run failed on the Dask cluster "
                                f"at {scheduler} ({type(err).__name__}: {err})") from err
    finally:
        with contextlib.suppress(Exception):
            if not all(future.done() for future in futures):
                stop.set()  # the copies still running stop, wherever they are
                client.cancel(futures)
            else:
                stop.clear()
        with contextlib.suppress(Exception):
            client.close()


def _await_copies(client: Client, futures: list[Future], scheduler: str,
                  interruption: Interruption, stop: Event) -> None:
    """Return once every copy's task has finished, or one has failed, setting
    ``stop`` once the run is signalled; raise PathprofError once the cluster has
    had no worker for too long."""
    limit = _no_workers_timeout()
    workerless_since: float | None = None
    stopping = False
    while not all(future.done() for future in futures):
        if any(future.status == "error" for future in futures):
            return  # gathering says which and why
        if interruption.signal is not None and not stopping:
            with contextlib.suppress(Exception):  # no scheduler: nthreads() says so next
                stop.set()
            stopping = True
        try:
            workers = client.nthreads()
        except Exception as err:
            raise PathprofError(f"lost the Dask scheduler at {scheduler} while the copies "
                                f"ran ({type(err).__name__}: {err})") from err
        if workers:
            workerless_since = None
        elif workerless_since is None:
            workerless_since = time.monotonic()
        elif time.monotonic() - workerless_since >= limit:
            left = sum(not future.done() for future in futures)
            raise PathprofError(f"the Dask cluster at {scheduler} lost the copies: it has "
                                f"had no worker for {limit:g} s, with {left} of the "
                                f"{len(futures)} copies unfinished; nothing was merged")
        time.sleep(CLUSTER_POLL)


def _no_workers_timeout() -> float:
    """How long a run waits for a worker: Dask's own
    ``distributed.scheduler.no-workers-timeout`` (how long a task may wait for one;
    ``DASK_DISTRIBUTED__SCHEDULER__NO_WORKERS_TIMEOUT``) when it is set, else
    :data:`NO_WORKERS_TIMEOUT`."""
    try:
        import dask.config
        from dask.utils import parse_timedelta

        value = dask.config.get("distributed.scheduler.no-workers-timeout", None)
        return float(parse_timedelta(value)) if value else NO_WORKERS_TIMEOUT
    except (ImportError, ValueError, TypeError):
        return NO_WORKERS_TIMEOUT
