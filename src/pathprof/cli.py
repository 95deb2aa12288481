"""The ``pathprof`` command line: parses arguments and calls the library.

Exit codes: 0 success, 1 a pathprof error (message printed, no traceback),
2 bad usage.
"""

from __future__ import annotations

import argparse
import atexit
import builtins
import contextlib
import errno
import json
import os
import sys
import traceback
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TextIO

from pathprof.exceptions import PathprofError
from pathprof.messages import warn
from pathprof.version import __version__

if TYPE_CHECKING:
    from pathprof.config import Threshold

OK, ERR, USAGE = 0, 1, 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pathprof",
        description="Exact acyclic path profiles (Ball-Larus) for Python programs.",
    )
    parser.add_argument("--version", action="version", version=f"pathprof {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    plan = commands.add_parser(
        "plan",
        help="show the path numbering and probe plan of a CFG given as JSON",
        description="Number the acyclic paths of a control-flow graph (Ball-Larus §3.1), "
        "place probes on the chords of a maximum spanning tree (§3.2-3.3), and compare "
        "with the naive plan.",
    )
    plan.add_argument("cfg_file", metavar="CFG.json")
    plan.add_argument("--parallel", type=_positive, default=None, metavar="K",
                      help="show instead how P3 splits the paths among K copies: tasks, "
                      "their probe costs, and what each copy instruments")

    run = commands.add_parser(
        "run",
        help="run a Python program and measure its path profile",
        description="Run a program (a script, -m module, or a console script such as "
        "pytest) with the selected code instrumented, and save its exact acyclic path "
        "profile to the data file.",
    )
    _data_file_option(run)
    _selection_options(run, "measure")
    run.add_argument("--mode", choices=("path", "edge"), default=None,
                     help="path: Ball-Larus path profile (default); edge: edge and branch "
                     "counts, the baseline")
    run.add_argument("--metric", choices=("time",), default=None,
                     help="also measure wall time spent on each path (inclusive of calls)")
    run.add_argument("--stop-counting", choices=("never", "basis", "paths"), default=None,
                     help="for path coverage: send a function back to its original code, "
                     "which costs nothing, once the paths that ran span its basis (basis) or "
                     "are all of its paths (paths); its counts are then lower bounds. "
                     "Default: never")
    run.add_argument("-a", "--append", action="store_true",
                     help="add to the data file instead of replacing it")
    run.add_argument("--parallel", type=_positive, default=None, metavar="K",
                     help="run K copies of the program on the same input, each profiling "
                     "part of its functions, and merge their profiles (P3; see "
                     "docs/commands/run.md)")
    run.add_argument("--executor", choices=("local", "dask"), default="local",
                     help="with --parallel: run the copies as processes here (default) or "
                     "as tasks on a Dask cluster (--scheduler)")
    run.add_argument("--scheduler", default=None, metavar="ADDRESS",
                     help="with --executor dask: the Dask scheduler, e.g. tcp://host:8786")
    run.add_argument("--verify", action="store_true",
                     help="with --parallel: also run the sequential profile and compare")
    run.add_argument("--plan-from", default=None, metavar="DATA_FILE",
                     help="with --parallel: plan from an earlier run's profile (task costs "
                     "are the probes their paths ran; the heaviest functions are split)")
    _program_arguments(run)

    count = commands.add_parser(
        "count",
        help="run a Python program and count the statements (or instructions) it runs",
        description="Run a program with the selected code instrumented to count events "
        "exactly (Ball 1994: increments on the chords of a spanning tree), and print the "
        "total and each function's self and inclusive counts. Counts are deterministic: "
        "the same run gives the same numbers on any machine load.",
    )
    _selection_options(count, "count")
    count.add_argument("--kind", choices=("statements", "instructions"), default="statements",
                       help="what an event is: a statement (default) or a bytecode "
                       "instruction of the running Python")
    count.add_argument("--placement", choices=("tree", "blocks", "statements"), default="tree",
                       help="where the adds go: on the chords of a spanning tree (default); "
                       "the baselines for comparison: one per block run (blocks) or one "
                       "per statement (statements, the naive instrumentation)")
    count.add_argument("--total-only", action="store_true",
                       help="count the program's total only, with no per-function counts: "
                       "about half the cost per call (what budgets and events.read() use)")
    count.add_argument("--sort", choices=("inclusive", "self", "name"), default="inclusive",
                       help="order of the table (default: inclusive)")
    count.add_argument("--top", type=_count, default=20, metavar="N",
                       help="show the N functions with the most events (default 20; 0: all)")
    count.add_argument("--json", dest="json_file", metavar="FILE",
                       help="also write the counts as JSON to FILE ('-': standard output, "
                       "instead of the table)")
    _program_arguments(count)

    hot = commands.add_parser(
        "hot",
        help="run a Python program and show its hottest subpaths, estimated online",
        description="Run a program with the selected code instrumented for online subpath "
        "sampling (OSP, Oren 2002): subpaths start anywhere and cross calls; a sample of "
        "them, held to a memory budget, gives estimated counts with Chernoff error bounds, "
        "shown live while the program runs and at its end.",
    )
    _selection_options(hot, "sample")
    hot.add_argument("--period", type=float, default=10_000.0, metavar="N",
                     help="start one sample per N blocks at first (default 10000; it grows "
                     "as the sample fills its budget)")
    hot.add_argument("--memory", type=_positive, default=2000, metavar="SUBPATHS",
                     help="at most this many distinct subpaths in the sample (default 2000)")
    hot.add_argument("--longest", type=_positive, default=5, metavar="N",
                     help="sample lengths 2, 4, ... 2^N blocks (default 5: up to 32)")
    hot.add_argument("--lengths", choices=("geometric", "uniform"), default="geometric",
                     help="length 2^n with probability 2^-n (default), or all alike")
    hot.add_argument("--encoding", choices=("exact", "rotation"), default="exact",
                     help="count block sequences as they are (default), or a loop entered "
                     "at another block as the same subpath (rotation)")
    hot.add_argument("--rank", choices=("count", "length", "cost"), default="count",
                     help="order by estimated count (default), count x length, or (with "
                     "--costs) count x mean block cost")
    hot.add_argument("--costs", choices=("statements",), default=None,
                     help="weigh blocks by the statements and tests they run (1 to 8): "
                     "costly subpaths are sampled more (Oren 5.1.2)")
    hot.add_argument("--top", type=_positive, default=10, metavar="K",
                     help="show the K hottest (default 10)")
    hot.add_argument("--threshold", type=float, default=None, metavar="COUNT",
                     help="show only subpaths estimated to have run at least COUNT times "
                     "(at most --top of them)")
    hot.add_argument("--confidence", type=float, default=0.95, metavar="C",
                     help="confidence of the error bounds (default 0.95)")
    hot.add_argument("--one-sided", action="store_true",
                     help="a one-sided bound: how far below the estimate the count may be")
    hot.add_argument("--seed", type=int, default=None, help="seed of the sampler's choices")
    hot.add_argument("--exact", action="store_true",
                     help="also count every subpath exactly (slow: to evaluate the estimates)")
    hot.add_argument("--checkpoint-every", type=_positive, default=0, metavar="BLOCKS",
                     help="with --exact: every BLOCKS blocks, note the exact top 5's ranks "
                     "among the estimates (in the JSON: moments)")
    hot.add_argument("--live", dest="live", action="store_true", default=None,
                     help="show the hottest subpaths while the program runs (default: when "
                     "standard error is a terminal)")
    hot.add_argument("--no-live", dest="live", action="store_false")
    hot.add_argument("--json", dest="json_file", metavar="FILE",
                     help="also write the estimates as JSON to FILE ('-': standard output, "
                     "instead of the table)")
    hot.add_argument("--html", dest="html_dir", metavar="DIR",
                     help="also write an HTML report into DIR: an index of the subpaths and a "
                     "page per subpath with the lines it runs, across functions and files")
    _program_arguments(hot)

    instrument = commands.add_parser(
        "instrument",
        help="instrument the selected source ahead of a run (fills the cache)",
        description="Instrument every selected source file now and write the result to "
        "the cache in __pycache__, so the next run starts warm; lists files pathprof "
        "could not instrument. Selects files as `run` does (default: the current "
        "directory).",
    )
    instrument.add_argument("--source", action="append", default=[], metavar="DIR|MODULE")
    instrument.add_argument("--include", action="append", default=[], metavar="PATTERN")
    instrument.add_argument("--omit", action="append", default=[], metavar="PATTERN")
    instrument.add_argument("--mode", choices=("path", "edge"), default=None)
    instrument.add_argument("--metric", choices=("time",), default=None)

    report = commands.add_parser(
        "report",
        help="show the hottest paths of each function",
        description="Report the measured paths: per function, the paths run out of the "
        "paths possible and the hottest paths shown on the source.",
    )
    _data_file_option(report)
    _report_filter_options(report)
    report.add_argument("--format", choices=("text", "json"), default="text")
    report.add_argument("--top", type=_count, default=5, metavar="N",
                        help="paths shown per function (text; default 5; json: all)")
    report.add_argument("--functions", type=_count, default=None, metavar="N",
                        help="show only the N functions that executed most paths")
    report.add_argument("--show-unrun", action="store_true",
                        help="list measured functions that never ran")
    report.add_argument("-o", "--output", metavar="FILE", type=_file_name, help="write to FILE")

    coverage = commands.add_parser(
        "coverage",
        help="path coverage: paths run out of paths possible, per function",
        description="Path coverage of the measured code: per function, file and in "
        "total, the acyclic paths that ran out of those the control-flow graph allows "
        "(some of which may be infeasible), with the missed paths listed on request.",
    )
    _data_file_option(coverage)
    _report_filter_options(coverage)
    coverage.add_argument("--sort", default=None, metavar="COLUMN",
                          help="order the rows by name, paths, run, missed, cover or basis "
                          "(lowest first; -COLUMN for highest first); default: by file")
    coverage.add_argument("-m", "--show-missing", action="store_true",
                          help="list each function's missed paths, shortest first")
    coverage.add_argument("--missed", type=_count, default=None, metavar="N",
                          help="missed paths listed per function (default 5; json 10)")
    coverage.add_argument("--skip-covered", action="store_true",
                          help="leave out functions whose every path ran")
    coverage.add_argument("--fail-under", type=float, default=None, metavar="PERCENT",
                          help="exit with status 2 if the total basis path coverage "
                          "is below PERCENT")
    coverage.add_argument("--format", choices=("text", "json"), default="text")
    coverage.add_argument("-o", "--output", metavar="FILE", type=_file_name,
                          help="write to FILE")

    html = commands.add_parser(
        "html",
        help="write the HTML report: an index and a page per function",
        description="Write an HTML report: an index of functions sortable by file, "
        "function, paths run, path coverage and hottest path share, and a page per "
        "function with its paths highlighted on the source and a picture of its CFG.",
    )
    _data_file_option(html)
    _report_filter_options(html)
    html.add_argument("-d", "--directory", default="htmlpathprof", metavar="DIR",
                      help="where to write the report (default htmlpathprof)")
    html.add_argument("--title", default="pathprof report", help="the report's title")

    for name, default, what in (("lcov", "coverage.lcov", "an LCOV tracefile"),
                                ("xml", "coverage.xml", "a Cobertura XML report")):
        export = commands.add_parser(
            name,
            help=f"write {what}: line, branch, function and path coverage",
            description=f"Write {what} for CI services, editors and coverage tools: the "
            "line hits, branch counts and function calls the path profile implies, and "
            "each function's path coverage (see docs/commands/exports.md).",
        )
        _data_file_option(export)
        _report_filter_options(export)
        export.add_argument("-o", "--output", default=default, metavar="FILE", type=_file_name,
                            help=f"where to write (default {default}; - for standard output)")
        export.add_argument("--fail-under", type=float, default=None, metavar="PERCENT",
                            help="exit with status 2 if total basis path coverage is "
                            "below PERCENT")

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
    diff.add_argument("--min-count", type=_count, default=1, metavar="N",
                      help="ignore paths that ran fewer than N times in both (default 1)")
    diff.add_argument("--fail-on-change", action="store_true",
                      help="exit with status 3 if any path appeared, vanished or changed")
    diff.add_argument("--format", choices=("text", "json"), default="text")
    diff.add_argument("-o", "--output", metavar="FILE", type=_file_name, help="write to FILE")

    combine = commands.add_parser(
        "combine",
        help="add data files of other processes into the data file",
        description="Add data files written by other processes (forked children still "
        "running when their parent saved, or runs saved aside) into the data file.",
    )
    _data_file_option(combine)
    combine.add_argument("files", nargs="*", metavar="FILE",
                         help="files to add (default: DATA_FILE.* beside the data file, less "
                         "SQLite journals and .tmp and .lock files)")
    erase = commands.add_parser(
        "erase", help="remove the data file",
        description="Remove the data file and the data files other processes left beside it "
        "(DATA_FILE.*), to start measuring afresh. A file that is not a pathprof data file is "
        "left untouched.")
    _data_file_option(erase)
    return parser


def _count(text: str) -> int:
    """An argument that counts something: a whole number, not negative."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text} is negative")
    return value


def _positive(text: str) -> int:
    """A number of things there must be at least one of."""
    value = _count(text)
    if value == 0:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _file_name(text: str) -> str:
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty file name")
    return text


def _data_file_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data-file", default=None, metavar="FILE", type=_file_name,
                        help="the data file (default: .pathprof, or tool.pathprof.data_file "
                        "in pyproject.toml)")


def _report_filter_options(parser: argparse.ArgumentParser) -> None:
    """--include, --omit of the commands that report on a data file."""
    parser.add_argument("--include", action="append", default=[], dest="report_include",
                        metavar="PATTERN",
                        help="report only files matching this pattern (repeatable)")
    parser.add_argument("--omit", action="append", default=[], dest="report_omit",
                        metavar="PATTERN",
                        help="leave out files matching this pattern (repeatable)")


def _load_reported(args: argparse.Namespace) -> Any:
    """The data file, with only the functions of the files --include and --omit let
    through."""
    from pathprof.measure.profiler import load
    from pathprof.python.selection import matches_patterns

    measurement = load(args.data_file)
    if args.report_include or args.report_omit:
        measurement.functions = [fn for fn in measurement.functions if matches_patterns(
            fn.file, args.report_include, args.report_omit)]
    return measurement


def _apply_config(args: argparse.Namespace) -> None:
    """Fill what the command line left unset from ``[tool.pathprof]``."""
    from pathprof.config import Threshold, read_config

    config = read_config()
    if hasattr(args, "data_file") and args.data_file is None:
        args.data_file = config.data_file or ".pathprof"
    for name in ("source", "include", "omit"):
        if hasattr(args, name) and not getattr(args, name):
            setattr(args, name, list(getattr(config, name)))
    if hasattr(args, "mode") and args.mode is None:
        args.mode = config.mode or "path"
    if hasattr(args, "metric") and args.metric is None:
        args.metric = config.metric
    if hasattr(args, "stop_counting") and args.stop_counting is None:
        args.stop_counting = config.stop_counting or "never"
    if hasattr(args, "fail_under"):
        args.fail_under = Threshold.choose("--fail-under", args.fail_under, config)


def _command_plan(args: argparse.Namespace) -> int:
    from pathprof.graph.serial import cfg_from_data
    from pathprof.report.console import report_console
    from pathprof.report.plan import render_plan, summarize_plan

    try:
        with open(args.cfg_file, encoding="utf-8") as f:
            data = json.load(f)
    except OSError as err:
        raise PathprofError(f"cannot read {args.cfg_file}: {err.strerror}") from err
    except json.JSONDecodeError as err:
        raise PathprofError(f"{args.cfg_file} is not valid JSON: {err}") from err
    console = report_console()
    if isinstance(data, dict) and data.get("description"):
        console.print(f"[bold]{data['description']}[/bold]")
    if args.parallel is not None:
        from pathprof.report.partition_plan import render_partition, summarize_partition

        console.print(render_partition(summarize_partition(cfg_from_data(data), args.parallel)))
        return OK
    console.print(render_plan(summarize_plan(cfg_from_data(data))))
    return OK


def _command_count(args: argparse.Namespace) -> int:
    from pathprof.events import EventCounter
    from pathprof.report.console import report_console
    from pathprof.report.events_text import render_counts

    path, program_args, default_dirs = _program(args)
    _check_file_destination(args.json_file, "the counts")
    counter = EventCounter(source=args.source, include=args.include, omit=args.omit,
                           default_dirs=default_dirs, kind=args.kind,
                           cache=not args.no_cache, placement=args.placement,
                           per_function=not args.total_only)

    compile_main = _main_compiler(counter.selection, counter.options)
    after = _AfterTheRun()

    status = _run_program(args, path, program_args, counter.start, counter.stop, compile_main)
    with after.reporting():
        found = counter.totals() if args.total_only else counter.counts()
        if args.json_file == "-":
            after.write(lambda out: out.write(found.to_json() + "\n"), to_stdout=True)
            return status
        if args.json_file:
            after.write_file(args.json_file, found.to_json() + "\n")
        # The program's standard output is its own: the table goes to standard error.
        after.write(lambda out: render_counts(report_console(out), found, sort=args.sort,
                                              top=args.top))
    return status


def _command_hot(args: argparse.Namespace) -> int:
    from rich.console import Console

    from pathprof.report.console import report_console
    from pathprof.report.subpaths_text import render_hot, subpath_table
    from pathprof.subpaths import SubpathSampling

    if not 0.0 < args.confidence < 1.0:
        raise PathprofError("--confidence is a probability strictly between 0 and 1")
    if args.rank == "cost" and args.costs is None:
        raise PathprofError("--rank cost needs --costs statements (block costs to rank by)")
    path, program_args, default_dirs = _program(args)
    _check_file_destination(args.json_file, "the estimates")
    if args.html_dir:
        _check_directory_destination(args.html_dir, "the report")
    sampling = SubpathSampling(source=args.source, include=args.include, omit=args.omit,
                               default_dirs=default_dirs, period=args.period,
                               budget=args.memory, longest=args.longest,
                               lengths=args.lengths, encoding=args.encoding, seed=args.seed,
                               exact=args.exact, cache=not args.no_cache,
                               checkpoint_every=args.checkpoint_every, costs=args.costs)
    compile_main = _main_compiler(sampling.selection, sampling.options)

    def hottest() -> list[Any]:
        return sampling.hottest(top=args.top, confidence=args.confidence,
                                one_sided=args.one_sided, rank=args.rank,
                                threshold=args.threshold)

    hottest()  # (nothing sampled yet: imports what the estimates need, before the run)
    if args.html_dir:
        import pathprof.report.subpaths_html  # noqa: F401  (before the run, as above)
    after = _AfterTheRun()
    errors = Console(file=after.stderr) if after.stderr is not None else Console(stderr=True)
    live_view = args.live if args.live is not None else errors.is_terminal
    live = None
    if live_view:
        from rich.live import Live

        live = Live(get_renderable=lambda: subpath_table(
            hottest(), title="Hottest subpaths so far", confidence=args.confidence),
            console=errors, refresh_per_second=2, transient=True)
        live.start()
    try:
        status = _run_program(args, path, program_args, sampling.start, sampling.stop,
                              compile_main)
    finally:
        if live is not None:
            with after.reporting(), contextlib.suppress(OSError, ValueError):
                live.stop()  # (standard error may be closed by now)
    with after.reporting():
        found = hottest()
        summary = sampling.summary()
        document = {"format": 1, "confidence": args.confidence,
                    "one_sided": args.one_sided, "rank": args.rank,
                    "encoding": args.encoding, "costs": args.costs, **summary,
                    "subpaths": [h.to_json() for h in found]}
        text = json.dumps(document, indent=2) + "\n"
        to_stdout = args.json_file == "-"
        if to_stdout:
            after.write(lambda out: out.write(text), to_stdout=True)
        elif args.json_file:
            after.write_file(args.json_file, text)
        # The program's standard output is its own: the report goes to standard error.
        if not to_stdout:
            after.write(lambda out: render_hot(report_console(out), found, summary,
                                               confidence=args.confidence))
        if args.html_dir:
            try:
                index = _write_hot_html(document, after.path(args.html_dir), args.html_dir)
            except PathprofError as err:
                after.tell(str(err))
            else:
                shown = os.path.relpath(index, after.cwd or os.curdir)
                after.write(lambda out: print(f"wrote {shown}", file=out))
    return status


def _write_hot_html(document: dict[str, Any], directory: str, shown: str) -> str:
    from pathprof.report.subpaths_html import write_subpaths_html

    try:
        return write_subpaths_html(document, directory)
    except OSError as err:
        raise PathprofError(f"cannot write the report to {shown}: "
                            f"{err.strerror or err}") from err
    except ImportError as err:  # what the program left of the import system refused
        raise PathprofError(f"cannot write the report to {shown}: {err}") from err


def _check_file_destination(path: str | None, what: str) -> None:
    """Before the program runs (``hot`` and ``count``): a PathprofError unless ``path``
    can be written (None and ``-``, standard output: nothing to check), so that a run
    is not wasted on a report that cannot be kept. Leaves nothing behind: an existing
    file is opened for appending and closed; a new one is created and removed. A
    device or a pipe is not opened (that could block): it is written at the end."""
    if path is None or path == "-":
        return
    try:
        if os.path.isdir(path):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
        if os.path.exists(path):
            if os.path.isfile(path):
                os.close(os.open(path, os.O_WRONLY | os.O_APPEND))
            return
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        os.unlink(path)
    except FileExistsError:  # made meanwhile, or a dangling link: written at the end
        return
    except OSError as err:
        raise PathprofError(f"cannot write {what} to {path}: {err.strerror}; the program "
                            "was not run") from err


def _check_directory_destination(directory: str, what: str) -> None:
    """Before the program runs: a PathprofError unless ``directory`` is a directory
    that takes new entries, or can be made in the nearest one above it that exists.
    Leaves nothing behind (a directory made there to try is removed)."""
    import tempfile

    existing = os.path.abspath(directory)
    while not os.path.exists(existing) and os.path.dirname(existing) != existing:
        existing = os.path.dirname(existing)
    try:
        if not os.path.isdir(existing):
            raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR))
        os.rmdir(tempfile.mkdtemp(prefix=".pathprof-check-", dir=existing))
    except OSError as err:
        raise PathprofError(f"cannot write {what} to {directory}: {err.strerror}; the "
                            "program was not run") from err


class _AfterTheRun:
    """What ``hot`` and ``count`` report with once the program ran, set aside before
    it runs. The program may leave imports blocked (a finder in ``sys.meta_path``
    that refuses everything, an ``__import__`` that does) or standard error closed;
    it cannot keep the report from being written where it can be:

    - what the reports render with is imported before the run (the renderers, and
      rich's lazy imports, by rendering a table once to nowhere), and while reporting
      ``sys.meta_path`` and ``__import__`` are as pathprof found them, then the
      program's again;
    - reports go to the standard error (or output) pathprof started with, whatever
      the program put in ``sys.stderr``; if the program closed it, to the other one,
      and a line says so on the original standard error file descriptor, if it is
      still that file;
    - a report that cannot be written is one line, and the others are still written:
      the program's exit status stays the command's;
    - ``--json FILE`` and ``--html DIR`` are where they were when pathprof started,
      wherever the program moved to (``os.chdir``).
    """

    def __init__(self) -> None:
        _render_once()
        self.imports = (list(sys.meta_path), builtins.__import__)
        self.stdout: TextIO | None = sys.stdout
        self.stderr: TextIO | None = sys.stderr
        self.stderr_file = _file_identity(2)
        try:
            #: where relative destinations are, whatever directory the program ends in
            self.cwd: str | None = os.getcwd()
        except OSError:
            self.cwd = None
        self._told: set[str] = set()

    def path(self, path: str) -> str:
        """``path`` from the directory pathprof started in (the program may change it)."""
        return os.path.join(self.cwd, path) if self.cwd is not None else path

    @contextlib.contextmanager
    def reporting(self) -> Iterator[None]:
        """The import system as it was before the run, for the time of the block."""
        program = (sys.meta_path, builtins.__import__)
        sys.meta_path, builtins.__import__ = list(self.imports[0]), self.imports[1]
        try:
            yield
        finally:
            sys.meta_path, builtins.__import__ = program

    def stream(self, to_stdout: bool = False) -> TextIO | None:
        """Standard error (``to_stdout``: output) as pathprof found it; if the program
        closed it, the other one, with a line saying so; None if both are closed."""
        if to_stdout:
            first, other = self.stdout, self.stderr
            names = ("standard output", "standard error")
        else:
            first, other = self.stderr, self.stdout
            names = ("standard error", "standard output")
        if _open(first):
            return first
        if _open(other):
            self.tell(f"the program closed {names[0]}: the report is on {names[1]}")
            return other
        self.tell("the program closed standard output and standard error: the report "
                  "is lost")
        return None

    def write(self, write: Callable[[TextIO], object], *, to_stdout: bool = False) -> None:
        """``write(stream)`` on :meth:`stream`; a failure is one line."""
        stream = self.stream(to_stdout)
        if stream is None:
            return
        try:
            write(stream)
            stream.flush()
        except BrokenPipeError:  # the reader went away: as main() does
            _quiet_stdout()
        except (OSError, ValueError, ImportError) as err:
            self.tell(f"cannot write the report: {err}")

    def write_file(self, path: str, text: str) -> None:
        """Write ``text`` to ``path``; a failure is one line (checked before the run,
        the destination can still fail: a full disk, a directory removed meanwhile)."""
        try:
            with open(self.path(path), "w", encoding="utf-8") as file:
                file.write(text)
        except OSError as err:
            self.tell(f"cannot write {path}: {err.strerror or err}")

    def tell(self, message: str) -> None:
        """``pathprof: message`` on the original standard error: the stream pathprof
        started with, or else its file descriptor, if it is still the same file; once."""
        if message in self._told:
            return
        self._told.add(message)
        line = f"pathprof: {message}\n"
        if self.stderr is not None and _open(self.stderr):
            try:
                self.stderr.write(line)
                self.stderr.flush()
                return
            except (OSError, ValueError):
                pass
        if self.stderr_file is not None and _file_identity(2) == self.stderr_file:
            with contextlib.suppress(OSError):
                os.write(2, line.encode("utf-8", "replace"))


def _open(stream: TextIO | None) -> bool:
    return stream is not None and not getattr(stream, "closed", False)


def _file_identity(fd: int) -> tuple[int, int] | None:
    try:
        found = os.fstat(fd)
    except OSError:
        return None
    return found.st_dev, found.st_ino


def _render_once() -> None:
    """Render a table with markup and wide characters to nowhere: rich imports what
    it renders with (emoji codes, cell width tables) the first time it needs it."""
    import io

    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    table = Table(title="[bold]± →[/bold]")
    table.add_column("±", justify="right")
    table.add_row(Text("→ ±", style="dim"))
    Console(file=io.StringIO(), width=40).print(table, "[dim]→[/dim]", style="dim")


def _selection_options(parser: argparse.ArgumentParser, verb: str) -> None:
    """--source, --include, --omit of the commands that run a program."""
    parser.add_argument("--source", action="append", default=[], metavar="DIR|MODULE",
                        help=f"{verb} code in this directory or package (repeatable); "
                        "default: the script's directory, or the current one for -m and "
                        "console scripts")
    parser.add_argument("--include", action="append", default=[], metavar="PATTERN",
                        help=f"{verb} only files matching this pattern (repeatable)")
    parser.add_argument("--omit", action="append", default=[], metavar="PATTERN",
                        help=f"do not {verb} files matching this pattern (repeatable)")


def _program_arguments(parser: argparse.ArgumentParser) -> None:
    """--no-cache, -m, PROGRAM and its ARGS, last on the command line."""
    parser.add_argument("--no-cache", action="store_true",
                        help="do not read or write instrumented code in __pycache__")
    parser.add_argument("-m", dest="module", action="store_true",
                        help="PROGRAM is a module name, run as with python -m")
    parser.add_argument("program", metavar="PROGRAM")
    parser.add_argument("args", nargs=argparse.REMAINDER, metavar="ARGS")


def _program(args: argparse.Namespace) -> tuple[str | None, list[str], list[str]]:
    """The script's path (None for -m), its arguments, and the default source dirs."""
    from pathprof.measure.execfile import resolve_program

    program_args = args.args[1:] if args.args[:1] == ["--"] else args.args
    if args.program == "--":
        if not program_args:
            raise PathprofError("nothing to run after --")
        args.program, program_args = program_args[0], program_args[1:]
    if args.module:
        return None, program_args, [os.getcwd()]
    path, on_path = resolve_program(args.program)
    return path, program_args, [os.getcwd() if on_path else os.path.dirname(path)]


def _main_compiler(selection: Any, options: Any) -> Any:
    """Compile the main script instrumented if it is selected, plainly otherwise."""
    from pathprof.measure.execfile import compile_script
    from pathprof.measure.importhook import compile_instrumented

    def compile_main(source: bytes, filename: str) -> object:
        plain = compile_script(source, filename)  # fails as Python does
        if selection.wants("__main__", filename):
            try:
                # (its warnings were just shown, by the plain compile)
                return compile_instrumented(source, filename, options, show_warnings=False)
            except Exception as err:  # a pathprof bug must not break the program
                warn(f"could not instrument {filename} "
                     f"({type(err).__name__}: {err}); it runs unmeasured")
        return plain

    return compile_main


def _run_program(args: argparse.Namespace, path: str | None, program_args: list[str],
                 start: Any, stop: Any, compile_main: Any) -> int:
    """Run the program between ``start()`` and ``stop()``; its exit status.

    Everything here is pathprof's own work (:data:`pathprof.runtime.own_work`: what
    it runs of a measured module is not counted) except the program's code: its
    body, then what Python runs after it, before the measurement stops (the threads
    it waits for, the ``atexit`` handlers)."""
    from pathprof import runtime

    status = OK
    with runtime.own_work:
        start()
        try:
            status = _run_between(args, path, program_args, compile_main)
        finally:
            stop()
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.flush()
    return status


def _run_between(args: argparse.Namespace, path: str | None, program_args: list[str],
                 compile_main: Any) -> int:
    """:func:`_run_program`'s part while the measurement runs: the program, then what
    Python does as it ends, in the program's ``__main__``, ``sys.argv`` and
    ``sys.path``: report an uncaught exception, wait for the threads, run the exit
    handlers (those registered before the program started as pathprof's own work)."""
    from pathprof import runtime
    from pathprof.measure.execfile import ExitBoundary, finish_as_python, run_module, run_script

    boundary = ExitBoundary(runtime.own_work)

    class Ending:
        """What Python does as the program ends (:class:`execfile.Ending`)."""

        def report(self, ended: BaseException | None) -> int:
            if isinstance(ended, SystemExit):
                return _exit_status(ended.code)
            if isinstance(ended, PathprofError):
                raise ended
            if ended is None:
                return OK
            tb = ended.__traceback__
            while tb is not None and tb.tb_frame.f_code.co_filename.startswith(_PACKAGE_DIR):
                tb = tb.tb_next
            ended.__traceback__ = tb  # the hook (and whatever it calls) reads it here
            with runtime.own_work.released():  # the program's hook, if it set one
                _report_uncaught(type(ended), ended, tb)
            return INTERRUPTED if isinstance(ended, KeyboardInterrupt) else ERR

        def finish(self) -> None:
            finish_as_python(runtime.own_work, boundary)

    ending = Ending()
    if args.module:
        return run_module(args.program, program_args, program=runtime.own_work.released,
                          ending=ending)
    assert path is not None
    argv0 = args.program if os.path.exists(args.program) else path
    return run_script(path, program_args, compile_main, argv0,
                      program=runtime.own_work.released, ending=ending)


#: The program ended by an uncaught KeyboardInterrupt: after saving, pathprof dies
#: of SIGINT, as Python does (so a shell sees 130 and stops a loop of commands).
INTERRUPTED = -2


def _report_uncaught(exc_type: Any, exc: BaseException | None, tb: Any) -> None:
    """What Python does with an exception the program did not catch: call
    ``sys.excepthook`` (the program's own, if it set one); should the hook itself
    raise, print both as Python does."""
    try:
        sys.excepthook(exc_type, exc, tb)
    except BaseException as failed:  # (SystemExit too: Python reports it so)
        hook_tb = failed.__traceback__
        while (hook_tb is not None
               and hook_tb.tb_frame.f_code.co_filename.startswith(_PACKAGE_DIR)):
            hook_tb = hook_tb.tb_next
        print("Error in sys.excepthook:", file=sys.stderr)
        traceback.print_exception(type(failed), failed, hook_tb)
        print("\nOriginal exception was:", file=sys.stderr)
        traceback.print_exception(exc_type, exc, tb)


def _die_of_sigint() -> None:
    signal = sys.modules.get("signal") or __import__("signal")  # (imports may not work)
    with contextlib.suppress(OSError, ValueError):
        sys.stdout.flush()
        sys.stderr.flush()
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGINT)


def _command_run(args: argparse.Namespace) -> int:
    from pathprof import runtime
    from pathprof.measure.children import ChildMeasurement
    from pathprof.measure.profiler import Profiler, save_on_sigterm

    path, program_args, default_dirs = _program(args)
    if args.parallel is not None:
        if args.stop_counting != "never":
            print("pathprof: --stop-counting does not go with --parallel (the copies' "
                  "profiles are merged count by count)", file=sys.stderr)
            return USAGE
        if args.executor == "dask" or args.scheduler:
            from pathprof.exceptions import ConfigError
            from pathprof.parallel.executors import check_scheduler

            try:
                if args.executor != "dask":
                    raise ConfigError("--scheduler goes with --executor dask")
                check_scheduler(args.scheduler)
            except ConfigError as err:
                print(f"pathprof: {err}", file=sys.stderr)
                return USAGE
        return _parallel_run(args, program_args, default_dirs)
    if args.executor != "local" or args.scheduler or args.verify or args.plan_from:
        print("pathprof: --executor, --scheduler, --verify and --plan-from go with "
              "--parallel K", file=sys.stderr)
        return USAGE
    profiler = Profiler(data_file=args.data_file, source=args.source, include=args.include,
                        omit=args.omit, default_dirs=default_dirs, mode=args.mode,
                        metric=args.metric, append=args.append, cache=not args.no_cache,
                        argv=[args.program, *program_args], stop_counting=args.stop_counting)

    compile_main = _main_compiler(profiler.selection, profiler.options)
    save_on_sigterm(profiler)
    children = ChildMeasurement(profiler.child_settings())
    status = ERR
    with runtime.own_work:
        children.start()
        try:
            status = _run_program(args, path, program_args, profiler.start, profiler.stop,
                                  compile_main)
        finally:
            children.stop()
            profiler.save_at_end()  # saved elsewhere, if it must be: it says where
    return status


def _parallel_run(args: argparse.Namespace, program_args: list[str],
                  default_dirs: list[str]) -> int:
    """``run --parallel K``: see :mod:`pathprof.parallel.run`."""
    import signal

    from pathprof.parallel.run import report, run_parallel
    from pathprof.parallel.signals import die_of
    from pathprof.python.selection import Selection

    selection = Selection(args.source, args.include, args.omit, default_dirs)
    files = [path for _name, path in selection.files()]
    run_args: list[str] = []
    for option, values in (("--source", args.source), ("--include", args.include),
                           ("--omit", args.omit)):
        for value in values:
            run_args += [option, value]
    if args.mode:
        run_args += ["--mode", args.mode]
    if args.metric:
        run_args += ["--metric", args.metric]
    if args.module:
        run_args.append("-m")
    run_args += [args.program, "--", *program_args]
    profile = None
    if args.plan_from:
        from pathprof.data.store import read

        profile = read(args.plan_from).functions
    try:
        result = run_parallel(run_args, files, copies=args.parallel,
                              data_file=args.data_file, append=args.append,
                              executor=args.executor, scheduler=args.scheduler,
                              verify=args.verify,
                              partition=args.mode in (None, "path") and not args.metric,
                              profile=profile)
    except KeyboardInterrupt:  # before any copy started (planning, reading stdin)
        die_of(signal.SIGINT)
        raise  # not reached: die_of does not return
    report(result, args.data_file)
    # Signalled, the run ends as Python would: killed by the signal, unless the
    # program (copy 0) took it and ended by itself.
    if result.signal is not None and not (result.interrupted and result.returncode >= 0):
        die_of(result.signal)
    if result.differences:
        return ERR
    status = result.returncode
    return 128 - status if status < 0 else status


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def _exit_status(code: object) -> int:
    if code is None:
        return OK
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return ERR


def _command_instrument(args: argparse.Namespace) -> int:
    from pathprof.measure.importhook import InstrumentOptions, warm_cache
    from pathprof.python.selection import Selection

    selection = Selection(args.source, args.include, args.omit, [os.getcwd()])
    paths = [path for _name, path in selection.files()]
    if not paths:
        raise PathprofError("no source files selected (see --source, --include, --omit)")
    options = InstrumentOptions(mode=args.mode, metric=args.metric)
    with _progress("instrumenting", len(paths)) as advance:
        result = warm_cache(paths, options, progress=advance)
    print(f"{len(paths)} files: {result.instrumented} instrumented, {result.cached} already "
          f"cached, {len(result.failed)} could not be")
    for path, why in result.failed:
        print(f"  {os.path.relpath(path)}: {why}", file=sys.stderr)
    return OK


def _command_report(args: argparse.Namespace) -> int:
    from pathprof.report.console import report_console

    measurement = _load_reported(args)
    with _output(args.output) as output:
        if args.format == "json":
            from pathprof.report.paths_json import to_json

            print(json.dumps(to_json(measurement), indent=2), file=output)
        else:
            from pathprof.report.paths_text import render_report

            console = report_console(output)
            render_report(measurement, console, top=args.top, functions=args.functions,
                          show_unrun=args.show_unrun)
    return OK


def _command_coverage(args: argparse.Namespace) -> int:
    from pathprof.analysis.pathcoverage import path_coverage
    from pathprof.report.coverage_text import check_sort

    if args.sort is not None:
        try:
            check_sort(args.sort)
        except ValueError as err:
            raise PathprofError(str(err)) from err
    coverage = path_coverage(_load_reported(args))
    with _output(args.output) as output:
        if args.format == "json":
            from pathprof.report.coverage_json import coverage_json

            data = coverage_json(coverage, 10 if args.missed is None else args.missed)
            print(json.dumps(data, indent=2), file=output)
        else:
            from pathprof.report.console import report_console
            from pathprof.report.coverage_text import render_coverage

            console = report_console(output)
            render_coverage(coverage, console, show_missing=args.show_missing,
                            missed_per_function=5 if args.missed is None else args.missed,
                            skip_covered=args.skip_covered, sort=args.sort)
    return fail_under_status(coverage.basis.percent, args.fail_under)


FAIL_UNDER = 2


def fail_under_status(percent: float, fail_under: Threshold | None) -> int:
    """Exit status for ``--fail-under``: :data:`FAIL_UNDER` (2, as coverage.py) when the
    total basis path coverage is below the threshold, with a message on stderr naming
    the setting it came from; otherwise 0."""
    if fail_under is None or percent >= fail_under.percent:
        return OK
    print(f"pathprof: total basis path coverage {percent:.2f}% is below "
          f"{fail_under.setting}", file=sys.stderr)
    return FAIL_UNDER


@contextlib.contextmanager
def _output(path: str | None) -> Iterator[TextIO]:
    """Standard output, or ``path`` opened for writing (reported if it cannot be)."""
    if path is None:
        yield sys.stdout
        return
    try:
        file = open(path, "w", encoding="utf-8")  # noqa: SIM115
    except OSError as err:
        raise PathprofError(f"cannot write {path}: {err.strerror}") from err
    with file:
        yield file


def _command_html(args: argparse.Namespace) -> int:
    from pathprof.report.html import write_html

    measurement = _load_reported(args)
    with _progress("writing function pages", len(measurement.functions)) as advance:
        try:
            index = write_html(measurement, args.directory, title=args.title,
                               progress=advance)
        except OSError as err:
            raise PathprofError(f"cannot write the report to {args.directory}: "
                                f"{err.strerror}") from err
    print(f"wrote {os.path.relpath(index)}")
    return OK


def _command_export(args: argparse.Namespace) -> int:
    from pathprof.report.exports import write_export

    coverage = write_export(args.command, _load_reported(args),
                            None if args.output == "-" else args.output)
    if args.output != "-":
        print(f"wrote {args.output}: {coverage.summary()}")
    for file, versions in coverage.older_versions:
        print(f"pathprof: {os.path.relpath(file)} was measured in {versions + 1} versions "
              "of its source; only one is exported", file=sys.stderr)
    return fail_under_status(coverage.basis_rate.percent, args.fail_under)


#: Long work shows a progress bar from this many items on, when stderr is a terminal.
PROGRESS_FROM = 50


@contextlib.contextmanager
def _progress(what: str, total: int) -> Iterator[Callable[[int, int], None]]:
    """A progress callback ``(done, total)``: a bar on stderr for long work, else nothing."""
    if total < PROGRESS_FROM or not sys.stderr.isatty():
        yield lambda done, total: None
        return
    from rich.progress import Progress

    with Progress(transient=True, console=_stderr_console()) as bar:
        task = bar.add_task(what, total=total)
        yield lambda done, total: bar.update(task, completed=done)


def _stderr_console() -> Any:
    from rich.console import Console

    return Console(stderr=True)


DIFFERS = 3


def _command_diff(args: argparse.Namespace) -> int:
    from pathprof.analysis.pathdiff import diff_profiles
    from pathprof.measure.profiler import load

    if args.threshold < 0:
        raise PathprofError("--threshold must not be negative")
    old, new = load(args.old), load(args.new)
    stopped = sum(1 for m in (old, new) for fn in m.functions if fn.stopped)
    if stopped:
        warn(f"{stopped} function profile(s) here stopped counting (--stop-counting basis, "
             "pytest --pathprof's default): their counts and paths are lower bounds, so "
             "changes in them may be where counting stopped, not what ran; compare runs "
             "made with --pathprof-stop-counting=never (or run --stop-counting never)")
    diff = diff_profiles(old, new, threshold=args.threshold, min_count=args.min_count)
    with _output(args.output) as output:
        if args.format == "json":
            from pathprof.report.diff_text import diff_json

            print(json.dumps(diff_json(diff), indent=2), file=output)
        else:
            from pathprof.report.console import report_console
            from pathprof.report.diff_text import render_diff

            render_diff(diff, report_console(output))
    return DIFFERS if args.fail_on_change and diff.differs else OK


def _command_combine(args: argparse.Namespace) -> int:
    from pathprof.data.files import combinable_files
    from pathprof.data.store import combine, read, source_conflicts

    files = args.files or combinable_files(args.data_file)
    if not files:
        raise PathprofError(f"no data files to combine beside {args.data_file}")
    with _progress("combining data files", len(files)) as advance:
        combined = combine(args.data_file, files, progress=advance)
    print(f"combined {len(combined)} data files into {args.data_file}")
    for file, qualname, versions in source_conflicts([read(args.data_file)]):
        print(f"pathprof: {os.path.relpath(file)}: {qualname} was measured from {versions} "
              "versions of its source; their paths are kept apart", file=sys.stderr)
    return OK


def _command_erase(args: argparse.Namespace) -> int:
    from pathprof.data.store import erase

    erase(args.data_file)
    return OK


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return USAGE
    if args.command not in ("plan", "diff"):
        try:
            _apply_config(args)
        except PathprofError as err:
            print(f"pathprof: {err}", file=sys.stderr)
            return ERR
    handlers = {"plan": _command_plan, "run": _command_run, "count": _command_count,
                "hot": _command_hot,
                "instrument": _command_instrument,
                "report": _command_report,
                "coverage": _command_coverage, "html": _command_html, "diff": _command_diff,
                "lcov": _command_export, "xml": _command_export,
                "combine": _command_combine, "erase": _command_erase}
    from pathprof import runtime

    # The exit handlers a run runs before its save (finish_as_python) must not
    # freeze the measured code yet: the run freezes it itself, after its save.
    atexit.unregister(runtime.freeze_at_exit)
    try:
        # pathprof's own work, not the program's: what it runs of a module measured
        # in place is not counted (a command that runs a program releases it there)
        try:
            with runtime.own_work:
                status = handlers[args.command](args)
        finally:
            execfile = sys.modules.get("pathprof.measure.execfile")  # (imports may fail)
            if execfile is not None:
                execfile.reinstate_program()  # what the interpreter's shutdown sees
            runtime.freeze_at_exit()  # what measured code runs then behaves as written
        if status == INTERRUPTED:
            # Python's exit after an uncaught KeyboardInterrupt: the program's atexit
            # handlers ran (finish_as_python), the run was saved or reported, then the
            # process kills itself with SIGINT (a shell sees 130).
            _die_of_sigint()
            return ERR
        return status
    except PathprofError as err:
        print(f"pathprof: {err}", file=sys.stderr)
        return ERR
    except BrokenPipeError:
        # The reader went away (``pathprof report | head``): end quietly, as Unix
        # tools do. Python would complain again when it flushes stdout at exit,
        # so stdout is pointed at /dev/null first (the recipe of Python's signal docs).
        _quiet_stdout()
        return OK


def _quiet_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


if __name__ == "__main__":
    sys.exit(main())
