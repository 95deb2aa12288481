"""Unit tests of :mod:`pathprof.api`, the one door of the faces: its own functions,
called in-process (the re-exports of :mod:`pathprof.reporting` are that module's to
test). The data file's helpers (the files beside it, combining, source conflicts,
erasing, the xdist workers' files), a CFG read from JSON and its errors, ``--sort``'s
check as a PathprofError, the hot table, the program and the profiler made from
settings, composing another tool's rewriting, the scheduler check, a parallel run's
summary, the copy plan from the environment, ``command_scope`` (pathprof's own work,
the program put back for the interpreter's shutdown), warming the cache, the thread's
event count, the output a report writes to, and ``pathprof run``'s keeper saving the
run when a SIGTERM ends it. No program is run (a measured run ends as the interpreter
does, inside this process); the keeper's save runs with an empty runtime module list,
put back afterwards."""

from __future__ import annotations

import io
import json
import os
import sys
import types
from pathlib import Path

import pytest
from rich.console import Console
from rich.table import Table

from pathprof import api, messages, runtime
from pathprof.data import store
from pathprof.data.files import parallel_name
from pathprof.data.measurement import RunInfo
from pathprof.data.profile import FunctionProfile
from pathprof.exceptions import ConfigError, PathprofError
from pathprof.measure import execfile
from pathprof.measure import profiler as profiler_module
from pathprof.measure import program as measure_program
from pathprof.measure.children import ChildMeasurement
from pathprof.measure.importhook import Rewriter
from pathprof.measure.partial import ENVIRONMENT
from pathprof.measure.profiler import Profiler
from pathprof.parallel.plan import CopiesPlan
from pathprof.parallel.run import ParallelResult
from pathprof.python.instrument import instrument_source

SOURCE = "def f(x):\n    if x:\n        return 1\n    return 2\n"


def _write(path: Path, counts: dict[int, int], source: str = SOURCE) -> None:
    file = str(path.parent / "app.py")
    info = instrument_source(source, file).metadata
    meta = info.functions[0]
    fn = FunctionProfile(file, meta.qualname, meta.code_line, info.source_hash, meta)
    fn.counts = dict(counts)
    run = RunInfo(0.0, ["app.py"], "3.11.0", "path", None, 1, "host")
    store.write(str(path), run, [fn], {(file, info.source_hash): source})


def test_interrupted_is_the_runs_value() -> None:
    assert api.INTERRUPTED == measure_program.INTERRUPTED == -2


# -- the data file -------------------------------------------------------------------------


def test_the_files_beside_a_data_file_are_combined_into_it_and_erased(tmp_path: Path) -> None:
    data = tmp_path / ".pathprof"
    _write(data, {0: 1})
    beside = tmp_path / ".pathprof.mine"
    _write(beside, {1: 2})
    (tmp_path / ".pathprof.mine.lock").write_text("not a data file")
    assert api.combinable_files(str(data)) == [str(beside)]
    steps: list[tuple[int, int]] = []
    assert api.combine(str(data), [str(beside)], progress=lambda d, t: steps.append((d, t))
                       ) == [str(beside)]
    assert steps[-1] == (2, 2)  # two steps per file: read, then added
    (f,) = store.read(str(data)).functions
    assert f.counts == {0: 1, 1: 2}
    assert api.source_conflicts(str(data)) == []
    assert api.erase(str(data)) == [str(data)]
    assert sorted(p.name for p in tmp_path.iterdir()) == [".pathprof.mine.lock"]


def test_a_function_of_two_sources_is_a_conflict(tmp_path: Path) -> None:
    data = tmp_path / "d.db"
    _write(data, {0: 1})
    other = tmp_path / "o.db"
    _write(other, {0: 1}, SOURCE.replace("return 2", "return 3"))
    notes: list[str] = []
    api.combine(str(data), [str(other)], note=notes.append)
    assert api.source_conflicts(str(data)) == [(str(tmp_path / "app.py"), "f", 2)]
    assert notes == []


def test_xdist_workers_files_are_named_and_found_by_session(tmp_path: Path) -> None:
    data = str(tmp_path / ".pathprof")
    gw0 = api.xdist_data_file(data, "0123456789ab", "gw0")
    gw1 = api.xdist_data_file(data, "0123456789ab", "gw1")
    other = api.xdist_data_file(data, "ba9876543210", "gw0")
    assert gw0 != gw1
    assert gw0.startswith(data + ".xdist-")
    for name in (gw0, gw1, other):
        _write(Path(name), {0: 1})
    assert api.xdist_data_files(data, "0123456789ab") == sorted([gw0, gw1])
    assert api.xdist_data_files(data, "fedcba987654") == []


# -- reports ----------------------------------------------------------------------------------


def test_read_cfg_gives_the_graph_and_its_description(tmp_path: Path) -> None:
    cfg = {"description": "a diamond", "blocks": ["A", "B", "C", "D"], "entry": "A",
           "exit": "D", "edges": [["A", "B"], ["A", "C"], ["B", "D"], ["C", "D"]]}
    path = tmp_path / "cfg.json"
    path.write_text(json.dumps(cfg))
    graph, description = api.read_cfg(str(path))
    assert description == "a diamond"
    assert graph.names == ("A", "B", "C", "D")
    path.write_text(json.dumps({**cfg, "description": ""}))
    assert api.read_cfg(str(path))[1] is None  # an empty one is none
    path.write_text(json.dumps({k: v for k, v in cfg.items() if k != "description"}))
    assert api.read_cfg(str(path))[1] is None


def test_read_cfg_of_a_file_that_is_missing_or_not_json_is_a_pathprof_error(
        tmp_path: Path) -> None:
    missing = tmp_path / "none.json"
    with pytest.raises(PathprofError) as refused:
        api.read_cfg(str(missing))
    assert str(refused.value) == f"cannot read {missing}: No such file or directory"
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(PathprofError, match=r"bad.json is not valid JSON: Expecting"):
        api.read_cfg(str(bad))
    listed = tmp_path / "list.json"
    listed.write_text("[1, 2]")
    with pytest.raises(PathprofError, match="CFG data is malformed"):
        api.read_cfg(str(listed))


def test_a_sort_column_is_checked(capsys: pytest.CaptureFixture[str]) -> None:
    assert api.check_sort("name") == "name"
    assert api.check_sort("-basis") == "-basis"
    with pytest.raises(PathprofError) as refused:
        api.check_sort("bogus")
    assert str(refused.value).startswith("--sort bogus: choose from name, paths, run, missed")
    with pytest.raises(PathprofError):
        api.check_sort("--name")


def test_the_hot_table_is_a_rich_table_with_its_title() -> None:
    table = api.hot_table([], title="Hottest so far", confidence=0.9)
    assert isinstance(table, Table)
    out = io.StringIO()
    Console(file=out, width=100).print(table)
    assert "Hottest so far" in out.getvalue()


@pytest.mark.parametrize("path", [None, "out.txt"])
def test_output_is_standard_output_or_the_file(
        path: str | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    stdout = io.StringIO()
    monkeypatch.setattr(sys, "stdout", stdout)
    with api.output(path) as out:
        out.write("report\n")
    if path is None:
        assert stdout.getvalue() == "report\n"
    else:
        assert stdout.getvalue() == ""
        assert (tmp_path / path).read_text(encoding="utf-8") == "report\n"


def test_an_output_that_cannot_be_opened_is_a_pathprof_error(tmp_path: Path) -> None:
    target = tmp_path / "no" / "x.txt"
    with pytest.raises(PathprofError) as refused, api.output(str(target)):
        pass
    assert str(refused.value) == f"cannot write {target}: No such file or directory"


def test_an_output_file_shows_a_name_that_is_not_utf_8_escaped(tmp_path: Path) -> None:
    with api.output(str(tmp_path / "out.txt")) as out:
        out.write("caf\udce9\n")  # a file name's byte Python could not decode
    assert (tmp_path / "out.txt").read_text(encoding="utf-8") == "caf\\udce9\n"


# -- a measured program ---------------------------------------------------------------------


def test_program_resolves_a_script_or_a_module(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "prog.py").write_text("pass\n")
    script = api.program("prog.py", ["--", "a"], False)
    assert (script.path, script.args, script.default_dirs) == (str(tmp_path / "prog.py"),
                                                               ["a"], [str(tmp_path)])
    module = api.program("pkg.main", [], True)
    assert (module.module, module.path) == (True, None)


def test_profiler_makes_a_profiler_of_the_settings(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENVIRONMENT, raising=False)
    made = api.profiler(data_file=str(tmp_path / "d"), mode="edge", cache=False,
                        argv=["x"])
    assert isinstance(made, Profiler)
    assert (made.data_file, made.options.mode, made.argv) == (str(tmp_path / "d"), "edge",
                                                              ["x"])
    with pytest.raises(ConfigError):
        api.profiler(mode="bogus")


def test_another_tools_rewriting_is_composed_with_the_profilers(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENVIRONMENT, raising=False)
    made = api.profiler(data_file=str(tmp_path / "d"), cache=False)

    def owns(loader: object) -> bool:
        return loader == "pytest's loader"

    api.compose_rewriting(made, tag="assert", owns=owns, rewrite=lambda *a: None,
                          loaded=lambda *a: None, fallback=lambda *a: None)
    (rewriter,) = made.hook.rewriters
    assert isinstance(rewriter, Rewriter)
    assert rewriter.tag == "assert"
    assert rewriter.owns is owns


def test_the_scheduler_goes_with_the_dask_executor() -> None:
    with pytest.raises(ConfigError, match="--scheduler goes with --executor dask"):
        api.check_scheduler("local", "tcp://host:8786")
    with pytest.raises(ConfigError, match="needs --scheduler ADDRESS"):
        api.check_scheduler("dask", None)


def test_a_parallel_runs_summary_says_whether_the_copies_agreed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    plan = CopiesPlan(3, {}, {}, (1, 1, 1))
    agreed = ParallelResult(plan, 0, differences=[])
    assert api.parallel_summary(agreed, str(tmp_path / "d.pathprof")) == [
        "3 copies ran the same calls; their profiles are merged into d.pathprof",
        "--verify: the merged profile equals the sequential one"]
    disagreed = ParallelResult(plan, 0, disagreements={"a.py|step|1|h": [2, 3, 4]})
    (line,) = api.parallel_summary(disagreed, "d.pathprof")
    assert line.startswith("the 3 copies did not run the same way (step: [2, 3, 4])")


def test_the_copy_plan_comes_from_the_environment(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    assert api.copy_environment() == ENVIRONMENT == "PATHPROF_COPY"
    monkeypatch.delenv(ENVIRONMENT, raising=False)
    assert api.copy_plan() is None
    plan = tmp_path / "plan.json"
    plan.write_text('{"format": 1, "copies": 2, "owners": {}}')
    monkeypatch.setenv(ENVIRONMENT, json.dumps({"plan": str(plan), "index": 1, "calls": "c"}))
    found = api.copy_plan()
    assert found is not None
    assert (found.index, found.copies) == (1, 2)


def test_command_scope_is_pathprofs_own_work_and_finish_keeps_a_status(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(execfile, "_last_program", [])
    assert not runtime.own_work.active
    with api.command_scope() as finish:
        assert runtime.own_work.active
        assert finish(0) == 0
        assert finish(3) == 3
    assert not runtime.own_work.active


def test_command_scope_puts_the_program_back_for_the_shutdown(
        monkeypatch: pytest.MonkeyPatch) -> None:
    program_main = types.ModuleType("__main__")
    monkeypatch.setattr(sys, "argv", ["pathprof", "run", "prog.py"])
    monkeypatch.setattr(sys, "path", ["/pathprof's own", *sys.path[1:]])
    monkeypatch.setitem(sys.modules, "__main__", sys.modules["__main__"])
    monkeypatch.setattr(execfile, "_last_program", [["prog.py", "x"], "/the/program",
                                                    program_main])
    with api.command_scope():
        pass
    assert sys.argv == ["prog.py", "x"]
    assert sys.path[0] == "/the/program"
    assert sys.modules["__main__"] is program_main


def test_warm_cache_instruments_the_selected_files(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "good.py").write_text(SOURCE)
    (tmp_path / "bad.py").write_text("def f(:\n")
    done: list[tuple[int, int]] = []
    paths, result = api.warm_cache([], [], [], mode="path", metric=None,
                                   cache_dir=str(tmp_path / "cache"),
                                   progress=lambda d, t: done.append((d, t)))
    assert sorted(os.path.basename(p) for p in paths) == ["bad.py", "good.py"]
    assert (result.instrumented, result.cached) == (1, 0)
    assert [os.path.basename(p) for p, _why in result.failed] == ["bad.py"]
    assert result.cache_dir == str(tmp_path / "cache")
    assert done[-1] == (2, 2)


def test_warm_cache_refuses_nothing_selected_and_stopping_without_paths(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(PathprofError, match="no source files selected"):
        api.warm_cache([], [], [], mode="path", metric=None)
    (tmp_path / "good.py").write_text(SOURCE)
    for mode, metric in (("edge", None), ("path", "time")):
        with pytest.raises(PathprofError, match="stopping counting is for path coverage"):
            api.warm_cache([], [], [], mode=mode, metric=metric, stop_counting="basis")


def test_the_threads_event_count_does_not_count_its_own_reading() -> None:
    frame = sys._getframe()
    first = api.thread_events(frame)
    assert isinstance(first, int)
    assert api.thread_events(frame) == first  # nothing counted ran between


def test_a_path_is_shown_relative_when_under_the_current_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert api._shown_path(str(tmp_path / "d.pathprof")) == "d.pathprof"
    assert api._shown_path("/elsewhere/d.pathprof") == "/elsewhere/d.pathprof"


# -- pathprof run's keeper -------------------------------------------------------------------


def test_the_run_keeper_saves_and_says_where_when_sigterm_ends_the_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(ENVIRONMENT, raising=False)
    monkeypatch.setattr(runtime, "_modules", [])
    monkeypatch.setattr(profiler_module, "_active", None)
    monkeypatch.setattr(messages, "_said", set())
    measuring = Profiler(data_file="run.pathprof", default_dirs=[str(tmp_path)], cache=False)
    keeper = api._Saving(measuring, ChildMeasurement(measuring.child_settings()))
    assert keeper.keeps_when_raised is True
    keeper.keep(terminated=True)
    assert capsys.readouterr().err == ("pathprof: terminated by SIGTERM: the run's data up to "
                                       "the signal was saved to run.pathprof\n")
    assert store.read(str(tmp_path / "run.pathprof")).functions == []
    keeper.nothing_measured()
    assert capsys.readouterr().err == ("pathprof: terminated by SIGTERM before the program "
                                       "started: nothing was measured or saved\n")


def test_a_run_keeper_that_was_not_terminated_saves_quietly(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(ENVIRONMENT, raising=False)
    monkeypatch.setattr(runtime, "_modules", [])
    monkeypatch.setattr(profiler_module, "_active", None)
    measuring = Profiler(data_file="run.pathprof", cache=False)
    api._Saving(measuring, ChildMeasurement(measuring.child_settings())).keep(terminated=False)
    assert capsys.readouterr().err == ""
    assert (tmp_path / "run.pathprof").exists()


def test_a_copy_of_a_parallel_run_leaves_the_telling_to_the_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(runtime, "_modules", [])
    monkeypatch.setattr(profiler_module, "_active", None)
    monkeypatch.setattr(messages, "_said", set())
    plan = tmp_path / "plan.json"
    plan.write_text('{"format": 1, "copies": 2, "owners": {}}')
    calls = str(tmp_path / "calls.json")
    monkeypatch.setenv(ENVIRONMENT, json.dumps({"plan": str(plan), "index": 0,
                                                "calls": calls}))
    measuring = Profiler(data_file="copy.pathprof", cache=False)
    keeper = api._Saving(measuring, ChildMeasurement(measuring.child_settings()))
    keeper.keep(terminated=True)
    keeper.nothing_measured()
    assert capsys.readouterr().err == ""
    assert (tmp_path / "copy.pathprof").exists()
    assert Path(parallel_name(calls, "copy", copy=(0, 2))).read_text() == "{}"

