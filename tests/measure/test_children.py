"""Unit tests of :mod:`pathprof.measure.children`, which measures the children of a run
that start a new interpreter: the settings it hands them (the ``PATHPROF_CHILD``
variable, compact JSON, added to a ``subprocess`` child's own ``env``), the ``.pth``
file it writes once into site-packages (named by pid and token; its one line, which
does nothing where the variable is not set), the message when it cannot be written,
the removal of ``.pth`` files left by dead runs, the wrapping of ``subprocess`` and
``multiprocessing``'s spawn and its undoing, the ``running`` mark of a spawned worker,
and the short description of what a child runs. Site-packages is a temporary
directory here; one short ``python -S`` child checks the wrapper of the real
``subprocess``. (tests/contract/test_children.py and tests/test_processes.py run
measured children end to end.)
"""

from __future__ import annotations

import multiprocessing.popen_fork
import multiprocessing.util
import os
import subprocess
import sys
import sysconfig
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pathprof import messages
from pathprof.measure.children import (
    STARTUP_LINE,
    VARIABLE,
    ChildMeasurement,
    _describe,
)

TOKEN = "0123456789ab"
#: a pid no process has: above Linux's largest pid_max (2**22) and macOS's (99998)
DEAD_PID = 99_999_999


def _settings(tmp_path: Path) -> Any:
    return {"data_file": str(tmp_path / "run.pathprof"), "token": TOKEN,
            "source": ["src"], "include": [], "omit": ["*/tests/*"], "default_dirs": [],
            "mode": "path", "metric": None, "cache": True, "cache_dir": ["/c", False],
            "stop_counting": "never", "conditions": False}


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """site-packages, as the module finds it, is an empty temporary directory; the
    variable is not set (and is unset again after the test); no message said yet."""
    directory = tmp_path / "site-packages"
    directory.mkdir()
    real = sysconfig.get_paths

    def get_paths(*args: Any, **kwargs: Any) -> dict[str, str]:
        return {**real(*args, **kwargs), "purelib": str(directory)}

    monkeypatch.setattr(sysconfig, "get_paths", get_paths)
    monkeypatch.setenv(VARIABLE, "set before")  # records the original state ...
    monkeypatch.delenv(VARIABLE)  # ... so that anything set in the test is undone
    monkeypatch.setattr(messages, "_said", set())
    return directory


@pytest.fixture
def popen_fork(monkeypatch: pytest.MonkeyPatch) -> None:
    """What ``start()`` patches in ``multiprocessing.popen_fork`` (once per process,
    for good) is put back after the test."""
    popen = multiprocessing.popen_fork.Popen
    monkeypatch.setattr(popen, "wait", popen.wait)
    monkeypatch.setattr(popen, "terminate", popen.terminate)


@pytest.fixture
def starters(monkeypatch: pytest.MonkeyPatch, popen_fork: None) -> dict[str, list[Any]]:
    """What ``start()`` wraps, replaced by recorders (put back after the test): the
    calls they got."""
    calls: dict[str, list[Any]] = {"execute_child": [], "spawnv": []}

    def execute_child(popen: object, args: object, executable: object, preexec_fn: object,
                      close_fds: object, pass_fds: object, cwd: object, env: object,
                      *rest: object, **kwargs: object) -> None:
        calls["execute_child"].append((args, env, rest, kwargs))

    def spawnv_passfds(path: bytes, args: object, passfds: object) -> int:
        calls["spawnv"].append((path, args, passfds))
        return 4242

    monkeypatch.setattr(subprocess.Popen, "_execute_child", execute_child)
    monkeypatch.setattr(multiprocessing.util, "spawnv_passfds", spawnv_passfds)
    return calls


def _measurement(tmp_path: Path) -> ChildMeasurement:
    return ChildMeasurement(_settings(tmp_path))


# -- what a measurement is before it starts ------------------------------------------


def test_the_settings_travel_as_compact_json(site: Path) -> None:
    settings: Any = {"data_file": "d.pathprof", "token": "ab", "metric": None,
                     "source": ["s", "t"]}
    assert ChildMeasurement(settings).value == (
        '{"data_file":"d.pathprof","token":"ab","metric":null,"source":["s","t"]}')


def test_the_pth_file_is_named_by_this_process_and_the_runs_token_in_site_packages(
        site: Path, tmp_path: Path) -> None:
    measurement = _measurement(tmp_path)
    assert measurement.directory == str(site)
    assert measurement.pth == str(site / f"pathprof-children-{os.getpid()}-{TOKEN}.pth")
    assert list(site.iterdir()) == []  # nothing is written before a child starts


def test_the_startup_line_is_one_import_line_as_a_pth_file_runs_it() -> None:
    # site.py executes the lines of a .pth file that start with "import"
    assert STARTUP_LINE.startswith("import ")
    assert STARTUP_LINE.endswith("\n")
    assert STARTUP_LINE.count("\n") == 1


@pytest.mark.parametrize("value", [None, ""])
def test_the_startup_line_imports_nothing_of_pathprof_where_the_variable_is_not_set(
        monkeypatch: pytest.MonkeyPatch, value: str | None) -> None:
    monkeypatch.delitem(sys.modules, "pathprof.measure.childstart", raising=False)
    if value is None:
        monkeypatch.delenv(VARIABLE, raising=False)
    else:
        monkeypatch.setenv(VARIABLE, value)
    exec(STARTUP_LINE, {})
    assert "pathprof.measure.childstart" not in sys.modules


def test_the_startup_line_starts_the_child_where_the_variable_is_set(
        monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[bool] = []
    childstart = types.ModuleType("pathprof.measure.childstart")
    childstart.start = lambda: started.append(True)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "pathprof.measure.childstart", childstart)
    monkeypatch.setenv(VARIABLE, '{"token":"ab"}')
    exec(STARTUP_LINE, {})
    assert started == [True]


# -- before each child ---------------------------------------------------------------


def test_the_first_child_writes_the_pth_file_and_later_ones_do_not(
        site: Path, tmp_path: Path) -> None:
    measurement = _measurement(tmp_path)
    measurement.before_child("subprocess ['python']")
    pth = Path(measurement.pth)
    assert pth.read_text(encoding="utf-8") == STARTUP_LINE
    assert [p.name for p in site.iterdir()] == [pth.name]  # no temporary file left
    pth.unlink()
    measurement.before_child("subprocess ['python']")
    assert not pth.exists()


def test_a_childs_own_env_gets_the_variable_added(site: Path, tmp_path: Path) -> None:
    measurement = _measurement(tmp_path)
    env = {"PATH": "/bin"}
    measurement.before_child("subprocess ['python']", env)
    assert env == {"PATH": "/bin", VARIABLE: measurement.value}


def test_a_childs_own_env_that_names_the_variable_keeps_its_value(
        site: Path, tmp_path: Path) -> None:
    measurement = _measurement(tmp_path)
    env = {VARIABLE: "the program's own"}
    measurement.before_child("subprocess ['python']", env)
    assert env == {VARIABLE: "the program's own"}


def test_a_child_without_env_of_its_own_changes_no_environment(
        site: Path, tmp_path: Path) -> None:
    measurement = _measurement(tmp_path)
    measurement.before_child("subprocess ['python']")
    assert VARIABLE not in os.environ  # (start() sets it, for every child to inherit)


def test_a_pth_file_that_cannot_be_written_is_said_once_naming_the_first_child(
        site: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    site.rmdir()  # site-packages is gone: the file cannot be written
    measurement = _measurement(tmp_path)
    measurement.before_child("subprocess ['python', 'a.py']")
    measurement.before_child("subprocess ['python', 'b.py']")
    assert capsys.readouterr().err == (
        "pathprof: child processes are not measured (subprocess ['python', 'a.py'] and any "
        f"after it): cannot write {site}{os.sep}pathprof-children-{os.getpid()}-{TOKEN}.pth "
        "(No such file or directory)\n")
    assert not site.exists()


# -- start and stop ------------------------------------------------------------------


def test_start_sets_the_variable_and_stop_removes_it_and_the_pth_file(
        site: Path, tmp_path: Path, starters: dict[str, list[Any]]) -> None:
    measurement = _measurement(tmp_path)
    measurement.start()
    try:
        assert os.environ[VARIABLE] == measurement.value
        measurement.before_child("subprocess ['python']")
        assert Path(measurement.pth).exists()
    finally:
        measurement.stop()
    assert VARIABLE not in os.environ
    assert list(site.iterdir()) == []
    measurement.stop()  # a second stop finds nothing to undo
    assert VARIABLE not in os.environ


def test_stop_leaves_a_variable_the_program_set_to_another_value(
        site: Path, tmp_path: Path, starters: dict[str, list[Any]]) -> None:
    measurement = _measurement(tmp_path)
    measurement.start()
    os.environ[VARIABLE] = "the program's own"
    measurement.stop()
    assert os.environ[VARIABLE] == "the program's own"


def test_start_removes_the_pth_files_of_dead_runs_only(
        site: Path, tmp_path: Path, starters: dict[str, list[Any]]) -> None:
    dead = site / f"pathprof-children-{DEAD_PID}-deadbeef.pth"
    # (a pid no process can have: os.kill raised OverflowError, and the run failed)
    impossible = site / f"pathprof-children-{2**64}-deadbeef.pth"
    alive = site / f"pathprof-children-{os.getpid()}-feedface.pth"
    not_hex = site / f"pathprof-children-{DEAD_PID}-nothex.pth"
    other = site / "distutils-precedence.pth"
    for path in (dead, impossible, alive, not_hex, other):
        path.write_text(STARTUP_LINE, encoding="utf-8")
    measurement = _measurement(tmp_path)
    measurement.start()
    measurement.stop()
    assert sorted(p.name for p in site.iterdir()) == sorted(
        p.name for p in (alive, not_hex, other))


def test_a_subprocess_child_gets_the_variable_in_a_copy_of_its_env(
        site: Path, tmp_path: Path, starters: dict[str, list[Any]]) -> None:
    original = subprocess.Popen._execute_child  # type: ignore[attr-defined]
    measurement = _measurement(tmp_path)
    measurement.start()
    try:
        assert subprocess.Popen._execute_child is not original  # type: ignore[attr-defined]
        env = {"PATH": "/bin"}
        subprocess.Popen._execute_child(  # type: ignore[attr-defined]
            object(), ["python", "a.py"], None, None, True, (), None, env, "rest", more=1)
        subprocess.Popen._execute_child(  # type: ignore[attr-defined]
            object(), "python b.py", None, None, True, (), None, None)
        (args, given, rest, kwargs), (_, inherited, _, _) = starters["execute_child"]
        assert (args, rest, kwargs) == (["python", "a.py"], ("rest",), {"more": 1})
        assert given == {"PATH": "/bin", VARIABLE: measurement.value}
        assert env == {"PATH": "/bin"}  # the program's own dict is left as it was
        assert inherited is None  # it inherits os.environ, which has the variable
        assert Path(measurement.pth).read_text(encoding="utf-8") == STARTUP_LINE
    finally:
        measurement.stop()
    assert subprocess.Popen._execute_child is original  # type: ignore[attr-defined]


def test_a_spawned_worker_is_announced_and_stop_restores_spawnv(
        site: Path, tmp_path: Path, starters: dict[str, list[Any]]) -> None:
    original = multiprocessing.util.spawnv_passfds
    measurement = _measurement(tmp_path)
    measurement.start()
    try:
        args = ["python", "-c", "from multiprocessing.spawn import spawn_main; "
                "spawn_main(tracker_fd=5, pipe_handle=7)", "--multiprocessing-fork"]
        assert multiprocessing.util.spawnv_passfds(b"python", args, [5, 7]) == 4242
        assert starters["spawnv"] == [(b"python", args, [5, 7])]
        assert Path(measurement.pth).exists()
    finally:
        measurement.stop()
    assert multiprocessing.util.spawnv_passfds is original
    (mark,) = [p.name for p in tmp_path.iterdir() if p.name.endswith(".running")]
    assert mark.startswith(f"run.pathprof.child-{TOKEN}.")
    assert mark.endswith(".4242.running")


# -- spawned -------------------------------------------------------------------------


def _running_marks(tmp_path: Path) -> list[str]:
    return [p.name for p in tmp_path.iterdir() if p.name.endswith(".running")]


def test_only_a_spawn_worker_of_a_measuring_run_is_announced(
        site: Path, tmp_path: Path) -> None:
    measurement = _measurement(tmp_path)
    worker = ["python", "-c", "from multiprocessing.spawn import spawn_main; spawn_main()"]
    measurement.spawned(101, worker)  # no .pth file yet: the child will not measure
    assert _running_marks(tmp_path) == []
    measurement.before_child("multiprocessing")
    helper = ["python", "-c", "from multiprocessing.forkserver import main; main(3)"]
    measurement.spawned(102, helper)  # the forkserver ends only with the parent
    measurement.spawned(103, "spawn_main")  # a string is no argument list
    measurement.spawned(104, b"spawn_main")
    assert _running_marks(tmp_path) == []
    measurement.spawned(105, worker)
    (mark,) = _running_marks(tmp_path)
    assert mark.startswith(f"run.pathprof.child-{TOKEN}.")
    assert mark.endswith(".105.running")


# -- the one real child --------------------------------------------------------------


def test_a_real_subprocess_with_an_env_of_its_own_sees_the_settings(
        site: Path, tmp_path: Path, popen_fork: None) -> None:
    # CPython's own _execute_child, wrapped: the wrapper takes what CPython passes
    measurement = _measurement(tmp_path)
    measurement.start()
    try:
        # -S: no .pth file of any site-packages runs in the child
        result = subprocess.run(
            [sys.executable, "-S", "-c",
             f"import os; print(os.environ.get({VARIABLE!r}), os.environ.get('MINE'))"],
            env={"MINE": "kept"}, capture_output=True, text=True, check=True)
    finally:
        measurement.stop()
    assert result.stdout == f"{measurement.value} kept\n"
    assert list(site.iterdir()) == []


# -- what a child runs, in a short line ----------------------------------------------


class _BadRepr:
    def __repr__(self) -> str:
        raise RuntimeError("no repr")


class _Exploding:
    def __iter__(self) -> Iterator[str]:
        raise RuntimeError("no iteration")


@pytest.mark.parametrize(("args", "expected"), [
    ("python a.py", "'python a.py'"),
    (b"ls -l", "b'ls -l'"),
    (Path("/usr/bin/python3"), "'/usr/bin/python3'"),
    (["python", "-c", "1"], "['python', '-c', '1']"),
    (("python", "-V"), "['python', '-V']"),
    ((word for word in ["a", "b"]), "['a', 'b']"),
    (42, "42"),
    ("x" * 100, "'" + "x" * 79),
    (["y" * 100], "['" + "y" * 78),
    (_BadRepr(), "<_BadRepr>"),
    ([_BadRepr()], "<list>"),
    (_Exploding(), "<_Exploding>"),
])
def test_a_child_is_described_in_at_most_80_characters_without_failing(
        args: object, expected: str) -> None:
    assert _describe(args) == expected
