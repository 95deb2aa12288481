"""`pathprof diff`: paths that appeared, vanished or changed between two data files.

The expected counts are worked out from the program: over range(10), n % 3 == 0 for
0, 3, 6, 9 (4 fizz), n % 5 == 0 otherwise only for 5 (1 buzz), the other 5 return n;
over range(4): 2 fizz, no buzz, 2 others.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pathprof.cli import main

from .test_run import pathprof_cli

PROGRAM = '''import sys
def f(n):
    if n % 3 == 0:
        return "fizz"
    if n % 5 == 0:
        return "buzz"
    return n
for i in range(int(sys.argv[1])):
    f(i)
'''


def measure(tmp_path: Path, name: str, n: int, source: str = PROGRAM) -> Path:
    script = tmp_path / "fizz.py"
    script.write_text(source)
    data = tmp_path / name
    pathprof_cli(tmp_path, "run", "--data-file", str(data), str(script), str(n))
    return data


def diff_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict]:
    status = main(["diff", "--format", "json", *args])
    return status, json.loads(capsys.readouterr().out)


def test_vanished_and_changed_paths(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old, new = measure(tmp_path, "old", 10), measure(tmp_path, "new", 4)
    status, report = diff_json(capsys, str(old), str(new), "--fail-on-change")
    assert status == 3
    (fn,) = report["functions"]
    assert fn["qualname"] == "f"
    assert fn["source_changed"] is False
    assert [(c["old"], c["new"]) for c in fn["vanished"]] == [(1, 0)]  # buzz
    assert sorted((c["old"], c["new"]) for c in fn["changed"]) == [(4, 2), (5, 2)]
    assert fn["appeared"] == []


def test_the_other_way_round_paths_appear(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    old, new = measure(tmp_path, "old", 4), measure(tmp_path, "new", 10)
    _status, report = diff_json(capsys, str(old), str(new))
    (fn,) = report["functions"]
    assert [(c["old"], c["new"]) for c in fn["appeared"]] == [(0, 1)]


def test_threshold_and_identical_profiles(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    old, new = measure(tmp_path, "old", 10), measure(tmp_path, "new", 10)
    assert main(["diff", str(old), str(new), "--fail-on-change"]) == 0
    assert "No paths appeared" in capsys.readouterr().out
    few, more = measure(tmp_path, "few", 30), measure(tmp_path, "more", 33)
    # range(30) -> range(33): fizz 10 -> 11 (+10%), others 16 -> 18 (+12.5%), buzz 4 -> 4
    _status, report = diff_json(capsys, str(few), str(more), "--threshold", "0.11")
    (fn,) = report["functions"]
    assert [(c["old"], c["new"]) for c in fn["changed"]] == [(16, 18)]
    assert fn["unchanged"] == 2


def test_an_edit_elsewhere_matches_paths_by_shape(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    old = measure(tmp_path, "old", 10)
    edited = "# a comment moves every line down\n\n" + PROGRAM.replace(
        "def f(n):", "def g():\n    return 1\n\ndef f(n):")
    new = measure(tmp_path, "new", 10, edited)
    status, report = diff_json(capsys, str(old), str(new), "--fail-on-change")
    assert report["functions"] == []  # f's paths are the same paths, counted the same
    assert status == 0


def test_a_missing_file_is_a_clear_error(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    old = measure(tmp_path, "old", 3)
    assert main(["diff", str(old), str(tmp_path / "nope")]) == 1
    assert "no data file" in capsys.readouterr().err


def test_combine_keeps_versions_of_a_function_apart_and_says_so(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from pathprof.data.store import read

    old = measure(tmp_path, "old", 10)
    new = measure(tmp_path, "new", 4, PROGRAM.replace('"buzz"', '"BUZZ"'))
    combined = tmp_path / "all"
    assert main(["combine", "--data-file", str(combined), str(old), str(new)]) == 0
    assert "f was measured from 2 versions of its source" in capsys.readouterr().err
    versions = sorted(fn.total for fn in read(str(combined)).functions if fn.qualname == "f")
    assert versions == [4, 10]  # nothing lost, nothing added across versions


def test_the_summary_line_counts_in_the_right_number(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]
                                                     ) -> None:
    """range(4) -> range(10): buzz appeared, in one function ("1 functions" before)."""
    old, new = measure(tmp_path, "old", 4), measure(tmp_path, "new", 10)
    main(["diff", str(old), str(new)])
    shown = " ".join(capsys.readouterr().out.split())
    assert "1 path appeared, 0 vanished, 2 changed by more than 10% in 1 function." in shown


DECORATED = '''import functools, sys


@functools.lru_cache(maxsize=None)
def f(n):
    if n % 3 == 0:
        return "fizz"
    return n
for i in range(int(sys.argv[1])):
    f(i)
'''


def test_a_functions_first_line_is_its_def_line_as_in_the_report(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The diff JSON and the report JSON say the same ``first_line`` of a decorated
    function: its ``def`` statement's (line 5), not its decorator's (line 4)."""
    old = measure(tmp_path, "old", 10, DECORATED)
    new = measure(tmp_path, "new", 4, DECORATED)
    _status, report = diff_json(capsys, str(old), str(new))
    (fn,) = report["functions"]
    assert fn["first_line"] == 5
    assert main(["report", "--data-file", str(new), "--format", "json"]) == 0
    (reported,) = json.loads(capsys.readouterr().out)["functions"]
    assert reported["first_line"] == fn["first_line"]
