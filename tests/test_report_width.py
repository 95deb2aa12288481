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
