"""The measured program cannot tell it is measured (issue 23 §1, docs/guarantees.md):
what it catches stays caught, its memory does not grow with what it runs, and
its ``__main__`` looks like ``python script.py``'s."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from ..test_run import default_sigint, pathprof_cli
from . import WORK


def run_both(tmp_path: Path, source: str, *args: str, stderr: bool = False,
             command: tuple[str, ...] = ("run",), module: bool = False) -> tuple[str, str]:
    """The program's output with and without pathprof (stdout and exit status, and
    with ``stderr`` its standard error too); ``command`` is how pathprof runs it."""
    import subprocess
    import sys

    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent(source))
    target = ("-m", "prog") if module else ("prog.py",)
    plain = subprocess.run([sys.executable, *target, *args], cwd=tmp_path,
                           capture_output=True, text=True, timeout=300,
                           preexec_fn=default_sigint)
    measured = pathprof_cli(tmp_path, *command, *target, *args, check=False)
    if stderr:
        return (f"{plain.returncode}\n{plain.stdout}{plain.stderr}",
                f"{measured.returncode}\n{measured.stdout}{measured.stderr}")
    return (f"{plain.returncode}\n{plain.stdout}", f"{measured.returncode}\n{measured.stdout}")


def test_a_caught_exception_stays_caught_when_imports_cannot_work(tmp_path: Path) -> None:
    """The program disables importing, then raises and catches in measured code:
    pathprof imports nothing while the program runs, so its handler runs."""
    plain, measured = run_both(tmp_path, """
        import sys

        def parse(text):
            try:
                return int(text)
            except ValueError:
                return None

        sys.meta_path[:] = []
        sys.modules["pathprof"] = None
        sys.modules["pathprof.runtime.blockmap"] = None
        print([parse(t) for t in ["1", "x", "3", "y"]])
    """)
    assert measured == plain == "0\n[1, None, 3, None]\n"


@pytest.mark.parametrize("kind", ["builtins", "loader", "annotations", "no annotations",
                                  "argv", "file", "dir"])
@pytest.mark.parametrize("how", ["script", "-m"])
def test_main_looks_like_pythons(tmp_path: Path, kind: str, how: str) -> None:
    checks = {
        "builtins": "print(type(__builtins__).__name__, __builtins__.len('ab'))",
        "loader": "print(__loader__ is not None, __spec__ is None, __package__)",
        "annotations": "x: int = 1\nprint(__annotations__)",
        # 3.11-3.13 give __main__ an empty __annotations__, 3.14 none (issue 34 §3)
        "no annotations": "print('__annotations__' in dir())",
        "dir": "print([name for name in dir() if not name.startswith('__')])",
        "argv": "import sys\nprint(sys.argv)",
        "file": "import os\nprint(__file__, __name__, __cached__ if '__cached__' in dir() "
                "else 'no __cached__')",
    }
    if how == "-m":
        if kind in ("argv", "file", "loader"):
            pytest.skip("-m gives the module's own path and spec: compared by test_run")
        plain, measured = run_both(tmp_path, checks[kind], "arg", module=True)
    else:
        plain, measured = run_both(tmp_path, checks[kind], "arg")
    assert measured == plain


@pytest.mark.parametrize("source", [b'x = "caf\xe9"\nprint(x)\n',
                                    b'# comment\nx = 1\ny = "\xff\xfe"\n',
                                    b"def f(:\n    pass\n"])
def test_a_script_that_does_not_compile_fails_as_python_says(tmp_path: Path,
                                                              source: bytes) -> None:
    """A Latin-1 script with no coding line: Python's file tokenizer names the file
    and the line; ``compile`` on the bytes said "(unicode error) 'utf-8' codec ..."
    (issue 34 §3)."""
    import subprocess

    (tmp_path / "prog.py").write_bytes(source)
    plain = subprocess.run([sys.executable, "prog.py"], cwd=tmp_path, capture_output=True,
                           text=True, timeout=60)
    measured = pathprof_cli(tmp_path, "run", "prog.py", check=False)
    assert (measured.returncode, measured.stderr) == (plain.returncode, plain.stderr)
    assert plain.returncode == 1
    assert "SyntaxError" in plain.stderr


def test_a_tracer_sees_the_lines_that_ran_in_a_measured_stdlib_module(tmp_path: Path) -> None:
    """``RawConfigParser.items`` keeps its registers outside its frame (a parameter is
    named ``vars``): code inserted at its first statement, an ``if`` over two lines,
    was located at the whole statement, and 3.11 put the loading of a method at the
    span's end: a tracer saw line 859 (``return super().items()``) before 858, and it
    never ran (issue 34 §2)."""
    source = """
        import sys, configparser

        lines = []
        def tracer(frame, event, arg):
            if frame.f_code.co_name == "items" and "configparser" in frame.f_code.co_filename:
                if event == "line":
                    lines.append(frame.f_lineno - frame.f_code.co_firstlineno)
                return tracer
            return None

        parser = configparser.ConfigParser()
        parser.read_string("[s]\\na = 1\\n")
        sys.settrace(tracer)
        parser.items("s")
        sys.settrace(None)
        print(lines)
    """
    plain, measured = run_both(tmp_path, source, command=("run", "--source", "configparser"))
    assert measured == plain
    assert plain.count(",") > 4  # the lines it ran, from the start


def test_a_program_that_empties_sys_path(tmp_path: Path) -> None:
    plain, measured = run_both(tmp_path, """
        import sys
        del sys.path[:]
        print("emptied")
    """, stderr=True)
    assert measured == plain == "0\nemptied\n"


def test_an_exception_whose_traceback_the_program_cleared_stays_what_it_was(
        tmp_path: Path) -> None:
    """A top-100 project's suite re-raises after ``e.__traceback__ = None``: the
    observer read the traceback's ``tb_lasti`` and raised AttributeError instead
    (issue 34 §1). The corpus's ``edited_exceptions.py`` has the other shapes."""
    source = """
        def f():
            try:
                raise ValueError("boom")
            except ValueError as e:
                e.__traceback__ = None
                raise
        try:
            f()
        except Exception as e:
            print("caught", type(e).__name__, e)
    """
    for command in (("run",), ("run", "--mode", "edge"), ("run", "--metric", "time"),
                    ("count",)):
        plain, measured = run_both(tmp_path, source, command=command)
        assert measured == plain == "0\ncaught ValueError boom\n", command


def test_an_uncaught_exception_prints_the_programs_traceback_only(tmp_path: Path) -> None:
    """The same traceback as plain Python: the program's frames, none of pathprof's."""
    plain, measured = run_both(tmp_path, """
        def inner(x):
            for i in range(x):
                if i == 3:
                    return {}["missing"]

        def outer():
            try:
                inner(5)
            finally:
                print("cleanup")

        outer()
    """, stderr=True)
    assert measured == plain
    assert "KeyError: 'missing'" in plain
    assert "pathprof" not in measured


def test_an_uncaught_exception_goes_to_the_programs_excepthook(tmp_path: Path) -> None:
    plain, measured = run_both(tmp_path, """
        import sys

        def hook(kind, value, tb):
            print("hooked", kind.__name__, value, tb.tb_frame.f_code.co_name)

        def fail():
            raise LookupError("gone")

        sys.excepthook = hook
        fail()
    """)
    assert measured == plain == "1\nhooked LookupError gone <module>\n"


FRAME_LINES = """
    import asyncio, contextlib, sys

    def plain(x):
        return 10 // x

    def in_loop(values):
        total = 0
        for v in values:
            if v < 0:
                raise ValueError(v)
            total += v
        return total

    def in_with():
        with contextlib.nullcontext():
            x = 1
            {}["k"]

    def unmatched():
        try:
            [][1]
        except KeyError:
            pass

    def in_finally():
        try:
            return 1 / 0
        finally:
            cleanup = True

    def handler_raises():
        try:
            int("x")
        except ValueError as e:
            raise RuntimeError("again") from e

    def swallowed_then_raises():
        with contextlib.suppress(KeyError):
            {}["k"]
        raise OSError("after")

    def finally_with_branches(x):
        try:
            return 1 / x
        finally:
            if x is None:
                print("none")
            elif x == 1:
                print("one")

    def finally_with_try(x):
        try:
            return 1 / x
        finally:
            try:
                int("1")
            except ValueError:
                pass

    def finally_with_match(x):
        try:
            return 1 / x
        finally:
            match x:
                case 1:
                    y = 1

    def finally_with_loop(x, items):
        try:
            return 1 / x
        finally:
            for item in items:
                if item:
                    break
                item += 1

    def finally_with_with(x):
        try:
            return 1 / x
        finally:
            if x is None:
                pass
            with contextlib.nullcontext():
                y = 2

    def finally_with_while(x):
        try:
            return 1 / x
        finally:
            n = 2
            while n:
                n -= 1

    def finally_with_finally(x):
        try:
            return 1 / x
        finally:
            try:
                y = 1
            finally:
                z = 2

    def finally_with_guard(x):
        try:
            return 1 / x
        finally:
            match x:
                case 0 if x is None:
                    y = 1

    def finally_with_conditions(x):
        try:
            return 1 / x
        finally:
            if x is not None and x > 5:
                y = 1

    def generator():
        yield 1
        yield 1 / 0

    def from_generator():
        return list(generator())

    async def coroutine():
        await asyncio.sleep(0)
        raise LookupError("async")

    def nested(depth):
        if depth:
            return nested(depth - 1)
        return plain(0)

    cases = [lambda: plain(0), lambda: in_loop([1, -2]), in_with, unmatched, in_finally,
             handler_raises, swallowed_then_raises, from_generator,
             lambda: finally_with_branches(0), lambda: finally_with_try(0),
             lambda: finally_with_match(0), lambda: finally_with_loop(0, [0, 1]),
             lambda: finally_with_loop(0, [0]), lambda: finally_with_with(0),
             lambda: finally_with_while(0), lambda: finally_with_finally(0),
             lambda: finally_with_guard(0), lambda: finally_with_conditions(0),
             lambda: asyncio.run(coroutine()), lambda: nested(3)]
    for case in cases:
        try:
            case()
        except BaseException as e:
            tb, lines = e.__traceback__, []
            while tb is not None:
                lines.append((tb.tb_frame.f_code.co_name, tb.tb_lineno, tb.tb_frame.f_lineno))
                tb = tb.tb_next
            print(type(e).__name__, lines)
"""


def test_frames_keep_their_line_after_an_exception_leaves_them(tmp_path: Path) -> None:
    """``tb_frame.f_lineno`` of every frame an exception left is the line plain
    Python gives (the raising line, or the clause the exception passed last)."""
    plain, measured = run_both(tmp_path, FRAME_LINES)
    if sys.version_info < (3, 12):
        # 3.11 stands such a frame at the clause's last line in the source, not at
        # the line run last (docs/guarantees.md): pathprof gives the line run.
        static = "'finally_with_conditions'"
        plain = "".join(line for line in plain.splitlines(True) if static not in line)
        measured_lines = measured.splitlines(True)
        [line] = [line for line in measured_lines if static in line]
        assert line.endswith("('finally_with_conditions', 114, 116)]\n")
        measured = "".join(line for line in measured_lines if static not in line)
    assert measured == plain
    assert "('in_loop', 11, 11)" in plain
    assert "('unmatched', 22, 23)" in plain
    assert "None)" not in plain


def test_pdb_post_mortem_lists_the_failing_frame(tmp_path: Path) -> None:
    plain, measured = run_both(tmp_path, """
        import io, pdb, sys

        def average(values):
            total = 0
            for v in values:
                total += v
            return total / len(values)

        try:
            average([])
        except ZeroDivisionError:
            tb = sys.exc_info()[2]
        debugger = pdb.Pdb(stdin=io.StringIO("l\\nup\\nl\\np __name__\\nq\\n"),
                           stdout=sys.stdout, nosigint=True)
        debugger.use_rawinput = False
        debugger.reset()
        debugger.interaction(None, tb)
    """)
    assert measured == plain
    assert "->\t    return total / len(values)" in plain


def test_pytest_pdb_lists_a_measured_frame(tmp_path: Path) -> None:
    """``pytest --pathprof --pdb`` and ``l`` at the failing measured frame."""
    import subprocess
    import sys

    (tmp_path / "mod.py").write_text(textwrap.dedent("""
        def helper(values):
            for v in values:
                if v < 0:
                    raise ValueError(v)
    """))
    (tmp_path / "test_mod.py").write_text("from mod import helper\n\n"
                                          "def test_it():\n    helper([1, -2])\n")
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--pathprof",
         "--pdb", "test_mod.py"],
        cwd=tmp_path, input="l\nc\n", capture_output=True, text=True, timeout=120)
    assert "INTERNALERROR" not in result.stdout + result.stderr
    assert "  5  ->\t            raise ValueError(v)" in result.stdout
    assert "1 failed" in result.stdout



NAME_VIEWS = """
    from collections import namedtuple

    Point = namedtuple("Point", "x y")

    def make(x, y):
        if x > y:
            x, y = y, x
        return Point(**locals())

    def names(a):
        b = a * 2
        for i in range(2):
            b += i
        return sorted(vars()), dir(), "{a}-{b}".format(**locals()), sorted(locals())

    def same_namespace(a):
        first = locals()
        b = a
        return first is locals(), sorted(first)

    def own_locals():
        locals = lambda: {"@pp_own": 1}  # the program's own, left alone
        return locals()

    def generator(n):
        for i in range(n):
            yield sorted(locals())

    def with_comprehension(xs):
        return [sorted(locals()) for x in xs if x]

    for _ in range(2):  # with --stop-counting, the second time on original code
        print(make(3, 1), names(1), same_namespace(1), own_locals(), list(generator(2)),
              with_comprehension([0, 1]))
"""


@pytest.mark.parametrize("command", [("run",), ("run", "--mode", "edge"),
                                     ("run", "--metric", "time"), ("count",),
                                     ("run", "--stop-counting", "basis")],
                         ids=["path", "edge", "time", "count", "stop-counting"])
def test_locals_vars_and_dir_show_the_programs_names_only(
        tmp_path: Path, command: tuple[str, ...]) -> None:
    plain, measured = run_both(tmp_path, NAME_VIEWS, command=command)
    if command == ("count",):  # the count report follows the program's output
        measured = measured[:len(plain)]
    assert measured == plain
    assert "Point(x=1, y=3)" in plain


FRAME_VIEWS = """
    import inspect, sys

    def via_getframe(n):
        total = 0
        for i in range(n):
            if i % 2:
                total += i
        return sorted(sys._getframe().f_locals)

    def via_inspect(a, b=2):
        if a > b:
            a, b = b, a
        frame = inspect.currentframe()
        return sorted(frame.f_locals), inspect.getargvalues(frame).locals == {
            "a": a, "b": b, "frame": frame}

    def via_eval(x):
        y = x + 1
        while y > 3:
            y -= 2
        return eval("sorted(dir())"), eval("x + y")

    def via_exec(x):
        seen = []
        exec("seen.extend(sorted(sys._getframe(0).f_locals))")
        if x:
            return seen
        return None

    def via_stack(depth):
        if depth:
            return via_stack(depth - 1)
        return sorted(inspect.stack()[0].frame.f_locals)

    def generator(n):
        for i in range(n):
            yield sorted(sys._getframe().f_locals)

    def raising(values):
        for v in values:
            if v < 0:
                frame = sys._getframe()
                raise ValueError(v)

    try:
        raising([1, -1])
    except ValueError as error:
        frame = error.__traceback__.tb_next.tb_frame
        print("after the exception", sorted(frame.f_locals), frame.f_lineno)

    for _ in range(2):  # with --stop-counting, the second time on original code
        print(via_getframe(4), via_inspect(3, 1), via_eval(6), via_exec(1), via_stack(2),
              list(generator(2)))
"""


@pytest.mark.parametrize("command", [("run",), ("run", "--mode", "edge"),
                                     ("run", "--metric", "time"), ("count",),
                                     ("run", "--stop-counting", "basis")],
                         ids=["path", "edge", "time", "count", "stop-counting"])
def test_a_function_that_looks_at_its_own_frame_sees_the_programs_names_only(
        tmp_path: Path, command: tuple[str, ...]) -> None:
    """``f_locals`` reached through ``sys._getframe``, ``inspect`` or a traceback,
    and ``eval``/``exec`` with the frame's namespace: in functions whose source can
    reach their own frame, pathprof keeps its registers outside it."""
    plain, measured = run_both(tmp_path, FRAME_VIEWS, command=command)
    if command == ("count",):  # the count report follows the program's output
        measured = measured[:len(plain)]
    assert measured == plain
    assert "['i', 'n', 'total']" in plain
    assert "['frame', 'v', 'values'] 44" in plain  # the traceback's frame, after it ended
    assert "(['x', 'y'], 9) ['seen', 'x']" in plain


def test_pytest_showlocals_shows_the_programs_locals_only(tmp_path: Path) -> None:
    """``pytest --pathprof -l`` lists a measured frame's locals as plain pytest does:
    pathprof's are named ``@pp_*``, which pytest leaves out as it does its own."""
    import subprocess
    import sys

    (tmp_path / "mod.py").write_text(textwrap.dedent("""
        def total(values):
            result = 0
            for v in values:
                if v < 0:
                    raise ValueError(v)
                result += v
            return result
    """))
    (tmp_path / "test_mod.py").write_text("from mod import total\n\n"
                                          "def test_it():\n    total([1, -2])\n")
    outputs = []
    for extra in ([], ["--pathprof"]):
        result = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-l", "-p", "no:cacheprovider", *extra,
             "test_mod.py"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
        outputs.append(result.stdout)
    plain, measured = outputs
    assert "result     = 1" in plain
    assert "@pp_" not in measured
    shown = [line for line in plain.splitlines() if " = " in line and not line.startswith("=")]
    assert shown
    assert all(line in measured.splitlines() for line in shown)


SIGNALLED = """
    import atexit, os, signal, sys, time
""" + WORK + """
    atexit.register(lambda: print("atexit ran", flush=True))
    print(work(30), flush=True)
    if sys.argv[1] == "interrupt":
        raise KeyboardInterrupt
    os.kill(os.getpid(), getattr(signal, sys.argv[1]))
    time.sleep(30)
"""


@pytest.mark.parametrize(("how", "status", "atexit_runs"), [
    ("interrupt", -2, True), ("SIGINT", -2, True), ("SIGTERM", -15, False)])
def test_a_signal_ends_the_run_as_python_would_after_saving(
        tmp_path: Path, how: str, status: int, atexit_runs: bool) -> None:
    """Ctrl-C: the program's atexit handlers run, then the process dies of SIGINT
    (a shell sees 130). SIGTERM: the process dies of SIGTERM, as without pathprof —
    after pathprof saved the run."""
    plain, measured = run_both(tmp_path, SIGNALLED, how)
    expected = f"{status}\n300\n" + ("atexit ran\n" if atexit_runs else "")
    assert plain == expected
    assert measured == expected
    import pathprof

    work = {fn.qualname: fn for fn in pathprof.load(str(tmp_path / ".pathprof")).functions}
    assert work["work"].total == 31  # entry, 29 iterations, the end
