"""Condition coverage and MC/DC of measured decisions (issue 39), per decision,
function, file and in total.

A run with ``--conditions`` counts every evaluation vector of every decision
(:mod:`pathprof.python.conditioncode`; a branch test of one condition by its true
and false edges, from the path profile); from the vectors that ran,
:func:`pathprof.analysis.conditions.mcdc` says, for each condition, whether it was
seen true and false (*condition coverage*, counted as outcomes: two per condition,
as gcov's ``-fcondition-coverage`` counts them) and which pair of vectors shows its
independent effect on the outcome in each MC/DC form, or the vector still missing.

The headline is MC/DC in the masking form (RTCA DO-178C accepts it for short-circuit
code, and GCC 14 measures it); the unique-cause figure stands beside it.

Invariant: for every decision, ``unique <= masking <= conditions`` and ``outcomes
<= 2 * conditions``; figures of a function, file and total are sums over their
decisions. A decision inside excluded code (:mod:`pathprof.analysis.exclusions`)
counts nowhere; one too big to unfold counts in ``unmeasured`` only.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from pathprof.analysis.conditions import ConditionVerdict, Decision, Vector, mcdc
from pathprof.analysis.edgepredict import cfg_edge_counts
from pathprof.analysis.exclusions import ExcludedSource
from pathprof.contract import DecisionInfo, Piece
from pathprof.data.profile import FunctionProfile

if TYPE_CHECKING:
    from pathprof.analysis.pathcoverage import PathCoverage

__all__ = ["ConditionTotals", "DecisionCoverage", "condition_totals", "decision_coverage",
           "suggestion", "totals_of"]


@dataclass
class ConditionTotals:
    """Condition coverage and MC/DC figures, summed over decisions."""

    decisions: int = 0
    conditions: int = 0
    #: condition outcomes seen (a condition true, a condition false), of 2 per condition
    outcomes: int = 0
    #: conditions whose independent effect a pair of vectors shows, in each form
    masking: int = 0
    unique: int = 0
    #: decisions measured with too many ways to evaluate them to count each
    unmeasured: int = 0

    def add(self, other: ConditionTotals) -> None:
        self.decisions += other.decisions
        self.conditions += other.conditions
        self.outcomes += other.outcomes
        self.masking += other.masking
        self.unique += other.unique
        self.unmeasured += other.unmeasured

    @property
    def mcdc_percent(self) -> float:
        """MC/DC, masking form, in percent (100 with no condition)."""
        return 100.0 * self.masking / self.conditions if self.conditions else 100.0

    @property
    def unique_percent(self) -> float:
        return 100.0 * self.unique / self.conditions if self.conditions else 100.0

    @property
    def outcome_percent(self) -> float:
        return 100.0 * self.outcomes / (2 * self.conditions) if self.conditions else 100.0


@dataclass
class DecisionCoverage:
    """One decision's vectors and verdicts."""

    info: DecisionInfo
    #: vector number -> runs
    counts: dict[int, int] = field(default_factory=dict)
    #: condition -> evaluations it ended by raising
    raised: dict[int, int] = field(default_factory=dict)

    @cached_property
    def decision(self) -> Decision:
        return Decision.from_info(self.info)

    @property
    def measured(self) -> bool:
        return self.info.vectors > 0

    @cached_property
    def vectors(self) -> list[Vector]:
        """Every vector the decision allows, in number order."""
        return self.decision.vectors

    @cached_property
    def verdicts(self) -> list[ConditionVerdict]:
        return mcdc(self.decision, self.counts) if self.measured else []

    @property
    def evaluations(self) -> int:
        """Evaluations that reached an outcome."""
        return sum(self.counts.values())

    @cached_property
    def totals(self) -> ConditionTotals:
        n = len(self.info.conditions)
        if not self.measured:
            return ConditionTotals(decisions=1, unmeasured=1)
        return ConditionTotals(
            decisions=1, conditions=n,
            outcomes=sum(v.seen_true + v.seen_false for v in self.verdicts),
            masking=sum(v.masking is not None for v in self.verdicts),
            unique=sum(v.unique_cause is not None for v in self.verdicts))

    @property
    def complete(self) -> bool:
        """Every condition shown independent (masking) and seen both ways."""
        return self.measured and all(v.masking is not None and v.condition_covered
                                     for v in self.verdicts)


def suggestion(decision: Decision, vector: Vector) -> str:
    """The test a missing vector asks for, in the words of the source: ``a false, b
    true (so the decision is false)``; conditions it does not evaluate are left out."""
    parts = [f"{name} {'true' if value else 'false'}"
             for name, value in zip(decision.conditions, vector.values, strict=True)
             if value is not None]
    return f"{', '.join(parts)} (so the decision is {'true' if vector.outcome else 'false'})"


def _excluded(found: ExcludedSource, info: DecisionInfo) -> bool:
    span = info.span
    return bool(found.spans) and found.covers(
        Piece(span.line, span.col, span.end_line, span.end_col, "test", ""))


def decision_coverage(profile: FunctionProfile, found: ExcludedSource | None = None
                      ) -> list[DecisionCoverage]:
    """The measured decisions of ``profile``'s function, in source order, with their
    vectors' runs; none where conditions were not measured. Decisions in code that
    ``found`` excludes are left out."""
    decisions = profile.meta.decisions
    if not decisions:
        return []
    result = [DecisionCoverage(info) for info in decisions]
    if any(info.slot < 0 and info.vectors for info in decisions):
        _from_branches(profile, result)
    for (d, k), runs in profile.vectors.items():
        if not runs or not 0 <= d < len(result):
            continue
        if k >= 0:
            result[d].counts[k] = result[d].counts.get(k, 0) + runs
        else:
            result[d].raised[-1 - k] = result[d].raised.get(-1 - k, 0) + runs
    return [entry for entry in result if found is None or not _excluded(found, entry.info)]


def _from_branches(profile: FunctionProfile, result: list[DecisionCoverage]) -> None:
    """The vectors of the decisions of one condition that their branches count
    (:data:`pathprof.python.conditioncode.FROM_BRANCHES`): each outcome's vector ran
    as often as the test block's edge of that outcome (paths an exception cut short
    after it included), from the path profile."""
    meta = profile.meta
    edges = cfg_edge_counts(profile) if (profile.counts or profile.cuts) else {}
    tests: dict[tuple[int, int, int, int], int] = {}
    for b, block in enumerate(meta.blocks):
        if block.pieces and block.pieces[-1].role == "test":
            last = block.pieces[-1]
            tests[(last.line, last.col, last.end_line, last.end_col)] = b
    out: dict[int, dict[str, int]] = {}
    for eid, edge in enumerate(meta.edges):
        label = meta.fall_off.get(eid, edge.label)
        out.setdefault(edge.src, {})[label] = eid
    for entry in result:
        info = entry.info
        if info.slot >= 0 or not info.vectors:
            continue
        span = info.span
        test = tests.get((span.line, span.col, span.end_line, span.end_col))
        if test is None:
            continue
        for k, vector in enumerate(entry.vectors):
            taken = out.get(test, {}).get("true" if vector.outcome else "false")
            runs = edges.get(taken, 0) if taken is not None else 0
            if runs:
                entry.counts[k] = runs


def totals_of(decisions: Iterable[DecisionCoverage]) -> ConditionTotals:
    """The sum of the decisions' figures."""
    totals = ConditionTotals()
    for entry in decisions:
        totals.add(entry.totals)
    return totals


def condition_totals(coverage: PathCoverage) -> ConditionTotals:
    """The figures of every measured decision of a
    :class:`~pathprof.analysis.pathcoverage.PathCoverage`."""
    return totals_of(d for fn in coverage.functions() for d in fn.decisions)
