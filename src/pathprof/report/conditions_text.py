"""The condition coverage and MC/DC report for the terminal (``pathprof coverage
--conditions``, and the pytest plugin's terminal report when conditions were measured).

A table in the shape of the path coverage one: a row per function with decisions, a
subtotal per file, a total; columns: decisions, conditions, condition outcomes seen
(each condition true, each false: two per condition), MC/DC in the masking form (the
headline, said again under the table) and in the unique-cause form. With
``show_missing``, each decision short of MC/DC is listed with, for each condition,
the pair of runs that shows it, or the test still to write.
"""

from __future__ import annotations

from typing import IO

from rich.console import Console
from rich.table import Table
from rich.text import Text

from pathprof.analysis.conditioncoverage import (
    ConditionTotals,
    DecisionCoverage,
    condition_totals,
    suggestion,
    totals_of,
)
from pathprof.analysis.pathcoverage import FileCoverage, FunctionCoverage, PathCoverage
from pathprof.report.console import console_for
from pathprof.report.formatting import plural
from pathprof.report.terminal import printable_path

__all__ = [
    "MCDC_NOTE",
    "condition_totals",
    "conditions_headline",
    "render",
    "render_conditions",
]

#: What the two MC/DC columns mean, under the table.
MCDC_NOTE = ("MC/DC: a condition counts once two runs of its decision show it deciding the "
             "outcome alone. Masking (the headline, as DO-178C accepts for short-circuit "
             "code and GCC measures): other conditions may change where they cannot "
             "affect the outcome. Unique-cause: every other condition evaluated in both "
             "runs is held.")


def _percent(part: int, whole: int) -> str:
    if not whole:
        return "-"
    value = 100.0 * part / whole
    return "100%" if part == whole else f"{min(value, 99.9):.1f}%" if value >= 99.5 else (
        f"{value:.0f}%" if value >= 1 else f"{value:.1f}%")


def conditions_headline(totals: ConditionTotals) -> str:
    return (f"MC/DC {_percent(totals.masking, totals.conditions)}: {totals.masking:,} of "
            f"{totals.conditions:,} conditions shown to decide their outcome "
            f"(unique-cause {totals.unique:,}); condition outcomes "
            f"{totals.outcomes:,} of {2 * totals.conditions:,} "
            f"({_percent(totals.outcomes, 2 * totals.conditions)}), in "
            f"{plural(totals.decisions - totals.unmeasured, 'decision')}.")


def _row(table: Table, name: str, totals: ConditionTotals, style: str | None = None) -> None:
    table.add_row(Text(name), f"{totals.decisions:,}", f"{totals.conditions:,}",
                  f"{totals.outcomes:,}/{2 * totals.conditions:,}",
                  f"{totals.masking:,}/{totals.conditions:,}",
                  _percent(totals.masking, totals.conditions),
                  f"{totals.unique:,}/{totals.conditions:,}", style=style)


def render_conditions(coverage: PathCoverage, console: Console, *, show_missing: bool = False,
                      skip_covered: bool = False, per_file: bool = False) -> None:
    """Print the conditions table, a row per function with decisions and per file (with
    ``per_file``, per file only), and with ``show_missing`` what each decision short
    of MC/DC lacks."""
    with_decisions = [(file, [fn for fn in file.functions if fn.decisions])
                      for file in coverage.files]
    with_decisions = [(file, fns) for file, fns in with_decisions if fns]
    if not with_decisions:
        console.print("No decisions were measured with their conditions: measure with "
                      "pathprof run --conditions, or pytest --pathprof-conditions.")
        return
    table = Table(box=None, pad_edge=False, header_style="bold")
    table.add_column("File" if per_file else "Function", overflow="fold")
    for heading in ("Decisions", "Conditions", "Outcomes", "MC/DC", "MC/DC %",
                    "Unique-cause"):
        table.add_column(heading, justify="right")
    for file, fns in with_decisions:
        shown = [fn for fn in fns if not (skip_covered and _complete(fn))]
        if per_file:
            if shown:
                _row(table, printable_path(file.file),
                     totals_of(d for fn in fns for d in fn.decisions))
            continue
        for fn in shown:
            _row(table, f"{printable_path(file.file)}:{fn.profile.first_line} {fn.qualname}",
                 totals_of(fn.decisions))
        if len(fns) > 1 and shown:
            _row(table, f"{printable_path(file.file)} (file)",
                 totals_of(d for fn in fns for d in fn.decisions), style="bold")
        if shown:
            table.add_section()
    if per_file:
        table.add_section()
    totals = condition_totals(coverage)
    _row(table, "TOTAL", totals, style="bold")
    console.print(table)
    console.print(Text(conditions_headline(totals), style="bold"))
    if totals.unmeasured:
        console.print(Text(f"{totals.unmeasured:,} decision(s) have too many ways to be "
                           "evaluated to count each one, and were not measured.", style="dim"))
    console.print(Text(MCDC_NOTE, style="dim"))
    if show_missing:
        _render_missing(with_decisions, console)


def _complete(fn: FunctionCoverage) -> bool:
    return all(d.complete or not d.measured for d in fn.decisions)


def _render_missing(with_decisions: list[tuple[FileCoverage, list[FunctionCoverage]]],
                    console: Console) -> None:
    incomplete = [(fn, d) for _file, fns in with_decisions for fn in fns
                  for d in fn.decisions if d.measured and not d.complete]
    if not incomplete:
        return
    console.print()
    console.print(Text("Decisions short of MC/DC, each condition with the two runs that show "
                       "it decide the outcome, or the test to write:", style="bold"))
    for fn, decision in incomplete:
        render_decision(fn, decision, console)


def render_decision(fn: FunctionCoverage, entry: DecisionCoverage, console: Console) -> None:
    """One decision: where, its vectors that ran, and each condition's verdict."""
    info = entry.info
    head = Text()
    head.append(f"{printable_path(fn.profile.file)}:{info.span.line}", style="dim")
    head.append(f" {fn.qualname}  ")
    head.append(f"{info.kind} {info.text}", style="bold")
    totals = entry.totals
    head.append(f"  MC/DC {totals.masking} of {totals.conditions}; "
                f"{plural(entry.evaluations, 'evaluation')}, "
                f"{len(entry.counts)} of {len(entry.vectors)} ways")
    console.print(head)
    names = entry.decision.conditions
    for verdict in entry.verdicts:
        name = names[verdict.condition]
        if verdict.masking is not None:
            first, second = verdict.masking
            how = "" if verdict.unique_cause is not None else " (masking only)"
            console.print(Text(f"    ✓ {name}: {first.describe(names)}  vs  "
                               f"{second.describe(names)}{how}", style="dim"))
            continue
        raised = entry.raised.get(verdict.condition, 0)
        seen = ("never evaluated" if not (verdict.seen_true or verdict.seen_false or raised)
                else "evaluated only as it raised" if not (verdict.seen_true
                                                          or verdict.seen_false) else
                "seen true only" if not verdict.seen_false else
                "seen false only" if not verdict.seen_true else "seen both ways")
        if verdict.missing is None:
            console.print(Text(f"    ✗ {name}: {seen}; no pair of evaluations can show it "
                               "(it never decides the outcome alone)"))
            continue
        have, want = verdict.missing
        ran = have in {entry.vectors[k] for k in entry.counts}
        told = f"add a test where {suggestion(entry.decision, want)}"
        if ran:
            told += f", beside the run where {suggestion(entry.decision, have)}"
        else:
            told += f", and one where {suggestion(entry.decision, have)}"
        console.print(Text(f"    ✗ {name}: {seen}; {told}"))
    for condition, count in sorted(entry.raised.items()):
        console.print(Text(f"    ! {names[condition]} raised in "
                           f"{plural(count, 'evaluation')} (no outcome)", style="dim"))


def render(coverage: PathCoverage, out: IO[str] | Console, **options: bool) -> None:
    """The renderer (see :mod:`pathprof.report`): :func:`render_conditions` on ``out``."""
    render_conditions(coverage, console_for(out), **options)
