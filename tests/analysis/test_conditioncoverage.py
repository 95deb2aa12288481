"""Tests for pathprof.analysis.conditioncoverage: condition coverage and MC/DC per
decision and summed -- a decision's runs per vector from the vector counters (or, for
a decision of one condition, from its branches' edges in the path profile), the
evaluations a condition ended by raising, the figures (outcomes seen, masking and
unique-cause independence), the percentages, the test a missing vector asks for, and
what exclusions leave out. The worked example is counted by hand in the comments; a
property test checks the invariant ``unique <= masking <= conditions``, ``outcomes <=
2 * conditions`` and that totals are sums."""

from __future__ import annotations

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pathprof.analysis.conditioncoverage import (
    ConditionTotals,
    DecisionCoverage,
    condition_totals,
    decision_coverage,
    suggestion,
    totals_of,
)
from pathprof.analysis.conditions import Decision
from pathprof.analysis.exclusions import ExcludedSource
from pathprof.analysis.pathcoverage import path_coverage
from pathprof.contract import DecisionInfo, Span
from pathprof.data.measurement import Measurement
from pathprof.data.profile import FunctionProfile, decode_paths
from pathprof.graph.shortcircuit import Tree, Vector, evaluation_vectors, tree_text
from pathprof.python.instrument import instrument_source

FILE = "/project/conditions.py"
SOURCE = textwrap.dedent('''\
    def f(a, b, c):
        if a and (b or c):
            return 1
        if a:
            return 2
        return 3
    ''')
# Blocks: 2 = the first test (line 2), 3 = `return 1`, 4 = `if a` (line 4),
# 5 = `return 2`, 6 = `return 3`. Paths: 0 = (2, 3), 1 = (2, 4, 5), 2 = (2, 4, 6).
#
# Decision 0, `a and (b or c)`, counted by its vector counters; its vectors, numbered
# false first: 0 = a F -> F; 1 = a T, b F, c F -> F; 2 = a T, b F, c T -> T;
# 3 = a T, b T -> T. Decision 1, `a`, one condition: counted by the branches of block
# 4 (vector 0 = a F -> F, vector 1 = a T -> T).
T, F, N = True, False, None


def profile(*, conditions: bool = True) -> FunctionProfile:
    module = instrument_source(SOURCE, FILE, conditions=conditions).metadata
    meta = module.functions[0]
    return FunctionProfile(FILE, meta.qualname, meta.code_line, module.source_hash, meta)


def measured() -> FunctionProfile:
    fn = profile()
    fn.counts = {0: 3, 1: 2, 2: 1}
    # vectors 0, 2 and 3 of decision 0 ran (1, 2 and 3 times); vector 1 ran 0 times
    # (not run); b ended 4 evaluations by raising; (5, 0) names no decision
    fn.vectors = {(0, 0): 1, (0, 2): 2, (0, 3): 3, (0, 1): 0, (0, -2): 4, (5, 0): 9}
    return fn


def test_the_contract_declares_the_decisions_the_comment_names() -> None:
    decisions = profile().meta.decisions
    assert [(d.text, d.conditions, d.tree, d.slot >= 0, d.vectors) for d in decisions] == [
        ("a and (b or c)", ("a", "b", "c"), "&(0,|(1,2))", True, 4),
        ("a", ("a",), "0", False, 2)]


def test_a_decisions_vectors_are_listed_in_number_order() -> None:
    first = decision_coverage(profile())[0]
    assert first.vectors == [Vector((F, N, N), False), Vector((T, F, F), False),
                             Vector((T, F, T), True), Vector((T, T, N), True)]
    assert first.decision == Decision("if", 2, "a and (b or c)", ("a", "b", "c"),
                                      ("and", (("leaf", 0), ("or", (("leaf", 1),
                                                                     ("leaf", 2))))))


def test_a_function_measured_without_conditions_has_no_decisions() -> None:
    fn = profile(conditions=False)
    fn.counts = {0: 1}
    assert decision_coverage(fn) == []


def test_vector_runs_come_from_the_counters_and_raises_are_kept_apart() -> None:
    first, second = decision_coverage(measured())
    assert first.counts == {0: 1, 2: 2, 3: 3}  # the zero and the stray key dropped
    assert first.raised == {1: 4}  # vector -1 - c: condition 1, b
    assert first.evaluations == 6
    assert first.measured
    # decision 1 from the branches of `if a`: path 1 (true, 2 runs), path 2 (false, 1)
    assert second.counts == {1: 2, 0: 1}
    assert second.raised == {}
    assert second.evaluations == 3


def test_a_path_cut_short_after_a_branch_counts_for_that_branch() -> None:
    fn = profile()
    # cut in `return 2` (block 5) after `if a` went true: the prefix (2, 4, 5)
    # continues with value-0 edges only, so its prefix value is path 1's number
    fn.cuts = {(5, 1): 5}
    (cut,) = decode_paths(fn.meta, {}, fn.cuts)
    assert cut.blocks == (2, 4, 5)
    assert decision_coverage(fn)[1].counts == {1: 5}


def test_the_figures_of_the_worked_example() -> None:
    first, second = decision_coverage(measured())
    # a: vectors 0 (a F -> F) and 3 (a T, b T -> T) ran, b and c unevaluated in 0: a
    # pair in both forms. b: true in 3, false in 2, both -> T: no pair. c: true in 2,
    # never false (vector 1 did not run): no pair
    assert [(v.seen_true, v.seen_false) for v in first.verdicts] == [
        (True, True), (True, True), (True, False)]
    assert [v.masking is not None for v in first.verdicts] == [True, False, False]
    assert [v.unique_cause is not None for v in first.verdicts] == [True, False, False]
    assert first.totals == ConditionTotals(decisions=1, conditions=3, outcomes=5,
                                           masking=1, unique=1)
    assert not first.complete
    # `a` alone: false once, true twice: shown and seen both ways
    assert second.totals == ConditionTotals(decisions=1, conditions=1, outcomes=2,
                                            masking=1, unique=1)
    assert second.complete


def test_totals_are_the_sums_of_the_decisions_figures() -> None:
    totals = totals_of(decision_coverage(measured()))
    assert totals == ConditionTotals(decisions=2, conditions=4, outcomes=7, masking=2,
                                     unique=2, unmeasured=0)
    assert totals.mcdc_percent == 50.0
    assert totals.unique_percent == 50.0
    assert totals.outcome_percent == 87.5  # 7 of 8
    assert totals_of([]) == ConditionTotals()


def test_no_condition_is_full_coverage() -> None:
    empty = ConditionTotals()
    assert (empty.mcdc_percent, empty.unique_percent, empty.outcome_percent) == (
        100.0, 100.0, 100.0)


def test_adding_totals_adds_every_figure() -> None:
    total = ConditionTotals(1, 2, 3, 1, 0, 0)
    total.add(ConditionTotals(2, 5, 6, 4, 3, 1))
    assert total == ConditionTotals(3, 7, 9, 5, 3, 1)


def test_a_decision_too_big_to_unfold_counts_as_unmeasured_only() -> None:
    info = DecisionInfo("if", Span(1, 3, 1, 4), "a and b", ("a", "b"),
                        (Span(1, 3, 1, 4), Span(1, 9, 1, 10)), "&(0,1)", 0, 0)
    entry = DecisionCoverage(info, counts={0: 3})
    assert not entry.measured
    assert entry.verdicts == []
    assert entry.totals == ConditionTotals(decisions=1, unmeasured=1)
    assert not entry.complete
    assert totals_of([entry]).mcdc_percent == 100.0  # no condition counted


def test_a_missing_vector_is_suggested_in_the_words_of_the_source() -> None:
    first = decision_coverage(measured())[0]
    decision = first.decision
    assert suggestion(decision, Vector((T, F, F), False)) == (
        "a true, b false, c false (so the decision is false)")
    # conditions it does not evaluate are left out
    assert suggestion(decision, Vector((F, N, N), False)) == (
        "a false (so the decision is false)")
    assert suggestion(decision, Vector((T, T, N), True)) == (
        "a true, b true (so the decision is true)")
    # c's missing pair asks for vector 1, the one that never ran
    missing = first.verdicts[2].missing
    assert missing is not None
    assert Vector((T, F, F), False) in missing


def test_a_decision_in_excluded_code_counts_nowhere() -> None:
    # the whole first `if` statement, lines 2-3, excluded
    found = ExcludedSource(spans=[Span(2, 4, 3, 16)])
    kept = decision_coverage(measured(), found)
    assert [entry.info.text for entry in kept] == ["a"]
    assert decision_coverage(measured(), ExcludedSource()) == decision_coverage(measured())


def test_condition_totals_sum_every_function_of_a_path_coverage() -> None:
    coverage = path_coverage(Measurement(functions=[measured()]))
    assert condition_totals(coverage) == ConditionTotals(decisions=2, conditions=4,
                                                         outcomes=7, masking=2, unique=2)
    assert condition_totals(path_coverage(Measurement())) == ConditionTotals()


# ---------------------------------------------------------------------------
# The invariant, on random decisions


@st.composite
def trees(draw: st.DrawFn) -> tuple[Tree, int]:
    count = 0

    def node(depth: int) -> Tree:
        nonlocal count
        kinds = ["leaf"] if depth >= 2 or count >= 4 else ["leaf", "not", "and", "or"]
        kind = draw(st.sampled_from(kinds))
        if kind == "leaf":
            count += 1
            return ("leaf", count - 1)
        if kind == "not":
            return ("not", node(depth + 1))
        return (kind, (node(depth + 1), node(depth + 1)))

    return node(0), count


def info_of(tree: Tree, conditions: int) -> DecisionInfo:
    names = tuple(f"c{i}" for i in range(conditions))
    spans = tuple(Span(1, i, 1, i + 1) for i in range(conditions))
    return DecisionInfo("if", Span(1, 0, 1, 9), "…", names, spans, tree_text(tree), 0,
                        len(evaluation_vectors(tree, conditions)))


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(trees(), st.lists(st.integers(0, 3), max_size=12)),
                min_size=1, max_size=3))
def test_figures_stay_in_their_bounds_and_totals_are_sums(
        drawn: list[tuple[tuple[Tree, int], list[int]]]) -> None:
    entries = []
    for (tree, conditions), runs in drawn:
        info = info_of(tree, conditions)
        vectors = evaluation_vectors(tree, conditions)
        counts = {k: r for k, r in enumerate(runs[: len(vectors)]) if r}
        entry = DecisionCoverage(info, counts=counts)
        totals = entry.totals
        assert totals.unique <= totals.masking <= totals.conditions == conditions
        assert totals.outcomes <= 2 * conditions
        # outcomes: each condition's values among the vectors that ran, counted here
        ran = [vectors[k] for k in counts]
        seen = sum(len({v.values[c] for v in ran} - {None}) for c in range(conditions))
        assert totals.outcomes == seen
        entries.append(entry)
    total = totals_of(entries)
    for name in ("decisions", "conditions", "outcomes", "masking", "unique"):
        assert getattr(total, name) == sum(getattr(e.totals, name) for e in entries)
    assert 0.0 <= total.mcdc_percent <= 100.0


@pytest.mark.parametrize(("counts", "complete"), [
    ({0: 1, 1: 1, 2: 1}, True),  # a and b: (F), (T, F), (T, T)
    ({0: 1, 2: 1}, False),       # b never false: no pair for b
    ({}, False),
])
def test_complete_means_every_condition_shown_and_seen_both_ways(
        counts: dict[int, int], complete: bool) -> None:
    info = DecisionInfo("if", Span(1, 3, 1, 10), "a and b", ("a", "b"),
                        (Span(1, 3, 1, 4), Span(1, 9, 1, 10)), "&(0,1)", 0, 3)
    assert DecisionCoverage(info, counts=counts).complete is complete
