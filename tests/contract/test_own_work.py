"""pathprof's own work never counts as the program's (issue 34 §1, docs/guarantees.md):
with every standard-library module a run imports measured, a program's profile holds
exactly the calls the program makes, as a profile function set in the same program
without pathprof sees them (from its first line to the interpreter's exit calls);
and what the program runs after its main code -- the threads Python waits for, its
``atexit`` handlers -- is in the profile."""

from __future__ import annotations

import json
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest

import pathprof

from ..test_run import pathprof_cli

STDLIB = Path(sysconfig.get_paths()["stdlib"]).resolve()

#: What the program does: a little work, with the standard library's help, so that
#: the program's own calls into measured modules are there to be told apart.
PROGRAM = """
    import os.path

    print(os.path.join("a", "b"), os.path.splitext("x.py")[1])
"""

#: The same program under a profile function that records every Python function of
#: the standard library called from the first line to the threading module's exit
#: calls and the atexit handlers (registered first, the recorder's runs last).
ORACLE = """
    import atexit, json, sys

    CALLS = set()

    def write():
        sys.setprofile(None)
        with open(sys.argv[1], "w") as f:
            json.dump(sorted(CALLS), f)

    atexit.register(write)

    def record(frame, event, arg):
        if event == "call":
            code = frame.f_code
            CALLS.add((code.co_filename, code.co_qualname, code.co_firstlineno))
    """


def stdlib_modules_of_a_run(tmp_path: Path) -> list[str]:
    """The standard-library modules (with a source file) loaded by the end of a
    ``pathprof run``: everything pathprof and its dependencies import."""
    script = tmp_path / "modules.py"
    script.write_text(textwrap.dedent("""
        import atexit, json, sys

        def write():
            names = [name for name, module in list(sys.modules.items())
                     if str(getattr(module, "__file__", "")).endswith(".py")
                     and name != "__main__"]
            with open(sys.argv[1], "w") as f:
                json.dump([(n, sys.modules[n].__file__) for n in names], f)

        atexit.register(write)
    """))
    listing = tmp_path / "modules.json"
    pathprof_cli(tmp_path, "run", "--data-file", str(tmp_path / "m.pathprof"), "modules.py",
                 str(listing))
    return sorted(name for name, file in json.loads(listing.read_text())
                  if Path(file).resolve().is_relative_to(STDLIB)
                  and "site-packages" not in Path(file).parts)


def test_a_profile_holds_the_programs_calls_only(tmp_path: Path) -> None:
    modules = stdlib_modules_of_a_run(tmp_path)
    assert {"posixpath", "json.decoder", "sqlite3.dbapi2", "fnmatch"} <= set(modules)
    (tmp_path / "prog.py").write_text(textwrap.dedent(PROGRAM))
    (tmp_path / "oracle.py").write_text(
        textwrap.dedent(ORACLE) + "\nsys.setprofile(record)\n" + textwrap.dedent(PROGRAM))
    calls_file = tmp_path / "calls.json"
    plain = subprocess.run([sys.executable, "oracle.py", str(calls_file)], cwd=tmp_path,
                           capture_output=True, text=True, timeout=120)
    assert plain.returncode == 0, plain.stderr
    files = {str(Path(m.__file__).resolve()) for m in map(sys.modules.get, modules)
             if m is not None and getattr(m, "__file__", None)}
    expected = {(qualname, line) for file, qualname, line in json.loads(calls_file.read_text())
                if str(Path(file).resolve()) in files or file.startswith("<frozen ")}

    data = tmp_path / "prog.pathprof"
    measured = pathprof_cli(tmp_path, "run", "--data-file", str(data),
                            "--source", ",".join(modules), "prog.py")
    assert measured.stdout == plain.stdout
    profile = pathprof.load(str(data))
    ran = {(fn.qualname, fn.first_line) for fn in profile.functions
           if fn.total or fn.raised or fn.cuts}
    measured_files = {fn.file for fn in profile.functions}
    assert len(measured_files) > 80  # the whole of what a run imports was measured
    assert ran, "the program's own calls into measured modules must be there"
    assert ran <= expected, f"counted but never called by the program: {sorted(ran - expected)}"


WAITED_FOR = """
    import atexit, threading

    def step(i):
        if i % 3:
            return 1
        return 2

    def work(n):
        total = 0
        for i in range(n):
            total += step(i)
        print("thread", total)

    def at_exit():
        print("atexit", step(0))

    atexit.register(at_exit)
    event = threading.Event()
    threading.Thread(target=lambda: (event.wait(), work(1000))).start()
    print("main done")
    event.set()
"""


@pytest.mark.parametrize("command", ["run", "count"])
def test_what_runs_after_the_main_code_is_measured(tmp_path: Path, command: str) -> None:
    """A thread Python waits for and the program's atexit handlers run after
    ``__main__``'s code ends: counted (they were lost without a word)."""
    (tmp_path / "prog.py").write_text(textwrap.dedent(WAITED_FOR))
    plain = subprocess.run([sys.executable, "prog.py"], cwd=tmp_path, capture_output=True,
                           text=True, timeout=120)
    data = tmp_path / "prog.pathprof"
    extra = ("--data-file", str(data)) if command == "run" else ("--json", "-")
    measured = pathprof_cli(tmp_path, command, *extra, "prog.py")
    if command == "run":
        assert measured.stdout == plain.stdout == "main done\nthread 1334\natexit 2\n"
        counts = {fn.qualname: fn.total for fn in pathprof.load(str(data)).functions}
        assert counts["step"] == 1001
        assert counts["work"] == 1001
        assert counts["at_exit"] == 1
    else:
        report = json.loads(measured.stdout.split("atexit 2\n", 1)[1])
        assert measured.stdout.startswith(plain.stdout)
        own = {f["qualname"]: f["self"] for f in report["functions"]}
        assert own["step"] == 1001 * 2  # 1001 calls: a test, a return
        assert own["at_exit"] == 1


IMPORTED_BY_PATHPROF = """
    import sys
    import pathprof
    from pathprof import runtime

    sys.path.insert(0, ".")
    profiler = pathprof.Profiler(data_file="own.pathprof", source=["colorsys", "mine"])
    profiler.start()
    with runtime.own_work:  # what pathprof's own code would do
        import colorsys, mine
        colorsys.rgb_to_hsv(0.1, 0.2, 0.3)
        mine.twice(1)
    print(colorsys.hls_to_rgb(0.5, 0.5, 0.0), mine.twice(2))
    profiler.stop()
    profiler.save()
"""


def test_a_module_pathprof_imports_counts_only_the_programs_calls(tmp_path: Path) -> None:
    """A module first imported by pathprof's own work (on 3.13 installing the import
    hook imports ``importlib.metadata``): its body and pathprof's calls into it are not
    the program's; the program's later calls are. (3.13 counted
    ``MetadataPathFinder.invalidate_caches`` for a program that never called it.)"""
    (tmp_path / "mine.py").write_text("def twice(x):\n    return 2 * x\n\nFOUR = twice(2)\n")
    (tmp_path / "prog.py").write_text(textwrap.dedent(IMPORTED_BY_PATHPROF))
    ran = subprocess.run([sys.executable, "prog.py"], cwd=tmp_path, capture_output=True,
                         text=True, timeout=120)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == "(0.5, 0.5, 0.5) 4\n"
    totals = {(Path(fn.file).stem, fn.qualname): fn.total
              for fn in pathprof.load(str(tmp_path / "own.pathprof")).functions}
    assert totals[("colorsys", "hls_to_rgb")] == 1
    assert totals[("colorsys", "rgb_to_hsv")] == 0  # pathprof's call, in a shared module
    # mine is the program's own module, not shared: neither its body's call (at the
    # import pathprof made) nor pathprof's call after it counts, the program's does
    assert totals[("mine", "twice")] == 1
