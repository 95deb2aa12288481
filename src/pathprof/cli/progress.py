"""The progress bar of long commands (``instrument``, ``html``, ``lcov``, ``xml``,
``combine``): the one way the command line shows progress.

The library never draws it: a long operation of :mod:`pathprof.api` takes an optional
callback ``progress(done, total)``, called after each step (a file instrumented, a
function page written, ...), and a command passes the one :func:`progress` yields::

    with progress("writing function pages") as advance:
        api.render("html", coverage, directory, progress=advance)

The bar is drawn on standard error, only when that is a terminal (never when it is
piped or redirected, in a CI job -- ``CI`` set -- or on a dumb terminal), and only
for work that takes a while: it appears at the first step done once the work has run
:data:`SHOW_AFTER` seconds, if steps remain and the work, at its pace so far, takes
at least :data:`LONG_WORK` seconds in all. Quick work never imports rich's progress
module. The bar is transient: it is erased when the work ends, leaving the command's
usual output alone.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["LONG_WORK", "SHOW_AFTER", "progress", "stderr_is_a_terminal"]

#: The bar appears no sooner than this many seconds into the work...
SHOW_AFTER = 0.5
#: ...and only for work that, at its pace so far, takes at least this long.
LONG_WORK = 1.0

#: The clock of the rule above (tests replace it).
_clock: Callable[[], float] = time.monotonic


def stderr_is_a_terminal() -> bool:
    """Whether a progress bar may be drawn: standard error is an interactive terminal
    that can move its cursor, outside CI."""
    if os.environ.get("CI") or os.environ.get("TERM") == "dumb":
        return False
    try:
        return bool(sys.stderr.isatty())
    except (AttributeError, ValueError):  # no stderr, or closed
        return False


def _stderr_console() -> Console:
    from rich.console import Console

    return Console(stderr=True)


@contextlib.contextmanager
def progress(what: str, *, count: bool = True) -> Iterator[Callable[[int, int], None]]:
    """A callback ``advance(done, total)`` for the steps of a long operation, drawing
    ``what`` and a bar on standard error when the work is long and standard error a
    terminal (see the module's docstring); ``count``: also show "done/total" (when a
    step is what the user counts, a file or a page)."""
    if not stderr_is_a_terminal():
        yield _nothing
        return
    started = _clock()
    # the rich Progress and its task, once shown (Any: a list of the two)
    shown: list[Any] = []

    def advance(done: int, total: int) -> None:
        if shown:
            shown[0].update(shown[1], completed=done, total=total)
            return
        if done <= 0 or done >= total:
            return
        elapsed = _clock() - started
        if elapsed < SHOW_AFTER or elapsed * total / done < LONG_WORK:
            return
        from rich.progress import MofNCompleteColumn, Progress

        columns = (*Progress.get_default_columns(), *((MofNCompleteColumn(),) if count else ()))
        bar = Progress(*columns, transient=True, console=_stderr_console())
        shown[:] = [bar, bar.add_task(what, total=total, completed=done)]
        bar.start()

    try:
        yield advance
    finally:
        if shown:
            shown[0].stop()


def _nothing(done: int, total: int) -> None:
    """The callback where no bar is drawn."""
