"""pathprof.report.lcov, LCOV tracefiles: one record per file with ``FN``/``FNDA`` per
function, the ``FNF``/``FNH`` totals, each function's path coverage as a ``# pathprof
paths:`` comment, ``BRDA`` per decision arm ("-" where the decision never ran, decisions
on one line numbered), ``BRF``/``BRH``, the MC/DC records of LCOV 2.x where conditions
were measured, ``DA`` per line and ``LF``/``LH``. Records are checked whole, against
coverage written by hand and against tiny programs measured in memory."""

from __future__ import annotations

import io
import types
from collections.abc import Callable
from typing import Any

import pytest

from pathprof import runtime
from pathprof.analysis.linecoverage import (
    Arm,
    Decision,
    FileLines,
    FunctionLines,
    LineCoverage,
    line_coverage,
)
from pathprof.data.measurement import Measurement
from pathprof.data.modules import Sources
from pathprof.data.profile import FunctionProfile, decision_vectors
from pathprof.python.instrument import instrument_source
from pathprof.report.lcov import render, write_lcov

SIGN = """\
def sign(x):
    if x < 0:
        return -1
    return 1
"""


def _measure(source: str, run: Callable[[Any], object], file: str, *,
             conditions: bool = False) -> Measurement:
    """``source`` instrumented in memory as ``file``, executed, and ``run(module)``'s
    paths (the runtime's registry is put back as it was)."""
    instrumented = instrument_source(source, file, module_key=f"{file}:test-lcov",
                                     conditions=conditions)
    module = types.ModuleType("lcov_subject")
    module.__file__ = file
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(runtime, "_modules", [])
        exec(instrumented.compile(file), module.__dict__)
        runtime.take_snapshot()
        run(module)
        ((_state, paths, cuts, raised, unattributed, _times, closed, vectors),) = (
            runtime.take_snapshot())
    meta = instrumented.metadata
    functions = []
    for i, info in enumerate(meta.functions):
        fn = FunctionProfile(file, info.qualname, info.code_line, meta.source_hash, info)
        fn.counts, fn.cuts = dict(paths[i]), dict(cuts[i])
        fn.raised, fn.unattributed, fn.closed = raised[i], unattributed[i], closed[i]
        if vectors:
            fn.vectors = decision_vectors(info, vectors[i])
        functions.append(fn)
    return Measurement(functions=functions, sources=Sources({(file, meta.source_hash): source}))


def _profile(source: str, qualname: str, counts: dict[int, int], file: str = "/p/m.py"
             ) -> FunctionProfile:
    """The profile of ``qualname`` in ``source`` (not run) with ``counts`` by hand."""
    meta = instrument_source(source, file).metadata
    info = next(f for f in meta.functions if f.qualname == qualname)
    fn = FunctionProfile(file, qualname, info.code_line, meta.source_hash, info)
    fn.counts = dict(counts)
    return fn


def _text(coverage: LineCoverage) -> str:
    out = io.StringIO()
    render(coverage, out)
    return out.getvalue()


def _sign_lines(calls: int = 3, counts: dict[int, int] | None = None) -> FunctionLines:
    """sign called 3 times: 1 negative (line 3), 2 not (line 4)."""
    profile = _profile(SIGN, "sign", {0: 1, 1: 2} if counts is None else counts)
    return FunctionLines(profile, calls, {2: 3, 3: 1, 4: 2},
                         [Decision(2, 2, 3, (Arm("true", 1), Arm("false", 2)))])


def test_a_file_record_in_full() -> None:
    fn = _sign_lines()
    coverage = LineCoverage([FileLines("/p/m.py", [fn], {2: 3, 3: 1, 4: 2})])
    assert _text(coverage) == (
        "TN:\nSF:/p/m.py\n"
        "FN:1,sign\nFNDA:3,sign\nFNF:1\nFNH:1\n"
        "# pathprof paths: 1,2,2,sign\n"   # 2 paths run of sign's 2
        "BRDA:2,0,0,1\nBRDA:2,0,1,2\nBRF:2\nBRH:2\n"
        "DA:2,3\nDA:3,1\nDA:4,2\nLF:3\nLH:3\nend_of_record\n")


def test_a_decision_that_never_ran_has_dashes_and_a_line_never_hit_zero() -> None:
    fn = FunctionLines(_profile(SIGN, "sign", {}), 0, {2: 0, 3: 0, 4: 0},
                       [Decision(2, 2, 0, (Arm("true", 0), Arm("false", 0)))])
    text = _text(LineCoverage([FileLines("/p/m.py", [fn], {2: 0, 3: 0, 4: 0})]))
    assert "FNDA:0,sign\nFNF:1\nFNH:0\n" in text
    assert "# pathprof paths: 1,0,2,sign\n" in text
    assert "BRDA:2,0,0,-\nBRDA:2,0,1,-\nBRF:2\nBRH:0\n" in text
    assert "DA:2,0\nDA:3,0\nDA:4,0\nLF:3\nLH:0\n" in text


def test_an_arm_not_taken_of_a_decision_that_ran_is_zero() -> None:
    fn = FunctionLines(_profile(SIGN, "sign", {1: 4}), 4, {2: 4, 3: 0, 4: 4},
                       [Decision(2, 2, 4, (Arm("true", 0), Arm("false", 4)))])
    text = _text(LineCoverage([FileLines("/p/m.py", [fn], {2: 4, 3: 0, 4: 4})]))
    assert "BRDA:2,0,0,0\nBRDA:2,0,1,4\nBRF:2\nBRH:1\n" in text
    assert "LF:3\nLH:2\n" in text


def test_decisions_on_one_line_are_numbered_in_order() -> None:
    fn = FunctionLines(_profile(SIGN, "sign", {}), 1, {2: 1},
                       [Decision(2, 5, 1, (Arm("next", 1), Arm("exhausted", 0))),
                        Decision(2, 7, 1, (Arm("true", 1), Arm("false", 0))),
                        Decision(4, 9, 0, (Arm("true", 0), Arm("false", 0)))])
    text = _text(LineCoverage([FileLines("/p/m.py", [fn], {2: 1})]))
    assert ("BRDA:2,0,0,1\nBRDA:2,0,1,0\nBRDA:2,1,0,1\nBRDA:2,1,1,0\n"
            "BRDA:4,0,0,-\nBRDA:4,0,1,-\nBRF:6\nBRH:2\n") in text


def test_two_functions_of_one_name_are_told_apart_by_their_line() -> None:
    source = "def f(x):\n    return x\n\n\ndef f(x):\n    return -x\n"
    meta = instrument_source(source, "/p/m.py").metadata
    first, second = (FunctionProfile("/p/m.py", info.qualname, info.code_line,
                                     meta.source_hash, info) for info in meta.functions)
    first.counts = {0: 1}
    text = _text(LineCoverage([FileLines("/p/m.py", [
        FunctionLines(first, 1, {2: 1}, []), FunctionLines(second, 0, {6: 0}, [])],
        {2: 1, 6: 0})]))
    assert "FN:1,f@1\nFN:5,f@5\nFNDA:1,f@1\nFNDA:0,f@5\nFNF:2\nFNH:1\n" in text
    assert "# pathprof paths: 1,1,1,f@1\n# pathprof paths: 5,0,1,f@5\n" in text


def test_one_record_per_file_in_the_order_given() -> None:
    a = FileLines("/p/a.py", [_sign_lines()], {2: 3, 3: 1, 4: 2})
    b = FileLines("/p/b.py", [], {})
    text = _text(LineCoverage([a, b]))
    assert text.count("end_of_record\n") == 2
    assert text.index("SF:/p/a.py") < text.index("SF:/p/b.py")
    assert text.endswith("TN:\nSF:/p/b.py\nFNF:0\nFNH:0\nBRF:0\nBRH:0\nLF:0\nLH:0\n"
                         "end_of_record\n")


def test_no_file_writes_nothing() -> None:
    assert _text(LineCoverage([])) == ""


def test_a_measured_program_gives_the_hand_counted_record() -> None:
    # sign(-1), sign(2), sign(3): the test 3 times, true once, false twice
    measured = _measure(SIGN, lambda m: [m.sign(-1), m.sign(2), m.sign(3)], "/p/sign.py")
    assert _text(line_coverage(measured)) == (
        "TN:\nSF:/p/sign.py\nFN:1,sign\nFNDA:3,sign\nFNF:1\nFNH:1\n"
        "# pathprof paths: 1,2,2,sign\n"
        "BRDA:2,0,0,1\nBRDA:2,0,1,2\nBRF:2\nBRH:2\n"
        "DA:2,3\nDA:3,1\nDA:4,2\nLF:3\nLH:3\nend_of_record\n")


BOTH = """\
def both(a, b):
    if a and (b or
              a in (1,
                    2)):
        return 1
    return 0
"""


def test_measured_conditions_have_two_mcdc_records_each_and_their_totals() -> None:
    """both(1, 1): (T, T, -) -> true; both(1, 0): (T, F, T) -> true; both(0, 0):
    (F, -, -) -> false. a is shown by (F,-,-) and (T,T,-) (masking); b would need
    (T, F, F) -> false beside (T, T, -), c (T, F, F) beside (T, F, T): neither ran."""
    measured = _measure(BOTH, lambda m: [m.both(1, 1), m.both(1, 0), m.both(0, 0)],
                        "/p/both.py", conditions=True)
    text = _text(line_coverage(measured))
    records = [line for line in text.splitlines() if line.startswith(("MCDC:", "MCF:", "MCH:"))]
    assert records == [
        "MCDC:2,3,t,1,0,a", "MCDC:2,3,f,1,0,a",
        "MCDC:2,3,t,0,1,b", "MCDC:2,3,f,0,1,b",
        # the condition's text on one line, its spaces and newlines made one space
        "MCDC:2,3,t,0,2,a in (1, 2)", "MCDC:2,3,f,0,2,a in (1, 2)",
        "MCF:6", "MCH:2",
    ]
    # after the branch totals, before the lines
    assert text.index("BRH:2\n") < text.index("MCDC:") < text.index("DA:2,3\n")


def test_without_measured_conditions_there_is_no_mcdc_record() -> None:
    measured = _measure(BOTH, lambda m: [m.both(1, 1)], "/p/both.py")
    text = _text(line_coverage(measured))
    assert "MCDC:" not in text
    assert "MCF:" not in text


def test_write_lcov_takes_the_same_coverage_and_stream() -> None:
    out = io.StringIO()
    write_lcov(LineCoverage([FileLines("/p/e.py", [], {})]), out)
    assert out.getvalue().startswith("TN:\nSF:/p/e.py\n")
