"""Overhead of pathprof (path and edge mode) and coverage.py --branch on pyperformance code.

Run: ``python benchmarks/overhead.py [--repeats 5] [--out /tmp] [--workloads richards,go]``
(``make bench`` installs the ``bench`` extra first: pyperformance and coverage).

The workloads are pure-Python benchmarks of pyperformance, imported from the installed
package (``pyperformance/data-files/benchmarks/bm_<name>/run_benchmark.py``), never copied.
pyperf's Runner is not used, since it spawns worker processes: this script is its own
driver, ``overhead.py worker NAME LOOPS``, which puts the ``bm_<name>`` directory on
``sys.path``, imports ``run_benchmark`` and calls its workload function in-process for a
fixed amount of work, timing only that call with ``time.perf_counter`` (after all imports).
It prints its elapsed time and a digest of the workload's result as JSON.

Each workload is run in four modes, each a fresh process:

- ``plain``:    ``python overhead.py worker NAME LOOPS``
- ``path``:     ``python -m pathprof run --source BM_DIR overhead.py worker NAME LOOPS``
- ``edge``:     the same with ``--mode edge``
- ``coverage``: ``python -m coverage run --branch --source BM_DIR overhead.py worker ...``

Only the benchmark module is measured (``--source`` is its directory). Before timing,
each mode runs once with one loop: this fills pathprof's cache of instrumented code, checks
with ``pathprof report --format json`` (and ``coverage report``) that the benchmark's
functions were measured, and checks that every mode computes the plain run's result.
The timed runs are interleaved (plain, path, edge, coverage; plain, path, ...), each
mode's time is divided by the plain time of the same repeat, and the median of these
ratios over the repeats is reported, for the workload time and for the whole process's
wall time (start-up, instrumentation from the cache, and saving the data included); also
the fastest run of each mode over the fastest plain run, less sensitive to other load.

Results go to ``OUT/overhead-<python>-<date>.json``; a Markdown table goes to stdout.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import hashlib
import importlib.metadata
import importlib.util
import io
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

MODES = ("plain", "path", "edge", "coverage")
TIMES = "\N{MULTIPLICATION SIGN}"
MODE_TITLES = {"path": f"path {TIMES}", "edge": f"edge {TIMES}",
               "coverage": f"coverage --branch {TIMES}"}


# --- The driver: runs inside the measured process --------------------------------------

class _Runner:
    """Stands in for ``pyperf.Runner`` where a benchmark's setup code needs one."""

    def __init__(self) -> None:
        self.metadata: dict[str, Any] = {}
        self.calls: list[tuple[Callable[..., Any], tuple[Any, ...]]] = []

    def bench_func(self, name: str, func: Callable[..., Any], *args: Any) -> None:
        self.calls.append((func, args))


def _file_digest(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def _richards(m: types.ModuleType, loops: int, tmp: str) -> object:
    return m.Richards().run(loops)  # False if a checksum inside the benchmark fails


def _nbody(m: types.ModuleType, loops: int, tmp: str) -> object:
    m.bench_nbody(loops, m.DEFAULT_REFERENCE, m.DEFAULT_ITERATIONS)
    return m.report_energy()


def _chaos(m: types.ModuleType, loops: int, tmp: str) -> object:
    # main() builds the splines and the Chaosgame, then hands the workload to the runner.
    runner = _Runner()
    image = os.path.join(tmp, "chaos.ppm")
    args = argparse.Namespace(thickness=m.DEFAULT_THICKNESS, width=m.DEFAULT_WIDTH,
                              height=m.DEFAULT_HEIGHT, iterations=m.DEFAULT_ITERATIONS,
                              rng_seed=m.DEFAULT_RNG_SEED, filename=None)
    m.main(runner, args)
    [(func, call_args)] = runner.calls
    for _ in range(loops - 1):
        func(*call_args)
    w, h, iterations, _, seed = call_args
    func(w, h, iterations, image, seed)  # the last image is kept for the result
    return _file_digest(image)


def _deltablue(m: types.ModuleType, loops: int, tmp: str) -> object:
    for _ in range(loops):
        m.delta_blue(100)
    return "checked"  # the benchmark prints "... failed" on a wrong answer


def _go(m: types.ModuleType, loops: int, tmp: str) -> object:
    return sorted({m.versus_cpu() for _ in range(loops)})


def _raytrace(m: types.ModuleType, loops: int, tmp: str) -> object:
    image = os.path.join(tmp, "raytrace.ppm")
    m.bench_raytrace(loops, m.DEFAULT_WIDTH, m.DEFAULT_HEIGHT, image)
    return _file_digest(image)


def _float(m: types.ModuleType, loops: int, tmp: str) -> object:
    points = {repr(m.benchmark(m.POINTS)) for _ in range(loops)}
    return sorted(points)


def _nqueens(m: types.ModuleType, loops: int, tmp: str) -> object:
    solutions = set()
    for _ in range(loops):
        solutions.add(tuple(m.n_queens(8)))  # what bench_n_queens(8) computes
    return [len(s) for s in solutions]


def _fannkuch(m: types.ModuleType, loops: int, tmp: str) -> object:
    return sorted({m.fannkuch(m.DEFAULT_ARG) for _ in range(loops)})


def _spectral_norm(m: types.ModuleType, loops: int, tmp: str) -> object:
    m.bench_spectral_norm(loops)
    return m.eval_AtA_times_u([1] * 10)


def _hexiom(m: types.ModuleType, loops: int, tmp: str) -> object:
    m.main(loops, m.DEFAULT_LEVEL)  # raises AssertionError on a wrong answer
    return "checked"


# name -> (function, loops for the timed runs): a plain run takes 0.7-1 s (3.11, 2 CPUs).
WORKLOADS: dict[str, tuple[Callable[[types.ModuleType, int, str], object], int]] = {
    "richards": (_richards, 5),
    "nbody": (_nbody, 5),
    "chaos": (_chaos, 4),
    "deltablue": (_deltablue, 80),
    "go": (_go, 3),
    "raytrace": (_raytrace, 1),
    "float": (_float, 5),
    "nqueens": (_nqueens, 4),
    "fannkuch": (_fannkuch, 1),
    "spectral_norm": (_spectral_norm, 2),
    "hexiom": (_hexiom, 32),
}


def benchmarks_root() -> Path:
    """pyperformance's benchmark sources, found without importing pyperformance."""
    spec = importlib.util.find_spec("pyperformance")
    if spec is None or spec.origin is None:
        sys.exit("pyperformance is not installed: pip install -e '.[bench]'")
    root = Path(spec.origin).parent / "data-files" / "benchmarks"
    if not root.is_dir():
        sys.exit(f"no benchmark sources in {root}")
    return root


def worker(name: str, loops: int) -> None:
    func, _ = WORKLOADS[name]
    sys.path.insert(0, str(benchmarks_root() / f"bm_{name}"))
    import run_benchmark  # the benchmark chosen on the command line

    module_file = run_benchmark.__file__
    with tempfile.TemporaryDirectory() as tmp:
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            start = time.perf_counter()
            result = func(run_benchmark, loops, tmp)
            elapsed = time.perf_counter() - start
    text = repr((result, printed.getvalue()))
    print(json.dumps({"workload": name, "loops": loops, "seconds": elapsed,
                      "module": module_file, "result": text[:200],
                      "digest": hashlib.sha256(text.encode()).hexdigest()}))


# --- The harness --------------------------------------------------------------------------

def command(mode: str, name: str, loops: int, bm_dir: Path, tmp: Path) -> list[str]:
    driver = [os.path.abspath(__file__), "worker", name, str(loops)]
    py = sys.executable
    if mode == "plain":
        return [py, *driver]
    if mode in ("path", "edge"):
        return [py, "-m", "pathprof", "run", "--mode", mode, "--source", str(bm_dir),
                "--data-file", str(tmp / f"{mode}.pathprof"), *driver]
    if mode == "coverage":
        return [py, "-m", "coverage", "run", "--branch", "--source", str(bm_dir),
                "--data-file", str(tmp / "coverage.data"), *driver]
    raise ValueError(mode)


class RunFailed(Exception):
    pass


def run_once(mode: str, name: str, loops: int, bm_dir: Path, tmp: Path) -> dict[str, Any]:
    cmd = command(mode, name, loops, bm_dir, tmp)
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    for var in ("COVERAGE_PROCESS_START", "COVERAGE_CORE", "PYTHONPROFILEIMPORTTIME"):
        env.pop(var, None)
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp, env=env, check=False)
    wall = time.perf_counter() - start
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        raise RunFailed(f"{mode} {name}: exit status {proc.returncode}\n"
                        f"$ {' '.join(cmd)}\n{proc.stdout}{proc.stderr}")
    try:
        data = json.loads(lines[-1])
    except json.JSONDecodeError as err:
        raise RunFailed(f"{mode} {name}: no result ({err})\n{proc.stdout}{proc.stderr}") from err
    data["wall"] = wall
    data["stderr"] = proc.stderr
    return data


def check_measured(mode: str, name: str, bm_dir: Path, tmp: Path) -> str:
    """Confirm that the run measured the benchmark's functions; return a summary."""
    py = sys.executable
    if mode == "coverage":
        proc = subprocess.run([py, "-m", "coverage", "report", "--data-file",
                               str(tmp / "coverage.data"), "--format=total"],
                              capture_output=True, text=True, cwd=tmp, check=False)
        if proc.returncode != 0:
            raise RunFailed(f"coverage report failed:\n{proc.stdout}{proc.stderr}")
        return f"{proc.stdout.strip()}% covered"
    proc = subprocess.run([py, "-m", "pathprof", "report", "--format", "json", "--data-file",
                           str(tmp / f"{mode}.pathprof")],
                          capture_output=True, text=True, cwd=tmp, check=False)
    if proc.returncode != 0:
        raise RunFailed(f"pathprof report ({mode}) failed:\n{proc.stdout}{proc.stderr}")
    report = json.loads(proc.stdout)
    target = str(bm_dir / "run_benchmark.py")
    functions = [f for f in report["functions"] if f["file"] == target]
    if mode == "path":
        ran = [f for f in functions if f["executions"] > 0]
        events = sum(f["executions"] for f in ran)
        what = "executions"
    else:
        ran = [f for f in functions if any(e["count"] for e in f.get("edges", []))]
        events = sum(e["count"] for f in ran for e in f.get("edges", []))
        what = "edge traversals"
    if report["mode"] != mode or not ran:
        raise RunFailed(f"{mode} {name}: no function of {target} measured "
                        f"(report mode {report['mode']}, {len(report['functions'])} functions)")
    return f"{len(ran)}/{len(functions)} functions ran, {events} {what}"


def measure(name: str, loops: int, repeats: int, root: Path) -> dict[str, Any]:
    bm_dir = root / f"bm_{name}"
    entry: dict[str, Any] = {"workload": name, "loops": loops, "errors": {}, "checks": {},
                             "runs": {mode: [] for mode in MODES}}
    with tempfile.TemporaryDirectory(prefix="pathprof-overhead-") as tmp_name:
        tmp = Path(tmp_name)
        # Warm-up: one loop in each mode fills pathprof's cache and checks the measurement.
        reference = None
        for mode in MODES:
            try:
                data = run_once(mode, name, 1, bm_dir, tmp)
                if data["stderr"].strip():
                    entry.setdefault("stderr", {})[mode] = data["stderr"]
                    print(f"  warm-up {name} {mode} wrote to stderr:\n{data['stderr']}",
                          file=sys.stderr)
                if mode == "plain":
                    reference = data["digest"]
                    entry["result"] = data["result"]
                else:
                    entry["checks"][mode] = check_measured(mode, name, bm_dir, tmp)
                if data["digest"] != reference:
                    raise RunFailed(f"{mode} {name}: wrong result {data['result']!r}, "
                                    f"plain run gave {entry.get('result')!r}")
            except RunFailed as err:
                entry["errors"][mode] = str(err)
                if mode == "plain":
                    return entry
            status = "FAILED" if mode in entry["errors"] else entry["checks"].get(mode, "ok")
            print(f"  warm-up {name:14} {mode:9} {status}", file=sys.stderr)
        reference = None
        for repeat in range(repeats):
            for mode in MODES:
                if mode in entry["errors"]:
                    continue
                try:
                    data = run_once(mode, name, loops, bm_dir, tmp)
                except RunFailed as err:
                    entry["errors"][mode] = str(err)
                    if mode == "plain":
                        return entry
                    continue
                if mode == "plain":
                    reference = reference or data["digest"]
                if data["digest"] != reference:
                    entry["errors"][mode] = (f"{mode} {name}: wrong result {data['result']!r} "
                                             f"at {loops} loops")
                    continue
                entry["runs"][mode].append({"seconds": data["seconds"], "wall": data["wall"]})
                print(f"  repeat {repeat + 1} {name:14} {mode:9} {data['seconds']:7.3f} s "
                      f"(process {data['wall']:.3f} s)", file=sys.stderr)
    plain = entry["runs"]["plain"]
    entry["plain_seconds"] = statistics.median(r["seconds"] for r in plain)
    entry["plain_wall"] = statistics.median(r["wall"] for r in plain)
    entry["plain_min_seconds"] = min(r["seconds"] for r in plain)
    for key in ("seconds", "wall"):
        ratios, best = {}, {}
        for mode in MODES[1:]:
            runs = entry["runs"][mode]
            if mode in entry["errors"] or len(runs) != len(plain):
                continue
            ratios[mode] = statistics.median(r[key] / p[key] for r, p in zip(runs, plain,
                                                                               strict=True))
            # Less sensitive to other load on the machine, which only ever adds time.
            best[mode] = min(r[key] for r in runs) / min(p[key] for p in plain)
        entry["ratio_" + key] = ratios
        entry["ratio_of_min_" + key] = best
    return entry


def table(entries: list[dict[str, Any]], key: str, plain_key: str) -> str:
    head = ["workload", "plain s", *(MODE_TITLES[m] for m in MODES[1:])]
    rows = [head, ["---"] + ["---:"] * (len(head) - 1)]
    columns: dict[str, list[float]] = {m: [] for m in MODES[1:]}
    for entry in entries:
        if plain_key not in entry:
            rows.append([entry["workload"], "FAILED", *([""] * 3)])
            continue
        row = [entry["workload"], f"{entry[plain_key]:.3f}"]
        for mode in MODES[1:]:
            ratio = entry[key].get(mode)
            if ratio is None:
                row.append("FAILED")
            else:
                columns[mode].append(ratio)
                row.append(f"{ratio:.2f}")
        rows.append(row)
    rows.append(["**median**", "", *(f"**{statistics.median(columns[m]):.2f}**"
                                     if columns[m] else "" for m in MODES[1:])])
    return "\n".join("| " + " | ".join(row) + " |" for row in rows)


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def pathprof_revision() -> str | None:
    """The git commit of the pathprof source tree, with "+dirty" if src/ has changes."""
    repo = Path(__file__).resolve().parent.parent
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=repo,
                              capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "src"], cwd=repo,
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return head + ("+dirty" if dirty else "")


def coverage_core() -> str:
    """The tracer coverage.py uses here with --branch (CTracer, PyTracer or SysMonitor)."""
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "empty.py"
        script.write_text("pass\n", encoding="utf-8")
        proc = subprocess.run([sys.executable, "-m", "coverage", "run", "--branch",
                               "--debug=sys", "--data-file", str(Path(tmp) / "data"),
                               str(script)], capture_output=True, text=True, cwd=tmp,
                              check=False)
    for line in (proc.stdout + proc.stderr).splitlines():
        key, _, value = line.strip().partition(":")
        if key == "core":
            return value.strip()
    return "unknown"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["worker"]:
        worker(argv[1], int(argv[2]))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5,
                        help="interleaved repeats of the four modes (default 5)")
    parser.add_argument("--workloads", default=",".join(WORKLOADS),
                        help=f"comma-separated subset of: {', '.join(WORKLOADS)}")
    parser.add_argument("--scale", type=float, default=1.0,
                        help="multiply each workload's loops by this (default 1)")
    parser.add_argument("--out", default=tempfile.gettempdir(),
                        help="directory for the JSON results (default: the temp directory)")
    args = parser.parse_args(argv)
    names = [n.strip() for n in args.workloads.split(",") if n.strip()]
    unknown = sorted(set(names) - set(WORKLOADS))
    if unknown:
        parser.error(f"unknown workloads: {', '.join(unknown)}")
    if not _version("coverage"):
        parser.error("coverage is not installed: pip install -e '.[bench]'")
    root = benchmarks_root()
    python = platform.python_version()
    core = coverage_core()
    revision = pathprof_revision()
    load_at_start = os.getloadavg()
    print(f"Python {python} ({sys.executable}), pathprof {_version('pathprof')} "
          f"({revision or 'not a git checkout'}), "
          f"pyperformance {_version('pyperformance')}, coverage {_version('coverage')} "
          f"({core}); load average {load_at_start[0]:.2f} on {os.cpu_count()} CPUs",
          file=sys.stderr)

    entries = []
    for name in names:
        loops = max(1, round(WORKLOADS[name][1] * args.scale))
        entries.append(measure(name, loops, args.repeats, root))

    now = datetime.datetime.now(datetime.UTC)
    if pathprof_revision() != revision:
        print(f"warning: pathprof's source changed during the measurement "
              f"(from {revision} to {pathprof_revision()})", file=sys.stderr)
        revision = f"{revision} -> {pathprof_revision()}"
    results = {
        "python": python, "executable": sys.executable, "implementation":
        platform.python_implementation(), "platform": platform.platform(),
        "cpus": os.cpu_count(), "loadavg_at_start": load_at_start,
        "loadavg_at_end": os.getloadavg(), "coverage_core": core,
        "date": now.isoformat(timespec="seconds"), "repeats": args.repeats,
        "versions": {d: _version(d) for d in ("pathprof", "pyperformance", "pyperf",
                                              "coverage")},
        "pathprof_revision": revision, "benchmarks_root": str(root), "workloads": entries,
    }
    os.makedirs(args.out, exist_ok=True)
    out = Path(args.out) / f"overhead-{python}-{now:%Y%m%d-%H%M%S}.json"
    out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")

    print(f"Python {python}, pathprof {revision}, {args.repeats} interleaved repeats, median "
          f"of per-repeat ratios to the plain run; coverage {_version('coverage')} with "
          f"{core}.\n\n"
          f"Workload time (perf_counter around the workload):\n")
    print(table(entries, "ratio_seconds", "plain_seconds"))
    print("\nWhole process (wall time of the subprocess):\n")
    print(table(entries, "ratio_wall", "plain_wall"))
    print("\nWorkload time, fastest run of each mode over the fastest plain run:\n")
    print(table(entries, "ratio_of_min_seconds", "plain_min_seconds"))
    failed = [(e["workload"], m, err) for e in entries for m, err in e["errors"].items()]
    for workload, mode, err in failed:
        print(f"\n{workload} failed in {mode} mode:\n```\n{err.rstrip()}\n```")
    print(f"\nResults: {out}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
