"""The small things a careful user hits (issue 23 §4): one clear line, never a
traceback, and nothing raw from the program on the terminal."""

from __future__ import annotations

import sqlite3
import textwrap
from pathlib import Path

import pytest

from pathprof.data import schema, store
from pathprof.exceptions import DataError

from ..test_run import pathprof_cli, project  # noqa: F401  (a fixture)


def test_a_module_that_does_not_exist_is_one_line(tmp_path: Path) -> None:
    result = pathprof_cli(tmp_path, "run", "-m", "no_such_module_here", check=False)
    assert (result.returncode, result.stderr) == (1, "pathprof: no module named "
                                                     "no_such_module_here\n")


def test_a_missing_import_inside_the_module_is_the_programs_error(tmp_path: Path) -> None:
    (tmp_path / "mod.py").write_text("import no_such_dependency\n")
    result = pathprof_cli(tmp_path, "run", "-m", "mod", check=False)
    assert result.returncode == 1
    assert "ModuleNotFoundError: No module named 'no_such_dependency'" in result.stderr


@pytest.mark.parametrize("args", [
    ("run", "--data-file", "", "app.py"), ("report", "--top", "-3"),
    ("report", "--functions", "-1"), ("coverage", "--missed", "-2"),
    ("report", "-o", " "), ("report", "--top", "many")])
def test_bad_arguments_are_usage_errors(project: Path, args: tuple[str, ...]) -> None:  # noqa: F811
    result = pathprof_cli(project, *args, check=False)
    assert result.returncode == 2
    assert "error: argument" in result.stderr
    assert "Traceback" not in result.stderr
    assert not list(project.parent.glob(f"{project.name}.saved*"))


def test_control_characters_of_the_source_never_reach_the_terminal(tmp_path: Path) -> None:
    (tmp_path / "prog.py").write_text(
        'def f(x):\n    if x:\n        s = "\x1b[2J\x07"\n    return x\nf(1)\n')
    pathprof_cli(tmp_path, "run", "prog.py")
    for command in (("report",), ("coverage", "-m"), ("report", "--show-unrun")):
        output = pathprof_cli(tmp_path, *command).stdout
        assert "\x1b" not in output
        assert "\x07" not in output
    assert 's = "\\x1b[2J\\x07"' in pathprof_cli(tmp_path, "report").stdout


def test_a_locked_data_file_says_it_is_locked(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "prog.py").write_text("def f():\n    return 1\nf()\n")
    pathprof_cli(tmp_path, "run", "prog.py")
    monkeypatch.setattr(schema, "LOCK_TIMEOUT", 0.1)
    holder = sqlite3.connect(tmp_path / ".pathprof", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(DataError, match="is locked by another process"):
            store.read(str(tmp_path / ".pathprof"))
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert store.read(str(tmp_path / ".pathprof")).functions  # untouched


def test_no_data_saved_elsewhere_line_when_the_program_changes_directory(tmp_path: Path
                                                                         ) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "prog.py").write_text(textwrap.dedent("""
        import os
        def f():
            return 1
        os.chdir("sub")
        f()
    """))
    result = pathprof_cli(tmp_path, "run", "prog.py")
    assert result.stderr == ""
    assert (tmp_path / ".pathprof").exists()
    assert not (tmp_path / "sub" / ".pathprof").exists()
