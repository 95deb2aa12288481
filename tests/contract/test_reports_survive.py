"""``pathprof hot`` and ``pathprof count`` report what the run measured whatever the
program did to the process on its way out, and whatever became of the report's
destination: one line on stderr for what could not be written, the report
written where it can be, and the program's own exit status."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from . import WORK

PROGRAM = """
    import os
    import sys
""" + WORK + """
    print(work(30))
"""

#: What the program does last, before exiting with status 3.
ENDINGS = {
    "an import blocker": """
        class Frozen:
            def find_spec(self, name, path=None, target=None):
                raise ImportError(f"imports frozen: {name}")

        sys.meta_path.insert(0, Frozen())
    """,
    "an __import__ that refuses": """
        import builtins

        def refuse(name, *args, **kwargs):
            raise ImportError(f"no imports: {name}")

        builtins.__import__ = refuse
    """,
    "a closed sys.stderr": """
        sys.stderr.close()
    """,
    # fd 2 closed, and a file of the program's takes its number: nothing pathprof
    # says may go into that file
    "stderr closed to the last descriptor": """
        sys.stderr.close()
        os.close(2)
        log = open("log.txt", "w")
        assert log.fileno() == 2
        log.write("the program's log\\n")
        log.flush()
    """,
}


def _program(directory: Path, ending: str = "", name: str = "prog.py") -> None:
    (directory / name).write_text(textwrap.dedent(PROGRAM) + textwrap.dedent(ending)
                                  + "sys.exit(3)\n")


def _pathprof(directory: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("PATHPROF_") and k != "PYTHONDONTWRITEBYTECODE"}
    env["COLUMNS"] = "140"
    return subprocess.run([sys.executable, "-m", "pathprof", *args], cwd=directory,
                          env=env, capture_output=True, text=True, timeout=300)


def _lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


COMMANDS = {
    "hot": ("hot", "--no-live", "--period", "10", "--seed", "1"),
    "hot --live": ("hot", "--live", "--period", "10", "--seed", "1"),
    "count": ("count",),
}


@pytest.mark.parametrize("ending", list(ENDINGS), ids=list(ENDINGS))
@pytest.mark.parametrize("command", list(COMMANDS), ids=list(COMMANDS))
def test_the_report_survives_what_the_program_leaves_behind(
        tmp_path: Path, command: str, ending: str) -> None:
    """What reporting imports is imported before the run, and the import system is as
    pathprof found it while it reports; with standard error closed, the table goes
    to standard output and a line says so on the original standard error, if it is
    still there."""
    _program(tmp_path, ENDINGS[ending])
    done = _pathprof(tmp_path, *COMMANDS[command], "prog.py")
    assert done.returncode == 3, done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    assert "lost sys.stderr" not in done.stdout + done.stderr
    table = "Hottest subpaths" if command.startswith("hot") else "statements counted"
    if "closed" not in ending:
        assert done.stdout == "300\n"
        assert table in done.stderr
        assert not [line for line in _lines(done.stderr) if line.startswith("pathprof:")]
        return
    assert done.stdout.startswith("300\n")
    assert table in done.stdout
    if ending == "a closed sys.stderr":
        assert _lines(done.stderr) == [
            "pathprof: the program closed standard error: the report is on standard "
            "output"]
    else:  # fd 2 is the program's file now: pathprof leaves it alone
        assert done.stderr == ""
        assert (tmp_path / "log.txt").read_text() == "the program's log\n"


@pytest.mark.parametrize("command", ["hot", "count"])
def test_json_on_standard_output_survives_an_import_blocker(tmp_path: Path,
                                                             command: str) -> None:
    _program(tmp_path, ENDINGS["an import blocker"])
    done = _pathprof(tmp_path, *COMMANDS[command], "--json", "-", "prog.py")
    assert done.returncode == 3, done.stderr
    assert done.stderr == ""
    printed, document = done.stdout.split("\n", 1)
    assert printed == "300"
    assert json.loads(document)


@pytest.mark.parametrize(("command", "option", "destination", "why"), [
    ("hot", "--json", "missing/hot.json", "No such file or directory"),
    ("hot", "--json", "a_directory", "Is a directory"),
    ("hot", "--json", "a_file/hot.json", "Not a directory"),
    ("hot", "--html", "a_file/report", "Not a directory"),
    ("hot", "--html", "a_file", "Not a directory"),
    ("count", "--json", "missing/counts.json", "No such file or directory"),
])
def test_a_destination_that_cannot_be_written_is_refused_before_the_run(
        tmp_path: Path, command: str, option: str, destination: str, why: str) -> None:
    """Checked before the program runs, so that no run is spent on a report that
    cannot be kept: one line, and the program does not run."""
    _program(tmp_path)
    (tmp_path / "a_directory").mkdir()
    (tmp_path / "a_file").write_text("")
    done = _pathprof(tmp_path, command, option, destination, "prog.py")
    assert done.returncode == 1
    assert done.stdout == ""  # the program did not run
    what = {"--html": "the report", "count": "the counts"}.get(option) or {
        "count": "the counts"}.get(command, "the estimates")
    assert _lines(done.stderr) == [
        f"pathprof: cannot write {what} to {destination}: {why}; the program was not run"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a_directory", "a_file",
                                                           "prog.py"]


#: The program makes its report's destination unwritable while it runs: the
#: directory the report goes in becomes a plain file.
TAKES_THE_DESTINATION = """
    os.rmdir("out")
    open("out", "w").close()
"""


@pytest.mark.parametrize(("command", "options"), [
    ("hot", ("--json", "out/hot.json")),
    ("hot", ("--html", "out/report")),
    ("hot", ("--json", "out/hot.json", "--html", "out/report")),
    ("count", ("--json", "out/counts.json")),
])
def test_a_destination_lost_during_the_run_is_one_line_and_the_table_is_printed(
        tmp_path: Path, command: str, options: tuple[str, ...]) -> None:
    _program(tmp_path, TAKES_THE_DESTINATION)
    (tmp_path / "out").mkdir()
    done = _pathprof(tmp_path, *COMMANDS[command], *options, "prog.py")
    assert done.returncode == 3  # the program's own
    assert done.stdout == "300\n"
    assert "Traceback" not in done.stderr
    table = "Hottest subpaths" if command == "hot" else "statements counted"
    assert table in done.stderr
    said = [line for line in _lines(done.stderr) if line.startswith("pathprof:")]
    assert len(said) == len(options) // 2, done.stderr
    for line, destination in zip(said, options[1::2], strict=True):
        assert line.startswith(("pathprof: cannot write out/hot.json: ",
                                "pathprof: cannot write out/counts.json: ",
                                "pathprof: cannot write the report to out/report: "))
        assert destination in line


@pytest.mark.parametrize(("command", "options"), [
    ("hot", ("--json", "hot.json", "--html", "report")),
    ("count", ("--json", "counts.json")),
])
def test_destinations_stay_where_they_were_when_the_program_moves(
        tmp_path: Path, command: str, options: tuple[str, ...]) -> None:
    """A relative ``--json`` or ``--html`` is where it was checked, before the run,
    whatever directory the program ends in."""
    _program(tmp_path, """
        os.mkdir("elsewhere")
        os.chdir("elsewhere")
    """)
    done = _pathprof(tmp_path, *COMMANDS[command], *options, "prog.py")
    assert done.returncode == 3, done.stderr
    assert json.loads((tmp_path / options[1]).read_text())
    if "--html" in options:
        assert (tmp_path / "report" / "index.html").exists()
        assert "wrote report/index.html" in done.stderr
    assert list((tmp_path / "elsewhere").iterdir()) == []
