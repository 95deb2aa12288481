"""Online subpath sampling over a stream of executed blocks (Oren 2002, OSP).

A *subpath* is any ``L`` consecutive blocks of one stream, starting anywhere. The
sampler draws which stream positions start a sample and how long each sample is,
records the sampled subpaths in a concise sample (subpath -> times sampled) held to
a memory budget, and can say at any moment what it holds. Estimates from it are in
:mod:`pathprof.analysis.subpaths`.

- **Skipping** (§2.1, §2.3.1): every position of every stream starts a sample with
  probability ``1/period``, independently; the gap to the next start (one for all
  streams) is drawn from the geometric distribution, so that between starts the
  stream is only counted down, in bulk when the caller knows how many blocks went by
  (:meth:`StreamState.skip`). Unlike
  Figure 2.1, positions inside a sample being taken can start samples too, so that
  the starts stay independent (:meth:`block` carries several windows at once).
- **Lengths** (§2.3.2 to §2.3.3): each start draws its length from a
  :class:`LengthDistribution` (Oren's ``2^n`` with probability ``2^-n``), or, by
  default (``nested``), takes the subpath of *every* length from it: one window of
  the longest length, whose prefixes of 2, 4, ... blocks are each a sample
  (``P(L) = 1`` for every length). A start then gives a length-2 subpath twice as
  often and a length-32 one 32 times as often, for a longer window to observe
  (the longest length, against the mean length; docs/benchmarks.md has the cost).
  Occurrences of *one* subpath are still sampled
  independently of each other (different positions), so each estimate and its
  bounds are as before; estimates of subpaths of different lengths from one
  position are correlated, which no bound here uses.
- **Concise sample and resampling** (§2.3.4, after Gibbons and Matias): when a new
  subpath would make the sample hold more distinct subpaths than the budget, the
  period grows by a factor and every sampled occurrence is kept with probability
  ``old period / new period`` (a binomial draw per subpath), as many times as it
  takes. A window that started under an older period is kept with the same
  probability when it completes, and the gap to the next start is drawn again
  (the geometric distribution has no memory).
- **A period chosen from the run** (``starts``): the period may also grow with the
  stream, thinned the same way, so that a short run is sampled densely and the
  period follows the run's length: once the stream reaches ``starts * period``
  positions the period grows by the factor, up to ``ceiling``, so that about
  ``starts`` starts are kept, however long the run (until the period reaches the
  ceiling; the budget may make it grow sooner).
  Where it grows depends on the positions alone, never on what was sampled, so the
  thinning leaves every occurrence kept with probability ``1 / period`` at the end,
  as for a period fixed at the start; the gap to the next start stops at the
  position where the period grows, which then starts a sample with probability
  ``1 / new period`` (no memory, again).
- **Encodings** (§2.3.5): ``exact`` (the block sequence) or ``rotation`` (the
  smallest rotation of the sequence: the same loop entered at another block is the
  same subpath).
- **A-priori block costs** (§5.1.2): with ``costs``, a sampled subpath is kept with
  probability mean cost of its blocks / the largest block cost, so that expensive
  subpaths get more samples; the estimates divide by that probability.

Invariant: at every moment, each occurrence of a subpath ``s`` of length ``L``
completed so far in the stream is counted in ``counts[encode(s)]`` independently with
probability ``P(L) * keep(s) / period``, and ``len(counts) <= budget``.

Standard library only: it runs inside the measured program.
"""

from __future__ import annotations

import array
import itertools
import math
import random
import sys
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pathprof.runtime.passthrough import SafeLock

__all__ = ["ENCODINGS", "ExactSubpathCounter", "LengthDistribution", "SubpathSampler",
           "encode"]

ENCODINGS = ("exact", "rotation")


@dataclass(frozen=True)
class LengthDistribution:
    """The lengths a sample can have and the probability of each (summing to 1)."""

    probabilities: Mapping[int, float]
    #: every start samples every length (each probability is 1): nested prefixes of
    #: one window of the longest length
    nested: bool = False

    def __post_init__(self) -> None:
        if not self.probabilities or any(length < 1 for length in self.probabilities):
            raise ValueError("subpath lengths must be at least 1")
        if any(p <= 0 for p in self.probabilities.values()):
            raise ValueError("every length needs a positive probability")
        if self.nested:
            if any(p != 1.0 for p in self.probabilities.values()):
                raise ValueError("nested lengths are each sampled at every start")
        elif abs(sum(self.probabilities.values()) - 1.0) > 1e-9:
            raise ValueError("the length probabilities must add up to 1")

    @classmethod
    def every(cls, lengths: Sequence[int]) -> LengthDistribution:
        """Every start samples each of ``lengths`` (nested prefixes of one window)."""
        return cls({length: 1.0 for length in set(lengths)}, nested=True)

    @classmethod
    def powers(cls, longest_exponent: int = 5) -> LengthDistribution:
        """Every start samples 2, 4, ... ``2^N`` blocks (the default)."""
        if longest_exponent < 1:
            raise ValueError("the longest length is 2^N with N >= 1")
        return cls.every([2 ** n for n in range(1, longest_exponent + 1)])

    @classmethod
    def geometric(cls, longest_exponent: int = 5) -> LengthDistribution:
        """``2^n`` blocks with probability ``2^-n`` for n = 1..N, the leftover
        ``2^-N`` given to the longest (Oren §2.3.3 with n <= 5: lengths 2..32)."""
        if longest_exponent < 1:
            raise ValueError("the longest length is 2^N with N >= 1")
        chances = {2 ** n: 2.0 ** -n for n in range(1, longest_exponent + 1)}
        chances[2 ** longest_exponent] += 2.0 ** -longest_exponent
        return cls(chances)

    @classmethod
    def uniform(cls, lengths: Sequence[int]) -> LengthDistribution:
        """Each of ``lengths`` equally likely."""
        unique = sorted(set(lengths))
        return cls({length: 1.0 / len(unique) for length in unique})

    @classmethod
    def fixed(cls, length: int) -> LengthDistribution:
        return cls({length: 1.0})

    @property
    def longest(self) -> int:
        return max(self.probabilities)

    def choose(self, rng: random.Random) -> int:
        """A start's window length (for ``nested``, the longest: no draw)."""
        if self.nested:
            return self.longest
        draw = rng.random()
        total = 0.0
        for length, chance in sorted(self.probabilities.items()):
            total += chance
            if draw < total:
                return length
        return self.longest


def encode(blocks: Sequence[Hashable], encoding: str) -> tuple[Hashable, ...]:
    """The key a subpath is counted under: its blocks, or (``rotation``) the
    smallest of its rotations, compared by ``repr`` so that any block ids order."""
    sequence = tuple(blocks)
    if encoding == "exact" or len(sequence) < 2:
        return sequence
    if encoding != "rotation":
        raise ValueError(f"unknown encoding {encoding!r}; choose from {', '.join(ENCODINGS)}")
    rotations = (sequence[i:] + sequence[:i] for i in range(len(sequence)))
    return min(rotations, key=lambda r: tuple(map(repr, r)))


def geometric_gap(rng: random.Random, chance: float) -> int:
    """Positions up to and including the next success of independent trials of
    probability ``chance`` (at least 1)."""
    if chance >= 1.0:
        return 1
    u = 1.0 - rng.random()  # in (0, 1]
    return 1 + int(math.log(u) / math.log1p(-chance))


def binomial(rng: random.Random, n: int, chance: float) -> int:
    """Successes among ``n`` independent trials of probability ``chance``: by gaps
    between the rarer outcome, so the cost is about ``n * min(chance, 1 - chance)``."""
    if chance >= 1.0 or n == 0:
        return n if chance >= 1.0 else 0
    if chance <= 0.0:
        return 0
    rare = min(chance, 1.0 - chance)
    hits, position = 0, 0
    while True:
        position += geometric_gap(rng, rare)
        if position > n:
            break
        hits += 1
    return hits if rare == chance else n - hits


@dataclass
class _Window:
    length: int
    period: float  #: the period when it started
    blocks: list[Hashable] = field(default_factory=list)


class SubpathSampler:
    """OSP's sampler for one or more streams sharing one concise sample (see the
    module docstring). Each stream (a thread, a generator, a coroutine) has a
    :class:`StreamState` of its own, from :meth:`stream`, for the windows it fills;
    the default stream serves single-stream use (:meth:`block`, :meth:`skip`)."""

    def __init__(self, *, period: float = 100.0, budget: int = 1000,
                 lengths: LengthDistribution | None = None, encoding: str = "exact",
                 costs: Mapping[Hashable, float] | None = None, growth: float = 1.25,
                 seed: int | None = None, highest_cost: float | None = None,
                 starts: int | None = None, ceiling: float | None = None) -> None:
        if period < 1:
            raise ValueError("the sampling period is at least 1 (every position)")
        if starts is not None and starts < 1:
            raise ValueError("a period chosen from the run needs at least one start per "
                             "period")
        if budget < 1:
            raise ValueError("the memory budget is at least one subpath")
        if growth <= 1:
            raise ValueError("the period must grow when the sample is full")
        if encoding not in ENCODINGS:
            raise ValueError(f"unknown encoding {encoding!r}; choose from {', '.join(ENCODINGS)}")
        self.period = float(period)
        self.budget = budget
        self.lengths = lengths or LengthDistribution.powers()
        #: with nested lengths: the window lengths at which a prefix is a sample
        self._stops = frozenset(self.lengths.probabilities) if self.lengths.nested else None
        self.encoding = encoding
        #: block -> a-priori cost; blocks may be added while the stream runs, at most
        #: ``highest_cost`` each (given, or the largest of ``costs``)
        self.costs = dict(costs) if costs is not None else None
        self.highest_cost = (highest_cost if highest_cost is not None
                             else max(self.costs.values()) if self.costs else 1.0)
        if self.costs and max(self.costs.values()) > self.highest_cost:
            raise ValueError("a block costs more than the highest cost")
        self.growth = growth
        self.rng = random.Random(seed)
        #: encoded subpath -> times sampled (kept)
        self.counts: dict[tuple[Hashable, ...], int] = {}
        #: encoded subpath -> its length and the probability it is kept once sampled
        self.kept_chance: dict[tuple[Hashable, ...], float] = {}
        self.resamplings = 0
        #: the period at the start, and (``starts``) how often it grew with the stream:
        #: once ``starts`` periods of positions went by, up to ``ceiling``
        self.initial_period = self.period
        self.starts = starts
        self.ceiling = math.inf if ceiling is None else max(float(ceiling), self.period)
        self.grown = 0
        #: stream positions seen, in all streams
        self.positions = 0
        #: the position from which the period is longer (None: never), and whether the
        #: gap ends there rather than at a start
        self._grows_at: int | None = None
        self._growing = False
        self._next_growth()
        #: positions until the next sample start, in all streams: the start is the
        #: position where it reaches 0 (where the period grows, with ``_growing``)
        self.gap = 0
        self._draw_gap()
        self._lock = SafeLock()  # (no signal handler's exception leaves it held)
        self._default = self.stream()

    # -- streams ---------------------------------------------------------------

    def stream(self) -> StreamState:
        """A new stream: the windows it is filling (the gap to the next start is the
        sampler's, shared by all streams, so every position of every stream starts
        a sample with the same probability)."""
        return StreamState(self)

    def block(self, block: Hashable) -> None:
        self._default.block(block)

    def skip(self, count: int) -> None:
        self._default.skip(count)

    # -- the concise sample ----------------------------------------------------

    def _complete(self, window: _Window, blocks: Sequence[Hashable]) -> None:
        with self._lock:
            chance = self._keep_chance(blocks)
            keep = chance * window.period / self.period  # started under an older period
            if keep < 1.0 and self.rng.random() >= keep:
                return
            key = encode(blocks, self.encoding)
            self.counts[key] = self.counts.get(key, 0) + 1
            self.kept_chance.setdefault(key, chance)
            while len(self.counts) > self.budget:
                self._resample()

    def _keep_chance(self, blocks: Sequence[Hashable]) -> float:
        if self.costs is None:
            return 1.0
        mean = sum(self.costs.get(b, 0.0) for b in blocks) / len(blocks)
        return mean / self.highest_cost if self.highest_cost > 0 else 1.0

    def _resample(self) -> None:
        """Gibbons and Matias: a longer period, every kept occurrence thinned to it."""
        self._thin(self.period * self.growth)
        self.resamplings += 1
        self._period_changed()

    def _thin(self, new_period: float) -> None:
        """The period becomes ``new_period``: each kept occurrence stays with probability
        old / new period (a binomial draw per subpath)."""
        chance = self.period / new_period
        self.period = new_period
        thinned = {key: binomial(self.rng, count, chance) for key, count in self.counts.items()}
        self.counts = {key: count for key, count in thinned.items() if count}
        self.kept_chance = {key: self.kept_chance[key] for key in self.counts}
        self._next_growth()

    def _period_changed(self) -> None:
        self._draw_gap()

    def _next_growth(self) -> None:
        """Where the period grows with the stream next: once it reaches ``starts``
        periods of positions (never without ``starts``, or at the ceiling)."""
        if self.starts is None or self.period >= self.ceiling:
            self._grows_at = None
        else:
            self._grows_at = max(math.ceil(self.starts * self.period), self.positions + 1)

    def _draw_gap(self) -> None:
        """The gap from the current position to the next start, drawn under the period
        (stopped where the period grows first)."""
        self._set_gap(geometric_gap(self.rng, 1.0 / self.period))

    def _set_gap(self, gap: int) -> None:
        grows_at = self._grows_at
        self._growing = grows_at is not None and self.positions + gap >= grows_at
        self.gap = grows_at - self.positions if grows_at is not None and self._growing else gap

    def _grow_here(self) -> bool:
        """The stream reached the position where the period grows (with the run): the
        sample is thinned to the new period, and whether this position starts a sample
        is drawn under it; if not, the gap to the next start is drawn from here."""
        with self._lock:
            self._thin(min(self.period * self.growth, self.ceiling))
            self.grown += 1
        first = geometric_gap(self.rng, 1.0 / self.period)  # 1: this position starts one
        if first == 1:
            return True
        self._set_gap(first - 1)
        return False

    def sample_bytes(self) -> int:
        """Bytes the sample takes (its two tables, their keys and counts): what the
        budget bounds, whatever the run's length."""
        size = sys.getsizeof(self.counts) + sys.getsizeof(self.kept_chance)
        for key, count in self.counts.items():
            size += sys.getsizeof(key) + sys.getsizeof(count)
        return size + sum(sys.getsizeof(chance) for chance in self.kept_chance.values())

    def snapshot(self) -> SampleSnapshot:
        """What the sample holds now (a copy: the sampler goes on)."""
        return SampleSnapshot(self.period, dict(self.counts), dict(self.kept_chance),
                              dict(self.lengths.probabilities), self.encoding,
                              self.positions, self.resamplings, self.budget)


class StreamState:
    """The windows one stream is filling."""

    def __init__(self, sampler: SubpathSampler) -> None:
        self.sampler = sampler
        self.windows: list[_Window] = []

    def close(self) -> None:
        """The stream ended: windows not filled are dropped (no complete subpath)."""
        self.windows = []

    def blocks_until_observed(self) -> int:
        """How many blocks :meth:`skip` may pass now without missing a start."""
        return 0 if self.windows else self.sampler.gap - 1

    def skip(self, count: int) -> None:
        """``count`` blocks went by unobserved; they must start no sample and fill no
        window (``count <= blocks_until_observed()``)."""
        if count > self.blocks_until_observed():
            raise ValueError("skipped past a sample start or through an open window")
        self.sampler.gap -= count
        self.sampler.positions += count

    def blocks(self, blocks: Sequence[Hashable]) -> None:
        """The next blocks of the stream: as :meth:`block` for each, in bulk while
        they start no sample and fill no window."""
        sampler = self.sampler
        at, count = 0, len(blocks)
        while at < count:
            if not self.windows:
                passed = min(sampler.gap - 1, count - at)  # before the next start
                if passed > 0:
                    sampler.gap -= passed
                    sampler.positions += passed
                    at += passed
                    continue
            self.block(blocks[at])
            at += 1

    def block(self, block: Hashable) -> None:
        """The next block of the stream."""
        sampler = self.sampler
        sampler.positions += 1
        sampler.gap -= 1
        if sampler.gap <= 0 and (not sampler._growing or sampler._grow_here()):
            self.windows.append(_Window(sampler.lengths.choose(sampler.rng), sampler.period))
            sampler._draw_gap()
        if not self.windows:
            return
        done = []
        stops = sampler._stops
        for window in self.windows:
            window.blocks.append(block)
            filled = len(window.blocks)
            if filled == window.length:
                done.append(window)
            elif stops is not None and filled in stops:
                sampler._complete(window, tuple(window.blocks))
        for window in done:
            self.windows.remove(window)
            sampler._complete(window, window.blocks)


@dataclass(frozen=True)
class SampleSnapshot:
    """The concise sample at one moment, with what the estimates need."""

    period: float
    counts: dict[tuple[Hashable, ...], int]
    kept_chance: dict[tuple[Hashable, ...], float]
    length_chances: dict[int, float]
    encoding: str
    positions: int
    resamplings: int
    budget: int


class ExactSubpathCounter:
    """Every subpath of the lengths a distribution allows, counted at every position
    of the stream (``--exact``: for evaluation and tests). Counts a subpath once it
    is complete, as the sampler does.

    Blocks are buffered per stream and counted in bulk, at most every ``CHUNK``
    blocks: the windows of the longest length, from ``zip`` over shifted views of
    the buffer, are counted by :class:`collections.Counter` (in C), and each distinct
    one then adds its count to its shorter prefixes -- one tuple per position rather
    than a slice and a dictionary update per block and length in Python. Invariant:
    ``_counts`` holds, for every stream, the subpaths of every position whose longest
    window is complete; :attr:`counts` adds the shorter ones of the positions still
    waiting for it, so that it holds every window that ended so far."""

    CHUNK = 1 << 14

    def __init__(self, lengths: Sequence[int], encoding: str = "exact") -> None:
        self.lengths = sorted(set(lengths))
        self.encoding = encoding
        self._counts: Counter[tuple[Hashable, ...]] = Counter()
        #: the blocks from the first position whose longest window is not complete
        self._buffer: list[Hashable] = []
        self._family: list[ExactSubpathCounter] = [self]
        self.positions = 0

    @property
    def counts(self) -> Counter[tuple[Hashable, ...]]:
        """Subpath -> times it occurred so far, in every stream (a new mapping)."""
        for member in self._family:
            member._flush()
        found = Counter(self._counts)
        for member in self._family:
            member._add_waiting(found)
        return found

    def stream(self) -> ExactSubpathCounter:
        """A counter for another stream, adding into the same counts."""
        other = ExactSubpathCounter(self.lengths, self.encoding)
        other._counts = self._counts
        other._family = self._family
        self._family.append(other)
        return other

    def close(self) -> None:
        """The stream ended: its last positions' windows are as complete as they get."""
        self._flush()
        self._add_waiting(self._counts)
        self._buffer = []
        if self is not self._family[0] and self in self._family:
            self._family.remove(self)

    def block(self, block: Hashable) -> None:
        self.blocks((block,))

    def blocks(self, blocks: Sequence[Hashable]) -> None:
        self.positions += len(blocks)
        self._buffer.extend(blocks)
        if len(self._buffer) >= self.CHUNK:
            self._flush()

    def _key(self, blocks: tuple[Hashable, ...]) -> tuple[Hashable, ...]:
        return blocks if self.encoding == "exact" else encode(blocks, self.encoding)

    def _flush(self) -> None:
        """Count the positions whose longest window is complete."""
        buffer = self._buffer
        longest = self.lengths[-1]
        complete = len(buffer) - longest + 1
        if complete <= 0:
            return
        counts = self._counts
        for window, times in _long_windows(buffer, longest, complete):
            for length in self.lengths:
                key = self._key(window[:length])
                counts[key] = counts.get(key, 0) + times
        del buffer[:complete]

    def _add_waiting(self, counts: dict[tuple[Hashable, ...], int]) -> None:
        """The windows, shorter than the longest, of the positions still waiting."""
        buffer = self._buffer
        for start in range(len(buffer)):
            for length in self.lengths:
                if start + length > len(buffer):
                    break
                key = self._key(tuple(buffer[start:start + length]))
                counts[key] = counts.get(key, 0) + 1



def _long_windows(buffer: list[Hashable], longest: int, complete: int
                  ) -> Iterable[tuple[tuple[Hashable, ...], int]]:
    """Each distinct window of ``longest`` blocks starting at the first ``complete``
    positions of ``buffer``, with how many times it starts there, counted by
    :class:`collections.Counter` in C. When the blocks are small non-negative ints
    (the stream's ids), the windows are slices of their bytes packed in an
    :class:`array.array`: hashing a 64-byte slice costs about half what building
    and hashing a 32-tuple does. Other blocks are counted as tuples."""
    # (Any: ints, if the try below succeeds -- max() and array() are what find out)
    ids: Any = buffer
    try:
        code = "H" if max(ids) < 1 << 16 else "I"  # TypeError: not ints
        packed = array.array(code, ids)  # OverflowError: negative, or too big
    except (TypeError, OverflowError):
        windows = Counter(zip(*(itertools.islice(buffer, i, None) for i in range(longest)),
                              strict=False))  # windows end where the shortest view does
        return windows.items()
    size = packed.itemsize
    data, width = packed.tobytes(), longest * size
    counted = Counter([data[at:at + width] for at in range(0, complete * size, size)])
    return [(tuple(array.array(code, window)), times) for window, times in counted.items()]
