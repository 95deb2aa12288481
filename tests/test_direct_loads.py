"""Source files a program loads without the import system's finders are measured
(issue 50: modules loaded by ``runpy.run_path`` or a ``SourceFileLoader`` were not
measured, and were reported "never imported"): the program sees what it sees without
pathprof, and the data names each file once, by its whole path."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pathprof

from .contract.test_program_cannot_tell import run_both

PLUGIN = """
def hello(x):
    if x:
        return "hi"
    return "no"
"""

SCRIPT = """
def twice(v):
    return v * 2

RESULT = twice(21)
"""

LOADS = """
    import importlib.util
    import runpy
    import sys
    from importlib.machinery import SourceFileLoader

    spec = importlib.util.spec_from_file_location("myplugin", "plugin.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    print(mod.hello(1), mod.hello(0), mod.__spec__.origin.endswith("plugin.py"))
    print(runpy.run_path("script.py")["RESULT"], runpy.run_path("script.py")["RESULT"])
    again = SourceFileLoader("plug2", "plugin.py").load_module()
    print(again.hello(0), again.hello.__code__.co_filename)
    print(type(spec.loader).__name__, SourceFileLoader.get_code.__qualname__)
"""


def _write(tmp_path: Path) -> None:
    (tmp_path / "plugin.py").write_text(PLUGIN)
    (tmp_path / "script.py").write_text(SCRIPT)


def test_a_source_file_loader_and_run_path_are_measured(tmp_path: Path) -> None:
    _write(tmp_path)
    plain, measured = run_both(tmp_path, LOADS)
    assert plain.splitlines()[1:] == ["hi no True", "42 42", "no plugin.py",
                                      "SourceFileLoader SourceLoader.get_code"]
    assert measured == plain
    totals = {(Path(f.file).name, f.qualname): (f.file, f.total, sorted(p.count for p in f.paths))
              for f in pathprof.load(str(tmp_path / ".pathprof")).functions}
    hello_file, hello_total, hello_paths = totals[("plugin.py", "hello")]
    assert hello_file == str(tmp_path / "plugin.py")  # one row, by the whole path
    assert (hello_total, hello_paths) == (3, [1, 2])
    twice_file, twice_total, _ = totals[("script.py", "twice")]
    assert twice_file == str(tmp_path / "script.py")
    assert twice_total == 2


def test_a_run_path_traceback_is_pythons(tmp_path: Path) -> None:
    """The code is compiled under the name run_path gives it (as given), so a
    traceback says what it says without pathprof."""
    (tmp_path / "err.py").write_text(textwrap.dedent("""
        def boom():
            raise ValueError("x")

        boom()
    """))
    plain, measured = run_both(tmp_path, """
        import runpy
        runpy.run_path("err.py")
    """, stderr=True)
    assert 'File "err.py", line 3, in boom' in plain
    assert measured == plain


def test_a_loader_that_a_program_subclasses_is_left_alone(tmp_path: Path) -> None:
    """A subclass of SourceFileLoader may change what is loaded (its own
    ``source_to_code``): pathprof does not instrument what it loads."""
    _write(tmp_path)
    plain, measured = run_both(tmp_path, """
        from importlib.machinery import SourceFileLoader

        class Upper(SourceFileLoader):
            def source_to_code(self, data, path, *, _optimize=-1):
                return compile(data.replace(b'"hi"', b'"HI"'), path, "exec")

        print(Upper("up", "plugin.py").load_module().hello(1))
    """)
    assert plain == "0\nHI\n"
    assert measured == plain
    assert not [f for f in pathprof.load(str(tmp_path / ".pathprof")).functions
                if f.qualname == "hello"]
