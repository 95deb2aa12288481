"""pathprof's overhead, side by side with the tools a Python developer already runs.

Run: ``python benchmarks/overhead.py [--repeats 3] [--out DIR] [--workloads a,b]
[--modes plain,path,...]`` (``make bench`` installs the ``bench`` extra first).

Each workload of :mod:`workloads` (pure-Python pyperformance benchmarks, imported
from the installed package) runs in every mode, each a fresh process:

- ``plain``:     ``python workloads.py NAME LOOPS``
- ``path``:      ``python -m pathprof run --source F ... workloads.py NAME LOOPS``
- ``edge``:      the same with ``--mode edge``
- ``path-time``: path mode with ``--metric time``
- ``cover``:     path mode with ``--stop-counting basis`` (what ``pytest --pathprof`` does):
  a function goes back to its original code once its paths span its basis; the
  share of path executions (and of calls) that ran on original code is worked out
  from the data files of the last timed ``path`` and ``cover`` runs
- ``cover-conditions``: ``cover`` with ``--conditions`` (what ``pytest --pathprof
  --pathprof-conditions`` does): every evaluation vector of every decision is counted
  too, and a function goes back once its paths span its basis and each of its
  decisions is done (every vector ran, or MC/DC shown for each condition); the warm-up
  notes the decisions measured (``pathprof coverage --conditions``). For both
  stop-counting modes, from the data file of the last timed run: the functions that
  went back of those that ran, and the path executions still counted (with ``path``
  also run, the share left to original code, as for ``cover``)
- ``coverage``:  ``python -m coverage run --branch --source ...``
- ``slipcover``: ``python -m slipcover --branch --source DIRS ...``
- ``cprofile``:  ``python -m cProfile -o FILE ...`` (profiles everything; no filter)
- ``events``:    ``python -m pathprof count --source F ...``: exact statement counts
  (chords of a spanning tree); ``events-statements``: the same with the naive
  instrumentation, an add per statement; ``events-blocks``: an add per block run;
  ``events-totals``: the tree's adds with the hand-over that keeps the thread's
  total only (``--total-only``, what budgets and ``pytest --pathprof-events`` use)
- ``settrace``:  ``python settrace_paths.py --source F ...``: a ``sys.settrace``
  tracer that splits each call's lines into paths (:mod:`settrace_paths`)

Measured is the benchmark module (and any standard-library module a workload lists
in ``Workload.stdlib``; SlipCover, which takes only directories and reports on every
file below them at exit, gets the benchmark's directory alone).
Before timing, each mode runs once with one
loop: this fills pathprof's cache of instrumented code, checks that each tool
measured the benchmark's functions, and that every mode computes the plain run's
result. From those runs come two deterministic figures: executed probes per 1,000
executed blocks (:mod:`probes`) and the data-file write time (:mod:`datafile`).
The timed runs are interleaved (plain, path, ...; plain, path, ...); each mode's time
is divided by the plain time of the same repeat, and the median of these ratios over
the repeats is reported (workload time, measured by the driver around the workload
alone, and the whole process's wall time); also the fastest run of each mode over the
fastest plain run, the least sensitive to other load on the machine.

Writes ``OUT/overhead-<python>-<date>.json`` (every run), a Markdown file next to
it (also printed) and a PNG chart (:mod:`report`).
"""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import json
import os
import platform
import pstats
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import datafile  # noqa: E402
import probes  # noqa: E402
import report  # noqa: E402
from workloads import WORKLOADS, benchmarks_root, measured_files  # noqa: E402

MODES = ("plain", "path", "edge", "path-time", "cover", "cover-conditions", "coverage",
         "slipcover", "cprofile", "settrace", "events", "events-statements", "events-blocks",
         "events-totals")
EVENT_MODES = {"events": ["--placement", "tree"],
               "events-statements": ["--placement", "statements"],
               "events-blocks": ["--placement", "blocks"],
               "events-totals": ["--placement", "tree", "--total-only"]}
PATHPROF_MODES = {"path": ["--mode", "path"], "edge": ["--mode", "edge"],
                  "path-time": ["--mode", "path", "--metric", "time"],
                  "cover": ["--mode", "path", "--stop-counting", "basis"],
                  "cover-conditions": ["--mode", "path", "--stop-counting", "basis",
                                       "--conditions"]}
#: the modes that stop counting, each with the key of its share left to original code
COVER_MODES = {"cover": "uninstrumented", "cover-conditions": "uninstrumented_conditions"}
# report.py names each mode's column; the conditions mode is named here.
report.TITLES.setdefault("cover-conditions", "path --stop-counting basis --conditions")


# --- One run -------------------------------------------------------------------------------

def command(mode: str, name: str, loops: int, tmp: Path) -> list[str]:
    driver = [str(HERE / "workloads.py"), name, str(loops)]
    files = measured_files(name)
    py = sys.executable
    if mode == "plain":
        return [py, *driver]
    if mode in PATHPROF_MODES:
        sources = [arg for f in files for arg in ("--source", f)]
        return [py, "-m", "pathprof", "run", *PATHPROF_MODES[mode], *sources,
                "--data-file", str(tmp / f"{mode}.pathprof"), *driver]
    if mode in EVENT_MODES:
        sources = [arg for f in files for arg in ("--source", f)]
        return [py, "-m", "pathprof", "count", *EVENT_MODES[mode], *sources,
                "--json", str(tmp / f"{mode}.json"), *driver]
    if mode == "coverage":
        sources = [str(Path(files[0]).parent), *WORKLOADS[name].stdlib]
        return [py, "-m", "coverage", "run", "--branch", "--source", ",".join(sources),
                "--data-file", str(tmp / "coverage.data"), *driver]
    if mode == "slipcover":
        # Directories only, and given the standard library's it reports on every file
        # in it at exit (minutes): the benchmark's directory alone.
        return [py, "-m", "slipcover", "--branch", "--json", "--out",
                str(tmp / "slipcover.json"), "--source", str(Path(files[0]).parent),
                *driver]
    if mode == "cprofile":
        return [py, "-m", "cProfile", "-o", str(tmp / "cprofile.out"), *driver]
    if mode == "settrace":
        return [py, str(HERE / "settrace_paths.py"), "--source", ",".join(files),
                "--out", str(tmp / "settrace.json"), *driver]
    raise ValueError(mode)


class RunFailed(Exception):
    pass


def run_once(mode: str, name: str, loops: int, tmp: Path) -> dict[str, Any]:
    cmd = command(mode, name, loops, tmp)
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    # PYTHONDONTWRITEBYTECODE would make every plain run compile from source.
    for var in ("COVERAGE_PROCESS_START", "COVERAGE_CORE", "PYTHONPROFILEIMPORTTIME",
                "PYTHONDONTWRITEBYTECODE"):
        env.pop(var, None)
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp, env=env, check=False)
    wall = time.perf_counter() - start
    lines = [line for line in proc.stdout.splitlines() if line.startswith('{"workload"')]
    if proc.returncode != 0 or not lines:
        raise RunFailed(f"{mode} {name}: exit status {proc.returncode}\n"
                        f"$ {' '.join(cmd)}\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}")
    data = json.loads(lines[-1])
    data["wall"] = wall
    data["stderr"] = proc.stderr
    return data


def check_measured(mode: str, name: str, tmp: Path) -> str:
    """Confirm that a run measured the benchmark's functions; return a summary."""
    py = sys.executable
    target = measured_files(name)[0]
    if mode == "coverage":
        proc = subprocess.run([py, "-m", "coverage", "report", "--data-file",
                               str(tmp / "coverage.data"), "--format=total"],
                              capture_output=True, text=True, cwd=tmp, check=False)
        if proc.returncode != 0:
            raise RunFailed(f"coverage report failed:\n{proc.stdout}{proc.stderr}")
        return f"{proc.stdout.strip()}% covered"
    if mode == "slipcover":
        files = json.loads((tmp / "slipcover.json").read_text(encoding="utf-8"))["files"]
        mine = files.get(target) or next((v for k, v in files.items()
                                           if os.path.realpath(k) == target), None)
        if not mine or not mine["executed_lines"]:
            raise RunFailed(f"slipcover {name}: {target} not measured")
        return f"{len(mine['executed_lines'])} lines executed"
    if mode == "cprofile":
        stats = pstats.Stats(str(tmp / "cprofile.out")).stats  # type: ignore[attr-defined]
        mine = [key for key in stats if key[0] == target]
        if not mine:
            raise RunFailed(f"cprofile {name}: no function of {target}")
        return f"{len(mine)} functions of the benchmark profiled"
    if mode in EVENT_MODES:
        counts = json.loads((tmp / f"{mode}.json").read_text(encoding="utf-8"))
        if mode == "events-totals":
            if not counts["total"]:
                raise RunFailed(f"{mode} {name}: no event counted")
            return f"{counts['total']} statements (totals only)"
        mine = [f for f in counts["functions"] if f["file"] == target]
        if not mine:
            raise RunFailed(f"{mode} {name}: no function of {target} counted")
        return f"{counts['total']} statements in {len(mine)} functions"
    if mode == "settrace":
        summary = json.loads((tmp / "settrace.json").read_text(encoding="utf-8"))
        if not summary["executions"]:
            raise RunFailed(f"settrace {name}: no path recorded")
        return f"{summary['paths']} paths, {summary['executions']} executions"
    proc = subprocess.run([py, "-m", "pathprof", "report", "--format", "json", "--data-file",
                           str(tmp / f"{mode}.pathprof")],
                          capture_output=True, text=True, cwd=tmp, check=False)
    if proc.returncode != 0:
        raise RunFailed(f"pathprof report ({mode}) failed:\n{proc.stdout}{proc.stderr}")
    data = json.loads(proc.stdout)
    functions = [f for f in data["functions"] if f["file"] == target]
    if mode == "edge":
        ran = [f for f in functions if any(e["count"] for e in f.get("edges", []))]
        events, what = sum(e["count"] for f in ran for e in f.get("edges", [])), "edges"
    else:
        ran = [f for f in functions if f["executions"] > 0]
        events, what = sum(f["executions"] for f in ran), "path executions"
    if not ran:
        raise RunFailed(f"{mode} {name}: no function of {target} measured")
    summary = f"{len(ran)}/{len(functions)} functions ran, {events} {what}"
    if mode == "cover-conditions":
        # A benchmark may have no decision in its functions (nbody): then none is counted.
        totals = conditions_totals(tmp / f"{mode}.pathprof", tmp)
        summary += (f"; {totals['decisions']} decisions, MC/DC {totals['mcdc_masking']}/"
                    f"{totals['conditions']}, outcomes {totals['outcomes_seen']}/"
                    f"{totals['outcomes']}" if totals["decisions"] else "; no decision")
    return summary


def conditions_totals(data_file: Path, cwd: Path) -> dict[str, Any]:
    """The ``conditions_totals`` of ``pathprof coverage --conditions --format json``
    (absent there when no decision was measured: zeros), and ``evaluations``: the
    decision evaluations counted (each one counter update), summed over the decisions."""
    proc = subprocess.run([sys.executable, "-m", "pathprof", "coverage", "--conditions",
                           "--format", "json", "--data-file", str(data_file)],
                          capture_output=True, text=True, cwd=cwd, check=False)
    if proc.returncode != 0:
        raise RunFailed(f"pathprof coverage --conditions failed:\n{proc.stdout}{proc.stderr}")
    report = json.loads(proc.stdout)
    totals = report.get("conditions_totals") or dict.fromkeys(
        ("decisions", "conditions", "outcomes_seen", "outcomes", "mcdc_masking",
         "mcdc_unique_cause", "mcdc_percent"), 0)
    totals["evaluations"] = sum(d.get("evaluations", 0) for f in report["files"]
                                for fn in f["functions"] for d in fn.get("conditions", []))
    return totals


# --- One workload ---------------------------------------------------------------------------

def warm_up(name: str, modes: list[str], tmp: Path, entry: dict[str, Any]) -> bool:
    """One loop in each mode: fill pathprof's cache, check what each tool measured and
    that each computed the plain result; then the deterministic figures."""
    reference = None
    for mode in modes:
        try:
            data = run_once(mode, name, 1, tmp)
            if mode == "plain":
                reference = data["digest"]
                entry["result"] = data["result"]
            else:
                entry["checks"][mode] = check_measured(mode, name, tmp)
            if data["digest"] != reference:
                raise RunFailed(f"{mode} {name}: wrong result {data['result']!r}, "
                                f"plain run gave {entry.get('result')!r}")
        except RunFailed as err:
            entry["errors"][mode] = str(err)
            if mode == "plain":
                return False
        status = "FAILED" if mode in entry["errors"] else entry["checks"].get(mode, "ok")
        print(f"  warm-up {name:15} {mode:9} {status}", file=sys.stderr)
    if "path" in modes and "path" not in entry["errors"]:
        edge = tmp / "edge.pathprof" if "edge" in modes and "edge" not in entry["errors"] else None
        entry["probes"] = probes.figures(str(tmp / "path.pathprof"), edge and str(edge))
        entry["data_file"] = datafile.rewrite(str(tmp / "path.pathprof"))
    return True


def measure(name: str, loops: int, repeats: int, modes: list[str]) -> dict[str, Any]:
    entry: dict[str, Any] = {"workload": name, "loops": loops, "errors": {}, "checks": {},
                             "runs": {mode: [] for mode in modes}}
    with tempfile.TemporaryDirectory(prefix="pathprof-overhead-") as tmp_name:
        tmp = Path(tmp_name)
        if not warm_up(name, modes, tmp, entry):
            return entry
        reference = None
        for repeat in range(repeats):
            for mode in modes:
                if mode in entry["errors"]:
                    continue
                try:
                    data = run_once(mode, name, loops, tmp)
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
                entry["runs"][mode].append({"seconds": data["seconds"], "cpu": data["cpu"],
                                            "wall": data["wall"]})
                print(f"  repeat {repeat + 1} {name:15} {mode:9} {data['seconds']:7.3f} s "
                      f"(process {data['wall']:.3f} s)", file=sys.stderr)
        target = measured_files(name)[0]
        for mode, key in COVER_MODES.items():
            if mode not in modes or mode in entry["errors"]:
                continue
            entry.setdefault("stopping", {})[mode] = stopping(tmp / f"{mode}.pathprof", target)
            if "path" in modes and "path" not in entry["errors"]:
                entry[key] = uninstrumented_share(tmp / "path.pathprof",
                                                  tmp / f"{mode}.pathprof", target)
        if "cover-conditions" in entry.get("stopping", {}):
            entry["stopping"]["cover-conditions"]["conditions"] = conditions_totals(
                tmp / "cover-conditions.pathprof", tmp)
    summarize(entry, modes)
    return entry


def uninstrumented_share(path_file: Path, cover_file: Path, target: str) -> dict[str, Any]:
    """What the ``cover`` run left to original code, against the ``path`` run of the
    same loops (deterministic workloads run the same paths): the share of path
    executions and of calls (paths that start at the function's entry), and the
    functions stopped out of those that ran."""
    import pathprof

    def totals(data_file: Path) -> tuple[int, int, int, int]:
        functions = [f for f in pathprof.load(str(data_file)).functions
                     if f.file == target and f.total]
        calls = sum(p.count for f in functions for p in f.paths if p.start == "entry")
        return (sum(f.total for f in functions), calls,
                sum(1 for f in functions if f.stopped), len(functions))

    full, full_calls, _, ran = totals(path_file)
    kept, kept_calls, stopped, _ = totals(cover_file)
    return {"paths": 1 - kept / full if full else 0.0,
            "calls": 1 - kept_calls / full_calls if full_calls else 0.0,
            "stopped": stopped, "functions": ran}


def stopping(data_file: Path, target: str) -> dict[str, Any]:
    """What a stop-counting run's data file says on its own: the benchmark's functions
    that ran, those of them that went back to original code, and the path executions
    counted (those that ran while the function was still measured)."""
    import pathprof

    functions = [f for f in pathprof.load(str(data_file)).functions
                 if f.file == target and f.total]
    return {"functions": len(functions), "stopped": sum(1 for f in functions if f.stopped),
            "counted": sum(f.total for f in functions)}


def stopping_table(entries: list[dict[str, Any]]) -> str:
    """Per workload, for each stop-counting mode: functions gone back of those that ran,
    and the path executions still counted; MC/DC, condition outcomes and decision
    evaluations counted of the ``cover-conditions`` run."""
    modes = [m for m in COVER_MODES if any(m in e.get("stopping", {}) for e in entries)]
    head = ["workload"]
    for mode in modes:
        head += [f"{mode}: functions gone back", f"{mode}: path executions counted"]
    if "cover-conditions" in modes:
        head += ["decisions", "MC/DC (masking)", "condition outcomes",
                 "decision evaluations counted"]
    rows = [report._row(head), report._row(["---"] + ["---:"] * (len(head) - 1))]
    for entry in entries:
        got = entry.get("stopping", {})
        if not got:
            continue
        cells = [entry["workload"]]
        for mode in modes:
            s = got.get(mode)
            cells += ([f"{s['stopped']} of {s['functions']}", f"{s['counted']:,}"] if s
                      else ["", ""])
        c = got.get("cover-conditions", {}).get("conditions")
        if c:
            cells += [f"{c['decisions']}", f"{c['mcdc_masking']}/{c['conditions']} "
                      f"({c['mcdc_percent']:.0f}%)", f"{c['outcomes_seen']}/{c['outcomes']}",
                      f"{c['evaluations']:,}"]
        elif "cover-conditions" in modes:
            cells += ["", "", "", ""]
        rows.append(report._row(cells))
    return "\n".join(rows)


def conditions_targets(entries: list[dict[str, Any]]) -> list[str]:
    """Issue 39's target, at most 1.15x plain with stop-counting, as report.targets
    states issue 21's for ``cover``; and the conditions run's share left to original
    code when ``path`` ran too."""
    lines = []
    ratios = [e["ratio_seconds"]["cover-conditions"] for e in entries
              if "cover-conditions" in e.get("ratio_seconds", {})]
    if ratios:
        median, worst = statistics.median(ratios), max(ratios)
        over = [e["workload"] for e in entries
                if e.get("ratio_seconds", {}).get("cover-conditions", 0) > 1.15]
        lines.append(f"- --stop-counting basis --conditions on the median workload "
                     f"{median:.2f}{report.TIMES} (issue 39 target at most 1.15{report.TIMES}): "
                     f"{'met' if median <= 1.15 else 'missed'}; worst {worst:.2f}{report.TIMES}"
                     + (f"; above 1.15{report.TIMES}: {', '.join(over)}" if over else ""))
    shares = [e["uninstrumented_conditions"] for e in entries
              if "uninstrumented_conditions" in e]
    if shares:
        lines.append("- ran on original code under --stop-counting basis --conditions, median "
                     f"share of path executions {statistics.median(s['paths'] for s in shares):.1%}"
                     f", of calls {statistics.median(s['calls'] for s in shares):.1%}")
    return lines


def summarize(entry: dict[str, Any], modes: list[str]) -> None:
    plain = entry["runs"]["plain"]
    entry["plain_seconds"] = statistics.median(r["seconds"] for r in plain)
    entry["plain_wall"] = statistics.median(r["wall"] for r in plain)
    entry["plain_min_seconds"] = min(r["seconds"] for r in plain)
    entry["plain_cpu"] = statistics.median(r["cpu"] for r in plain)
    for key in ("seconds", "cpu", "wall"):
        ratios, best = {}, {}
        for mode in modes[1:]:
            runs = entry["runs"][mode]
            if mode in entry["errors"] or len(runs) != len(plain):
                continue
            ratios[mode] = statistics.median(r[key] / p[key]
                                             for r, p in zip(runs, plain, strict=True))
            best[mode] = min(r[key] for r in runs) / min(p[key] for p in plain)
        entry["ratio_" + key] = ratios
        entry["ratio_of_min_" + key] = best


# --- Versions and the machine --------------------------------------------------------------

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


def import_cost() -> dict[str, Any]:
    proc = subprocess.run([sys.executable, str(HERE / "import_cache.py")], capture_output=True,
                          text=True, check=True)
    return json.loads(proc.stdout)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3,
                        help="interleaved repeats of all the modes (default 3)")
    parser.add_argument("--workloads", default=",".join(WORKLOADS),
                        help=f"comma-separated subset of: {', '.join(WORKLOADS)}")
    parser.add_argument("--modes", default=",".join(MODES),
                        help=f"comma-separated subset of: {', '.join(MODES)} (plain always runs)")
    parser.add_argument("--scale", type=float, default=1.0,
                        help="multiply each workload's loops by this (default 1)")
    parser.add_argument("--no-import", action="store_true",
                        help="skip the import-cost measurement (import_cache.py)")
    parser.add_argument("--out", default=tempfile.gettempdir(),
                        help="directory for the results (default: the temp directory)")
    args = parser.parse_args(argv)
    names = [n.strip() for n in args.workloads.split(",") if n.strip()]
    modes = ["plain", *(m.strip() for m in args.modes.split(",")
                        if m.strip() and m.strip() != "plain")]
    for label, chosen, known in (("workloads", names, WORKLOADS), ("modes", modes, MODES)):
        unknown = sorted(set(chosen) - set(known))
        if unknown:
            parser.error(f"unknown {label}: {', '.join(unknown)}")
    for mode, dist in (("coverage", "coverage"), ("slipcover", "slipcover")):
        if mode in modes and not _version(dist):
            parser.error(f"{dist} is not installed: pip install -e '.[bench]'")
    benchmarks_root()
    python = platform.python_version()
    core = coverage_core() if "coverage" in modes else None
    revision = pathprof_revision()
    load_at_start = os.getloadavg()
    print(f"Python {python} ({sys.executable}), pathprof {_version('pathprof')} "
          f"({revision or 'not a git checkout'}); load average {load_at_start[0]:.2f} "
          f"on {os.cpu_count()} CPUs", file=sys.stderr)

    entries = [measure(name, max(1, round(WORKLOADS[name].loops * args.scale)),
                       args.repeats, modes) for name in names]
    imports = None if args.no_import else import_cost()

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
        "date": now.isoformat(timespec="seconds"), "repeats": args.repeats, "modes": modes,
        "scale": args.scale,
        "command": " ".join([Path(sys.executable).name, "benchmarks/overhead.py",
                             *(argv or sys.argv[1:])]),
        "versions": {d: _version(d) for d in ("pathprof", "pyperformance", "coverage",
                                              "slipcover")},
        "pathprof_revision": revision, "benchmarks_root": str(benchmarks_root()),
        "stdlib": sysconfig.get_paths()["stdlib"], "workloads": entries, "imports": imports,
    }
    os.makedirs(args.out, exist_ok=True)
    stem = Path(args.out) / f"overhead-{python}-{now:%Y%m%d-%H%M%S}"
    # (not stem.with_suffix: the version's dots would make "-<date>" a suffix to replace)
    Path(f"{stem}.json").write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    markdown = report.markdown(results)
    if any(e.get("stopping") for e in entries):
        markdown += ("\n### Stop-counting runs: functions gone back, path executions still "
                     "counted\n\n" + stopping_table(entries) + "\n")
    if "cover-conditions" in modes:
        markdown += ("\n### Target (issue 39)\n\n" + "\n".join(conditions_targets(entries))
                     + "\n")
    Path(f"{stem}.md").write_text(markdown, encoding="utf-8")
    chart = report.chart(results, Path(f"{stem}.png"))
    print(markdown)
    print(f"Results: {stem}.json, {stem}.md" + (f", {chart}" if chart else ""))
    failed = [(e["workload"], m) for e in entries for m in e["errors"]]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
