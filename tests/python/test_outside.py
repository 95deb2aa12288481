"""Registers outside the frame (:mod:`pathprof.python.outside`): which functions get
them, and the compile fallback for the CPython versions whose compiler rejects
some of the code they make."""

from __future__ import annotations

import ast
import sys
import textwrap

import pytest

from pathprof.python.instrument import instrument_source
from pathprof.python.scan import reaches_own_frame

SOURCE = textwrap.dedent("""
    import sys

    def looks(n):
        total = 0
        for i in range(n):
            total += i
        return sorted(sys._getframe().f_locals), total

    def plain(n):
        return n + 1
""")


def _function(source: str) -> ast.FunctionDef:
    node = ast.parse(textwrap.dedent(source)).body[0]
    assert isinstance(node, ast.FunctionDef)
    return node


@pytest.mark.parametrize(("source", "reaches"), [
    ("def f(): return sys._getframe().f_locals", True),
    ("def f(): return inspect.currentframe()", True),
    ("def f(): return inspect.stack()", True),
    ("def f(x): return eval('x')", True),
    ("def f(): exec('pass')", True),
    ("def f(): breakpoint()", True),
    ("def f(): pdb.set_trace()", True),
    ("def f(): return locals()", True),
    ("def f(frame): return frame.f_back", True),
    ("def f(x): return x.f_lineno", False),
    ("def f(): return stack()", False),  # not inspect's
    ("def f():\n    def g(): return locals()\n    return g", False),  # only g's own code
    ("def f():\n    class C:\n        x = vars()\n    return C", False),
])
def test_which_functions_can_reach_their_own_frame(source: str, reaches: bool) -> None:
    assert reaches_own_frame(_function(source)) is reaches


def _rejected(anchor: ast.stmt) -> ast.stmt:
    """A statement the compiler refuses with ValueError (``None`` used as a name)."""
    node = ast.copy_location(ast.Expr(value=ast.Name(id="None", ctx=ast.Load())), anchor)
    return ast.fix_missing_locations(node)


def _run(code: object) -> dict[str, object]:
    namespace: dict[str, object] = {"__name__": "outside_test"}
    exec(code, namespace)
    return namespace


def test_only_functions_that_reach_their_frame_move_their_registers() -> None:
    instrumented = instrument_source(SOURCE, "<outside>", module_key="outside:1")
    assert [moved.function.name for moved in instrumented.registers_moved] == ["looks"]
    namespace = _run(instrumented.compile("<outside>"))
    assert namespace["looks"](3) == (["i", "n", "total"], 3)  # type: ignore[operator]


def test_a_module_the_compiler_rejects_with_registers_outside_keeps_them_in_the_frame(
        ) -> None:
    """CPython 3.13 and 3.14 reject some functions with registers outside (``Invalid
    CFG, stack underflow``): compiling then puts them back in the frame. The
    compiler's refusal is simulated here by a node it rejects with ValueError, put
    into the moved function's code only."""
    instrumented = instrument_source(SOURCE, "<outside>", module_key="outside:2")
    moved = instrumented.registers_moved[0].function
    moved.body.insert(0, _rejected(moved.body[0]))
    with pytest.raises(ValueError, match="None"):
        compile(instrumented.tree, "<outside>", "exec")
    namespace = _run(instrumented.compile("<outside>"))
    assert instrumented.registers_moved == []
    names, total = namespace["looks"](4)  # type: ignore[operator]
    assert total == 6
    assert "@pp_r" in names  # the registers are back in the frame
    assert namespace["plain"](1) == 2  # type: ignore[operator]


def test_a_module_rejected_without_registers_outside_fails_as_it_would() -> None:
    instrumented = instrument_source("def plain(n):\n    return n\n", "<outside>",
                                     module_key="outside:3")
    assert instrumented.registers_moved == []
    body = instrumented.tree.body[-1].body  # type: ignore[attr-defined]
    body.insert(0, _rejected(body[0]))
    with pytest.raises(ValueError, match="None"):
        instrumented.compile("<outside>")


@pytest.mark.skipif(sys.version_info < (3, 13), reason="the compiler bug is 3.13's and 3.14's")
def test_asyncio_main_compiles_in_event_mode() -> None:
    """The module where the compiler's refusal was found (whole-stdlib test too)."""
    import sysconfig
    from pathlib import Path

    path = Path(sysconfig.get_paths()["stdlib"]) / "asyncio" / "__main__.py"
    instrumented = instrument_source(path.read_bytes(), str(path), mode="events")
    assert instrumented.registers_moved
    instrumented.compile(str(path))


def test_a_returned_value_is_not_kept_by_the_registers_table() -> None:
    """A function whose registers live outside its frame (it calls ``exec``) keeps its
    return value in its table while the return counts its path (with stop-counting's
    switches, after the value is computed); the return takes it out again, so nothing
    keeps it alive once the caller lets go (attrs' suite checks that a class it
    replaced is gone). It used to stay in the table until another frame took that
    address."""
    import gc
    import types
    import weakref

    source = textwrap.dedent("""\
        class Thing:
            pass

        def make(flag):
            exec("y = 1", {}, {})
            if flag:
                return Thing()
            return None
    """)
    module = instrument_source(source, "leaky.py", switches=True)
    namespace = types.ModuleType("leaky").__dict__
    exec(module.compile("leaky.py"), namespace)
    thing = namespace["make"](True)
    ref = weakref.ref(thing)
    del thing
    gc.collect()
    assert ref() is None


_ELSE_OF_A_CHAIN = """\
import sys

def f(a, b, name, c):
{first}    if c:
        c = 0
    if not a and b in ("x", "y") and name in ("T", "U"):
        a = 1
    if b:
        a = 3
    return a

for args in [(1, "x", "T", 0), (0, "q", "T", 0), (0, "x", "Z", 0), (0, "x", "T", 0)]:
    f(*args)
"""


def test_a_clause_entered_from_a_chain_of_tests_counts_once_with_registers_outside(
        tmp_path) -> None:
    """What follows ``if a and b and c`` without an else is reached from three tests, so
    the count pathprof puts on that edge (an else clause of its own, unlocated in the
    production build) is too: the same paths are counted whether the function's
    registers are in its frame or outside it (``exec`` in it moves them out). On 3.13
    and 3.14 the count ran once per copy of it the compiler made (gh-107901's copies
    fall into one another) and the second call raised IndexError, until the count was
    put under a test (``outside._guard_unlocated_calls``); pygments'
    ``cmdline.main_inner`` numbered 10 of its 51 paths 28 too high."""
    from pathprof import api

    from ..test_run import pathprof_cli

    counts = []
    for first in ("", '    exec("")\n'):
        directory = tmp_path / ("outside" if first else "inside")
        directory.mkdir()
        (directory / "prog.py").write_text(_ELSE_OF_A_CHAIN.format(first=first))
        pathprof_cli(directory, "run", "prog.py")
        (fn,) = [fn for fn in api.load(str(directory / ".pathprof")).functions
                 if fn.qualname == "f"]
        counts.append({k: v for k, v in fn.counts.items() if v})
    assert sum(counts[0].values()) == 4
    assert counts[1] == counts[0]


def test_the_guarded_counts_leave_the_line_events_as_plain_python_gives_them() -> None:
    """Under the guard the counts make no line event of their own: a tracer sees the
    lines of ``f`` (registers outside: it calls ``exec``) as plain Python runs them, for
    every way into the clause the compiler copied."""
    source = _ELSE_OF_A_CHAIN.format(first='    exec("")\n').split("\nfor args")[0] + "\n"
    calls = [(1, "x", "T", 0), (0, "q", "T", 1), (0, "x", "Z", 0), (0, "x", "T", 0)]

    def lines(namespace: dict[str, object]) -> list[list[int]]:
        seen: list[list[int]] = []

        def tracer(frame, event, arg):  # type: ignore[no-untyped-def]
            if frame.f_code.co_name == "f" and event == "line":
                seen[-1].append(frame.f_lineno)
            return tracer

        for args in calls:
            seen.append([])
            sys.settrace(tracer)
            try:
                namespace["f"](*args)  # type: ignore[operator]
            finally:
                sys.settrace(None)
        return seen

    plain = lines(_run(compile(source, "<chain>", "exec")))
    instrumented = instrument_source(source, "<chain>", module_key="outside:chain")
    assert instrumented.registers_moved
    assert lines(_run(instrumented.compile("<chain>"))) == plain
    assert len({tuple(run) for run in plain}) == 3  # (three different ways through)
