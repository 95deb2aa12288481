"""Where a measured test session's time goes, phase by phase, beside coverage.py's.

``python benchmarks/phases.py --python VENV/bin/python --dir SUITE --package PKG
[--rounds 3] -- PYTEST ARGS`` runs the suite in ``SUITE`` with that environment's
Python, interleaving, round after round: plain pytest, ``--cov=PKG --cov-branch``,
``--pathprof=PKG`` with an empty instrumentation cache (first run: the cache directory
and pathprof's entries in the suite's ``__pycache__`` directories removed) and again with
the cache the first run wrote (warm). Every run goes through ``benchmarks/phase_probe.py``,
which times pathprof's parts from outside the product. It prints, per mode, the
median CPU seconds of the whole process and its ratio to plain, and for pathprof where
the extra CPU time goes:

- instrumenting: the import hook's ``get_code`` (cache reads included) and the modules
  instrumented in place;
- counting: what is left of the session's extra time (the tests running measured code);
- reports: the end-of-session reports; saving: the data file;
- exit: what the process takes after ``pytest.main`` returns, beyond plain's.

CPU time (``os.wait4``'s rusage of the process), so the machine's load moves it less
than wall time; read the ratios within one run. ``PYTHONDONTWRITEBYTECODE`` is unset
(every mode uses its bytecode caches) and ``PYTHONHASHSEED=0``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROBE = Path(__file__).resolve().parent / "phase_probe.py"
MODES = ("plain", "cov", "pathprof-first", "pathprof-warm")


def run_once(python: str, directory: str, args: list[str], mode: str, package: str,
             cache: str, scratch: str) -> dict[str, float]:
    out = os.path.join(scratch, f"{mode}.json")
    extra: list[str] = []
    if mode == "cov":
        extra = [f"--cov={package}", "--cov-branch", "--cov-report="]
    elif mode.startswith("pathprof"):
        extra = [f"--pathprof={package}", "--pathprof-data-file",
                 os.path.join(scratch, ".pathprof")]
        if mode == "pathprof-first":
            shutil.rmtree(cache, ignore_errors=True)
            # (entries beside the sources too: where bytecode is written, pathprof
            # writes its entries in __pycache__, as Python does)
            for entry in Path(directory).rglob("__pycache__/*.pathprof-*.pyc"):
                entry.unlink(missing_ok=True)
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONDONTWRITEBYTECODE",) and not k.startswith("PYTEST_")}
    env.update(PYTHONHASHSEED="0", PATHPROF_CACHE_DIR=cache, COLUMNS="120")
    started = time.perf_counter()
    process = subprocess.Popen([python, str(PROBE), out, "-m", "pytest", "-q",
                                "-p", "no:cacheprovider", *extra, *args],
                               cwd=directory, env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    _pid, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    with open(out, encoding="utf-8") as f:
        probe = json.load(f)
    result = {"cpu": usage.ru_utime + usage.ru_stime, "wall": wall,
              "status": os.waitstatus_to_exitcode(status),
              "session_cpu": probe["session_cpu"], "gc_objects": probe["gc_objects"],
              "max_rss_kb": usage.ru_maxrss}
    for name, phase in probe["phases"].items():
        result[name] = phase["cpu"]
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", required=True)
    parser.add_argument("--dir", required=True)
    parser.add_argument("--package", required=True)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--json", default=None, help="write the medians here too")
    parser.add_argument("pytest_args", nargs="*")
    options = parser.parse_args()
    modes = options.modes.split(",")
    scratch = tempfile.mkdtemp(prefix="pathprof-phases-")
    cache = os.path.join(scratch, "cache")
    results: dict[str, list[dict[str, float]]] = {mode: [] for mode in modes}
    try:
        for _ in range(options.rounds):
            for mode in modes:
                results[mode].append(run_once(options.python, options.dir,
                                              options.pytest_args, mode, options.package,
                                              cache, scratch))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    def median(mode: str, key: str) -> float:
        return statistics.median(r.get(key, 0.0) for r in results[mode])

    table = {}
    plain = median("plain", "cpu") if "plain" in modes else None
    plain_session = median("plain", "session_cpu") if "plain" in modes else 0.0
    plain_exit = plain - plain_session if plain is not None else 0.0
    print(f"load {os.getloadavg()[0]:.2f}; CPU seconds, medians of {options.rounds}")
    for mode in modes:
        cpu = median(mode, "cpu")
        row = {"cpu": cpu, "ratio": cpu / plain if plain else None,
               "status": sorted({r["status"] for r in results[mode]}),
               "gc_objects": median(mode, "gc_objects"),
               "max_rss_mb": median(mode, "max_rss_kb") / 1024}
        line = f"{mode:16} {cpu:7.2f} s"
        if plain:
            line += f"  {cpu / plain:5.2f}x"
        if mode.startswith("pathprof") and plain is not None:
            instrumenting = median(mode, "instrumenting") + median(mode, "in place")
            reports, saving = median(mode, "reports"), median(mode, "saving")
            session = median(mode, "session_cpu")
            exit_extra = (cpu - session) - plain_exit
            counting = session - plain_session - instrumenting - reports - saving
            row.update(instrumenting=instrumenting, counting=counting, reports=reports,
                       saving=saving, exit=exit_extra)
            extra = instrumenting + counting + reports + saving + exit_extra
            parts = ", ".join(f"{name} {value:.2f} s ({value / extra:.0%})"
                              for name, value in (("instrumenting", instrumenting),
                                                  ("counting", counting),
                                                  ("reports", reports),
                                                  ("saving", saving), ("exit", exit_extra)))
            line += f"  extra {extra:.2f} s: {parts}"
        line += f"  gc objects {row['gc_objects']:,.0f}, max RSS {row['max_rss_mb']:.0f} MB"
        print(line)
        table[mode] = row
    if options.json:
        Path(options.json).write_text(json.dumps(table, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
