"""The commands that manage data files: ``combine`` and ``erase``."""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

from pathprof import api
from pathprof.cli.options import OK, data_file_option
from pathprof.cli.progress import progress
from pathprof.exceptions import PathprofError

if TYPE_CHECKING:
    from typing import TypeAlias

    #: the subcommands' parsers, each command's added to them
    _Commands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"

__all__ = ["add_combine", "add_erase"]


def add_combine(commands: _Commands) -> None:
    """``pathprof combine``: the data files beside the data file, into it."""
    combine = commands.add_parser(
        "combine",
        help="add data files of other processes into the data file",
        description="Add data files written by other processes (forked children still "
        "running when their parent saved, or runs saved aside) into the data file.",
    )
    data_file_option(combine)
    combine.add_argument("files", nargs="*", metavar="FILE",
                         help="files to add (default: DATA_FILE.* beside the data file, less "
                         "SQLite journals and .tmp, .lock and .claim files)")
    combine.set_defaults(handler=command_combine)


def command_combine(args: argparse.Namespace) -> int:
    files = args.files or api.combinable_files(args.data_file)
    notes: list[str] = []
    with progress("combining data files", count=False) as advance:  # (steps, not files)
        # (files a combine killed part way had claimed are finished too: the notes)
        combined = api.combine(args.data_file, files, progress=advance, note=notes.append,
                               listed=not args.files)
    for note in notes:
        print(f"pathprof: {note}", file=sys.stderr)
    if not (files or combined or notes):
        raise PathprofError(f"no data files to combine beside {args.data_file}")
    print(f"combined {len(combined)} data file{'s' * (len(combined) != 1)} into "
          f"{args.data_file}")
    for file, qualname, versions in (api.source_conflicts(args.data_file) if combined
                                     else ()):  # (another combine may be making the file)
        print(f"pathprof: {os.path.relpath(file)}: {qualname} was measured from {versions} "
              "versions of its source; their paths are kept apart", file=sys.stderr)
    return OK


def add_erase(commands: _Commands) -> None:
    """``pathprof erase``: the data file and the files beside it."""
    erase = commands.add_parser(
        "erase", help="remove the data file",
        description="Remove the data file and the data files other processes left beside it "
        "(DATA_FILE.*), to start measuring afresh. A file that is not a pathprof data file is "
        "left untouched.")
    data_file_option(erase)
    erase.set_defaults(handler=command_erase)


def command_erase(args: argparse.Namespace) -> int:
    api.erase(args.data_file)
    return OK
