"""A function with more paths than a path number can be written in is left as
written, and its module measured without it (issue 50: a function of 15,000
branches left its whole module unmeasured, Python's 4,300-digit limit on integer
strings failing the module's metadata)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from .test_run import functions_by_name, pathprof_cli

#: Python's least limit on the digits of an integer string (``PYTHONINTMAXSTRDIGITS``):
#: 640 digits, some 2,126 bits, passed by 2,200 decisions in a row.
DIGITS = "640"


def _module(decisions: int) -> str:
    lines = ["def huge(x):", "    y = 0"]
    lines += [f"    if x == {i}:\n        y += 1" for i in range(decisions)]
    lines += ["    return y", "", "", "def small(a):", "    if a:", "        return a + 1",
              "    return 0", ""]
    return "\n".join(lines)


@pytest.mark.parametrize("command", [("run",), ("run", "--mode", "edge"),
                                     ("run", "--parallel", "2")])
def test_one_function_too_big_to_number_leaves_the_rest_measured(
        tmp_path: Path, command: tuple[str, ...], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONINTMAXSTRDIGITS", DIGITS)
    (tmp_path / "bigmod.py").write_text(_module(2200))
    (tmp_path / "main.py").write_text("import bigmod\nprint(bigmod.huge(3), bigmod.small(1), "
                                      "bigmod.small(0))\n")
    ran = pathprof_cli(tmp_path, *command, "main.py")
    assert ran.stdout == "1 2 0\n"
    said = [line for line in ran.stderr.splitlines() if "huge" in line]
    assert len(said) == 1
    assert "bigmod.py:1: huge has about 2**2200 paths" in said[0]
    assert "it runs unmeasured" in said[0]
    fns = functions_by_name(tmp_path / ".pathprof")
    assert "huge" not in fns
    if "edge" in command:
        assert fns["small"].edges[0] == 2  # its entry edge: two calls
    else:
        assert sorted(p.count for p in fns["small"].paths) == [1, 1]
        assert fns["small"].total == 2
    again = pathprof_cli(tmp_path, *command, "main.py")  # warm cache: said again
    assert [line for line in again.stderr.splitlines() if "huge" in line] == said


def test_a_function_just_within_the_limit_is_measured(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONINTMAXSTRDIGITS", DIGITS)
    (tmp_path / "bigmod.py").write_text(_module(2000))  # 2**2000: 603 digits
    (tmp_path / "main.py").write_text("import bigmod\nprint(bigmod.huge(3))\n")
    ran = pathprof_cli(tmp_path, "run", "main.py")
    assert ran.stdout == "1\n"
    assert "huge" not in ran.stderr
    fns = functions_by_name(tmp_path / ".pathprof")
    assert fns["huge"].paths_possible == 2 ** 2000
    assert fns["huge"].total == 1
    assert os.environ.get("PYTHONINTMAXSTRDIGITS") == DIGITS
