"""The frames a measured program sees are the ones Python gives it (issue 50): between an
importing line and the module it imports (warnings' stack levels, ``sys._getframe``,
``inspect.stack()``, tracebacks of an import that fails), and the recursion depth its
code gets before a RecursionError."""

from __future__ import annotations

import sys
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
    its RecursionError notes the path it cut without a frame of its own (a call into
    Python there raised anew, a few levels up). On 3.11 a C call takes a level too:
    the probe in a handler at the very limit needs one there (docs/guarantees.md)."""
    plain, measured = run_both(tmp_path, RECURSE, module=how == "-m")
    status, plain_down, plain_caught = plain.split()
    assert status == "0"
    assert int(plain_down) > 900
    m_status, m_down, m_caught = measured.split()
    assert (m_status, m_down) == (status, plain_down)
    if sys.version_info >= (3, 12):
        assert m_caught == plain_caught
    else:
        assert int(m_caught) in (int(plain_caught), int(plain_caught) - 1)


def test_the_program_sets_its_own_recursion_limit(tmp_path: Path) -> None:
    """A limit the program sets is the limit: what pathprof added for its frames is
    not put back over it."""
    plain, measured = run_both(tmp_path, textwrap.dedent("""
        import sys
        sys.setrecursionlimit(5000)
        print(sys.getrecursionlimit())
    """))
    assert measured == plain == "0\n5000\n"
