"""The end of a measured session (``pytest/session.py``): what it shows and the status
it makes survive letting go of the path coverage once shown."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

from pathprof.pytest.session import CoverageReports

from .test_run import pathprof_cli


def _shown(reports: CoverageReports) -> list[str]:
    lines: list[str] = []
    reports.show(lambda text, **_style: lines.append(text), lines.append, 100, False)
    return lines


def test_the_coverage_is_let_go_once_shown_and_nothing_told_changes(tmp_path: Path) -> None:
    (tmp_path / "prog.py").write_text("def f(x):\n    if x:\n        return 1\n    return 2\n"
                                      "\nf(1)\n")
    pathprof_cli(tmp_path, "run", "prog.py")
    reports = CoverageReports(str(tmp_path / ".pathprof"), ["term"], None)
    reports.produce()
    assert reports.problems == []
    shown = _shown(reports)
    assert any("50.00%" in line or "50.0%" in line for line in shown), shown
    trees = [weakref.ref(fn.tree) for fn in reports.coverage.functions() if fn.tree]
    assert trees
    before = (reports.nothing_measured, reports.exit_status(0), reports.has_output())
    reports.release()
    gc.collect()
    assert reports.coverage is None
    assert [ref() for ref in trees] == [None] * len(trees)  # (the trees are freed)
    assert (reports.nothing_measured, reports.exit_status(0)) == before[:2] == (False, 0)


def test_nothing_measured_is_still_told_after_the_release(tmp_path: Path) -> None:
    (tmp_path / "prog.py").write_text("x = 1\n")
    pathprof_cli(tmp_path, "run", "prog.py")
    reports = CoverageReports(str(tmp_path / ".pathprof"), ["term"], None)
    reports.produce()
    assert reports.nothing_measured
    reports.release()
    assert reports.nothing_measured
    assert any("No functions were measured" in line for line in _shown(reports))
