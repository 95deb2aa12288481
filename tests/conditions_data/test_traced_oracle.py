"""The independent oracle of condition vectors and MC/DC, on examples counted by hand."""

from __future__ import annotations

import random

import pytest

from tests.conditions_data.traced_oracle import (
    condition_count,
    mcdc_by_definition,
    random_decision,
    traced_vectors,
)

T, F, N = True, False, None


def test_and_of_two():
    got = traced_vectors("c0() and c1()", [(T, T), (T, F), (F, T), (F, F), (T, "raise")])
    assert got == {
        "vectors": {((T, T), T): 1, ((T, F), F): 1, ((F, N), F): 2},
        "raised": {1: 1},
    }
    verdicts = mcdc_by_definition("c0() and c1()", got["vectors"])
    assert verdicts == {
        "condition_covered": (T, T),
        "unique": (T, T),
        "masking": (T, T),
    }


def test_or_not():
    # c1 is False in the vector where it is True that `not c1()` made the outcome
    got = traced_vectors("c0() or not c1()", [(F, T), (F, F), ("raise", T), (T, "raise")])
    assert got == {
        "vectors": {((F, T), F): 1, ((F, F), T): 1, ((T, N), T): 1},
        "raised": {0: 1},
    }
    # c0: (T,-)->T against (F,T)->F; c1: (F,T)->F against (F,F)->T; the raise in c1 never
    # happened (c0 was True), the one in c0 is no vector
    verdicts = mcdc_by_definition("c0() or not c1()", got["vectors"])
    assert verdicts == {
        "condition_covered": (T, T),
        "unique": (T, T),
        "masking": (T, T),
    }


def test_or_then_and_masking_only():
    expression = "(c0() or c1()) and c2()"
    got = traced_vectors(expression, [(F, T, T), (T, F, F), (T, T, T)])
    assert got == {
        "vectors": {((F, T, T), T): 1, ((T, N, F), F): 1, ((T, N, T), T): 1},
        "raised": {},
    }
    # Without (T,-,T): c2 flips between (F,T,T)->T and (T,-,F)->F while c0 differs too,
    # masked in both (c1 is True in one, c2 False in the other): masking only.
    two = [((F, T, T), T), ((T, N, F), F)]
    assert mcdc_by_definition(expression, two) == {
        "condition_covered": (T, F, T),
        "unique": (F, F, F),
        "masking": (F, F, T),
    }
    # With it, (T,-,T)->T against (T,-,F)->F is a unique-cause pair for c2; c0 has no
    # pair still: its only False vector has outcome True, like (T,-,T).
    assert mcdc_by_definition(expression, got["vectors"]) == {
        "condition_covered": (T, F, T),
        "unique": (F, F, T),
        "masking": (F, F, T),
    }


def test_masking_needs_every_completion():
    # c0 and c1 or c2: (F,-,T)->T and (T,F,F)->F differ in c0 and c2. For c2, c0 is masked
    # in both; for c0, c2 is not masked in (F,-,T) (c1 may be anything, c2 decides).
    expression = "c0() and c1() or c2()"
    got = traced_vectors(expression, [(F, T, T), (T, F, F)])
    assert got["vectors"] == {((F, N, T), T): 1, ((T, F, F), F): 1}
    assert mcdc_by_definition(expression, got["vectors"]) == {
        "condition_covered": (T, F, T),
        "unique": (F, F, F),
        "masking": (F, F, T),
    }


def test_inconsistent_vector_is_refused():
    with pytest.raises(ValueError, match="no evaluation"):
        mcdc_by_definition("c0() and c1()", [((T, N), T)])


def test_random_decisions_are_well_formed():
    rng = random.Random(20240611)
    sizes = set()
    for _ in range(200):
        expression = random_decision(rng)
        count = condition_count(expression)
        sizes.add(count)
        assignments = [
            tuple(rng.choice((T, F, T, F, "raise")) for _ in range(count)) for _ in range(8)
        ]
        got = traced_vectors(expression, assignments)
        assert sum(got["vectors"].values()) + sum(got["raised"].values()) == 8
        mcdc_by_definition(expression, got["vectors"])
    assert sizes == {1, 2, 3, 4, 5, 6}
