"""Data-file size and write time: what saving a measured profile costs.

``python datafile.py DATA_FILE`` reads a data file and writes its measurement again
to a new file five times, printing as JSON the functions and recorded paths it holds
and the fastest write in milliseconds (``store.write``: SQLite, one transaction,
atomic replace — what ``pathprof run`` does at exit).

``python datafile.py --run [--source SRC] [--repeats N] SCRIPT`` times real runs:
``pathprof run [--source SRC] SCRIPT`` in fresh processes, cache warm (one run first,
not counted), each of three kinds, interleaved, ``N`` times (default 3):

- ``first``: no data file there (a fresh checkout in CI);
- ``replace``: the data file of the run before it there (a run again, the usual case);
- ``append``: the same with ``--append``.

For each kind it prints the medians of the whole process's wall time, of the time
spent in ``store.write`` (wrapped inside that process) and its share of the run, and
the data file's size; then the size of each table and index of the ``first`` file
(SQLite's ``dbstat``). ``--json`` prints it all as JSON instead. To compare with
another checkout, run the same command with ``PYTHONPATH=OTHER/src``. Where Python
may not write bytecode (``PYTHONDONTWRITEBYTECODE``) the runs are made without it,
so that the instrumented-code cache is warm. Examples (docs/benchmarks.md):

    python benchmarks/datafile.py --run --source networkx nx_import.py   # import networkx
    python benchmarks/datafile.py --run examples/demo/orders.py
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

#: Runs ``pathprof run`` as ``python -m pathprof`` does, with ``store.write`` timed:
#: each call prints its seconds on stderr, on a line of its own after MARK.
MARK = "pathprof-datafile-benchmark:"
DRIVER = """
import runpy, sys, time
from pathprof.data import store
write = store.write
def timed(*args, **kwargs):
    start = time.perf_counter()
    try:
        return write(*args, **kwargs)
    finally:
        sys.__stderr__.write(f"\\n{MARK}{time.perf_counter() - start}\\n")
store.write = timed
sys.argv = ["pathprof", *sys.argv[1:]]
runpy.run_module("pathprof", run_name="__main__", alter_sys=True)
""".replace("{MARK}", MARK)

KINDS = ("first", "replace", "append")


def rewrite(path: str) -> dict[str, float]:
    """Read ``path`` and write its measurement again five times: the fastest write."""
    from pathprof.data import store

    measurement = store.read(path)
    best = float("inf")
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(5):
            target = str(Path(tmp) / f"copy{i}.pathprof")
            start = time.perf_counter()
            store.write(target, measurement.runs, measurement.functions, measurement.sources)
            best = min(best, time.perf_counter() - start)
    return {"functions": len(measurement.functions),
            "paths": sum(len(f.counts) + len(f.cuts) for f in measurement.functions),
            "write_ms": round(best * 1e3, 2)}


def _environment() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _run(data_file: Path, source: list[str], script: str, append: bool
         ) -> tuple[float, float]:
    """One ``pathprof run``: (wall seconds of the process, seconds in store.write)."""
    args = ["run", "--data-file", str(data_file), *(["--append"] if append else [])]
    for entry in source:
        args += ["--source", entry]
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", DRIVER, *args, script],
                          capture_output=True, text=True, env=_environment())
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"pathprof run failed ({done.returncode}):\n{done.stderr}")
    writes = [float(line[len(MARK):]) for line in done.stderr.splitlines()
              if line.startswith(MARK)]
    return wall, sum(writes)


def table_sizes(path: Path) -> dict[str, int]:
    """Bytes of pages of each table and index (SQLite's dbstat), largest first."""
    db = sqlite3.connect(path)
    try:
        rows = db.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name "
                          "ORDER BY 2 DESC").fetchall()
    finally:
        db.close()
    return dict(rows)


def runs(script: str, source: list[str], repeats: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "bench.pathprof"
        _run(data, source, script, False)  # the cache warm
        measured: dict[str, list[tuple[float, float, int]]] = {kind: [] for kind in KINDS}
        tables: dict[str, int] = {}
        for _ in range(repeats):
            for kind in KINDS:
                if kind == "first":
                    data.unlink(missing_ok=True)
                elif kind == "replace" and not data.exists():
                    _run(data, source, script, False)
                wall, write = _run(data, source, script, kind == "append")
                measured[kind].append((wall, write, data.stat().st_size))
                if kind == "first":
                    tables = table_sizes(data)
                if kind == "append":
                    data.unlink()  # the next replace replaces a file of one run
    result: dict[str, Any] = {"script": script, "source": source, "repeats": repeats,
                              "python": sys.version.split()[0], "tables": tables}
    for kind, values in measured.items():
        wall = statistics.median(v[0] for v in values)
        write = statistics.median(v[1] for v in values)
        result[kind] = {"run_s": round(wall, 3), "write_ms": round(write * 1e3, 1),
                        "write_share": round(write / wall, 4),
                        "size_bytes": int(statistics.median(v[2] for v in values))}
    return result


def show(result: dict[str, Any]) -> None:
    source = " ".join(f"--source {s}" for s in result["source"])
    print(f"pathprof run {source} {result['script']}  (Python {result['python']}, "
          f"medians of {result['repeats']})")
    print(f"{'data file':<10} {'run s':>7} {'write ms':>9} {'share':>7} {'size':>12}")
    for kind in KINDS:
        row = result[kind]
        print(f"{kind:<10} {row['run_s']:>7.2f} {row['write_ms']:>9.1f} "
              f"{row['write_share']:>7.1%} {row['size_bytes']:>12,}")
    print("\npages of each table and index of the 'first' file:")
    for name, size in result["tables"].items():
        print(f"  {name:<32} {size:>12,}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("target", help="a data file, or with --run a script")
    parser.add_argument("--run", action="store_true", help="time runs of the script")
    parser.add_argument("--source", action="append", default=[])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if not args.run:
        print(json.dumps(rewrite(args.target)))
        return
    result = runs(args.target, args.source, args.repeats)
    if args.json:
        print(json.dumps(result))
    else:
        show(result)


if __name__ == "__main__":
    main()
