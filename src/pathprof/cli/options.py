"""What several commands share: argument types, option groups, the configuration's
defaults, the exit statuses of checks (the progress bar: :mod:`.progress`)."""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathprof.config import Threshold

__all__ = ["CHECK_FAILED", "ERR", "OK", "USAGE", "apply_config", "cache_options",
           "data_file_option",
           "fail_under_status", "file_name", "positive", "program_arguments",
           "quiet_stdout", "report_filter_options", "selection_options", "whole_number"]

#: The exit statuses of pathprof's commands (docs/exit-status.md): 0 success;
#: 1 an error (a data file that cannot be read, a file that cannot be written...);
#: 2 bad usage (argparse's status, as Python's own command line); 3 a check asked for
#: failed: ``--fail-under`` (total basis path coverage below the threshold) or
#: ``diff --fail-on-change``. A command that runs a program exits with the program's
#: status instead.
OK, ERR, USAGE, CHECK_FAILED = 0, 1, 2, 3

def whole_number(text: str) -> int:
    """An argument that counts something: a whole number, not negative."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text} is negative")
    return value


def positive(text: str) -> int:
    """A number of things there must be at least one of."""
    value = whole_number(text)
    if value == 0:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def file_name(text: str) -> str:
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty file name")
    return text


def data_file_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data-file", default=None, metavar="FILE", type=file_name,
                        help="the data file (default: .pathprof, or tool.pathprof.data_file "
                        "in pyproject.toml)")


def report_filter_options(parser: argparse.ArgumentParser) -> None:
    """--include, --omit of the commands that report on a data file."""
    parser.add_argument("--include", action="append", default=[], dest="report_include",
                        metavar="PATTERN",
                        help="report only files matching this pattern (repeatable)")
    parser.add_argument("--omit", action="append", default=[], dest="report_omit",
                        metavar="PATTERN",
                        help="leave out files matching this pattern (repeatable)")


def selection_options(parser: argparse.ArgumentParser, verb: str) -> None:
    """--source, --include, --omit of the commands that run a program."""
    parser.add_argument("--source", action="append", default=[], metavar="DIR|MODULE",
                        help=f"{verb} code in this directory or package (repeatable); "
                        "default: the script's directory, or the current one for -m and "
                        "console scripts")
    parser.add_argument("--include", action="append", default=[], metavar="PATTERN",
                        help=f"{verb} only files matching this pattern (repeatable)")
    parser.add_argument("--omit", action="append", default=[], metavar="PATTERN",
                        help=f"do not {verb} files matching this pattern (repeatable)")


def cache_options(parser: argparse.ArgumentParser, *, no_cache: bool = True) -> None:
    """--cache-dir (and --no-cache) of the commands that instrument."""
    parser.add_argument("--cache-dir", default=None, metavar="DIR", type=file_name,
                        help="cache instrumented code in DIR, always (default: "
                        "PATHPROF_CACHE_DIR, else tool.pathprof.cache_dir, else __pycache__ "
                        "where Python writes bytecode and .pathprof_cache beside "
                        "pyproject.toml where it does not)")
    if no_cache:
        parser.add_argument("--no-cache", action="store_true",
                            help="do not read or write cached instrumented code")


def program_arguments(parser: argparse.ArgumentParser) -> None:
    """--cache-dir, --no-cache, -m, PROGRAM and its ARGS, last on the command line."""
    cache_options(parser)
    parser.add_argument("-m", dest="module", action="store_true",
                        help="PROGRAM is a module name, run as with python -m")
    parser.add_argument("program", metavar="PROGRAM")
    parser.add_argument("args", nargs=argparse.REMAINDER, metavar="ARGS")


def apply_config(args: argparse.Namespace) -> None:
    """Fill what the command line left unset from ``[tool.pathprof]``."""
    from pathprof.config import Threshold, configured_cache_dir, read_config

    config = read_config()
    if hasattr(args, "cache_dir"):
        args.cache_dir = configured_cache_dir(config, args.cache_dir)
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
    if hasattr(args, "conditions") and args.conditions is None:
        args.conditions = config.conditions
    if hasattr(args, "fail_under"):
        args.fail_under = Threshold.choose("--fail-under", args.fail_under, config)
    if hasattr(args, "fail_under_mcdc"):
        args.fail_under_mcdc = Threshold.choose("--fail-under-mcdc", args.fail_under_mcdc,
                                                config, "fail_under_mcdc")


def fail_under_status(percent: float, fail_under: Threshold | None, *,
                      measured: bool = True, what: str = "total basis path coverage") -> int:
    """Exit status for ``--fail-under``: :data:`CHECK_FAILED` (3) when the
    total basis path coverage is below the threshold, or nothing was measured (whose
    0 of 0 paths would meet any threshold; coverage.py has no data to report then),
    with a message on stderr naming the setting it came from; otherwise 0."""
    if fail_under is None:
        return OK
    if not measured:
        print(f"pathprof: nothing was measured: no {what} to meet "
              f"{fail_under.setting}", file=sys.stderr)
        return CHECK_FAILED
    if percent >= fail_under.percent:
        return OK
    print(f"pathprof: {what} {percent:.2f}% is below {fail_under.setting}", file=sys.stderr)
    return CHECK_FAILED


def quiet_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass
