"""Cost of the shapes probe code can take, per call of a one-line function.

``python benchmarks/probe_shapes.py`` defines a plain function ``f(x): return x + 1``
and variants carrying one piece of probe code each, calls each variant 200,000 times
per round, interleaved over 40 rounds, and prints the fastest round's nanoseconds per
call and the difference to the plain function. The variants are module-level
functions, like instrumented code (counters are module globals).
"""

from __future__ import annotations

import sys
import time
import types

VARIANTS = '''
import itertools
c = [100000] * 4
cf = [100000.0] * 4
k = itertools.count()
Q = [1 << 29]  # OSP's countdown, far from a sample (never reaches 0 here)
L = (3, 3, 3, 3)  # a function's path lengths

def plain(x):
    return x + 1

def init(x):                   # the register's initialisation at entry
    r = 0
    return x + 1

def temporary(x):              # the return value kept in a temporary
    v = x + 1
    return v

def wrapped(x):                # the observer's try (zero-cost in 3.11+)
    try:
        return x + 1
    except ValueError:
        pass

def count(x):                  # c[k] += 1, the counter increment
    c[0] += 1
    return x + 1

def count_split(x):            # c[k] = c[k] + 1
    c[0] = c[0] + 1
    return x + 1

def count_float(x):            # float counters (a free list on 3.11)
    cf[0] += 1.0
    return x + 1

def count_next(x):             # next(itertools.count())
    next(k)
    return x + 1

def before(x):                 # pathprof before issue 5: init, temporary, count, reset
    r = 0
    try:
        v = x + 1
        c[0] += 1
        r = None
        return v
    except ValueError:
        pass

def after(x):                  # pathprof now, for a function counting with a constant
    try:
        c[0] += 1
        return x + 1
    except ValueError:
        pass

def countdown_before(x):       # pathprof hot before issue 51: the list read twice
    r = 0
    Q[0] -= L[r + 1]
    if Q[0] <= 0:
        Q[0] = 1 << 29
    return x + 1

def countdown_kept(x):         # issue 51: the countdown kept in a local as stored
    r = 0
    Q[0] = q = Q[0] - L[r + 1]
    if q <= 0:
        Q[0] = 1 << 29
    return x + 1

def countdown_folded(x):       # issue 51: and the one length of the paths ending here
    Q[0] = q = Q[0] - 3
    if q <= 0:
        Q[0] = 1 << 29
    return x + 1
'''

NAMES = ["plain", "init", "temporary", "wrapped", "count", "count_split", "count_float",
         "count_next", "before", "after", "countdown_before", "countdown_kept",
         "countdown_folded"]
CALLS = 50_000  # four calls each


def main() -> None:
    module = types.ModuleType("probe_shapes_variants")
    exec(VARIANTS, module.__dict__)
    for name in NAMES:
        exec(f"def drive_{name}(n):\n    for _ in range(n):\n"
             f"        {name}(1); {name}(2); {name}(3); {name}(4)\n", module.__dict__)
    drivers = {name: module.__dict__[f"drive_{name}"] for name in NAMES}
    best = dict.fromkeys(NAMES, float("inf"))
    for _ in range(40):
        for name, drive in drivers.items():
            start = time.perf_counter()
            drive(CALLS)
            best[name] = min(best[name], time.perf_counter() - start)
    per_call = {name: best[name] / (4 * CALLS) * 1e9 for name in NAMES}
    print(f"Python {sys.version.split()[0]}: ns per call (fastest of 40 rounds)")
    for name in NAMES:
        print(f"  {name:12} {per_call[name]:6.1f}  ({per_call[name] - per_call['plain']:+.1f})")


if __name__ == "__main__":
    main()
