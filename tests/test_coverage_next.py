"""``pathprof coverage`` as a team reads it (issue 38): what was excluded and what was
never imported, said beside the headline; the next tests to write in ``-m`` and in
JSON; the suite's "where to test next" list."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from .test_run import pathprof_cli

MODULE_A = '''\
    from typing import TYPE_CHECKING, overload

    if TYPE_CHECKING:
        import os

    @overload
    def convert(x: int) -> int: ...
    @overload
    def convert(x: str) -> str: ...
    def convert(x):
        if isinstance(x, int):
            return x + 1
        elif x == "":  # pragma: no cover
            raise ValueError("empty")
        return x + "!"

    def total(items, limit=None):
        result = 0
        if limit is None:
            limit = 3
        for item in items:
            if item > limit:
                result += item
        if limit is not None:
            result -= 1
        return result
    '''

MODULE_B = '''\
    def never(a, b):
        if a:
            return 1
        if b:
            return 2
        return 3
    '''


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "a.py").write_text(textwrap.dedent(MODULE_A))
    (tmp_path / "pkg" / "b.py").write_text(textwrap.dedent(MODULE_B))
    (tmp_path / "run.py").write_text(
        "from pkg.a import convert, total\nconvert(1); convert('x'); total([1, 5])\n")
    pathprof_cli(tmp_path, "run", "--source", "pkg", "run.py")
    return tmp_path


def test_the_report_says_what_it_excluded_and_what_was_never_imported(project: Path
                                                                       ) -> None:
    shown = pathprof_cli(project, "coverage", "--source", "pkg").stdout
    # convert: 2 paths, both ran (the excluded elif gone); total: 12 paths, dimension
    # 6, 3 ran; never: 3 paths, dimension 3, none ran
    assert ("Basis path coverage 45.5%: 5 of 11 independent paths; paths run 5 of 17 "
            "(29.4%).") in shown
    assert ("Excluded: 2 functions (@overload 2), code in 1 other function, 3 paths and 3 "
            "basis dimensions (--no-exclude counts them).") in " ".join(shown.split())
    assert "1 file under the source never imported, counted at 0%." in " ".join(shown.split())
    assert "pkg/b.py (never imported)" in shown
    raw = pathprof_cli(project, "coverage", "--source", "pkg", "--no-exclude").stdout
    assert "5 of 14 independent paths; paths run 5 of 20" in raw
    assert "Excluded" not in raw
    alone = pathprof_cli(project, "coverage").stdout  # no source: nothing added
    assert "never imported" not in alone
    assert "5 of 8 independent paths" in alone


def test_show_missing_lists_the_tests_to_write_first(project: Path) -> None:
    shown = pathprof_cli(project, "coverage", "-m", "--source", "pkg").stdout
    where = shown.index("Where to test next")
    assert shown.index("1. total", where) < shown.index("2. never", where)
    # never: three tests, one per independent path, told as decisions to take
    block = shown[shown.index("never  pkg/b.py:1"):]
    assert "+ 1. if a: → true" in block
    assert "+ 2. if a: → false · if b: → true" in block
    assert "+ 3. if a: → false · if b: → false" in block
    # total: `limit is None` false, then `limit is not None` false, nothing between
    # (no assignment on that arm) cannot run; with `limit = 3` between, it can
    total = shown[shown.index("total  pkg/a.py:17  9 of 12 missed"):
                  shown.index("never  pkg/b.py:1  3 of 3 missed")]
    total = " ".join(total.split())  # lines the terminal's width wrapped, joined
    assert ("✗ cannot run: if limit is None: → false · for item in items: → exhausted · "
            "if limit is not None: → false — `limit is None` is false on line 19 but true "
            "on line 24, and nothing between can change it") in total
    # with `limit = 3` between, `limit is not None` can only be true
    assert ("✗ cannot run: if limit is None: → true · for item in items: → exhausted · "
            "if limit is not None: → false — `limit = 3` on line 20, so `limit is None` can "
            "only be false on line 24") in total
    assert total.count("cannot run") == 2


def test_json_carries_the_next_paths_and_what_was_excluded(project: Path) -> None:
    out = project / "cov.json"
    pathprof_cli(project, "coverage", "--source", "pkg", "--format", "json", "-o", str(out))
    report = json.loads(out.read_text())
    assert report["version"] == 2
    assert report["excluded"] == {"functions": {"@overload": 2}, "partly": 1, "paths": "3",
                                  "dimensions": 3}
    assert [(w["qualname"], w["basis_missing"]) for w in report["where_to_test_next"]] == [
        ("total", 3), ("never", 3)]
    files = {Path(f["file"]).name: f for f in report["files"]}
    assert files["b.py"]["imported"] is False
    never = files["b.py"]["functions"][0]
    assert [p["story"] for p in never["next_paths"]] == [
        "if a: → true", "if a: → false · if b: → true", "if a: → false · if b: → false"]
    assert never["next_paths"][0]["steps"] == [{"line": 2, "code": "if a:", "taken": "true"}]
    total = files["a.py"]["functions"][1]
    assert total["qualname"] == "total"
    assert len(total["next_paths"]) + total["basis_covered"] == total["basis_dimension"]
    for impossible in total["impossible_paths"]:
        assert impossible["test"] == "limit is None"
        # tested on 19 and 24, or set to 3 on 20 and tested on 24
        assert impossible["lines_tested"] in ([19, 24], [20, 24])
    flagged = [p for p in total["missed_paths"] if p["impossible"]]
    assert [p["impossible"] for p in flagged] == [
        "`limit is None` is false on line 19 but true on line 24, and nothing between "
        "can change it",
        "`limit = 3` on line 20, so `limit is None` can only be false on line 24"]
