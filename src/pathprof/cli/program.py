"""The commands that run a program: ``run`` (measure its paths), ``count`` (count
its events), ``hot`` (sample its hottest subpaths), and ``instrument`` (fill the
cache of instrumented code before). The program runs through :mod:`pathprof.api`;
what ``count`` and ``hot`` report with once it ran is set aside before
(:class:`pathprof.cli.after_run.AfterTheRun`)."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from pathprof import api
from pathprof.cli.after_run import AfterTheRun, check_directory_destination, check_file_destination
from pathprof.cli.options import (
    ERR,
    OK,
    USAGE,
    cache_options,
    data_file_option,
    positive,
    program_arguments,
    selection_options,
    whole_number,
)
from pathprof.cli.progress import progress
from pathprof.exceptions import PathprofError

if TYPE_CHECKING:
    from typing import TypeAlias

    from pathprof.measure.program import Program
    from pathprof.subpaths import HotSubpath, SubpathsDocument

    #: the subcommands' parsers, each command's added to them
    _Commands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"

__all__ = ["add_count", "add_hot", "add_instrument", "add_run"]


def _program(args: argparse.Namespace) -> Program:
    """The program named on the command line (:func:`pathprof.api.program`)."""
    return api.program(args.program, args.args, args.module)


def add_run(commands: _Commands) -> None:
    """``pathprof run``: run a program and measure its path profile."""
    run = commands.add_parser(
        "run",
        help="run a Python program and measure its path profile",
        description="Run a program (a script, -m module, or a console script such as "
        "pytest) with the selected code instrumented, and save its exact acyclic path "
        "profile to the data file.",
    )
    data_file_option(run)
    selection_options(run, "measure")
    run.add_argument("--mode", choices=("path", "edge"), default=None,
                     help="path: Ball-Larus path profile (default); edge: edge and branch "
                     "counts, the baseline")
    run.add_argument("--metric", choices=("time",), default=None,
                     help="also measure wall time spent on each path (inclusive of calls)")
    run.add_argument("--conditions", action="store_true", default=None,
                     help="also count each way every decision (if, while, assert, a "
                     "conditional expression...) was evaluated, for condition coverage and "
                     "MC/DC (pathprof coverage --conditions); path mode, no metric")
    run.add_argument("--stop-counting", choices=("never", "basis", "paths"), default=None,
                     help="for path coverage: send a function back to its original code, "
                     "which costs nothing, once the paths that ran span its basis (basis) or "
                     "are all of its paths (paths); its counts are then lower bounds. "
                     "Default: never")
    run.add_argument("-a", "--append", action="store_true",
                     help="add to the data file instead of replacing it")
    run.add_argument("--parallel", type=positive, default=None, metavar="K",
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
    program_arguments(run)
    run.set_defaults(handler=command_run)


def command_run(args: argparse.Namespace) -> int:
    program = _program(args)
    if args.parallel is not None:
        if args.stop_counting != "never":
            print("pathprof: --stop-counting does not go with --parallel (the copies' "
                  "profiles are merged count by count)", file=sys.stderr)
            return USAGE
        if args.conditions:
            print("pathprof: --conditions does not go with --parallel (a parallel run "
                  "measures paths only)", file=sys.stderr)
            return USAGE
        if args.executor == "dask" or args.scheduler:
            from pathprof.exceptions import ConfigError

            try:
                api.check_scheduler(args.executor, args.scheduler)
            except ConfigError as err:
                print(f"pathprof: {err}", file=sys.stderr)
                return USAGE
        return _parallel_run(args, program)
    if args.executor != "local" or args.scheduler or args.verify or args.plan_from:
        print("pathprof: --executor, --scheduler, --verify and --plan-from go with "
              "--parallel K", file=sys.stderr)
        return USAGE
    return api.measured_run(program, data_file=args.data_file, source=args.source,
                            include=args.include, omit=args.omit, mode=args.mode,
                            metric=args.metric, append=args.append, cache=not args.no_cache,
                            stop_counting=args.stop_counting, cache_dir=args.cache_dir,
                            conditions=args.conditions)


def _parallel_run(args: argparse.Namespace, program: Program) -> int:
    """``run --parallel K``: see :mod:`pathprof.parallel.run`."""
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
    run_args += [program.name, "--", *program.args]
    result = api.parallel_run(run_args, source=args.source, include=args.include,
                              omit=args.omit, default_dirs=program.default_dirs,
                              plan_from=args.plan_from, copies=args.parallel,
                              data_file=args.data_file, append=args.append,
                              executor=args.executor, scheduler=args.scheduler,
                              verify=args.verify,
                              partition=args.mode in (None, "path") and not args.metric)
    if result.differences:
        return ERR
    status = result.returncode
    return 128 - status if status < 0 else status


def add_count(commands: _Commands) -> None:
    """``pathprof count``: run a program and count the events it runs."""
    count = commands.add_parser(
        "count",
        help="run a Python program and count the statements (or instructions) it runs",
        description="Run a program with the selected code instrumented to count events "
        "exactly (Ball 1994: increments on the chords of a spanning tree), and print the "
        "total and each function's self and inclusive counts. Counts are deterministic: "
        "the same run gives the same numbers on any machine load.",
    )
    selection_options(count, "count")
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
    count.add_argument("--top", type=whole_number, default=20, metavar="N",
                       help="show the N functions with the most events (default 20; 0: all)")
    count.add_argument("--json", dest="json_file", metavar="FILE",
                       help="also write the counts as JSON to FILE ('-': standard output, "
                       "instead of the table)")
    program_arguments(count)
    count.set_defaults(handler=command_count)


def command_count(args: argparse.Namespace) -> int:
    from pathprof.events import EventCounter

    program = _program(args)
    check_file_destination(args.json_file, "the counts")
    counter = EventCounter(source=args.source, include=args.include, omit=args.omit,
                           default_dirs=program.default_dirs, kind=args.kind,
                           cache=not args.no_cache, placement=args.placement,
                           per_function=not args.total_only, cache_dir=args.cache_dir)

    render = api.renderer("events")
    after = AfterTheRun()

    def report() -> None:
        with after.reporting():
            found = counter.totals() if args.total_only else counter.counts()
            if args.json_file == "-":
                after.write(lambda out: out.write(found.to_json() + "\n"), to_stdout=True)
                return
            if args.json_file:
                after.write_file(args.json_file, found.to_json() + "\n")
            # The program's standard output is its own: the table goes to standard error.
            after.write(lambda out: render(found, out, sort=args.sort, top=args.top))

    # (a SIGINT or SIGTERM that comes as it reports waits for it: then its death)
    return api.run_measured(program, counter, _Reporting(report, after))


class _Reporting:
    """``count``'s and ``hot``'s :class:`~pathprof.measure.measured_run.Keeper`: the
    report of a run that ended, or of what a SIGTERM let it run (if the measurement
    started: else nothing, so that no report of nothing replaces an earlier one);
    ``ended``, what they do first as the program ends (``hot``: its live view
    stopped)."""

    keeps_when_raised = False

    def __init__(self, report: Callable[[], None], after: AfterTheRun,
                 ended: Callable[[], None] | None = None) -> None:
        self._report, self._after, self._ended = report, after, ended

    def program_starts(self) -> None:
        pass

    def program_ended(self) -> None:
        if self._ended is not None:
            with contextlib.suppress(Exception):
                self._ended()

    def keep(self, *, terminated: bool) -> None:
        if terminated:
            self._after.tell("terminated by SIGTERM: what was measured up to the signal "
                             "follows")
        self._report()

    def nothing_measured(self) -> None:
        self._after.tell("terminated by SIGTERM before the program started: nothing was "
                         "measured")


def _period(text: str) -> float | None:
    """``--period``: a number of blocks, or ``auto`` (None: chosen from the run)."""
    if text == "auto":
        return None
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is neither a number of blocks nor "
                                         "'auto'") from None


def add_hot(commands: _Commands) -> None:
    """``pathprof hot``: run a program and estimate its hottest subpaths."""
    hot = commands.add_parser(
        "hot",
        help="run a Python program and show its hottest subpaths, estimated online",
        description="Run a program with the selected code instrumented for online subpath "
        "sampling (OSP, Oren 2002): subpaths start anywhere and cross calls; a sample of "
        "them, held to a memory budget, gives estimated counts with Chernoff error bounds, "
        "shown live while the program runs and at its end.",
    )
    selection_options(hot, "sample")
    hot.add_argument("--period", type=_period, default=None, metavar="N|auto",
                     help="start one sample per N blocks at first (it grows as the sample "
                     "fills its budget); default auto: chosen from the run, from one per "
                     "200 blocks growing with the run's length up to one per 10000")
    hot.add_argument("--memory", type=positive, default=10000, metavar="SUBPATHS",
                     help="at most this many distinct subpaths in the sample (default 10000)")
    hot.add_argument("--longest", type=positive, default=5, metavar="N",
                     help="sample lengths 2, 4, ... 2^N blocks (default 5: up to 32)")
    hot.add_argument("--lengths", choices=("all", "geometric", "uniform"), default="all",
                     help="every start samples every length (default: one window, its "
                     "prefixes of 2, 4, ... blocks); or one length per start, 2^n with "
                     "probability 2^-n (Oren's) or all alike")
    hot.add_argument("--encoding", choices=("exact", "rotation"), default="exact",
                     help="count block sequences as they are (default), or a loop entered "
                     "at another block as the same subpath (rotation)")
    hot.add_argument("--rank", choices=("count", "length", "cost"), default="count",
                     help="order by estimated count (default), count x length, or (with "
                     "--costs) count x mean block cost")
    hot.add_argument("--costs", choices=("statements",), default=None,
                     help="weigh blocks by the statements and tests they run (1 to 8): "
                     "costly subpaths are sampled more (Oren 5.1.2)")
    hot.add_argument("--top", type=positive, default=10, metavar="K",
                     help="show the K hottest (default 10)")
    hot.add_argument("--every-repetition", dest="fold", action="store_false",
                     help="show each number of turns of a loop as a row of its own "
                     "(default: a cycle once, at its best-ranked number of turns)")
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
    hot.add_argument("--checkpoint-every", type=positive, default=0, metavar="BLOCKS",
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
    program_arguments(hot)
    hot.set_defaults(handler=command_hot)


def command_hot(args: argparse.Namespace) -> int:
    from rich.console import Console

    from pathprof.subpaths import SubpathSampling

    if not 0.0 < args.confidence < 1.0:
        raise PathprofError("--confidence is a probability strictly between 0 and 1")
    if args.rank == "cost" and args.costs is None:
        raise PathprofError("--rank cost needs --costs statements (block costs to rank by)")
    program = _program(args)
    check_file_destination(args.json_file, "the estimates")
    if args.html_dir:
        check_directory_destination(args.html_dir, "the report")
    sampling = SubpathSampling(source=args.source, include=args.include, omit=args.omit,
                               default_dirs=program.default_dirs, period=args.period,
                               budget=args.memory, longest=args.longest,
                               lengths=args.lengths, encoding=args.encoding, seed=args.seed,
                               exact=args.exact, cache=not args.no_cache,
                               checkpoint_every=args.checkpoint_every, costs=args.costs,
                               cache_dir=args.cache_dir)

    def hottest() -> list[HotSubpath]:
        return sampling.hottest(top=args.top, confidence=args.confidence,
                                one_sided=args.one_sided, rank=args.rank,
                                threshold=args.threshold, fold=args.fold)

    hottest()  # (nothing sampled yet: imports what the estimates need, before the run)
    render = api.renderer("subpaths")  # (before the run, as above)
    if args.html_dir:
        api.renderer("subpaths-html")
    after = AfterTheRun()
    errors = Console(file=after.stderr) if after.stderr is not None else Console(stderr=True)
    live_view = args.live if args.live is not None else errors.is_terminal
    live = None
    if live_view:
        from rich.live import Live

        live = Live(get_renderable=lambda: api.hot_table(
            hottest(), title="Hottest subpaths so far", confidence=args.confidence),
            console=errors, refresh_per_second=2, transient=True)
        live.start()

    def stop_live() -> None:
        if live is not None:
            with after.reporting(), contextlib.suppress(OSError, ValueError):
                live.stop()  # (standard error may be closed by now)

    def report() -> None:
        with after.reporting():
            found = hottest()
            summary = sampling.summary()
            document: SubpathsDocument = {"format": 1, "confidence": args.confidence,
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
                after.write(lambda out: render(found, out, summary=summary,
                                               confidence=args.confidence))
            if args.html_dir:
                try:
                    index = _write_hot_html(document, after.path(args.html_dir),
                                            args.html_dir)
                except PathprofError as err:
                    after.tell(str(err))
                else:
                    shown = os.path.relpath(index, after.cwd or os.curdir)
                    after.write(lambda out: print(f"wrote {shown}", file=out))

    # (a SIGINT or SIGTERM that comes as it reports waits for it: then its death)
    return api.run_measured(program, sampling, _Reporting(report, after, ended=stop_live))


def _write_hot_html(document: SubpathsDocument, directory: str, shown: str) -> str:
    try:
        return api.render_pages("subpaths-html", document, directory,
                          sources=api.subpath_sources(document))
    except OSError as err:
        raise PathprofError(f"cannot write the report to {shown}: "
                            f"{err.strerror or err}") from err
    except ImportError as err:  # what the program left of the import system refused
        raise PathprofError(f"cannot write the report to {shown}: {err}") from err


def add_instrument(commands: _Commands) -> None:
    """``pathprof instrument``: fill the cache of instrumented code."""
    instrument = commands.add_parser(
        "instrument",
        help="instrument the selected source ahead of a run (fills the cache)",
        description="Instrument every selected source file now and write the result to "
        "the cache a later run reads (__pycache__, or pathprof's cache directory where "
        "Python writes no bytecode or one is configured), so the next run starts warm; "
        "lists files pathprof could not instrument. Selects files as `run` does "
        "(default: the current directory). The cache is kept per option set: give the "
        "run's --mode, --metric and --stop-counting (pytest --pathprof: basis).",
    )
    instrument.add_argument("--source", action="append", default=[], metavar="DIR|MODULE")
    instrument.add_argument("--include", action="append", default=[], metavar="PATTERN")
    instrument.add_argument("--omit", action="append", default=[], metavar="PATTERN")
    instrument.add_argument("--mode", choices=("path", "edge"), default=None)
    instrument.add_argument("--metric", choices=("time",), default=None)
    instrument.add_argument("--stop-counting", choices=("never", "basis", "paths"),
                            default=None,
                            help="as the run will: pytest --pathprof's default is basis, "
                            "pathprof run's never (the default here)")
    cache_options(instrument, no_cache=False)
    instrument.set_defaults(handler=command_instrument)


def command_instrument(args: argparse.Namespace) -> int:
    with progress("instrumenting") as advance:
        paths, result = api.warm_cache(
            args.source, args.include, args.omit, mode=args.mode, metric=args.metric,
            stop_counting=args.stop_counting, cache_dir=args.cache_dir, progress=advance)
    places = [name for name, count in (("__pycache__", result.in_pycache),
                                       (_shown(result.cache_dir), result.in_cache_dir))
              if count]
    print(f"{len(paths)} file{'' if len(paths) == 1 else 's'}: {result.instrumented} "
          f"instrumented, {result.cached} already "
          f"cached, {len(result.failed)} could not be"
          + (f"; cached in {' and '.join(places)}" if places else ""))
    for path, why in result.failed:
        print(f"  {os.path.relpath(path)}: {why}", file=sys.stderr)
    return OK


def _shown(path: str) -> str:
    """A directory as the summary names it: relative when under the current one."""
    relative = os.path.relpath(path)
    return path if relative.startswith(os.pardir) else relative
