"""The pytest plugin, end to end: `pytest --pathprof` on a copy of examples/pathcov.

The expected figures come from reading the sample's source, not from pathprof:
``price`` has 3 volume branches x member x coupon = 12 paths and its tests take 2;
``reserve`` has 3 (two raises, one return) and its tests take 2.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import pathprof
from pathprof.data.store import read
from pathprof.version import __version__

SAMPLE = Path(__file__).resolve().parent.parent / "examples" / "pathcov"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    copy = tmp_path / "pathcov"
    shutil.copytree(SAMPLE, copy, ignore=shutil.ignore_patterns(".pathprof*", "__pycache__",
                                                                "*.json", "htmlpathprof"))
    return copy


def pytest_in(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTEST_", "PATHPROF_")) or k == "PATHPROF_CACHE_DIR"}
    env["COLUMNS"] = "120"
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
                          cwd=project, env=env, capture_output=True, text=True, timeout=300)


def functions_of(report: dict) -> dict[str, dict]:
    return {fn["qualname"]: fn for file in report["files"] for fn in file["functions"]}


def test_path_coverage_of_the_sample_suite(project: Path) -> None:
    done = pytest_in(project, "--pathprof", "--pathprof-report=term-missing",
                     "--pathprof-report=json:cov.json")
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads((project / "cov.json").read_text())
    functions = functions_of(report)
    assert (functions["price"]["paths_possible"], functions["price"]["paths_run"]) == ("12", 2)
    assert (functions["reserve"]["paths_possible"], functions["reserve"]["paths_run"]) == ("3", 2)
    missed_reserve = functions["reserve"]["missed_paths"]
    assert len(missed_reserve) == 1  # the ValueError for a non-positive quantity
    assert missed_reserve[0]["end"] == "raise"
    first_decision = missed_reserve[0]["decisions"][0]
    assert (first_decision["line"], first_decision["taken"]) == (10, "true")
    assert report["totals"]["paths_run"] == sum(f["paths_run"] for f in functions.values())
    out = done.stdout
    assert "pathprof: path coverage" in out
    assert "inventory/stock.py:33 price" in out
    assert "Missed paths" in out
    # reserve's missed path, the one test left to write, told as the decision to take
    assert "+ 1. if quantity <= 0: → true · (raises)" in out
    assert "1. price  inventory/stock.py:33  3 of 5 missing" in out  # where to test next
    assert "some may be" in out  # the note that possible paths may be infeasible


def test_fail_under(project: Path) -> None:
    """The threshold applies to basis path coverage, 7 of 13 = 53.85% (paths run: 7 of
    23 = 30.43%, which 50 would fail)."""
    low = pytest_in(project, "--pathprof", "--pathprof-fail-under=50")
    assert low.returncode == 0, low.stdout
    high = pytest_in(project, "--pathprof", "--pathprof-fail-under=60")
    assert high.returncode == 1
    assert ("FAIL: total basis path coverage 53.85% is below --pathprof-fail-under 60"
            in high.stdout)
    assert "5 passed" in high.stdout


def test_fail_under_from_pathprofrc(project: Path) -> None:
    (project / ".pathprofrc").write_text('source = ["inventory"]\nfail_under = 90\n')
    done = pytest_in(project, "--pathprof")
    assert done.returncode == 1
    assert "53.85% is below fail_under = 90 in .pathprofrc" in done.stdout
    assert "--pathprof-fail-under" not in done.stdout


def test_fail_under_from_pyproject_and_the_flag_over_it(project: Path) -> None:
    pyproject = project / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + "fail_under = 80\n")
    done = pytest_in(project, "--pathprof")
    assert done.returncode == 1
    assert "53.85% is below fail_under = 80 in pyproject.toml" in done.stdout
    flag = pytest_in(project, "--pathprof", "--pathprof-fail-under=70.5")
    assert flag.returncode == 1
    assert "53.85% is below --pathprof-fail-under 70.5" in flag.stdout
    assert "fail_under = 80" not in flag.stdout


def test_test_contexts_say_which_test_ran_each_path(project: Path) -> None:
    done = pytest_in(project, "--pathprof", "--pathprof-context=test")
    assert done.returncode == 0, done.stdout + done.stderr
    price = next(f for f in read(str(project / ".pathprof")).functions if f.qualname == "price")
    by_test = {}
    for path in price.paths:
        (test,) = price.contexts[path.id]
        lines = [fn_line for block in path.blocks if (fn_line := price.block_lines(block))]
        by_test[test.rsplit("::", 1)[1]] = [first for first, _last in lines]
    # test_price_plain: quantity 1, no member, no coupon -> 35, 38, 40, 42, 44 (no bodies)
    assert by_test["test_price_plain"] == [35, 38, 40, 42, 44]
    assert by_test["test_price_volume_and_member"] == [35, 37, 40, 41, 42, 44]


def test_xdist_workers_are_combined(project: Path) -> None:
    pytest.importorskip("xdist")
    done = pytest_in(project, "-n", "2", "--pathprof", "--pathprof-report=json:cov.json",
                     "--pathprof-context=test")
    assert done.returncode == 0, done.stdout + done.stderr
    functions = functions_of(json.loads((project / "cov.json").read_text()))
    assert functions["price"]["paths_run"] == 2
    assert functions["reorder_list"]["paths_run"] == 3
    assert sorted(p.name for p in project.iterdir() if p.name.startswith(".pathprof")) == [
        ".pathprof"]
    contexts = {test for fn in functions.values() for tests in fn.get("contexts", {}).values()
                for test in tests}
    assert len(contexts) == 5  # every test ran some measured path, in either worker
    # Nothing lost by the workers writing into a file that did not exist: the same
    # path executions as one process records.
    def totals() -> dict[str, int]:
        return {f.qualname: f.total for f in pathprof.load(str(project / ".pathprof")).functions}

    by_workers = totals()
    (project / ".pathprof").unlink()
    alone = pytest_in(project, "--pathprof", "--pathprof-stop-counting=never")
    assert alone.returncode == 0, alone.stdout + alone.stderr
    assert by_workers == totals()
    assert sum(by_workers.values()) > 0


def test_assertion_rewriting_is_left_intact(project: Path) -> None:
    (project / "tests" / "test_fails.py").write_text(
        "from inventory.stock import reserve\n\n"
        "def test_wrong():\n"
        "    assert reserve({'a': 5}, 'a', 2) == 4\n")
    done = pytest_in(project, "--pathprof=.")  # tests inside the measured directory too
    assert done.returncode == 1
    assert "assert 3 == 4" in done.stdout  # pytest's rewritten assertion, with values
    assert "where 3 = reserve(" in done.stdout


def test_off_unless_asked(project: Path) -> None:
    done = pytest_in(project)
    assert done.returncode == 0
    assert f"pathprof-{__version__}" in done.stdout  # registered by its entry point
    assert "path coverage" not in done.stdout
    assert not (project / ".pathprof").exists()


def test_unknown_report_kind_is_a_usage_error(project: Path) -> None:
    done = pytest_in(project, "--pathprof", "--pathprof-report=pdf")
    assert done.returncode == 4
    assert "choose from term, term-missing" in done.stderr


def test_bad_configuration_is_a_usage_error(project: Path) -> None:
    (project / ".pathprofrc").write_text('report = ["pdf"]\n')
    done = pytest_in(project, "--pathprof")
    assert done.returncode == 4
    assert "pathprof: 'pdf': choose from" in done.stderr
    (project / ".pathprofrc").write_text('colour = "red"\n')
    done = pytest_in(project, "--pathprof")
    assert done.returncode == 4
    assert "unknown setting tool.pathprof.colour" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("entry", ["pathprof run -m pytest", "pytest --pathprof"])
def test_a_suite_that_turns_warnings_into_errors_runs_as_without_pathprof(
        tmp_path: Path, entry: str) -> None:
    """``filterwarnings = ["error"]``: pytest's "already imported, cannot be rewritten"
    warning about the pathprof plugin (imported before pytest under ``pathprof run``)
    and pathprof's own notices must not become errors."""
    (tmp_path / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\nfilterwarnings = ["error"]\n')
    (tmp_path / "mod.py").write_text("def f(x):\n    if x:\n        return 1\n    return 2\n")
    (tmp_path / "test_mod.py").write_text(
        "from mod import f\n\ndef test_f():\n    assert f(1) == 1\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "PATHPROF_"))}
    # Measuring a module pytest imports before any plugin runs (its notice, if any).
    run = ["-m", "pathprof", "run", "--source", ".", "-m", "pytest"] if entry.startswith(
        "pathprof") else ["-m", "pytest", "--pathprof=mod", "--pathprof=pluggy"]
    done = subprocess.run([sys.executable, *run, "-q", "-p", "no:cacheprovider"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout
    assert "Warning" not in done.stdout + done.stderr


def test_edge_mode_in_the_configuration_is_named_not_silently_ignored(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.pathprof]\nmode = "edge"\n')
    (tmp_path / "mod.py").write_text("def f(x):\n    if x:\n        return 1\n    return 2\n")
    (tmp_path / "test_mod.py").write_text(
        "from mod import f\n\ndef test_f():\n    assert f(1) == 1\n")
    done = pytest_in(tmp_path, "-q", "--pathprof=mod")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count('pathprof: mode = "edge" in the configuration is for '
                             "pathprof run") == 1
    # Paths were measured: path coverage is reported, 1 of the 2 paths run.
    assert "TOTAL" in done.stdout
    assert "50.0%" in done.stdout


def test_the_terminal_report_is_per_file_by_default_and_can_be_left_out(project: Path
                                                                        ) -> None:
    """term: a row per file (a suite's log is not one row per function); term-missing:
    a row per function; :skip-covered; an empty --pathprof-report: no report at all,
    the data file still written (as pytest-cov's --cov-report=)."""
    default = pytest_in(project, "--pathprof").stdout
    table = default.split("pathprof: path coverage")[1]
    assert "inventory/stock.py " in table or "inventory/stock.py\n" in table
    assert " price" not in table
    assert "reserve" not in table
    assert table.count("TOTAL") == 1
    missing = pytest_in(project, "--pathprof", "--pathprof-report=term-missing").stdout
    assert "inventory/stock.py:33 price" in missing
    # Fully covered functions leave the table with :skip-covered (none is, here, but
    # a test that runs every path of reserve makes it so).
    (project / "tests" / "test_more.py").write_text(
        "import pytest\nfrom inventory.stock import reserve\n\n"
        "def test_nonpositive():\n    with pytest.raises(ValueError):\n"
        "        reserve({'bolt': 1}, 'bolt', 0)\n")
    full = pytest_in(project, "--pathprof", "--pathprof-report=term-missing").stdout
    skipped = pytest_in(project, "--pathprof",
                        "--pathprof-report=term-missing:skip-covered").stdout
    assert "reserve" in full.split("Missed paths")[0]
    assert "reserve" not in skipped.split("Missed paths")[0]
    assert "price" in skipped
    # term:skip-covered: the rows of files whose every path ran go; the TOTAL stays.
    (project / "inventory" / "units.py").write_text("def double(x):\n    return 2 * x\n")
    (project / "tests" / "test_units.py").write_text(
        "from inventory.units import double\n\ndef test_double():\n"
        "    assert double(2) == 4\n")

    def file_rows(*args: str) -> list[str]:
        out = pytest_in(project, "--pathprof", *args).stdout
        return [row.split()[0] for row in out.split("pathprof: path coverage")[1]
                .splitlines() if row.startswith(("inventory", "TOTAL"))]

    assert file_rows() == ["inventory/stock.py", "inventory/units.py", "TOTAL"]
    assert file_rows("--pathprof-report=term:skip-covered") == ["inventory/stock.py",
                                                                "TOTAL"]
    none = pytest_in(project, "--pathprof", "--pathprof-report=")
    assert none.returncode == 0, none.stdout + none.stderr
    assert "TOTAL" not in none.stdout
    assert "Missed paths" not in none.stdout
    assert pathprof.load(str(project / ".pathprof")).functions
    bad = pytest_in(project, "--pathprof", "--pathprof-report=term:everything")
    assert bad.returncode != 0
    assert "take only :skip-covered" in bad.stderr


def test_no_pathprof_turns_off_what_addopts_turns_on(project: Path) -> None:
    pyproject = project / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace(
        'pythonpath = ["."]', 'pythonpath = ["."]\naddopts = "--pathprof"'))
    on = pytest_in(project)
    assert "pathprof: path coverage" in on.stdout
    (project / ".pathprof").unlink()
    off = pytest_in(project, "--no-pathprof")
    assert off.returncode == 0, off.stdout + off.stderr
    assert "pathprof: path coverage" not in off.stdout
    assert not (project / ".pathprof").exists()


def test_append_adds_a_session_to_the_data_file(project: Path) -> None:
    pytest_in(project, "--pathprof", "-k", "reserve")
    first = pathprof.load(str(project / ".pathprof"))
    assert {f.qualname for f in first.functions if f.total} == {"reserve"}
    pytest_in(project, "--pathprof", "--pathprof-append", "-k", "price")
    both = pathprof.load(str(project / ".pathprof"))
    assert len(both.runs) == 2
    ran = {f.qualname: f.total for f in both.functions if f.total}
    assert set(ran) == {"reserve", "price"}
    assert ran["reserve"] == sum(f.total for f in first.functions if f.qualname == "reserve")
    # Without --pathprof-append the file is replaced.
    pytest_in(project, "--pathprof", "-k", "price")
    assert len(pathprof.load(str(project / ".pathprof")).runs) == 1


STOPPING_LIB = """
def sign(x):
    if x < 0:
        return -1
    return 1


def two(a, b):
    n = 0
    if a:
        n += 1
    if b:
        n += 2
    return n


def nested(x):
    def inner():
        return x
    return inner()
"""

STOPPING_TESTS = """
import lib


def test_sign():
    assert [lib.sign(x) for x in (-1, 1, *range(50))] == [-1, 1, *([1] * 50)]
    assert [lib.nested(x) for x in range(5)] == list(range(5))
    assert [lib.two(a, b) for a, b in ((1, 1), (1, 0), (0, 1), (0, 0))] == [3, 1, 2, 0]
"""


def test_functions_stop_counting_once_their_basis_is_full(tmp_path: Path) -> None:
    """By default a function goes back to its original code once its basis is full:
    ``sign``'s two paths ran once each, the 50 calls after them are not counted, and
    the data file and the reports say its counts are lower bounds. ``nested`` defines
    a function, so it keeps counting. ``two`` has 4 paths in a space of 3: the
    fourth runs after its basis is full, so its paths run are "at least 3 of 4".
    Contexts or ``never`` count every call."""
    (tmp_path / "lib.py").write_text(STOPPING_LIB)
    (tmp_path / "test_lib.py").write_text(STOPPING_TESTS)

    def profile(*args: str) -> dict[str, Any]:
        done = pytest_in(tmp_path, "--pathprof=lib", "--pathprof-report=term-missing",
                         "--pathprof-report=json:cov.json", *args)
        assert done.returncode == 0, done.stdout + done.stderr
        functions = {f.qualname: f for f in read(str(tmp_path / ".pathprof")).functions}
        report = functions_of(json.loads((tmp_path / "cov.json").read_text()))
        return {"counts": {name: (f.total, f.stopped) for name, f in functions.items()},
                "json": report, "out": done.stdout}

    stopping = profile("--pathprof-report=html:report")
    pages = {page.name: page.read_text() for page in (tmp_path / "report").glob("*.html")}
    noted = [name for name, text in pages.items() if "went back to its original code" in text]
    assert len(noted) == 3  # sign, two and inner: each says its counts are lower bounds
    assert "≥3" in pages["index.html"]
    assert stopping["counts"] == {"sign": (2, True), "nested": (5, False),
                                  "nested.<locals>.inner": (1, True), "two": (3, True)}
    report = stopping["json"]
    assert (report["sign"]["basis_covered"], report["sign"]["paths_run_at_least"]) == (2, False)
    assert (report["two"]["basis_covered"], report["two"]["basis_dimension"]) == (3, 3)
    assert (report["two"]["paths_run"], report["two"]["paths_run_at_least"]) == (3, True)
    assert "≥3" in stopping["out"]
    # term-missing lists what a test can add to: not ``two``, whose basis is complete
    # and whose missed path may have run after it stopped counting
    assert "two  lib.py" not in stopping["out"]
    assert ("1 function that stopped counting once its basis was complete (its missed "
            "paths may have run after)") in " ".join(stopping["out"].split())
    assert "1 function stopped counting" in stopping["out"]
    for args in (("--pathprof-stop-counting=never",), ("--pathprof-context=test",)):
        assert profile(*args)["counts"] == {"sign": (52, False), "nested": (5, False),
                                            "nested.<locals>.inner": (5, False),
                                            "two": (4, False)}, args
    wrong = pytest_in(tmp_path, "--pathprof=lib", "--pathprof-context=test",
                      "--pathprof-stop-counting=basis")
    assert wrong.returncode == 4
    assert "needs every run of every path" in wrong.stderr


@pytest.mark.parametrize("report", ["html:a_file/htmlpathprof", "json:a_file/cov.json",
                                    "lcov:a_file/coverage.lcov", "xml:a_file/coverage.xml"])
def test_a_report_that_cannot_be_written_fails_the_session(project: Path, report: str
                                                           ) -> None:
    """Exit status 3 (pytest's INTERNAL_ERROR): not 0, as if the report were there,
    nor 1, a failed test or threshold; the other reports are still written."""
    (project / "a_file").write_text("a regular file, not a directory\n")
    done = pytest_in(project, "--pathprof", f"--pathprof-report={report}",
                     "--pathprof-report=json:cov.json")
    assert done.returncode == 3, done.stdout + done.stderr
    kind, _colon, destination = report.partition(":")
    assert (f"pathprof: the {kind} report was not written to {destination}: Not a directory"
            in done.stdout)
    assert "pathprof: wrote cov.json" in done.stdout
    assert (project / "cov.json").is_file()
    assert "5 passed" in done.stdout


def test_failed_tests_keep_their_status_when_a_report_cannot_be_written(project: Path
                                                                        ) -> None:
    (project / "tests" / "test_fails.py").write_text("def test_wrong():\n    assert False\n")
    done = pytest_in(project, "--pathprof", "--pathprof-report=html:/dev/null/html")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "pathprof: the html report was not written to /dev/null/html" in done.stdout
    assert "1 failed, 5 passed" in done.stdout


def test_an_edge_profile_in_the_data_file_is_named_and_fails_the_session(project: Path
                                                                         ) -> None:
    """A session appended to a data file of ``pathprof run --mode edge`` (its run is
    saved aside): the report says the file holds an edge profile, not that nothing
    was measured, and the session fails with pathprof's error status."""
    (project / "main.py").write_text("from inventory.stock import reserve\n\n"
                                     "reserve({'bolt': 5}, 'bolt', 2)\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "PATHPROF_"))}
    subprocess.run([sys.executable, "-m", "pathprof", "run", "--mode", "edge", "main.py"],
                   cwd=project, env=env, check=True, timeout=300)
    done = pytest_in(project, "--pathprof", "--pathprof-append")
    assert done.returncode == 3, done.stdout + done.stderr
    assert ("pathprof: no path coverage of .pathprof: path coverage needs a path profile; "
            "this data file holds an edge profile (pathprof run --mode edge)") in done.stdout
    assert "No functions were measured" not in done.stdout
    assert "holds edge-mode data: a path-mode run cannot be added to it" in done.stderr


UNMATCHED = ("pathprof: source {!r} matched no module or file imported during the session: "
             "nothing of it was measured")


def test_a_misspelt_source_is_named_and_nothing_measured_is_said_with_the_source(
        project: Path) -> None:
    """As ``pathprof run`` names a source that matched nothing (here in the summary,
    once, not on stderr); when nothing at all was measured the summary says so with
    the source in effect and where it came from, and a threshold fails (0 of 0 paths
    would pass any), as pytest-cov's does; without one the tests' status stands."""
    done = pytest_in(project, "--pathprof=inventroy")
    assert done.returncode == 0, done.stdout + done.stderr
    section = done.stdout.split("pathprof: path coverage")[1]
    assert UNMATCHED.format("inventroy") in section
    assert "pathprof: No functions were measured; source: inventroy (--pathprof)." in section
    assert "name the code the tests import with --pathprof=DIR|PACKAGE" in section
    assert "matched no module" not in done.stderr
    assert "TOTAL" not in section
    threshold = pytest_in(project, "--pathprof=inventroy", "--pathprof-fail-under=10")
    assert threshold.returncode == 1, threshold.stdout + threshold.stderr
    assert ("FAIL: nothing was measured: no total basis path coverage to meet "
            "--pathprof-fail-under 10") in threshold.stdout
    pyproject = project / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('source = ["inventory"]',
                                                       'source = ["inventroy"]'))
    configured = pytest_in(project, "--pathprof")
    assert ("pathprof: No functions were measured; source: inventroy (source in "
            "pyproject.toml).") in configured.stdout


def test_only_the_sources_that_matched_nothing_are_named(project: Path) -> None:
    done = pytest_in(project, "--pathprof=inventory", "--pathprof=nosuch")
    assert done.returncode == 0, done.stdout + done.stderr
    assert UNMATCHED.format("nosuch") in done.stdout
    assert UNMATCHED.format("inventory") not in done.stdout
    assert "No functions were measured" not in done.stdout
    assert "TOTAL" in done.stdout


def test_xdist_workers_tell_which_sources_matched_nothing(project: Path) -> None:
    """The controller imports none of the tests' modules: a source counts as matched
    when a worker imported it."""
    pytest.importorskip("xdist")
    done = pytest_in(project, "-n", "2", "--pathprof=inventory", "--pathprof=nosuch")
    assert done.returncode == 0, done.stdout + done.stderr
    assert UNMATCHED.format("nosuch") in done.stdout
    assert UNMATCHED.format("inventory") not in done.stdout
    assert "TOTAL" in done.stdout


def test_nothing_measured_from_the_default_source_names_the_directory(tmp_path: Path
                                                                      ) -> None:
    """The code under test, and its tests, lie outside the current directory, the
    default source (test modules under the source are measured: issue 50)."""
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "mod.py").write_text("def f(x):\n    return x\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_mod.py").write_text("from mod import f\n\ndef test_f():\n"
                                                    "    assert f(1) == 1\n")
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\npythonpath = ["../lib"]\n')
    done = pytest_in(project, "-c", "pyproject.toml", "--rootdir", ".", "../tests",
                     "--pathprof")
    assert done.returncode == 0, done.stdout + done.stderr
    assert (f"pathprof: No functions were measured; source: the current directory, "
            f"{project.resolve()} (the default).") in done.stdout
    assert "matched no module" not in done.stdout + done.stderr


def test_an_empty_report_option_leaves_no_empty_section(project: Path) -> None:
    """``--pathprof-report=`` reports nothing: no section header over nothing. What
    must still be said (a source that matched nothing) keeps the section."""
    none = pytest_in(project, "--pathprof", "--pathprof-report=")
    assert none.returncode == 0, none.stdout + none.stderr
    assert "pathprof: " not in none.stdout
    assert "5 passed" in none.stdout
    assert pathprof.load(str(project / ".pathprof")).functions  # measured all the same
    said = pytest_in(project, "--pathprof=inventory", "--pathprof=nosuch",
                     "--pathprof-report=")
    section = said.stdout.split("pathprof: path coverage")[1]
    assert section.splitlines()[1] == UNMATCHED.format("nosuch")  # under the header
    assert "TOTAL" not in section


def test_the_sessions_reports_are_the_commands_of_its_data_file(project: Path) -> None:
    """One composition of the reports (:class:`pathprof.api.Reporting`): what the
    session writes is what ``pathprof coverage --format json``, ``lcov`` and ``xml`` write
    of the data file it leaves, exclusions and files never imported included; and the
    second session, from the analyses the first kept, writes the same."""
    (project / "inventory" / "never_imported.py").write_text(  # (source: the configuration's)
        "def unused(x):\n    if x:\n        return 1\n    return 2\n")
    reports = ["--pathprof-report=json:session.json", "--pathprof-report=lcov:session.lcov",
               "--pathprof-report=xml:session.xml"]
    first = pytest_in(project, "--pathprof=inventory", *reports)
    assert first.returncode == 0, first.stdout + first.stderr
    session = {kind: (project / f"session.{kind}").read_text() for kind in ("lcov", "xml")}
    document = json.loads((project / "session.json").read_text())
    assert "unused" in functions_of(document)  # (counted at 0%: the source's)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "PATHPROF_"))}
    for command, out in (("coverage", "cli.json"), ("lcov", "cli.lcov"), ("xml", "cli.xml")):
        extra = ["--format", "json"] if command == "coverage" else []
        done = subprocess.run([sys.executable, "-m", "pathprof", command, *extra, "-o", out],
                              cwd=project, env=env, capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
    assert (project / "cli.lcov").read_text() == session["lcov"]
    assert _without_timestamp((project / "cli.xml").read_text()) == _without_timestamp(
        session["xml"])
    assert json.loads((project / "cli.json").read_text())["totals"] == document["totals"]
    again = pytest_in(project, "--pathprof=inventory", *reports)
    assert again.returncode == 0
    assert json.loads((project / "session.json").read_text())["totals"] == document["totals"]
    assert list((project / ".pathprof_cache" / "analyses").glob("*.json"))


def _without_timestamp(xml: str) -> str:
    return re.sub(r'timestamp="\d+"', "", xml)
