"""Test modules that pytest's assertion rewriting imports are measured, with their
asserts rewritten as pytest rewrites them (issue 50: they counted as never imported,
at 0%, so pyflakes read 43.9 % where coverage.py measures its tests): the session
passes and fails as it does without pathprof, its assertion messages are pytest's,
and the headline counts the tests' own paths, as with ``--assert=plain``."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from .test_pytest_plugin import functions_of, pytest_in

CORE = """
def sign(x):
    if x < 0:
        return -1
    if x == 0:
        return 0
    return 1
"""

CONFTEST = """
import pytest

def pick(v):
    if v:
        return v
    return 0

@pytest.fixture
def three():
    return pick(3)
"""

EXPLAINED = """

def test_explained():
    values = [1, 2]
    try:
        assert values == [1, 3]
    except AssertionError as err:
        said = str(err)
    assert "[1, 2] == [1, 3]" in said, said
"""

TESTS = """
from pkg.core import sign


def helper(v):
    if v:
        return sign(v)
    return None


def test_sign(three):
    assert sign(-three) == -1
    assert helper(three) == 1


def test_fails():
    for value in (1, 2):
        if value > 1:
            assert sign(value) == 2, "wrong sign"
"""


def _project(tmp_path: Path, explained: bool = True) -> Path:
    """A package with its tests inside it; with ``explained``, a test that reads
    pytest's explanation of an assert that failed (which ``--assert=plain`` has not)."""
    root = tmp_path / "project"
    (root / "pkg" / "tests").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "core.py").write_text(textwrap.dedent(CORE))
    (root / "pkg" / "tests" / "__init__.py").write_text("")
    (root / "pkg" / "tests" / "conftest.py").write_text(textwrap.dedent(CONFTEST))
    (root / "pkg" / "tests" / "test_core.py").write_text(
        textwrap.dedent(TESTS) + (EXPLAINED if explained else ""))
    return root


def _summary(output: str) -> list[str]:
    """pytest's report of the failures and the outcome, without the timing."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if "FAILURES" in line)
    end = next(i for i, line in enumerate(lines)
               if "short test summary" in line or "pathprof: path coverage" in line)
    return [*lines[start:end], lines[-1].rsplit(" in ", 1)[0]]


def test_test_modules_are_measured_with_pytests_rewriting(tmp_path: Path) -> None:
    root = _project(tmp_path)
    plain = pytest_in(root, "pkg")
    measured = pytest_in(root, "--pathprof=pkg", "--pathprof-stop-counting=never",
                         "--pathprof-report=json:cov.json", "pkg")
    assert plain.returncode == measured.returncode == 1
    assert "AssertionError: wrong sign" in plain.stdout
    assert _summary(measured.stdout) == _summary(plain.stdout)
    functions = functions_of(json.loads((root / "cov.json").read_text()))
    assert set(functions) == {"sign", "pick", "three", "helper", "test_sign",
                              "test_explained", "test_fails"}
    assert (functions["helper"]["paths_possible"], functions["helper"]["paths_run"]) == ("2", 1)
    assert functions["pick"]["paths_run"] == 1  # the conftest is measured too
    # test_fails: the loop's first turn (1 > 1 false) and the assert that failed, which
    # cut its path: measured where pytest's rewritten assert raised
    assert functions["test_fails"]["paths_run"] >= 1


def test_the_headline_is_the_one_assert_plain_gives(tmp_path: Path) -> None:
    """With pytest's rewriting composed, the figures are those of the same session
    with ``--assert=plain``, where the test modules are ordinary imports."""
    root = _project(tmp_path, explained=False)
    rewritten = pytest_in(root, "--pathprof=pkg", "--pathprof-stop-counting=never",
                          "--pathprof-report=json:rewritten.json", "pkg")
    plain_asserts = pytest_in(root, "--assert=plain", "--pathprof=pkg",
                              "--pathprof-stop-counting=never",
                              "--pathprof-report=json:plain.json", "pkg")
    assert rewritten.returncode == plain_asserts.returncode == 1
    first = json.loads((root / "rewritten.json").read_text())
    second = json.loads((root / "plain.json").read_text())
    assert first["totals"] == second["totals"]
    for name, fn in functions_of(first).items():
        other = functions_of(second)[name]
        assert (fn["paths_possible"], fn["paths_run"]) == (other["paths_possible"],
                                                           other["paths_run"]), name
