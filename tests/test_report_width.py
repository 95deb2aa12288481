"""Reports read in a CI log (standard output not a terminal, no COLUMNS) keep every
name, location and label whole: nothing is cut to 80 columns."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

MODULE = '''class SomeQuiteLongClassNameForTesting:
    def a_method_with_a_very_long_descriptive_name(self, value):
        if value > 3:
            return "big"
        return "small"

    def another_method_with_a_very_long_descriptive_name(self, value):
        if value > 3:
            return "big"
        return "small"
'''
PACKAGE = Path("a_rather_long_package_name") / "with_a_subpackage"
FILE = str(PACKAGE / "module_with_long_name.py")
QUALNAMES = ("SomeQuiteLongClassNameForTesting.a_method_with_a_very_long_descriptive_name",
             "SomeQuiteLongClassNameForTesting.another_method_with_a_very_long_descriptive_name")


def _project(tmp_path: Path) -> Path:
    (tmp_path / PACKAGE).mkdir(parents=True)
    (tmp_path / PACKAGE.parent / "__init__.py").write_text("")
    (tmp_path / PACKAGE / "__init__.py").write_text("")
    (tmp_path / FILE).write_text(MODULE)
    (tmp_path / "main.py").write_text(
        "from a_rather_long_package_name.with_a_subpackage.module_with_long_name import (\n"
        "    SomeQuiteLongClassNameForTesting as C)\n"
        "c = C()\nfor v in range(6):\n    c.a_method_with_a_very_long_descriptive_name(v)\n"
        "c.another_method_with_a_very_long_descriptive_name(1)\n")
    (tmp_path / "test_long.py").write_text(
        "import main  # noqa: F401\n\ndef test_nothing():\n    assert True\n")
    return tmp_path


def _run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items()
           if k != "COLUMNS" and not k.startswith(("PATHPROF_", "PYTEST_"))}
    done = subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def _whole(text: str) -> None:
    for qualname in QUALNAMES:
        assert qualname in text
    assert f"{FILE}:2" in text
    assert "…" not in text


def test_cli_reports_keep_names_whole_outside_a_terminal(tmp_path: Path) -> None:
    project = _project(tmp_path)
    _run(project, "-m", "pathprof", "run", "main.py")
    coverage = _run(project, "-m", "pathprof", "coverage", "-m").stdout
    _whole(coverage)
    for qualname, line in zip(QUALNAMES, (2, 7), strict=True):
        # the table's row: location and name on one line, whole
        assert any(f"{FILE}:{line} {qualname}" in row for row in coverage.splitlines())
    report = _run(project, "-m", "pathprof", "report").stdout
    _whole(report)
    assert any(row.startswith(QUALNAMES[0]) and f"{FILE}:2" in row
               for row in report.splitlines())
    counted = _run(project, "-m", "pathprof", "count", "main.py").stderr
    assert QUALNAMES[1].rsplit(".", 1)[1] in counted
    assert "…" not in counted


def test_the_pytest_summary_keeps_names_whole_in_a_log(tmp_path: Path) -> None:
    project = _project(tmp_path)
    done = _run(project, "-m", "pytest", "-p", "no:cacheprovider", "-q",
                "--pathprof=a_rather_long_package_name", "--pathprof-report=term-missing")
    assert any(f"{FILE}:7 {QUALNAMES[1]}" in row for row in done.stdout.splitlines())
    assert "…" not in done.stdout
    per_file = _run(project, "-m", "pytest", "-p", "no:cacheprovider", "-q",
                    "--pathprof=a_rather_long_package_name").stdout
    assert any(row.startswith(f"{FILE} ") for row in per_file.splitlines())


#: Two functions that stop counting (pytest's default): the note that says so is
#: longer than WIDE, 200 columns, and "2 functions" put its break at 200 mid-sentence
STOPPING = '''def two(a, b):
    n = 0
    if a:
        n += 1
    if b:
        n += 2
    return n


def pair(a, b):
    if a:
        a = [a]
    if b:
        b = [b]
    return a, b
'''
STOPPING_TEST = '''import stopping


def test_all():
    # 3 of 4 paths each: their basis (3) is full, so they stop counting, and their
    # paths run are a lower bound
    assert [stopping.two(a, b) for a, b in ((1, 1), (1, 0), (0, 1))] == [3, 1, 2]
    assert stopping.pair(1, 0) == ([1], 0)
    assert stopping.pair(0, 1) == (0, [1])
    assert stopping.pair(1, 1) == ([1], [1])
'''
#: How the notes under the coverage table start and end
NOTES = (("Basis: linearly independent paths", "see docs/commands/coverage.md."),
         ("Paths possible are the acyclic paths", "100% may be out of reach."),
         ("≥ ≤: 2 functions stopped counting", "lines and branches are exact."))


def _stopping_project(tmp_path: Path) -> Path:
    (tmp_path / "stopping.py").write_text(STOPPING)
    (tmp_path / "test_stopping.py").write_text(STOPPING_TEST)
    return tmp_path


def _notes(text: str) -> list[list[str]]:
    """The lines each note under the coverage table takes, in order."""
    lines = text.splitlines()
    found = []
    for first, last in NOTES:
        start = next(i for i, line in enumerate(lines) if line.startswith(first))
        end = next(i for i in range(start, len(lines)) if lines[i].rstrip().endswith(last))
        found.append(lines[start:end + 1])
    return found


def test_the_notes_are_whole_sentences_in_a_log(tmp_path: Path) -> None:
    """In a log (no terminal, no COLUMNS) each note under the table is one line, in
    the pytest summary and from ``pathprof coverage``: the log's window wraps it,
    where a break at column 200 fell mid-sentence ("... are not" / "known. Basis ...")."""
    project = _stopping_project(tmp_path)
    session = _run(project, "-m", "pytest", "-p", "no:cacheprovider", "-q",
                   "--pathprof=stopping").stdout
    command = _run(project, "-m", "pathprof", "coverage").stdout
    for out in (session, command):
        notes = _notes(out)
        assert [len(lines) for lines in notes] == [1, 1, 1], notes
        assert "the paths it ran after that are not known. Basis figures" in notes[2][0]


def test_the_notes_wrap_at_word_boundaries_on_a_terminal(tmp_path: Path) -> None:
    """With a terminal's width (COLUMNS) the notes fit it, broken between words only:
    rejoined, each is the sentence the log shows on one line."""
    project = _stopping_project(tmp_path)
    args = ("-m", "pytest", "-p", "no:cacheprovider", "-q", "--pathprof=stopping")
    whole = [lines[0] for lines in _notes(_run(project, *args).stdout)]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PATHPROF_", "PYTEST_"))}
    narrow = subprocess.run([sys.executable, *args], cwd=project, capture_output=True,
                            env={**env, "COLUMNS": "72"}, text=True, timeout=300)
    assert narrow.returncode == 0, narrow.stdout + narrow.stderr
    wrapped = _notes(narrow.stdout)
    for lines, sentence in zip(wrapped, whole, strict=True):
        assert len(lines) > 1
        assert all(len(line) <= 72 for line in lines)
        assert " ".join(line.strip() for line in lines) == sentence
