"""Measure the two counter kinds to choose the array/hash threshold.

Run: ``python benchmarks/counter_kind.py``. Prints, for this Python, the cost of one
``counts[r] += 1`` on a list and on a ``defaultdict(int)`` (and on ``Counter`` and
``dict.get`` for comparison), and the one-off costs a list of N counters adds:
allocation at registration, the scan for non-zero counts at flush, and memory.
The threshold in ``pathprof/graph/counters.py`` cites the figures this printed.
"""

from __future__ import annotations

import sys
import timeit

LOOPS = 3_000_000


def per_op_ns(stmt: str, setup: str) -> float:
    empty = min(timeit.repeat("pass", setup=setup, number=LOOPS, repeat=5))
    full = min(timeit.repeat(stmt, setup=setup, number=LOOPS, repeat=5))
    return (full - empty) / LOOPS * 1e9


def main() -> None:
    print(f"Python {sys.version.split()[0]}")
    kinds = {
        "list": "c = [0] * 4096; r = 1234",
        "defaultdict(int)": "import collections; c = collections.defaultdict(int); r = 1234",
        "Counter": "import collections; c = collections.Counter(); r = 1234",
    }
    for name, setup in kinds.items():
        print(f"  increment, {name:17}: {per_op_ns('c[r] += 1', setup):6.1f} ns")
    print(f"  increment, dict.get         : "
          f"{per_op_ns('c[r] = c.get(r, 0) + 1', 'c = {}; r = 1234'):6.1f} ns")
    for n in (256, 1024, 4096, 16384, 65536):
        setup = f"import itertools; n = {n}; c = [0] * n; c[5] = 3"
        alloc = min(timeit.repeat("[0] * n", setup=setup, number=500, repeat=5)) / 500 * 1e6
        scan_stmt = "[(i, c[i]) for i in itertools.compress(range(n), c)]"
        scan = min(timeit.repeat(scan_stmt, setup=setup, number=500, repeat=5)) / 500 * 1e6
        print(f"  N={n:6}: allocate {alloc:7.2f} us, flush scan {scan:7.2f} us, "
              f"memory {n * 8 // 1024:4} KiB")


if __name__ == "__main__":
    main()
