"""LCOV tracefiles (``pathprof lcov``, ``--pathprof-report=lcov``), for genhtml, CI
services and editors.

One record per file: ``FN``/``FNDA`` for each function (its calls), ``BRDA`` for
each arm of each decision (:mod:`pathprof.analysis.linecoverage`: "-" where the decision
never ran), ``DA`` for each line with a statement, and the ``FNF``/``FNH``,
``BRF``/``BRH``, ``LF``/``LH`` totals. LCOV has no record for paths: each
function's path coverage is a comment line, which LCOV's readers skip::

    # pathprof paths: <first line>,<paths run>,<paths possible>,<function>

Where conditions were measured (``--conditions``), each condition of each decision
has the two MC/DC records of LCOV 2.x's tracefile format (:manpage:`geninfo(1)`),
``MCDC:<line>,<group size>,<sense>,<taken>,<index>,<expression>``: the decision's
line, its number of conditions, ``t`` and ``f``, whether that outcome of the
condition was shown to decide the decision's (1 for both once a masking MC/DC pair
shows the condition, :mod:`pathprof.analysis.conditioncoverage`; else 0), the
condition's index from the left and its text; then ``MCF``/``MCH``, the records
found and taken.

Functions are named by their qualified name (with ``@<line>`` added where two
share one). Files are named by absolute path, as geninfo writes them.
"""

from __future__ import annotations

from collections import Counter
from typing import TextIO

from pathprof.analysis.conditioncoverage import decision_coverage
from pathprof.analysis.linecoverage import FileLines, LineCoverage

__all__ = ["render", "write_lcov"]


def _function_names(file: FileLines) -> list[str]:
    seen = Counter(fn.name for fn in file.functions)
    return [fn.name if seen[fn.name] == 1 else f"{fn.name}@{fn.first_line}"
            for fn in file.functions]


def write_lcov(coverage: LineCoverage, output: TextIO) -> None:
    for file in coverage.files:
        names = _function_names(file)
        output.write(f"TN:\nSF:{file.file}\n")
        for fn, name in zip(file.functions, names, strict=True):
            output.write(f"FN:{fn.first_line},{name}\n")
        for fn, name in zip(file.functions, names, strict=True):
            output.write(f"FNDA:{fn.calls},{name}\n")
        functions = file.function_rate
        output.write(f"FNF:{functions.possible}\nFNH:{functions.run}\n")
        for fn, name in zip(file.functions, names, strict=True):
            paths = fn.path_rate
            output.write(f"# pathprof paths: {fn.first_line},{paths.run},{paths.possible},"
                         f"{name}\n")
        numbers: Counter[int] = Counter()
        for decision in file.decisions:
            number = numbers[decision.line]
            numbers[decision.line] += 1
            for arm_number, arm in enumerate(decision.arms):
                taken = arm.count if decision.executed else "-"
                output.write(f"BRDA:{decision.line},{number},{arm_number},{taken}\n")
        branches = file.branch_rate
        output.write(f"BRF:{branches.possible}\nBRH:{branches.run}\n")
        _write_mcdc(file, output)
        for line, hits in file.lines.items():
            output.write(f"DA:{line},{hits}\n")
        lines = file.line_rate
        output.write(f"LF:{lines.possible}\nLH:{lines.run}\nend_of_record\n")


def _write_mcdc(file: FileLines, output: TextIO) -> None:
    """The MC/DC records of the file's measured decisions, and their totals (none at
    all where no decision was measured)."""
    decisions = [d for fn in file.functions for d in decision_coverage(fn.profile, fn.found)
                 if d.measured]
    if not decisions:
        return
    found = hit = 0
    for decision in sorted(decisions, key=lambda d: (d.info.span.line, d.info.span.col)):
        group = len(decision.info.conditions)
        for verdict, text in zip(decision.verdicts, decision.info.conditions, strict=True):
            taken = int(verdict.masking is not None)
            expression = " ".join(text.split())  # one line
            for sense in ("t", "f"):
                output.write(f"MCDC:{decision.info.span.line},{group},{sense},{taken},"
                             f"{verdict.condition},{expression}\n")
            found += 2
            hit += 2 * taken
    output.write(f"MCF:{found}\nMCH:{hit}\n")


def render(coverage: LineCoverage, out: TextIO, **options: object) -> None:
    """The renderer (see :mod:`pathprof.report`): :func:`write_lcov` on ``out``."""
    write_lcov(coverage, out, **options)
