"""What the end of a measured test session shows (``pytest --pathprof``): path
coverage of the data file, the report files asked for, the check of basis path
coverage against ``--pathprof-fail-under`` (or ``fail_under`` in the configuration),
sources that matched nothing and what pathprof could not do, and the exit status
they make.
Shared by the plugin's session and by a parallel one (:mod:`pathprof.pytest.parallel`)."""

from __future__ import annotations

import argparse
import io
import os
from typing import TYPE_CHECKING, Any

from pathprof.formats import SESSION_REPORTS

if TYPE_CHECKING:
    from collections.abc import Callable

    from pathprof.analysis.pathcoverage import PathCoverage
    from pathprof.config import Config, Threshold

__all__ = ["REPORT_KINDS", "SESSION_REPORTS", "CoverageReports", "report_kind", "session_settings",
           "source_in_effect"]

#: Each ``--pathprof-report`` kind: the report of :data:`pathprof.api.REPORTS` it is, and
#: where it goes unless ``KIND:DESTINATION`` says (None: shown on the terminal). The one
#: table of report formats is :mod:`pathprof.formats`: a new kind is a row there.
REPORT_KINDS = tuple(SESSION_REPORTS)
_WRITTEN = [f"{kind}:{'DIR' if name == 'html' else 'FILE'}"
            for kind, (name, where) in SESSION_REPORTS.items() if where]
_DESTINATIONS = f"{', '.join(_WRITTEN[:-1])} and {_WRITTEN[-1]}"


def report_kind(text: str) -> str:
    """A ``--pathprof-report`` value, checked: a kind, ``term``/``term-missing``
    with ``:skip-covered``, a file kind with its destination, or "" (no report, as
    pytest-cov's ``--cov-report=``)."""
    if text == "":
        return text
    kind, colon, rest = text.partition(":")
    if kind not in REPORT_KINDS:
        raise argparse.ArgumentTypeError(
            f"{text!r}: choose from {', '.join(REPORT_KINDS)} ({_DESTINATIONS} name "
            "where to write; term:skip-covered and "
            "term-missing:skip-covered leave out what is fully covered; an empty value "
            "reports nothing)")
    if kind.startswith("term") and colon and rest != "skip-covered":
        raise argparse.ArgumentTypeError(f"{text!r}: term and term-missing take only "
                                         ":skip-covered")
    return text


class CoverageReports:
    """Path coverage of a data file, the report files asked for, and the check of
    basis path coverage against the threshold: what the end of a measured session
    shows, and the exit status it makes (:meth:`exit_status`)."""

    def __init__(self, data_file: str, reports: list[str], fail_under: Threshold | None,
                 source: str = "the default source", sources: list[str] | None = None,
                 config: Config | None = None) -> None:
        self.data_file = data_file
        #: the configuration the session read (None: read when reporting)
        self.config = config
        #: the reports of the data file (:class:`pathprof.api.Reporting`), once read
        #: (Any: None until :meth:`produce` reads the data file, and the methods that
        #: use it run after that, which a ``Reporting | None`` would not let them)
        self.reporting: Any = None
        #: the source in effect, as :func:`source_in_effect` describes it
        self.source = source
        #: the ``source`` entries, as given, that matched no module imported in the session
        self.unmatched: list[str] = []
        #: the sources measured: their files never imported count at 0%
        self.sources = sources or []
        self.reports = reports
        self.fail_under = fail_under
        #: the least total MC/DC, where conditions were measured (None: no check)
        self.fail_under_mcdc: Threshold | None = None
        #: the path coverage, once read (Any: as :attr:`reporting`)
        self.coverage: Any = None
        self.failed_under: str | None = None
        #: what pathprof could not do: read the data file, write a report asked for
        self.problems: list[str] = []
        self.written: list[str] = []

    def produce(self) -> None:
        """Read the data file, write the report files, check the threshold."""
        from pathprof.exceptions import PathprofError

        try:
            self.coverage = self._coverage()
        except PathprofError as err:
            self.problems.append(f"no path coverage of {os.path.relpath(self.data_file)}: "
                                 f"{err}")
            return
        for report in self.reports:
            self._write(report)
        self.failed_under = self._below_threshold()

    def release(self) -> None:
        """Let go of the path coverage once everything is shown: its trees, numberings
        and analyses are freed now, not traversed by the garbage collector as the
        interpreter exits (on h11 that took 0.13 s, for 66,000 objects more than
        plain pytest's)."""
        if self.coverage is not None:
            self._nothing_measured = not self.coverage.files
            self.coverage = None
        if self.reporting is not None:
            self.reporting.release()

    @property
    def nothing_measured(self) -> bool:
        """The data file was read and holds no function measured in path mode."""
        if self.coverage is None:
            return getattr(self, "_nothing_measured", False)
        return not self.coverage.files

    def _below_threshold(self) -> str | None:
        """What fails the threshold, if one is set and something does: coverage below
        it, or nothing measured (whose 0 of 0 paths would otherwise pass any
        threshold; pytest-cov fails it too)."""
        if self.fail_under_mcdc is not None:
            from pathprof import api

            totals = api.condition_totals(self.coverage)
            if not totals.conditions:
                return ("no condition was measured: no total MC/DC to meet "
                        f"{self.fail_under_mcdc.setting} (measure with --pathprof-conditions)")
            if totals.mcdc_percent < self.fail_under_mcdc.percent:
                return (f"total MC/DC {totals.mcdc_percent:.2f}% is below "
                        f"{self.fail_under_mcdc.setting}")
        if self.fail_under is None:
            return None
        if self.nothing_measured:
            return ("nothing was measured: no total basis path coverage to meet "
                    f"{self.fail_under.setting}")
        percent = self.coverage.basis.percent
        if percent >= self.fail_under.percent:
            return None
        return f"total basis path coverage {percent:.2f}% is below {self.fail_under.setting}"

    def exit_status(self, status: int) -> int:
        """The session's exit status, given pytest's (docs/exit-status.md): a session
        whose tests passed fails with 3 (pytest's INTERNAL_ERROR) when pathprof could
        not do what was asked (read the data file, write a report), else with 1
        (TESTS_FAILED, as pytest-cov's threshold) when the threshold failed (coverage
        below it, or nothing measured); any other status is kept (failed tests are
        told first). Nothing measured without a threshold keeps the status: the
        summary says it."""
        import pytest

        if status != pytest.ExitCode.OK:
            return status
        if self.problems:
            return pytest.ExitCode.INTERNAL_ERROR
        if self.failed_under:
            return pytest.ExitCode.TESTS_FAILED
        return status

    def _write(self, report: str) -> None:
        """Write one report file (``term`` reports are shown, not written); a report
        that cannot be written is a problem that names it and says why."""
        from pathprof import api
        from pathprof.exceptions import PathprofError

        kind, _colon, destination = report.partition(":")
        name, default = SESSION_REPORTS[kind]
        if default is None:
            return
        destination = destination or default
        try:
            if name in api.EXPORTS:
                self._write_export(name, destination)
            elif name == "html":
                self._write_html(destination)
            else:
                self._write_file(name, destination)
        except (OSError, PathprofError) as err:
            self.problems.append(f"the {kind} report was not written to {destination}: "
                                 f"{_reason(err)}")

    def _coverage(self) -> PathCoverage:
        """Path coverage of the data file, less the configuration's exclusions, with the
        files of the sources never imported at 0%."""
        from pathprof import api

        self.reporting = api.Reporting(self.data_file, config=self.config,
                                       source=self.sources, unmeasured=bool(self.sources))
        return self.reporting.coverage()

    def _write_file(self, name: str, path: str) -> None:
        with open(path, "w", encoding="utf-8") as f:
            self.reporting.render(name, f)
        self.written.append(path)

    def _write_export(self, kind: str, path: str) -> None:
        self.reporting.export(kind, path)
        self.written.append(path)

    def _write_html(self, directory: str) -> None:
        # the coverage the terminal report and the threshold use: the same exclusions
        index = self.reporting.render("html", directory)
        self.written.append(index)

    def has_output(self) -> bool:
        """Whether :meth:`show` shows anything (``--pathprof-report=`` with nothing to
        say shows nothing, not even the section's header)."""
        terms = self.coverage is not None and any(r.startswith("term") for r in self.reports)
        return bool(self.problems or self.unmatched or self.nothing_measured or terms
                    or self.written or self.failed_under)

    # write_line(line, red=True, ...): a terminal's (its first parameter's name varies)
    def show(self, write_line: Callable[..., object], write: Callable[[str], object],
             width: int | None, markup: bool) -> None:
        """The terminal part: problems, sources that matched nothing, the table
        (``term``/``term-missing``) or that nothing was measured, the files written,
        a failed threshold. ``width`` is the terminal's; None for a log (not a
        terminal, no ``COLUMNS``), which its reader's window wraps: the table is
        then laid out in :data:`~pathprof.report.console.WIDE` columns, so names come
        out whole, and the lines of text under it (the headline, the notes, the
        missed paths) are not wrapped at all, so none breaks mid-sentence at an
        arbitrary column."""
        for problem in self.problems:
            write_line(f"pathprof: {problem}", red=True)
        for entry in self.unmatched:
            write_line(f"pathprof: source {entry!r} matched no module or file imported "
                       "during the session: nothing of it was measured", yellow=True)
        if self.nothing_measured:
            write_line(f"pathprof: No functions were measured; source: {self.source}.",
                       yellow=True, bold=True)
            write_line("pathprof: the session imported no function of it: name the code "
                       "the tests import with --pathprof=DIR|PACKAGE or source in "
                       "[tool.pathprof] (the standard library and site-packages are "
                       "measured only when named)")
        if self.coverage is not None:
            terms = [r.partition(":") for r in self.reports if r.startswith("term")]
            if terms and not self.nothing_measured:
                missing = any(kind == "term-missing" for kind, _c, _o in terms)
                skip_covered = any(option == "skip-covered" for _k, _c, option in terms)
                write(self._render_term(missing, skip_covered, width, markup))
            for path in self.written:
                write_line(f"pathprof: wrote {path}")
        if self.failed_under:
            write_line(f"FAIL: {self.failed_under}", red=True, bold=True)

    def _render_term(self, show_missing: bool, skip_covered: bool, width: int | None,
                     markup: bool) -> str:
        """``term``: a row per file; ``term-missing``: a row per function, and the
        paths each one missed (``width``: :meth:`show`'s)."""
        from rich.console import Console

        from pathprof import api
        from pathprof.report.console import WIDE

        buffer = io.StringIO()
        console = Console(file=buffer, width=width or WIDE, soft_wrap=width is None,
                          force_terminal=markup, color_system="standard" if markup else None)
        api.render("coverage", self.coverage, console, show_missing=show_missing,
                        skip_covered=skip_covered, per_file=not show_missing)
        if any(fn.decisions for fn in self.coverage.functions()):  # (--pathprof-conditions)
            console.print()
            api.render("conditions", self.coverage, console, show_missing=show_missing,
                       skip_covered=skip_covered, per_file=not show_missing)
        return buffer.getvalue()


def _reason(err: Exception) -> str:
    """Why a file could not be written, in a few words (the operating system's)."""
    cause = err if isinstance(err, OSError) else err.__cause__
    if isinstance(cause, OSError) and cause.strerror:
        return cause.strerror
    return str(err)


def source_in_effect(options: argparse.Namespace, config: Config) -> str:
    """The source a session measures, and where it was set, in words: what the
    summary names when nothing was measured."""
    given = [s for s in options.pathprof_source or () if s is not True]
    if given:
        return f"{', '.join(given)} (--pathprof)"
    if config.source:
        where = os.path.relpath(config.path) if config.path else "the configuration"
        return f"{', '.join(config.source)} (source in {where})"
    return f"the current directory, {os.getcwd()} (the default)"


def session_settings(options: argparse.Namespace) -> tuple[Config, list[str], str, list[str],
                                                    Threshold | None]:
    """The configuration, sources, data file, reports and threshold of a session."""
    from pathprof.config import Threshold, read_config

    config = read_config()
    sources = [s for s in options.pathprof_source if s is not True] or config.source
    data_file = os.path.abspath(options.pathprof_data_file or config.data_file or ".pathprof")
    reports: list[str] = options.pathprof_report or config.report or ["term"]
    for report in reports:
        report_kind(report)
    reports = [report for report in reports if report]  # "": no report
    fail_under = Threshold.choose("--pathprof-fail-under", options.pathprof_fail_under,
                                  config)
    return config, sources, data_file, reports, fail_under
