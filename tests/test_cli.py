"""Tests for the command line (pathprof.cli)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pathprof.cli import CHECK_FAILED, ERR, OK, USAGE, main

from .test_run import functions_by_name, pathprof_cli

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def test_plan_prints_numbering_probes_and_comparison(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", str(EXAMPLES / "ball_larus_figure2.json")]) == OK
    out = capsys.readouterr().out
    assert "Paths (6 in all)" in out
    assert "count[r + 4] += 1" in out
    assert "A B C D E F" in out
    assert "16 with the spanning tree, 21 with Val on every edge" in " ".join(out.split())


def test_plan_of_a_graph_with_a_loop_and_a_handler(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", str(EXAMPLES / "loop_with_handler.json")]) == OK
    out = capsys.readouterr().out
    assert "Paths (7 in all)" in out
    assert "restart" in out
    assert "loop-header" in out
    assert "backedge" in out


def test_missing_file_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", str(tmp_path / "nope.json")]) == ERR
    err = capsys.readouterr().err
    assert err.startswith("pathprof: cannot read ")
    assert "nope.json" in err


def test_invalid_json_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert main(["plan", str(bad)]) == ERR
    assert "is not valid JSON" in capsys.readouterr().err


def test_invalid_cfg_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "cfg.json"
    bad.write_text(json.dumps({"blocks": ["a", "b"], "entry": "a", "exit": "b",
                               "edges": [["b", "a"]]}))
    assert main(["plan", str(bad)]) == ERR
    assert "enters ENTRY" in capsys.readouterr().err
    bad.write_text(json.dumps({"blocks": ["a", "b"], "entry": "a", "exit": "zz", "edges": []}))
    assert main(["plan", str(bad)]) == ERR
    assert "unknown block" in capsys.readouterr().err


def test_no_command_prints_usage(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == USAGE
    assert "usage: pathprof" in capsys.readouterr().out


@pytest.mark.parametrize(("argv", "command", "unknown"), [
    (["coverage", "--shwo-missing"], "coverage", "--shwo-missing"),
    (["coverage", "-m", "--data-file", "d", "--fail-undr=80"], "coverage", "--fail-undr=80"),
    (["diff", "old", "new", "newer"], "diff", "newer"),
])
def test_an_unknown_option_of_a_command_shows_that_commands_usage(
        capsys: pytest.CaptureFixture[str], argv: list[str], command: str,
        unknown: str) -> None:
    """argparse hands what a command does not know up to the top-level parser, whose
    usage names no option of the command: the command's own usage is shown."""
    with pytest.raises(SystemExit) as typo:
        main(argv)
    assert typo.value.code == USAGE
    err = capsys.readouterr().err
    assert err.startswith(f"usage: pathprof {command} [-h]")
    assert err.endswith(f"pathprof {command}: error: unrecognized arguments: {unknown}\n")
    assert "COMMAND ..." not in err


def test_an_unknown_option_before_the_command_is_the_top_level_parsers(
        capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as typo:
        main(["--bogus", "coverage"])
    assert typo.value.code == USAGE
    err = capsys.readouterr().err
    assert err.startswith("usage: pathprof [-h] [--version] COMMAND ...")
    assert err.endswith("pathprof: error: unrecognized arguments: --bogus\n")


def _measure_demo(data: Path, *options: str) -> None:
    """Measure examples/demo/orders.py with `pathprof run` in a process of its own
    (in this process, its modules may already be imported from an earlier test)."""
    pathprof_cli(data.parent, "run", *options, "--data-file", str(data),
                 str(EXAMPLES / "demo" / "orders.py"))


def _sample_data(tmp_path: Path) -> Path:
    data = tmp_path / "demo.pathprof"
    _measure_demo(data)
    return data


def test_coverage_table_missed_paths_and_fail_under(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = _sample_data(tmp_path)
    capsys.readouterr()
    assert main(["coverage", "--data-file", str(data), "--format", "json",
                 "-o", str(tmp_path / "cov.json")]) == OK
    report = json.loads((tmp_path / "cov.json").read_text())
    functions = {fn["qualname"]: fn for f in report["files"] for fn in f["functions"]}
    for fn in functions.values():
        assert int(fn["missed"]) == int(fn["paths_possible"]) - fn["paths_run"]
        assert len(fn["missed_paths"]) == min(10, int(fn["missed"]))
        lengths = [len(p["lines"]) for p in fn["missed_paths"]]
        assert lengths == sorted(lengths)  # shortest first
    total_run = sum(fn["paths_run"] for fn in functions.values())
    assert report["totals"]["paths_run"] == total_run
    percent = report["totals"]["percent"]
    assert main(["coverage", "--data-file", str(data), "-m"]) == OK
    out = capsys.readouterr().out
    assert "TOTAL" in out
    assert "Missed paths" in out
    assert f"{percent:.1f}%" in out
    basis = report["totals"]["basis_percent"]
    assert report["totals"]["basis_covered"] == sum(fn["basis_covered"]
                                                    for fn in functions.values())
    assert report["totals"]["basis_dimension"] == sum(fn["basis_dimension"]
                                                      for fn in functions.values())
    assert f"Basis path coverage {basis:.1f}%" in out
    assert main(["coverage", "--data-file", str(data), "--fail-under", "100"]) == CHECK_FAILED
    assert (f"total basis path coverage {basis:.2f}% is below --fail-under 100\n"
            in capsys.readouterr().err)
    assert main(["coverage", "--data-file", str(data), "--fail-under", str(basis)]) == OK


def test_fail_under_names_the_setting_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """``fail_under`` from pyproject.toml is named as such, not as a flag; the flag,
    when given, wins and is named. The figure checked is basis path coverage."""
    (tmp_path / "m.py").write_text(
        "def two(a, b):\n    x = 0\n    if a:\n        x += 1\n    if b:\n        x += 2\n"
        "    return x\n\n\ntwo(True, True)\ntwo(False, False)\n")
    pathprof_cli(tmp_path, "run", "--data-file", str(tmp_path / "d"), str(tmp_path / "m.py"))
    (tmp_path / "pyproject.toml").write_text("[tool.pathprof]\nfail_under = 80\n")
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    # two ifs in a row: 4 paths, dimension 3; TT and FF ran: 2 of 3 = 66.67% (paths 50%)
    assert main(["coverage", "--data-file", "d"]) == CHECK_FAILED
    assert capsys.readouterr().err == ("pathprof: total basis path coverage 66.67% is below "
                                       "fail_under = 80 in pyproject.toml\n")
    assert main(["coverage", "--data-file", "d", "--fail-under", "70"]) == CHECK_FAILED
    assert capsys.readouterr().err == ("pathprof: total basis path coverage 66.67% is below "
                                       "--fail-under 70\n")
    assert main(["coverage", "--data-file", "d", "--fail-under", "60"]) == OK
    assert main(["lcov", "--data-file", "d", "-o", "-"]) == CHECK_FAILED
    assert capsys.readouterr().err.endswith("66.67% is below fail_under = 80 in pyproject.toml\n")


def test_coverage_refuses_an_edge_profile(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "edge.pathprof"
    _measure_demo(data, "--mode", "edge")
    assert main(["coverage", "--data-file", str(data)]) == ERR
    assert "needs a path profile" in capsys.readouterr().err


@pytest.mark.parametrize("output", ["text", "json"])
def test_coverage_names_an_edge_profile_with_a_function_that_never_ran(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], output: str) -> None:
    """A function that never ran has no edge counts: the file is still an edge
    profile, said as such with the error status, not reported as nothing measured."""
    (tmp_path / "m.py").write_text("def f(x):\n    if x:\n        return 1\n    return 2\n\n"
                                   "def never():\n    return 0\n\nf(1)\n")
    data = tmp_path / "edge.pathprof"
    pathprof_cli(tmp_path, "run", "--mode", "edge", "--data-file", str(data),
                 str(tmp_path / "m.py"))
    assert main(["coverage", "--data-file", str(data), "--format", output,
                 "--fail-under", "50"]) == ERR
    captured = capsys.readouterr()
    assert captured.err == ("pathprof: path coverage needs a path profile; this data file "
                            "holds an edge profile (pathprof run --mode edge): measure "
                            "again without --mode edge\n")
    assert "No functions were measured" not in captured.out


def test_nothing_measured_fails_a_threshold_and_says_so(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A data file with no function (a source that matched nothing): its 0 of 0
    paths are 100% covered, which met any --fail-under; now the check fails, saying
    why. Without a threshold the report says nothing was measured, with status 0."""
    (tmp_path / "m.py").write_text("import json\n")
    pathprof_cli(tmp_path, "run", "--source", "nosuch", "--data-file", "d", "m.py")
    monkeypatch.chdir(tmp_path)
    assert main(["coverage", "--data-file", "d"]) == OK
    assert "No functions were measured." in capsys.readouterr().out
    for command in (["coverage"], ["lcov", "-o", "-"], ["xml", "-o", "-"]):
        assert main([*command, "--data-file", "d", "--fail-under", "10"]) == CHECK_FAILED
        assert capsys.readouterr().err == ("pathprof: nothing was measured: no total basis "
                                           "path coverage to meet --fail-under 10\n")


def test_instrument_fills_the_cache_and_lists_what_it_cannot(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PATHPROF_CACHE_DIR", raising=False)  # (pathprof_cli writes bytecode)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "good.py").write_text("def f(x):\n    return 1 if x else 2\n")
    (tmp_path / "pkg" / "bad.py").write_text("def f(:\n")
    (tmp_path / ".venv" / "lib").mkdir(parents=True)
    (tmp_path / ".venv" / "lib" / "hidden.py").write_text("x = 1\n")

    first = pathprof_cli(tmp_path, "instrument")
    assert first.stdout.strip() == ("3 files: 2 instrumented, 0 already cached, 1 could not "
                                    "be; cached in __pycache__")
    assert "bad.py: SyntaxError" in first.stderr
    cached = sorted(p.name.split(".")[0] for p in (tmp_path / "pkg" / "__pycache__").glob(
        "*.pathprof-*.pyc"))
    assert cached == ["__init__", "good"]
    second = pathprof_cli(tmp_path, "instrument")
    assert second.stdout.strip() == "3 files: 0 instrumented, 2 already cached, 1 could not be"
    assert not (tmp_path / ".pathprof_cache").exists()


def test_instrument_counts_one_file_as_one(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """ "1 file: ...", not "1 files"."""
    monkeypatch.delenv("PATHPROF_CACHE_DIR", raising=False)
    (tmp_path / "one.py").write_text("def f(x):\n    return 1 if x else 2\n")
    done = pathprof_cli(tmp_path, "instrument")
    assert done.stdout.startswith("1 file: 1 instrumented, 0 already cached"), done.stdout


def test_erase_removes_the_data_files_and_nothing_else(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("def f(x):\n    return 1 if x else 2\n\nf(1)\n")
    pathprof_cli(tmp_path, "run", "app.py")
    data = tmp_path / ".pathprof"
    leftover = tmp_path / ".pathprof.0123456789ab.host.42"  # a child's, never combined
    leftover.write_bytes(data.read_bytes())
    notes = tmp_path / ".pathprof.notes"
    notes.write_text("mine")
    other = tmp_path / "other.db"
    other.write_bytes(data.read_bytes())
    done = pathprof_cli(tmp_path, "erase")
    assert (done.stdout, done.stderr) == ("", "")
    assert not data.exists()
    assert not leftover.exists()
    assert notes.read_text() == "mine"  # not a data file: untouched
    assert other.exists()
    # Nothing to erase is not an error; a file that is not a data file is refused.
    assert pathprof_cli(tmp_path, "erase").returncode == OK
    data.write_text("my notes, not pathprof's")
    refused = pathprof_cli(tmp_path, "erase", check=False)
    assert refused.returncode == ERR
    assert "is not a pathprof data file" in refused.stderr
    assert data.read_text() == "my notes, not pathprof's"
    # --data-file names another one.
    pathprof_cli(tmp_path, "erase", "--data-file", "other.db")
    assert not other.exists()


#: Data files beside .pathprof, named as pathprof names them now and as earlier
#: pathprofs did (pathprof.data.files' docstring), and as a user names them (.coverage.*).
BESIDE = [".pathprof.child-0123456789ab.node-1.42.0123abcd",
          ".pathprof.xdist-0123456789ab-gw0.node-1.43.0123abcd",
          ".pathprof.xdist-0123456789ab-gw0.node-1.43.0123abcd.child-fedcba987654.n.7.00c0ffee",
          ".pathprof.saved.node-1.44.0123abcd",
          ".pathprof.0123456789ab.node-1.example.com.42", ".pathprof.xdist.0123456789ab.gw1",
          ".pathprof.saved-45-deadbeef", ".pathprof.mine"]
#: Beside it too, but not its data files: left alone by combine and erase.
NOT_BESIDE = [".pathprof.child-0123456789ab.node-1.46.0123abcd-journal",
              ".pathprof.saved.node-1.44.0123abcd.tmp", ".pathprof.mine.lock",
              ".pathprof2", ".pathprof2.child-0123456789ab.node-1.42.0123abcd",
              ".pathprof-old"]


def test_combine_and_erase_take_every_naming_and_leave_journals(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("def f(x):\n    return 1 if x else 2\n\nf(1)\n")
    pathprof_cli(tmp_path, "run", "--data-file", "one.db", "app.py")
    one = (tmp_path / "one.db").read_bytes()
    for name in BESIDE:
        (tmp_path / name).write_bytes(one)
    for name in NOT_BESIDE:
        (tmp_path / name).write_bytes(b"a journal, half a file, another data file")
    done = pathprof_cli(tmp_path, "combine")
    assert done.stdout.startswith(f"combined {len(BESIDE)} data files into ")
    assert functions_by_name(tmp_path / ".pathprof")["f"].total == len(BESIDE)
    assert sorted(p.name for p in tmp_path.glob(".pathprof*")) == sorted(
        [".pathprof", *NOT_BESIDE])
    for name in BESIDE:
        (tmp_path / name).write_bytes(one)
    assert pathprof_cli(tmp_path, "erase").returncode == OK
    assert sorted(p.name for p in tmp_path.glob(".pathprof*")) == sorted(NOT_BESIDE)


def test_reports_pick_files_and_sort_rows(tmp_path: Path) -> None:
    """--include/--omit at report time pick among the files measured; coverage
    --sort orders the rows across files (lowest first, -COLUMN highest first)."""
    (tmp_path / "lib_a.py").write_text(
        "def one(x):\n    if x:\n        return 1\n    return 2\n")
    (tmp_path / "lib_b.py").write_text(
        "def two(x, y):\n    if x:\n        x = 1\n    if y:\n        y = 1\n    return x\n")
    (tmp_path / "app.py").write_text("import lib_a, lib_b\nlib_a.one(1)\nlib_a.one(0)\n"
                                     "lib_b.two(1, 1)\n")
    pathprof_cli(tmp_path, "run", "app.py")
    only_b = pathprof_cli(tmp_path, "coverage", "--include", "*lib_b.py").stdout
    assert "lib_b.py:1 two" in only_b
    assert "lib_a" not in only_b
    total = next(row for row in only_b.splitlines() if row.startswith("TOTAL"))
    assert total.split()[1:] == ["4", "1", "3", "25.0%", "1/3", "33.3%"]  # two's alone
    no_a = json.loads(pathprof_cli(tmp_path, "coverage", "--format", "json", "--omit",
                                   "lib_a.py").stdout)
    assert [f["file"].rsplit("/", 1)[-1] for f in no_a["files"]] == ["lib_b.py"]
    report = pathprof_cli(tmp_path, "report", "--omit", "*/lib_b.py").stdout
    assert "one" in report
    assert "two" not in report
    rows = [row.split()[1] for row in pathprof_cli(
        tmp_path, "coverage", "--sort=-missed").stdout.splitlines()
        if row.startswith(("lib_a.py:", "lib_b.py:"))]
    assert rows == ["two", "one"]  # two missed 3, one none
    rows = [row.split()[1] for row in pathprof_cli(
        tmp_path, "coverage", "--sort", "cover").stdout.splitlines()
        if row.startswith(("lib_a.py:", "lib_b.py:"))]
    assert rows == ["two", "one"]  # 25 % before 100 %
    bad = pathprof_cli(tmp_path, "coverage", "--sort", "size", check=False)
    assert bad.returncode == ERR
    assert "--sort size: choose from name, paths, run, missed, cover, basis" in bad.stderr



def test_exit_statuses_tell_usage_errors_failed_checks_and_errors_apart(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """0 success, 1 an error, 2 bad usage (argparse's), 3 a check asked for failed
    (--fail-under, diff --fail-on-change): a CI can tell a typo from a coverage drop."""
    assert (OK, ERR, USAGE, CHECK_FAILED) == (0, 1, 2, 3)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.py").write_text("def f(x):\n    if x:\n        return 1\n    return 2\n"
                                   "f(1)\n")
    pathprof_cli(tmp_path, "run", "--data-file", "d", "m.py")
    with pytest.raises(SystemExit) as usage:
        main(["coverage", "--no-such-option"])
    assert usage.value.code == USAGE
    assert main(["coverage", "--data-file", "d", "--fail-under", "100"]) == CHECK_FAILED
    assert main(["coverage", "--data-file", "missing"]) == ERR
    assert main(["diff", "d", "d", "--fail-on-change"]) == OK
    capsys.readouterr()
