"""``pathprof coverage`` as a team reads it (issue 38): what was excluded and what was
never imported, said beside the headline; the next tests to write in ``-m`` and in
JSON; the suite's "where to test next" list."""

from __future__ import annotations

import json
import re
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
    # no --source: the run's own (--source pkg, which the data file keeps)
    alone = pathprof_cli(project, "coverage").stdout
    assert " ".join(alone.split()) == " ".join(shown.split())
    # a source that holds no never-imported file adds none
    narrow = pathprof_cli(project, "coverage", "--source", str(project / "pkg" / "a.py"))
    assert "never imported" not in narrow.stdout
    assert "5 of 8 independent paths" in narrow.stdout


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


ACTIONS = '''\
def small(a):
    if a:
        return 1
    return 0


def big(a, b, c, d):
    n = 0
    if a:
        n += 1
    if b:
        n += 2
    if c:
        n += 4
    if d:
        n += 8
    return n


def two(a, b):
    n = 0
    if a:
        n += 1
    if b:
        n += 2
    return n


def literal():
    total = 0
    for i in (1, 2, 3):
        total += i
    return total
'''

ACTIONS_RUN = '''\
import sys
from lib import small, big, two, literal
small(1)
big(0, 0, 0, 0)
for a, b in [(0, 0), (1, 0), (0, 1)] + ([(1, 1)] if sys.argv[1:] else []):
    two(a, b)
literal()
'''


def _missed_sections(shown: str) -> list[str]:
    """The functions -m lists missed paths for, in order."""
    listed = shown.split("Missed paths, told as")[1] if "Missed paths, told as" in shown else ""
    return re.findall(r"^(\w+)  lib\.py:\d+  ", listed, re.M)


def test_term_missing_lists_what_a_test_can_add_to_the_most_missing_first(tmp_path: Path
                                                                          ) -> None:
    """``big`` misses 4 independent paths, ``small`` 1: listed in that order (they were
    in the order of the file). ``two``'s basis is complete, its one missed path can run:
    listed after them. ``literal``'s basis is complete and its missed path (the loop over
    a non-empty literal exhausted at once) cannot run: not listed, but counted. Under
    stop-counting ``two`` and ``literal`` stopped once their basis was complete: their
    missed paths may have run, so they are not listed (they were, as "at most 1 of 4
    missed"). ``--missed-functions`` caps the list and says how many it left out."""
    (tmp_path / "lib.py").write_text(ACTIONS)
    (tmp_path / "main.py").write_text(ACTIONS_RUN)
    pathprof_cli(tmp_path, "run", "main.py")
    shown = pathprof_cli(tmp_path, "coverage", "-m").stdout
    assert _missed_sections(shown) == ["big", "small", "two"]
    flat = " ".join(shown.split())
    assert ("Not listed: 1 function whose basis is complete and whose missed paths the "
            "source proves impossible.") in flat
    pathprof_cli(tmp_path, "run", "--stop-counting", "basis", "main.py", "stop")
    stopped = pathprof_cli(tmp_path, "coverage", "-m").stdout
    assert _missed_sections(stopped) == ["big", "small"]
    assert "at most" not in stopped
    assert ("Not listed: 2 functions that stopped counting once their basis was complete "
            "(their missed paths may have run after).") in " ".join(stopped.split())
    capped = pathprof_cli(tmp_path, "coverage", "-m", "--missed-functions", "1").stdout
    assert _missed_sections(capped) == ["big"]
    assert ("Not listed: 1 more function with paths still to test, fewer missing (pathprof "
            "coverage -m --missed-functions 0 lists them all); 2 functions that stopped "
            "counting") in " ".join(capped.split())
    assert "The HTML report (pathprof html) shows every function's missed paths." in (
        " ".join(capped.split()))


def test_term_missing_on_a_big_suite_lists_twenty_functions_and_says_how_many_more(
        tmp_path: Path) -> None:
    """30 functions, one of them ran each; the ones missing most come first; twenty are
    listed, and the line after them says ten more, and how to see them all."""
    functions = [f"def f{k}(a):\n" + "".join(f"    if a == {j}:\n        return {j}\n"
                                            for j in range(1 + k % 4)) + "    return -1\n"
                 for k in range(30)]
    (tmp_path / "lib.py").write_text("\n\n".join(functions))
    (tmp_path / "main.py").write_text("import lib\n" + "".join(f"lib.f{k}(-5)\n"
                                                               for k in range(30)))
    pathprof_cli(tmp_path, "run", "main.py")
    shown = pathprof_cli(tmp_path, "coverage", "-m").stdout
    listed = _missed_sections(shown)
    assert len(listed) == 20
    # f3, f7 ... miss 4 independent paths, f2, f6 ... 3: the first 16 are those
    missing = [1 + int(name[1:]) % 4 for name in listed]
    assert missing == sorted(missing, reverse=True)
    assert missing[:16] == [4] * 7 + [3] * 7 + [2] * 2
    assert "10 more functions with paths still to test" in " ".join(shown.split())
    everything = pathprof_cli(tmp_path, "coverage", "-m", "--missed-functions", "0").stdout
    assert len(_missed_sections(everything)) == 30
    assert "Not listed" not in everything


def test_skip_covered_says_how_many_rows_it_left_out(tmp_path: Path) -> None:
    """As coverage.py's --skip-covered: "N files skipped due to complete coverage"."""
    (tmp_path / "lib.py").write_text(ACTIONS)
    (tmp_path / "main.py").write_text(ACTIONS_RUN + "small(0)\n")
    pathprof_cli(tmp_path, "run", "main.py", "all of two")
    shown = pathprof_cli(tmp_path, "coverage", "--skip-covered").stdout
    assert "lib.py:20 two" not in shown
    assert "lib.py:1 small" not in shown
    assert "2 functions skipped due to complete coverage (every path ran)." in shown
