"""``pytest --pathprof --pathprof-parallel K``, end to end on a copy of examples/pathcov:
the merged profile of K copies of the session equals the profile one session
measures, function by function and test context by test context."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

import pathprof
from pathprof.parallel.run import compare_profiles

SAMPLE = Path(__file__).resolve().parent.parent / "examples" / "pathcov"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    copy = tmp_path / "pathcov"
    shutil.copytree(SAMPLE, copy, ignore=shutil.ignore_patterns(".pathprof*", "__pycache__",
                                                                "*.json", "htmlpathprof",
                                                                ".pytest_cache"))
    return copy


def session(project: Path, *args: str, cache: bool = False,
            command: tuple[str, ...] = (sys.executable, "-m", "pytest")
            ) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items()
           if (not k.startswith(("PYTEST_", "PATHPROF_")) or k == "PATHPROF_CACHE_DIR")
           and k != "PYTHONHASHSEED"}
    env["COLUMNS"] = "120"
    plugins = () if cache else ("-p", "no:cacheprovider")
    return subprocess.run([*command, *plugins, *args], cwd=project, env=env,
                          capture_output=True, text=True, timeout=300)


def profile(data_file: Path) -> list:
    return pathprof.load(str(data_file)).functions


def contexts(functions: list) -> dict[str, dict[str, list[str]]]:
    """Per function, the tests that ran each of its paths, by path number."""
    return {fn.qualname: {key: sorted(tests) for key, tests in fn.contexts.items()}
            for fn in functions}


@pytest.mark.parametrize("copies", [2, 3])
def test_the_copies_give_the_sessions_profile_and_contexts(project: Path, copies: int) -> None:
    alone = session(project, "--pathprof", "--pathprof-context=test",
                    "--pathprof-data-file=alone")
    assert alone.returncode == 0, alone.stdout + alone.stderr
    done = session(project, "--pathprof", f"--pathprof-parallel={copies}",
                   "--pathprof-context=test", "--pathprof-report=term-missing",
                   "--pathprof-report=json:cov.json", "--junitxml=junit.xml")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("5 passed") == 1  # copy 0's session is the one shown
    assert f"pathprof: {copies} copies ran the same calls" in done.stdout
    assert "inventory/stock.py:33 price" in done.stdout
    assert "+ 1. if quantity <= 0: → true · (raises)" in done.stdout  # reserve's next path
    merged = profile(project / ".pathprof")
    assert compare_profiles(profile(project / "alone"), merged) == []
    assert contexts(merged) == contexts(profile(project / "alone"))
    assert sum(fn.total for fn in merged) > 0
    report = json.loads((project / "cov.json").read_text())
    assert report["totals"]["paths_run"] == 7
    # The JUnit report is copy 0's alone, whole; the other copies wrote theirs apart.
    suite = ElementTree.parse(project / "junit.xml").getroot().find("testsuite")
    assert suite is not None
    assert suite.get("tests") == "5"
    assert sorted(p.name for p in project.iterdir() if p.name.startswith((".pathprof",
                                                                           "junit"))) == [
        ".pathprof", "junit.xml"]


def test_the_exit_status_is_the_sessions_and_the_threshold_holds(project: Path) -> None:
    (project / "tests" / "test_fails.py").write_text(
        "from inventory.stock import reserve\n\n"
        "def test_wrong():\n"
        "    assert reserve({'a': 5}, 'a', 2) == 4\n")
    failed = session(project, "--pathprof", "--pathprof-parallel=2")
    assert failed.returncode == 1
    assert "1 failed, 5 passed" in failed.stdout
    assert "assert 3 == 4" in failed.stdout
    assert "pathprof: 2 copies ran the same calls" in failed.stdout
    (project / "tests" / "test_fails.py").unlink()
    low = session(project, "--pathprof", "--pathprof-parallel=2", "--pathprof-fail-under=50")
    assert low.returncode == 0, low.stdout + low.stderr
    high = session(project, "--pathprof", "--pathprof-parallel=2", "--pathprof-fail-under=60")
    assert high.returncode == 1
    assert "basis path coverage 53.85% is below --pathprof-fail-under 60" in high.stdout


def test_copies_read_the_cache_and_write_it_apart(project: Path) -> None:
    """``--lf``: every copy runs the one test that failed last time. A copy that read
    no cache would run all six, count other calls, and the run would say so."""
    (project / "tests" / "test_fails.py").write_text(
        "from inventory.stock import reserve\n\n"
        "def test_wrong():\n"
        "    assert reserve({'a': 5}, 'a', 2) == 4\n")
    first = session(project, "--pathprof", "--pathprof-parallel=2", cache=True)
    assert first.returncode == 1, first.stdout + first.stderr
    lastfailed = project / ".pytest_cache" / "v" / "cache" / "lastfailed"
    assert json.loads(lastfailed.read_text()) == {"tests/test_fails.py::test_wrong": True}
    again = session(project, "--pathprof", "--pathprof-parallel=3", "--lf", cache=True)
    assert again.returncode == 1, again.stdout + again.stderr
    assert "1 failed in" in again.stdout
    assert "pathprof: 3 copies ran the same calls" in again.stdout
    assert {fn.qualname: fn.total for fn in profile(project / ".pathprof")
            if fn.total} == {"reserve": 1}


def test_a_suite_that_runs_differently_each_time_is_said_not_exact(project: Path) -> None:
    (project / "tests" / "test_random.py").write_text(
        "import os\n"
        "from inventory.stock import price\n\n"
        "def test_some_prices():\n"
        "    for _ in range(1 + int.from_bytes(os.urandom(2), 'big')):\n"
        "        price(1, 2.0)\n")
    done = session(project, "--pathprof", "--pathprof-parallel=3")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "the 3 copies did not run the same way (price: [" in done.stdout
    assert "is not exact" in done.stdout


def test_xdist_workers_inside_each_copy(project: Path) -> None:
    pytest.importorskip("xdist")
    alone = session(project, "--pathprof", "--pathprof-data-file=alone")
    assert alone.returncode == 0, alone.stdout + alone.stderr
    done = session(project, "-n", "2", "--pathprof", "--pathprof-parallel=2")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "pathprof: 2 copies ran the same calls" in done.stdout
    assert compare_profiles(profile(project / "alone"), profile(project / ".pathprof")) == []
    assert sorted(p.name for p in project.iterdir() if p.name.startswith(".pathprof")) == [
        ".pathprof"]


def test_a_session_started_by_the_pytest_script(project: Path) -> None:
    script = Path(sys.executable).parent / "pytest"
    if not script.is_file():
        pytest.skip("no pytest console script beside this interpreter")
    alone = session(project, "--pathprof", "--pathprof-data-file=alone",
                    command=(str(script),))
    assert alone.returncode == 0, alone.stdout + alone.stderr
    done = session(project, "--pathprof", "--pathprof-parallel=2", command=(str(script),))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "pathprof: 2 copies ran the same calls" in done.stdout
    assert compare_profiles(profile(project / "alone"), profile(project / ".pathprof")) == []
    assert {fn.qualname for fn in profile(project / ".pathprof") if fn.total} == {
        "reserve", "reorder_list", "price"}


def test_the_dask_executor_runs_the_copies(project: Path) -> None:
    distributed = pytest.importorskip("distributed")
    alone = session(project, "--pathprof", "--pathprof-data-file=alone")
    assert alone.returncode == 0, alone.stdout + alone.stderr
    with distributed.LocalCluster(n_workers=2, processes=False, protocol="tcp",
                                  dashboard_address=None) as cluster:
        done = session(project, "--pathprof", "--pathprof-parallel=2",
                       "--pathprof-executor=dask",
                       f"--pathprof-scheduler={cluster.scheduler_address}")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("5 passed") == 1
    assert "pathprof: 2 copies ran the same calls" in done.stdout
    assert compare_profiles(profile(project / "alone"), profile(project / ".pathprof")) == []


@pytest.mark.parametrize(("args", "message"), [
    (["--pathprof-parallel=2"], "--pathprof-parallel needs --pathprof"),
    (["--pathprof", "--pathprof-executor=dask"], "--pathprof-executor goes with "
     "--pathprof-parallel K"),
    (["--pathprof", "--pathprof-parallel=2", "--pathprof-executor=dask"],
     "--pathprof-executor dask needs --pathprof-scheduler ADDRESS"),
    (["--pathprof", "--pathprof-parallel=0"], "'0': the number of copies, at least 1"),
    (["--pathprof", "--pathprof-parallel=2", "--pathprof-executor=dask",
      "--pathprof-scheduler=tcp://127.0.0.1:9"], "cannot reach the Dask scheduler"),
])
def test_bad_parallel_options_are_usage_errors(project: Path, args: list[str],
                                               message: str) -> None:
    if "tcp://" in args[-1]:
        pytest.importorskip("distributed")
    done = session(project, *args)
    assert done.returncode == 4, done.stdout + done.stderr
    assert message in done.stderr
    assert "Traceback" not in done.stderr
    assert not (project / ".pathprof").exists()


def test_help_and_collect_only_run_as_usual(project: Path) -> None:
    listed = session(project, "--pathprof", "--pathprof-parallel=2", "--collect-only", "-q")
    assert listed.returncode == 0, listed.stdout + listed.stderr
    assert listed.stdout.count("tests/test_stock.py::") == 5
    assert "copies" not in listed.stdout
    shown = session(project, "--pathprof", "--pathprof-parallel=2", "--help")
    assert shown.returncode == 0
    assert "--pathprof-parallel=K" in shown.stdout


STDLIB_SUITES = ("textwrap", "shlex", "colorsys", "fractions", "difflib")


@pytest.mark.stdlib_oracle
@pytest.mark.parametrize("copies", [2, 4])
def test_cpythons_own_test_suites_under_pytest(tmp_path: Path, copies: int) -> None:
    """Code nobody here wrote, tests nobody here wrote: CPython's test suites of five
    modules, run by pytest measuring those modules, give the same profile from K
    copies as from one session (a fixed hash seed for both: a session with another
    seed is another run)."""
    import test as cpython_tests

    suites = Path(cpython_tests.__file__).parent
    for name in STDLIB_SUITES:
        if not (suites / f"test_{name}.py").is_file():
            pytest.skip(f"CPython's test_{name}.py is not installed")
        shutil.copy(suites / f"test_{name}.py", tmp_path)
    sources = [f"--pathprof={name}" for name in STDLIB_SUITES]
    env = {**os.environ, "PYTHONHASHSEED": "7"}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                               *sources, *args], cwd=tmp_path, capture_output=True,
                              text=True, timeout=600,
                              env={k: v for k, v in env.items()
                                   if not k.startswith(("PYTEST_", "PATHPROF_"))})

    def outcome(result: subprocess.CompletedProcess[str]) -> tuple[int, str]:
        """The exit status and the counts of pytest's last line (a test that needs a
        data file CPython installs beside it fails in both)."""
        last = next(line for line in reversed(result.stdout.splitlines())
                    if " passed" in line)
        return result.returncode, last.split(" in ")[0]

    # every run counted: a session alone would stop counting a function once its
    # basis is full, and its counts would be lower bounds
    alone = run("--pathprof-data-file=alone", "--pathprof-stop-counting=never")
    assert alone.returncode in (0, 1), alone.stdout[-3000:] + alone.stderr[-3000:]
    done = run(f"--pathprof-parallel={copies}")
    assert outcome(done) == outcome(alone), done.stdout[-3000:] + done.stderr[-3000:]
    assert f"pathprof: {copies} copies ran the same calls" in done.stdout
    expected = profile(tmp_path / "alone")
    assert sum(fn.total for fn in expected) > 100_000
    assert compare_profiles(expected, profile(tmp_path / ".pathprof")) == []
