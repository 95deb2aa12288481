"""Compiling a measured module warns exactly as compiling it plainly does.

Python 3.14 warns (SyntaxWarning, PEP 765) about ``return``, ``break`` and
``continue`` in ``finally``: the program's own warnings must reach the user as
they would without pathprof (same category, message, file and line), and the
code pathprof inserts -- returns through temporaries, finally route flags -- must
add none. Before 3.14 neither side warns, and the test still checks pathprof adds
nothing.
"""

from __future__ import annotations

import sys
import warnings
from typing import Any

import pytest

from pathprof.measure.importhook import InstrumentOptions, compile_instrumented

SOURCE = '''
def swallow(fail):
    try:
        if fail:
            raise ValueError(fail)
        return "body"
    finally:
        return "finally"


def keep(values):
    for value in values:
        try:
            if value is None:
                break
            value = 1 // value
        finally:
            continue


def leave(values, path):
    while values:
        with open(path) as handle:
            try:
                return handle.read(values.pop())
            finally:
                break
    for value in values:
        try:
            return value
        finally:
            if value:
                return -value
'''

OPTIONS = [InstrumentOptions(), InstrumentOptions(metric="time"),
           InstrumentOptions(mode="edge"), InstrumentOptions(mode="events")]


def _warnings_of(compile_it: Any) -> list[tuple[str, str, str, int]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compile_it()
    return [(w.category.__name__, str(w.message), w.filename, w.lineno) for w in caught]


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: f"{o.mode}-{o.metric}")
def test_instrumented_compile_warns_as_plain_compile(options: InstrumentOptions) -> None:
    plain = _warnings_of(lambda: compile(SOURCE, "finally_flow.py", "exec", dont_inherit=True))
    measured = _warnings_of(lambda: compile_instrumented(SOURCE.encode(), "finally_flow.py",
                                                         options))
    assert measured == plain
    if sys.version_info >= (3, 14):
        # return at 8; continue at 18; break at 27; return at 33
        assert [(kind, line) for kind, _message, _file, line in plain] == [
            ("SyntaxWarning", 8), ("SyntaxWarning", 18), ("SyntaxWarning", 27),
            ("SyntaxWarning", 33)]
    else:
        assert plain == []
