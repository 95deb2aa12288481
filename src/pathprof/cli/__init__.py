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


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pathprof",
        description="Exact acyclic path profiles (Ball-Larus) for Python programs.",
    )
    parser.add_argument("--version", action="version", version=f"pathprof {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for add in _COMMANDS:
        add(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
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
