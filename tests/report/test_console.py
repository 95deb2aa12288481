"""pathprof.report.console: the rich console text reports print on. Outside a terminal
and without ``COLUMNS`` it is :data:`WIDE` (200) columns wide and does not wrap lines
of text; with ``COLUMNS``, or on a terminal, rich sizes and wraps it; ``console_for``
passes a console through and wraps a stream in one."""

from __future__ import annotations

import io

import pytest
from rich.console import Console
from rich.table import Table

from pathprof.report.console import WIDE, console_for, report_console


class _Terminal(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


class _NoIsatty:
    """A stream with no ``isatty`` at all."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    def write(self, text: str) -> int:
        self.parts.append(text)
        return len(text)

    def flush(self) -> None:
        pass


@pytest.fixture(autouse=True)
def _no_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)


def test_a_log_is_two_hundred_columns_and_not_wrapped() -> None:
    console = report_console(io.StringIO())
    assert WIDE == 200
    assert console.width == 200
    assert console.soft_wrap is True


def test_a_long_line_of_text_stays_one_line_in_a_log() -> None:
    out = io.StringIO()
    sentence = " ".join(["word"] * 100)  # 499 characters, more than WIDE
    report_console(out).print(sentence)
    assert out.getvalue() == sentence + "\n"


def test_a_table_in_a_log_keeps_a_long_name_whole() -> None:
    out = io.StringIO()
    name = "module_" + "x" * 150 + ".py:12 some_function"  # 170 characters: fits in 200
    table = Table(box=None)
    table.add_column("Function", overflow="fold")
    table.add_column("Paths", justify="right")
    table.add_row(name, "3")
    report_console(out).print(table)
    assert any(name in line and line.rstrip().endswith("3")
               for line in out.getvalue().splitlines())
    assert "…" not in out.getvalue()


def test_columns_sets_the_width_and_lines_wrap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "72")
    out = io.StringIO()
    console = report_console(out)
    assert console.width == 72
    assert console.soft_wrap is False
    console.print(" ".join(["word"] * 30))  # 149 characters: wrapped at 72
    lines = out.getvalue().splitlines()
    assert len(lines) == 3
    assert all(len(line) <= 72 for line in lines)


def test_a_terminal_is_left_to_rich_and_wraps() -> None:
    console = report_console(_Terminal())
    assert console.soft_wrap is False


def test_a_closed_stream_counts_as_no_terminal() -> None:
    stream = io.StringIO()
    stream.close()  # isatty() now raises ValueError
    console = report_console(stream)
    assert (console.width, console.soft_wrap) == (WIDE, True)


def test_a_stream_without_isatty_counts_as_no_terminal() -> None:
    stream = _NoIsatty()
    console = report_console(stream)  # type: ignore[arg-type]
    assert (console.width, console.soft_wrap) == (WIDE, True)
    console.print("hello")
    assert "".join(stream.parts) == "hello\n"


def test_standard_error_is_the_target_when_asked(capsys: pytest.CaptureFixture[str]) -> None:
    report_console(stderr=True).print("to stderr")
    report_console().print("to stdout")
    captured = capsys.readouterr()
    assert captured.err == "to stderr\n"
    assert captured.out == "to stdout\n"


def test_a_console_is_passed_through_as_it_is() -> None:
    console = Console(file=io.StringIO(), width=50)
    assert console_for(console) is console


def test_a_stream_gets_a_report_console_printing_on_it() -> None:
    out = io.StringIO()
    console = console_for(out)
    assert (console.width, console.soft_wrap) == (WIDE, True)
    console.print("on the stream")
    assert out.getvalue() == "on the stream\n"


def test_none_gets_a_console_on_standard_output(capsys: pytest.CaptureFixture[str]) -> None:
    console_for(None).print("out")
    assert capsys.readouterr().out == "out\n"
