"""Unit tests of :mod:`pathprof.cli.after_run`: what ``hot`` and ``count`` need around
the program's run. The checks before it runs that a report's file or directory can be
written (leaving nothing behind, and one PathprofError saying why otherwise), and
:class:`AfterTheRun`: destinations from the directory pathprof started in, the import
system put back for the time of the report, the report on the stream pathprof
started with (or the other one, said once, when the program closed it), and a report
that cannot be written being one line. The streams are the test's own, swapped in
with monkeypatch before the object is made."""

from __future__ import annotations

import builtins
import io
import os
import sys
from pathlib import Path

import pytest

from pathprof.cli.after_run import (
    AfterTheRun,
    check_directory_destination,
    check_file_destination,
)
from pathprof.exceptions import PathprofError

# -- check_file_destination ---------------------------------------------------------------


def test_standard_output_needs_no_check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    check_file_destination(None, "the counts")
    check_file_destination("-", "the counts")
    assert list(tmp_path.iterdir()) == []


def test_a_new_file_that_can_be_made_leaves_nothing_behind(tmp_path: Path) -> None:
    check_file_destination(str(tmp_path / "counts.json"), "the counts")
    assert list(tmp_path.iterdir()) == []


def test_an_existing_file_is_left_as_it_was(tmp_path: Path) -> None:
    existing = tmp_path / "counts.json"
    existing.write_text("earlier report")
    check_file_destination(str(existing), "the counts")
    assert existing.read_text() == "earlier report"


def test_a_dangling_link_is_written_at_the_end(tmp_path: Path) -> None:
    link = tmp_path / "link.json"
    link.symlink_to(tmp_path / "nowhere" / "target.json")
    check_file_destination(str(link), "the counts")  # no error: not checked now
    assert link.is_symlink()


def test_a_pipe_is_not_opened(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    check_file_destination(str(fifo), "the estimates")  # would block if opened


def test_a_directory_cannot_take_a_report(tmp_path: Path) -> None:
    with pytest.raises(PathprofError) as refused:
        check_file_destination(str(tmp_path), "the counts")
    assert str(refused.value) == (f"cannot write the counts to {tmp_path}: Is a directory; "
                                  "the program was not run")


def test_a_file_in_a_missing_directory_cannot_be_written(tmp_path: Path) -> None:
    target = tmp_path / "missing" / "out.json"
    with pytest.raises(PathprofError) as refused:
        check_file_destination(str(target), "the estimates")
    assert str(refused.value) == (f"cannot write the estimates to {target}: No such file or "
                                  "directory; the program was not run")
    assert not target.parent.exists()


# -- check_directory_destination ----------------------------------------------------------


def test_an_existing_directory_is_left_as_it_was(tmp_path: Path) -> None:
    (tmp_path / "kept").write_text("x")
    check_directory_destination(str(tmp_path), "the report")
    assert [p.name for p in tmp_path.iterdir()] == ["kept"]


def test_a_directory_that_can_be_made_is_not_made(tmp_path: Path) -> None:
    check_directory_destination(str(tmp_path / "a" / "b" / "c"), "the report")
    assert list(tmp_path.iterdir()) == []


def test_a_directory_under_a_file_cannot_be_made(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(PathprofError) as refused:
        check_directory_destination(str(blocker / "html"), "the report")
    assert str(refused.value) == (f"cannot write the report to {blocker / 'html'}: Not a "
                                  "directory; the program was not run")
    with pytest.raises(PathprofError, match="Not a directory"):
        check_directory_destination(str(blocker), "the report")


def test_a_relative_directory_is_checked_from_the_current_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    check_directory_destination("html/report", "the report")
    assert list(tmp_path.iterdir()) == []


# -- AfterTheRun -----------------------------------------------------------------------------


def _streams(monkeypatch: pytest.MonkeyPatch) -> tuple[io.StringIO, io.StringIO]:
    """Standard output and error as pathprof finds them: the test's own (set in the
    test itself: pytest sets its capture's again as the test's call begins)."""
    out, err = io.StringIO(), io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)
    return out, err


def test_destinations_are_from_the_directory_pathprof_started_in(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _streams(monkeypatch)
    start, moved = tmp_path / "start", tmp_path / "moved"
    start.mkdir()
    moved.mkdir()
    monkeypatch.chdir(start)
    after = AfterTheRun()
    os.chdir(moved)  # what the program did
    assert after.path("out.json") == str(start / "out.json")
    assert after.path(str(tmp_path / "abs.json")) == str(tmp_path / "abs.json")
    after.write_file("out.json", "{}\n")
    assert (start / "out.json").read_text() == "{}\n"
    assert not (moved / "out.json").exists()


def test_the_import_system_is_pathprofs_while_reporting(
        monkeypatch: pytest.MonkeyPatch) -> None:
    _streams(monkeypatch)
    after = AfterTheRun()
    found_meta_path, found_import = list(sys.meta_path), builtins.__import__

    class Refusing:
        def find_spec(self, *args: object) -> None:
            raise ImportError("the program refuses every import")

    def refuse(*args: object, **kwargs: object) -> None:
        raise ImportError("refused")

    programs = [Refusing()]
    monkeypatch.setattr(sys, "meta_path", programs)
    monkeypatch.setattr(builtins, "__import__", refuse)
    with after.reporting():
        assert sys.meta_path == found_meta_path
        assert sys.meta_path is not after.imports[0]  # a copy: the block may change it
        assert builtins.__import__ is found_import
    assert sys.meta_path is programs  # the program's again
    assert builtins.__import__ is refuse


def test_the_import_system_is_the_programs_again_when_the_report_raises(
        monkeypatch: pytest.MonkeyPatch) -> None:
    _streams(monkeypatch)
    after = AfterTheRun()
    programs: list[object] = []
    monkeypatch.setattr(sys, "meta_path", programs)
    with pytest.raises(KeyError), after.reporting():
        raise KeyError("report")
    assert sys.meta_path is programs


def test_the_report_goes_to_standard_error_as_pathprof_found_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    out, err = _streams(monkeypatch)
    after = AfterTheRun()
    monkeypatch.setattr(sys, "stderr", io.StringIO())  # what the program put there
    after.write(lambda stream: stream.write("table\n"))
    after.write(lambda stream: stream.write("json\n"), to_stdout=True)
    assert err.getvalue() == "table\n"
    assert out.getvalue() == "json\n"


def test_a_closed_stream_sends_the_report_to_the_other_saying_so_once(
        capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    out, err = _streams(monkeypatch)
    after = AfterTheRun()
    err.close()  # the program closed standard error
    assert after.stream() is out
    after.write(lambda stream: stream.write("table\n"))
    assert out.getvalue() == "table\n"
    # said on the original standard error's descriptor (its stream is closed), once
    assert capfd.readouterr().err == ("pathprof: the program closed standard error: the "
                                      "report is on standard output\n")


def test_a_closed_standard_output_sends_json_to_standard_error(
        monkeypatch: pytest.MonkeyPatch) -> None:
    out, err = _streams(monkeypatch)
    after = AfterTheRun()
    out.close()
    after.write(lambda stream: stream.write("{}\n"), to_stdout=True)
    after.write(lambda stream: stream.write("[]\n"), to_stdout=True)
    assert err.getvalue() == ("pathprof: the program closed standard output: the report is "
                              "on standard error\n{}\n[]\n")


def test_both_closed_the_report_is_lost_and_said_on_the_descriptor(
        capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    out, err = io.StringIO(), io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)
    after = AfterTheRun()  # (standard error's descriptor: capfd's file)
    out.close()
    err.close()
    written: list[str] = []
    assert after.stream() is None
    after.write(lambda stream: written.append("report"))
    assert written == []
    assert capfd.readouterr().err == ("pathprof: the program closed standard output and "
                                      "standard error: the report is lost\n")


def test_a_report_that_fails_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    _out, err = _streams(monkeypatch)
    after = AfterTheRun()

    def failing(stream: object) -> None:
        raise OSError(28, "No space left on device")

    def refused(stream: object) -> None:
        raise ImportError("no module named rich.table")

    after.write(failing)
    after.write(refused)
    assert err.getvalue() == (
        "pathprof: cannot write the report: [Errno 28] No space left on device\n"
        "pathprof: cannot write the report: no module named rich.table\n")


def test_a_broken_pipe_ends_the_report_quietly(monkeypatch: pytest.MonkeyPatch) -> None:
    _out, err = _streams(monkeypatch)
    after = AfterTheRun()

    def reader_gone(stream: object) -> None:
        raise BrokenPipeError

    after.write(reader_gone)
    assert err.getvalue() == ""


def test_a_file_that_cannot_be_written_is_one_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _out, err = _streams(monkeypatch)
    after = AfterTheRun()
    target = tmp_path / "gone" / "out.json"
    after.write_file(str(target), "{}")
    assert err.getvalue() == (f"pathprof: cannot write {target}: No such file or "
                              "directory\n")


def test_a_message_is_told_once(monkeypatch: pytest.MonkeyPatch) -> None:
    _out, err = _streams(monkeypatch)
    after = AfterTheRun()
    after.tell("first")
    after.tell("second")
    after.tell("first")
    assert err.getvalue() == "pathprof: first\npathprof: second\n"


def test_a_closed_error_stream_is_told_on_its_descriptor_if_still_the_same_file(
        capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    after = AfterTheRun()
    err.close()
    after.tell("said on fd 2")
    assert capfd.readouterr().err == "pathprof: said on fd 2\n"
    after.stderr_file = (-1, -1)  # descriptor 2 is another file now: nothing is written
    after.tell("not said")
    assert capfd.readouterr().err == ""
