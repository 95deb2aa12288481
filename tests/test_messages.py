""":func:`pathprof.messages.warn`: what pathprof tells the user while a program runs is
one line ``pathprof: <message>`` on stderr, said once per process however often it is
asked for, never turned into an exception by warning filters, and silently dropped
where there is no usable stderr (closed, or None as under ``pythonw``)."""

from __future__ import annotations

import io
import sys
import warnings

import pytest

from pathprof import messages


@pytest.fixture(autouse=True)
def _nothing_said(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts with nothing said, and the process's record is put back."""
    monkeypatch.setattr(messages, "_said", set())


def test_a_message_is_one_line_on_stderr_led_by_pathprof(
        capsys: pytest.CaptureFixture[str]) -> None:
    messages.warn("the data file is locked")
    captured = capsys.readouterr()
    assert captured.err == "pathprof: the data file is locked\n"
    assert captured.out == ""


def test_a_message_is_said_once_per_process(capsys: pytest.CaptureFixture[str]) -> None:
    messages.warn("once")
    messages.warn("twice")
    messages.warn("once")
    messages.warn("twice")
    assert capsys.readouterr().err == "pathprof: once\npathprof: twice\n"


def test_warning_filters_that_raise_do_not_touch_a_message(
        capsys: pytest.CaptureFixture[str]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        messages.warn("not an exception")
    assert capsys.readouterr().err == "pathprof: not an exception\n"


@pytest.mark.parametrize("stderr", [None, "closed"], ids=["none", "closed"])
def test_no_usable_stderr_drops_the_message_without_an_error(
        monkeypatch: pytest.MonkeyPatch, stderr: str | None) -> None:
    if stderr is None:
        monkeypatch.setattr(sys, "stderr", None)
    else:
        closed = io.StringIO()
        closed.close()
        monkeypatch.setattr(sys, "stderr", closed)
    messages.warn("nobody hears this")  # raises nothing

