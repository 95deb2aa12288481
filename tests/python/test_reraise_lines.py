"""pathprof.python.reraise_lines: the re-raise ending a ``finally`` keeps a line.

The location table is rewritten on code nobody here wrote (CPython's standard
library and its tests) and must read back exactly; the frame an exception left
through a ``finally`` whose last statement pathprof follows with a path count must
show a line, plain Python's on 3.11."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from pathprof.python.reraise_lines import encode_positions, locate_reraises

from ..test_run import pathprof_cli
from .test_lasti import _stdlib_codes, _walk


def _lines_by_unit(code) -> dict[int, int | None]:
    return {unit: line for start, end, line in code.co_lines()
            for unit in range(start, end, 2)}


def test_location_tables_read_back_exactly_and_plain_code_is_left_alone() -> None:
    modules = _stdlib_codes()
    assert len(modules) > 1000
    checked = 0
    for path, module in modules:
        for code in _walk(module):
            positions = list(code.co_positions())
            assert len(positions) == len(code.co_code) // 2
            again = code.replace(co_linetable=encode_positions(positions,
                                                               code.co_firstlineno))
            assert list(again.co_positions()) == positions, (path, code.co_qualname)
            assert _lines_by_unit(again) == _lines_by_unit(code), (path, code.co_qualname)
            checked += 1
        assert locate_reraises(module) is module, path
    assert checked > 50_000


PROGRAM = textwrap.dedent("""\
    class Boom(Exception):
        pass

    class Gate:
        def __init__(self, c):
            self.c = c
        def __enter__(self):
            return self
        def __exit__(self, kind, value, traceback):
            return kind is Boom and self.c()

    def f(c):
        try:
            if c():
                raise Boom()
        finally:
            while True:
                if not c():
                    break
                with Gate(c):
                    break

    for pattern in [(1, 0), (1, 1, 0), (1, 1, 1)]:
        answers = iter(pattern + (0,) * 5)
        try:
            f(lambda: next(answers))
        except Boom as err:
            tb = err.__traceback__
            while tb.tb_next:
                tb = tb.tb_next
            print(pattern, tb.tb_lineno, tb.tb_frame.f_lineno)
    """)


def test_a_frame_left_through_a_finally_shows_a_line(tmp_path: Path) -> None:
    """Before: ``f_lineno`` was None under pathprof. On 3.11 the line is plain
    Python's; from 3.12 plain Python copies the re-raise after each ``break``, taking
    that break's line, where pathprof's one re-raise takes the clause's loop line."""
    (tmp_path / "prog.py").write_text(PROGRAM)
    plain = subprocess.run([sys.executable, "prog.py"], cwd=tmp_path, capture_output=True,
                           text=True, check=True).stdout
    measured = pathprof_cli(tmp_path, "run", "--no-cache", "prog.py").stdout
    if sys.version_info < (3, 12):
        assert measured == plain
    rows = [line.split(") ")[1].split() for line in measured.splitlines()]
    assert len(rows) == 3
    for raised_at, frame_line in rows:
        assert raised_at == "15"
        assert 17 <= int(frame_line) <= 21  # a line of the finally clause, not None


_TWO_LOCALS = {"LOAD_FAST_LOAD_FAST", "STORE_FAST_LOAD_FAST", "STORE_FAST_STORE_FAST",
               "LOAD_FAST_BORROW_LOAD_FAST_BORROW"}


def test_own_instructions_are_read_from_the_raw_code_as_dis_reads_them() -> None:
    """Which instructions name one of pathprof's names, read from the raw code, is what
    :func:`dis.get_instructions` says of every code object of forty instrumented
    standard library modules (three builds each: plain paths, stop-counting's switches,
    conditions) -- name, global, attribute, local, cell and free variable reads, on
    every Python's own encoding of their arguments (3.13's instructions of two locals
    name both: their ``argval`` is a tuple)."""
    import dis
    import os

    from pathprof.python.instrument import instrument_source
    from pathprof.python.reraise_lines import _own_units

    root = Path(os.__file__).parent
    files = sorted(root.glob("*.py"))[:40]
    checked = owned = 0
    for path in files:
        for options in ({}, {"switches": True}, {"switches": True, "conditions": True}):
            try:
                module = instrument_source(path.read_bytes(), str(path), **options)
            except (SyntaxError, ValueError):
                continue
            for code in _walk(module.compile_unbound(str(path))):
                expected = {ins.offset // 2 for ins in dis.get_instructions(code)
                            if any(isinstance(value, str) and "@pp" in value for value
                                   in (ins.argval if type(ins.argval) is tuple
                                       and ins.opname in _TWO_LOCALS else (ins.argval,)))}
                assert _own_units(code) == expected, (path, code.co_qualname)
                checked += 1
                owned += bool(expected)
    assert checked > 1000
    assert owned > 500
