"""Four real projects' own test suites, plain, under ``--cov-branch`` and under ``--pathprof``.

Issue 24's acceptance: ``make realsuites`` (or ``python benchmarks/realsuites.py``)
downloads the sdists of attrs 25.3.0, python-dateutil 2.9.0.post0, jinja2 3.1.6 and
packaging 25.0 from the package index, makes a virtual environment for each with the
running interpreter (pathprof from this checkout, pytest, pytest-cov, the project and its
test dependencies), and runs the project's test suite from the unpacked sdist three ways,
each timed (wall time, best of ``--repeat``), with ``PYTHONHASHSEED=0``:

- plain: ``python -m pytest -q -p no:cacheprovider ARGS``;
- coverage.py: the same with ``--cov=PKG --cov-branch --cov-report=json:FILE``;
- pathprof: the same with ``--pathprof=PKG --pathprof-report=json:FILE --pathprof-report=term``
  (functions stop counting once their basis is full, the default);
- pathprof counting every run: the same with ``--pathprof-stop-counting=never`` (issue 21:
  what ``--pathprof`` cost before). The two must give the same basis path coverage,
  function by function, and the default no more paths run: a difference is a failure.

It checks that pytest's summary counts (passed, failed, skipped, xfailed, xpassed,
errors, deselected) are the same in the three runs -- a difference is printed loudly
and makes the exit status 1 -- and prints a Markdown table: the tests, the plain time,
the two ratios to plain, pathprof's headline (basis path coverage) with the paths run of
possible, coverage.py's branch coverage, the size of pathprof's terminal section in lines
and of its JSON report. It also checks issue 24's section 1 acceptance: the largest move
of the basis headline when any one function is left out (must be below 2 points).

Options: ``--workdir DIR`` (sdists, unpacked trees, venvs, logs and reports; default
``/tmp/pathprof-realsuites``), ``--projects a,b`` (default all four), ``--repeat N``
(default 1), ``--fresh`` (rebuild the venvs), ``--pathprof-rev REV`` (install pathprof
from ``git archive REV`` of this checkout instead of the working tree, editable: useful
while the working tree is being edited), ``--dont-write-bytecode`` (run the suites with
``PYTHONDONTWRITEBYTECODE=1`` and no instrumentation cache left from an earlier run; by
default the variable is unset, so pytest and pathprof write and reuse their caches).
Needs the package index and nothing else. Not part of ``make test``/``.ci/run``: a run
of the four with ``--repeat 3`` took about 6.5 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


@dataclass
class Project:
    name: str  # the distribution name on the package index
    version: str
    packages: list[str]  # what --cov and --pathprof measure (importable packages)
    deps: list[str]  # test dependencies, from the sdist's tox.ini / extras / requirements
    args: list[str]  # what to collect, and options the suite needs
    notes: str = ""
    env: dict[str, str] = field(default_factory=dict)


# Test dependencies as each sdist declares them, less what only CI or type checking needs:
# attrs: the "tests" extra (cloudpickle, hypothesis, pympler, pytest-xdist) without
#   "tests-mypy" (mypy, pytest-mypy-plugins: tests/test_mypy.yml type-checks for minutes)
#   and without pytest-xdist (the runs are sequential); tests/test_pyright.py skips itself
#   without pyright.
# python-dateutil: requirements-dev.txt less pytest-cov/coverage/build (installed anyway
#   or unused); tox runs "tests" and "docs".
# jinja2: requirements/tests.in (pytest, trio).
# packaging: tests/requirements.txt (coverage, pip, pretend, pytest).
# Hypothesis suites run with --hypothesis-seed=0 so the three runs draw the same examples.
PROJECTS = {
    "attrs": Project(
        "attrs",
        "25.3.0",
        ["attr", "attrs"],
        ["hypothesis", "pympler", "cloudpickle"],
        ["tests", "--hypothesis-seed=0"],
    ),
    "python-dateutil": Project(
        "python-dateutil",
        "2.9.0.post0",
        ["dateutil"],
        ["hypothesis", "freezegun", "six"],
        # pytest 9 deprecates generators as parametrize values (tests/test_isoparser.py) and
        # the suite's filterwarnings = error turns that into a collection error.
        ["tests", "docs", "--hypothesis-seed=0", "-W", "ignore::pytest.PytestRemovedIn10Warning"],
    ),
    "jinja2": Project(
        "jinja2",
        "3.1.6",
        ["jinja2"],
        ["trio"],
        ["tests"],
    ),
    "packaging": Project(
        "packaging",
        "25.0",
        ["packaging"],
        ["pretend", "pip", "coverage"],
        ["tests"],
    ),
}

OUTCOMES = ("passed", "failed", "skipped", "xfailed", "xpassed", "error", "deselected")
SUMMARY_RE = re.compile(r"^\W*(\d+ [a-z]+(?:, \d+ [a-z]+)*) in [\d.]+s\b")


def log(*args: object) -> None:
    print(*args, file=sys.stderr, flush=True)


def run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    log("$", " ".join(str(c) for c in cmd))
    return subprocess.run(cmd, check=True, **kw)


def download_and_unpack(p: Project, work: Path) -> Path:
    sdists = work / "sdists"
    sdists.mkdir(parents=True, exist_ok=True)
    stem = f"{p.name}-{p.version}"
    found = [
        f
        for f in sdists.glob("*.tar.gz")
        if f.name.lower().replace("_", "-") == f"{stem}.tar.gz".lower()
    ]
    if not found:
        run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--quiet",
                "--disable-pip-version-check",
                "--no-deps",
                "--no-binary",
                ":all:",
                f"{p.name}=={p.version}",
                "-d",
                str(sdists),
            ]
        )
        found = [
            f
            for f in sdists.glob("*.tar.gz")
            if f.name.lower().replace("_", "-") == f"{stem}.tar.gz".lower()
        ]
    sdist = found[0]
    src = work / "src"
    tree = src / sdist.name[: -len(".tar.gz")]
    if not tree.exists():
        src.mkdir(parents=True, exist_ok=True)
        with tarfile.open(sdist) as tar:
            tar.extractall(src, filter="data")
    return tree


def pathprof_source(work: Path, rev: str | None) -> tuple[str, list[str]]:
    """What pip installs pathprof from, and a description (commit, dirty or not)."""
    head = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short", rev or "HEAD"],
        capture_output=True,
        text=True,
    ).stdout.strip()
    if rev is None:
        dirty = subprocess.run(
            ["git", "-C", str(REPO), "status", "--porcelain", "--", "src"],
            capture_output=True,
            text=True,
        ).stdout.strip()
        desc = f"working tree of {REPO} at {head}" + (
            " with uncommitted changes in src/" if dirty else ""
        )
        return desc, ["-e", str(REPO)]
    dest = work / f"pathprof-{head}"
    if not dest.exists():
        dest.mkdir(parents=True)
        archive = subprocess.run(
            ["git", "-C", str(REPO), "archive", rev], capture_output=True, check=True
        ).stdout
        subprocess.run(["tar", "x", "-C", str(dest)], input=archive, check=True)
    return f"commit {head} (git archive)", [str(dest)]


def make_venv(p: Project, tree: Path, work: Path, pathprof_spec: list[str], fresh: bool) -> Path:
    venv = work / "venvs" / f"{p.name}-{p.version}"
    stamp = venv / ".realsuites-installed"
    want = json.dumps([sys.version, pathprof_spec, p.deps])
    if fresh or not stamp.exists() or stamp.read_text() != want:
        shutil.rmtree(venv, ignore_errors=True)
        run([sys.executable, "-m", "venv", str(venv)])
        py = venv / "bin" / "python"
        pip = [str(py), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
        # pathprof first, then the project from its sdist tree: the project's own version
        # wins over what pytest pulls in (packaging).
        run([*pip, *pathprof_spec, "pytest", "pytest-cov", *p.deps])
        run([*pip, str(tree)])
        stamp.write_text(want)
    freeze = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "freeze", "--all"],
        capture_output=True,
        text=True,
    ).stdout
    (venv / "freeze.txt").write_text(freeze)
    return venv / "bin" / "python"


def versions(py: Path) -> str:
    freeze = (py.parent.parent / "freeze.txt").read_text().splitlines()
    keep = ("pytest==", "pytest-cov==", "coverage==", "hypothesis==")
    return ", ".join(line for line in freeze if line.lower().startswith(keep))


def parse_summary(out: str) -> dict[str, int] | None:
    for line in reversed(out.splitlines()):
        m = SUMMARY_RE.match(line.strip())
        if m:
            counts = {}
            for part in m.group(1).split(", "):
                n, what = part.split(" ", 1)
                what = {"errors": "error", "warning": "warnings"}.get(what, what)
                counts[what] = int(n)
            return counts
    return None


def pathprof_section_lines(out: str) -> int:
    """Lines of the ``pathprof: path coverage`` section, its separator included, up to the
    next section separator or pytest's closing summary line."""
    lines = out.splitlines()
    start = next(
        (i for i, s in enumerate(lines) if re.match(r"^-+ pathprof: path coverage -+$", s)), None
    )
    if start is None:
        return 0
    n = 1
    for s in lines[start + 1 :]:
        if re.match(r"^[-=]{3,} .* [-=]{3,}$", s) or SUMMARY_RE.match(s.strip()):
            break
        n += 1
    return n


def one_out_max(report: dict) -> tuple[float, str]:
    """Issue 24 section 1: the largest |headline - headline without function f| over f."""
    fns = [(f["file"], fn) for f in report["files"] for fn in f["functions"]]
    c = sum(fn["basis_covered"] for _, fn in fns)
    d = sum(fn["basis_dimension"] for _, fn in fns)
    head = 100.0 * c / d if d else 100.0
    best, who = 0.0, ""
    for file, fn in fns:
        rest = d - fn["basis_dimension"]
        without = 100.0 * (c - fn["basis_covered"]) / rest if rest else 100.0
        if abs(head - without) > best:
            best = abs(head - without)
            cd = f"{fn['basis_covered']}/{fn['basis_dimension']}"
            who = f"{Path(file).name}:{fn['qualname']} ({cd})"
    return best, who


@dataclass
class Result:
    project: Project
    times: dict[str, float] = field(default_factory=dict)
    counts: dict[str, dict[str, int] | None] = field(default_factory=dict)
    rc: dict[str, int] = field(default_factory=dict)
    logs: dict[str, Path] = field(default_factory=dict)
    pathprof: dict | None = None
    #: the pathprof JSON report of the run that counted every run
    pathprof_never: dict | None = None
    cov: dict | None = None
    term_lines: int = 0
    json_kib: float = 0.0
    #: "N of M": functions that went back to original code under --pathprof
    stopped: str = "-"
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def run_suite(
    p: Project, py: Path, tree: Path, work: Path, repeat: int, bytecode: bool = True
) -> Result:
    res = Result(p)
    out_dir = work / "out" / f"{p.name}-{p.version}"
    out_dir.mkdir(parents=True, exist_ok=True)
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PYTEST_", "COV_CORE_", "COVERAGE_", "PATHPROF", "VIRTUAL_ENV"))
    }
    env.update(PYTHONHASHSEED="0", COVERAGE_FILE=str(out_dir / ".coverage"), **p.env)
    # Bytecode caches as most users have them (written): pytest's rewritten test modules,
    # and pathprof's instrumented modules, which it does not write under -B (issue 24 §5).
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if not bytecode:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PATH"] = f"{py.parent}{os.pathsep}{env.get('PATH', '')}"
    base = [str(py), "-m", "pytest", "-q", "-p", "no:cacheprovider", *p.args]
    cov_json = out_dir / "coverage.json"
    pp_json = out_dir / "pathprof.json"
    never_json = out_dir / "pathprof-never.json"
    modes = {
        "plain": [],
        "cov": [
            *(f"--cov={k}" for k in p.packages),
            "--cov-branch",
            f"--cov-report=json:{cov_json}",
        ],
        "pathprof": [
            *(f"--pathprof={k}" for k in p.packages),
            f"--pathprof-data-file={out_dir / '.pathprof'}",
            f"--pathprof-report=json:{pp_json}",
            "--pathprof-report=term",
        ],
        "pathprof-never": [
            *(f"--pathprof={k}" for k in p.packages),
            f"--pathprof-data-file={out_dir / '.pathprof-never'}",
            f"--pathprof-report=json:{never_json}",
            "--pathprof-report=term",
            "--pathprof-stop-counting=never",
        ],
    }
    for mode, extra in modes.items():
        best = None
        for i in range(repeat):
            for f in {"cov": [cov_json], "pathprof": [pp_json],
                      "pathprof-never": [never_json]}.get(mode, []):
                f.unlink(missing_ok=True)
            if not bytecode:
                # As a user under -B sees it: no instrumentation cache from an earlier run.
                for f in py.parent.parent.glob("lib/python*/site-packages/**/*.pathprof-*.pyc"):
                    f.unlink()
            logf = out_dir / f"{mode}.{i}.log"
            log(f"[{p.name}] {mode} run {i + 1}/{repeat} -> {logf}")
            t0 = time.perf_counter()
            proc = subprocess.run(
                base + extra,
                cwd=tree,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
            t = time.perf_counter() - t0
            logf.write_text(proc.stdout)
            best = t if best is None else min(best, t)
            res.rc[mode] = proc.returncode
            res.logs[mode] = logf
            res.counts[mode] = parse_summary(proc.stdout)
            if mode == "pathprof":
                res.term_lines = pathprof_section_lines(proc.stdout)
        res.times[mode] = best
    if cov_json.exists():
        res.cov = json.loads(cov_json.read_text())["totals"]
    else:
        res.problems.append(f"no coverage.py JSON report ({cov_json}); see {res.logs['cov']}")
    if pp_json.exists():
        res.pathprof = json.loads(pp_json.read_text())
        res.json_kib = pp_json.stat().st_size / 1024
    else:
        res.problems.append(f"no pathprof JSON report ({pp_json}); see {res.logs['pathprof']}")
    if never_json.exists():
        res.pathprof_never = json.loads(never_json.read_text())
    if (out_dir / ".pathprof").exists() and (out_dir / ".pathprof-never").exists():
        stopped, total, counted = stopped_functions(out_dir / ".pathprof")
        _, _, every = stopped_functions(out_dir / ".pathprof-never")
        left = 1 - counted / every if every else 0.0
        res.stopped = f"{stopped:,} of {total:,}; {left:.1%} of path executions uncounted"
    check(res)
    return res


def check(res: Result) -> None:
    def outcomes(c):
        return None if c is None else {k: v for k, v in c.items() if k in OUTCOMES}

    plain = outcomes(res.counts["plain"])
    if plain is None:
        res.problems.append(f"no pytest summary line in the plain run ({res.logs['plain']})")
    for mode in ("cov", "pathprof", "pathprof-never"):
        got = outcomes(res.counts[mode])
        if got != plain:
            res.problems.append(
                f"{mode} results differ from plain: {fmt_counts(got)} vs {fmt_counts(plain)}"
                f" (see {res.logs[mode]})"
            )
        if res.rc[mode] != res.rc["plain"]:
            res.problems.append(f"{mode} exit status {res.rc[mode]}, plain {res.rc['plain']}")
        w, wp = (
            (res.counts[mode] or {}).get("warnings", 0),
            (res.counts["plain"] or {}).get("warnings", 0),
        )
        if w != wp:
            res.notes.append(f"{mode}: {w} warnings, plain {wp} (see {res.logs[mode]})")
    if res.pathprof is not None and res.pathprof_never is not None:
        res.problems += stopping_differences(res.pathprof, res.pathprof_never)
    if res.pathprof is not None:
        m, who = one_out_max(res.pathprof)
        if m >= 2.0:
            res.problems.append(
                f"issue 24 section 1: leaving out {who} moves the headline by {m:.2f} points"
            )


def _by_function(report: dict) -> dict[tuple[str, str, int], dict]:
    return {(f["file"], fn["qualname"], fn["first_line"]): fn
            for f in report["files"] for fn in f["functions"]}


def stopping_differences(stopping: dict, never: dict) -> list[str]:
    """Issue 21: the run that stopped counting must have each function's basis path
    coverage exactly as the run that counted everything, and no more paths run."""
    problems = []
    mine, full = _by_function(stopping), _by_function(never)
    for key in sorted(set(mine) | set(full)):
        a, b = mine.get(key), full.get(key)
        if a is None or b is None:
            problems.append(f"{key[0]}:{key[2]} {key[1]} is in one pathprof report only")
        elif (a["basis_covered"], a["basis_dimension"]) != (b["basis_covered"],
                                                            b["basis_dimension"]):
            problems.append(f"{key[0]}:{key[2]} {key[1]}: basis {a['basis_covered']}/"
                            f"{a['basis_dimension']} when stopping, {b['basis_covered']}/"
                            f"{b['basis_dimension']} counting every run")
        elif a["paths_run"] > b["paths_run"]:
            problems.append(f"{key[1]}: more paths run when stopping ({a['paths_run']} > "
                            f"{b['paths_run']})")
    return problems


def stopped_functions(data_file: Path) -> tuple[int, int, int]:
    """Functions that went back to their original code, of those measured; and the
    path executions counted (complete and cut)."""
    import sqlite3

    with sqlite3.connect(data_file) as db:
        total = db.execute("SELECT count(*) FROM function").fetchone()[0]
        has = db.execute("SELECT 1 FROM sqlite_master WHERE name = 'stopped_counting'").fetchone()
        stopped = db.execute("SELECT count(*) FROM stopped_counting").fetchone()[0] if has else 0
        executions = db.execute("SELECT coalesce(sum(count), 0) FROM path").fetchone()[0]
    return stopped, total, executions


def fmt_counts(c: dict[str, int] | None) -> str:
    if c is None:
        return "(no summary)"
    return ", ".join(f"{v:,} {k}" for k, v in c.items() if k != "warnings") or "no tests"


def big(n: int) -> str:
    return f"{n:,}" if n < 10**15 else f"{n:.3e}"


def table(results: list[Result]) -> str:
    head = (
        "| project | tests | plain s | `--cov-branch` | `--pathprof` | `--pathprof` counting "
        "every run | functions stopped | basis path coverage "
        "(paths run of possible) | coverage.py branches (lines+branches) "
        "| term lines | JSON KiB | max one-function move |"
    )
    rows = [head, "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: "
            "| ---: |"]
    for r in results:
        p = r.project
        plain = r.times.get("plain")

        def ratio(m: str, r: Result = r, plain: float | None = plain) -> str:
            return f"{r.times[m] / plain:.2f}\u00d7" if plain and m in r.times else "-"

        if r.pathprof:
            t = r.pathprof["totals"]
            pp = (
                f"{t['basis_percent']:.1f}% ({t['basis_covered']:,}/{t['basis_dimension']:,}); "
                f"{t['paths_run']:,} of {big(int(t['paths_possible']))}"
            )
            mv, who = one_out_max(r.pathprof)
            move = f"{mv:.2f} ({who})"
        else:
            pp = move = "-"
        if r.cov:
            c = r.cov
            br = 100.0 * c["covered_branches"] / c["num_branches"] if c["num_branches"] else 100.0
            cov = f"{br:.1f}% ({c['percent_covered']:.1f}%)"
        else:
            cov = "-"
        rows.append(
            f"| {p.name} {p.version} | {fmt_counts(r.counts.get('plain'))} | "
            f"{plain:.2f} | {ratio('cov')} | {ratio('pathprof')} | {ratio('pathprof-never')} | "
            f"{r.stopped} | {pp} | {cov} | "
            f"{r.term_lines} | {r.json_kib:,.0f} | {move} |"
        )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/pathprof-realsuites"))
    ap.add_argument("--projects", default=",".join(PROJECTS))
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--fresh", action="store_true", help="rebuild the virtual environments")
    ap.add_argument(
        "--dont-write-bytecode",
        action="store_true",
        help="run the suites with PYTHONDONTWRITEBYTECODE=1 (default: unset, caches "
        "written); pathprof's instrumentation caches of an earlier run are deleted first",
    )
    ap.add_argument(
        "--pathprof-rev",
        default=None,
        help="install pathprof from `git archive REV` instead of the working tree",
    )
    a = ap.parse_args(argv)
    work = a.workdir.resolve()
    work.mkdir(parents=True, exist_ok=True)
    names = [n.strip() for n in a.projects.split(",") if n.strip()]
    unknown = [n for n in names if n not in PROJECTS]
    if unknown:
        ap.error(f"unknown project(s) {', '.join(unknown)}; known: {', '.join(PROJECTS)}")
    desc, spec = pathprof_source(work, a.pathprof_rev)
    results: list[Result] = []
    vers: list[str] = []
    for n in names:
        p = PROJECTS[n]
        try:
            tree = download_and_unpack(p, work)
            py = make_venv(p, tree, work, spec, a.fresh)
        except subprocess.CalledProcessError as e:
            log(f"[{n}] setup failed: {e}")
            r = Result(p)
            r.problems.append(f"setup failed: {e}")
            results.append(r)
            continue
        log(f"[{n}] {versions(py)}")
        vers.append(f"{n}: {versions(py)}")
        results.append(run_suite(p, py, tree, work, a.repeat, not a.dont_write_bytecode))
    ok = [r for r in results if r.times]
    ver = sys.version.split()[0]
    cmd = " ".join(["benchmarks/realsuites.py", *(sys.argv[1:] if argv is None else argv)])
    print(
        f"Python {ver}, pathprof from the {desc}, {datetime.date.today()}, `{cmd}` "
        f"(times: best of {a.repeat}), PYTHONHASHSEED=0"
        + (", PYTHONDONTWRITEBYTECODE=1" if a.dont_write_bytecode else "")
        + "\n"
    )
    print(table(ok))
    print("\nVersions: " + "; ".join(vers))
    bad = False
    for r in results:
        for note in r.notes:
            print(f"\nnote: {r.project.name}: {note}")
        for prob in r.problems:
            bad = True
            print(f"\n*** MISMATCH/FAILURE: {r.project.name}: {prob}")
    (work / "results.md").write_text(table(ok) + "\n")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
