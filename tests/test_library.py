"""The library API a program uses (`pathprof.Profiler` as context manager and decorator,
`pathprof.load()`) and the data file it writes; the faces' door, `api.py`, is tested by
tests/test_reporting.py and the commands' and the plugin's tests."""

from __future__ import annotations

import sqlite3
import sys
import textwrap
from pathlib import Path

import pytest

import pathprof
from pathprof.data import schema, store
from pathprof.exceptions import ConfigError, DataError, NoDataError

MODULE = textwrap.dedent("""
    def parity(n):
        if n % 2:
            return "odd"
        return "even"
""")


@pytest.fixture
def module_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    name = f"pp_api_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    yield tmp_path
    sys.modules.pop(name, None)


def _module_name(module_dir: Path) -> str:
    return f"pp_api_{module_dir.name.replace('-', '_')}"


def test_context_manager_measures_imported_code(module_dir: Path) -> None:
    name = _module_name(module_dir)
    with pathprof.Profiler(data_file="out.pathprof", default_dirs=[str(module_dir)]):
        module = __import__(name)
        for i in range(5):
            module.parity(i)
    (fn,) = pathprof.load("out.pathprof").functions
    assert fn.qualname == "parity"
    assert sorted(p.count for p in fn.paths) == [2, 3]


def test_decorator_and_save_on_demand(module_dir: Path) -> None:
    name = _module_name(module_dir)
    profiler = pathprof.Profiler(data_file="d.pathprof", default_dirs=[str(module_dir)])

    @profiler
    def work() -> None:
        module = __import__(name)
        module.parity(1)

    work()
    assert pathprof.load("d.pathprof").functions[0].total == 1
    profiler.start()
    sys.modules[name].parity(3)
    profiler.save()  # flush while running: adds to what the first save wrote
    profiler.stop()
    assert pathprof.load("d.pathprof").functions[0].total == 2


def test_counts_made_while_no_profiler_runs_belong_to_no_run(module_dir: Path) -> None:
    """Instrumented code keeps counting after its profiler stops; a later profiler
    saves only what it saw, and a stop/start in between loses nothing of its own."""
    name = _module_name(module_dir)
    with pathprof.Profiler(data_file="first.pathprof", default_dirs=[str(module_dir)]):
        module = __import__(name)
        module.parity(1)
    module.parity(2)  # between the two runs
    second = pathprof.Profiler(data_file="second.pathprof", default_dirs=[str(module_dir)])
    second.start()
    module.parity(3)
    second.stop()
    module.parity(4)  # while the second profiler is stopped
    second.start()
    module.parity(5)
    second.stop()
    second.save()
    (first,) = pathprof.load("first.pathprof").functions
    (fn,) = pathprof.load("second.pathprof").functions
    assert first.total == 1
    assert fn.total == 2  # parity(3) and parity(5); not 2 or 4
    assert [p.count for p in fn.paths] == [2]


def test_bad_options_are_config_errors() -> None:
    with pytest.raises(ConfigError):
        pathprof.Profiler(mode="bogus")
    with pytest.raises(ConfigError):
        pathprof.Profiler(mode="edge", metric="time")


def _run_info() -> store.RunInfo:
    return store.RunInfo(0.0, ["x"], "3.11", "path", None, 1, "host")


def test_data_file_errors_are_clear_and_nothing_is_overwritten(tmp_path: Path) -> None:
    with pytest.raises(NoDataError):
        store.read(str(tmp_path / "missing"))
    other = tmp_path / "other.db"
    db = sqlite3.connect(other)
    db.execute("CREATE TABLE t (x)")
    db.commit()
    db.close()
    before = other.read_bytes()
    with pytest.raises(DataError, match="not a pathprof data file"):
        store.write(str(other), _run_info(), [], {})
    with pytest.raises(DataError, match="not a pathprof data file"):
        store.read(str(other))
    assert other.read_bytes() == before


def test_locked_data_file_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = str(tmp_path / "locked.pathprof")
    store.write(path, _run_info(), [], {})
    monkeypatch.setattr(schema, "LOCK_TIMEOUT", 0.05)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(DataError, match="locked"):
            store.write(path, _run_info(), [], {}, append=True)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert len(store.read(path).runs) == 1


@pytest.mark.parametrize("version", ["99", "2"])
def test_other_schema_is_refused(tmp_path: Path, version: str) -> None:
    """A newer file, or one of schema 2 (numbered before backedges were declared by
    the loop structure, whose numbers would decode to other paths), is refused."""
    path = str(tmp_path / "new.pathprof")
    store.write(path, _run_info(), [], {})
    db = sqlite3.connect(path)
    db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (version,))
    db.commit()
    db.close()
    message = f"has data schema {version}; this pathprof reads schema {schema.SCHEMA_VERSION}"
    with pytest.raises(DataError, match=message):
        store.read(path)
    with pytest.raises(DataError, match=message):
        store.write(path, _run_info(), [], {}, append=True)  # adding to it: refused
    store.write(path, _run_info(), [], {})  # a new run replaces it
    assert len(store.read(path).runs) == 1


def test_switch_context_attributes_each_path_to_its_contexts(module_dir: Path) -> None:
    name = _module_name(module_dir)
    profiler = pathprof.Profiler(data_file="c.pathprof", default_dirs=[str(module_dir)])
    with profiler:
        module = __import__(name)
        profiler.switch_context("odd-only")
        module.parity(1)
        profiler.switch_context("both")
        module.parity(3)
        module.parity(4)
        profiler.switch_context(None)
        module.parity(6)  # counted, in no context
    (fn,) = pathprof.load("c.pathprof").functions
    by_end_line = {fn.block_lines(p.blocks[-1])[1]: p for p in fn.paths}
    odd, even = by_end_line[4], by_end_line[5]  # `return "odd"` is line 4, "even" line 5
    assert (odd.count, even.count) == (2, 2)  # nothing lost or counted twice by switching
    assert fn.contexts == {odd.id: {"odd-only", "both"}, even.id: {"both"}}


def test_contexts_survive_a_second_save_and_merge(module_dir: Path) -> None:
    name = _module_name(module_dir)
    profiler = pathprof.Profiler(data_file="m.pathprof", default_dirs=[str(module_dir)])
    with profiler:
        module = __import__(name)
        profiler.switch_context("a")
        module.parity(1)
        profiler.save()
        profiler.switch_context("b")
        module.parity(1)
    (fn,) = pathprof.load("m.pathprof").functions
    (path,) = fn.paths
    assert path.count == 2
    assert fn.contexts == {path.id: {"a", "b"}}


def test_path_coverage_and_missed_paths_partition_every_path(module_dir: Path) -> None:
    from pathprof.analysis.pathcoverage import missed_paths, path_coverage
    from pathprof.data.profile import numbering_of
    from pathprof.graph import iter_paths

    name = _module_name(module_dir)
    with pathprof.Profiler(data_file="p.pathprof", default_dirs=[str(module_dir)]):
        __import__(name).parity(2)
    measurement = pathprof.load("p.pathprof")
    coverage = path_coverage(measurement)
    (fn,) = coverage.functions()
    assert (fn.totals.run, fn.totals.possible, coverage.totals.percent) == (1, 2, 50.0)
    ran = {p.key for p in fn.profile.paths}
    missed = {p.key for p in missed_paths(fn.profile, limit=None)}
    every = {str(p.number) for p in iter_paths(numbering_of(fn.profile.meta))}
    assert ran.isdisjoint(missed)
    assert ran | missed == every


def test_a_save_decodes_only_the_functions_that_ran(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A big program's save lists every measured function (0 of N paths for those
    that never ran) from the module's index: a function that never ran is not
    decoded, and its row in the data file is what decoding it would give."""
    name = f"pp_api_many_{tmp_path.name.replace('-', '_')}"
    body = "".join(f"def f{i}(n):\n    if n > {i}:\n        return 1\n    return 0\n\n"
                   for i in range(30))
    (tmp_path / f"{name}.py").write_text(body)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    profiler = pathprof.Profiler(data_file="many.pathprof", default_dirs=[str(tmp_path)])
    try:
        with profiler:
            __import__(name).f3(10)
        (state,) = [s for s in pathprof.runtime._modules if s.name == name]
        decoded = [i for i, f in enumerate(state.meta.functions._decoded) if f is not None]
        assert decoded == [3]
        functions = {fn.qualname: fn for fn in pathprof.load("many.pathprof").functions}
        assert len(functions) == 30
        assert functions["f3"].total == 1
        assert {(fn.qualname, fn.paths_possible, fn.total)
                for q, fn in functions.items() if q != "f3"} == {
            (f"f{i}", 2, 0) for i in range(30) if i != 3}
    finally:
        sys.modules.pop(name, None)
