"""What ``hot`` and ``count`` need around the program's run: the checks, before it
runs, that their reports can be written (so a run is not wasted), and the reporting
after it (:class:`AfterTheRun`), whatever the program did to imports and streams."""

from __future__ import annotations

import builtins
import contextlib
import errno
import os
import sys
from collections.abc import Callable, Iterator
from typing import TextIO

from pathprof.cli.options import quiet_stdout
from pathprof.exceptions import PathprofError

__all__ = ["AfterTheRun", "check_directory_destination", "check_file_destination"]


def check_file_destination(path: str | None, what: str) -> None:
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


def check_directory_destination(directory: str, what: str) -> None:
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


class AfterTheRun:
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
            quiet_stdout()
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
