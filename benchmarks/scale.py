"""Big codebases (issue 36): first run, warm run, memory and data file on code nobody here wrote.

Run: ``make bench-scale`` (installs the ``bench`` extra, then ``python benchmarks/scale.py
--out benchmarks/results``), or ``python benchmarks/scale.py [--repeats 3] [--workload
networkx|stdlib-tests|scale|all] [--out DIR] [--quick]``.

Workloads, each a script run as a fresh process, with its measured code:

- ``networkx``: a script whose only line is ``import networkx`` (``--source networkx``;
  about 285 modules, 116,000 lines);
- ``stdlib-tests``: CPython's own test suites of ``email``, ``json`` and ``xml``
  (``test.test_email``, ``test.test_json``, ``test.test_xml_etree``, by ``unittest``),
  measured with ``--source email --source json --source xml`` (stdlib packages by name);
- ``scale``: ``import networkx`` again, measuring a growing part of it (``--source`` given
  the directories of a few subpackages, then more, then all of networkx: about 10k to
  116k lines), so that how each figure grows with the lines measured shows.

Every figure is a whole-process wall time (or peak RSS, or file size) of one of five runs,
interleaved in each repeat (``--repeats``, default 3):

- ``nopyc``: plain ``python script.py`` with no bytecode for the measured code: with
  ``PYTHONDONTWRITEBYTECODE=1`` and ``PYTHONPYCACHEPREFIX`` pointing at a bytecode tree
  from which the measured packages' bytecode was removed (everything else, the standard
  library and pathprof's own modules included, stays compiled, as after ``pip install``),
  so Python compiles exactly the measured modules from source;
- ``first``: ``python -m pathprof run --no-cache --source ... script.py`` in that same
  environment -- a first run, as in a CI job that keeps no cache;
- ``plain``: plain ``python script.py`` with all bytecode warm (for reference);
- ``coverage``: ``python -m coverage run --branch --source A,B script.py``, bytecode warm;
- ``warm``: ``python -m pathprof run --source ... script.py`` with pathprof's cache warm.

The warm runs have ``PYTHONDONTWRITEBYTECODE`` removed from their environment and a
bytecode tree of their own (``PYTHONPYCACHEPREFIX``), filled beforehand by one run of each
tool; pathprof runs twice before timing, and the cache entries it left (files named
``*.pathprof-*.pyc`` under that tree, the working directory, the measured directories and
``PATHPROF_CACHE_DIR``) are counted against the measured files. All runs have
``PYTHONHASHSEED=0``. After the timed runs no bytecode of the measured code may be in the
first runs' tree (else the script fails: Python did not compile them).

Reported: medians of the absolute figures, and each ratio as the median over the repeats
of the ratio within the repeat: first run / ``nopyc`` (target at most 2x), warm /
coverage (at most 1.3x), peak memory (max RSS of the process, from ``os.wait4`` in a small
launcher process, since a child's peak counts its parent's at the fork) warm / coverage (at
most 1.3x), the size of pathprof's data file (at most 2 MB) beside
coverage.py's; also the two time ratios in CPU time (user + system of the process and its
children, from the same ``os.wait4``: less sensitive than wall time to other load on a
shared machine). For ``scale``, per size: the lines measured, the seconds, megabytes and
the cost per 1,000 lines, with the least-squares slope of each figure against the lines
measured. Lines are physical lines of the files that ran (coverage.py's data: the files
with an executed arc). MB are 10^6 bytes.

Each run's exit status must be 0, and for ``stdlib-tests`` each tool's unittest summary
(tests run, OK or FAILED) the plain run's; else the script says so and exits 1.

Writes ``OUT/scale-<python>-<date>.json`` (every run) and a Markdown file beside it (also
printed). ``--quick``: one repeat, the ``json`` suite alone and the two smallest sizes of
``scale`` -- a smoke test, not figures.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import importlib.util
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
MB = 1e6

#: Issue 36's targets.
TARGET_FIRST = 2.0  # first run / Python compiling the same modules
TARGET_WARM = 1.3  # warm run / coverage run --branch
TARGET_MEMORY = 1.3  # peak RSS, warm run / coverage run --branch
TARGET_DATA_MB = 2.0  # pathprof's data file of the networkx import

MODES = ("nopyc", "first", "plain", "coverage", "warm")

STDLIB_SUITES = ["test.test_email", "test.test_json", "test.test_xml_etree"]
STDLIB_PACKAGES = ["email", "json", "xml"]

#: The scale sizes: networkx subpackages added at each step (the last step is all of it).
SCALE_STEPS: list[list[str]] = [
    ["classes"],
    ["generators", "linalg"],
    ["drawing", "readwrite", "utils", "algorithms/centrality"],
    ["algorithms/isomorphism", "algorithms/connectivity", "algorithms/shortest_paths",
     "algorithms/approximation", "algorithms/flow", "algorithms/bipartite"],
    ["."],
]

STDLIB_NOTE = (
    "`test.test_json`'s `test_tool` runs `python -m json.tool` in child processes: pathprof "
    "measures every process (a first run instruments `json` again in each), coverage.py "
    "measures none of them (no `patch = subprocess` here).")

UNITTEST_SCRIPT = """\
import sys
import unittest

program = unittest.main(module=None, argv=["unittest", *{names!r}], exit=False)
sys.exit(0 if program.result.wasSuccessful() else 1)
"""


class Failure(Exception):
    """A run failed or a check did not hold: the benchmark's figures mean nothing."""


@dataclass
class Workload:
    name: str
    title: str  # Markdown
    script: str  # the script's text
    source: list[str]  # --source values, as given to both tools
    dirs: list[Path]  # the measured directories (their bytecode is removed for nopyc)
    summary: bool = False  # compare unittest's summary with the plain run's
    note: str = ""  # Markdown, under the table


@dataclass
class Run:
    seconds: float
    cpu: float  # user + system seconds of the process and its children
    rss_mb: float
    data_mb: float | None
    status: int
    output: str


@dataclass
class Result:
    workload: Workload
    runs: dict[str, list[Run]] = field(default_factory=dict)
    files: int = 0
    lines: int = 0
    functions: int | None = None
    cache: dict[str, Any] = field(default_factory=dict)
    summary: tuple[str | None, str | None] | None = None  # unittest's, of the plain run
    notes: list[str] = field(default_factory=list)


def package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise Failure(f"{name} is not an installed package")
    return Path(next(iter(spec.submodule_search_locations)))


def networkx_workload() -> Workload:
    return Workload("networkx", "`import networkx`", "import networkx\n", ["networkx"],
                    [package_dir("networkx")])


def stdlib_workload(quick: bool) -> Workload:
    suites = ["test.test_json"] if quick else STDLIB_SUITES
    for suite in suites:
        if importlib.util.find_spec(suite) is None:
            raise Failure(f"{suite} is not in this Python's test package")
    title = "CPython's " + ", ".join(f"`{s}`" for s in suites)
    return Workload("stdlib-tests", title, UNITTEST_SCRIPT.format(names=suites),
                    list(STDLIB_PACKAGES), [package_dir(p) for p in STDLIB_PACKAGES],
                    summary=True, note=STDLIB_NOTE)


def scale_workloads(quick: bool) -> list[Workload]:
    root = package_dir("networkx")
    steps = SCALE_STEPS[:2] if quick else SCALE_STEPS
    workloads, parts = [], []
    for step in steps:
        if step == ["."]:
            parts = ["."]
        else:
            parts = parts + [p for p in step if (root / p).is_dir()]
        dirs = [root / p if p != "." else root for p in parts]
        if parts == ["."]:
            label = "networkx (all)"
        elif len(parts) == len(step):
            label = "networkx/" + ", ".join(step)
        else:
            label = "+ " + ", ".join(p for p in step if (root / p).is_dir())
        workloads.append(Workload(f"scale-{len(workloads) + 1}", label, "import networkx\n",
                                  [str(d) for d in dirs], dirs))
    return workloads


# -- running -------------------------------------------------------------------------


def base_environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX", "COVERAGE_FILE",
                        "COVERAGE_PROCESS_START")}
    env["PYTHONHASHSEED"] = "0"
    return env


def cold_environment(prefix: Path) -> dict[str, str]:
    return {**base_environment(), "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONPYCACHEPREFIX": str(prefix)}


def warm_environment(prefix: Path) -> dict[str, str]:
    return {**base_environment(), "PYTHONPYCACHEPREFIX": str(prefix)}


def file_size(path: Path) -> float | None:
    """Size in MB of a data file (with any SQLite journal beside it)."""
    sizes = [p.stat().st_size for p in path.parent.glob(path.name + "*") if p.is_file()]
    return sum(sizes) / MB if sizes else None


#: Starts a command and reports its wall time, peak RSS and exit status. A small process
#: of its own (``-I``: no site, no environment variables read, builtin modules only), since
#: a child's peak RSS counts its parent's at the fork: run from this process, which has
#: read data files, every figure would be at least this process's size.
LAUNCHER = """\
import os, sys, time
start = time.perf_counter()
pid = os.posix_spawn(sys.argv[2], sys.argv[2:], os.environ)
_, status, usage = os.wait4(pid, 0)
seconds = time.perf_counter() - start
with open(sys.argv[1], "w") as f:
    cpu = usage.ru_utime + usage.ru_stime
    f.write(f"{seconds} {cpu} {usage.ru_maxrss} {os.waitstatus_to_exitcode(status)}")
"""


def execute(cmd: list[str], env: dict[str, str], cwd: Path,
            data_file: Path | None = None) -> Run:
    """Run ``cmd`` to its end: wall time, peak RSS, data file size (``LAUNCHER``)."""
    if data_file is not None:
        for old in data_file.parent.glob(data_file.name + "*"):
            old.unlink()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report"
        proc = subprocess.run([sys.executable, "-I", "-c", LAUNCHER, str(report), *cmd],
                              stdout=out, stderr=subprocess.STDOUT, env=env, cwd=cwd,
                              check=False)
        out.seek(0)
        output = out.read().decode("utf-8", "replace")
        if proc.returncode != 0 or not report.exists():
            return Run(0.0, 0.0, 0.0, None, proc.returncode or 1, output)
        seconds, cpu, maxrss, status = report.read_text(encoding="utf-8").split()
    # ru_maxrss: kilobytes on Linux, bytes on macOS
    rss = int(maxrss) * (1 if sys.platform == "darwin" else 1024) / MB
    data = file_size(data_file) if data_file is not None else None
    return Run(float(seconds), float(cpu), rss, data, int(status), output)


class Runner:
    """The five commands of a workload, in its working directory."""

    def __init__(self, workload: Workload, work: Path, warm_prefix: Path,
                 cold_prefix: Path) -> None:
        self.workload = workload
        self.dir = work / workload.name
        self.dir.mkdir(parents=True)
        self.script = self.dir / "script.py"
        self.script.write_text(workload.script, encoding="utf-8")
        self.warm_prefix = warm_prefix
        self.cold_prefix = cold_prefix
        self.pathprof_data = self.dir / "data.pathprof"
        self.coverage_data = self.dir / "data.coverage"

    def sources(self) -> list[str]:
        return [a for s in self.workload.source for a in ("--source", s)]

    def command(self, mode: str) -> tuple[list[str], dict[str, str], Path | None]:
        py, script = sys.executable, str(self.script)
        pathprof = [py, "-m", "pathprof", "run", "--data-file", str(self.pathprof_data)]
        if mode == "nopyc":
            return [py, script], cold_environment(self.cold_prefix), None
        if mode == "first":
            return ([*pathprof, "--no-cache", *self.sources(), script],
                    cold_environment(self.cold_prefix), self.pathprof_data)
        if mode == "plain":
            return [py, script], warm_environment(self.warm_prefix), None
        if mode == "coverage":
            # coverage.py's --source is one comma list (a second --source replaces it)
            return ([py, "-m", "coverage", "run", "--branch", "--data-file",
                     str(self.coverage_data), "--source", ",".join(self.workload.source),
                     script],
                    warm_environment(self.warm_prefix), self.coverage_data)
        if mode == "warm":
            return ([*pathprof, *self.sources(), script],
                    warm_environment(self.warm_prefix), self.pathprof_data)
        raise ValueError(mode)

    def run(self, mode: str, env: dict[str, str] | None = None) -> Run:
        cmd, mode_env, data = self.command(mode)
        run = execute(cmd, env if env is not None else mode_env, self.dir, data)
        if run.status != 0:
            raise Failure(f"{self.workload.name}: {mode} exited with status {run.status}: "
                          f"{' '.join(cmd)}\n{tail(run.output)}")
        return run


def tail(text: str, lines: int = 30) -> str:
    return "\n".join(text.splitlines()[-lines:])


def unittest_summary(output: str) -> tuple[str | None, str | None]:
    ran = re.findall(r"^Ran (\d+) tests?", output, re.MULTILINE)
    status = re.findall(r"^(OK|FAILED)\b.*$", output, re.MULTILINE)
    return (ran[-1] if ran else None, status[-1] if status else None)


def cache_entries(roots: list[Path]) -> set[Path]:
    """pathprof's cache entries (``*.pathprof-*.pyc``) under ``roots``."""
    found: set[Path] = set()
    for root in roots:
        if root.is_dir():
            found.update(p for p in root.rglob("*.pathprof-*.pyc"))
    return found


def mirror(prefix: Path, directory: Path) -> Path:
    """Where Python keeps the bytecode of ``directory``'s modules under ``prefix``."""
    return prefix / directory.resolve().relative_to(directory.resolve().anchor)


def pyc_files(prefix: Path, dirs: list[Path]) -> list[Path]:
    found: list[Path] = []
    for d in dirs:
        for m in {mirror(prefix, d), prefix / Path(os.path.abspath(d)).relative_to("/")}:
            if m.is_dir():
                found.extend(m.rglob("*.pyc"))
    return found


def measured(coverage_data: Path) -> list[str]:
    """The files coverage.py saw run (an executed arc or line)."""
    import coverage

    data = coverage.CoverageData(basename=str(coverage_data))
    data.read()
    return sorted(f for f in data.measured_files() if data.arcs(f) or data.lines(f))


def count_lines(files: list[str]) -> int:
    total = 0
    for f in files:
        with open(f, encoding="utf-8", errors="replace") as stream:
            total += sum(1 for _ in stream)
    return total


def pathprof_functions(data_file: Path) -> int | None:
    try:
        import pathprof

        return len(pathprof.load(str(data_file)).functions)
    except Exception as err:  # a figure of the table, not a check
        print(f"  (pathprof's data file could not be read: {err})", file=sys.stderr)
        return None


def prepare_cold(master: Path, cold: Path, workload: Workload) -> None:
    """``cold``: the master bytecode tree less the measured directories' bytecode."""
    shutil.copytree(master, cold)
    for d in workload.dirs:
        for m in {mirror(cold, d), cold / Path(os.path.abspath(d)).relative_to("/")}:
            if m.is_dir():
                shutil.rmtree(m)
    left = pyc_files(cold, workload.dirs)
    if left:
        raise Failure(f"{workload.name}: bytecode of measured code left in {cold}: {left[:3]}")


def fill_master(runner: Runner, master: Path) -> None:
    """Compile what a plain run and a pathprof run import into ``master``."""
    env = {**base_environment(), "PYTHONPYCACHEPREFIX": str(master)}
    runner.run("plain", env)
    runner.run("first", env)


def warm_up(runner: Runner, result: Result, log: Any) -> None:
    """One run of each warm tool (bytecode, pathprof's cache), and the checks."""
    w = runner.workload
    roots = [runner.warm_prefix, runner.dir, *w.dirs]
    if os.environ.get("PATHPROF_CACHE_DIR"):
        roots.append(Path(os.environ["PATHPROF_CACHE_DIR"]))
    plain = runner.run("plain")
    coverage = runner.run("coverage")
    files = measured(runner.coverage_data)
    if not files:
        raise Failure(f"{w.name}: coverage.py measured no file of {w.source}")
    result.files, result.lines = len(files), count_lines(files)
    before = cache_entries(roots)
    fill = runner.run("warm")
    second = runner.run("warm")
    entries = cache_entries(roots)
    stems = {Path(f).name.split(".")[0] for f in files}
    with_entry = {e.name.split(".")[0] for e in entries} & stems
    result.cache = {"entries": len(entries), "new_entries": len(entries - before),
                    "filling_run_s": fill.seconds, "second_run_s": second.seconds,
                    "module_names_with_entry": len(with_entry),
                    "module_names_measured": len(stems)}
    result.functions = pathprof_functions(runner.pathprof_data)
    log(f"  {w.name}: {result.files} files, {result.lines:,} lines measured; "
        f"pathprof: {result.functions} functions; cache: {len(entries)} entries "
        f"({len(entries - before)} new), runs {fill.seconds:.1f} s then {second.seconds:.1f} s")
    if len(with_entry) < 0.9 * len(stems):
        result.notes.append(
            f"pathprof's cache entries were found for {len(with_entry)} of {len(stems)} "
            f"measured module names (looked under {', '.join(map(str, roots))}); warm-up "
            f"runs took {fill.seconds:.1f} s then {second.seconds:.1f} s")
    if w.summary:
        expected = unittest_summary(plain.output)
        if None in expected:
            raise Failure(f"{w.name}: no unittest summary in the plain run:\n"
                          f"{tail(plain.output)}")
        result.summary = expected
        for mode, run in (("coverage", coverage), ("warm", second)):
            if unittest_summary(run.output) != expected:
                raise Failure(f"{w.name}: {mode} ran {unittest_summary(run.output)}, plain "
                              f"{expected}:\n{tail(run.output)}")


def measure(runner: Runner, result: Result, repeats: int, log: Any) -> None:
    w = runner.workload
    expected = result.summary
    for i in range(repeats):
        for mode in MODES:
            run = runner.run(mode)
            if expected is not None and unittest_summary(run.output) != expected:
                raise Failure(f"{w.name}: {mode} ran {unittest_summary(run.output)}, "
                              f"plain {expected}:\n{tail(run.output)}")
            result.runs.setdefault(mode, []).append(run)
        r = {m: result.runs[m][-1] for m in MODES}
        log(f"  {w.name} repeat {i + 1}/{repeats}: " + ", ".join(
            f"{m} {r[m].seconds:.2f} s" for m in MODES))
    left = pyc_files(runner.cold_prefix, w.dirs)
    if left:
        raise Failure(f"{w.name}: the first runs read or wrote bytecode of measured code "
                      f"({left[:3]}): Python did not compile it")


# -- figures -------------------------------------------------------------------------


def median(values: list[float]) -> float:
    return statistics.median(values)


def figures(result: Result) -> dict[str, Any]:
    runs = result.runs
    n = len(runs["plain"])

    def ratio(a: str, b: str, attr: str = "seconds") -> float:
        return median([getattr(runs[a][i], attr) / getattr(runs[b][i], attr)
                       for i in range(n)])

    def med(mode: str, attr: str = "seconds") -> float:
        return median([getattr(r, attr) for r in runs[mode]])

    return {
        "seconds": {m: med(m) for m in MODES},
        "cpu": {m: med(m, "cpu") for m in MODES},
        "rss_mb": {m: med(m, "rss_mb") for m in MODES},
        "data_mb": {"pathprof": med("warm", "data_mb"), "coverage": med("coverage", "data_mb"),
                    "pathprof_first": med("first", "data_mb")},
        "first_over_nopyc": ratio("first", "nopyc"),
        "nopyc_over_plain": ratio("nopyc", "plain"),
        "warm_over_coverage": ratio("warm", "coverage"),
        "first_over_nopyc_cpu": ratio("first", "nopyc", "cpu"),
        "warm_over_coverage_cpu": ratio("warm", "coverage", "cpu"),
        "warm_over_plain": ratio("warm", "plain"),
        "coverage_over_plain": ratio("coverage", "plain"),
        "memory_warm_over_coverage": ratio("warm", "coverage", "rss_mb"),
    }


def verdict(value: float, target: float) -> str:
    return "yes" if value <= target else "**no**"


def workload_table(result: Result) -> list[str]:
    f = figures(result)
    s, rss, data, c = f["seconds"], f["rss_mb"], f["data_mb"], f["cpu"]
    w = result.workload
    functions = f"; pathprof: {result.functions:,} functions" if result.functions else ""
    lines = [
        f"### {w.title}",
        "",
        f"Measured: `{' '.join('--source ' + x for x in w.source)}` -- {result.files} files, "
        f"{result.lines:,} lines that ran{functions}.",
        "",
        "| figure | pathprof | baseline | ratio | target | met |",
        "| --- | ---: | ---: | ---: | ---: | --- |",
        f"| first run: `pathprof run --no-cache` / plain Python compiling the measured "
        f"modules (no bytecode) | {s['first']:.2f} s | {s['nopyc']:.2f} s "
        f"| {f['first_over_nopyc']:.2f}x | <= {TARGET_FIRST:g}x "
        f"| {verdict(f['first_over_nopyc'], TARGET_FIRST)} |",
        f"| warm: `pathprof run`, cache warm / `coverage run --branch` | {s['warm']:.2f} s "
        f"| {s['coverage']:.2f} s | {f['warm_over_coverage']:.2f}x | <= {TARGET_WARM:g}x "
        f"| {verdict(f['warm_over_coverage'], TARGET_WARM)} |",
        f"| peak memory (max RSS), warm / coverage.py | {rss['warm']:.0f} MB "
        f"| {rss['coverage']:.0f} MB | {f['memory_warm_over_coverage']:.2f}x "
        f"| <= {TARGET_MEMORY:g}x | {verdict(f['memory_warm_over_coverage'], TARGET_MEMORY)} |",
        f"| data file: pathprof's / coverage.py's `.coverage` | {data['pathprof']:.2f} MB "
        f"| {data['coverage']:.2f} MB | {data['pathprof'] / data['coverage']:.1f}x "
        f"| <= {TARGET_DATA_MB:g} MB | {verdict(data['pathprof'], TARGET_DATA_MB)} |",
        f"| reference: the same two ratios in CPU time (user + system) "
        f"| {c['first']:.2f} s; {c['warm']:.2f} s | {c['nopyc']:.2f} s; {c['coverage']:.2f} s "
        f"| {f['first_over_nopyc_cpu']:.2f}x; {f['warm_over_coverage_cpu']:.2f}x | | |",
        f"| reference: plain Python, warm bytecode | | {s['plain']:.2f} s, "
        f"{rss['plain']:.0f} MB | | | |",
        f"| reference: plain Python, no bytecode / warm bytecode | {s['nopyc']:.2f} s "
        f"| {s['plain']:.2f} s | {f['nopyc_over_plain']:.2f}x | | |",
        f"| reference: warm pathprof / plain; coverage / plain | | "
        f"| {f['warm_over_plain']:.2f}x; {f['coverage_over_plain']:.2f}x | | |",
        "",
    ]
    cache = result.cache
    if cache:
        lines += [f"pathprof's cache before timing: {cache['entries']} entries "
                  f"({cache['new_entries']} written by the warm-up), "
                  f"{cache['module_names_with_entry']} of {cache['module_names_measured']} "
                  f"measured module names; warm-up runs {cache['filling_run_s']:.2f} s "
                  f"(filling it), then {cache['second_run_s']:.2f} s.", ""]
    if w.note:
        lines += [w.note, ""]
    lines += [f"Note: {n}" for n in result.notes]
    if result.notes:
        lines.append("")
    return lines


def least_squares(xs: list[float], ys: list[float]) -> tuple[float, float, float]:
    """Slope, intercept and R^2 of the straight line through (xs, ys)."""
    if len(xs) < 2:
        return float("nan"), float("nan"), float("nan")
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
    slope = sxy / sxx
    intercept = my - slope * mx
    ss_tot = sum((y - my) ** 2 for y in ys)
    ss_res = sum((y - intercept - slope * x) ** 2 for x, y in zip(xs, ys, strict=True))
    return slope, intercept, (1 - ss_res / ss_tot) if ss_tot else 1.0


def scale_tables(results: list[Result]) -> tuple[list[str], dict[str, Any]]:
    rows = []
    for r in results:
        f = figures(r)
        k = r.lines / 1000
        s, rss = f["seconds"], f["rss_mb"]
        rows.append({
            "label": r.workload.title, "files": r.files, "lines": r.lines, "f": f,
            "compile_s": s["nopyc"] - s["plain"],
            "per_k": {
                "compile_s": (s["nopyc"] - s["plain"]) / k,
                "first_s": (s["first"] - s["plain"]) / k,
                "warm_s": (s["warm"] - s["plain"]) / k,
                "coverage_s": (s["coverage"] - s["plain"]) / k,
                "first_cpu": (f["cpu"]["first"] - f["cpu"]["plain"]) / k,
                "warm_cpu": (f["cpu"]["warm"] - f["cpu"]["plain"]) / k,
                "data_mb": f["data_mb"]["pathprof"] / k,
                "peak_mb": (rss["warm"] - rss["plain"]) / k,
            },
        })
    out = [
        "### Growth with the lines measured (`import networkx`, measuring a part of it)",
        "",
        "| measured (`--source`) | files | lines | plain s | no bytecode s | first run s "
        "| first / no bytecode | warm s | coverage s | warm / coverage | data MB | peak MB "
        "| peak / coverage |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
        "| ---: |",
    ]
    for row in rows:
        f = row["f"]
        s = f["seconds"]
        out.append(
            f"| {row['label']} | {row['files']} | {row['lines']:,} | {s['plain']:.2f} "
            f"| {s['nopyc']:.2f} "
            f"| {s['first']:.2f} | {f['first_over_nopyc']:.2f}x | {s['warm']:.2f} "
            f"| {s['coverage']:.2f} | {f['warm_over_coverage']:.2f}x "
            f"| {f['data_mb']['pathprof']:.2f} | {f['rss_mb']['warm']:.0f} "
            f"| {f['memory_warm_over_coverage']:.2f}x |")
    keys = [("compile_s", "compile s"), ("first_s", "first run s"), ("warm_s", "warm s"),
            ("coverage_s", "coverage s"), ("first_cpu", "first run CPU s"),
            ("warm_cpu", "warm CPU s"), ("data_mb", "data MB"), ("peak_mb", "peak MB")]
    out += [
        "",
        "Per 1,000 lines measured (times and peak over the plain warm run of the same size; "
        "compile = no bytecode over warm bytecode, plain Python; CPU = user + system time, "
        "less sensitive than wall time to other load on the machine), and the least-squares "
        "slope of each figure against the lines measured (per 1,000 lines; R^2 near 1: "
        "linear):",
        "",
        "| lines | " + " | ".join(name for _, name in keys) + " |",
        "| ---: | " + " | ".join("---:" for _ in keys) + " |",
    ]
    for row in rows:
        out.append(f"| {row['lines']:,} | "
                   + " | ".join(f"{row['per_k'][key]:.4f}" for key, _ in keys) + " |")
    xs = [row["lines"] / 1000 for row in rows]
    slopes = {}
    for key, _ in keys:
        ys = [row["per_k"][key] * row["lines"] / 1000 for row in rows]
        slopes[key] = least_squares(xs, ys)
    out.append("| **slope** | " + " | ".join(f"**{slopes[k][0]:.4f}**" for k, _ in keys) + " |")
    out.append("| intercept | " + " | ".join(f"{slopes[k][1]:.3f}" for k, _ in keys) + " |")
    out.append("| R^2 | " + " | ".join(f"{slopes[k][2]:.3f}" for k, _ in keys) + " |")
    out.append("")
    for r in results:
        out += [f"Note ({r.workload.title}): {n}" for n in r.notes]
    return out, {"rows": [{k: v for k, v in row.items() if k != "f"} for row in rows],
                 "slopes": {k: dict(zip(("slope", "intercept", "r2"), v, strict=True))
                            for k, v in slopes.items()}}


# -- main ------------------------------------------------------------------------------


def version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def revision() -> str | None:
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO,
                              capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "src"], cwd=REPO,
                               capture_output=True, text=True, check=True).stdout.strip()
        src = subprocess.run(["git", "log", "-1", "--format=%h", "--", "src"], cwd=REPO,
                             capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return head + ("+dirty" if dirty else "") + (f" (src/ of {src})" if src != head else "")


def coverage_core(work: Path) -> str:
    script = work / "empty.py"
    script.write_text("pass\n", encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "coverage", "run", "--branch", "--debug=sys",
                           "--data-file", str(work / "empty.coverage"), str(script)],
                          capture_output=True, text=True, cwd=work, check=False,
                          env=base_environment())
    found = re.search(r"core:\s*(\S+)", proc.stdout + proc.stderr)
    return found.group(1) if found else "unknown"


def run_all(args: argparse.Namespace, work: Path, log: Any) -> dict[str, list[Result]]:
    repeats = 1 if args.quick else args.repeats
    chosen = ["networkx", "stdlib-tests", "scale"] if args.workload == "all" else [
        args.workload]
    warm_prefix = work / "pyc-warm"
    out: dict[str, list[Result]] = {}
    masters: dict[str, Path] = {}
    for name in chosen:
        workloads = {"networkx": lambda: [networkx_workload()],
                     "stdlib-tests": lambda: [stdlib_workload(args.quick)],
                     "scale": lambda: scale_workloads(args.quick)}[name]()
        # The bytecode of everything but the measured code: one tree per program
        # (scale's is networkx's).
        key = "stdlib-tests" if name == "stdlib-tests" else "networkx"
        if key not in masters:
            masters[key] = work / f"pyc-master-{key}"
            log(f"{key}: compiling everything a plain run and a pathprof run import")
            program = networkx_workload() if key == "networkx" else workloads[0]
            fill_master(Runner(program, work / f"master-{key}", warm_prefix, masters[key]),
                        masters[key])
        results = []
        for w in workloads:
            log(f"{w.name}: {w.title}")
            master = masters[key]
            cold = work / f"pyc-cold-{w.name}"
            prepare_cold(master, cold, w)
            runner = Runner(w, work, warm_prefix, cold)
            result = Result(w)
            warm_up(runner, result, log)
            measure(runner, result, repeats, log)
            results.append(result)
        out[name] = results
    return out


def run_record(run: Run) -> dict[str, Any]:
    return {"seconds": run.seconds, "cpu": run.cpu, "rss_mb": run.rss_mb,
            "data_mb": run.data_mb}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="interleaved repeats (3)")
    parser.add_argument("--workload", default="all",
                        choices=["networkx", "stdlib-tests", "scale", "all"])
    parser.add_argument("--out", default=str(REPO / "benchmarks" / "results"),
                        help="directory for the JSON and Markdown results")
    parser.add_argument("--quick", action="store_true",
                        help="one repeat, the json suite alone, two sizes: a smoke test")
    args = parser.parse_args(argv)

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    now = datetime.datetime.now(datetime.UTC)
    load_start = os.getloadavg()
    rev = revision()
    versions = {d: version(d) for d in ("pathprof", "coverage", "networkx")}
    with tempfile.TemporaryDirectory(prefix="pathprof-scale-") as tmp:
        work = Path(tmp)
        core = coverage_core(work)
        log(f"Python {platform.python_version()} ({sys.executable}), pathprof at "
            f"{rev or '?'}; load average {load_start[0]:.2f} on {os.cpu_count()} CPUs")
        try:
            results = run_all(args, work, log)
        except Failure as err:
            log(f"FAILED: {err}")
            return 1
    repeats = 1 if args.quick else args.repeats
    command = " ".join(["python", "benchmarks/scale.py", *(argv if argv is not None
                                                           else sys.argv[1:])])
    md = [
        f"Python {platform.python_version()} on {platform.platform()}, {os.cpu_count()} CPUs "
        f"(load average {load_start[0]:.2f} at start, {os.getloadavg()[0]:.2f} at end); "
        f"{now.isoformat(timespec='seconds')}; pathprof at {rev}; "
        + ", ".join(f"{d} {v}" for d, v in versions.items()) + f" (coverage.py core {core}).",
        "",
        f"Command: `{command}` -- {repeats} interleaved repeat(s) of nopyc, first, plain, "
        "coverage, warm; whole-process wall times and peak RSS are medians, each ratio the "
        "median over the repeats of the ratio within a repeat.",
        "",
    ]
    record: dict[str, Any] = {
        "python": platform.python_version(), "platform": platform.platform(),
        "cpus": os.cpu_count(), "loadavg_at_start": load_start,
        "loadavg_at_end": os.getloadavg(), "date": now.isoformat(timespec="seconds"),
        "command": command, "repeats": repeats, "pathprof_revision": rev,
        "versions": versions, "coverage_core": core, "workloads": {},
    }
    for name, rs in results.items():
        for r in rs:
            record["workloads"][r.workload.name] = {
                "title": r.workload.title, "source": r.workload.source, "files": r.files,
                "lines": r.lines, "functions": r.functions, "cache": r.cache,
                "notes": r.notes, "figures": figures(r),
                "runs": {m: [run_record(x) for x in runs] for m, runs in r.runs.items()},
            }
        if name == "scale":
            table, scale_record = scale_tables(rs)
            md += table
            record["scale"] = scale_record
        else:
            md += workload_table(rs[0])
    text = "\n".join(md)
    print(text)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stem = f"scale-{platform.python_version()}-{now.strftime('%Y%m%dT%H%M%S')}"
    (out / f"{stem}.json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    (out / f"{stem}.md").write_text(text + "\n", encoding="utf-8")
    log(f"wrote {out / stem}.json and .md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
