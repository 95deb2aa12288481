"""Coverage that stops paying on code and tests nobody here wrote: CPython's own test
suites of five modules, run by pytest measuring those modules, once counting every
run and once stopping each function at a full basis (``pytest --pathprof``'s
default). The basis coverage of every function must be the same, and no more paths
may have run; what stopped must have saved something."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import pathprof
from pathprof.analysis.basis import basis_coverage
from pathprof.data.profile import FunctionProfile

SUITES = ("textwrap", "shlex", "colorsys", "fractions", "difflib")


@pytest.mark.stdlib_oracle
def test_cpython_suites_keep_their_basis_coverage_when_functions_stop_counting(
        tmp_path: Path) -> None:
    import test as cpython_tests

    suites = Path(cpython_tests.__file__).parent
    for name in SUITES:
        if not (suites / f"test_{name}.py").is_file():
            pytest.skip(f"CPython's test_{name}.py is not installed")
        shutil.copy(suites / f"test_{name}.py", tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "PATHPROF_"))}
    env["PYTHONHASHSEED"] = "7"

    def session(data_file: str, *args: str) -> dict[tuple[str, str, int], FunctionProfile]:
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                               *(f"--pathprof={name}" for name in SUITES),
                               f"--pathprof-data-file={data_file}", "--pathprof-report=",
                               *args], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=600)
        assert done.returncode in (0, 1), done.stdout[-3000:] + done.stderr[-3000:]
        return {(fn.file, fn.qualname, fn.first_line): fn
                for fn in pathprof.load(str(tmp_path / data_file)).functions}

    every = session("every", "--pathprof-stop-counting=never")
    stopping = session("stopping")
    assert set(every) == set(stopping)
    for key, full in every.items():
        partial = stopping[key]
        assert basis_coverage(partial) == basis_coverage(full), key
        assert partial.paths_run <= full.paths_run, key
    stopped = [fn for fn in stopping.values() if fn.stopped]
    assert len(stopped) > 50
    counted = sum(fn.total for fn in stopping.values())
    assert counted < sum(fn.total for fn in every.values())
