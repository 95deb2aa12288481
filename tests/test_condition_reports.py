"""Condition coverage and MC/DC end to end (issue 39): measured with ``run
--conditions`` and ``pytest --pathprof-conditions``, kept in the data file, and
reported as text, JSON, LCOV MC/DC records and HTML, with the thresholds.

The program: ``classify(a, b, c)`` tests ``a and (b or c)``; the runs give the vectors
(F,-,-) and (T,T,-) only, so ``a`` is shown (MC/DC), ``b`` is seen true only and ``c``
never: MC/DC 1 of 3, condition outcomes 3 of 6, and the tests to write are ``a true, b
false, c false`` for ``b`` and ``a true, b false, c true`` for ``c``. ``partly``'s
``x or y`` is complete (its conditional expression is excluded by its line's pragma),
and ``excluded`` is excluded whole: MC/DC 3 of 5 in all.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from pathprof.contract import DecisionInfo, FunctionInfo, Span
from pathprof.data import store

from .test_pytest_plugin import pytest_in
from .test_run import pathprof_cli

LIB = '''\
def classify(a, b, c):
    if a and (b or c):
        return "yes"
    return "no"


def excluded(x, y):  # pragma: no cover
    if x or y:
        return 1
    return 0


def partly(x, y):
    z = 1 if x else 2  # pragma: no cover
    if x or y:
        return z
    return 0
'''
MAIN = '''\
from lib import classify, excluded, partly
classify(True, True, False)
classify(False, True, True)
excluded(1, 0)
partly(0, 0)
partly(1, 0)
partly(0, 1)
'''


@pytest.fixture
def measured(tmp_path: Path) -> Path:
    (tmp_path / "lib.py").write_text(LIB)
    (tmp_path / "main.py").write_text(MAIN)
    pathprof_cli(tmp_path, "run", "--conditions", "main.py")
    return tmp_path


def test_the_text_report_names_each_condition_and_the_test_to_write(measured: Path) -> None:
    out = pathprof_cli(measured, "coverage", "--conditions", "-m").stdout
    row = next(line for line in out.splitlines() if "classify" in line and "lib.py:1" in line)
    assert row.split()[-6:] == ["1", "3", "3/6", "1/3", "33%", "1/3"]
    assert "MC/DC 60%: 3 of 5 conditions" in out
    assert "condition outcomes 7 of 10 (70%), in 2 decisions." in out
    assert "✓ a: a false" in out
    assert ("✗ b: seen true only; add a test where a true, b false, c false (so the "
            "decision is false), beside the run where a true, b true (so the decision is "
            "true)") in out
    assert "✗ c: never evaluated; add a test where a true, b false, c true" in out
    assert "excluded" not in out  # under # pragma: no cover
    partly = next(line for line in out.splitlines() if "partly" in line)
    assert partly.split()[-6:] == ["1", "2", "4/4", "2/2", "100%", "2/2"]


def test_fail_under_mcdc(measured: Path) -> None:
    below = pathprof_cli(measured, "coverage", "--conditions", "--fail-under-mcdc", "61",
                         check=False)
    assert below.returncode == 3
    assert "total MC/DC 60.00% is below --fail-under-mcdc 61" in below.stderr
    met = pathprof_cli(measured, "coverage", "--conditions", "--fail-under-mcdc", "60")
    assert met.returncode == 0


def test_json_holds_every_vector_and_each_verdict(measured: Path) -> None:
    document = json.loads(pathprof_cli(measured, "coverage", "--format", "json").stdout)
    assert document["conditions_totals"]["mcdc_masking"] == 3
    assert document["conditions_totals"]["conditions"] == 5
    assert document["conditions_totals"]["outcomes_seen"] == 7
    fn = next(f for f in document["files"][0]["functions"] if f["qualname"] == "classify")
    (decision,) = fn["conditions"]
    assert decision["text"] == "a and (b or c)"
    assert [(v["values"], v["outcome"], v["runs"]) for v in decision["vectors"]] == [
        ([False, None, None], False, 1), ([True, False, False], False, 0),
        ([True, False, True], True, 0), ([True, True, None], True, 1)]
    a, b, c = decision["conditions"]
    assert a["mcdc_masking"] == [{"values": [False, None, None], "outcome": False},
                                 {"values": [True, True, None], "outcome": True}]
    assert b["missing"]["add"] == {"values": [True, False, False], "outcome": False}
    assert b["missing"]["with_ran"] is True
    assert c["seen_true"] is False
    assert c["missing"]["with_ran"] is False


def test_lcov_has_the_mcdc_records_of_lcov_2(measured: Path) -> None:
    pathprof_cli(measured, "lcov", "-o", "out.lcov")
    text = (measured / "out.lcov").read_text()
    records = re.findall(r"^MCDC:.*$", text, re.MULTILINE)
    assert records == ["MCDC:2,3,t,1,0,a", "MCDC:2,3,f,1,0,a",
                       "MCDC:2,3,t,0,1,b", "MCDC:2,3,f,0,1,b",
                       "MCDC:2,3,t,0,2,c", "MCDC:2,3,f,0,2,c",
                       "MCDC:15,2,t,1,0,x", "MCDC:15,2,f,1,0,x",
                       "MCDC:15,2,t,1,1,y", "MCDC:15,2,f,1,1,y"]
    assert "MCF:10\nMCH:6\n" in text
    # geninfo(1) of LCOV 2.x: MCDC:<line>,<group size>,<sense>,<taken>,<index>,<expression>
    syntax = re.compile(r"^MCDC:(\d+),(\d+),([tf]),(\d+),(\d+),(.+)$")
    for record in records:
        _line, group, _sense, _taken, index, _expression = syntax.match(record).groups()
        assert int(index) < int(group)
    if shutil.which("genhtml"):  # an LCOV reader (1.x here) still takes the file
        done = subprocess.run(["genhtml", "-q", "-o", str(measured / "gh"), "out.lcov"],
                              cwd=measured, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr


def test_html_marks_each_condition_by_its_status(measured: Path) -> None:
    pathprof_cli(measured, "html", "-d", "h")
    page = next(p for p in (measured / "h").glob("*.html") if "classify" in p.read_text()
                and p.name != "index.html")
    text = page.read_text()
    assert ('<mark class="cond shown" title="condition 0">a</mark> and (<mark class="cond '
            'unseen" title="condition 1">b</mark> or <mark class="cond unseen" '
            'title="condition 2">c</mark>)') in text
    assert "add a test where a true, b false, c false (so the decision is false)" in text


def test_runs_add_up_in_the_data_file(measured: Path) -> None:
    first = {fn.qualname: fn for fn in store.read(str(measured / ".pathprof")).functions}
    pathprof_cli(measured, "run", "--conditions", "--append", "main.py")
    again = {fn.qualname: fn for fn in store.read(str(measured / ".pathprof")).functions}
    assert first["classify"].vectors == {(0, 0): 1, (0, 3): 1}
    assert again["classify"].vectors == {(0, 0): 2, (0, 3): 2}
    # partly's conditional expression (excluded from reports) is still counted
    assert again["partly"].vectors[(0, 0)] == 4  # x false twice per run
    pathprof_cli(measured, "run", "--conditions", "--data-file", "other.pathprof", "main.py")
    pathprof_cli(measured, "combine", "--data-file", "all.pathprof", ".pathprof",
                 "other.pathprof")
    combined = {fn.qualname: fn for fn in store.read(str(measured / "all.pathprof")).functions}
    assert combined["classify"].vectors == {(0, 0): 3, (0, 3): 3}


def test_pytest_conditions_and_their_threshold(tmp_path: Path) -> None:
    (tmp_path / "lib.py").write_text(LIB)
    (tmp_path / "test_lib.py").write_text(
        "from lib import classify\n\ndef test_yes():\n    assert classify(1, 1, 0) == 'yes'\n"
        "\ndef test_no():\n    assert classify(0, 1, 1) == 'no'\n")
    done = pytest_in(tmp_path, "--pathprof=.", "--pathprof-conditions",
                     "--pathprof-fail-under-mcdc=50")
    assert done.returncode == 1, done.stdout
    assert "FAIL: total MC/DC 20.00% is below --pathprof-fail-under-mcdc 50" in done.stdout
    row = [line for line in done.stdout.splitlines() if line.startswith("lib.py ")][-1]
    assert row.split()[1:] == ["2", "5", "3/10", "1/5", "20%", "1/5"]


def test_the_contract_keeps_decisions() -> None:
    decision = DecisionInfo("if", Span(2, 7, 2, 21), "a and (b or c)", ("a", "b", "c"),
                            (Span(2, 7, 2, 8), Span(2, 14, 2, 15), Span(2, 19, 2, 20)),
                            "&(0,|(1,2))", 5, 4)
    info = FunctionInfo("f", 1, 3, 1, False, 0, 1, (), (), {}, (), (), 1, "array", (), {},
                        frozenset(), (), (), "path", decisions=(decision,))
    assert FunctionInfo.decode(info.encode()) == info
    plain = FunctionInfo("f", 1, 3, 1, False, 0, 1, (), (), {}, (), (), 1, "array", (), {},
                         frozenset(), (), (), "path")
    assert FunctionInfo.decode(plain.encode()).decisions == ()


def test_a_decision_too_big_to_unfold_is_reported_as_not_measured(tmp_path: Path) -> None:
    """Twelve ``(a or b)`` groups joined by ``and``: each group's conditions are
    reached in 2**k ways, past what pathprof writes out; the decision runs as written,
    and every report says it was not measured (the JSON report crashed on it)."""
    groups = " and ".join(f"(v[{2 * i}] or v[{2 * i + 1}])" for i in range(12))
    (tmp_path / "big.py").write_text(
        f"def f(v):\n    if {groups}:\n        return 1\n    return 0\n"
        "print(f([1] * 24), f([0] * 24))\n")
    done = pathprof_cli(tmp_path, "run", "--conditions", "big.py")
    assert done.stdout.split() == ["1", "0"]
    document = json.loads(pathprof_cli(tmp_path, "coverage", "--format", "json").stdout)
    assert document["conditions_totals"]["unmeasured"] == 1
    (decision,) = document["files"][0]["functions"][0]["conditions"]
    assert decision["measured"] is False
    assert [c["seen_true"] for c in decision["conditions"]] == [None] * 24
    text = pathprof_cli(tmp_path, "coverage", "--conditions", "-m").stdout
    assert "1 decision(s) have too many ways to be evaluated to count each one" in text


def test_a_module_reloaded_keeps_what_it_counted(tmp_path: Path) -> None:
    """``importlib.reload`` executes the module again in the same globals, where its
    vector counters live: the runs before the reload stay with the first execution,
    the runs after count in the second, and none is lost or counted twice."""
    (tmp_path / "mod.py").write_text("def check(a, b):\n    if a and b:\n        return 1\n"
                                     "    return 0\n")
    (tmp_path / "main.py").write_text(
        "import importlib\nimport mod\nmod.check(True, True)\nmod.check(False, True)\n"
        "importlib.reload(mod)\nmod.check(True, False)\n")
    pathprof_cli(tmp_path, "run", "--conditions", "--source", "mod.py", "main.py")
    document = json.loads(pathprof_cli(tmp_path, "coverage", "--format", "json").stdout)
    (fn,) = document["files"][0]["functions"]
    (decision,) = fn["conditions"]
    assert [(v["values"], v["runs"]) for v in decision["vectors"]] == [
        ([False, None], 1), ([True, False], 1), ([True, True], 1)]
