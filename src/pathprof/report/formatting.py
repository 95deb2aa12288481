"""How the reports write numbers and the notes under coverage figures: shared by
the text and HTML renderers, renders nothing itself."""

from __future__ import annotations

from pathprof.analysis.pathcoverage import CoverageTotals

__all__ = ["BASIS_NOTE", "FEASIBILITY_NOTE", "format_duration", "format_percent"]

FEASIBILITY_NOTE = ("Paths possible are the acyclic paths the control-flow graph allows; "
                    "some may be infeasible, so 100% may be out of reach.")


BASIS_NOTE = ("Basis: linearly independent paths run of those a function's paths span "
              "(McCabe's structured testing); see docs/commands/coverage.md.")


def format_percent(totals: CoverageTotals) -> str:
    """The percentage with one decimal, never rounded up to 100% or down to 0%."""
    percent = totals.percent
    if totals.run > 0 and percent < 0.1:
        return "<0.1%"
    if totals.run < totals.possible and percent > 99.9:
        return ">99.9%"
    return f"{percent:.1f}%"


def format_duration(ns: int) -> str:
    """A duration in nanoseconds, in the unit that keeps it short (ns, µs, ms, s)."""
    if ns < 1_000:
        return f"{ns} ns"
    if ns < 1_000_000:
        return f"{ns / 1e3:.1f} µs"
    if ns < 1_000_000_000:
        return f"{ns / 1e6:.1f} ms"
    return f"{ns / 1e9:,.2f} s"
