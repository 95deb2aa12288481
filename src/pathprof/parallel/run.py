"""A parallel run: K copies of the program on the same input, their profiles added.

Every copy gets the same command line, environment, working directory, standard
input (read once here and replayed to each) and ``PYTHONHASHSEED`` (one chosen
here when the user set none, so that sets and dicts of strings iterate alike), and
a temporary directory of its own (``TMPDIR``). Copy 0's output is the run's; each
copy profiles the functions :mod:`.plan` gave it and counts the calls of all the
others. Copies that counted different calls, or ended differently, did not run
the same program (it reads the clock, the process id, the network, files another
copy changed...): the run says so and the merged profile is not presented as
exact. ``verify`` also runs the ordinary sequential profile and compares.

Only calls can be compared: every copy counts each function's calls (or profiles
them), but each path, and so each branch taken, is measured by one copy alone (the
others count the function's calls only, or drop the paths they do not own). A
program whose randomness changes branches and no call gets past the comparison;
the run's message says so, and ``verify`` is the check that catches it.

A copy's profile includes its child processes (forked, or new interpreters) before
the copies are compared: once a copy has ended, the run waits, a bounded time
(:func:`pathprof.measure.handover.wait_limit`), for the children its marks name to
hand their counts over (:func:`~pathprof.parallel.executors.children_left`). A copy
whose child still runs then is named as such: its profile may miss what the child
counts, so the copies cannot be compared, and the run says that instead of calling
the program not deterministic.

A run signalled while its copies run (SIGINT, SIGTERM) stops them, each saving
what it measured (:mod:`.signals`), merges what they saved, says that the merge
covers an interrupted run, and leaves no temporary file and no copy behind.

Invariant: when every copy counted the same calls and ran the same paths, each
function was profiled by exactly one copy on the same execution, so the merged
data file is the sequential profile (checked by ``tests/test_parallel.py`` against
sequential runs).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Required, TypedDict

from pathprof.data import store
from pathprof.data.modules import Sources
from pathprof.data.profile import FunctionProfile, merge
from pathprof.exceptions import PathprofError
from pathprof.measure import handover
from pathprof.messages import warn
from pathprof.parallel.executors import (
    CopyJob,
    CopyOutcome,
    check_scheduler,
    children_left,
    feed_stdin,
    run_here,
    run_on_dask,
    wait_for,
)
from pathprof.parallel.plan import CopiesPlan, plan_copies
from pathprof.parallel.signals import Interruption, signal_name

__all__ = ["ParallelResult", "ParallelSettings", "compare_profiles", "report", "run_parallel",
           "summary"]

EXECUTORS = ("local", "dask")
#: The status of a run whose copy 0 never ran (a pathprof error).
ERR = 1


@dataclass
class ParallelResult:
    """What a parallel run found."""

    plan: CopiesPlan
    returncode: int
    #: calls that some copies counted differently: ``file|qualname|line|hash`` ->
    #: the count of each copy
    disagreements: dict[str, list[int]] = field(default_factory=dict)
    #: ``verify``: differences from the sequential profile (empty: identical)
    differences: list[str] | None = None
    #: the signal (SIGINT, SIGTERM) this process received during the run, if any:
    #: the caller ends as that signal would have ended it (the CLI dies of it)
    signal: int | None = None
    #: the signal came while copies ran: each was stopped wherever it stood
    interrupted: bool = False
    #: copies that saved no profile (only in an interrupted run): their functions
    #: are missing from the merge
    missing: list[int] = field(default_factory=list)
    #: ``"run"`` or ``"pytest"``, as given to :func:`run_parallel`
    kind: str = "run"
    #: copies whose child processes still ran when the run stopped waiting for them:
    #: copy -> their pids (the copy's profile may miss what they counted)
    outlived: dict[int, tuple[int, ...]] = field(default_factory=dict)

    @property
    def exact(self) -> bool:
        return not self.disagreements and not self.interrupted and not self.outlived


def _environment() -> dict[str, str]:
    environment = dict(os.environ)
    if environment.get("PYTHONHASHSEED", "random") == "random":
        environment["PYTHONHASHSEED"] = str(random.randint(1, 2**32 - 1))
    return environment


def _stdin() -> tuple[bytes | None, bool]:
    """Standard input to replay to every copy, and whether it is a terminal (then
    copy 0 reads it and the others get none)."""
    stream = sys.stdin
    if stream is None:
        return None, False
    try:
        if stream.isatty():
            return None, True
        return stream.buffer.read(), False
    except (OSError, ValueError, AttributeError):
        return None, False


def _calls(outcome: CopyOutcome) -> dict[str, int]:
    if outcome.calls is None:
        return {}
    try:
        return {str(k): int(v) for k, v in json.loads(outcome.calls).items()}
    except (ValueError, AttributeError, TypeError):
        return {}


def _calls_of_profile(fn: FunctionProfile) -> int:
    """The calls a profiled function ran: its paths from ENTRY (path mode), the
    count of its entry edge (edge mode)."""
    if fn.meta.mode == "edge":
        entry = fn.meta.entry
        return sum(count for eid, count in fn.edges.items()
                   if fn.meta.edges[eid].src == entry)
    return sum(path.count for path in fn.paths if path.start == "entry")


def _disagreements(outcomes: list[CopyOutcome], profiles: list[list[FunctionProfile]]
                   ) -> dict[str, list[int]]:
    """Calls counted differently by the copies. A copy counts the calls of the
    functions it does not profile; the profile of the copy that profiles a function
    whole gives its calls; a function whose paths the copies split has its calls
    from the sum of the holders' profiles (each keeps the paths it owns), shown
    under the holder of its first task."""
    counted = [_calls(outcome) for outcome in outcomes]
    for copy, functions in enumerate(profiles):
        for fn in functions:
            key = f"{fn.file}|{fn.qualname}|{fn.first_line}|{fn.source_hash}"
            if fn.meta.share is not None:
                holder = fn.meta.share.holder
                counted[holder][key] = counted[holder].get(key, 0) + _calls_of_profile(fn)
            else:
                counted[copy][key] = counted[copy].get(key, 0) + _calls_of_profile(fn)
    found = {}
    for key in sorted({key for calls in counted for key in calls}):
        seen = [calls[key] for calls in counted if key in calls]
        if len(set(seen)) > 1:
            found[key] = seen
    return found


def _profile_key(fn: FunctionProfile) -> tuple[str, str, int, str]:
    return (fn.file, fn.qualname, fn.first_line, fn.source_hash)


def compare_profiles(expected: Sequence[FunctionProfile], actual: Sequence[FunctionProfile]
                     ) -> list[str]:
    """How two profiles differ, function by function (empty: identical counts)."""
    want = {_profile_key(fn): fn for fn in merge(expected)}
    got = {_profile_key(fn): fn for fn in merge(actual)}
    differences = []
    for key in sorted(set(want) | set(got)):
        a, b = want.get(key), got.get(key)
        name = f"{os.path.relpath(key[0])}:{key[1]}"
        if a is None or b is None:
            ran = (a or b)
            assert ran is not None
            if ran.total or ran.raised:
                differences.append(f"{name}: measured in one profile only")
            continue
        for what in ("counts", "cuts", "edges"):
            if getattr(a, what) != getattr(b, what):
                differences.append(f"{name}: {what} differ")
        if (a.raised, a.unattributed) != (b.raised, b.unattributed):
            differences.append(f"{name}: exceptions differ")
    return differences


class ParallelSettings(TypedDict, total=False):
    """:func:`run_parallel`'s keywords after ``files`` but ``profile``, for what passes
    them on (:func:`pathprof.api.parallel_run`, :func:`pathprof.api.run_parallel_copies`)."""

    copies: Required[int]
    data_file: Required[str]
    append: bool
    executor: str
    scheduler: str | None
    verify: bool
    partition: bool
    kind: str


def run_parallel(run_args: Sequence[str] | Callable[[int], Sequence[str]],
                 files: Sequence[str], *, copies: int, data_file: str, append: bool = False,
                 executor: str = "local", scheduler: str | None = None, verify: bool = False,
                 partition: bool = True, profile: Sequence[FunctionProfile] | None = None,
                 kind: str = "run") -> ParallelResult:
    """Run ``pathprof run <run_args>`` as ``copies`` copies, each profiling its part
    of ``files`` (the run's selection), and write the merged profile to
    ``data_file``. ``run_args`` are ``run``'s arguments without ``--data-file``, or
    a function giving each copy's; with ``kind="pytest"`` they are the interpreter's
    arguments that run pytest (the plugin measures in each copy: see
    :class:`~pathprof.parallel.executors.CopyJob`). ``partition`` splits
    single-caller functions' paths among the copies (path mode without a metric);
    ``profile``, an earlier run's, plans from measured costs
    (:func:`~pathprof.parallel.plan.plan_copies`).

    SIGINT and SIGTERM received while the copies run (in the main thread) do not
    stop this function: the copies are stopped, each saving what it measured, their
    profiles merged, the temporary files removed, and the result says so
    (``interrupted``, ``signal``); the caller then ends as the signal says. No copy
    runs any more when this returns or raises."""
    if copies < 1:
        raise PathprofError(f"--parallel needs at least 1 copy, not {copies}")
    if executor not in EXECUTORS:
        raise PathprofError(f"unknown executor {executor!r}; choose from {', '.join(EXECUTORS)}")
    if executor == "dask":
        check_scheduler(scheduler)
    if verify and kind != "run":
        raise PathprofError("verify compares with a sequential `pathprof run` only")
    plan = plan_copies(files, copies, partition=partition, profile=profile)
    stdin, terminal = _stdin()
    environment = _environment()
    plan_json = json.dumps(plan.to_json())
    def args_of(k: int) -> tuple[str, ...]:
        return tuple(run_args(k) if callable(run_args) else run_args)

    jobs = [CopyJob(k, args_of(k), environment, os.getcwd(), plan_json, stdin, terminal, kind)
            for k in range(copies)]
    with Interruption() as interruption:
        scratch = tempfile.mkdtemp(prefix="pathprof-parallel-")
        try:
            if executor == "local":
                outcomes = run_here(jobs, scratch, interruption)
            else:
                assert scheduler is not None
                outcomes = run_on_dask(jobs, scheduler, interruption)
                if outcomes:
                    _show(outcomes[0])
            result, profiles = _combine(plan, outcomes, scratch, data_file, append,
                                        interruption.signal)
            result.kind = kind
            if verify and not result.interrupted:
                sequential = _sequential(args_of(0), environment, stdin, terminal, scratch,
                                         interruption)
                if sequential is not None:
                    result.differences = compare_profiles(sequential, profiles)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        result.signal = interruption.signal
    return result


def _combine(plan: CopiesPlan, outcomes: list[CopyOutcome], scratch: str, data_file: str,
             append: bool, signal: int | None) -> tuple[ParallelResult, list[FunctionProfile]]:
    """Check the copies' outcomes against each other and merge their profiles into
    ``data_file``. A copy that saved nothing is an error, unless the run was
    interrupted (by ``signal``, while the copies ran): the merge then holds what
    the others saved (nothing, and no data file is written, if none did)."""
    interrupted = signal is not None
    saved = [outcome for outcome in outcomes if outcome.data is not None]
    missing = sorted(set(range(plan.copies)) - {outcome.index for outcome in saved})
    if missing and not interrupted:
        outcome = next(o for o in outcomes if o.index == missing[0])
        raise PathprofError(f"copy {outcome.index} of the parallel run saved no data "
                            f"(it ended with status {outcome.returncode})")
    per_copy = _read_copies(saved, scratch)
    if outcomes and outcomes[0].index == 0:
        returncode = outcomes[0].returncode
    else:  # interrupted before copy 0 started: as if the signal had ended it
        returncode = -signal if signal is not None else ERR
    result = ParallelResult(plan, returncode, interrupted=interrupted, missing=missing)
    if not interrupted:  # stopped at different points, the copies cannot agree
        result.outlived = {outcome.index: outcome.children for outcome in outcomes
                           if outcome.children}
        result.disagreements = _disagreements(outcomes, [m.functions for m in per_copy])
        ended = {outcome.returncode for outcome in outcomes}
        if len(ended) > 1:
            result.disagreements["exit status"] = [o.returncode for o in outcomes]
    profiles = _merge(per_copy, data_file, append) if per_copy else []
    return result, profiles


def _show(outcome: CopyOutcome) -> None:
    for stream, data in ((sys.stdout, outcome.stdout), (sys.stderr, outcome.stderr)):
        stream.flush()
        stream.buffer.write(data)
        stream.flush()


def _read_copies(outcomes: list[CopyOutcome], scratch: str) -> list[store.Measurement]:
    """The profiles the copies saved (each outcome has data)."""
    measurements = []
    for outcome in outcomes:
        assert outcome.data is not None
        path = os.path.join(scratch, f"merge-{outcome.index}.pathprof")
        with open(path, "wb") as f:
            f.write(outcome.data)
        measurements.append(store.read(path))
    return measurements


def _merge(measurements: list[store.Measurement], data_file: str, append: bool
           ) -> list[FunctionProfile]:
    """Add the copies' profiles into ``data_file`` as one run (the first copy's:
    copy 0's, unless it saved nothing)."""
    functions = merge(fn for m in measurements for fn in m.functions)
    sources = Sources()
    for m in measurements:
        sources.update(m.sources)  # as the copies' files hold them: compressed
    store.write(data_file, measurements[0].runs[0], functions, sources, append=append,
                selections=[s for m in measurements for s in m.selections])
    return functions


def _sequential(run_args: Sequence[str], environment: dict[str, str], stdin: bytes | None,
                terminal: bool, scratch: str, interruption: Interruption
                ) -> list[FunctionProfile] | None:
    """``verify``: the ordinary profile of the same run, for comparison; None if the
    run was signalled meanwhile (the sequential run is then stopped as the copies
    are)."""
    data = os.path.join(scratch, "sequential.pathprof")
    process = subprocess.Popen(
        [sys.executable, "-m", "pathprof", "run", "--data-file", data, *run_args],
        env=environment, stdin=subprocess.PIPE if stdin is not None
        else (None if terminal else subprocess.DEVNULL),
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    feeder = None
    if stdin is not None:
        feeder = threading.Thread(target=feed_stdin, args=(process, stdin), daemon=True)
        feeder.start()
    wait_for([process], interruption)
    if feeder is not None:
        feeder.join()
    if interruption.signal is not None:
        return None
    # its children hand their counts over, as the copies' do
    children_left([data], give_up=lambda: interruption.signal is not None)
    if interruption.signal is not None:
        return None
    if not os.path.exists(data):
        raise PathprofError("--verify: the sequential run saved no data")
    return store.read(data).functions


def summary(result: ParallelResult, data_file: str) -> list[str]:
    """What a parallel run found, in lines: the copies were interrupted (the merge
    covers part of the run), agreed on the calls (the only thing copies can
    compare, which the line says), or not; with ``verify``, how the merge compares."""
    copies = result.plan.copies
    shown_file = os.path.relpath(data_file)
    if result.interrupted:
        name = signal_name(result.signal) if result.signal is not None else "a signal"
        if len(result.missing) == copies:
            return [f"the run was interrupted ({name}) before any of its {copies} copies "
                    "saved a profile: nothing was merged"]
        line = (f"the run was interrupted ({name}) while its {copies} copies ran: each "
                f"stopped at its own point, so the profile merged into {shown_file} "
                "covers part of the run and is not exact")
        if result.missing:
            which = ", ".join(str(k) for k in result.missing)
            line += (f" (cop{'y' if len(result.missing) == 1 else 'ies'} {which} saved "
                     "nothing: the functions they profile are missing)")
        return [line]
    if result.outlived:
        lines = [_outlived(result.outlived, shown_file)]
    elif result.exact:
        line = f"{copies} copies ran the same calls; their profiles are merged into {shown_file}"
        if result.differences is None:
            line += (". Only calls were compared: each path is measured by one copy, so "
                     "randomness that changes branches but no calls goes unseen")
            if result.kind == "run":
                line += " (--verify compares the merge with a sequential run)"
        lines = [line]
    else:
        shown = ", ".join(f"{key.split('|')[1] if '|' in key else key}: {counts}"
                          for key, counts in list(result.disagreements.items())[:3])
        lines = [f"the {copies} copies did not run the same way ({shown}"
                 f"{' ...' if len(result.disagreements) > 3 else ''}): the program is not "
                 f"deterministic, and the merged profile in {shown_file} "
                 "is not exact"]
    if result.differences is not None:
        if result.differences:
            lines.append("--verify: the merged profile differs from the sequential one: "
                         + "; ".join(result.differences[:5]))
        else:
            lines.append("--verify: the merged profile equals the sequential one")
    return lines


def _outlived(outlived: dict[int, tuple[int, ...]], shown_file: str) -> str:
    """The line for copies whose children still ran when the run stopped waiting."""
    which = sorted(outlived)
    pids = sorted({pid for k in which for pid in outlived[k]})
    many = len(pids) > 1
    shown = ", ".join(map(str, pids[:5])) + (", ..." if len(pids) > 5 else "")
    copies = f"cop{'ies' if len(which) > 1 else 'y'} {', '.join(map(str, which))}"
    theirs = "their copies" if len(which) > 1 else "its copy"
    return (f"{len(pids)} child process{'es' * many} of {copies} (pid {shown}) still "
            f"ran {handover.wait_limit():g} s after {theirs} ended: what "
            f"{'they' if many else 'it'} counted may be missing from the copies' "
            "profiles, so the copies cannot be compared, and the merged profile "
            f"in {shown_file} is not exact ({handover.WAIT_VARIABLE} sets how many seconds "
            "a run waits for its children)")


def report(result: ParallelResult, data_file: str) -> None:
    """:func:`summary` on standard error."""
    for line in summary(result, data_file):
        warn(line)
