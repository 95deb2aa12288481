"""Modules imported before measuring starts are measured from then on, in place.

Each test runs in a child process: instrumenting in place changes the functions
of modules that the test process shares with every other test.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pathprof
from pathprof import runtime
from pathprof.runtime.ownwork import OwnWork

from .loading import CORPUS, corpus_programs, program_examples
from .test_run import functions_by_name, pathprof_cli

PROGRAMS = corpus_programs()


def run_python(cwd: Path, code: str, *args: str) -> subprocess.CompletedProcess:
    script = cwd / "driver_script.py"
    script.write_text(textwrap.dedent(code))
    env = {**os.environ}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    result = subprocess.run([sys.executable, str(script), *args], cwd=cwd, env=env,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return result


def raw_profile(data_file: Path) -> dict[tuple[str, int], tuple]:
    """Per function, what was counted: paths, cut paths, edges, calls that raised."""
    return {(f.qualname, f.first_line): (f.counts, f.cuts, f.edges, f.raised)
            for f in pathprof.load(str(data_file)).functions if f.total or f.edges}


# The same program measured twice: its module imported before the profiler starts
# (instrumented in place), and imported while it runs (by the import hook).
DRIVER = """
    import importlib, sys
    from pathprof import Profiler, runtime
    when, directory, name, data, mode = sys.argv[1:]
    sys.path.insert(0, directory)
    profiler = Profiler(source=[directory], data_file=data, mode=mode, cache=False)
    if when == "before":
        module = importlib.import_module(name)
        profiler.start()
    else:
        profiler.start()
        module = importlib.import_module(name)
        runtime.take_snapshot()  # what ran at import: the other run cannot see it
    module.drive()
    profiler.stop()
    profiler.save()
"""


@pytest.mark.parametrize("mode", ["path", "edge"])
@pytest.mark.parametrize("path", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_in_place_profile_equals_imported_profile(tmp_path: Path, path: Path, mode: str) -> None:
    for when in ("before", "after"):
        run_python(tmp_path, DRIVER, when, str(CORPUS), path.stem,
                   str(tmp_path / f"{when}.pathprof"), mode)
    before = raw_profile(tmp_path / "before.pathprof")
    after = raw_profile(tmp_path / "after.pathprof")
    assert before
    assert before == after


def test_modules_the_interpreter_imported_at_start_up_are_measured(tmp_path: Path) -> None:
    """fnmatch and posixpath (frozen into the interpreter since 3.11) are imported
    before any program runs; --source names them and they are measured."""
    (tmp_path / "prog.py").write_text(textwrap.dedent("""
        import fnmatch, os.path
        hits = sum(fnmatch.fnmatch(name, "*.py") for name in ["a.py", "b.txt", "c.py"] * 7)
        joined = [os.path.join("a", str(i)) for i in range(5)]
        print(hits, len(joined))
    """))
    result = pathprof_cli(tmp_path, "run", "--source", "fnmatch,posixpath", "prog.py")
    assert result.stdout == "14 5\n"
    assert result.stderr == ""  # nothing unmeasured, nothing to warn about
    fns = {(fn.file.rsplit(os.sep, 1)[-1], fn.qualname): fn
           for fn in pathprof.load(str(tmp_path / ".pathprof")).functions}
    assert fns[("fnmatch.py", "fnmatch")].total == 21
    assert fns[("fnmatch.py", "fnmatchcase")].total == 21
    assert fns[("posixpath.py", "join")].total >= 5  # the program's 5, and the stdlib's own


OBJECTS = """
import functools

def plain(x):
    return x + 1 if x else 0

def decorator(func):
    @functools.wraps(func)
    def wrapper(*args):
        return func(*args)
    return wrapper

@decorator
def decorated(x):
    return -x

def make_adder(n):
    def add(x):
        return x + n
    return add

add_two = make_adder(2)

class Thing:
    def __init__(self, value):
        self._value = value

    def method(self):
        return super().__repr__() and self._value

    @staticmethod
    def static(x):
        return x * 2

    @classmethod
    def klass(cls):
        return cls.__name__

    @property
    def value(self):
        return self._value

    @functools.lru_cache(maxsize=None)
    def cached(self, x):
        return x

def numbers(n):
    for i in range(n):
        yield i

async def coroutine():
    return 7

lam = lambda: plain(1)
"""


def test_every_kind_of_function_made_before_counts_afterwards(tmp_path: Path) -> None:
    (tmp_path / "objects.py").write_text(OBJECTS)
    run_python(tmp_path, """
        import asyncio, sys
        sys.path.insert(0, ".")
        import objects
        from pathprof import Profiler
        profiler = Profiler(source=["objects"], data_file="data.pathprof").start()
        thing = objects.Thing(3)
        for i in range(3):
            objects.plain(i); objects.decorated(i); objects.add_two(i)
            thing.method(); objects.Thing.static(i); objects.Thing.klass(); thing.value
            thing.cached(i)
            list(objects.numbers(2))
            asyncio.run(objects.coroutine())
            objects.lam()
        profiler.stop()
        profiler.save()
    """)
    totals = {name: fn.total for name, fn in functions_by_name(tmp_path / "data.pathprof").items()}
    assert totals == {
        "plain": 6,  # 3 direct calls and 3 through the lambda
        "decorator": 0, "decorator.<locals>.wrapper": 3, "decorated": 3,
        "make_adder": 0, "make_adder.<locals>.add": 3,
        "Thing.__init__": 1, "Thing.method": 3, "Thing.static": 3, "Thing.klass": 3,
        "Thing.value": 3, "Thing.cached": 3,
        "numbers": 3 * 3,  # per call: entry to the first yield, 2 iterations, the end
        "coroutine": 3,
    }


def test_calls_in_progress_are_named_and_later_calls_measured(tmp_path: Path) -> None:
    (tmp_path / "busy.py").write_text(textwrap.dedent("""
        from pathprof import Profiler

        def countdown(n):
            while n:
                yield n
                n -= 1

        def runs_the_profiler(data):
            profiler = Profiler(source=["busy"], data_file=data).start()
            return profiler

        def later():
            return 1
    """))
    result = run_python(tmp_path, """
        import sys
        sys.path.insert(0, ".")
        import busy
        suspended = busy.countdown(3)
        next(suspended)
        profiler = busy.runs_the_profiler("data.pathprof")
        rest = list(suspended)
        busy.later()
        fresh = list(busy.countdown(2))
        profiler.stop()
        profiler.save()
        print(rest, fresh)
    """)
    assert result.stdout == "[2, 1] [2, 1]\n"
    assert result.stderr.count("pathprof:") == 1
    assert ("already running when measuring started, so these calls are not measured "
            "(later calls are): busy.countdown, busy.runs_the_profiler") in result.stderr
    fns = functions_by_name(tmp_path / "data.pathprof")
    assert fns["later"].total == 1
    assert fns["countdown"].total == 3  # only the fresh generator: entry, 1 loop, end
    assert "runs_the_profiler" not in fns or fns["runs_the_profiler"].total == 0


def test_a_module_changed_since_its_import_is_named_not_measured(tmp_path: Path) -> None:
    (tmp_path / "changing.py").write_text("def f(x):\n    return x\n\n\ndef g():\n    pass\n")
    result = run_python(tmp_path, """
        import sys
        sys.path.insert(0, ".")
        import changing
        with open("changing.py", "w") as f:
            f.write("# a new first line\\ndef f(x):\\n    return -x\\n\\n\\ndef g():\\n    pass\\n")
        from pathprof import Profiler
        with Profiler(source=["changing"], data_file="data.pathprof"):
            print(changing.f(2))
    """)
    assert result.stdout == "2\n"  # the code imported runs, unmeasured
    assert ("changing changed since it was imported (its code is not what its file "
            "compiles to), so these are not measured: f, g") in result.stderr
    fns = functions_by_name(tmp_path / "data.pathprof")
    assert "f" not in fns
    assert "g" not in fns


def test_pathprofs_own_use_of_a_measured_module_is_not_counted(tmp_path: Path) -> None:
    """pathprof parses each module imported while measuring with ast, and writes
    JSON when it saves: with ast and json measured, only the program's calls count."""
    (tmp_path / "helper.py").write_text(
        "def f(x):\n    try:\n        return int(x)\n    except ValueError:\n        return -1\n")
    (tmp_path / "prog.py").write_text(textwrap.dedent("""
        import ast, json
        import helper
        tree = ast.parse("x = 1")
        print(json.dumps([helper.f(v) for v in "1x3"]))
    """))
    result = pathprof_cli(tmp_path, "run", "--no-cache",
                          "--source", "ast,json,tokenize,textwrap,helper.py", "prog.py")
    assert result.stdout == "[1, -1, 3]\n"
    by_name = {(os.path.basename(fn.file), fn.qualname): fn
               for fn in pathprof.load(str(tmp_path / ".pathprof")).functions}
    assert by_name[("ast.py", "parse")].total == 1
    assert by_name[("__init__.py", "dumps")].total == 1  # json.dumps
    ran = {key for key, fn in by_name.items() if fn.total}
    assert ran == {("ast.py", "parse"), ("__init__.py", "dumps"), ("helper.py", "f"),
                   ("encoder.py", "JSONEncoder.encode"),
                   ("encoder.py", "JSONEncoder.iterencode")}
    assert by_name[("helper.py", "f")].total == 4  # 2 returns, 1 cut by the exception, 1 handler


def test_pathprof_keeps_working_with_the_modules_it_uses_measured(tmp_path: Path) -> None:
    """Every standard-library module pathprof's runtime, import hook and data file use
    is measured, on a program that raises and catches: the program's profile is the
    one measured without them."""
    (tmp_path / "helper.py").write_text(
        "def f(x):\n    try:\n        return int(x)\n    except ValueError:\n        return -1\n")
    (tmp_path / "prog.py").write_text(
        "import helper\nprint(sum(helper.f(v) for v in ['1', 'x', '3'] * 10))\n")
    pathprof_cli(tmp_path, "run", "--data-file", "alone", "prog.py")
    used = run_python(tmp_path, """
        import os, sys
        import pathprof.cli, pathprof.measure.inplace, pathprof.data.store
        import pathprof.runtime.blockmap
        stdlib = os.path.dirname(os.__file__) + os.sep
        print(",".join(sorted(name for name, module in sys.modules.items()
                              if (getattr(module, "__file__", None) or "").startswith(stdlib)
                              and module.__file__.endswith(".py"))))
    """).stdout.strip().split(",")
    assert {"json", "ast", "sqlite3", "argparse"} <= set(used)
    result = pathprof_cli(tmp_path, "run", "--data-file", "with_stdlib", "--no-cache",
                          "--source", ",".join([*used, "helper.py"]), "prog.py")
    assert result.stderr == ""
    assert result.stdout == "30\n"
    assert "could not" not in result.stderr, result.stderr
    alone = raw_profile(tmp_path / "alone")
    with_stdlib = {key: value for key, value in raw_profile(tmp_path / "with_stdlib").items()
                   if key[0] == "f"}
    assert alone == with_stdlib


@settings(max_examples=program_examples(200), deadline=None)
@given(st.lists(st.sampled_from(["enter", "exit", "share"]), max_size=30))
def test_a_shared_module_holds_its_own_tables_outside_pathprofs_work(steps: list[str]) -> None:
    """The invariant of runtime.own_work, over any nesting and any moment of sharing:
    a shared module's names (its holder's) hold its registered tables exactly when no
    ``with own_work`` is open, and scratch tables while one is."""
    work = OwnWork()
    depth = 0
    namespaces = []
    for step in steps:
        if step == "enter":
            work.__enter__()
            depth += 1
        elif step == "exit" and depth:
            work.__exit__(None, None, None)
            depth -= 1
        elif step == "share":
            namespace: dict[str, object] = {"other": 1}  # (the module's holder's names)
            state = runtime.ModuleState("m", "m.py", f"m:{len(namespaces)}", (2, 3), "{}",
                                        names=namespace)
            namespace.update({"_@pp_m": state, "_@pp_c0": state.counters[0],
                              "_@pp_c1": state.counters[1]})
            work.share(state)
            namespaces.append((state, namespace))
        for state, namespace in namespaces:
            own = [namespace["_@pp_m"] is state,
                   namespace["_@pp_c0"] is state.counters[0],
                   namespace["_@pp_c1"] is state.counters[1]]
            assert own == [depth == 0] * 3
            assert namespace["other"] == 1


def test_pathprofs_work_in_one_thread_keeps_the_swap_until_the_last_one_ends() -> None:
    work = OwnWork()
    namespace: dict[str, object] = {}  # (the module's holder's names)
    state = runtime.ModuleState("m", "m.py", "m:t", (1,), "{}", names=namespace)
    namespace.update({"_@pp_m": state, "_@pp_c0": state.counters[0]})
    work.share(state)
    inside = threading.Event()
    release = threading.Event()

    def other_thread() -> None:
        with work:
            inside.set()
            release.wait(10)

    thread = threading.Thread(target=other_thread)
    thread.start()
    inside.wait(10)
    with work:
        pass
    assert namespace["_@pp_m"] is not state  # the other thread is still at work
    release.set()
    thread.join()
    assert namespace["_@pp_m"] is state


def test_event_counting_names_the_modules_it_cannot_count(tmp_path: Path) -> None:
    """`pathprof count` does not switch functions in place: it says so, by name."""
    (tmp_path / "prog.py").write_text("import fnmatch\nprint(fnmatch.fnmatch('a.py', '*.py'))\n")
    result = pathprof_cli(tmp_path, "count", "--source", "fnmatch", "prog.py")
    assert result.stdout == "True\n"  # the program's output alone; the table is on stderr
    assert result.stderr.startswith("pathprof: already imported before counting started, "
                                    "so not counted: fnmatch\n")
    assert "statements counted" in result.stderr
