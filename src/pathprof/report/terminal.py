"""Text from the measured program, made safe to print on a terminal.

Source lines and file names come from the program: a control character in them
(an escape sequence in a string literal, say) must not reach the terminal raw,
where it could clear the screen or move the cursor. Each is shown as Python
writes it in a string literal (``\\x1b``); tabs stay.
"""

from __future__ import annotations

import os
import re

__all__ = ["plural", "printable", "printable_path"]

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """``text`` with every control character but tab and newline escaped."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def plural(count: int, word: str) -> str:
    """``1 path``, ``2 paths``, ``1,000 paths``: a count and its noun, in the number the
    count asks for."""
    return f"{count:,} {word}{'' if count == 1 else 's'}"


def printable_path(file: str) -> str:
    """A file name as the text reports show it: relative to the current directory,
    control characters escaped."""
    return printable(os.path.relpath(file))
