"""Estimates of subpath counts from OSP's concise sample, with Chernoff error bounds
(Oren 2002, §2.3.6 and §5.1).

A subpath of length ``L`` that occurred ``N`` times was sampled ``x`` times with
``E[x] = N * P(L) * keep / period`` (:mod:`pathprof.runtime.subpaths`), so
``N ≈ x * period / (P(L) * keep)``.

Two bounds are given. The thesis's relative error ``ε = sqrt(6 ln(1/(1-c)) / x)``
(eq. 2.14; 2 for 6 one-sided, eq. 2.15) takes the sampled count ``x`` for ``E[x]``,
which is fair when ``x`` is large but not for a rare subpath sampled once by luck
(its ``ε`` says 424 % where the estimate may be 30 times the count). So the interval
``low..high`` inverts the multiplicative Chernoff bounds instead, valid for every
``x``: ``E[x]`` is kept in it unless ``x`` would be that far in a tail, which
``Pr(x >= (1+ε)E) <= exp(-ε²E/(2+ε))`` and ``Pr(x <= (1-ε)E) <= exp(-ε²E/2)`` bound
by ``(1-c)/2`` each (``1-c`` for the one-sided lower bound).

Ranking: by the lower bound, not the estimate (``weight``). A subpath sampled once
or twice by luck has an estimate as high as one sampled a hundred times, but a
lower bound near 0: ranked by what it ran *at least*, it cannot top the table.

Cycles (:func:`fold_cycles`): a subpath that is two or more turns of one shorter
sequence (``8 → 9 → 8 → 9``: a two-block loop) is shown once, as that cycle, at its
best-ranked subpath; its other repetitions and its single turns, at any rotation,
are folded into that row, so one loop cannot fill the table.

Invariant: the estimate is unbiased (its mean over the sampler's random choices is
the exact count), and the exact count lies in ``low..high`` with probability at
least the confidence.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, replace

from pathprof.runtime.subpaths import SampleSnapshot

__all__ = ["RANKINGS", "SubpathEstimate", "cycle_of", "estimate_subpaths",
           "expectation_bounds", "fold_cycles", "rank_agreement", "relative_error"]

#: how estimates are ordered: by count, by count x length (§5.1.1), or by count x the
#: mean a-priori cost of the subpath's blocks (§5.1.2)
RANKINGS = ("count", "length", "cost")


@dataclass(frozen=True)
class SubpathEstimate:
    blocks: tuple[Hashable, ...]  #: the subpath as the sampler encoded it
    sampled: int  #: times it is in the sample
    estimate: float  #: estimated occurrences in the stream so far
    error: float  #: the thesis's relative error at the confidence asked for
    low: float  #: the count is at least this, at the confidence asked for
    high: float  #: and at most this (inf with a one-sided bound)
    weight: float  #: what it is ranked by
    #: with :func:`fold_cycles`: how many turns of its cycle the subpath is (None:
    #: not a repetition), and how many other subpaths of that cycle it stands for
    turns: float | None = None
    folded: int = 0

    @property
    def length(self) -> int:
        return len(self.blocks)

    def holds(self, count: float) -> bool:
        """Whether ``count`` lies within the bounds."""
        return self.low <= count <= self.high


def relative_error(sampled: int, confidence: float = 0.95, *, one_sided: bool = False
                   ) -> float:
    """Chernoff's ε for a subpath sampled ``sampled`` times (Oren eq. 2.14, 2.15)."""
    if not 0.0 < confidence < 1.0:
        raise ValueError("the confidence is a probability strictly between 0 and 1")
    if sampled <= 0:
        return math.inf
    return math.sqrt((2.0 if one_sided else 6.0) * math.log(1.0 / (1.0 - confidence))
                     / sampled)


def expectation_bounds(sampled: int, confidence: float = 0.95, *, one_sided: bool = False
                       ) -> tuple[float, float]:
    """The values of ``E[x]`` that a sampled count ``sampled`` does not rule out at
    ``confidence``, by the multiplicative Chernoff bounds (module docstring)."""
    if not 0.0 < confidence < 1.0:
        raise ValueError("the confidence is a probability strictly between 0 and 1")
    x = float(sampled)
    a = math.log((1.0 if one_sided else 2.0) / (1.0 - confidence))
    # upper tail: (x - E)^2 <= a (x + E)  ->  E >= low
    low = max(0.0, (2 * x + a - math.sqrt(a * a + 8 * a * x)) / 2) if x > 0 else 0.0
    if one_sided:
        return low, math.inf
    # lower tail: (E - x)^2 <= 2 a E  ->  E <= high
    high = x + a + math.sqrt(a * a + 2 * a * x)
    return low, high


def estimate_subpaths(snapshot: SampleSnapshot, *, confidence: float = 0.95,
                      one_sided: bool = False, rank: str = "count", top: int | None = None,
                      threshold: float | None = None) -> list[SubpathEstimate]:
    """The subpaths in ``snapshot`` with their estimated counts, hottest first by
    ``rank`` of their lower bounds (module docstring); the first ``top`` of them, or
    those estimated at least ``threshold``."""
    if rank not in RANKINGS:
        raise ValueError(f"unknown ranking {rank!r}; choose from {', '.join(RANKINGS)}")
    found = []
    for blocks, sampled in snapshot.counts.items():
        chance = snapshot.length_chances.get(len(blocks))
        if not chance:
            continue
        keep = snapshot.kept_chance.get(blocks, 1.0)
        estimate = sampled * snapshot.period / (chance * keep)
        if threshold is not None and estimate < threshold:
            continue
        scale = snapshot.period / (chance * keep)
        low, high = expectation_bounds(sampled, confidence, one_sided=one_sided)
        weight = low * scale
        if rank == "length":
            weight *= len(blocks)
        elif rank == "cost":
            weight *= keep
        found.append(SubpathEstimate(blocks, sampled, estimate,
                                     relative_error(sampled, confidence, one_sided=one_sided),
                                     low * scale, high * scale, weight))
    found.sort(key=lambda e: (-e.weight, -e.estimate, -e.sampled, repr(e.blocks)))
    return found[:top] if top is not None else found


def cycle_of(blocks: Sequence[Hashable]) -> tuple[tuple[Hashable, ...], float] | None:
    """``(one turn, turns)`` when ``blocks`` repeats a shorter sequence at least twice
    (``a b a b a``: ``(a, b)``, 2.5 turns), by its shortest period; else None."""
    size = len(blocks)
    for period in range(1, size // 2 + 1):
        if all(blocks[i] == blocks[i + period] for i in range(size - period)):
            return tuple(blocks[:period]), size / period
    return None


def _cycle_key(turn: Sequence[Hashable]) -> tuple[Hashable, ...]:
    """One key for a cycle whichever block it is entered at (its smallest rotation)."""
    rotations = [tuple(turn[i:]) + tuple(turn[:i]) for i in range(len(turn))]
    return min(rotations, key=lambda r: tuple(map(repr, r)))


def fold_cycles(estimates: Sequence[SubpathEstimate]) -> list[SubpathEstimate]:
    """``estimates`` (ranked) with each cycle shown once (module docstring): the
    cycle's best-ranked subpath keeps its place, with ``turns`` and ``folded`` set;
    its later ones are left out. A cycle's subpaths are its repetitions (two turns or
    more, at any rotation) and, once a repetition is among the estimates, its single
    turns at any rotation (``2 → 3`` and ``3 → 2`` of the loop ``2 → 3 → 2 → 3``).
    Other subpaths keep their places and order."""
    cycles = set()
    for estimate in estimates:
        found = cycle_of(estimate.blocks)
        if found is not None:
            cycles.add(_cycle_key(found[0]))
    if not cycles:
        return list(estimates)
    shown: dict[tuple[Hashable, ...], int] = {}
    kept: list[SubpathEstimate] = []
    for estimate in estimates:
        found = cycle_of(estimate.blocks)
        if found is not None:
            key, turns = _cycle_key(found[0]), found[1]
        else:
            key, turns = _cycle_key(estimate.blocks), 1.0
            if key not in cycles:
                kept.append(estimate)
                continue
        if key in shown:
            position = shown[key]
            kept[position] = replace(kept[position], folded=kept[position].folded + 1)
            continue
        shown[key] = len(kept)
        kept.append(replace(estimate, turns=turns))
    return kept


def rank_agreement(estimated: Sequence[tuple[Hashable, ...]],
                   exact: Mapping[tuple[Hashable, ...], int],
                   k: int = 5
                   ) -> list[int | None]:
    """For the ``k`` hottest subpaths of ``exact``, their rank (1-based) in
    ``estimated`` (None: not there): the thesis's Table 4.11."""
    hottest = sorted(exact, key=lambda key: (-exact[key], repr(key)))[:k]
    position = {key: i + 1 for i, key in enumerate(estimated)}
    return [position.get(key) for key in hottest]
