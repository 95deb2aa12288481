"""The console the text reports are printed on.

On a terminal, rich fits a report to the window. Anywhere else -- a CI log, a pipe,
a file (``-o``) -- nobody resizes the window, and a log is read, not fitted to a
screen: the console is :data:`WIDE` columns wide unless ``COLUMNS`` says otherwise,
so names, locations and labels come out whole (tables still take only the room they
need, and a column that must wrap folds its text: it never cuts it); lines of text (a
headline, the notes under a table) are not wrapped there at all: the window the log is
read in wraps them, where a break at column 200 would fall mid-sentence.
"""

from __future__ import annotations

import os
import sys
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["WIDE", "console_for", "report_console"]

#: Columns of a report that is not printed on a terminal.
WIDE = 200


def report_console(file: IO[str] | None = None, *, stderr: bool = False) -> Console:
    """A rich console for a text report written to ``file`` (default: standard
    output, or standard error with ``stderr``)."""
    from rich.console import Console

    target = file if file is not None else (sys.stderr if stderr else sys.stdout)
    try:
        terminal = target.isatty()
    except (AttributeError, ValueError):
        terminal = False
    log = not terminal and not os.environ.get("COLUMNS")
    return Console(file=file, stderr=stderr, width=WIDE if log else None, soft_wrap=log)


def console_for(out: IO[str] | Console | None) -> Console:
    """The rich console a text renderer prints on: ``out`` itself if it is one (the
    pytest plugin's, sized to its terminal), else :func:`report_console` on the stream."""
    from rich.console import Console

    return out if isinstance(out, Console) else report_console(out)
