"""pathprof refuses an interpreter running without the GIL, in one line, before
it instruments anything (its counters are exact only under the GIL)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from pathprof import Profiler, events
from pathprof.cli import ERR, main
from pathprof.exceptions import ConfigError
from pathprof.measure.interpreter import gil_disabled


@pytest.fixture
def no_gil(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "_is_gil_enabled", lambda: False, raising=False)


def test_this_interpreter_has_its_gil() -> None:
    # The suite runs on default builds; a free-threaded one would be refused.
    assert gil_disabled() is False


def test_profiler_refuses(no_gil: None, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="without the GIL"):
        Profiler(data_file=str(tmp_path / "data"))
    assert not (tmp_path / "data").exists()


def test_event_counter_refuses(no_gil: None) -> None:
    with pytest.raises(ConfigError, match="PYTHON_GIL=1"):
        events.EventCounter(source=["nothing"])


def test_run_says_so_in_one_line(no_gil: None, tmp_path: Path,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "script.py"
    script.write_text("print('ran')\n", encoding="utf-8")
    code = main(["run", "--data-file", str(tmp_path / "data"), str(script)])
    out, err = capsys.readouterr()
    assert code == ERR
    assert "ran" not in out
    assert err.count("\n") == 1
    assert err.startswith("pathprof: this Python runs without the GIL")
    assert not (tmp_path / "data").exists()


def test_a_gil_enabled_at_run_time_is_accepted(monkeypatch: pytest.MonkeyPatch,
                                               tmp_path: Path) -> None:
    # A free-threaded build started with PYTHON_GIL=1 has its GIL: exact again.
    monkeypatch.setattr(sys, "_is_gil_enabled", lambda: True, raising=False)
    Profiler(data_file=str(tmp_path / "data"))
