"""The reports of one measurement (``reporting.py``, re-exported by ``api``): one
``Reporting`` reads the data file and the configuration once, derives path coverage
once for every report kind it renders or exports, and lets go of them when released."""

from __future__ import annotations

import io
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import pathprof
from pathprof import api, config
from pathprof.data import store

from .test_library import MODULE


@pytest.fixture
def measured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    name = f"pp_reporting_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    with pathprof.Profiler(data_file="out.pathprof", default_dirs=[str(tmp_path)]):
        module = __import__(name)
        for i in range(3):
            module.parity(i)
    yield tmp_path / "out.pathprof"
    sys.modules.pop(name, None)


def _counting(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    reads = {"config": 0, "data": 0}
    real_config, real_read = config.read_config, store.read

    def read_config(*args: object, **kwargs: object) -> config.Config:
        reads["config"] += 1
        return real_config(*args, **kwargs)  # type: ignore[arg-type]

    def read(*args: object, **kwargs: object) -> object:
        reads["data"] += 1
        return real_read(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(config, "read_config", read_config)
    monkeypatch.setattr(store, "read", read)
    return reads


def test_every_report_kind_reads_once_and_derives_once(measured: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    reads = _counting(monkeypatch)
    reporting = api.Reporting(str(measured))
    first = reporting.coverage()
    table = io.StringIO()
    reporting.render("coverage", table)
    as_json = io.StringIO()
    reporting.render("coverage-json", as_json)
    lines = reporting.export("lcov", str(measured.parent / "coverage.lcov"))
    assert reporting.coverage() is first
    assert reads == {"config": 1, "data": 1}
    (function,) = first.functions()
    assert function.profile.qualname == "parity"
    assert (first.totals.run, first.totals.possible) == (2, 2)
    assert "parity" in table.getvalue()
    assert '"parity"' in as_json.getvalue()
    assert "SF:" in (measured.parent / "coverage.lcov").read_text()
    assert lines.files  # what was written is what it returns


def test_released_it_reads_and_derives_again_to_the_same_figures(
        measured: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reads = _counting(monkeypatch)
    reporting = api.Reporting(str(measured))
    first = reporting.coverage()
    reporting.release()
    again = reporting.coverage()
    assert again is not first
    assert reads == {"config": 1, "data": 2}  # the configuration is kept
    assert (again.totals.run, again.totals.possible) == (first.totals.run,
                                                          first.totals.possible)


def test_a_measurement_given_is_not_read_nor_let_go(measured: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    measurement = api.load(str(measured))
    reads = _counting(monkeypatch)
    reporting = api.Reporting(measurement=measurement)
    reporting.coverage()
    reporting.release()
    assert reporting.measurement is measurement
    assert reads["data"] == 0


def test_it_needs_a_data_file_or_a_measurement() -> None:
    with pytest.raises(TypeError, match="data file or a measurement"):
        api.Reporting()
