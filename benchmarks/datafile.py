"""Data-file write time: how long pathprof takes to save a measured profile.

``python datafile.py DATA_FILE`` reads a data file and writes its measurement again
to a new file five times, printing as JSON the functions and recorded paths it holds
and the fastest write in milliseconds (``store.write``: SQLite, one transaction,
atomic replace — what ``pathprof run`` does at exit).
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

from pathprof.data import store


def main(path: str) -> dict[str, float]:
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


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1])))
