"""Unit tests of :mod:`pathprof.cli.options`, what the commands share: the exit
statuses, the argument types (a whole number, a positive one, a file name) and the
errors argparse shows for them, the option groups each command adds (data file,
report filters, selection, cache, the program and its arguments), the configuration
filling what the command line left unset (from a ``pyproject.toml`` in a temporary
directory), ``--fail-under``'s status and message, and ``quiet_stdout`` (on a file of
the test's own standing for standard output)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import pytest

from pathprof.cli.options import (
    CHECK_FAILED,
    ERR,
    OK,
    USAGE,
    apply_config,
    cache_options,
    data_file_option,
    fail_under_status,
    file_name,
    positive,
    program_arguments,
    quiet_stdout,
    report_filter_options,
    selection_options,
    whole_number,
)
from pathprof.config import Threshold


def test_the_exit_statuses_are_the_documented_ones() -> None:
    assert (OK, ERR, USAGE, CHECK_FAILED) == (0, 1, 2, 3)


# -- argument types ------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "value"), [("0", 0), ("7", 7), (" 12 ", 12), ("+3", 3)])
def test_a_whole_number_is_an_int_not_below_zero(text: str, value: int) -> None:
    assert whole_number(text) == value


@pytest.mark.parametrize(("text", "message"), [
    ("-1", "-1 is negative"), ("2.5", "'2.5' is not a whole number"),
    ("", "'' is not a whole number"), ("ten", "'ten' is not a whole number")])
def test_anything_else_is_not_a_whole_number(text: str, message: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError) as refused:
        whole_number(text)
    assert str(refused.value) == message


def test_positive_needs_at_least_one() -> None:
    assert positive("1") == 1
    assert positive("40") == 40
    with pytest.raises(argparse.ArgumentTypeError, match="must be at least 1"):
        positive("0")
    with pytest.raises(argparse.ArgumentTypeError, match="-2 is negative"):
        positive("-2")


def test_a_file_name_must_not_be_blank() -> None:
    assert file_name("out.json") == "out.json"
    assert file_name(" spaced ") == " spaced "  # kept as given
    for blank in ("", "   ", "\t"):
        with pytest.raises(argparse.ArgumentTypeError, match="an empty file name"):
            file_name(blank)


def test_argparse_shows_the_types_message(capsys: pytest.CaptureFixture[str]) -> None:
    parser = argparse.ArgumentParser(prog="tool")
    parser.add_argument("--top", type=whole_number)
    with pytest.raises(SystemExit) as usage:
        parser.parse_args(["--top", "-3"])
    assert usage.value.code == USAGE
    assert "argument --top: -3 is negative" in capsys.readouterr().err


# -- option groups -------------------------------------------------------------------------


def test_the_data_file_option_defaults_to_none_and_refuses_a_blank_name(
        capsys: pytest.CaptureFixture[str]) -> None:
    parser = argparse.ArgumentParser(prog="tool")
    data_file_option(parser)
    assert parser.parse_args([]).data_file is None
    assert parser.parse_args(["--data-file", "d.pathprof"]).data_file == "d.pathprof"
    with pytest.raises(SystemExit):
        parser.parse_args(["--data-file", " "])
    assert "an empty file name" in capsys.readouterr().err


def test_report_filters_repeat_into_their_own_names() -> None:
    parser = argparse.ArgumentParser()
    report_filter_options(parser)
    args = parser.parse_args(["--include", "a*", "--omit", "b*", "--include", "c*"])
    assert args.report_include == ["a*", "c*"]
    assert args.report_omit == ["b*"]
    empty = parser.parse_args([])
    assert (empty.report_include, empty.report_omit) == ([], [])


def test_selection_options_repeat_and_name_the_verb() -> None:
    parser = argparse.ArgumentParser()
    selection_options(parser, "sample")
    args = parser.parse_args(["--source", "pkg", "--source", "other", "--omit", "*/t*"])
    assert (args.source, args.include, args.omit) == (["pkg", "other"], [], ["*/t*"])
    assert "do not sample files matching" in parser.format_help()


def test_cache_options_with_and_without_no_cache() -> None:
    parser = argparse.ArgumentParser()
    cache_options(parser)
    args = parser.parse_args(["--cache-dir", "c", "--no-cache"])
    assert (args.cache_dir, args.no_cache) == ("c", True)
    assert parser.parse_args([]).no_cache is False
    only_dir = argparse.ArgumentParser()
    cache_options(only_dir, no_cache=False)
    assert not hasattr(only_dir.parse_args([]), "no_cache")
    with pytest.raises(SystemExit):
        only_dir.parse_args(["--no-cache"])


def test_program_arguments_take_everything_after_the_program() -> None:
    parser = argparse.ArgumentParser()
    program_arguments(parser)
    args = parser.parse_args(["-m", "pkg.tool", "--flag", "-m", "x"])
    assert (args.module, args.program, args.args) == (True, "pkg.tool", ["--flag", "-m", "x"])
    script = parser.parse_args(["--no-cache", "prog.py"])
    assert (script.module, script.program, script.args, script.no_cache) == (
        False, "prog.py", [], True)


# -- the configuration ---------------------------------------------------------------------


def _configured(directory: Path, monkeypatch: pytest.MonkeyPatch, text: str | None) -> None:
    if text is not None:
        (directory / "pyproject.toml").write_text(text, encoding="utf-8")
    monkeypatch.chdir(directory)
    monkeypatch.delenv("PATHPROF_CACHE_DIR", raising=False)


def test_the_configuration_fills_what_the_command_line_left_unset(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "src").mkdir()
    _configured(tmp_path, monkeypatch, '[tool.pathprof]\nsource = ["src", "pkg"]\n'
                'omit = ["*/gen/*"]\ndata_file = "out/data.pathprof"\nmode = "edge"\n'
                'stop_counting = "basis"\n'
                'conditions = true\nfail_under = 80\ncache_dir = "c"\n')
    args = argparse.Namespace(source=[], include=[], omit=[], data_file=None, mode=None,
                              metric=None, stop_counting=None, conditions=None,
                              fail_under=None, cache_dir=None)
    apply_config(args)
    # a directory is relative to the file's directory; a module name stays as given
    assert args.source == [str(tmp_path / "src"), "pkg"]
    assert args.include == []
    assert args.omit == ["*/gen/*"]
    assert args.data_file == str(tmp_path / "out" / "data.pathprof")
    assert args.mode == "edge"
    assert args.metric is None
    assert args.stop_counting == "basis"
    assert args.conditions is True
    assert args.fail_under == Threshold(80, "fail_under = 80 in pyproject.toml")
    assert args.cache_dir == str(tmp_path / "c")


def test_the_command_line_wins_over_the_configuration(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _configured(tmp_path, monkeypatch, '[tool.pathprof]\nsource = ["src"]\n'
                'data_file = "cfg.pathprof"\nmode = "edge"\nfail_under = 80\n'
                'fail_under_mcdc = 50\n')
    args = argparse.Namespace(source=["mine"], data_file="flag.pathprof", mode="path",
                              fail_under=90.5, fail_under_mcdc=None, cache_dir="flagged")
    apply_config(args)
    assert args.source == ["mine"]
    assert args.data_file == "flag.pathprof"
    assert args.mode == "path"
    assert args.fail_under == Threshold(90.5, "--fail-under 90.5")
    assert args.fail_under_mcdc == Threshold(50, "fail_under_mcdc = 50 in pyproject.toml")
    assert args.cache_dir == "flagged"


def test_without_a_configuration_the_defaults_apply(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    _configured(tmp_path, monkeypatch, None)
    args = argparse.Namespace(source=[], data_file=None, mode=None, metric=None,
                              stop_counting=None, conditions=None, fail_under=None,
                              cache_dir=None)
    apply_config(args)
    assert args.source == []
    assert args.data_file == ".pathprof"
    assert args.mode == "path"
    assert args.metric is None
    assert args.stop_counting == "never"
    assert args.conditions is False
    assert args.fail_under is None
    assert args.cache_dir is None


def test_the_cache_directory_variable_is_used_when_no_flag_is_given(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _configured(tmp_path, monkeypatch, '[tool.pathprof]\ncache_dir = "c"\n')
    monkeypatch.setenv("PATHPROF_CACHE_DIR", "/from/the/variable")
    args = argparse.Namespace(cache_dir=None)
    apply_config(args)
    assert args.cache_dir == "/from/the/variable"


def test_options_a_command_does_not_have_are_not_added(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    _configured(tmp_path, monkeypatch, '[tool.pathprof]\nsource = ["src"]\nmode = "edge"\n')
    args = argparse.Namespace(report_include=[])
    apply_config(args)
    assert vars(args) == {"report_include": []}


# -- --fail-under ----------------------------------------------------------------------------


def test_no_threshold_always_passes(capsys: pytest.CaptureFixture[str]) -> None:
    assert fail_under_status(0.0, None) == OK
    assert fail_under_status(0.0, None, measured=False) == OK
    assert capsys.readouterr().err == ""


def test_meeting_the_threshold_passes_and_missing_it_fails_naming_the_setting(
        capsys: pytest.CaptureFixture[str]) -> None:
    threshold = Threshold(80.0, "--fail-under 80")
    assert fail_under_status(80.0, threshold) == OK  # exactly at it
    assert fail_under_status(95.5, threshold) == OK
    assert capsys.readouterr().err == ""
    assert fail_under_status(79.5, threshold) == CHECK_FAILED
    assert capsys.readouterr().err == ("pathprof: total basis path coverage 79.50% is below "
                                       "--fail-under 80\n")


def test_nothing_measured_fails_any_threshold(capsys: pytest.CaptureFixture[str]) -> None:
    threshold = Threshold(0.0, "fail_under = 0 in pyproject.toml")
    assert fail_under_status(100.0, threshold, measured=False) == CHECK_FAILED
    assert capsys.readouterr().err == ("pathprof: nothing was measured: no total basis path "
                                       "coverage to meet fail_under = 0 in pyproject.toml\n")


def test_the_message_names_what_was_measured(capsys: pytest.CaptureFixture[str]) -> None:
    assert fail_under_status(12.5, Threshold(50, "--fail-under-mcdc 50"),
                             what="total MC/DC") == CHECK_FAILED
    assert capsys.readouterr().err == ("pathprof: total MC/DC 12.50% is below "
                                       "--fail-under-mcdc 50\n")


# -- quiet_stdout ----------------------------------------------------------------------------


def test_quiet_stdout_sends_standard_output_to_nowhere(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "stdout"
    with open(target, "w", encoding="utf-8") as stream:
        monkeypatch.setattr(sys, "stdout", stream)
        os.write(stream.fileno(), b"before\n")
        quiet_stdout()
        os.write(stream.fileno(), b"after\n")
    assert target.read_text() == "before\n"


def test_quiet_stdout_without_a_file_descriptor_does_nothing(
        monkeypatch: pytest.MonkeyPatch) -> None:
    class NoDescriptor:
        def fileno(self) -> int:
            raise ValueError("no descriptor")

    monkeypatch.setattr(sys, "stdout", NoDescriptor())
    quiet_stdout()  # does not raise
    monkeypatch.setattr(sys, "stdout", None)
    quiet_stdout()
