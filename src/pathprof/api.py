"""What the faces call: the command line (:mod:`pathprof.cli`), the pytest plugins
(:mod:`pathprof.pytest.plugin`, :mod:`pathprof.pytest.parallel`) and their end of
session (:mod:`pathprof.pytest.session`).

One door between the faces and the layers below (``tests/test_layout.py``): a face
imports this module and the small public ones (:mod:`pathprof.config`,
:mod:`pathprof.exceptions`, :mod:`pathprof.messages`, :mod:`pathprof.version`,
:mod:`pathprof.events`, :mod:`pathprof.subpaths`), never the store, the
measurement, the front end or a renderer. Every import here is made when a function
is called: the pytest plugin loads this module in every session, measured or not.
The reports of a measurement and the analyses they compose live in
:mod:`pathprof.reporting`, which this module re-exports.

- the data file: :func:`load`, :func:`combine`, :func:`combinable_files`,
  :func:`erase`, :func:`xdist_data_file`, :func:`xdist_data_files`;
- a measured program: :func:`program`, :func:`measured_run` (``run``),
  :func:`run_measured` (``count``, ``hot``), :func:`run_end`, :func:`parallel_run`,
  :func:`profiler`, :func:`copy_plan`, :func:`command_scope`;
- the reports of one measurement, derived once: :class:`Reporting`
  (:mod:`pathprof.reporting`);
- the analyses: :func:`coverage`, :func:`line_coverage`, :func:`diff`;
- the reports, by name: :data:`REPORTS`, :func:`render`, :func:`export`,
  :data:`EXPORTS`, :func:`check_sort`, :func:`hot_table`, :func:`read_cfg`;
- the instrumented-code cache: :func:`warm_cache`;
- event counting: :func:`thread_events`.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from types import FrameType
from typing import TYPE_CHECKING, TextIO

from pathprof.exceptions import PathprofError
from pathprof.reporting import (
    EXPORTS,
    NAMES_SHOWN,
    REPORTS,
    Reporting,
    any_name,
    condition_totals,
    coverage,
    diff,
    exclusion_rules,
    export,
    line_coverage,
    load,
    render,
    render_pages,
    renderer,
    selected_files,
    selection,
    subpath_sources,
    unmeasured_candidates,
)

if TYPE_CHECKING:  # (imported when called: the plugin loads this module in every session)
    import ast
    from types import CodeType
    from typing import Unpack

    from rich.table import Table

    from pathprof.graph.serial import NamedCfg
    from pathprof.measure.children import ChildMeasurement
    from pathprof.measure.ending import RunEnd
    from pathprof.measure.importhook import WarmResult
    from pathprof.measure.measured_run import Keeper
    from pathprof.measure.measuring import Measuring
    from pathprof.measure.partial import CopyPlan
    from pathprof.measure.profiler import Profiler, ProfilerSettings, RunSettings
    from pathprof.measure.program import Program
    from pathprof.parallel.run import ParallelResult, ParallelSettings
    from pathprof.subpaths import HotSubpath

    #: A parallel run's command line, or what makes copy K's
    RunArgs = Sequence[str] | Callable[[int], Sequence[str]]

__all__ = [
    "EXPORTS",
    "INTERRUPTED",
    "NAMES_SHOWN",
    "REPORTS",
    "Reporting",
    "check_scheduler",
    "check_sort",
    "combinable_files",
    "combine",
    "command_scope",
    "compose_rewriting",
    "condition_totals",
    "copy_environment",
    "copy_plan",
    "coverage",
    "die_of",
    "diff",
    "erase",
    "exclusion_rules",
    "export",
    "forget_decoded",
    "hot_table",
    "line_coverage",
    "load",
    "measured_run",
    "output",
    "parallel_run",
    "parallel_summary",
    "profiler",
    "program",
    "read_cfg",
    "render",
    "render_pages",
    "renderer",
    "run_end",
    "run_measured",
    "selected_files",
    "selection",
    "source_conflicts",
    "subpath_sources",
    "thread_events",
    "unmeasured_candidates",
    "warm_cache",
    "xdist_data_file",
    "xdist_data_files",
]

#: The program ended by an uncaught KeyboardInterrupt (see :func:`command_scope`;
#: the same value as :data:`pathprof.measure.program.INTERRUPTED`, which a run returns).
INTERRUPTED = -2

# -- The data file ------------------------------------------------------------------


def combinable_files(data_file: str) -> list[str]:
    """The data files written beside ``data_file`` that ``combine`` takes."""
    from pathprof.data.files import combinable_files as found

    return found(data_file)


def combine(data_file: str, files: Sequence[str],
            progress: Callable[[int, int], None] | None = None,
            note: Callable[[str], None] | None = None, *, listed: bool = False
            ) -> list[str]:
    """Combine ``files`` into ``data_file``; the files combined. ``progress(done,
    total)`` counts two steps per file: read, then added. Each file is claimed
    before it is added, so combines at once never add one twice; ``note(text)``
    hears what the caller may want to say: files another process took first (with
    ``listed``: the files were found beside ``data_file``; else a missing file is an
    error), and claims a killed combine left, finished now
    (:func:`pathprof.data.combining.combine`)."""
    from pathprof.data.combining import combine as combine_files

    return combine_files(data_file, files, progress=progress, note=note, listed=listed)


def source_conflicts(data_file: str) -> list[tuple[str, str, int]]:
    """The functions of ``data_file`` measured from several versions of their source:
    (file, qualname, versions)."""
    from pathprof.data.store import read
    from pathprof.data.store import source_conflicts as conflicts

    return conflicts([read(data_file)])


def erase(data_file: str) -> list[str]:
    """Remove ``data_file`` and the files beside it; the files removed."""
    from pathprof.data.combining import erase as erase_files

    return erase_files(data_file)


def xdist_data_file(data_file: str, run: str, worker: str) -> str:
    """The data file a pytest-xdist worker of session ``run`` writes."""
    from pathprof.data.files import parallel_name

    return parallel_name(data_file, "xdist", run=run, worker=worker)


def xdist_data_files(data_file: str, run: str) -> list[str]:
    """The data files the pytest-xdist workers of session ``run`` wrote."""
    from pathprof.data.files import files_of

    return files_of(data_file, "xdist", run=run)


# -- The reports of one measurement -----------------------------------------------


# -- The analyses -------------------------------------------------------------------


# -- The reports ----------------------------------------------------------------------


def check_sort(sort: str) -> str:
    """A coverage table's ``--sort`` column, checked (a :class:`PathprofError` if unknown)."""
    from pathprof.report.coverage_text import check_sort as check

    try:
        return check(sort)
    except ValueError as err:
        raise PathprofError(str(err)) from err


def hot_table(hottest: Sequence[HotSubpath], *, title: str | None = None,
              confidence: float = 0.95) -> Table:
    """The table of the hottest subpaths, as a rich renderable (``hot``'s live view)."""
    from pathprof.report.subpaths_text import subpath_table

    return subpath_table(hottest, title=title, confidence=confidence)


def read_cfg(path: str) -> tuple[NamedCfg, str | None]:
    """A CFG given as JSON (``pathprof plan``) and its description, if it has one."""

    from pathprof.graph.serial import cfg_from_data

    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except OSError as err:
        raise PathprofError(f"cannot read {path}: {err.strerror}") from err
    except json.JSONDecodeError as err:
        raise PathprofError(f"{path} is not valid JSON: {err}") from err
    description = data.get("description") if isinstance(data, dict) else None
    return cfg_from_data(data), description or None


# -- A measured program -------------------------------------------------------------


def program(name: str, args: list[str], module: bool) -> Program:
    """The program to run (:class:`pathprof.measure.program.Program`)."""
    from pathprof.measure.program import resolve

    return resolve(name, args, module)


def profiler(**settings: Unpack[ProfilerSettings]) -> Profiler:
    """A :class:`~pathprof.measure.profiler.Profiler` (what ``pathprof run`` and the
    pytest plugin measure with)."""
    from pathprof.measure.profiler import Profiler

    return Profiler(**settings)


def compose_rewriting(profiler: Profiler, *, tag: str, owns: Callable[[object], bool],
                      rewrite: Callable[[ast.Module, bytes, str], None],
                      loaded: Callable[[str, str], None],
                      fallback: Callable[[str, str], CodeType | None]) -> None:
    """Have ``profiler`` measure the modules another tool's loader imports by rewriting
    them (pytest's assertion rewriting: :mod:`pathprof.pytest.plugin`), composing its
    rewriting with pathprof's (:class:`pathprof.measure.importhook.Rewriter`)."""
    from pathprof.measure.importhook import Rewriter

    profiler.hook.rewriters.append(Rewriter(tag, owns, rewrite, loaded, fallback))


def measured_run(program: Program, **settings: Unpack[RunSettings]) -> int:
    """``pathprof run``: run ``program`` measured by a profiler of ``settings``, its
    child processes too, save the data file; the program's exit status.

    A SIGINT or SIGTERM that comes once the program has ended waits for the save,
    then the process dies of it; a SIGTERM while the program runs saves the run so
    far, then the process dies of it (:mod:`pathprof.measure.measured_run`)."""
    from pathprof.measure.children import ChildMeasurement
    from pathprof.measure.measured_run import run_measured
    from pathprof.measure.profiler import Profiler

    measuring = Profiler(default_dirs=program.default_dirs,
                         argv=[program.name, *program.args], **settings)
    return run_measured(program, measuring, _Saving(measuring, ChildMeasurement(
        measuring.child_settings())))


class _Saving:
    """``pathprof run``'s :class:`~pathprof.measure.measured_run.Keeper`: the data file
    saved whatever ends the run, the child processes measured while the program runs."""

    keeps_when_raised = True

    def __init__(self, measuring: Profiler, children: ChildMeasurement) -> None:
        self.measuring, self.children = measuring, children

    def program_starts(self) -> None:
        self.children.start()

    def program_ended(self) -> None:
        self.children.stop()

    def keep(self, *, terminated: bool) -> None:
        from pathprof.messages import warn

        saved = self.measuring.save_at_end()  # saved elsewhere, if it must be: it says where
        if terminated and self.measuring.copy is None:  # (a copy: the parallel run says it)
            warn(f"terminated by SIGTERM: the run's data up to the signal was saved to "
                 f"{_shown_path(saved)}")

    def nothing_measured(self) -> None:
        from pathprof.messages import warn

        if self.measuring.copy is None:
            warn("terminated by SIGTERM before the program started: nothing was measured "
                 "or saved")


def run_measured(program: Program, measuring: Measuring, keeper: Keeper) -> int:
    """Run ``program`` measured by ``measuring`` (``count``: an
    :class:`~pathprof.events.EventCounter`; ``hot``: a
    :class:`~pathprof.subpaths.SubpathSampling`), what it measured kept by ``keeper``;
    the program's exit status (:func:`pathprof.measure.measured_run.run_measured`)."""
    from pathprof.measure.measured_run import run_measured as run

    return run(program, measuring, keeper)


def forget_decoded() -> None:
    """A measurement saved: let go of what the runtime decoded to count it (the
    modules' contracts, block maps), made again if asked for
    (:func:`pathprof.runtime.forget_decoded`)."""
    from pathprof import runtime

    runtime.forget_decoded()


def run_end(finish: Callable[[], object] | None = None) -> RunEnd:
    """What holds SIGINT and SIGTERM from a program's end until what it measured is
    kept, then ends the process by them (:class:`pathprof.measure.ending.RunEnd`:
    ``begin()``, ``end()``, ``die()``); with ``finish``, a SIGTERM while the program
    runs calls it (``hot`` and ``count``: the report so far), then ends the process."""
    from pathprof.measure.ending import RunEnd

    end = RunEnd()
    if finish is not None:
        end.on_sigterm(finish)
    return end


def die_of(signum: int) -> None:
    """End this process as ``signum`` ends a process that does not handle it (a shell
    sees 128 + ``signum``), after flushing what was written
    (:func:`pathprof.parallel.signals.die_of`)."""
    from pathprof.parallel.signals import die_of as die

    die(signum)


def _shown_path(path: str) -> str:
    """``path`` as a message names it: relative when under the current directory."""
    try:
        relative = os.path.relpath(path)
    except ValueError:
        return path
    return path if relative.startswith(os.pardir) else relative


def check_scheduler(executor: str, scheduler: str | None) -> None:
    """A ConfigError unless the executor and the Dask scheduler go together."""
    from pathprof.exceptions import ConfigError
    from pathprof.parallel.executors import check_scheduler as check

    if executor != "dask":
        raise ConfigError("--scheduler goes with --executor dask")
    check(scheduler)


def parallel_run(run_args: RunArgs, *, source: Sequence[str], include: Sequence[str],
                 omit: Sequence[str], default_dirs: Sequence[str], plan_from: str | None,
                 show: Callable[[ParallelResult, str], None] | None = None,
                 **settings: Unpack[ParallelSettings]) -> ParallelResult:
    """Run copies of a program, each measuring part of the selected files, and merge
    their profiles (:func:`pathprof.parallel.run.run_parallel`); ``plan_from``, a data
    file whose counts plan the split. Dies of the signal the run was ended by, as
    Python would. ``show(result, data_file)`` reports the result (default: on
    standard error)."""
    from pathprof.parallel.run import report, run_parallel
    from pathprof.parallel.signals import die_of

    files = selected_files(source, include, omit, default_dirs)
    profile = load(plan_from).functions if plan_from else None
    try:
        result = run_parallel(run_args, files, profile=profile, **settings)
    except KeyboardInterrupt:  # before any copy started (planning, reading stdin)
        die_of(signal.SIGINT)
        raise  # not reached: die_of does not return
    (show or report)(result, settings["data_file"])
    # Signalled, the run ends as Python would: killed by the signal, unless the
    # program (copy 0) took it and ended by itself.
    if result.signal is not None and not (result.interrupted and result.returncode >= 0):
        die_of(result.signal)
    return result


def parallel_summary(result: ParallelResult, data_file: str) -> list[str]:
    """What a parallel run found, in lines (:func:`pathprof.parallel.run.summary`)."""
    from pathprof.parallel.run import summary

    return summary(result, data_file)


def run_parallel_copies(run_args: RunArgs, files: Sequence[str],
                        **settings: Unpack[ParallelSettings]) -> ParallelResult:
    """Run copies of a program and merge their profiles, nothing more
    (:func:`pathprof.parallel.run.run_parallel`; the pytest plugin's parallel session)."""
    from pathprof.parallel.run import run_parallel

    return run_parallel(run_args, files, **settings)


def copy_plan() -> CopyPlan | None:
    """The plan of this process, if it is a copy of a parallel run (None otherwise),
    and the environment variable that carries it."""
    from pathprof.measure.partial import from_environment

    return from_environment()


def copy_environment() -> str:
    """The environment variable that makes a process a copy of a parallel run."""
    from pathprof.measure.partial import ENVIRONMENT

    return ENVIRONMENT


@contextlib.contextmanager
def command_scope() -> Iterator[Callable[[int], int]]:
    """Around a command: pathprof's own work (what it runs of a module measured in
    place is not counted), then the program put back for the interpreter's shutdown.
    Yields ``finish(status)``, which turns :data:`INTERRUPTED` into Python's death by
    SIGINT."""
    from pathprof import runtime
    from pathprof.measure import program as running

    assert running.INTERRUPTED == INTERRUPTED

    def finish(status: int) -> int:
        if status == INTERRUPTED:
            # Python's exit after an uncaught KeyboardInterrupt: the program's atexit
            # handlers ran (finish_as_python), the run was saved or reported, then the
            # process kills itself with SIGINT (a shell sees 130).
            running.die_of_sigint()
            return 1
        return status

    try:
        with runtime.own_work:
            yield finish
    finally:
        execfile = sys.modules.get("pathprof.measure.execfile")  # (imports may fail)
        if execfile is not None:
            execfile.reinstate_program()  # what the interpreter's shutdown sees


# -- The instrumented-code cache ----------------------------------------------------


def warm_cache(source: Sequence[str], include: Sequence[str], omit: Sequence[str], *,
               mode: str, metric: str | None, stop_counting: str = "never",
               cache_dir: str | None = None,
               progress: Callable[[int, int], None] | None = None
               ) -> tuple[list[str], WarmResult]:
    """Instrument the selected files into the cache a run with these options reads
    (``pathprof instrument``): the files, and the result (instrumented, cached,
    failed, and where it was written: :class:`~pathprof.measure.importhook.WarmResult`).
    ``cache_dir`` is a configured cache directory (:func:`pathprof.config.cache_dir`).
    ``progress(done, total)`` is called after each file."""
    from pathprof.config import cache_dir as find_cache_dir
    from pathprof.measure.importhook import InstrumentOptions
    from pathprof.measure.importhook import warm_cache as warm

    paths = selected_files(source, include, omit, [os.getcwd()])
    if not paths:
        raise PathprofError("no source files selected (see --source, --include, --omit)")
    if stop_counting != "never" and (mode != "path" or metric is not None):
        raise PathprofError("stopping counting is for path coverage: it needs path mode "
                            "and no metric")
    options = InstrumentOptions(mode=mode, metric=metric, switches=stop_counting != "never",
                                cache_dir=find_cache_dir(cache_dir))
    return paths, warm(paths, options, progress=progress)


# -- Event counting -----------------------------------------------------------------


def thread_events(frame: FrameType) -> int:
    """The events counted so far on the thread running ``frame`` (the pytest fixture's
    reading, which must not count its own call)."""
    from pathprof.runtime import events

    return events.read_thread(frame)


def output(path: str | None) -> contextlib.AbstractContextManager[TextIO]:
    """Standard output, or ``path`` opened for writing (reported if it cannot be)."""
    return _output(path)


@contextlib.contextmanager
def _output(path: str | None) -> Iterator[TextIO]:
    if path is None:
        yield any_name(sys.stdout)
        return
    try:
        file = open(path, "w", encoding="utf-8", errors=NAMES_SHOWN)  # noqa: SIM115
    except OSError as err:
        raise PathprofError(f"cannot write {path}: {err.strerror}") from err
    with file:
        yield file
