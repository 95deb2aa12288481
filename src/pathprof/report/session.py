"""What the end of a measured test session shows (``pytest --pathprof``): path
coverage of the data file, the report files asked for, the check of basis path
coverage against ``--pathprof-fail-under`` (or ``fail_under`` in the configuration).
Shared by the plugin's session and by a parallel one (:mod:`pathprof.pytest_parallel`)."""

from __future__ import annotations

import argparse
import io
import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathprof.config import Threshold

__all__ = ["REPORT_KINDS", "CoverageReports", "report_kind", "session_settings"]

REPORT_KINDS = ("term", "term-missing", "html", "json", "lcov", "xml")


def report_kind(text: str) -> str:
    """A ``--pathprof-report`` value, checked: a kind, ``term``/``term-missing``
    with ``:skip-covered``, a file kind with its destination, or "" (no report, as
    pytest-cov's ``--cov-report=``)."""
    if text == "":
        return text
    kind, colon, rest = text.partition(":")
    if kind not in REPORT_KINDS:
        raise argparse.ArgumentTypeError(
            f"{text!r}: choose from {', '.join(REPORT_KINDS)} (html:DIR, json:FILE, "
            "lcov:FILE and xml:FILE name where to write; term:skip-covered and "
            "term-missing:skip-covered leave out what is fully covered; an empty value "
            "reports nothing)")
    if kind.startswith("term") and colon and rest != "skip-covered":
        raise argparse.ArgumentTypeError(f"{text!r}: term and term-missing take only "
                                         ":skip-covered")
    return text



class CoverageReports:
    """Path coverage of a data file, the report files asked for, and the check of
    basis path coverage against the threshold: what the end of a measured session
    shows."""

    def __init__(self, data_file: str, reports: list[str], fail_under: Threshold | None
                 ) -> None:
        self.data_file = data_file
        self.reports = reports
        self.fail_under = fail_under
        self.coverage: Any = None
        self.failed_under: str | None = None
        self.problems: list[str] = []
        self.written: list[str] = []

    def produce(self) -> None:
        """Read the data file, write the report files, check the threshold."""
        from pathprof import api
        from pathprof.exceptions import PathprofError

        try:
            self.coverage = api.coverage(api.load(self.data_file))
            for report in self.reports:
                if report.startswith("json"):
                    self._write_json(report.partition(":")[2] or "pathprof.json")
                elif report.startswith("html"):
                    self._write_html(report.partition(":")[2] or "htmlpathprof")
                elif report.startswith(("lcov", "xml")):
                    self._write_export(report)
        except PathprofError as err:
            self.problems.append(str(err))
            return
        except OSError as err:
            self.problems.append(f"cannot write a report: {err}")
        if (self.coverage is not None and self.fail_under is not None
                and self.coverage.basis.percent < self.fail_under.percent):
            self.failed_under = (f"total basis path coverage "
                                 f"{self.coverage.basis.percent:.2f}% is below "
                                 f"{self.fail_under.setting}")

    def _write_json(self, path: str) -> None:
        from pathprof import api

        with open(path, "w", encoding="utf-8") as f:
            api.render("coverage-json", self.coverage, f)
        self.written.append(path)

    def _write_export(self, report: str) -> None:
        from pathprof import api

        kind, _colon, path = report.partition(":")
        path = path or api.EXPORTS[kind]
        api.export(kind, api.load(self.data_file), path)
        self.written.append(path)

    def _write_html(self, directory: str) -> None:
        from pathprof import api

        # the coverage the terminal report and the threshold use: the same exclusions
        index = api.render("html", self.coverage, directory)
        self.written.append(index)

    def show(self, write_line: Any, write: Any, width: int, markup: bool) -> None:
        """The terminal part: problems, the table (``term``/``term-missing``), the
        files written, a failed threshold."""
        for problem in self.problems:
            write_line(f"pathprof: {problem}", red=True)
        if self.coverage is not None:
            terms = [r.partition(":") for r in self.reports if r.startswith("term")]
            if terms:
                missing = any(kind == "term-missing" for kind, _c, _o in terms)
                skip_covered = any(option == "skip-covered" for _k, _c, option in terms)
                write(self._render_term(missing, skip_covered, width, markup))
            for path in self.written:
                write_line(f"pathprof: wrote {path}")
        if self.failed_under:
            write_line(f"FAIL: {self.failed_under}", red=True, bold=True)

    def _render_term(self, show_missing: bool, skip_covered: bool, width: int,
                     markup: bool) -> str:
        """``term``: a row per file; ``term-missing``: a row per function, and the
        paths each one missed."""
        from rich.console import Console

        from pathprof import api

        buffer = io.StringIO()
        console = Console(file=buffer, width=width, force_terminal=markup,
                          color_system="standard" if markup else None)
        api.render("coverage", self.coverage, console, show_missing=show_missing,
                        skip_covered=skip_covered, per_file=not show_missing)
        return buffer.getvalue()


def session_settings(options: argparse.Namespace) -> tuple[Any, list[str], str, list[str],
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
