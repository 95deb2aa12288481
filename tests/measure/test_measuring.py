"""Unit tests of :mod:`pathprof.measure.measuring`: what every measuring class owns.
A small subclass of :class:`Measuring` stands for the profiler, the event counter and
OSP's sampling: ``with`` starts and stops it (and returns what ``start`` returns), it
decorates a function, the base class leaves ``start`` and ``stop`` to subclasses, the
default directories are the current one, a free-threaded interpreter without the GIL
is refused, and :meth:`Measuring.install_hook` names on stderr the selected modules
imported before it (at most five, then how many more). Every hook installed here is
uninstalled and every module added to ``sys.modules`` is removed."""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator
from pathlib import Path

import pytest

from pathprof import messages
from pathprof.exceptions import ConfigError
from pathprof.measure.importhook import ImportHook, InstrumentOptions
from pathprof.measure.measuring import Measuring
from pathprof.python.selection import Selection


class _Recording(Measuring):
    """A measuring class that notes its starts and stops."""

    def __init__(self, **keywords: object) -> None:
        super().__init__(InstrumentOptions(cache=False), **keywords)  # type: ignore[arg-type]
        self.events: list[str] = []

    def start(self) -> _Recording:
        self.events.append("start")
        return self

    def stop(self) -> None:
        self.events.append("stop")


@pytest.fixture
def fresh_messages(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every message may be said again (``warn`` says each once per process)."""
    monkeypatch.setattr(messages, "_said", set())


@pytest.fixture
def uninstalling() -> Iterator[list[Measuring]]:
    """Measuring objects whose hooks are uninstalled after the test."""
    made: list[Measuring] = []
    yield made
    for measuring in made:
        measuring.hook.uninstall()


def test_the_selection_and_hook_hold_what_was_given(tmp_path: Path) -> None:
    options = InstrumentOptions(mode="edge", cache=False)

    class Plain(Measuring):
        pass

    measuring = Plain(options, source=[str(tmp_path)], include=["*/a*.py"], omit=["*/ab.py"],
                      default_dirs=["/elsewhere"])
    assert measuring.options is options
    assert isinstance(measuring.selection, Selection)
    assert list(measuring.selection.source) == [str(tmp_path)]
    assert list(measuring.selection.include) == ["*/a*.py"]
    assert list(measuring.selection.omit) == ["*/ab.py"]
    assert list(measuring.selection.default_dirs) == ["/elsewhere"]
    assert isinstance(measuring.hook, ImportHook)
    assert measuring.hook.selection is measuring.selection
    assert measuring.hook.options is options


def test_no_default_dirs_measures_the_current_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    measuring = _Recording()
    assert list(measuring.selection.default_dirs) == [str(tmp_path)]
    assert measuring.selection.wants("here", str(tmp_path / "here.py"))
    assert not measuring.selection.wants("there", str(tmp_path.parent / "there.py"))


def test_empty_default_dirs_measure_nothing_by_default(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    measuring = _Recording(default_dirs=[])
    assert list(measuring.selection.default_dirs) == []
    assert not measuring.selection.wants("here", str(tmp_path / "here.py"))


def test_with_starts_and_stops_and_gives_what_start_returns() -> None:
    measuring = _Recording()
    with measuring as entered:
        assert entered is measuring
        assert measuring.events == ["start"]
    assert measuring.events == ["start", "stop"]


def test_with_stops_when_the_block_raises() -> None:
    measuring = _Recording()
    with pytest.raises(KeyError), measuring:
        raise KeyError("inside")
    assert measuring.events == ["start", "stop"]


def test_a_measuring_object_decorates_a_function() -> None:
    measuring = _Recording()

    @measuring
    def work(x: int) -> int:
        measuring.events.append(f"work {x}")
        return x * 2

    assert work(21) == 42
    assert measuring.events == ["start", "work 21", "stop"]
    assert work(1) == 2  # each call is measured anew
    assert measuring.events[3:] == ["start", "work 1", "stop"]


def test_start_and_stop_are_left_to_subclasses() -> None:
    class Bare(Measuring):
        pass

    bare = Bare(InstrumentOptions(cache=False))
    with pytest.raises(NotImplementedError):
        bare.start()
    with pytest.raises(NotImplementedError):
        bare.stop()
    with pytest.raises(NotImplementedError), bare:
        pass


def test_a_free_threaded_interpreter_without_the_gil_is_refused(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "_is_gil_enabled", lambda: False, raising=False)
    with pytest.raises(ConfigError, match="without the GIL"):
        _Recording()
    monkeypatch.setattr(sys, "_is_gil_enabled", lambda: True, raising=False)
    assert _Recording().events == []  # with the GIL: made


def _fake_modules(monkeypatch: pytest.MonkeyPatch, directory: Path, names: list[str]) -> None:
    for name in names:
        module = types.ModuleType(name)
        module.__file__ = str(directory / f"{name}.py")
        monkeypatch.setitem(sys.modules, name, module)


def test_install_hook_installs_it_and_names_nothing_when_nothing_came_before(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], fresh_messages: None,
        uninstalling: list[Measuring]) -> None:
    measuring = _Recording(source=[str(tmp_path / "nothing_here")])
    uninstalling.append(measuring)
    measuring.install_hook("counting", "counted")
    assert measuring.hook in sys.meta_path
    assert sys.meta_path[0] is measuring.hook
    assert capsys.readouterr().err == ""
    measuring.hook.uninstall()
    assert measuring.hook not in sys.meta_path


def test_install_hook_names_the_selected_modules_imported_before(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        fresh_messages: None, uninstalling: list[Measuring]) -> None:
    _fake_modules(monkeypatch, tmp_path, ["pp_late_b", "pp_late_a"])
    measuring = _Recording(source=[str(tmp_path)])
    uninstalling.append(measuring)
    measuring.install_hook("sampling", "sampled")
    # sorted by name, as already_imported() gives them
    assert capsys.readouterr().err == (
        "pathprof: already imported before sampling started, so not sampled: "
        "pp_late_a, pp_late_b\n")


def test_install_hook_names_five_and_counts_the_others(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        fresh_messages: None, uninstalling: list[Measuring]) -> None:
    names = [f"pp_early_{i}" for i in range(8)]
    _fake_modules(monkeypatch, tmp_path, names)
    measuring = _Recording(source=[str(tmp_path)])
    uninstalling.append(measuring)
    measuring.install_hook("counting", "counted")
    assert capsys.readouterr().err == (
        "pathprof: already imported before counting started, so not counted: "
        "pp_early_0, pp_early_1, pp_early_2, pp_early_3, pp_early_4 and 3 more\n")


def test_install_hook_with_exactly_five_says_no_more(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        fresh_messages: None, uninstalling: list[Measuring]) -> None:
    names = [f"pp_five_{i}" for i in range(5)]
    _fake_modules(monkeypatch, tmp_path, names)
    measuring = _Recording(source=[str(tmp_path)])
    uninstalling.append(measuring)
    measuring.install_hook("counting", "counted")
    err = capsys.readouterr().err
    assert err.endswith("pp_five_0, pp_five_1, pp_five_2, pp_five_3, pp_five_4\n")
    assert "more" not in err


def test_install_hook_leaves_out_modules_the_selection_does_not_want(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        fresh_messages: None, uninstalling: list[Measuring]) -> None:
    wanted, other = tmp_path / "wanted", tmp_path / "other"
    wanted.mkdir()
    other.mkdir()
    _fake_modules(monkeypatch, wanted, ["pp_in_source"])
    _fake_modules(monkeypatch, other, ["pp_outside_source"])
    measuring = _Recording(source=[str(wanted)])
    uninstalling.append(measuring)
    measuring.install_hook("counting", "counted")
    err = capsys.readouterr().err
    assert "pp_in_source" in err
    assert "pp_outside_source" not in err
