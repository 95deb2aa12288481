"""What observing costs per event under ``pathprof hot --exact`` (every block
observed, every subpath counted): a loop whose iterations end one path each and
call nothing, and a loop whose iterations call an instrumented function once.

``python benchmarks/osp_events.py``: each program plain, under ``pathprof hot``
at the default settings and under ``--exact``, best of 3 of the program's own timed
loop; the cost per iteration is (``--exact`` - plain) / iterations. Run it with
``PYTHONPATH=<another tree>/src`` to time another revision of pathprof.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

#: a loop of path ends only: each iteration is one path of two blocks
PATH_ENDS = '''
import time
def spin(n):
    t = 0
    for i in range(n):
        if i & 1:
            t += i
        else:
            t -= 1
    return t
started = time.perf_counter(); spin(ITERATIONS); print("SECONDS", time.perf_counter() - started)
'''
#: a loop of calls: each iteration calls step (one path) and ends a path of its own
CALLS = '''
import time
def step(i):
    return i % 7

def total(n):
    t = 0
    for i in range(n):
        t += step(i)
    return t
started = time.perf_counter(); total(ITERATIONS); print("SECONDS", time.perf_counter() - started)
'''


def _seconds(source: str, iterations: int, mode: str, directory: Path) -> float:
    program = directory / f"events_{mode}.py"
    program.write_text(source.replace("ITERATIONS", str(iterations)), encoding="utf-8")
    command = [sys.executable, str(program)] if mode == "plain" else [
        sys.executable, "-m", "pathprof", "hot", "--no-live", "--json", str(directory / "o.json"),
        *(["--exact"] if mode == "exact" else []), str(program)]
    done = subprocess.run(command, capture_output=True, text=True, cwd=directory, check=True)
    line = next(line for line in done.stdout.splitlines() if line.startswith("SECONDS"))
    return float(line.split()[1])


def main() -> None:
    print("| loop | iterations | plain (s) | default | --exact | --exact - plain, per iteration |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    with tempfile.TemporaryDirectory() as tmp:
        for name, source, iterations in (("path ends only", PATH_ENDS, 300_000),
                                         ("one call each", CALLS, 100_000)):
            best = {mode: min(_seconds(source, iterations, mode, Path(tmp)) for _ in range(3))
                    for mode in ("plain", "default", "exact")}
            per = (best["exact"] - best["plain"]) / iterations * 1e6
            print(f"| {name} | {iterations:,} | {best['plain']:.3f} | "
                  f"{best['default'] / best['plain']:.1f}x | {best['exact'] / best['plain']:.1f}x"
                  f" | {per:.2f} µs |", flush=True)


if __name__ == "__main__":
    main()
