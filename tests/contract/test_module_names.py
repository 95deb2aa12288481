"""pathprof's names are not the program's globals (issue 50): a module that deletes
its private names, a function's code run with other globals, and ``globals()`` as
the program lists it behave as without pathprof, and what runs is counted."""

from __future__ import annotations

from pathlib import Path

import pytest

import pathprof

from ..test_run import pathprof_cli
from .test_program_cannot_tell import run_both

TIDY = '''
import sys

def _helper(x):
    return x + 1

def public(x):
    if x > 0 and x < 10:
        return _helper(x)
    return -1

CONSTANT = public(1)

for _name in list(globals()):
    if _name.startswith("_") and not _name.startswith("__"):
        del globals()[_name]
del _name
'''


@pytest.mark.parametrize("conditions", [False, True])
def test_a_module_that_deletes_its_private_names(tmp_path: Path, conditions: bool) -> None:
    """A tidy-up some modules do at the end of their body: every name starting with
    one underscore goes. The measured functions keep working (pathprof's names are in
    the module's holder; with ``--conditions`` its vector counters are dunder names),
    and their calls after the tidy-up are counted."""
    (tmp_path / "tidy.py").write_text(TIDY)
    program = """
        import tidy
        print(tidy.CONSTANT, sorted(n for n in vars(tidy) if not n.startswith("__")))
        try:
            tidy.public(5)
        except NameError as err:
            print("NameError", err)
        print(tidy.public(-3))
    """
    command = ("run", "--conditions") if conditions else ("run",)
    plain, measured = run_both(tmp_path, program, command=command)
    assert plain == ("0\n2 ['CONSTANT', 'public', 'sys']\n"
                     "NameError name '_helper' is not defined\n-1\n")
    assert measured == plain
    totals = {fn.qualname: fn.total for fn in pathprof.load(str(tmp_path / ".pathprof")).functions
              if fn.file.endswith("tidy.py")}
    assert totals["public"] == 3  # the call at import, the one that raised, the last


OTHER_GLOBALS = '''
import types

SCALE = 10

def scaled(x):
    if x > 0:
        return x * SCALE
    return 0

copy = types.FunctionType(scaled.__code__, {"SCALE": 3}, "copy")
print(scaled(2), copy(2), copy(-1), copy.__code__ is scaled.__code__)
print(sorted(k for k in globals() if not k.startswith("__")))
'''


def test_a_functions_code_run_with_other_globals(tmp_path: Path) -> None:
    """``types.FunctionType(f.__code__, {...})``: the code finds pathprof's names where
    it holds them, not in the globals it runs with, and its runs count as ``f``'s."""
    plain, measured = run_both(tmp_path, OTHER_GLOBALS)
    assert plain == "0\n20 6 0 True\n['SCALE', 'copy', 'scaled', 'types']\n"
    assert measured == plain
    (fn,) = [f for f in pathprof.load(str(tmp_path / ".pathprof")).functions
             if f.qualname == "scaled"]
    assert fn.total == 3
    assert sorted(p.count for p in fn.paths) == [1, 2]


def test_the_modules_globals_hold_none_of_pathprofs_names(tmp_path: Path) -> None:
    """A measured module's ``globals()`` and ``dir(module)`` list what plain Python
    lists, and a second run (warm cache) too."""
    (tmp_path / "plainmod.py").write_text("def f():\n    return sorted(globals())\n")
    program = """
        import plainmod
        print(plainmod.f())
        print(dir(plainmod))
    """
    plain, measured = run_both(tmp_path, program)
    assert measured == plain
    again = pathprof_cli(tmp_path, "run", "prog.py")
    assert f"0\n{again.stdout}" == plain
