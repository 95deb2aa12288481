"""The commands that show a measurement or a CFG: ``report``, ``coverage``,
``html``, ``lcov``, ``xml``, ``diff`` and ``plan``. Each reads through
:mod:`pathprof.api` and renders by report name."""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

from pathprof import api
from pathprof.cli.options import (
    CHECK_FAILED,
    OK,
    data_file_option,
    fail_under_status,
    file_name,
    positive,
    report_filter_options,
    whole_number,
)
from pathprof.cli.progress import progress
from pathprof.exceptions import PathprofError
from pathprof.formats import EXPORTS, HTML_DIRECTORY
from pathprof.messages import warn

if TYPE_CHECKING:
    from typing import TypeAlias

    from pathprof.analysis.pathcoverage import PathCoverage
    from pathprof.data.measurement import Measurement
    from pathprof.reporting import Reporting

    #: the subcommands' parsers, each command's added to them
    _Commands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"

__all__ = ["add_coverage", "add_diff", "add_export", "add_html", "add_plan", "add_report"]


def _load_reported(args: argparse.Namespace) -> Measurement:
    """The data file, with only the functions of the files --include and --omit let
    through."""
    return api.load(args.data_file, args.report_include, args.report_omit)


def add_plan(commands: _Commands) -> None:
    """``pathprof plan CFG.json``."""
    plan = commands.add_parser(
        "plan",
        help="show the path numbering and probe plan of a CFG given as JSON",
        description="Number the acyclic paths of a control-flow graph (Ball-Larus §3.1), "
        "place probes on the chords of a maximum spanning tree (§3.2-3.3), and compare "
        "with the naive plan.",
    )
    plan.add_argument("cfg_file", metavar="CFG.json")
    plan.add_argument("--parallel", type=positive, default=None, metavar="K",
                      help="show instead how P3 splits the paths among K copies: tasks, "
                      "their probe costs, and what each copy instruments")
    plan.set_defaults(handler=command_plan)


def command_plan(args: argparse.Namespace) -> int:
    cfg, description = api.read_cfg(args.cfg_file)
    if description:
        from rich.text import Text

        from pathprof.report.console import report_console

        report_console().print(Text(description, style="bold"))  # (the file's: not markup)
    if args.parallel is not None:
        api.render("partition-plan", cfg, sys.stdout, copies=args.parallel)
        return OK
    api.render("plan", cfg, sys.stdout)
    return OK


def add_report(commands: _Commands) -> None:
    """``pathprof report``: the measured paths, as text or JSON."""
    report = commands.add_parser(
        "report",
        help="show the hottest paths of each function",
        description="Report the measured paths: per function, the paths run out of the "
        "paths possible and the hottest paths shown on the source.",
    )
    data_file_option(report)
    report_filter_options(report)
    report.add_argument("--format", choices=("text", "json"), default="text")
    report.add_argument("--top", type=whole_number, default=5, metavar="N",
                        help="paths shown per function (text; default 5; json: all)")
    report.add_argument("--functions", type=whole_number, default=None, metavar="N",
                        help="show only the N functions that executed most paths (0: all)")
    report.add_argument("--show-unrun", action="store_true",
                        help="list measured functions that never ran")
    report.add_argument("-o", "--output", metavar="FILE", type=file_name, help="write to FILE")
    report.set_defaults(handler=command_report)


def command_report(args: argparse.Namespace) -> int:
    measurement = _load_reported(args)
    with api.output(args.output) as output:
        if args.format == "json":
            api.render("paths-json", measurement, output)
        else:
            api.render("paths", measurement, output, top=args.top, functions=args.functions,
                       show_unrun=args.show_unrun)
    return OK


def add_coverage(commands: _Commands) -> None:
    """``pathprof coverage``: path and basis path coverage."""
    coverage = commands.add_parser(
        "coverage",
        help="path coverage: paths run out of paths possible, per function",
        description="Path coverage of the measured code: per function, file and in "
        "total, the acyclic paths that ran out of those the control-flow graph allows "
        "(some of which may be infeasible), with the missed paths listed on request.",
    )
    data_file_option(coverage)
    report_filter_options(coverage)
    coverage.add_argument("--sort", default=None, metavar="COLUMN",
                          help="order the rows by name, paths, run, missed, cover or basis "
                          "(lowest first; -COLUMN for highest first); default: by file")
    coverage.add_argument("-m", "--show-missing", action="store_true",
                          help="list each function's missed paths, shortest first")
    coverage.add_argument("--missed", type=whole_number, default=None, metavar="N",
                          help="missed paths listed per function (default 5; json 10)")
    coverage.add_argument("--missed-functions", type=whole_number, default=None,
                          metavar="N",
                          help="with -m, list the missed paths of the N functions with the "
                          "most missing (default 20; 0: all of those a test can add to)")
    coverage.add_argument("--skip-covered", action="store_true",
                          help="leave out functions whose every path ran")
    coverage.add_argument("--fail-under", type=float, default=None, metavar="PERCENT",
                          help="exit with status 3 if the total basis path coverage "
                          "is below PERCENT")
    coverage.add_argument("--conditions", action="store_true",
                          help="condition coverage and MC/DC of the decisions measured with "
                          "run --conditions (pytest --pathprof-conditions) instead of path "
                          "coverage; with -m, each condition's pair of runs or the test "
                          "still to write")
    coverage.add_argument("--fail-under-mcdc", type=float, default=None, metavar="PERCENT",
                          help="exit with status 3 if the total MC/DC (masking) is below "
                          "PERCENT")
    coverage.add_argument("--format", choices=("text", "json"), default="text")
    coverage.add_argument("-o", "--output", metavar="FILE", type=file_name,
                          help="write to FILE")
    coverage_scope_options(coverage)
    coverage.set_defaults(handler=command_coverage)


def coverage_scope_options(parser: argparse.ArgumentParser) -> None:
    """--source and --no-exclude of the commands that report path coverage."""
    parser.add_argument("--source", action="append", default=[], metavar="DIR|PACKAGE",
                        help="count the files of this directory or package that were "
                        "never imported, at 0%% (repeatable; default: tool.pathprof.source)")
    parser.add_argument("--no-exclude", action="store_true",
                        help="count what the configuration excludes (# pragma: no cover, "
                        "exclude_lines, exclude_also, @overload stubs, if TYPE_CHECKING "
                        "blocks, abstract stubs) as any other code")


def reporting_of(args: argparse.Namespace) -> Reporting:
    """The reports of the data file as a reporting command's options and the
    configuration ask (:class:`pathprof.api.Reporting`): the files --include and --omit
    let through, exclusions (unless --no-exclude), never-imported files of the source."""
    return api.Reporting(args.data_file, exclude=not args.no_exclude,
                         source=getattr(args, "source", None) or (),
                         include=args.report_include, omit=args.report_omit)


def coverage_of(args: argparse.Namespace) -> PathCoverage:
    """Path coverage as a reporting command's options and the configuration ask."""
    return reporting_of(args).coverage()


def command_coverage(args: argparse.Namespace) -> int:
    if args.sort is not None:
        api.check_sort(args.sort)
    found = coverage_of(args)
    with api.output(args.output) as output:
        if args.format == "json":
            api.render("coverage-json", found, output,
                       missed_per_function=10 if args.missed is None else args.missed)
        elif args.conditions:
            api.render("conditions", found, output, show_missing=args.show_missing,
                       skip_covered=args.skip_covered)
        else:
            api.render("coverage", found, output, show_missing=args.show_missing,
                       missed_per_function=5 if args.missed is None else args.missed,
                       skip_covered=args.skip_covered, sort=args.sort,
                       **({} if args.missed_functions is None
                          else {"missing_functions": args.missed_functions}))
    status = fail_under_status(found.basis.percent, args.fail_under, measured=bool(found.files))
    if args.fail_under_mcdc is not None:
        totals = api.condition_totals(found)
        status = max(status, fail_under_status(totals.mcdc_percent, args.fail_under_mcdc,
                                               measured=bool(totals.conditions),
                                               what="total MC/DC"))
    return status


def add_html(commands: _Commands) -> None:
    """``pathprof html``: the report as web pages."""
    html = commands.add_parser(
        "html",
        help="write the HTML report: an index and a page per function",
        description="Write an HTML report of path coverage, with the figures of "
        "pathprof coverage: an index that names where to test next and has a row per "
        "file, opening onto its functions, sortable by each column; and a page per "
        "function with the next tests to write, its paths highlighted on the source "
        "and a picture of its CFG.",
    )
    data_file_option(html)
    report_filter_options(html)
    html.add_argument("-d", "--directory", default=HTML_DIRECTORY, metavar="DIR",
                      help=f"where to write the report (default {HTML_DIRECTORY})")
    html.add_argument("--title", default="pathprof report", help="the report's title")
    coverage_scope_options(html)
    html.set_defaults(handler=command_html)


def command_html(args: argparse.Namespace) -> int:
    found = coverage_of(args)
    with progress("writing function pages") as advance:
        try:
            index = api.render_pages("html", found, args.directory, title=args.title,
                               progress=advance)
        except OSError as err:
            raise PathprofError(f"cannot write the report to {args.directory}: "
                                f"{err.strerror}") from err
    print(f"wrote {os.path.relpath(index)}")
    return OK


def add_export(commands: _Commands) -> None:
    """``pathprof lcov`` and ``pathprof xml``: the coverage formats other tools read."""
    for name, (default, what, _known_as) in EXPORTS.items():
        export = commands.add_parser(
            name,
            help=f"write {what}: line, branch, function and path coverage",
            description=f"Write {what} for CI services, editors and coverage tools: the "
            "line hits, branch counts and function calls the path profile implies, and "
            "each function's path coverage (see docs/commands/exports.md).",
        )
        data_file_option(export)
        report_filter_options(export)
        export.add_argument("-o", "--output", default=default, metavar="FILE", type=file_name,
                            help=f"where to write (default {default}; - for standard output)")
        export.add_argument("--fail-under", type=float, default=None, metavar="PERCENT",
                            help="exit with status 3 if total basis path coverage is "
                            "below PERCENT")
        export.add_argument("--no-exclude", action="store_true",
                            help="count what the configuration excludes as any other code")
        export.set_defaults(handler=command_export)


def command_export(args: argparse.Namespace) -> int:
    shown = args.command if args.output == "-" else args.output
    with progress(f"writing {shown}") as advance:
        coverage = reporting_of(args).export(args.command,
                                             None if args.output == "-" else args.output,
                                             progress=advance)
    if args.output != "-":
        print(f"wrote {args.output}: {coverage.summary()}")
    for file, versions in coverage.older_versions:
        print(f"pathprof: {os.path.relpath(file)} was measured in {versions + 1} versions "
              "of its source; only one is exported", file=sys.stderr)
    return fail_under_status(coverage.basis_rate.percent, args.fail_under,
                             measured=bool(coverage.files))


def add_diff(commands: _Commands) -> None:
    """``pathprof diff OLD NEW``: paths that appeared, vanished or changed."""
    diff = commands.add_parser(
        "diff",
        help="paths that appeared, vanished or changed between two data files",
        description="Compare two data files: paths that ran in NEW and not in OLD, "
        "paths that stopped running, and paths whose count changed by more than the "
        "threshold. Exit status 3 with --fail-on-change when anything differs.",
    )
    diff.add_argument("old", metavar="OLD")
    diff.add_argument("new", metavar="NEW")
    diff.add_argument("--threshold", type=float, default=0.1, metavar="FRACTION",
                      help="report a common path whose count moved by more than this "
                      "fraction of its old count (default 0.1)")
    diff.add_argument("--min-count", type=whole_number, default=1, metavar="N",
                      help="ignore paths that ran fewer than N times in both (default 1)")
    diff.add_argument("--fail-on-change", action="store_true",
                      help="exit with status 3 if any path appeared, vanished or changed")
    diff.add_argument("--format", choices=("text", "json"), default="text")
    diff.add_argument("-o", "--output", metavar="FILE", type=file_name, help="write to FILE")
    diff.set_defaults(handler=command_diff)


def command_diff(args: argparse.Namespace) -> int:
    if args.threshold < 0:
        raise PathprofError("--threshold must not be negative")
    old, new = api.load(args.old), api.load(args.new)
    stopped = sum(1 for m in (old, new) for fn in m.functions if fn.stopped)
    if stopped:
        warn(f"{stopped} function profile(s) here stopped counting (--stop-counting basis, "
             "pytest --pathprof's default): their counts and paths are lower bounds, so "
             "changes in them may be where counting stopped, not what ran; compare runs "
             "made with --pathprof-stop-counting=never (or run --stop-counting never)")
    found = api.diff(old, new, threshold=args.threshold, min_count=args.min_count)
    with api.output(args.output) as output:
        api.render("diff-json" if args.format == "json" else "diff", found, output)
    return CHECK_FAILED if args.fail_on_change and found.differs else OK
