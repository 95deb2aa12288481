"""Tests for pathprof.graph.counters: which counter table a function gets (Ball-Larus
1996, §5.2): an array of ``num_paths`` counters up to the threshold, a hash beyond it,
the threshold itself still an array."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pathprof.graph.counters import ARRAY_THRESHOLD, CounterKind, counter_kind


def test_the_kinds_are_named_as_the_contract_stores_them() -> None:
    assert CounterKind("array") is CounterKind.ARRAY
    assert CounterKind("hash") is CounterKind.HASH
    assert {kind.value for kind in CounterKind} == {"array", "hash"}


def test_the_default_threshold_is_4096_paths() -> None:
    # the figure the measurement in the module's comment settled on
    assert ARRAY_THRESHOLD == 4096


@pytest.mark.parametrize(("paths", "kind"), [
    (0, CounterKind.ARRAY),
    (1, CounterKind.ARRAY),
    (4095, CounterKind.ARRAY),
    (4096, CounterKind.ARRAY),  # the threshold itself: num_paths <= threshold
    (4097, CounterKind.HASH),
    (10**30, CounterKind.HASH),  # path counts grow beyond any machine integer
])
def test_a_function_gets_an_array_up_to_the_threshold_and_a_hash_beyond(
        paths: int, kind: CounterKind) -> None:
    assert counter_kind(paths) is kind


def test_a_threshold_of_its_own_moves_the_boundary() -> None:
    assert counter_kind(10, threshold=10) is CounterKind.ARRAY
    assert counter_kind(11, threshold=10) is CounterKind.HASH
    assert counter_kind(0, threshold=0) is CounterKind.ARRAY
    assert counter_kind(1, threshold=0) is CounterKind.HASH


@settings(max_examples=50, deadline=None)
@given(st.integers(min_value=0, max_value=10**6), st.integers(min_value=0, max_value=10**6))
def test_the_kind_is_array_exactly_when_the_paths_fit(paths: int, threshold: int) -> None:
    expected = CounterKind.ARRAY if paths <= threshold else CounterKind.HASH
    assert counter_kind(paths, threshold) is expected
