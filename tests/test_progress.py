"""The progress bar of long commands (pathprof.cli.progress): drawn on a terminal for
long work only, erased at its end, never where standard error is not a terminal.

The clock of the rule is replaced by one that moves :data:`STEP` seconds each time it
is read (once at the start, then once per step until the bar shows), so "long" and
"quick" work are the same on any machine: at 0.125 s a step, the bar shows at the
4th step (0.5 s) when there are at least 8 steps (1 s in all)."""

from __future__ import annotations

import io
import itertools
import os
import pty
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from rich.console import Console

from pathprof.cli import OK, main
from pathprof.cli import progress as progress_module
from pathprof.cli.progress import progress

from .test_run import pathprof_cli

STEP = 0.125
MANY = 25  # modules of the big project, a function each
ERASED = "\r\x1b[1A\x1b[2K"  # rich's transient end: back up a line, erase it


class Terminal(io.StringIO):
    """Standard error as a terminal (what the bar is drawn on, kept)."""

    def isatty(self) -> bool:
        return True


def _frames(drawn: str) -> list[str]:
    """The bar's frames as text: escape sequences taken out, one per redraw."""
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", drawn)
    return [" ".join(frame.split()) for frame in re.split(r"[\r\n]", plain) if frame.strip()]


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Callable[[float], None]:
    """Sets the seconds each reading of the progress rule's clock moves."""

    def set_step(step: float) -> None:
        ticks = itertools.count()
        monkeypatch.setattr(progress_module, "_clock", lambda: next(ticks) * step)

    set_step(STEP)
    return set_step


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch, clock: Callable[[float], None]) -> Terminal:
    """A terminal, outside CI, that keeps what is drawn on it; a test makes it standard
    error with :func:`_on_stderr` (pytest sets ``sys.stderr`` again between a fixture
    and the test)."""
    shown = Terminal()
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    monkeypatch.setattr(progress_module, "_stderr_console",
                        lambda: Console(file=sys.stderr, force_terminal=True, width=120))
    return shown


def _on_stderr(monkeypatch: pytest.MonkeyPatch, stream: io.StringIO) -> None:
    monkeypatch.setattr(sys, "stderr", stream)


def _steps(total: int, what: str = "working", **options: bool) -> None:
    with progress(what, **options) as advance:
        for done in range(1, total + 1):
            advance(done, total)


# -- The rule -----------------------------------------------------------------------


def test_long_work_shows_a_bar_from_half_a_second_and_erases_it(
        terminal: Terminal, monkeypatch: pytest.MonkeyPatch) -> None:
    _on_stderr(monkeypatch, terminal)
    _steps(30)
    drawn = terminal.getvalue()
    frames = _frames(drawn)
    assert re.fullmatch(r"working \S+ 13% \S+ 4/30", frames[0])  # at 0.5 s: 4 steps
    assert re.fullmatch(r"working \S+ 100% \S+ 30/30", frames[-1])
    assert drawn.endswith(ERASED)  # transient: nothing of it is left on the screen


def test_quick_work_shows_nothing_however_many_steps(
        terminal: Terminal, clock: Callable[[float], None],
        monkeypatch: pytest.MonkeyPatch) -> None:
    _on_stderr(monkeypatch, terminal)
    _steps(7)  # 7 x 0.125 s: under a second in all
    clock(0.001)
    _steps(500)  # 0.5 s in all: never half a second with steps left
    assert terminal.getvalue() == ""


def test_a_few_slow_steps_show_a_bar(terminal: Terminal, clock: Callable[[float], None],
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    _on_stderr(monkeypatch, terminal)
    clock(2.0)  # 3 data files of 2 s each: a bar, from the first
    _steps(3, "combining data files", count=False)
    frames = _frames(terminal.getvalue())
    assert re.fullmatch(r"combining data files \S+ 33% \S+", frames[0])  # no 1/3
    assert re.fullmatch(r"combining data files \S+ 100% \S+", frames[-1])


@pytest.mark.parametrize("where", ["a pipe", "CI", "a dumb terminal"])
def test_no_bar_where_stderr_is_not_an_interactive_terminal(
        where: str, terminal: Terminal, monkeypatch: pytest.MonkeyPatch) -> None:
    piped = io.StringIO()
    _on_stderr(monkeypatch, piped if where == "a pipe" else terminal)
    if where == "CI":
        monkeypatch.setenv("CI", "true")
    elif where == "a dumb terminal":
        monkeypatch.setenv("TERM", "dumb")
    _steps(1000)
    assert (terminal.getvalue(), piped.getvalue()) == ("", "")


def test_the_bar_is_erased_when_the_work_fails(terminal: Terminal,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    _on_stderr(monkeypatch, terminal)
    def fail_halfway() -> None:
        with progress("writing") as advance:
            for done in range(1, 11):
                advance(done, 20)
            raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        fail_halfway()
    assert _frames(terminal.getvalue())[-1].endswith("10/20")
    assert terminal.getvalue().endswith(ERASED)


# -- The commands -------------------------------------------------------------------


def _write_project(directory: Path, modules: int) -> Path:
    directory.mkdir()
    calls = []
    for i in range(modules):
        (directory / f"m{i:02}.py").write_text(
            f"def f{i}(x):\n    if x:\n        return 1\n    return 2\n")
        calls.append(f"import m{i:02}\nm{i:02}.f{i}({i % 2})\n")
    (directory / "app.py").write_text("".join(calls))
    pathprof_cli(directory, "run", "app.py")
    return directory


@pytest.fixture(scope="module")
def projects(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A project of 25 modules and one of 3, each measured once (a function a module)."""
    root = tmp_path_factory.mktemp("progress")
    return {"big": _write_project(root / "big", MANY),
            "small": _write_project(root / "small", 3)}


@pytest.fixture
def big(projects: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    copy = tmp_path / "big"
    shutil.copytree(projects["big"], copy)
    monkeypatch.chdir(copy)
    return copy


@pytest.fixture
def small(projects: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    copy = tmp_path / "small"
    shutil.copytree(projects["small"], copy)
    monkeypatch.chdir(copy)
    return copy


def _combinable(project: Path, parts: int) -> None:
    data = project / ".pathprof"
    for part in range(parts):
        shutil.copy(data, project / f".pathprof.part{part}")
    data.unlink()


#: command, what its bar says, its steps in the big project, its summary there
COMMANDS = [
    (["html", "-d", "report"], "writing function pages", MANY, "wrote report/index.html\n"),
    (["lcov"], "writing coverage.lcov", MANY, "wrote coverage.lcov: lines 66.67% (50 of 75), "
     "branches 50.00% (25 of 50), functions 100.00% (25 of 25), paths 50.00% (25 of 50)\n"),
    (["xml", "-o", "cov.xml"], "writing cov.xml", MANY, "wrote cov.xml: lines 66.67% (50 of "
     "75), branches 50.00% (25 of 50), functions 100.00% (25 of 25), paths 50.00% (25 of 50)\n"),
    (["instrument", "--cache-dir", "cache"], "instrumenting", MANY + 1,
     f"{MANY + 1} files: {MANY + 1} instrumented, 0 already cached, 0 could not be; cached "
     "in cache\n"),
]


@pytest.mark.parametrize(("command", "what", "steps", "summary"), COMMANDS,
                         ids=[c[0][0] for c in COMMANDS])
def test_a_long_command_shows_its_steps_on_a_terminal(
        command: list[str], what: str, steps: int, summary: str, big: Path,
        terminal: Terminal, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    _on_stderr(monkeypatch, terminal)
    assert main(command) == OK
    drawn = terminal.getvalue()
    frames = _frames(drawn)
    assert re.fullmatch(rf"{re.escape(what)} \S+ {100 * 4 // steps}% \S+ 4/{steps}", frames[0])
    assert re.fullmatch(rf"{re.escape(what)} \S+ 100% \S+ {steps}/{steps}", frames[-1])
    assert drawn.endswith(ERASED)
    assert capsys.readouterr().out == summary  # the usual output, alone


def test_combine_shows_its_steps_on_a_terminal(big: Path, terminal: Terminal,
                                               capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    _on_stderr(monkeypatch, terminal)
    _combinable(big, 5)  # 10 steps: each file read, then added
    assert main(["combine"]) == OK
    frames = _frames(terminal.getvalue())
    assert re.fullmatch(r"combining data files \S+ 40% \S+", frames[0])  # 4 of 10
    assert re.fullmatch(r"combining data files \S+ 100% \S+", frames[-1])
    assert terminal.getvalue().endswith(ERASED)
    assert capsys.readouterr().out == "combined 5 data files into .pathprof\n"


@pytest.mark.parametrize(("command", "what", "steps", "summary"), COMMANDS,
                         ids=[c[0][0] for c in COMMANDS])
def test_a_short_command_shows_nothing_on_a_terminal(
        command: list[str], what: str, steps: int, summary: str, small: Path,
        terminal: Terminal, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    _on_stderr(monkeypatch, terminal)
    assert main(command) == OK  # 3 or 4 steps at the same pace: under a second
    assert terminal.getvalue() == ""
    assert capsys.readouterr().out != ""


@pytest.mark.parametrize(("command", "what", "steps", "summary"), COMMANDS,
                         ids=[c[0][0] for c in COMMANDS])
def test_a_piped_run_prints_exactly_what_it_did_before(
        command: list[str], what: str, steps: int, summary: str, big: Path) -> None:
    done = pathprof_cli(big, *command)
    assert (done.stdout, done.stderr) == (summary, "")


def test_a_piped_combine_prints_exactly_what_it_did_before(big: Path) -> None:
    _combinable(big, 3)
    done = pathprof_cli(big, "combine")
    assert (done.stdout, done.stderr) == ("combined 3 data files into .pathprof\n", "")


def test_quick_work_on_a_real_terminal_draws_nothing(big: Path) -> None:
    """No clock replaced, a real terminal: writing 25 pages takes under a second (a
    slow machine may take longer, and show a bar: then it must be erased)."""
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "120"}
    env.pop("CI", None)
    leader, follower = pty.openpty()
    try:
        done = subprocess.run([sys.executable, "-m", "pathprof", "html", "-d", "report"],
                              cwd=big, env=env, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=follower, text=True, timeout=120)
    finally:
        os.close(follower)
    drawn = b""
    try:
        while chunk := os.read(leader, 65536):
            drawn += chunk
    except OSError:  # the terminal's other side closed: all was read
        pass
    finally:
        os.close(leader)
    assert done.returncode == OK
    assert done.stdout == "wrote report/index.html\n"
    assert drawn == b"" or drawn.decode().endswith(ERASED), drawn
