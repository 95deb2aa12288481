"""What the faces call: the command line (:mod:`pathprof.cli`), the pytest plugins
(:mod:`pathprof.pytest.plugin`, :mod:`pathprof.pytest.parallel`) and their end of
session (:mod:`pathprof.pytest.session`).

One door between the faces and the layers below (``tests/test_layout.py``): a face
imports this module and the small public ones (:mod:`pathprof.config`,
:mod:`pathprof.exceptions`, :mod:`pathprof.messages`, :mod:`pathprof.version`,
:mod:`pathprof.events`, :mod:`pathprof.subpaths`), never the store, the
measurement, the front end or a renderer. Every import here is made when a function
is called: the pytest plugin loads this module in every session, measured or not.

- the data file: :func:`load`, :func:`combine`, :func:`combinable_files`,
  :func:`erase`, :func:`xdist_data_file`, :func:`xdist_data_files`;
- a measured program: :func:`program`, :func:`measured_run`, :func:`run_program`,
  :func:`run_end`, :func:`main_compiler`, :func:`parallel_run`, :func:`profiler`,
  :func:`copy_plan`, :func:`command_scope`;
- the reports of one measurement, derived once: :class:`Reporting`;
- the analyses: :func:`coverage`, :func:`line_coverage`, :func:`diff`;
- the reports, by name: :data:`REPORTS`, :func:`render`, :func:`export`,
  :data:`EXPORTS`, :func:`check_sort`, :func:`hot_table`, :func:`read_cfg`;
- the instrumented-code cache: :func:`warm_cache`;
- event counting: :func:`thread_events`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TextIO

from pathprof.exceptions import PathprofError

if TYPE_CHECKING:  # (imported when called: the plugin loads this module in every session)
    from pathprof.analysis.conditioncoverage import ConditionTotals
    from pathprof.analysis.exclusions import ExclusionRules
    from pathprof.analysis.linecoverage import LineCoverage
    from pathprof.analysis.memo import AnalysisMemo
    from pathprof.analysis.pathcoverage import PathCoverage
    from pathprof.analysis.pathdiff import ProfileDiff
    from pathprof.config import Config
    from pathprof.data.measurement import Measurement
    from pathprof.measure.ending import RunEnd
    from pathprof.measure.importhook import WarmResult
    from pathprof.measure.partial import CopyPlan
    from pathprof.measure.profiler import Profiler
    from pathprof.measure.program import Program
    from pathprof.parallel.run import ParallelResult
    from pathprof.python.selection import Selection

__all__ = [
    "EXPORTS",
    "INTERRUPTED",
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
    "export",
    "forget_decoded",
    "hot_table",
    "line_coverage",
    "load",
    "main_compiler",
    "measured_run",
    "output",
    "parallel_run",
    "parallel_summary",
    "profiler",
    "program",
    "read_cfg",
    "render",
    "renderer",
    "run_end",
    "run_program",
    "selected_files",
    "source_conflicts",
    "thread_events",
    "warm_cache",
    "xdist_data_file",
    "xdist_data_files",
]

#: The program ended by an uncaught KeyboardInterrupt (see :func:`command_scope`;
#: the same value as :data:`pathprof.measure.program.INTERRUPTED`, which a run returns).
INTERRUPTED = -2

# -- The data file ------------------------------------------------------------------


def load(data_file: str, include: Sequence[str] = (), omit: Sequence[str] = ()
         ) -> Measurement:
    """The :class:`~pathprof.data.measurement.Measurement` in ``data_file``, with only
    the functions of the files ``include`` and ``omit`` (patterns) let through."""
    from pathprof.data.store import read
    from pathprof.python.selection import matches_patterns

    if not (include or omit):
        return read(data_file)
    # Only the files let through are decoded (a report of one file reads one module).
    return read(data_file, files=lambda file: matches_patterns(file, include, omit))


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


class Reporting:
    """The reports of one measurement, as coverage.py's ``Coverage`` makes its
    reports: built once from the data file (or a measurement), the configuration and
    the report options, it reads each of them once, derives path coverage once (with
    the analyses earlier reports kept in the cache directory, :func:`coverage`) and
    every report kind reads that; used by the reporting commands and by the end of a
    ``pytest --pathprof`` session alike.

    ``exclude``: the configuration's exclusions apply (``--no-exclude``: not);
    ``source``, ``include``, ``omit``: which files never imported count at 0%
    (:func:`unmeasured_candidates`; none when not ``unmeasured``) and, with
    ``include``/``omit``, which measured files the data file's reading lets through;
    ``keep_analyses``: read and keep analyses in the configuration's cache directory.
    """

    def __init__(self, data_file: str | None = None, *, measurement: Measurement | None = None,
                 config: Config | None = None, exclude: bool = True, source: Sequence[str] = (),
                 include: Sequence[str] = (), omit: Sequence[str] = (),
                 unmeasured: bool = True, keep_analyses: bool = True) -> None:
        if data_file is None and measurement is None:
            raise TypeError("Reporting needs a data file or a measurement")
        self.data_file = data_file
        self._measurement = measurement
        self._config = config
        self.exclude = exclude
        self.source, self.include, self.omit = list(source), list(include), list(omit)
        self.unmeasured = unmeasured
        self.keep_analyses = keep_analyses
        self._coverage: PathCoverage | None = None
        self._rules: ExclusionRules | None = None

    @property
    def config(self) -> Config:
        """The configuration (:func:`pathprof.config.read_config`), read once."""
        if self._config is None:
            from pathprof.config import read_config

            self._config = read_config()
        return self._config

    @property
    def measurement(self) -> Measurement:
        """The measurement, read from the data file once (:func:`load`)."""
        if self._measurement is None:
            assert self.data_file is not None
            self._measurement = load(self.data_file, self.include, self.omit)
        return self._measurement

    @property
    def rules(self) -> ExclusionRules:
        """The exclusion rules in force (:func:`exclusion_rules`)."""
        if self._rules is None:
            self._rules = exclusion_rules(self.config, enabled=self.exclude)
        return self._rules

    def source_files(self) -> list[str]:
        """The files a report counts at 0% when nothing of them was measured."""
        if not self.unmeasured:
            return []
        return unmeasured_candidates(self.config, self.source, self.include, self.omit,
                                     self.measurement)

    def cache_dir(self) -> str | None:
        """Where analyses are kept (None: not kept)."""
        if not self.keep_analyses:
            return None
        from pathprof.config import cache_dir, configured_cache_dir

        return cache_dir(configured_cache_dir(self.config)).path

    def coverage(self) -> PathCoverage:
        """Path coverage (:func:`coverage`), derived once."""
        if self._coverage is None:
            self._coverage = coverage(self.measurement, self.rules, self.source_files(),
                                      self.cache_dir())
        return self._coverage

    def render(self, name: str, out: Any, **options: Any) -> Any:
        """The report ``name`` (:data:`REPORTS`) of the path coverage, on ``out``."""
        return render(name, self.coverage(), out, **options)

    def export(self, kind: str, path: str | None,
               progress: Callable[[int, int], None] | None = None) -> LineCoverage:
        """Write the export ``kind`` (:data:`EXPORTS`) to ``path`` (:func:`export`)."""
        return export(kind, self.measurement, path, progress, self.rules, self.source_files())

    def release(self) -> None:
        """Let go of what was derived and read (shown, it is garbage)."""
        self._coverage = None
        if self.data_file is not None:
            self._measurement = None


# -- The analyses -------------------------------------------------------------------


def coverage(measurement: Measurement, rules: ExclusionRules | None = None,
             source_files: Sequence[str] = (), cache_dir: str | None = None) -> PathCoverage:
    """Path and basis path coverage (:class:`~pathprof.analysis.pathcoverage.PathCoverage`)
    less what ``rules`` exclude (default: the configuration's, :func:`exclusion_rules`),
    with the functions of ``source_files`` no measured function comes from at 0%.

    With ``cache_dir`` (pathprof's cache directory), what earlier reports derived of
    the same module versions under the same rules is read from it, not derived again,
    and what this one derived is kept there (:mod:`pathprof.analysis.memo`,
    :func:`kept_analyses`).

    A measurement that holds functions, none of them measured in path mode (``pathprof
    run --mode edge``), raises :class:`PathprofError` saying so
    (:func:`~pathprof.analysis.pathcoverage.path_coverage`)."""
    from pathprof.analysis.pathcoverage import path_coverage

    if rules is None:
        from pathprof.config import read_config

        rules = exclusion_rules(read_config())
    unmeasured: list[Any] = []
    unparsed: list[tuple[str, str]] = []
    notes: list[str] = []
    if source_files:
        from pathprof.measure.unmeasured import unmeasured_profiles

        measured = {os.path.abspath(fn.file) for fn in measurement.functions}
        if measured and not measured & {os.path.abspath(f) for f in source_files}:
            # e.g. --source NAME found a directory of that name here, while the
            # tests imported the installed copy: counting its files would be wrong
            notes.append(f"No file under the source ({len(source_files):,}) was measured "
                         "(the code measured is elsewhere: is the source the installed "
                         "copy?), so none is counted at 0%.")
        else:
            unmeasured, unparsed = unmeasured_profiles(source_files, measured)
    if cache_dir is None:
        return path_coverage(measurement, rules, unmeasured, unparsed, notes)
    versions = {(fn.file, fn.source_hash) for fn in (*measurement.functions, *unmeasured)}
    memos = kept_analyses(cache_dir, rules, versions)
    found = path_coverage(measurement, rules, unmeasured, unparsed, notes, memos)
    keep_analyses(cache_dir, memos.values())
    return found


#: Where analyses are kept in the cache directory, and the most bytes one file may hold.
_ANALYSES = "analyses"
_ANALYSES_MOST = 8 << 20


def _analyses_file(file: str, source_hash: str, rules: str) -> str:
    from pathprof.analysis.memo import ANALYSES_VERSION

    name = "\x00".join((file, source_hash, rules, str(ANALYSES_VERSION)))
    digest = hashlib.sha256(name.encode("utf-8", "surrogateescape")).hexdigest()[:32]
    return os.path.join(_ANALYSES, f"{digest}.json")


def kept_analyses(cache_dir: str, rules: ExclusionRules, versions: Iterable[tuple[str, str]]
                  ) -> dict[tuple[str, str], AnalysisMemo]:
    """The :class:`~pathprof.analysis.memo.AnalysisMemo` kept in ``cache_dir`` for each
    module version ``(file, source hash)`` under ``rules``, where one is: read as
    pathprof's instrumented code is (the directory the user's, the file pathprof's,
    :func:`~pathprof.measure.codecache.read_own`), and checked field by field; a file
    that fails is left out, and replaced when the analyses are kept again."""
    from pathprof.analysis.memo import AnalysisMemo, rules_key
    from pathprof.measure.codecache import read_own

    key = rules_key(rules)
    found: dict[tuple[str, str], AnalysisMemo] = {}
    for file, source_hash in versions:
        data = read_own(cache_dir, _analyses_file(file, source_hash, key), _ANALYSES_MOST)
        if data is None:
            continue
        try:
            document = json.loads(data)
        except (ValueError, RecursionError):
            continue
        memo = AnalysisMemo.from_document(document, file, source_hash, key)
        if memo is not None:
            found[(file, source_hash)] = memo
    return found


def keep_analyses(cache_dir: str, memos: Iterable[AnalysisMemo]) -> None:
    """Keep in ``cache_dir`` the memos that gained something (a file that cannot be
    written is left as it is: the next report derives again)."""
    from pathprof.measure.codecache import write_own

    for memo in memos:
        if memo.changed:
            text = json.dumps(memo.document(), separators=(",", ":"))
            write_own(cache_dir, _analyses_file(memo.file, memo.source_hash, memo.rules),
                      text.encode())
            memo.changed = False


def exclusion_rules(config: Config, enabled: bool = True) -> ExclusionRules:
    """The :class:`~pathprof.analysis.exclusions.ExclusionRules` a configuration sets
    (``exclude_lines``, ``exclude_also``, ``exclude_kinds``, ``coverage_exclusions``);
    none at all when not ``enabled``."""
    from pathprof.analysis.exclusions import ExclusionRules

    if not enabled:
        return ExclusionRules.none()
    lines, also, kinds = config.exclusion_settings()
    try:
        return ExclusionRules.of(lines, also, kinds)
    except ValueError as err:
        where = config.path or "the configuration"
        raise PathprofError(f"{where}: {err}") from err


def unmeasured_candidates(config: Config, source: Sequence[str] = (),
                          include: Sequence[str] = (), omit: Sequence[str] = (),
                          measurement: Measurement | None = None) -> list[str]:
    """The files a report counts at 0% when nothing of them was measured: those of the
    source given (``--source``); else of what the runs of ``measurement`` measured,
    where they named it (:attr:`~pathprof.data.measurement.Measurement.selections`:
    a ``pytest --pathprof=PKG`` session's report and a later ``pathprof coverage`` count
    the same files); else of the configuration's source; as coverage.py reports
    unexecuted files of its ``source``. None when no source is set anywhere."""
    if not source and measurement is not None and measurement.selections:
        files: dict[str, None] = {}
        for selection in measurement.selections:
            files.update(dict.fromkeys(selected_files(
                list(selection.source), list(include) or list(selection.include),
                list(omit) or list(selection.omit), [])))
        return list(files)
    sources = list(source) or list(config.source)
    if not sources:
        return []
    return selected_files(sources, list(include) or config.include,
                          list(omit) or config.omit, [])


def line_coverage(measurement: Measurement,
                  progress: Callable[[int, int], None] | None = None,
                  rules: ExclusionRules | None = None) -> LineCoverage:
    """Lines and branches (:class:`~pathprof.analysis.linecoverage.LineCoverage`), less
    what ``rules`` exclude (default: the configuration's, :func:`exclusion_rules`);
    ``progress(done, total)`` is called after each file."""
    from pathprof.analysis.linecoverage import line_coverage as lines

    if rules is None:
        from pathprof.config import read_config

        rules = exclusion_rules(read_config())
    return lines(measurement, progress, rules)


def diff(old: Measurement, new: Measurement, **options: Any) -> ProfileDiff:
    """How two measurements differ (:func:`pathprof.analysis.pathdiff.diff_profiles`)."""
    from pathprof.analysis.pathdiff import diff_profiles

    return diff_profiles(old, new, **options)


# -- The reports ----------------------------------------------------------------------

#: report name -> the module of :mod:`pathprof.report` and its renderer function
#: (every one ``render(data, out, **options)``: see :mod:`pathprof.report`).
REPORTS = {
    "paths": ("paths_text", "render"), "paths-json": ("paths_json", "render"),
    "coverage": ("coverage_text", "render"), "coverage-json": ("coverage_json", "render"),
    "conditions": ("conditions_text", "render"),
    "diff": ("diff_text", "render"), "diff-json": ("diff_text", "render_json"),
    "html": ("html", "render"), "lcov": ("lcov", "render"), "xml": ("cobertura", "render"),
    "events": ("events_text", "render"), "subpaths": ("subpaths_text", "render"),
    "subpaths-html": ("subpaths_html", "render"), "plan": ("plan", "render"),
    "partition-plan": ("partition_plan", "render"),
}

#: export format -> default file name (coverage.py's and pytest-cov's)
EXPORTS = {"lcov": "coverage.lcov", "xml": "coverage.xml"}


def condition_totals(coverage: PathCoverage) -> ConditionTotals:
    """Condition coverage and MC/DC summed over a path coverage's measured decisions
    (:class:`~pathprof.analysis.conditioncoverage.ConditionTotals`)."""
    from pathprof.analysis.conditioncoverage import condition_totals as totals

    return totals(coverage)


def render(name: str, data: Any, out: Any, **options: Any) -> Any:
    """Show ``data`` on ``out`` with the report ``name`` (:data:`REPORTS`)."""
    return renderer(name)(data, out, **options)


def renderer(name: str) -> Callable[..., Any]:
    """The renderer of the report ``name`` (:data:`REPORTS`), imported now: a command
    that reports after running a program imports it before the run, which may leave
    the import system unusable."""
    import importlib

    module, function = REPORTS[name]
    return getattr(importlib.import_module(f"pathprof.report.{module}"), function)


def subpath_sources(document: dict[str, Any]) -> dict[str, list[str] | str]:
    """The lines of every source file a subpath document (``pathprof hot --json``)
    names, or why they cannot be read: what its HTML report shows (``sources=``)."""
    from pathprof.report.htmlfiles import source_lines

    return source_lines(sorted({block["file"] for subpath in document["subpaths"]
                                for block in subpath["blocks"]}))


def export(kind: str, measurement: Measurement, path: str | None,
           progress: Callable[[int, int], None] | None = None,
           rules: ExclusionRules | None = None,
           source_files: Sequence[str] = ()) -> LineCoverage:
    """Write ``measurement`` as ``kind`` (see :data:`EXPORTS`) to ``path`` (None: standard
    output), less what ``rules`` exclude (default: the configuration's), with every line
    of ``source_files`` no measured function comes from at 0% (as :func:`coverage`
    counts them); returns the line coverage written. An unwritable path raises
    :class:`PathprofError`. ``progress(done, total)`` is called after each file's
    coverage is found (most of the work; the writing follows)."""
    if source_files:
        measurement = _with_unmeasured(measurement, source_files)
    lines = line_coverage(measurement, progress, rules)
    if path is None:
        render(kind, lines, _any_name(sys.stdout))
        return lines
    try:
        with open(path, "w", encoding="utf-8", errors=NAMES_SHOWN) as output:
            render(kind, lines, output)
    except OSError as err:
        raise PathprofError(f"cannot write {path}: {err.strerror}") from err
    return lines


def _with_unmeasured(measurement: Measurement, source_files: Sequence[str]) -> Measurement:
    """``measurement`` with an empty profile of each function of ``source_files`` that no
    measured function comes from (unless none of them was measured at all: see
    :func:`coverage`)."""
    import dataclasses

    from pathprof.measure.unmeasured import unmeasured_profiles

    measured = {os.path.abspath(fn.file) for fn in measurement.functions}
    if measured and not measured & {os.path.abspath(f) for f in source_files}:
        return measurement
    unmeasured, _unparsed = unmeasured_profiles(source_files, measured)
    if not unmeasured:
        return measurement
    return dataclasses.replace(measurement, functions=[*measurement.functions, *unmeasured])


def check_sort(sort: str) -> str:
    """A coverage table's ``--sort`` column, checked (a :class:`PathprofError` if unknown)."""
    from pathprof.report.coverage_text import check_sort as check

    try:
        return check(sort)
    except ValueError as err:
        raise PathprofError(str(err)) from err


def hot_table(hottest: Sequence[Any], **options: Any) -> Any:
    """The table of the hottest subpaths, as a rich renderable (``hot``'s live view)."""
    from pathprof.report.subpaths_text import subpath_table

    return subpath_table(hottest, **options)


def read_cfg(path: str) -> tuple[Any, str | None]:
    """A CFG given as JSON (``pathprof plan``) and its description, if it has one."""
    import json

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


def main_compiler(selection: Selection, options: Any) -> Callable[[bytes, str], object]:
    """Compiles the main script, instrumented if ``selection`` wants it."""
    from pathprof.measure.program import main_compiler as compiler

    return compiler(selection, options)


def run_program(program: Program, start: Callable[[], object], stop: Callable[[], object],
                compile_main: Callable[[bytes, str], object], end: RunEnd | None = None
                ) -> int:
    """Run ``program`` between ``start()`` and ``stop()``; its exit status. With
    ``end`` (:func:`run_end`), signals are held from the program's end on."""
    from pathprof.measure.program import run_program as run

    return run(program, start, stop, compile_main, end)


def profiler(**settings: Any) -> Profiler:
    """A :class:`~pathprof.measure.profiler.Profiler` (what ``pathprof run`` and the
    pytest plugin measure with)."""
    from pathprof.measure.profiler import Profiler

    return Profiler(**settings)


def compose_rewriting(profiler: Profiler, *, tag: str, owns: Callable[[Any], bool],
                      rewrite: Callable[[Any, bytes, str], None],
                      loaded: Callable[[str, str], None],
                      fallback: Callable[[str, str], Any]) -> None:
    """Have ``profiler`` measure the modules another tool's loader imports by rewriting
    them (pytest's assertion rewriting: :mod:`pathprof.pytest.plugin`), composing its
    rewriting with pathprof's (:class:`pathprof.measure.importhook.Rewriter`)."""
    from pathprof.measure.importhook import Rewriter

    profiler.hook.rewriters.append(Rewriter(tag, owns, rewrite, loaded, fallback))


def measured_run(program: Program, **settings: Any) -> int:
    """``pathprof run``: run ``program`` measured by a profiler of ``settings``, its
    child processes too, save the data file; the program's exit status.

    A SIGINT or SIGTERM that comes once the program has ended waits for the save,
    then the process dies of it; a SIGTERM while the program runs saves the run so
    far, then the process dies of it (:class:`pathprof.measure.ending.RunEnd`)."""
    from pathprof import runtime
    from pathprof.measure.children import ChildMeasurement
    from pathprof.measure.ending import RunEnd
    from pathprof.measure.profiler import Profiler
    from pathprof.measure.program import main_compiler as compiler
    from pathprof.measure.program import run_program as run

    measuring = Profiler(default_dirs=program.default_dirs,
                         argv=[program.name, *program.args], **settings)
    compile_main = compiler(measuring.selection, measuring.options)
    children = ChildMeasurement(measuring.child_settings())
    end = RunEnd()

    def save_when_terminated() -> None:
        from pathprof.messages import warn

        children.stop()
        if not measuring.started:  # nothing measured: the data file stays as it was
            if measuring.copy is None:
                warn("terminated by SIGTERM before the program started: nothing was "
                     "measured or saved")
            return
        measuring.stop()
        saved = measuring.save_at_end()
        if measuring.copy is None:  # (a copy of a parallel run: the run says it)
            warn(f"terminated by SIGTERM: the run's data up to the signal was saved to "
                 f"{_shown_path(saved)}")

    end.on_sigterm(save_when_terminated)
    status = 1
    with runtime.own_work:
        children.start()
        try:
            status = run(program, measuring.start, measuring.stop, compile_main, end)
        finally:
            end.begin()  # (as the program ended, unless it raised before)
            children.stop()
            measuring.save_at_end()  # saved elsewhere, if it must be: it says where
    runtime.forget_decoded()  # (saved: the exit need not walk them)
    end.die()  # a SIGINT or SIGTERM that came once the program had ended
    end.end()
    return status


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


def parallel_run(run_args: Any, *, source: Sequence[str], include: Sequence[str],
                 omit: Sequence[str], default_dirs: Sequence[str], plan_from: str | None,
                 show: Callable[[ParallelResult, str], None] | None = None,
                 **settings: Any) -> ParallelResult:
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


def selection(source: Sequence[str], include: Sequence[str], omit: Sequence[str],
              default_dirs: Sequence[str]) -> Selection:
    """The :class:`~pathprof.python.selection.Selection` of the files to measure."""
    from pathprof.python.selection import Selection

    return Selection(source, include, omit, list(default_dirs))


def run_parallel_copies(run_args: Any, files: Sequence[str], **settings: Any
                        ) -> ParallelResult:
    """Run copies of a program and merge their profiles, nothing more
    (:func:`pathprof.parallel.run.run_parallel`; the pytest plugin's parallel session)."""
    from pathprof.parallel.run import run_parallel

    return run_parallel(run_args, files, **settings)


def selected_files(source: Sequence[str], include: Sequence[str], omit: Sequence[str],
                   default_dirs: Sequence[str]) -> list[str]:
    """The files a selection measures."""
    return [path for _name, path in selection(source, include, omit, default_dirs).files()]


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


def thread_events(frame: Any) -> int:
    """The events counted so far on the thread running ``frame`` (the pytest fixture's
    reading, which must not count its own call)."""
    from pathprof.runtime import events

    return events.read_thread(frame)


def output(path: str | None) -> contextlib.AbstractContextManager[TextIO]:
    """Standard output, or ``path`` opened for writing (reported if it cannot be)."""
    return _output(path)


#: How a report writes a file name that is not UTF-8 (Python holds the bytes of a POSIX
#: path it cannot decode as lone surrogates, and the data file keeps them as they
#: are): as ``\\udcXX`` escapes, as JSON reports write them and Python shows them,
#: where UTF-8 text cannot hold them.
NAMES_SHOWN = "backslashreplace"


def _any_name(stream: TextIO) -> TextIO:
    """``stream`` (a report command's standard output), made to show a file name that
    is not UTF-8 as :data:`NAMES_SHOWN` says, where it would refuse it (a UTF-8
    locale's strict output; the C locale's writes the name's bytes, as ``ls``)."""
    if getattr(stream, "errors", None) == "strict" and hasattr(stream, "reconfigure"):
        with contextlib.suppress(ValueError, OSError):
            stream.reconfigure(errors=NAMES_SHOWN)
    return stream


@contextlib.contextmanager
def _output(path: str | None) -> Iterator[TextIO]:
    if path is None:
        yield _any_name(sys.stdout)
        return
    try:
        file = open(path, "w", encoding="utf-8", errors=NAMES_SHOWN)  # noqa: SIM115
    except OSError as err:
        raise PathprofError(f"cannot write {path}: {err.strerror}") from err
    with file:
        yield file
