"""Decisions, evaluation vectors and MC/DC (pathprof.analysis.conditions), the analysis
half of issue 39.

The vectors are checked against Python itself: a random boolean expression is
compiled with each condition a traced call, run on every assignment of the
conditions, and the calls it made (and the value it gave) must be exactly the
vectors the short-circuit DAG lists. MC/DC verdicts are checked by hand on small
decisions and, as a property, against a brute-force definition over truth tables."""

from __future__ import annotations

import itertools
import re
import textwrap

from hypothesis import given, settings
from hypothesis import strategies as st

from pathprof.analysis.conditions import Vector, decisions_in, evaluation_vectors, mcdc

from .graph.strategies import examples


@st.composite
def boolean_expressions(draw: st.DrawFn, conditions: int = 6) -> str:
    """A boolean expression over ``c(0)``, ``c(1)``, ... (each once, in order), with
    ``and``, ``or``, ``not`` and parentheses."""
    used = [0]

    def expression(depth: int) -> str:
        if depth >= 3 or used[0] >= conditions - 1 or draw(st.integers(0, 2)) == 0:
            text = f"c({used[0]})"
            used[0] += 1
        else:
            op = draw(st.sampled_from([" and ", " or "]))
            count = draw(st.integers(2, 3))
            parts = []
            for _ in range(count):
                if used[0] >= conditions:
                    break
                parts.append(expression(depth + 1))
            text = f"({op.join(parts)})" if len(parts) > 1 else parts[0]
        return f"(not {text})" if draw(st.integers(0, 3)) == 0 else text

    return expression(0)


def _python_vectors(expression: str, count: int) -> set[Vector]:
    """What Python evaluates: for every assignment, which conditions it called, with
    what value, and the truth of the result."""
    found = set()
    for assignment in itertools.product((False, True), repeat=count):
        called: list[bool | None] = [None] * count

        def c(i: int, assignment: tuple[bool, ...] = assignment,
              called: list[bool | None] = called) -> bool:
            called[i] = assignment[i]
            return assignment[i]

        outcome = bool(eval(expression, {"c": c}))
        found.add(Vector(tuple(called), outcome))
    return found


@settings(max_examples=examples(400), deadline=None)
@given(boolean_expressions())
def test_the_vectors_are_what_python_evaluates(expression: str) -> None:
    (decision,) = decisions_in(f"if {expression}:\n    pass\n")
    count = len(decision.conditions)
    assert decision.conditions == tuple(f"c({i})" for i in range(count))
    vectors = evaluation_vectors(decision.tree, count)
    assert len(set(vectors)) == len(vectors)  # each once: numbers are a bijection
    assert set(vectors) == _python_vectors(expression, count)


def _brute_masking(decision, first: Vector, second: Vector, condition: int) -> bool:
    """Masking MC/DC for one pair as the module defines it, from truth tables alone:
    the condition flips, the outcome flips, and every other condition either was not
    evaluated in one of them, or has the same value, or cannot change the outcome of
    either vector whatever the unevaluated conditions are."""
    count = len(decision.conditions)

    def outcome(full: tuple[bool, ...]) -> bool:
        return bool(eval(re.sub(r"c\((\d+)\)", r"full[\1]", decision.text),
                         {"full": full}))

    def fulls(vector: Vector):
        free = [i for i, v in enumerate(vector.values) if v is None]
        for choice in itertools.product((False, True), repeat=len(free)):
            values = list(vector.values)
            for i, v in zip(free, choice, strict=True):
                values[i] = v
            yield tuple(values)

    def masked(vector: Vector, i: int) -> bool:
        if vector.values[i] is None:
            return True
        return all(outcome(f) == outcome(tuple(not v if j == i else v
                                               for j, v in enumerate(f)))
                   for f in fulls(vector))

    a, b = first.values[condition], second.values[condition]
    if a is None or b is None or a == b or first.outcome == second.outcome:
        return False
    # a condition one of the two did not evaluate is a don't-care (the short-circuit
    # reading of unique-cause, which masking includes)
    return all(first.values[i] == second.values[i] or first.values[i] is None
               or second.values[i] is None or (masked(first, i) and masked(second, i))
               for i in range(count) if i != condition)


@settings(max_examples=examples(200), deadline=None)
@given(boolean_expressions(conditions=4), st.randoms(use_true_random=False))
def test_mcdc_against_truth_tables(expression: str, rng) -> None:
    """A pair is found for a condition exactly when some pair of the vectors that ran
    shows it by the brute-force definition; with every vector run, every condition is
    covered (its conditions are independent); unique-cause implies masking."""
    (decision,) = decisions_in(f"if {expression}:\n    pass\n")
    vectors = decision.vectors
    ran = [n for n in range(len(vectors)) if rng.random() < 0.5]
    seen = [vectors[n] for n in ran]
    for verdict in mcdc(decision, ran):
        expected = any(_brute_masking(decision, a, b, verdict.condition)
                       for a, b in itertools.combinations(seen, 2))
        assert (verdict.masking is not None) == expected, (expression, ran)
        if verdict.unique_cause is not None:
            assert verdict.masking is not None
        if verdict.masking is None:
            assert verdict.missing is not None  # there is always a test to write
            have, want = verdict.missing
            assert _brute_masking(decision, have, want, verdict.condition)
    for verdict in mcdc(decision, range(len(vectors))):
        assert verdict.masking is not None, expression
        assert verdict.condition_covered, expression


def test_a_and_b_by_hand() -> None:
    (decision,) = decisions_in("if a and b:\n    pass\n")
    assert [v.describe(decision.conditions) for v in decision.vectors] == [
        "a false, b not evaluated → false",
        "a true, b false → false",
        "a true, b true → true"]
    # FT and TT: b's effect shown; a's needs F- against TT, missing
    a, b = mcdc(decision, {1: 4, 2: 1})
    assert b.unique_cause == (decision.vectors[1], decision.vectors[2]) or b.unique_cause == (
        decision.vectors[2], decision.vectors[1])
    assert a.masking is None
    assert a.missing is not None
    assert a.missing[1].describe(decision.conditions) == "a false, b not evaluated → false"
    assert (a.seen_true, a.seen_false, b.seen_true, b.seen_false) == (True, False, True, True)


def test_a_pair_needs_the_other_conditions_held_or_skipped() -> None:
    """``(a or b) and c``: T-T against FTF does not show a's effect (c changes, and
    decides the outcome in both); T-T against FF- does (b and c each skipped in one:
    don't-cares, the short-circuit reading)."""
    (decision,) = decisions_in("if (a or b) and c:\n    pass\n")
    names = decision.conditions
    by_text = {v.describe(names): n for n, v in enumerate(decision.vectors)}
    ran = [by_text["a true, b not evaluated, c true → true"],
           by_text["a false, b true, c false → false"]]
    a, _b, _c = mcdc(decision, ran)
    assert a.unique_cause is None
    assert a.masking is None
    ran.append(by_text["a false, b false, c not evaluated → false"])
    a, _b, _c = mcdc(decision, ran)
    # a: T-T → true against FF- → false: b differs (not evaluated in one), c differs
    # (not evaluated in one): both don't-cares, unique-cause
    assert a.unique_cause is not None


def test_which_decisions_are_counted() -> None:
    source = textwrap.dedent("""\
        def f(a, b, xs):
            if a and b:
                pass
            elif not a or b:
                pass
            while a and not b:
                break
            y = 1 if a or b else 2
            z = [x for x in xs if x and a]
            assert a or b
            match xs:
                case [_] if a and b:
                    pass
            flag = a and b
            return flag
        """)
    found = [(d.kind, d.line, d.conditions) for d in decisions_in(source)]
    assert found == [
        ("if", 2, ("a", "b")), ("if", 4, ("a", "b")), ("while", 6, ("a", "b")),
        ("conditional expression", 8, ("a", "b")), ("comprehension if", 9, ("x", "a")),
        ("assert", 10, ("a", "b")), ("guard", 12, ("a", "b"))]
