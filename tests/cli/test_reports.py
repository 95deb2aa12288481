"""Unit tests of :mod:`pathprof.cli.reports`: the commands that show a measurement or a
CFG (``plan``, ``report``, ``coverage``, ``html``, ``lcov``, ``xml``, ``diff``), called
in-process through :func:`pathprof.cli.main` on data files written directly. The
module ``app.py`` has three functions whose paths and basis are counted by hand:
``f`` (one if: 2 paths, basis 2), ``g`` (two ifs in a row: 4 paths, basis 3) and
``never`` (1 path, basis 1). The tests check each command's options reach what it
prints or writes, its exit status (``--fail-under``, ``--fail-under-mcdc``,
``--fail-on-change``), and its errors (a bad ``--sort``, a negative ``--threshold``,
a destination that cannot be written)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from pathprof.cli import CHECK_FAILED, ERR, OK, main
from pathprof.data import store
from pathprof.data.measurement import RunInfo
from pathprof.data.profile import FunctionProfile
from pathprof.python.instrument import instrument_source

SOURCE = textwrap.dedent('''\
    def f(x):
        if x:
            return 1
        return 2


    def g(a, b):
        t = 0
        if a:
            t += 1
        if b:
            t += 2
        return t


    def never(y):
        return y
''')
#: f ran both its paths (4 calls), g one of its 4 (2 calls), never did not run:
#: paths run 2 + 1 + 0 of 2 + 4 + 1 = 7; basis 2 + 1 + 0 of 2 + 3 + 1 = 6 (50%)
COUNTS: dict[str, dict[int, int]] = {"f": {0: 3, 1: 1}, "g": {0: 2}, "never": {}}


def _write(path: Path, counts: dict[str, dict[int, int]] = COUNTS, *,
           stopped: bool = False) -> None:
    file = str(path.parent / "app.py")
    info = instrument_source(SOURCE, file).metadata
    functions = []
    for meta in info.functions:
        fn = FunctionProfile(file, meta.qualname, meta.code_line, info.source_hash, meta)
        fn.counts = dict(counts.get(meta.qualname, {}))
        fn.stopped = stopped
        functions.append(fn)
    run = RunInfo(0.0, ["app.py"], "3.11.0", "path", None, 1, "host")
    store.write(str(path), run, functions, {(file, info.source_hash): SOURCE})


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A directory with ``app.py`` and its data file ``.pathprof``, the current one."""
    (tmp_path / "app.py").write_text(SOURCE, encoding="utf-8")
    _write(tmp_path / ".pathprof")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PATHPROF_CACHE_DIR", raising=False)
    return tmp_path


# -- plan ----------------------------------------------------------------------------------

DIAMOND = {"description": "a diamond", "blocks": ["A", "B", "C", "D"], "entry": "A",
           "exit": "D", "edges": [["A", "B"], ["A", "C"], ["B", "D"], ["C", "D"]]}


def test_plan_shows_the_description_and_the_paths_of_a_cfg(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps(DIAMOND))
    assert main(["plan", str(cfg)]) == OK
    out = capsys.readouterr().out
    assert out.startswith("a diamond\n")
    assert "Paths (2 in all)" in out  # A B D and A C D
    assert "A B D" in out
    assert "A C D" in out


def test_plan_with_parallel_shows_the_copies(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({k: v for k, v in DIAMOND.items() if k != "description"}))
    assert main(["plan", str(cfg), "--parallel", "3"]) == OK
    out = capsys.readouterr().out
    assert not out.startswith("a diamond")
    assert "Copies (K = 3)" in out
    assert "Paths (" not in out


def test_plan_refuses_a_parallel_count_below_one(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as usage:
        main(["plan", str(tmp_path / "cfg.json"), "--parallel", "0"])
    assert usage.value.code == 2
    assert "must be at least 1" in capsys.readouterr().err


def test_plan_of_a_missing_file_is_an_error(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", str(tmp_path / "none.json")]) == ERR
    assert capsys.readouterr().err.startswith(f"pathprof: cannot read {tmp_path / 'none.json'}")


# -- report --------------------------------------------------------------------------------


def test_report_shows_each_function_that_ran_with_its_paths(
        here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report"]) == OK
    out = capsys.readouterr().out
    assert "f  app.py:1  2 of 2 paths run · 4 path executions" in out
    assert "g  app.py:7  1 of 4 paths run · 2 path executions" in out
    assert "1 measured function never ran (--show-unrun lists them)." in out


def test_report_top_and_functions_limit_what_is_shown(
        here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "--functions", "1", "--top", "1"]) == OK
    out = capsys.readouterr().out
    assert "f  app.py:1" in out  # the function that executed most paths
    assert "g  app.py:7" not in out
    assert "75.0%" in out  # the hottest of f's paths: 3 of 4
    assert "25.0%" not in out  # its second path is not shown


def test_report_json_lists_every_function(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "--format", "json"]) == OK
    document = json.loads(capsys.readouterr().out)
    assert document["format"] == "pathprof"
    functions = {fn["qualname"]: fn for fn in document["functions"]}
    assert {name: (fn["paths_run"], fn["executions"]) for name, fn in functions.items()
            if name in ("f", "g")} == {"f": (2, 4), "g": (1, 2)}
    assert [p["count"] for p in functions["f"]["paths"]] == [3, 1]  # hottest first


def test_report_to_a_file_and_filtered(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "-o", "out.txt"]) == OK
    assert capsys.readouterr().out == ""
    assert "f  app.py:1" in (here / "out.txt").read_text(encoding="utf-8")
    assert main(["report", "--omit", "*app.py", "--format", "json"]) == OK
    assert json.loads(capsys.readouterr().out)["functions"] == []


def test_report_to_a_file_that_cannot_be_written_is_an_error(
        here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "-o", "missing/out.txt"]) == ERR
    assert capsys.readouterr().err == ("pathprof: cannot write missing/out.txt: No such file "
                                       "or directory\n")


def test_report_of_a_missing_data_file_is_an_error(
        here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "--data-file", "none.db"]) == ERR
    assert "none.db" in capsys.readouterr().err


# -- coverage ------------------------------------------------------------------------------


def test_coverage_shows_paths_and_basis_per_function_and_in_total(
        here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["coverage"]) == OK
    lines = capsys.readouterr().out.splitlines()
    rows = {line.split()[1] if line.startswith("app.py:") else line.split()[0]: line.split()
            for line in lines if line.startswith(("app.py:", "TOTAL"))}
    assert rows["f"][2:] == ["2", "2", "0", "100.0%", "2/2", "100.0%"]
    assert rows["g"][2:] == ["4", "1", "3", "25.0%", "1/3", "33.3%"]
    assert rows["never"][2:] == ["1", "0", "1", "0.0%", "0/1", "0.0%"]
    assert rows["TOTAL"][1:] == ["7", "3", "4", "42.9%", "3/6", "50.0%"]


def test_coverage_json_has_the_totals(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["coverage", "--format", "json", "-o", "cov.json"]) == OK
    totals = json.loads((here / "cov.json").read_text())["totals"]
    assert (totals["paths_possible"], totals["paths_run"]) == ("7", 3)
    assert (totals["basis_covered"], totals["basis_dimension"]) == (3, 6)
    assert totals["basis_percent"] == 50.0


def test_coverage_missed_paths_are_listed_on_request(
        here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["coverage", "-m"]) == OK
    out = capsys.readouterr().out
    assert "g  app.py:7  3 of 4 missed; basis 1 of 3" in out
    assert "never  app.py:16  1 of 1 missed; basis 0 of 1" in out
    assert main(["coverage", "--skip-covered"]) == OK
    assert "app.py:1 f" not in capsys.readouterr().out  # every path of f ran


@pytest.mark.parametrize(("threshold", "status"), [("50", OK),
                                                   ("50.01", CHECK_FAILED)])
def test_coverage_fail_under_is_the_total_basis_coverage(
        here: Path, capsys: pytest.CaptureFixture[str], threshold: str, status: int) -> None:
    assert main(["coverage", "--fail-under", threshold]) == status
    err = capsys.readouterr().err
    if status == OK:
        assert err == ""
    else:
        assert err == (f"pathprof: total basis path coverage 50.00% is below "
                       f"--fail-under {float(threshold):g}\n")


def test_coverage_of_nothing_fails_a_threshold(here: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["coverage", "--omit", "*app.py", "--fail-under", "0"]) == CHECK_FAILED
    assert capsys.readouterr().err == ("pathprof: nothing was measured: no total basis path "
                                       "coverage to meet --fail-under 0\n")


def test_coverage_fail_under_mcdc_needs_conditions_measured(
        here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["coverage", "--fail-under-mcdc", "10"]) == CHECK_FAILED
    assert capsys.readouterr().err == ("pathprof: nothing was measured: no total MC/DC to "
                                       "meet --fail-under-mcdc 10\n")


def test_coverage_sort_is_checked_and_orders_the_rows(
        here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["coverage", "--sort", "bogus"]) == ERR
    assert capsys.readouterr().err.startswith("pathprof: ")
    assert main(["coverage", "--sort=-cover"]) == OK
    rows = [line.split()[1] for line in capsys.readouterr().out.splitlines()
            if line.startswith("app.py:")]
    assert rows == ["f", "g", "never"]  # 100%, 25%, 0%
    assert main(["coverage", "--sort", "cover"]) == OK
    rows = [line.split()[1] for line in capsys.readouterr().out.splitlines()
            if line.startswith("app.py:")]
    assert rows == ["never", "g", "f"]


def test_coverage_counts_files_of_the_source_never_imported(
        here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (here / "pkg").mkdir()
    (here / "pkg" / "unused.py").write_text("def u(x):\n    if x:\n        return 1\n")
    # (a source none of whose files was measured is taken for another copy: counted only
    # when something under it was measured, as app.py is here)
    assert main(["coverage", "--source", str(here), "--format", "json"]) == OK
    files = {Path(f["file"]).name: f for f in json.loads(capsys.readouterr().out)["files"]}
    assert files["unused.py"]["imported"] is False
    assert files["unused.py"]["paths_run"] == 0
    assert files["unused.py"]["paths_possible"] == "2"


# -- html and the exports -------------------------------------------------------------------


def test_html_writes_an_index_and_says_where(here: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["html", "-d", "report", "--title", "Unit title"]) == OK
    assert capsys.readouterr().out == "wrote report/index.html\n"
    assert "Unit title" in (here / "report" / "index.html").read_text(encoding="utf-8")


def test_html_into_a_place_that_cannot_be_a_directory_is_an_error(
        here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (here / "blocker").write_text("a file")
    assert main(["html", "-d", "blocker/report"]) == ERR
    assert capsys.readouterr().err.startswith("pathprof: cannot write the report to "
                                              "blocker/report: ")


def test_lcov_writes_the_file_and_a_summary(here: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lcov", "-o", "out.info"]) == OK
    # lines: f 3 of 3, g 6 of 6, never 0 of 1; branches: f's 2 of 2, g's 2 of 4;
    # functions 2 of 3; paths 3 of 7
    assert capsys.readouterr().out == ("wrote out.info: lines 90.00% (9 of 10), branches "
                                       "66.67% (4 of 6), functions 66.67% (2 of 3), paths "
                                       "42.86% (3 of 7)\n")
    text = (here / "out.info").read_text()
    assert "FN:1,f\n" in text
    assert "FNDA:4,f\n" in text  # 4 calls
    assert "FNDA:0,never\n" in text


def test_an_export_to_standard_output_prints_it_and_no_summary(
        here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["xml", "-o", "-"]) == OK
    out = capsys.readouterr().out
    assert out.startswith("<?xml")
    assert 'lines-valid="10" lines-covered="9"' in out
    assert "wrote" not in out


def test_an_export_fails_under_the_threshold(here: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lcov", "-o", "-", "--fail-under", "60"]) == CHECK_FAILED
    assert capsys.readouterr().err == ("pathprof: total basis path coverage 50.00% is below "
                                       "--fail-under 60\n")
    assert main(["lcov", "-o", "-", "--fail-under", "50"]) == OK


def test_an_export_refuses_a_blank_output(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["xml", "-o", " "])
    assert "an empty file name" in capsys.readouterr().err


# -- diff ----------------------------------------------------------------------------------


def test_diff_names_the_paths_that_appeared_vanished_and_changed(
        here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write(here / "old.db", {"f": {0: 10, 1: 10}, "g": {0: 5}})
    _write(here / "new.db", {"f": {0: 10, 1: 20}, "g": {3: 5}})
    assert main(["diff", "old.db", "new.db"]) == OK
    out = capsys.readouterr().out
    assert "f  app.py:1  +0 appeared, -0 vanished, ~1 changed, 1 unchanged" in out
    assert "g  app.py:7  +1 appeared, -1 vanished, ~0 changed, 0 unchanged" in out
    assert "~ 10 → 20 (+100%)" in out
    assert main(["diff", "old.db", "new.db", "--fail-on-change"]) == CHECK_FAILED


def test_diff_json_and_the_threshold(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write(here / "old.db", {"f": {0: 10, 1: 10}})
    _write(here / "new.db", {"f": {0: 10, 1: 12}})  # +20%
    assert main(["diff", "old.db", "new.db", "--format", "json", "--threshold", "0.25"]) == OK
    document = json.loads(capsys.readouterr().out)
    assert document["threshold"] == 0.25
    assert all(not fn["changed"] for fn in document["functions"])
    assert main(["diff", "old.db", "new.db", "--format", "json", "--threshold", "0.1",
                 "-o", "d.json"]) == OK
    (f,) = [fn for fn in json.loads((here / "d.json").read_text())["functions"]
            if fn["qualname"] == "f"]
    assert [(c["old"], c["new"]) for c in f["changed"]] == [(10, 12)]


def test_diff_of_the_same_file_finds_nothing(here: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", ".pathprof", ".pathprof", "--fail-on-change"]) == OK
    assert capsys.readouterr().out == "No paths appeared, vanished or changed by more than 10%.\n"


def test_diff_refuses_a_negative_threshold(here: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", ".pathprof", ".pathprof", "--threshold", "-0.5"]) == ERR
    assert capsys.readouterr().err == "pathprof: --threshold must not be negative\n"


def test_diff_warns_that_profiles_that_stopped_counting_are_lower_bounds(
        here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write(here / "stopped.db", {"f": {0: 1}}, stopped=True)
    assert main(["diff", "stopped.db", ".pathprof"]) == OK
    err = capsys.readouterr().err
    assert err.startswith("pathprof: 3 function profile(s) here stopped counting")
    assert "lower bounds" in err
