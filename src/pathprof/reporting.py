"""The reports of a measurement: :class:`Reporting` (one object per data file, the
configuration and the options, as coverage.py's ``Coverage`` is: it reads each once,
derives path coverage once and renders or exports every report kind from it), the
analyses it composes (:func:`coverage`, :func:`line_coverage`, :func:`diff`, kept in
the cache directory by source hash: :func:`kept_analyses`), and the reports by name
(:data:`REPORTS`, :func:`render`, :func:`export`).

The faces reach all of it through :mod:`pathprof.api`, which re-exports it. Every
import of pathprof's layers here is made when a function is called: the pytest plugin
loads :mod:`pathprof.api`, and with it this module, in every session.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, TextIO

from pathprof.exceptions import PathprofError
from pathprof.formats import EXPORTS as FORMAT_EXPORTS
from pathprof.formats import RENDERERS

if TYPE_CHECKING:  # (imported when called)
    from rich.console import Console

    from pathprof.analysis.conditioncoverage import ConditionTotals
    from pathprof.analysis.exclusions import ExclusionRules
    from pathprof.analysis.linecoverage import LineCoverage
    from pathprof.analysis.memo import AnalysisMemo
    from pathprof.analysis.pathcoverage import PathCoverage
    from pathprof.analysis.pathdiff import ProfileDiff
    from pathprof.config import Config
    from pathprof.data.measurement import Measurement
    from pathprof.data.profile import FunctionProfile
    from pathprof.python.selection import Selection
    from pathprof.subpaths import SubpathsDocument

    #: What a renderer writes on: a text stream, a rich console (the text renderers)
    #: or a directory (the HTML renderers).
    Output = TextIO | Console | str

__all__ = ["EXPORTS", "NAMES_SHOWN", "REPORTS", "Reporting", "any_name", "condition_totals",
           "coverage", "diff", "exclusion_rules", "export", "keep_analyses", "kept_analyses",
           "line_coverage", "load", "render", "render_pages", "renderer", "selected_files",
           "selection", "subpath_sources", "unmeasured_candidates"]


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

    def render(self, name: str, out: Output, **options: object) -> str | None:
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
    unmeasured: list[FunctionProfile] = []
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


def diff(old: Measurement, new: Measurement, *, threshold: float = 0.1, min_count: int = 1
         ) -> ProfileDiff:
    """How two measurements differ (:func:`pathprof.analysis.pathdiff.diff_profiles`)."""
    from pathprof.analysis.pathdiff import diff_profiles

    return diff_profiles(old, new, threshold=threshold, min_count=min_count)


#: report name -> the module of :mod:`pathprof.report` and its renderer function
#: (every one ``render(data, out, **options)``: see :mod:`pathprof.report`); the one
#: table is :data:`pathprof.formats.RENDERERS`
REPORTS = RENDERERS


#: export format -> default file name (coverage.py's and pytest-cov's), from
#: :data:`pathprof.formats.EXPORTS`
EXPORTS = {name: export.default_file for name, export in FORMAT_EXPORTS.items()}


def condition_totals(coverage: PathCoverage) -> ConditionTotals:
    """Condition coverage and MC/DC summed over a path coverage's measured decisions
    (:class:`~pathprof.analysis.conditioncoverage.ConditionTotals`)."""
    from pathprof.analysis.conditioncoverage import condition_totals as totals

    return totals(coverage)


def render(name: str, data: object, out: Output, **options: object) -> str | None:
    """Show ``data`` on ``out`` with the report ``name`` (:data:`REPORTS`)."""
    return renderer(name)(data, out, **options)


def render_pages(name: str, data: object, directory: str, **options: object) -> str:
    """Write the HTML report ``name`` (``html``, ``subpaths-html``) of ``data`` into
    ``directory``; the path of its index page."""
    index = render(name, data, directory, **options)
    if not isinstance(index, str):
        raise TypeError(f"the report {name} writes no pages")
    return index


def renderer(name: str) -> Callable[..., str | None]:
    """The renderer of the report ``name`` (:data:`REPORTS`), imported now: a command
    that reports after running a program imports it before the run, which may leave
    the import system unusable."""
    import importlib

    module, function = REPORTS[name]
    found: Callable[..., str | None] = getattr(importlib.import_module(
        f"pathprof.report.{module}"), function)
    return found


def subpath_sources(document: SubpathsDocument) -> dict[str, list[str] | str]:
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
        render(kind, lines, any_name(sys.stdout))
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


def selection(source: Sequence[str], include: Sequence[str], omit: Sequence[str],
              default_dirs: Sequence[str]) -> Selection:
    """The :class:`~pathprof.python.selection.Selection` of the files to measure."""
    from pathprof.python.selection import Selection

    return Selection(source, include, omit, list(default_dirs))


def selected_files(source: Sequence[str], include: Sequence[str], omit: Sequence[str],
                   default_dirs: Sequence[str]) -> list[str]:
    """The files a selection measures."""
    return [path for _name, path in selection(source, include, omit, default_dirs).files()]


#: How a report writes a file name that is not UTF-8 (Python holds the bytes of a POSIX
#: path it cannot decode as lone surrogates, and the data file keeps them as they
#: are): as ``\\udcXX`` escapes, as JSON reports write them and Python shows them,
#: where UTF-8 text cannot hold them.
NAMES_SHOWN = "backslashreplace"


def any_name(stream: TextIO) -> TextIO:
    """``stream`` (a report command's standard output), made to show a file name that
    is not UTF-8 as :data:`NAMES_SHOWN` says, where it would refuse it (a UTF-8
    locale's strict output; the C locale's writes the name's bytes, as ``ls``)."""
    if getattr(stream, "errors", None) == "strict" and hasattr(stream, "reconfigure"):
        with contextlib.suppress(ValueError, OSError):
            stream.reconfigure(errors=NAMES_SHOWN)
    return stream
