"""Unit tests of :mod:`pathprof.cli.program`: the commands that run a program (``run``,
``count``, ``hot``) and ``instrument``, called in-process through
:func:`pathprof.cli.main`. A measured run would end as the interpreter does (its exit
handlers) inside the test process, so no program is run here: what is tested is what
the commands decide before a program starts (options that do not go together, a
report destination that cannot be written, a program that is nowhere, each a status
and one line), the parsers' types, the exit status of a parallel run (the run itself
stood in for), ``instrument`` filling a cache directory of the test's own, and the
``_Reporting`` keeper of ``count`` and ``hot``."""

from __future__ import annotations

import argparse
import io
import os
import sys
from pathlib import Path

import pytest
from rich.console import Console
from rich.live import Live

from pathprof import api
from pathprof.cli import ERR, OK, USAGE, main
from pathprof.cli.after_run import AfterTheRun
from pathprof.cli.program import _period, _Reporting, _shown
from pathprof.parallel.plan import CopiesPlan
from pathprof.parallel.run import ParallelResult


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The working directory, with a program ``prog.py`` and no configuration."""
    (tmp_path / "prog.py").write_text("print('the program ran')\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PATHPROF_CACHE_DIR", raising=False)
    return tmp_path


def _refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    status = main(argv)
    out, err = capsys.readouterr()
    assert "the program ran" not in out
    return status, err


# -- run -------------------------------------------------------------------------------------


@pytest.mark.parametrize(("options", "message"), [
    (["--parallel", "2", "--stop-counting", "basis"],
     "pathprof: --stop-counting does not go with --parallel (the copies' profiles are "
     "merged count by count)\n"),
    (["--parallel", "2", "--conditions"],
     "pathprof: --conditions does not go with --parallel (a parallel run measures paths "
     "only)\n"),
    (["--parallel", "2", "--executor", "dask"],
     "pathprof: --executor dask needs --scheduler ADDRESS (such as tcp://HOST:8786)\n"),
    (["--parallel", "2", "--scheduler", "tcp://host:8786"],
     "pathprof: --scheduler goes with --executor dask\n"),
    (["--verify"], "pathprof: --executor, --scheduler, --verify and --plan-from go with "
                   "--parallel K\n"),
    (["--plan-from", "old.pathprof"], "pathprof: --executor, --scheduler, --verify and "
                                      "--plan-from go with --parallel K\n"),
    (["--executor", "dask"], "pathprof: --executor, --scheduler, --verify and --plan-from "
                             "go with --parallel K\n"),
])
def test_run_options_that_do_not_go_together_are_a_usage_error(
        here: Path, capsys: pytest.CaptureFixture[str], options: list[str],
        message: str) -> None:
    assert _refused(["run", *options, "prog.py"], capsys) == (USAGE, message)
    assert not (here / ".pathprof").exists()


def test_run_of_a_program_that_is_nowhere_is_an_error(
        here: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(here / "bin"))
    assert _refused(["run", "pp-no-such-program"], capsys) == (
        ERR, "pathprof: no such file or program: pp-no-such-program\n")


def test_run_refuses_a_parallel_count_below_one(here: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as usage:
        main(["run", "--parallel", "0", "prog.py"])
    assert usage.value.code == USAGE
    assert "argument --parallel: must be at least 1" in capsys.readouterr().err


@pytest.mark.parametrize(("returncode", "differences", "status"), [
    (0, None, OK), (4, None, 4), (-15, None, 143), (-2, None, 130), (0, ["f differs"], ERR),
    (0, [], OK)])
def test_a_parallel_runs_status_is_the_programs_or_an_error_for_differences(
        here: Path, monkeypatch: pytest.MonkeyPatch, returncode: int,
        differences: list[str] | None, status: int) -> None:
    def parallel_run(*args: object, **settings: object) -> ParallelResult:
        plan = CopiesPlan(2, {}, {}, (0, 0))
        return ParallelResult(plan, returncode, differences=differences)

    monkeypatch.setattr(api, "parallel_run", parallel_run)
    assert main(["run", "--parallel", "2", "prog.py"]) == status


# -- count and hot ------------------------------------------------------------------------------


def test_count_refuses_a_json_file_it_could_not_write(
        here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, err = _refused(["count", "--json", str(here), "prog.py"], capsys)
    assert (status, err) == (ERR, f"pathprof: cannot write the counts to {here}: Is a "
                                  "directory; the program was not run\n")


def test_count_checks_its_options_types(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as usage:
        main(["count", "--top", "-1", "prog.py"])
    assert usage.value.code == USAGE
    assert "argument --top: -1 is negative" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["count", "--kind", "lines", "prog.py"])
    assert "invalid choice: 'lines'" in capsys.readouterr().err


@pytest.mark.parametrize("confidence", ["0", "1", "1.5", "-0.1"])
def test_hot_confidence_is_a_probability_strictly_between_0_and_1(
        here: Path, capsys: pytest.CaptureFixture[str], confidence: str) -> None:
    assert _refused(["hot", "--confidence", confidence, "prog.py"], capsys) == (
        ERR, "pathprof: --confidence is a probability strictly between 0 and 1\n")


def test_hot_rank_by_cost_needs_costs(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _refused(["hot", "--rank", "cost", "prog.py"], capsys) == (
        ERR, "pathprof: --rank cost needs --costs statements (block costs to rank by)\n")


def test_hot_refuses_destinations_it_could_not_write(
        here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = here / "missing" / "hot.json"
    assert _refused(["hot", "--json", str(missing), "prog.py"], capsys) == (
        ERR, f"pathprof: cannot write the estimates to {missing}: No such file or "
             "directory; the program was not run\n")
    (here / "blocker").write_text("a file")
    assert _refused(["hot", "--html", "blocker/html", "prog.py"], capsys) == (
        ERR, "pathprof: cannot write the report to blocker/html: Not a directory; the "
             "program was not run\n")


def test_hot_period_is_a_number_of_blocks_or_auto() -> None:
    assert _period("auto") is None
    assert _period("250") == 250.0
    assert _period("0.5") == 0.5
    with pytest.raises(argparse.ArgumentTypeError) as refused:
        _period("often")
    assert str(refused.value) == "'often' is neither a number of blocks nor 'auto'"


def test_hot_checks_its_options_types(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for options, message in ((["--period", "often"], "neither a number of blocks nor 'auto'"),
                             (["--memory", "0"], "must be at least 1"),
                             (["--longest", "-2"], "-2 is negative")):
        with pytest.raises(SystemExit) as usage:
            main(["hot", *options, "prog.py"])
        assert usage.value.code == USAGE
        assert message in capsys.readouterr().err


# -- instrument --------------------------------------------------------------------------------


def test_instrument_fills_the_cache_and_names_what_it_could_not(
        here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (here / "prog.py").unlink()
    (here / "good.py").write_text("def f(x):\n    return 1 if x else 2\n")
    (here / "bad.py").write_text("def f(:\n")
    assert main(["instrument", "--cache-dir", "cache"]) == OK
    out, err = capsys.readouterr()
    assert out == ("2 files: 1 instrumented, 0 already cached, 1 could not be; cached in "
                   "cache\n")
    assert err.startswith("  bad.py: SyntaxError")
    assert any((here / "cache").rglob("*"))
    assert main(["instrument", "--cache-dir", "cache"]) == OK
    assert capsys.readouterr().out == "2 files: 0 instrumented, 1 already cached, 1 could not be\n"


def test_instrument_counts_one_file_as_one(here: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["instrument", "--cache-dir", str(here.parent / f"{here.name}-cache")]) == OK
    out = capsys.readouterr().out
    assert out.startswith("1 file: 1 instrumented, 0 already cached, 0 could not be; cached in ")
    assert out.endswith(f"{here.name}-cache\n")


def test_instrument_refuses_stopping_counting_without_path_coverage(
        here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["instrument", "--mode", "edge", "--stop-counting", "basis"]) == ERR
    assert capsys.readouterr().err == ("pathprof: stopping counting is for path coverage: it "
                                       "needs path mode and no metric\n")


def test_instrument_with_nothing_selected_is_an_error(
        here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["instrument", "--source", str(here / "empty")]) == ERR
    assert capsys.readouterr().err == ("pathprof: no source files selected (see --source, "
                                       "--include, --omit)\n")


def test_a_directory_is_shown_relative_when_under_the_current_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert _shown(str(tmp_path / "cache" / "x")) == os.path.join("cache", "x")
    assert _shown("/elsewhere/cache") == "/elsewhere/cache"


# -- the keeper of count and hot ------------------------------------------------------------------


def _after(monkeypatch: pytest.MonkeyPatch) -> tuple[AfterTheRun, io.StringIO]:
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    return AfterTheRun(), err


def test_the_keeper_reports_and_says_when_sigterm_cut_the_run(
        monkeypatch: pytest.MonkeyPatch) -> None:
    after, err = _after(monkeypatch)
    keeper = _Reporting(lambda: after.write(lambda out: out.write("the report\n")), after)
    keeper.keep(terminated=False)
    assert err.getvalue() == "the report\n"
    keeper.keep(terminated=True)
    assert err.getvalue() == ("the report\npathprof: terminated by SIGTERM: what was "
                              "measured up to the signal follows\nthe report\n")
    assert keeper.keeps_when_raised is False


def test_the_keeper_says_nothing_was_measured_before_the_program_started(
        monkeypatch: pytest.MonkeyPatch) -> None:
    after, err = _after(monkeypatch)
    keeper = _Reporting(lambda: after.write(lambda out: out.write("report\n")), after)
    keeper.program_starts()
    keeper.nothing_measured()
    assert err.getvalue() == ("pathprof: terminated by SIGTERM before the program started: "
                              "nothing was measured\n")


def test_the_keeper_stops_the_live_view_as_the_program_ends(
        monkeypatch: pytest.MonkeyPatch) -> None:
    after, _err = _after(monkeypatch)
    live = Live(console=Console(file=io.StringIO()), auto_refresh=False)
    live.start()
    _Reporting(lambda: None, after, ended=live.stop).program_ended()
    assert not live.is_started


def test_what_the_keeper_does_as_the_program_ends_never_raises(
        monkeypatch: pytest.MonkeyPatch) -> None:
    after, err = _after(monkeypatch)

    def stop_live() -> None:
        raise RuntimeError("standard error is closed")

    _Reporting(lambda: None, after, ended=stop_live).program_ended()  # does not raise
    _Reporting(lambda: None, after).program_ended()  # nothing to do
    assert err.getvalue() == ""
