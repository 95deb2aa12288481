"""Unit tests of :mod:`pathprof.measure.profiler`: the measurement API. The
:class:`Profiler`'s checks of its settings, its plan in a copy of a parallel run, what
it passes to child processes and records of its selection; one measured run in this
process (a small module imported under the profiler: its paths counted, its function
never called kept as 0 of N paths, contexts, edge mode, stopping counting, the first
save replacing the data file and the later ones adding to it, a data file that cannot
be written saving the run beside it or in the temporary directory, or saying it is
lost); and the module's helpers (``_file_size_limit``, ``_read_source``, ``_owned``).
A run here changes process-wide state: the ``isolated`` fixture gives the runtime an
empty module list, and puts back the module's ``_active`` profiler, the runtime's hooks
and watcher and the original code kept to go back to (:mod:`pathprof.measure.goback`),
and removes what was imported; the hook is uninstalled when the profiler stops
(checked)."""

from __future__ import annotations

import errno
import hashlib
import os
import sqlite3
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from pathprof import messages, runtime
from pathprof.config import CacheDir
from pathprof.contract import CopyShareInfo
from pathprof.data import store
from pathprof.data.measurement import Selection as Recorded
from pathprof.data.profile import FunctionProfile, numbering_of
from pathprof.exceptions import ConfigError, DataError
from pathprof.measure import goback
from pathprof.measure import profiler as profiler_module
from pathprof.measure.partial import ENVIRONMENT
from pathprof.measure.profiler import (
    Profiler,
    _file_size_limit,
    _give_back,
    _owned,
    _read_source,
    load,
)
from pathprof.python.instrument import instrument_source
from pathprof.runtime import stopping as runtime_stopping

# f: an if with a return in each branch: 2 paths. never: straight line, 1 path.
SUBJECT = textwrap.dedent('''\
    def f(x):
        if x:
            return 1
        return 2


    def never(y):
        return y
''')
MODULE = "pp_profiler_unit_subject"


@pytest.fixture
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A directory holding :data:`MODULE` on ``sys.path``, and the process-wide state a
    measured run changes put back afterwards."""
    (tmp_path / f"{MODULE}.py").write_text(SUBJECT, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(runtime, "_modules", [])
    monkeypatch.setattr(runtime, "_hooks", dict(runtime._hooks))
    monkeypatch.setattr(runtime_stopping, "watcher", None)
    monkeypatch.setattr(goback, "_originals", {})
    monkeypatch.setattr(goback, "_pending", {})
    monkeypatch.setattr(profiler_module, "_active", None)
    monkeypatch.setattr(messages, "_said", set())
    monkeypatch.delenv(ENVIRONMENT, raising=False)
    meta_path = list(sys.meta_path)
    yield tmp_path
    sys.modules.pop(MODULE, None)
    assert sys.meta_path == meta_path  # the hook went with the profiler's stop


def _profiler(directory: Path, **settings: object) -> Profiler:
    return Profiler(data_file=str(directory / "data.pathprof"), source=[str(directory)],
                    cache=False, **settings)  # type: ignore[arg-type]


def _functions(path: Path) -> dict[str, FunctionProfile]:
    return {fn.qualname: fn for fn in store.read(str(path)).functions}


def _hottest_lines(fn: FunctionProfile) -> set[int]:
    hottest = fn.paths[0]
    lines: set[int] = set()
    for block in hottest.blocks:
        span = fn.block_lines(block)
        if span is not None:
            lines.update(range(span[0], span[1] + 1))
    return lines


# -- settings ----------------------------------------------------------------------------


@pytest.mark.parametrize(("settings", "message"), [
    ({"mode": "branch"}, "mode must be one of path, edge, not 'branch'"),
    ({"metric": "cycles"}, "metric must be 'time' or None, not 'cycles'"),
    ({"mode": "edge", "metric": "time"}, "--metric time needs path mode"),
    ({"stop_counting": "sometimes"},
     "stop counting must be one of never, basis, paths, not 'sometimes'"),
    ({"conditions": True, "mode": "edge"}, "conditions are measured with path coverage"),
    ({"conditions": True, "metric": "time"}, "conditions are measured with path coverage"),
    ({"stop_counting": "basis", "mode": "edge"}, "stopping counting is for path coverage"),
    ({"stop_counting": "paths", "metric": "time"}, "stopping counting is for path coverage"),
])
def test_settings_that_do_not_go_together_are_a_config_error(
        tmp_path: Path, settings: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError) as refused:
        _profiler(tmp_path, **settings)
    assert str(refused.value).startswith(message)


def test_the_data_file_is_made_absolute_and_argv_defaults_to_the_processs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", ["prog", "--flag"])
    monkeypatch.delenv(ENVIRONMENT, raising=False)
    profiler = Profiler(data_file="sub/d.pathprof", cache=False)
    assert profiler.data_file == str(tmp_path / "sub" / "d.pathprof")
    assert profiler.argv == ["prog", "--flag"]
    assert Profiler(argv=("a", "b"), cache=False).argv == ["a", "b"]
    assert profiler.copy is None
    assert not profiler.started


def test_a_copy_plan_that_cannot_be_read_is_a_config_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENVIRONMENT, "{not json")
    with pytest.raises(ConfigError, match="PATHPROF_COPY: cannot read this copy's plan"):
        _profiler(tmp_path)


def test_a_copy_of_a_parallel_run_counts_everything_and_caches_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text('{"format": 1, "copies": 2, "owners": {}}', encoding="utf-8")
    monkeypatch.setenv(ENVIRONMENT, f'{{"plan": "{plan}", "index": 1, "calls": "c"}}')
    profiler = Profiler(data_file=str(tmp_path / "d"), stop_counting="basis", cache=True)
    assert profiler.copy is not None
    assert (profiler.copy.index, profiler.copy.copies) == (1, 2)
    assert profiler.stop_counting == "never"  # merged count by count: every count exact
    assert profiler.options.copy_plan is profiler.copy
    assert profiler.options.cache is False
    assert profiler.options.switches is False


def test_the_options_follow_the_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENVIRONMENT, raising=False)
    profiler = _profiler(tmp_path, mode="path", metric="time",
                         cache_dir=str(tmp_path / "cache"))
    assert (profiler.options.mode, profiler.options.metric) == ("path", "time")
    assert profiler.options.cache is False
    assert profiler.options.cache_dir == CacheDir(str(tmp_path / "cache"), True)
    switching = _profiler(tmp_path, stop_counting="paths", conditions=True)
    assert switching.options.switches is True
    assert switching.options.conditions is True


def test_child_settings_carry_what_a_child_measures_with(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENVIRONMENT, raising=False)
    cache = CacheDir(str(tmp_path / "c"), False)
    profiler = Profiler(data_file=str(tmp_path / "d"), source=["pkg"], include=["*/a*"],
                        omit=["*/b*"], default_dirs=[str(tmp_path)], mode="edge",
                        cache=False, cache_dir=cache)
    settings = profiler.child_settings()
    token = settings.pop("token")
    assert isinstance(token, str)
    assert len(token) == 12
    assert settings == {"data_file": str(tmp_path / "d"), "source": ["pkg"],
                        "include": ["*/a*"], "omit": ["*/b*"],
                        "default_dirs": [str(tmp_path)], "mode": "edge", "metric": None,
                        "cache": False, "cache_dir": [str(tmp_path / "c"), False],
                        "stop_counting": "never", "conditions": False}


def test_selections_are_recorded_only_where_the_source_was_named(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENVIRONMENT, raising=False)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "src").mkdir()
    named = Profiler(data_file="d", source=["src", "pkg.mod"], include=["*/x*"], cache=False)
    assert named.selections() == [Recorded((str(tmp_path / "src"), "pkg.mod"), ("*/x*",), ())]
    assert Profiler(data_file="d", cache=False).selections() == []


def test_run_info_names_the_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENVIRONMENT, raising=False)
    profiler = Profiler(data_file=str(tmp_path / "d"), argv=["prog", "1"], mode="edge",
                        cache=False)
    info = profiler.run_info()
    assert info.argv == ["prog", "1"]
    assert info.mode == "edge"
    assert info.metric is None
    assert info.pid == os.getpid()
    assert info.python == "{}.{}.{}".format(*sys.version_info[:3])
    assert info.started == profiler.started_at


def test_contexts_cannot_be_switched_while_stopping_counting(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENVIRONMENT, raising=False)
    with pytest.raises(ConfigError, match="contexts need every run of every path"):
        _profiler(tmp_path, stop_counting="basis").switch_context("test_a")


def test_a_second_profiler_cannot_start_while_one_runs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENVIRONMENT, raising=False)
    monkeypatch.setattr(profiler_module, "_active", object())
    with pytest.raises(ConfigError, match="another pathprof Profiler is already running"):
        _profiler(tmp_path).start()


# -- a measured run ----------------------------------------------------------------------


def test_a_measured_run_saves_the_paths_that_ran_and_the_functions_that_did_not(
        isolated: Path) -> None:
    profiler = _profiler(isolated, argv=["unit"])
    with profiler:
        module = __import__(MODULE)
        assert [module.f(1), module.f(0), module.f(0)] == [1, 2, 2]
    assert profiler.started
    found = _functions(isolated / "data.pathprof")
    assert set(found) == {"f", "never"}
    f, never = found["f"], found["never"]
    assert f.paths_possible == 2
    assert sorted(f.counts.values()) == [1, 2]
    assert f.cuts == {}
    assert 4 in _hottest_lines(f)  # the path run twice returns 2
    assert never.counts == {}  # measured, never called: 0 of 1 paths
    assert never.paths_possible == 1
    measurement = store.read(str(isolated / "data.pathprof"))
    (run,) = measurement.runs
    assert (run.argv, run.mode, run.pid) == (["unit"], "path", os.getpid())
    assert measurement.selections == [Recorded((str(isolated),))]
    file = str(isolated / f"{MODULE}.py")
    digest = hashlib.sha256(SUBJECT.encode()).hexdigest()[:32]
    assert f.file == file
    assert f.source_hash == digest
    assert measurement.sources[(file, digest)] == SUBJECT


def test_the_profiler_decorates_a_function(isolated: Path) -> None:
    profiler = _profiler(isolated)

    @profiler
    def work() -> int:
        module = __import__(MODULE)
        return module.f(0) + module.f(0)

    assert work() == 4
    f = _functions(isolated / "data.pathprof")["f"]
    assert list(f.counts.values()) == [2]


def test_a_later_save_adds_to_the_first(isolated: Path) -> None:
    profiler = _profiler(isolated)
    profiler.start()
    module = __import__(MODULE)
    module.f(1)
    profiler.save()
    module.f(1)
    module.f(0)
    profiler.stop()
    profiler.save()
    f = _functions(isolated / "data.pathprof")["f"]
    assert sorted(f.counts.values()) == [1, 2]  # nothing lost, nothing counted twice


def test_the_first_save_replaces_the_data_file_unless_appending(isolated: Path) -> None:
    data = isolated / "data.pathprof"
    with _profiler(isolated):
        __import__(MODULE).f(1)
    sys.modules.pop(MODULE)
    with _profiler(isolated):  # a new run: replaces
        __import__(MODULE).f(1)
    assert list(_functions(data)["f"].counts.values()) == [1]
    sys.modules.pop(MODULE)
    with _profiler(isolated, append=True):
        __import__(MODULE).f(1)
    assert list(_functions(data)["f"].counts.values()) == [2]
    assert len(store.read(str(data)).runs) == 2


def test_contexts_say_which_context_ran_each_path(isolated: Path) -> None:
    profiler = _profiler(isolated)
    with profiler:
        module = __import__(MODULE)
        profiler.switch_context("first")
        module.f(1)
        profiler.switch_context("second")
        module.f(1)
        module.f(0)
        profiler.switch_context(None)
        module.f(0)
    f = _functions(isolated / "data.pathprof")["f"]
    assert sorted(f.counts.values()) == [2, 2]
    by_count = sorted(f.contexts.values(), key=len)
    assert by_count == [{"second"}, {"first", "second"}]


def test_edge_mode_saves_edge_counts_and_no_paths(isolated: Path) -> None:
    with _profiler(isolated, mode="edge"):
        module = __import__(MODULE)
        module.f(1)
        module.f(0)
        module.f(0)
    f = _functions(isolated / "data.pathprof")["f"]
    assert f.counts == {}
    assert f.cuts == {}

    def line(block: int) -> int | None:
        span = f.block_lines(block)
        return None if span is None else span[0]

    by_lines = {(line(f.meta.edges[e].src), line(f.meta.edges[e].dst)): count
                for e, count in f.edges.items()}
    # ENTRY -> the test (line 2) 3 times; to ``return 1`` (line 3) once, to
    # ``return 2`` (line 4) twice, and from each to EXIT as often
    assert by_lines == {(None, 2): 3, (2, 3): 1, (3, None): 1, (2, 4): 2, (4, None): 2}


def test_a_function_whose_basis_is_spanned_stops_counting(isolated: Path) -> None:
    with _profiler(isolated, stop_counting="basis"):
        module = __import__(MODULE)
        module.f(1)
        module.f(0)  # both paths ran: the basis of 2 paths is spanned
        for _ in range(5):
            module.f(0)  # no longer counted
    assert runtime_stopping.watcher is None
    f = _functions(isolated / "data.pathprof")["f"]
    assert f.stopped
    assert sorted(f.counts.values()) == [1, 1]


def test_a_source_that_matched_nothing_is_named_when_the_profiler_stops(
        isolated: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = str(isolated / "nothing_here")
    profiler = Profiler(data_file=str(isolated / "d"), source=[str(isolated), missing],
                        cache=False)
    with profiler:
        __import__(MODULE)
    assert profiler.unmatched() == [missing]
    assert capsys.readouterr().err == (f"pathprof: source {missing!r} matched no module or "
                                       "file imported while measuring: nothing of it was "
                                       "measured\n")


def test_unmatched_sources_are_not_named_when_told_not_to(
        isolated: Path, capsys: pytest.CaptureFixture[str]) -> None:
    profiler = Profiler(data_file=str(isolated / "d"), source=["pp_no_such_module"],
                        cache=False, warn_unmatched=False)
    with profiler:
        pass
    assert profiler.unmatched() == ["pp_no_such_module"]
    assert capsys.readouterr().err == ""


def test_a_data_file_that_cannot_be_written_saves_the_run_beside_it(
        isolated: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = isolated / "data.pathprof"
    data.write_text("not a database" * 100)
    profiler = _profiler(isolated)
    with profiler:
        __import__(MODULE).f(1)
    assert data.read_text() == "not a database" * 100  # left untouched
    (saved,) = [p for p in isolated.iterdir() if p.name.startswith("data.pathprof.saved.")]
    assert list(_functions(saved)["f"].counts.values()) == [1]
    assert capsys.readouterr().err == (
        f"pathprof: {data} is not a pathprof data file (file is not a database); it was "
        f"left untouched; this run's data was saved to {saved}\n")


def test_a_run_that_cannot_be_saved_beside_the_data_file_goes_to_the_temporary_directory(
        isolated: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    data = isolated / "gone" / "data.pathprof"  # a directory that does not exist
    temp = isolated / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    profiler = Profiler(data_file=str(data), source=[str(isolated)], cache=False)
    with profiler:
        __import__(MODULE).f(0)
    (saved,) = temp.iterdir()
    assert saved.name.startswith("data.pathprof.saved.")
    assert list(_functions(saved)["f"].counts.values()) == [1]
    err = capsys.readouterr().err
    assert err.startswith(f"pathprof: cannot write {data}: ")
    assert err.endswith(f"; this run's data was saved to {saved}\n")


def test_a_run_nowhere_takes_is_said_to_be_lost(
        isolated: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    data = isolated / "gone" / "data.pathprof"  # a directory that does not exist
    monkeypatch.setattr(tempfile, "tempdir", str(isolated / "no_temp"))
    profiler = Profiler(data_file=str(data), source=[str(isolated)], cache=False)
    profiler.start()
    __import__(MODULE).f(1)
    profiler.stop()
    assert profiler.save() == str(data)
    err = capsys.readouterr().err
    assert err.startswith(f"pathprof: cannot write {data}: ")
    assert err.endswith("; nowhere else could take this run's data either: it is lost\n")
    assert not data.parent.exists()


def test_load_reads_a_data_file(isolated: Path) -> None:
    with _profiler(isolated):
        __import__(MODULE).f(0)
    assert [fn.qualname for fn in load(str(isolated / "data.pathprof")).functions] == [
        "f", "never"]
    with pytest.raises(DataError):
        load(str(isolated / f"{MODULE}.py"))


# -- helpers -----------------------------------------------------------------------------


def test_no_file_size_limit_note_for_other_errors() -> None:
    assert _file_size_limit(OSError(errno.ENOSPC, "No space left on device")) == ""
    assert _file_size_limit(DataError("locked")) == ""


def test_a_write_past_the_file_size_limit_names_the_limit(
        monkeypatch: pytest.MonkeyPatch) -> None:
    resource = pytest.importorskip("resource")
    monkeypatch.setattr(resource, "getrlimit", lambda which: (1_048_576, resource.RLIM_INFINITY))
    too_big = OSError(errno.EFBIG, "File too large")
    assert _file_size_limit(too_big) == (" (files cannot grow past 1,048,576 bytes here: "
                                         "ulimit -f)")
    # SQLite says "disk I/O error" for the same thing
    assert _file_size_limit(sqlite3.OperationalError("disk I/O error")).startswith(
        " (files cannot grow past 1,048,576 bytes")
    monkeypatch.setattr(resource, "getrlimit",
                        lambda which: (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    assert _file_size_limit(too_big) == ""  # no limit: nothing to say


def test_the_source_is_read_only_if_it_still_holds_what_was_measured(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_bytes(b"x = 1\n")
    digest = hashlib.sha256(b"x = 1\n").hexdigest()[:32]
    assert _read_source(str(path), digest) == "x = 1\n"
    path.write_bytes(b"x = 2\n")  # changed since
    assert _read_source(str(path), digest) is None
    assert _read_source(str(tmp_path / "gone.py"), digest) is None


def test_the_source_is_decoded_as_python_reads_it(tmp_path: Path) -> None:
    text = "# -*- coding: latin-1 -*-\nname = 'caf\xe9'\n".encode("latin-1")
    path = tmp_path / "m.py"
    path.write_bytes(text)
    digest = hashlib.sha256(text).hexdigest()[:32]
    assert _read_source(str(path), digest) == "# -*- coding: latin-1 -*-\nname = 'caf\xe9'\n"
    bad = b"name = '\xe9'\n"  # not UTF-8, and no coding declared
    path.write_bytes(bad)
    assert _read_source(str(path), hashlib.sha256(bad).hexdigest()[:32]) is None


def test_a_claimed_file_is_given_its_name_back(tmp_path: Path) -> None:
    claim = tmp_path / "d.claim"
    claim.write_text("held")
    _give_back(str(tmp_path / "d.child"), str(claim))
    assert (tmp_path / "d.child").read_text() == "held"
    assert not claim.exists()
    _give_back(str(tmp_path / "d.child"), str(tmp_path / "missing"))  # nothing to give back
    assert (tmp_path / "d.child").read_text() == "held"


def test_a_copy_keeps_only_the_paths_it_owns() -> None:
    meta = instrument_source(SUBJECT, "owned.py").metadata.functions[0]
    dag_edges = tuple(range(len(numbering_of(meta).dag.edges)))
    # one task of every DAG edge, held by copy 0: it owns every path, numbered as is
    whole = CopyShareInfo((dag_edges,), (0,), 0)
    assert _owned(meta, whole, {0: 3, 1: 1}, {}) == ({0: 3, 1: 1}, {})
    assert _owned(meta, whole, {5: 1}, {}) == ({}, {})  # no such path: dropped
    # the same task given to copies 0 and 1: the first holds it, copy 1 owns nothing
    shared = CopyShareInfo((dag_edges, dag_edges), (0, 1), 1)
    assert _owned(meta, shared, {0: 3, 1: 1}, {}) == ({}, {})
