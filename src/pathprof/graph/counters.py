"""Which counter table a function gets: an array indexed by path number, or a hash.

Ball-Larus 1996, §5.2: an array of counters when a routine's paths are few, a hash
table (space proportional to the paths that run) when they are many.
"""

from __future__ import annotations

import enum

__all__ = ["ARRAY_THRESHOLD", "CounterKind", "counter_kind"]

# Measured with `python benchmarks/counter_kind.py` on this project's 2-core machine
# (2026-11-23). One `counts[r] += 1` costs 48 / 49 / 32 ns on a list and 94 / 63 / 70 ns
# on a defaultdict(int) (Python 3.11 / 3.12 / 3.13; Counter: 157-212 ns, so not used).
# A list of N counters costs once: allocation (N=4096: 3.7-8.8 us), the flush-time scan
# for non-zero entries (N=4096: 89-166 us) and 8*N bytes (N=4096: 32 KiB). At N=4096 the
# one-off cost (~175 us at worst) is repaid after roughly 6,000 increments at the
# ~30 ns a list saves per increment, and memory stays at most 32 KiB per function;
# at N=65536 it would take ~2 ms and 512 KiB per function. Hence 4096.
ARRAY_THRESHOLD = 4096


class CounterKind(enum.Enum):
    """Storage for one function's path counters."""

    ARRAY = "array"  #: a list of ``num_paths`` ints, indexed by path number
    HASH = "hash"  #: a ``defaultdict(int)`` keyed by path number


def counter_kind(num_paths: int, threshold: int = ARRAY_THRESHOLD) -> CounterKind:
    """Array when ``num_paths <= threshold``, hash otherwise.

    >>> counter_kind(12), counter_kind(10**9)
    (<CounterKind.ARRAY: 'array'>, <CounterKind.HASH: 'hash'>)
    """
    return CounterKind.ARRAY if num_paths <= threshold else CounterKind.HASH
