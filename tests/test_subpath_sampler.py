"""OSP's sampler and its estimates on synthetic streams whose subpath counts are known
(Oren 2002 §2): the estimates fall within their Chernoff bounds at least as often as
the confidence says, over many seeds; the sample never holds more than its budget;
skipping in bulk never misses a sample."""

from __future__ import annotations

import random
import statistics
import sys
from collections import Counter
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pathprof.analysis.subpaths import (
    SubpathEstimate,
    cycle_of,
    estimate_subpaths,
    fold_cycles,
    rank_agreement,
    relative_error,
)
from pathprof.runtime.subpaths import (
    ExactSubpathCounter,
    LengthDistribution,
    SampleSnapshot,
    SubpathSampler,
    binomial,
    encode,
    geometric_gap,
)


def loop_stream(n: int, seed: int = 1) -> list[int]:
    """A program-like stream: a loop whose body takes one of three branches
    (70/20/10 %), with an inner loop of 1-3 trips on the rare branch, and a call
    now and then (blocks 20-22)."""
    rng = random.Random(seed)
    stream: list[int] = []
    while len(stream) < n:
        stream += [0, 1]
        draw = rng.random()
        if draw < 0.7:
            stream += [2, 3]
        elif draw < 0.9:
            stream += [4, 20, 21, 22, 5]
        else:
            for _ in range(rng.randint(1, 3)):
                stream += [6, 7]
            stream.append(8)
        stream.append(9)
    return stream[:n]


def bytes_bound(budget: int, longest: int) -> int:
    """The most bytes a sample of ``budget`` distinct subpaths of up to ``longest``
    blocks can take: two full tables, and per entry its key, its count (below 2^60)
    and its chance."""
    table = sys.getsizeof({i: i for i in range(budget)})
    entry = (sys.getsizeof(tuple(range(longest))) + sys.getsizeof(2**60)
             + sys.getsizeof(0.5))
    return 2 * table + budget * entry


def feed(sampler: SubpathSampler, stream: list[int]) -> None:
    """The stream, skipped in bulk wherever the sampler allows."""
    state = sampler._default
    i = 0
    while i < len(stream):
        jump = min(state.blocks_until_observed(), len(stream) - i)
        if jump:
            state.skip(jump)
            i += jump
            continue
        state.block(stream[i])
        i += 1


def exact_counts(stream: list[int], lengths: list[int], encoding: str = "exact"
                 ) -> dict[tuple, int]:
    counter = ExactSubpathCounter(lengths, encoding)
    for block in stream:
        counter.block(block)
    return counter.counts


def test_the_exact_counter_counts_every_window() -> None:
    stream = loop_stream(500, seed=3)
    brute = Counter(tuple(stream[i:i + n]) for n in (2, 4, 8)
                    for i in range(len(stream) - n + 1))
    assert exact_counts(stream, [2, 4, 8]) == dict(brute)


@pytest.mark.parametrize("lengths", [LengthDistribution.geometric(3),
                                     LengthDistribution.powers(3)],
                         ids=["one-length-per-start", "every-length-per-start"])
def test_estimates_fall_within_their_bounds_as_often_as_the_confidence_says(
        lengths: LengthDistribution) -> None:
    """Over 120 seeds, every estimate of each run (and the five hottest apart) against
    the exact counts: the share within its 95 % bounds is at least 95 %, two-sided
    and one-sided; and the estimates are unbiased. Lengths 2, 4, 8: one drawn per
    start (Oren's), or all of them at every start (nested: the default)."""
    stream = loop_stream(40_000)
    exact = exact_counts(stream, list(lengths.probabilities))
    within: Counter = Counter()
    checked: Counter = Counter()
    by_subpath: dict[tuple, list[float]] = {}
    resampled = 0
    for seed in range(120):
        sampler = SubpathSampler(period=40, budget=40, lengths=lengths, seed=seed)
        feed(sampler, stream)
        assert len(sampler.counts) <= 40
        resampled += sampler.resamplings > 0
        snapshot = sampler.snapshot()
        for one_sided in (False, True):
            found = estimate_subpaths(snapshot, one_sided=one_sided)
            for rank, estimate in enumerate(found):
                for kind in ("all", "top 5") if rank < 5 else ("all",):
                    within[kind, one_sided] += estimate.holds(exact[estimate.blocks])
                    checked[kind, one_sided] += 1
        for estimate in estimate_subpaths(snapshot):
            by_subpath.setdefault(estimate.blocks, []).append(estimate.estimate)
    assert resampled == 120  # the budget forced resampling in every run
    for key, count in checked.items():
        assert within[key] / count >= 0.95, (key, within[key], count)
    # Unbiased: over the runs, the hottest subpath's mean estimate is its count.
    hottest = max(exact, key=lambda key: exact[key] * lengths.probabilities[len(key)])
    estimates = by_subpath[hottest] + [0.0] * (120 - len(by_subpath[hottest]))
    mean, spread = statistics.fmean(estimates), statistics.stdev(estimates)
    assert abs(mean - exact[hottest]) <= 4 * spread / 120 ** 0.5


@pytest.mark.parametrize("budget", [100_000, 60], ids=["room", "budget-resampled-too"])
def test_a_period_chosen_from_the_run_keeps_estimates_unbiased_and_within_bounds(
        budget: int) -> None:
    """The period starts at 5 and grows by a quarter each time the stream reaches 60
    periods of positions (up to 1,000), the sample thinned to it: over 120 seeds, on a
    stream of 40,000 blocks, the share of estimates within their 95 % bounds is at
    least 95 % (two-sided and one-sided, the five hottest apart too), the hottest
    subpath's mean estimate is its count, and the period is where the stream's length
    put it -- the same for every seed, where only the run grew it (22 times, to 542).
    With a budget of 60 (of the 100 distinct subpaths) it is resampled for memory
    too, nearly always besides growing with the run, and the same holds."""
    stream = loop_stream(40_000)
    lengths = LengthDistribution.powers(3)
    exact = exact_counts(stream, list(lengths.probabilities))
    within: Counter = Counter()
    checked: Counter = Counter()
    estimates: list[float] = []
    hottest = max(exact, key=lambda key: exact[key])
    periods = set()
    both = 0
    for seed in range(120):
        sampler = SubpathSampler(period=5, budget=budget, lengths=lengths, seed=seed,
                                 starts=60, ceiling=1000)
        feed(sampler, stream)
        assert len(sampler.counts) <= budget
        both += sampler.grown > 0 and sampler.resamplings > 0
        if budget > len(exact):
            assert (sampler.resamplings, sampler.grown) == (0, 22)
            periods.add(sampler.period)
            # grown k times: 5 x 1.25^k, the last growth 60 such periods in
            assert 60 * sampler.period / 1.25 <= len(stream) < 60 * sampler.period * 1.25
        for one_sided in (False, True):
            for rank, estimate in enumerate(estimate_subpaths(sampler.snapshot(),
                                                              one_sided=one_sided)):
                for kind in ("all", "top 5") if rank < 5 else ("all",):
                    within[kind, one_sided] += estimate.holds(exact[estimate.blocks])
                    checked[kind, one_sided] += 1
        found = {e.blocks: e.estimate for e in estimate_subpaths(sampler.snapshot())}
        estimates.append(found.get(hottest, 0.0))
    assert budget > len(exact) or both >= 100
    for key, count in checked.items():
        assert within[key] / count >= 0.95, (key, within[key], count)
    mean, spread = statistics.fmean(estimates), statistics.stdev(estimates)
    assert abs(mean - exact[hottest]) <= 4 * spread / 120 ** 0.5
    assert len(periods) <= 1  # where the run alone grew it: the stream's length decides


def test_a_period_chosen_from_the_run_stops_at_its_ceiling() -> None:
    """However long the run, the period grows with it only up to the ceiling: past it,
    a long run is sampled as with a period fixed there (and its budget holds it)."""
    stream = loop_stream(30_000)
    sampler = SubpathSampler(period=2, budget=100_000, lengths=LengthDistribution.powers(2),
                             seed=3, starts=20, ceiling=50)
    feed(sampler, stream)
    assert sampler.period == 50
    assert sampler.initial_period == 2
    grown = sampler.grown
    feed(sampler, stream)  # as long again
    assert (sampler.period, sampler.grown) == (50, grown)
    with pytest.raises(ValueError, match="at least one start"):
        SubpathSampler(period=2, starts=0)


def test_the_theses_relative_error_holds_for_well_sampled_subpaths() -> None:
    """Eq. 2.14 with the sampled count for its expectation: for subpaths sampled 30
    times or more, within ε of the exact count at least 95 % of the time."""
    stream = loop_stream(40_000)
    exact = exact_counts(stream, [2, 4])
    within = checked = 0
    for seed in range(60):
        sampler = SubpathSampler(period=10, budget=60, seed=seed,
                                 lengths=LengthDistribution.uniform([2, 4]))
        feed(sampler, stream)
        for estimate in estimate_subpaths(sampler.snapshot()):
            if estimate.sampled >= 30:
                truth = exact[estimate.blocks]
                within += abs(estimate.estimate - truth) <= estimate.error * truth
                checked += 1
    assert checked > 300
    assert within / checked >= 0.95


def test_the_top_five_is_the_exact_top_five_on_a_skewed_stream() -> None:
    stream = loop_stream(60_000, seed=5)
    lengths = LengthDistribution.fixed(4)
    exact = exact_counts(stream, [4])
    agreed = 0
    for seed in range(20):
        sampler = SubpathSampler(period=20, budget=100, lengths=lengths, seed=seed)
        feed(sampler, stream)
        estimated = [e.blocks for e in estimate_subpaths(sampler.snapshot())]
        ranks = rank_agreement(estimated, exact, k=5)
        agreed += sorted(r for r in ranks if r is not None) == [1, 2, 3, 4, 5]
    assert agreed >= 18


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 6), min_size=1, max_size=400), st.integers(1, 30),
       st.integers(1, 12), st.integers(0, 2**32 - 1),
       st.sampled_from(["exact", "rotation"]), st.booleans(),
       st.sampled_from([None, 1, 3, 10]))
def test_memory_stays_within_the_budget_and_bulk_skipping_misses_nothing(
        stream: list[int], period: int, budget: int, seed: int, encoding: str,
        nested: bool, starts: int | None) -> None:
    """... and with a period chosen from the run (``starts``), which grows at the same
    positions however the stream is handed on."""
    lengths = LengthDistribution.powers(3) if nested else LengthDistribution.geometric(3)
    one_by_one = SubpathSampler(period=period, budget=budget, lengths=lengths, seed=seed,
                                encoding=encoding, starts=starts)
    for block in stream:
        one_by_one.block(block)
        assert len(one_by_one.counts) <= budget
    assert one_by_one.sample_bytes() <= bytes_bound(budget, longest=8)
    in_bulk = SubpathSampler(period=period, budget=budget, lengths=lengths, seed=seed,
                             encoding=encoding, starts=starts)
    feed(in_bulk, stream)
    assert in_bulk.counts == one_by_one.counts
    assert (in_bulk.period, in_bulk.grown) == (one_by_one.period, one_by_one.grown)
    assert in_bulk.positions == one_by_one.positions == len(stream)
    if starts is not None and not one_by_one.resamplings:  # the run alone grew it
        assert one_by_one.period == period * 1.25 ** one_by_one.grown
        assert one_by_one.period <= max(period, 1.25 * len(stream) / starts)
    # In runs (a path's blocks at once, as the stream hands them on): the same.
    in_runs = SubpathSampler(period=period, budget=budget, lengths=lengths, seed=seed,
                             encoding=encoding, starts=starts)
    cuts = random.Random(seed).choices(range(1, 9), k=len(stream))
    i = 0
    for size in cuts:
        in_runs._default.blocks(stream[i:i + size])
        i += size
    assert (in_runs.counts, in_runs.period, in_runs.positions, in_runs.grown) == (
        one_by_one.counts, one_by_one.period, one_by_one.positions, one_by_one.grown)
    # Everything kept is a subpath of the stream, of a length the distribution allows.
    windows = {encode(stream[i:i + n], encoding) for n in lengths.probabilities
               for i in range(len(stream) - n + 1)}
    assert set(one_by_one.counts) <= windows


def test_with_period_1_and_room_for_everything_the_sample_is_exact() -> None:
    stream = loop_stream(3_000, seed=2)
    sampler = SubpathSampler(period=1, budget=10_000, lengths=LengthDistribution.fixed(4),
                             seed=0)
    feed(sampler, stream)
    assert sampler.counts == exact_counts(stream, [4])
    found = estimate_subpaths(sampler.snapshot(), top=1)[0]
    assert found.estimate == max(sampler.counts.values())


@given(st.lists(st.integers(0, 9), min_size=1, max_size=12), st.integers(0, 20))
def test_rotations_share_one_key_and_other_sequences_do_not(blocks: list[int],
                                                            turn: int) -> None:
    turn %= len(blocks)
    rotated = blocks[turn:] + blocks[:turn]
    assert encode(rotated, "rotation") == encode(blocks, "rotation")
    assert sorted(encode(blocks, "rotation")) == sorted(blocks)
    other = [*blocks[:-1], blocks[-1] + 10]
    assert encode(other, "rotation") != encode(blocks, "rotation")


def test_the_rotation_encoding_groups_a_loop_entered_anywhere() -> None:
    stream = [1, 2, 3] * 200  # a three-block loop
    exact = exact_counts(stream, [3], "exact")
    rotation = exact_counts(stream, [3], "rotation")
    assert len(exact) == 3
    assert rotation == {(1, 2, 3): len(stream) - 2}


def test_block_costs_sample_expensive_subpaths_more_and_estimates_stay_counts() -> None:
    """§5.1.2: cheap subpaths are kept with probability mean cost / highest cost;
    their estimates divide by it, so both stay near their counts."""
    stream = [0, 1] * 20_000 + [2, 3] * 20_000  # (0,1) and (2,3): 20,000 times each
    costs = {0: 1.0, 1: 1.0, 2: 10.0, 3: 10.0}
    counts = Counter()
    for seed in range(10):
        sampler = SubpathSampler(period=10, budget=100, lengths=LengthDistribution.fixed(2),
                                 costs=costs, seed=seed)
        feed(sampler, stream)
        found = {e.blocks: e for e in estimate_subpaths(sampler.snapshot(), rank="cost")}
        counts[(0, 1)] += sampler.counts.get((0, 1), 0)
        counts[(2, 3)] += sampler.counts[(2, 3)]
        assert found[(2, 3)].holds(20_000)
        assert next(iter(found)) in {(2, 3), (3, 2)}  # ranked by cost
    assert counts[(2, 3)] > 5 * counts[(0, 1)]


def test_every_length_is_sampled_at_every_start_when_nested() -> None:
    """Nested lengths: each start gives one subpath of each length, the prefixes of
    one window; with period 1 that is every window of the stream."""
    stream = loop_stream(2_000, seed=4)
    sampler = SubpathSampler(period=1, budget=100_000, lengths=LengthDistribution.powers(3),
                             seed=0)
    feed(sampler, stream)
    assert sampler.counts == exact_counts(stream, [2, 4, 8])
    with pytest.raises(ValueError, match="nested"):
        LengthDistribution({2: 0.5, 4: 1.0}, nested=True)
    assert LengthDistribution.powers(2).choose(random.Random(0)) == 4


def test_lengths_are_drawn_with_their_probabilities() -> None:
    lengths = LengthDistribution.geometric(4)
    assert lengths.probabilities == {2: 0.5, 4: 0.25, 8: 0.125, 16: 0.125}
    rng = random.Random(4)
    drawn = Counter(lengths.choose(rng) for _ in range(40_000))
    for length, chance in lengths.probabilities.items():
        assert abs(drawn[length] / 40_000 - chance) < 0.01
    assert LengthDistribution.uniform([3, 5, 3]).probabilities == {3: 0.5, 5: 0.5}
    with pytest.raises(ValueError, match="add up to 1"):
        LengthDistribution({2: 0.3})


@pytest.mark.parametrize("chance", [0.001, 0.05, 0.5, 0.97])
def test_gaps_and_binomials_have_their_means(chance: float) -> None:
    rng = random.Random(11)
    gaps = [geometric_gap(rng, chance) for _ in range(20_000)]
    assert min(gaps) >= 1
    mean, expected = statistics.fmean(gaps), 1 / chance
    assert abs(mean - expected) <= 5 * ((1 - chance) ** 0.5 / chance) / 20_000 ** 0.5
    draws = [binomial(rng, 300, chance) for _ in range(4_000)]
    assert min(draws) >= 0
    assert max(draws) <= 300
    spread = (300 * chance * (1 - chance)) ** 0.5
    assert abs(statistics.fmean(draws) - 300 * chance) <= 5 * spread / 4_000 ** 0.5 + 1e-9


def test_the_chernoff_error_is_the_theses_figure() -> None:
    """Table 4.9, FFT: sampled 27,006 times, 2.58 % at 95 % (1.49 % one-sided)."""
    assert round(relative_error(27_006, 0.95) * 100, 2) == 2.58
    assert round(relative_error(27_006, 0.95, one_sided=True) * 100, 2) == 1.49
    # javac, sampled 13 times: 117.67 % in the thesis, which took ln 20 as 3
    assert abs(relative_error(13, 0.95) * 100 - 117.67) < 0.1


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="period"):
        SubpathSampler(period=0)
    with pytest.raises(ValueError, match="budget"):
        SubpathSampler(budget=0)
    with pytest.raises(ValueError, match="unknown encoding"):
        SubpathSampler(encoding="xor")
    sampler = SubpathSampler(period=10, seed=1)
    with pytest.raises(ValueError, match="skipped past"):
        sampler.skip(sampler._default.blocks_until_observed() + 1)


def test_the_samples_bytes_stay_within_what_the_budget_allows_however_long_the_run() -> None:
    rng = random.Random(11)
    sampler = SubpathSampler(period=3, budget=50, lengths=LengthDistribution.geometric(5),
                             seed=4)
    bound = bytes_bound(50, longest=32)
    for _ in range(4):
        feed(sampler, [rng.randrange(60) for _ in range(50_000)])
        assert len(sampler.counts) <= 50
        assert 0 < sampler.sample_bytes() <= bound
    assert sampler.resamplings > 0  # the budget was what held it


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.lists(st.integers(0, 4), max_size=9)),
                max_size=40),
       st.integers(1, 12), st.sampled_from(["exact", "rotation"]),
       st.sampled_from([[2], [2, 4], [1, 3, 8]]),
       st.sampled_from(["small", "large", "negative", "text"]))
def test_the_exact_counter_in_chunks_and_streams_counts_what_one_by_one_counts(
        runs: list[tuple[int, list[int]]], chunk: int, encoding: str,
        lengths: list[int], kind: str) -> None:
    """Runs of blocks handed to three interleaved streams, counted in chunks of any
    size (and read part-way): the counts are every window that ended in each stream,
    as brute force finds them; a closed stream keeps its windows counted. Blocks
    are ids below 2**16 and above (packed in two or four bytes), or negative ints
    and strings (counted as tuples)."""
    block_of = {"small": lambda b: b, "large": lambda b: b + 70_000,
                "negative": lambda b: -b - 1, "text": lambda b: f"b{b}"}[kind]
    runs = [(which, [block_of(b) for b in blocks]) for which, blocks in runs]
    first = ExactSubpathCounter(lengths, encoding)
    streams = [first, first.stream(), first.stream()]
    for counter in streams:
        counter.CHUNK = chunk
    whole: list[list[Any]] = [[], [], []]
    for number, (which, blocks) in enumerate(runs):
        streams[which].blocks(blocks)
        whole[which] += blocks
        if number % 7 == 3:  # read part-way: nothing counted twice later
            brute = Counter(encode(s[i:i + n], encoding) for s in whole for n in lengths
                            for i in range(len(s) - n + 1))
            assert first.counts == brute
    streams[2].close()
    brute = Counter(encode(s[i:i + n], encoding) for s in whole for n in lengths
                    for i in range(len(s) - n + 1))
    assert first.counts == brute
    assert [s.positions for s in streams] == [len(s) for s in whole]


def test_a_subpath_sampled_once_by_luck_does_not_outrank_a_well_sampled_one() -> None:
    """Ranked by the lower bound: a length-32 subpath sampled 5 times under Oren's
    lengths (P = 1/32: estimate 160 x period) has a higher estimate than a length-2
    one sampled 60 times (P = 1/2: 120 x period), but a lower bound far below it,
    and comes after it."""
    snapshot = SampleSnapshot(10.0, {(1, 2): 60, tuple(range(32)): 5}, {},
                              {2: 0.5, 32: 1 / 32}, "exact", 10_000, 0, 100)
    found = estimate_subpaths(snapshot)
    assert [e.blocks for e in found] == [(1, 2), tuple(range(32))]
    assert found[1].estimate > found[0].estimate  # higher estimate, ranked lower
    assert found[1].low < found[0].low


def _estimate(blocks: tuple) -> SubpathEstimate:
    return SubpathEstimate(blocks, 1, 1.0, 1.0, 0.5, 2.0, 0.5)


@given(st.lists(st.integers(0, 3), min_size=1, max_size=4), st.integers(2, 5),
       st.integers(0, 3))
def test_a_repeated_turn_is_found_as_its_shortest_cycle(turn: list[int], times: int,
                                                        extra: int) -> None:
    blocks = turn * times + turn[:extra % len(turn)]
    found = cycle_of(blocks)
    assert found is not None
    one, turns = found
    assert len(one) <= len(turn)
    assert len(blocks) == turns * len(one)
    assert all(blocks[i] == one[i % len(one)] for i in range(len(blocks)))
    shorter = [p for p in range(1, len(one))
               if all(blocks[i] == blocks[i + p] for i in range(len(blocks) - p))]
    assert not shorter


@given(st.lists(st.integers(0, 3), min_size=1, max_size=10))
def test_a_sequence_without_a_cycle_has_no_period_of_half_its_length(blocks: list[int]
                                                                     ) -> None:
    if cycle_of(blocks) is None:
        assert not any(all(blocks[i] == blocks[i + p] for i in range(len(blocks) - p))
                       for p in range(1, len(blocks) // 2 + 1))


def _cycle_key(blocks: tuple) -> tuple:
    return min(tuple(blocks[i:] + blocks[:i]) for i in range(len(blocks)))


@given(st.lists(st.lists(st.integers(0, 2), min_size=1, max_size=8), max_size=30))
def test_folding_keeps_one_row_per_cycle_and_every_other_row_in_order(
        sequences: list[list[int]]) -> None:
    estimates = [_estimate(tuple(blocks)) for blocks in sequences]
    folded = fold_cycles(estimates)
    cycles = {_cycle_key(cycle_of(e.blocks)[0]) for e in estimates
              if cycle_of(e.blocks) is not None}

    def cycle(blocks: tuple) -> tuple | None:
        found = cycle_of(blocks)
        if found is not None:
            return _cycle_key(found[0])
        return _cycle_key(blocks) if _cycle_key(blocks) in cycles else None

    plain = [e.blocks for e in estimates if cycle(e.blocks) is None]
    assert [e.blocks for e in folded if e.turns is None] == plain
    rows = [e for e in folded if e.turns is not None]
    assert sorted(cycle(e.blocks) for e in rows) == sorted(cycles)  # each cycle once
    assert len(folded) + sum(e.folded for e in folded) == len(estimates)
    for row in rows:  # each cycle's row is its best-ranked subpath
        first = next(e for e in estimates if cycle(e.blocks) == cycle(row.blocks))
        assert first.blocks == row.blocks
        assert row.turns * len(cycle(row.blocks)) == len(row.blocks)


def test_a_two_block_loop_repeated_is_one_row() -> None:
    """The syntax highlighter's table: one loop at 2, 4, 8 and 16 blocks, any rotation,
    and its single turns become one row; the subpath of other code keeps its place,
    and so does a single turn of a loop never seen repeated."""
    loop = [_estimate((9, 8)), _estimate((8, 9) * 8), _estimate((1, 2, 3)),
            _estimate((9, 8) * 2), _estimate((8, 9)), _estimate((5, 6))]
    folded = fold_cycles(loop)
    assert [(e.blocks, e.turns, e.folded) for e in folded] == [
        ((9, 8), 1.0, 3), ((1, 2, 3), None, 0), ((5, 6), None, 0)]
