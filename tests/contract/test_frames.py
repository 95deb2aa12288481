"""The frames a measured program sees are the ones Python gives it (issue 50): between an
importing line and the module it imports (warnings' stack levels, ``sys._getframe``,
``inspect.stack()``, tracebacks of an import that fails), and the recursion depth its
code gets before a RecursionError."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from .test_program_cannot_tell import run_both

DEPRECATED = '''
import warnings
warnings.warn("old is deprecated", DeprecationWarning, stacklevel=2)

def answer():
    return 42
'''


def test_a_warning_at_import_with_a_stack_level_names_the_importing_line(
        tmp_path: Path) -> None:
    """Python's default filters show a DeprecationWarning attributed to ``__main__``:
    with ``stacklevel=2`` at import that is the importing line, not pathprof's loader
    (jsonschema's ``test_import_cli`` failed only under ``--pathprof``)."""
    (tmp_path / "old.py").write_text(DEPRECATED)
    plain, measured = run_both(tmp_path, """
        import old
        print(old.answer())
    """, stderr=True)
    assert "prog.py:2: DeprecationWarning: old is deprecated" in plain
    assert measured == plain


FRAMES = '''
import inspect
import sys

def where(frame):
    return (frame.f_code.co_filename.rsplit("/", 1)[-1], frame.f_code.co_name)

up = []
frame = sys._getframe(0)
while frame is not None:
    up.append(where(frame))
    if frame.f_code.co_filename.endswith("prog.py"):
        break
    frame = frame.f_back
STACK = [(info.filename.rsplit("/", 1)[-1], info.function) for info in inspect.stack()]
STACK = STACK[:len(up)]
UP = up

def touch():
    return len(UP)
'''


def test_a_module_body_sees_the_frames_python_gives_it(tmp_path: Path) -> None:
    """From the module's body up to the importing line: importlib's frames only."""
    (tmp_path / "seen.py").write_text(FRAMES)
    plain, measured = run_both(tmp_path, """
        import seen
        print(seen.UP)
        print(seen.STACK == seen.UP, seen.touch())
    """)
    assert "<frozen importlib._bootstrap>" in plain
    assert "importhook" not in measured
    assert measured == plain


def test_an_import_that_fails_shows_pythons_traceback(tmp_path: Path) -> None:
    """Caught and printed, or left to end the program: importlib's frames are left
    out as Python leaves them out, and none of pathprof's is in."""
    (tmp_path / "broken.py").write_text("def f():\n    return 1\n\nraise ValueError('at import')\n")
    plain, measured = run_both(tmp_path, """
        import traceback
        try:
            import broken
        except ValueError:
            traceback.print_exc()
        import broken
    """, stderr=True)
    assert plain.startswith("1\n")
    assert plain.count("ValueError: at import") == 2
    assert "pathprof" not in measured
    assert measured == plain


RECURSE = """
    import sys

    deepest = 0

    def down(n):
        global deepest
        deepest = n
        return down(n + 1)

    def caught(n):
        try:
            return caught(n + 1)
        except RecursionError:
            return n

    try:
        down(0)
    except RecursionError:
        pass
    print(deepest, caught(0))
"""


@pytest.mark.parametrize("how", ["script", "-m"])
def test_a_recursion_error_comes_at_the_depth_python_gives(tmp_path: Path, how: str) -> None:
    """pathprof's own frames below the program's take none of its depth (the audit
    saw a RecursionError 11-13 frames early), and a measured function that catches
    its RecursionError runs its handler where plain Python does: the probe that
    records the path cut there needs a frame, and where it has none it counts the
    path as one whose block is unknown, with no call (it had raised anew, and the
    program's handler went unrun a few levels up)."""
    plain, measured = run_both(tmp_path, RECURSE, module=how == "-m")
    status, plain_down, _plain_caught = plain.split()
    assert status == "0"
    assert int(plain_down) > 900
    assert measured == plain


def test_the_program_reads_and_sets_the_recursion_limit_as_without_pathprof(
        tmp_path: Path) -> None:
    """The limit reads as Python's, a limit the program sets is the limit (and the
    room for pathprof's frames stays added to it), and what Python refuses is refused
    the same way."""
    plain, measured = run_both(tmp_path, textwrap.dedent("""
        import sys

        def depth(n):
            try:
                return depth(n + 1)
            except RecursionError:
                return n

        print(sys.getrecursionlimit(), sys.getrecursionlimit.__name__)
        sys.setrecursionlimit(5000)
        print(sys.getrecursionlimit(), depth(0))
        for bad in (0, -3, "x", 2.5):
            try:
                sys.setrecursionlimit(bad)
            except (ValueError, TypeError) as err:
                print(type(err).__name__, err)
        print(sys.getrecursionlimit())
    """))
    assert plain.startswith("0\n1000 getrecursionlimit\n5000 4998\n")
    assert measured == plain
