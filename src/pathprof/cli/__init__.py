"""The ``pathprof`` command line: parses arguments and calls :mod:`pathprof.api`.

One module per group of commands, each command a parser-building function
(``add_<command>``) and a handler, which calls the API: :mod:`.program` (``run``,
``count``, ``hot``, ``instrument``), :mod:`.reports` (``report``, ``coverage``,
``html``, ``lcov``, ``xml``, ``diff``, ``plan``), :mod:`.datafile` (``combine``,
``erase``); :mod:`.options` holds what they share, :mod:`.progress` the progress bar
of long commands.

Exit statuses (:mod:`.options`, docs/exit-status.md): 0 success, 1 a pathprof
error (message printed, no traceback), 2 bad usage, 3 a check asked for failed
(``--fail-under``, ``diff --fail-on-change``); a command that runs a program exits
with the program's status.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from pathprof import api
from pathprof.cli import datafile, program, reports
from pathprof.cli.options import CHECK_FAILED, ERR, OK, USAGE, apply_config, quiet_stdout
from pathprof.exceptions import PathprofError
from pathprof.version import __version__

__all__ = ["CHECK_FAILED", "DIFFERS", "ERR", "FAIL_UNDER", "OK", "USAGE", "main"]

#: The statuses of the two checks (both :data:`CHECK_FAILED`).
FAIL_UNDER = DIFFERS = CHECK_FAILED

#: The commands, in the order ``pathprof --help`` lists them.
_COMMANDS = (reports.add_plan, program.add_run, program.add_count, program.add_hot,
             program.add_instrument, reports.add_report, reports.add_coverage,
             reports.add_html, reports.add_export, reports.add_diff, datafile.add_combine,
             datafile.add_erase)


def _parser() -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    """The top-level parser, and each command's by name."""
    parser = argparse.ArgumentParser(
        prog="pathprof",
        description="Exact acyclic path profiles (Ball-Larus) for Python programs.",
    )
    parser.add_argument("--version", action="version", version=f"pathprof {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for add in _COMMANDS:
        add(commands)
    return parser, dict(commands.choices)


def _parse(argv: Sequence[str] | None) -> tuple[argparse.ArgumentParser, argparse.Namespace]:
    """The top-level parser and the arguments, or a usage error (exit status
    :data:`USAGE`) from the parser they went wrong in: an option a command does not
    know is that command's error, shown with the command's usage (argparse would
    hand it up to the top-level parser, whose usage names no option of the command)."""
    parser, commands = _parser()
    given = sys.argv[1:] if argv is None else list(argv)
    args, unknown = parser.parse_known_args(given)
    if unknown:
        blamed = commands.get(args.command, parser)
        if _before_command(unknown[0], args.command, given):
            blamed = parser  # pathprof --bogus coverage
        blamed.error(f"unrecognized arguments: {' '.join(unknown)}")
    return parser, args


def _before_command(argument: str, command: str | None, given: list[str]) -> bool:
    """Whether ``argument`` came before the command's name on the command line."""
    if command is None or command not in given or argument not in given:
        return True
    return given.index(argument) < given.index(command)


def main(argv: Sequence[str] | None = None) -> int:
    parser, args = _parse(argv)
    if args.command is None:
        parser.print_help()
        return USAGE
    if args.command not in ("plan", "diff"):
        try:
            apply_config(args)
        except PathprofError as err:
            print(f"pathprof: {err}", file=sys.stderr)
            return ERR
    try:
        # pathprof's own work, not the program's: what it runs of a module measured
        # in place is not counted (a command that runs a program releases it there)
        with api.command_scope() as finish:
            status = args.handler(args)
        return finish(status)
    except PathprofError as err:
        print(f"pathprof: {err}", file=sys.stderr)
        return ERR
    except BrokenPipeError:
        # The reader went away (``pathprof report | head``): end quietly, as Unix
        # tools do. Python would complain again when it flushes stdout at exit,
        # so stdout is pointed at /dev/null first (the recipe of Python's signal docs).
        quiet_stdout()
        return OK


if __name__ == "__main__":
    sys.exit(main())
