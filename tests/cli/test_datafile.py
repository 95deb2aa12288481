"""Unit tests of :mod:`pathprof.cli.datafile`: the ``combine`` and ``erase`` commands,
called in-process through :func:`pathprof.cli.main`. Data files are written directly
(:func:`pathprof.data.store.write`, one function of a small module with counts chosen
here), so the tests check what the commands add, remove, print and exit with:
combining named files or those found beside the data file, the one-line summary
(singular and plural), nothing to combine as an error, a function measured from two
versions of its source named, a missing file named; erasing the data file and its
companions while leaving a file that is not a data file alone."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from pathprof.cli import ERR, OK, main
from pathprof.data import store
from pathprof.data.measurement import RunInfo
from pathprof.data.profile import FunctionProfile
from pathprof.python.instrument import instrument_source

SOURCE = textwrap.dedent('''\
    def f(x):
        if x:
            return 1
        return 2
''')


def _write(path: Path, counts: dict[int, int], source: str = SOURCE) -> None:
    """A data file of one run that measured ``f`` of ``app.py`` beside it."""
    file = str(path.parent / "app.py")
    info = instrument_source(source, file).metadata
    meta = info.functions[0]
    fn = FunctionProfile(file, meta.qualname, meta.code_line, info.source_hash, meta)
    fn.counts = dict(counts)
    run = RunInfo(0.0, ["app.py"], "3.11.0", "path", None, 1, "host")
    store.write(str(path), run, [fn], {(file, info.source_hash): source})


def _counts(path: Path) -> dict[str, dict[object, int]]:
    return {fn.qualname: fn.counts for fn in store.read(str(path)).functions}


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The command's working directory, with no configuration."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PATHPROF_CACHE_DIR", raising=False)
    return tmp_path


def test_combine_adds_the_named_files_and_removes_them(
        here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write(here / "a.db", {0: 1})
    _write(here / "b.db", {0: 2, 1: 5})
    assert main(["combine", "--data-file", "all.db", "a.db", "b.db"]) == OK
    assert capsys.readouterr() == ("combined 2 data files into all.db\n", "")
    assert _counts(here / "all.db") == {"f": {0: 3, 1: 5}}
    assert not (here / "a.db").exists()
    assert not (here / "b.db").exists()


def test_combine_without_files_takes_those_beside_the_data_file(
        here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write(here / ".pathprof", {1: 1})
    _write(here / ".pathprof.mine", {1: 2})
    _write(here / ".pathprof.saved-45-deadbeef", {0: 4})
    (here / ".pathprof.mine.lock").write_text("a lock, not a data file")
    assert main(["combine"]) == OK
    assert capsys.readouterr().out == "combined 2 data files into .pathprof\n"
    assert _counts(here / ".pathprof") == {"f": {0: 4, 1: 3}}
    assert sorted(p.name for p in here.iterdir() if p.name.startswith(".pathprof")) == [
        ".pathprof", ".pathprof.mine.lock"]


def test_one_file_combined_is_said_in_the_singular(
        here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write(here / "one.db", {0: 1})
    assert main(["combine", "one.db"]) == OK
    assert capsys.readouterr().out == "combined 1 data file into .pathprof\n"
    assert _counts(here / ".pathprof") == {"f": {0: 1}}


def test_nothing_to_combine_is_an_error(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["combine", "--data-file", "d.db"]) == ERR
    assert capsys.readouterr() == ("", "pathprof: no data files to combine beside d.db\n")
    assert not (here / "d.db").exists()


def test_a_named_file_that_is_missing_is_an_error(
        here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write(here / "a.db", {0: 1})
    assert main(["combine", "a.db", "missing.db"]) == ERR
    err = capsys.readouterr().err
    assert err.startswith("pathprof: ")
    assert "missing.db" in err


def test_a_function_measured_from_two_versions_of_its_source_is_named(
        here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write(here / "old.db", {0: 1})
    _write(here / "new.db", {0: 1}, SOURCE.replace("return 2", "return 3"))
    assert main(["combine", "old.db", "new.db"]) == OK
    out, err = capsys.readouterr()
    assert out == "combined 2 data files into .pathprof\n"
    assert err == ("pathprof: app.py: f was measured from 2 versions of its source; their "
                   "paths are kept apart\n")
    assert len(store.read(str(here / ".pathprof")).functions) == 2


def test_erase_removes_the_data_file_and_the_files_beside_it(
        here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write(here / ".pathprof", {0: 1})
    _write(here / ".pathprof.mine", {0: 1})
    (here / ".pathprof.notes").write_text("mine, not pathprof's")
    assert main(["erase"]) == OK
    assert capsys.readouterr() == ("", "")
    assert sorted(p.name for p in here.iterdir()) == [".pathprof.notes"]
    assert main(["erase"]) == OK  # nothing to erase: not an error


def test_erase_takes_another_data_file(here: Path) -> None:
    _write(here / "other.db", {0: 1})
    _write(here / ".pathprof", {0: 1})
    assert main(["erase", "--data-file", "other.db"]) == OK
    assert not (here / "other.db").exists()
    assert (here / ".pathprof").exists()


def test_erase_refuses_a_file_that_is_not_a_data_file(
        here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (here / ".pathprof").write_text("my notes")
    assert main(["erase"]) == ERR
    assert "is not a pathprof data file" in capsys.readouterr().err
    assert (here / ".pathprof").read_text() == "my notes"


def test_erase_takes_no_files(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as usage:
        main(["erase", "a.db"])
    assert usage.value.code == 2
    assert "unrecognized arguments: a.db" in capsys.readouterr().err
