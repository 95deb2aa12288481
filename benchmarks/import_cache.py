"""Import cost of instrumented modules: first import (analysis) vs warm cache vs plain.

Copies some large pure-Python standard-library modules into a temporary directory as
top-level modules, then imports them all in fresh processes: plainly (with warm .pyc),
instrumented with an empty cache, and instrumented with the cache warm. Prints ms per
1,000 source lines for each, and the ratios. Run: ``python benchmarks/import_cache.py``.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

MODULES = ["argparse", "difflib", "textwrap", "fractions", "statistics", "shlex",
           "ipaddress", "calendar", "tarfile", "pydoc", "inspect", "typing"]

DRIVER = """
import sys, time
sys.path.insert(0, {dir!r})
names = {names!r}
if {instrument}:
    from pathprof.measure.importhook import ImportHook, InstrumentOptions
    from pathprof.python.selection import Selection
    hook = ImportHook(Selection(source=[{dir!r}]), InstrumentOptions())
    hook.install()
t = time.perf_counter()
for name in names:
    __import__("pp_bench_" + name)
print(time.perf_counter() - t)
"""


def run(directory: Path, instrument: bool) -> float:
    code = DRIVER.format(dir=str(directory), names=MODULES, instrument=instrument)
    # Both sides may write and read their caches (plain .pyc files included).
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env=env)
    return float(out.stdout)


def main() -> None:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        lines = 0
        for name in MODULES:
            source = stdlib / f"{name}.py"
            shutil.copy(source, directory / f"pp_bench_{name}.py")
            lines += len(source.read_text(encoding="utf-8").splitlines())
        run(directory, False)  # write the plain .pyc files
        plain, cold, warm = [], [], []
        for _ in range(5):
            plain.append(run(directory, False))
            for cached in (directory / "__pycache__").glob("*.pathprof-*.pyc"):
                cached.unlink()
            cold.append(run(directory, True))
            warm.append(run(directory, True))
    per_k = {name: statistics.median(times) * 1e3 / (lines / 1000)
             for name, times in (("plain", plain), ("cold", cold), ("warm", warm))}
    result = {
        "python": sys.version.split()[0],
        "modules": len(MODULES),
        "source_lines": lines,
        "ms_per_1000_lines": per_k,
        "warm_over_plain": per_k["warm"] / per_k["plain"],
        "cold_over_warm": per_k["cold"] / per_k["warm"],
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
