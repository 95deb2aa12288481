"""pathprof.measure.childstart: what runs at every interpreter's start-up. Without
``PATHPROF_CHILD`` nothing happens; started once, it starts no more; settings it cannot
use leave the child unmeasured, said in one line, never a traceback; a process is one
of ``multiprocessing``'s helpers as its command line says; and ``runpy.run_path`` (how
a spawned ``multiprocessing`` child runs its parent's main script) runs a selected
script instrumented, in a namespace as ``run_path`` makes one, and anything else as
before. No profiler starts in this process: the settings given are ones that fail
before it would, and ``runpy.run_path``, the environment and the module's flag are put
back by monkeypatch."""

from __future__ import annotations

import json
import runpy
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from pathprof import runtime
from pathprof.measure import childstart
from pathprof.measure.importhook import InstrumentOptions

SCRIPT = "def f(x):\n    if x:\n        return 1\n    return 2\n\nresult = f(__name__)\n"


@pytest.fixture(autouse=True)
def not_started(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(childstart, "_started", False)
    monkeypatch.setattr(runpy, "run_path", runpy.run_path)  # (put back after the test)


def test_without_the_variable_nothing_happens(monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("PATHPROF_CHILD", raising=False)
    childstart.start()
    monkeypatch.setenv("PATHPROF_CHILD", "")
    childstart.start()
    assert childstart._started is False
    assert capsys.readouterr() == ("", "")


@pytest.mark.parametrize(("value", "said"), [
    ("not json", "JSONDecodeError: Expecting value: line 1 column 1 (char 0)"),
    (json.dumps({"source": []}), "KeyError: 'data_file'"),
])
def test_settings_it_cannot_use_leave_the_child_unmeasured_in_one_line(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], value: str,
        said: str) -> None:
    monkeypatch.setenv("PATHPROF_CHILD", value)
    childstart.start()  # raises nothing: the child runs on
    assert childstart._started is True
    assert capsys.readouterr().err == f"pathprof: this child process is not measured ({said})\n"


def test_settings_of_the_wrong_shape_are_one_line_too(monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]
                                                      ) -> None:
    monkeypatch.setenv("PATHPROF_CHILD", json.dumps([1, 2]))
    childstart.start()
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("pathprof: this child process is not measured (")
    assert lines[0].endswith(")")


def test_a_child_starts_measuring_once(monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("PATHPROF_CHILD", "not json")
    childstart.start()
    childstart.start()
    assert capsys.readouterr().err.count("pathprof: this child process is not measured") == 1


@pytest.mark.parametrize(("argv", "helper"), [
    (["python", "-c", "from multiprocessing.forkserver import main; main(3, 4)"], True),
    (["python", "-c", "from multiprocessing.resource_tracker import main;main(5)"], True),
    (["python", "-c", "from multiprocessing.spawn import spawn_main; spawn_main()"], False),
    (["python", "app.py", "from multiprocessing"], False),
    ([], False),
])
def test_multiprocessings_helpers_are_told_by_their_command_line(
        monkeypatch: pytest.MonkeyPatch, argv: list[str], helper: bool) -> None:
    monkeypatch.setattr(sys, "orig_argv", argv)
    assert childstart._helper() is helper


def test_a_command_line_of_other_things_than_strings_is_no_helpers(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "orig_argv", [b"from multiprocessing.forkserver import main"])
    assert childstart._helper() is False


class _Selection:
    """Selects the paths it is given."""

    def __init__(self, *selected: Path) -> None:
        self.selected = {str(p) for p in selected}
        self.asked: list[tuple[str, str]] = []

    def wants(self, name: str, path: str) -> bool:
        self.asked.append((name, path))
        return path in self.selected


def _profiler(*selected: Path, options: object = None) -> SimpleNamespace:
    return SimpleNamespace(selection=_Selection(*selected),
                           options=options if options is not None
                           else InstrumentOptions(cache=False))


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch) -> list[runtime.ModuleState]:
    """The runtime's registered modules: a list of the test's own (put back after)."""
    modules = list(runtime._modules)
    monkeypatch.setattr(runtime, "_modules", modules)
    return modules


def _states_of(modules: list[runtime.ModuleState], path: Path) -> list[runtime.ModuleState]:
    return [state for state in modules if state.filename == str(path)]


def test_a_selected_main_script_is_run_instrumented(tmp_path: Path,
                                                    registry: list[runtime.ModuleState]
                                                    ) -> None:
    script = tmp_path / "main.py"
    script.write_text(SCRIPT)
    profiler = _profiler(script)
    childstart._instrument_mp_main(profiler)
    namespace = runpy.run_path(str(script), {"extra": 5}, "__mp_main__")
    assert profiler.selection.asked == [("__main__", str(script))]
    assert namespace["result"] == 1  # f("__mp_main__"): the program as written
    assert (namespace["__name__"], namespace["__file__"], namespace["extra"]) == (
        "__mp_main__", str(script), 5)
    assert (namespace["__spec__"], namespace["__loader__"], namespace["__cached__"]) == (
        None, None, None)
    (state,) = _states_of(registry, script)  # it registered: it ran instrumented
    assert [f.qualname for f in state.meta.functions] == ["f"]
    assert any(state.counters[0])  # f's call counted a path


def test_a_selected_script_run_without_a_name_runs_as_run_path_names_it(
        tmp_path: Path, registry: list[runtime.ModuleState]) -> None:
    script = tmp_path / "main.py"
    script.write_text(SCRIPT)
    childstart._instrument_mp_main(_profiler(script))
    namespace = runpy.run_path(str(script))
    assert namespace["__name__"] == "<run_path>"
    assert namespace["result"] == 1
    assert len(_states_of(registry, script)) == 1


def test_a_script_not_selected_runs_as_before(tmp_path: Path,
                                              registry: list[runtime.ModuleState]) -> None:
    script = tmp_path / "main.py"
    script.write_text(SCRIPT)
    childstart._instrument_mp_main(_profiler())
    namespace = runpy.run_path(str(script), run_name="__mp_main__")
    assert namespace["result"] == 1
    assert _states_of(registry, script) == []


def test_what_is_not_a_python_file_is_not_even_asked_about(
        tmp_path: Path, registry: list[runtime.ModuleState]) -> None:
    script = tmp_path / "main.pyw"
    script.write_text(SCRIPT)
    profiler = _profiler(script)
    childstart._instrument_mp_main(profiler)
    assert runpy.run_path(str(script))["result"] == 1
    assert profiler.selection.asked == []
    assert _states_of(registry, script) == []


def test_a_script_that_cannot_be_instrumented_runs_as_before(
        tmp_path: Path, registry: list[runtime.ModuleState]) -> None:
    script = tmp_path / "main.py"
    script.write_text(SCRIPT)
    childstart._instrument_mp_main(_profiler(script, options="not options"))
    namespace = runpy.run_path(str(script), run_name="__mp_main__")
    assert namespace["result"] == 1
    assert _states_of(registry, script) == []
