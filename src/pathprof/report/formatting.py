"""How the reports write numbers and the notes under coverage figures: shared by
the text and HTML renderers, renders nothing itself."""

from __future__ import annotations

from pathprof.analysis.pathcoverage import CoverageTotals, Excluded, PathCoverage
from pathprof.report.terminal import plural, printable_path

__all__ = [
    "BASIS_NOTE",
    "FEASIBILITY_NOTE",
    "excluded_text",
    "format_duration",
    "format_percent",
    "plural",
    "scope_sentences",
]

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


def excluded_text(excluded: Excluded) -> str:
    """What exclusions took, in words."""
    functions = ""
    if excluded.functions:
        reasons = ", ".join(f"{reason} {count:,}" for reason, count in
                            sorted(excluded.functions.items(), key=lambda r: (-r[1], r[0])))
        functions = f"{plural(excluded.function_count, 'function')} ({reasons}), "
    if excluded.partly:
        functions += f"code in {plural(excluded.partly, 'other function')}, "
    return (f"{functions}{plural(excluded.paths, 'path')} and "
            f"{plural(excluded.dimensions, 'basis dimension')}")


def scope_sentences(coverage: PathCoverage) -> list[str]:
    """What the figures leave out (exclusions) and take in (files never imported, and
    those that could not be read), and the coverage's notes, each a sentence: so that
    totals compared with another tool's can be told apart."""
    sentences = []
    if coverage.excluded:
        sentences.append(f"Excluded: {excluded_text(coverage.excluded)} "
                         "(--no-exclude counts them).")
    unimported = coverage.unimported
    if unimported:
        sentences.append(f"{plural(len(unimported), 'file')} under the source never "
                         "imported, counted at 0%.")
    for file, why in coverage.unparsed:
        sentences.append(f"{printable_path(file)} under the source {why}: left out.")
    return sentences + coverage.notes
