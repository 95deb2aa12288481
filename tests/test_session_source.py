"""A data file records what its runs measured, where they named it, so every later
report counts what the run's own report counted (issue 50: ``pathprof coverage`` and
``pathprof html`` after ``pytest --pathprof=PKG`` left out the never-imported files that
the session's table counted, 81.8 % in the session and 100 % after, and LCOV/XML left
them out too)."""

from __future__ import annotations

import json
import re
import sqlite3
import textwrap
from pathlib import Path

import pytest

from pathprof.data import combining, store
from pathprof.data.measurement import RunInfo, Selection
from pathprof.exceptions import DataError

from .test_pytest_plugin import pytest_in
from .test_run import pathprof_cli


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "pkg").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "core.py").write_text(textwrap.dedent("""
        def sign(x):
            if x < 0:
                return -1
            return 1
    """))
    (root / "pkg" / "unused.py").write_text(textwrap.dedent("""
        def lonely(a):
            if a:
                return 1
            return 2
    """))
    (root / "tests" / "test_core.py").write_text(
        "from pkg.core import sign\n\n\ndef test_sign():\n    assert sign(2) == 1\n")
    return root


def _total(output: str) -> str:
    (line,) = [line for line in output.splitlines() if line.startswith("TOTAL")]
    return " ".join(line.split())


def test_every_report_after_the_session_counts_what_the_session_counted(
        tmp_path: Path) -> None:
    root = _project(tmp_path)
    session = pytest_in(root, "--pathprof=pkg", "--pathprof-report=term",
                        "--pathprof-report=json:session.json", "tests")
    assert session.returncode == 0, session.stdout + session.stderr
    assert "pkg/unused.py (never imported)" in session.stdout
    in_session = _total(session.stdout)
    assert in_session == "TOTAL 4 1 3 25.0% 1/4 25.0%"
    after = pathprof_cli(root, "coverage")
    assert _total(after.stdout) == in_session
    assert "pkg/unused.py" in after.stdout
    pathprof_cli(root, "coverage", "--format", "json", "-o", "after.json")
    assert (json.loads((root / "after.json").read_text())["totals"]
            == json.loads((root / "session.json").read_text())["totals"])
    pathprof_cli(root, "html")
    index = (root / "htmlpathprof" / "index.html").read_text()
    assert "unused.py" in index
    pathprof_cli(root, "lcov", "-o", "cov.lcov")
    lcov = (root / "cov.lcov").read_text()
    assert f"SF:{root / 'pkg' / 'unused.py'}" in lcov
    pathprof_cli(root, "xml", "-o", "cov.xml")
    assert re.search(r'filename="[^"]*unused\.py"', (root / "cov.xml").read_text())
    # an explicit source still wins
    narrowed = pathprof_cli(root, "coverage", "--source", str(root / "pkg" / "core.py"))
    assert "unused.py" not in narrowed.stdout


def _run() -> RunInfo:
    return RunInfo(1.0, ["prog"], "3.11.7", "path", None, 1, "host")


def test_selections_are_kept_added_to_and_combined(tmp_path: Path) -> None:
    data = tmp_path / "d.pathprof"
    first = Selection(("/src/a",), ("*/a/*",), ("*/tests/*",))
    second = Selection(("pkg",))
    store.write(str(data), _run(), [], {}, selections=[first])
    assert store.read(str(data)).selections == [first]
    store.write(str(data), _run(), [], {}, append=True, selections=[second, first])
    assert store.read(str(data)).selections == [first, second]
    other = tmp_path / "e.pathprof"
    store.write(str(other), _run(), [], {}, selections=[Selection(("/src/b",))])
    combining.combine(str(data), [str(other)])
    assert store.read(str(data)).selections == [first, second, Selection(("/src/b",))]
    store.write(str(data), _run(), [], {})  # replaced: what this run named only
    assert store.read(str(data)).selections == []


@pytest.mark.parametrize("value", ['{"source": ["a"]}', '[{"source": []}]', '[{"source": [1]}]',
                                   '[{"source": ["a"], "x": []}]', "[" * 100_000, "not json"])
def test_a_damaged_record_of_selections_is_reported_and_the_file_kept(
        tmp_path: Path, value: str) -> None:
    data = tmp_path / "d.pathprof"
    store.write(str(data), _run(), [], {}, selections=[Selection(("pkg",))])
    with sqlite3.connect(data) as db:
        db.execute("UPDATE meta SET value = ? WHERE key = 'selections'", (value,))
    before = data.read_bytes()
    with pytest.raises(DataError, match="selections"):
        store.read(str(data))
    with pytest.raises(DataError):
        store.write(str(data), _run(), [], {}, append=True,
                    selections=[Selection(("other",))])
    assert data.read_bytes() == before
