"""pathprof.report.terminal: text from the measured program made safe for a terminal
(``printable`` escapes every control character but tab and newline as Python writes it,
``\\x1b``), file names shown relative to the current directory, and ``plural``'s count
and noun."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pathprof.report.terminal import plural, printable, printable_path


def test_an_escape_sequence_is_shown_as_python_writes_it() -> None:
    # ESC [ 2 J clears the screen: its ESC (0x1b) must not reach the terminal raw
    assert printable("\x1b[2Jgone") == "\\x1b[2Jgone"


def test_tab_and_newline_stay_as_they_are() -> None:
    assert printable("a\tb\nc") == "a\tb\nc"


@pytest.mark.parametrize(("raw", "shown"), [
    ("\x00", "\\x00"), ("\x08", "\\x08"), ("\x0b", "\\x0b"), ("\x0c", "\\x0c"),
    ("\r", "\\x0d"), ("\x1f", "\\x1f"), ("\x7f", "\\x7f"), ("\x80", "\\x80"),
    ("\x9b", "\\x9b"), ("\x9f", "\\x9f"),
])
def test_every_other_control_character_is_escaped(raw: str, shown: str) -> None:
    assert printable(f"<{raw}>") == f"<{shown}>"


def test_printable_characters_beyond_ascii_are_kept() -> None:
    # U+00A0 (no-break space) is the first character after the C1 controls
    assert printable("é\xa0ü → ∑") == "é\xa0ü → ∑"


@settings(max_examples=50, deadline=None)
@given(st.text())
def test_no_control_character_but_tab_and_newline_is_left(text: str) -> None:
    shown = printable(text)
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", shown)
    # each escaped character takes the four characters of \xNN: nothing else changes
    controls = sum(1 for c in text if (ord(c) < 32 and c not in "\t\n") or 127 <= ord(c) <= 159)
    assert len(shown) == len(text) + 3 * controls


@pytest.mark.parametrize(("count", "text"), [
    (0, "0 paths"), (1, "1 path"), (2, "2 paths"), (1000, "1,000 paths"),
    (1234567, "1,234,567 paths"), (-1, "-1 paths"),
])
def test_plural_puts_the_noun_in_the_number_the_count_asks_for(count: int, text: str) -> None:
    assert plural(count, "path") == text


def test_a_file_is_shown_relative_to_the_current_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "here").mkdir()
    monkeypatch.chdir(tmp_path / "here")
    assert printable_path(str(tmp_path / "here" / "pkg" / "mod.py")) == "pkg/mod.py"
    assert printable_path(str(tmp_path / "other.py")) == "../other.py"


def test_a_file_name_with_a_control_character_is_escaped(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert printable_path(str(tmp_path / "bad\x1bname.py")) == "bad\\x1bname.py"
