"""Nineteen real projects' test suites, plain, under ``--cov-branch`` and under ``--pathprof``.

Issue 24's acceptance, extended to sixteen projects and by issue 50 to nineteen: ``make
realsuites`` (or ``python benchmarks/realsuites.py``) downloads the sdists of the projects
in ``PROJECTS`` from the package index -- attrs 25.3.0 (data classes), python-dateutil
2.9.0.post0 (date/time), jinja2 3.1.6 (templating), packaging 25.0 (version and marker
parsing), click 8.5.1 (CLI), pyparsing 3.3.3 (parser combinators), sqlparse 0.6.1 (SQL
parser), tomlkit 0.15.2 (TOML), markdown 3.11.3 (Markdown), pygments 2.21.0 (syntax
highlighting), h11 0.16.0 (HTTP/1.1), werkzeug 3.1.9 (HTTP utilities, WSGI),
more-itertools 11.2.1 (iterators), cachetools 8.0.2 (caches), arrow 1.4.0 (date/time),
idna 3.20 (internationalized domain names), jsonschema 4.26.0 (JSON Schema validation),
marshmallow 4.4.0 (object serialization) and pyflakes 4.1.0 (a checker of Python source)
-- makes a virtual environment for each with the running interpreter (pathprof from this
checkout, pytest, pytest-cov, the project and its test dependencies), and runs the
project's test suite from the unpacked sdist five ways, each timed (wall time, best of
``--repeat``), with ``PYTHONHASHSEED=0`` (and what a project's ``env`` adds):

- plain: ``python -m pytest -q -p no:cacheprovider ARGS``;
- coverage.py: the same with ``--cov=PKG --cov-branch --cov-report=json:FILE``;
- pathprof: the same with ``--pathprof=PKG --pathprof-report=json:FILE --pathprof-report=term``
  (functions stop counting once their basis is full, the default);
- pathprof counting every run: the same with ``--pathprof-stop-counting=never`` (issue 21:
  what ``--pathprof`` cost before). The two must give the same basis path coverage,
  function by function, and the default no more paths run: a difference is a failure;
- pathprof with conditions: the pathprof run with ``--pathprof-conditions`` (issue 39:
  every evaluation vector of every decision counted too, for condition coverage and
  MC/DC; a function stops counting once its basis is full and each of its decisions is
  done). Its basis path coverage must be the pathprof run's, function by function (a
  difference is a failure); the table has its time, its MC/DC (masking) and condition
  outcomes (the JSON report's ``conditions_totals``) beside coverage.py's branches, and
  the functions that went back to original code, against the pathprof run's.

Failures (printed loudly, exit status 1), each also named in the table's *problems*
column:

- pytest's summary counts (passed, failed, skipped, xfailed, xpassed, errors, deselected,
  and pytest 9's subtest counts) differ between plain and another run, or a run has no
  summary line, or its exit status differs from plain's;
- a run's output has an ``INTERNALERROR>`` line, or a traceback line in pathprof's own
  files (``site-packages/pathprof/...`` or a checkout's ``src/pathprof/...``, in Python's
  ``File "...", line N`` form or pytest's ``path:N: in f``) -- in any run, plain included,
  since pathprof's plugin is loaded in all of them;
- a pathprof run prints a different number of ``Exception ignored`` lines (unraisable
  exceptions: finalizers, ``__del__``, ``sys.unraisablehook``) or of ``line -1`` (a frame
  without a line number) than plain does (for the coverage.py run, a note: on 3.14 it
  leaves SQLite connections unclosed at exit, "Exception ignored ... ResourceWarning");
- a run takes longer than ``--timeout`` seconds (then it is killed);
- leaving any one function out moves pathprof's headline by 2 points or more (issue 24
  section 1).

A different number of warnings or of ``Traceback (most recent call last)`` lines is printed
as a note. The Markdown table has the tests, the problems, the plain time, the ratios to
plain, pathprof's headline (basis path coverage) with the paths run of possible,
coverage.py's branch coverage, the MC/DC and condition outcomes of the conditions run,
the size of pathprof's terminal section in lines and of its JSON report, and the largest
one-function move; it is also written to ``WORKDIR/results-pyX.Y.md``.

Options: ``--workdir DIR`` (sdists, unpacked trees, venvs, logs and reports; default
``/tmp/pathprof-realsuites``; the venvs and logs are per Python, ``NAME-VERSION-pyX.Y``,
so one workdir serves several interpreters), ``--projects a,b`` (default all nineteen),
``--repeat N`` (default 1), ``--fresh`` (rebuild the venvs), ``--pathprof-rev REV``
(install pathprof from ``git archive REV`` of this checkout instead of the working tree,
editable: useful while the working tree is being edited), ``--modes plain,cov,...``
(which of the five runs to make, default all; e.g. ``--modes plain`` to try a new
project's arguments), ``--timeout S`` (one pytest run's limit, default 1200 s),
``--dont-write-bytecode`` (run the suites with ``PYTHONDONTWRITEBYTECODE=1`` and no
instrumentation cache left from an earlier run; by default the variable is unset, even
where the calling environment sets it, so pytest and pathprof write and reuse their
caches). Needs the package index and nothing else (no network, database or compiled
extension for the suites themselves; the one compiled dependency, jsonschema's rpds-py
through referencing, is a wheel from the index). Not part of ``make test``/``.ci/run``:
see docs/benchmarks.md for how long a run of the nineteen takes.
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
# click: pyproject.toml's "tests" dependency group (pytest only); its addopts deselect the
#   "stress" tests.
# pyparsing: tox.ini's "unit" environment (pytest, the "diagrams" extra: railroad-diagrams,
#   jinja2) without matplotlib (compiled; tests/test_matplotlib_cases.py skips itself);
#   tox runs tests and examples/tiny/tests.
# sqlparse: pyproject.toml's "dev" dependency group less coverage, ruff, build and docs
#   (pytest only).
# tomlkit: pyproject.toml's "dev" group less pytest-cov, pre-commit, mypy and docs; its
#   PyYAML is imported by no test, so nothing beyond pytest.
# markdown: the "testing" extra (coverage, pyyaml); tox's pytidylib needs the system's
#   libtidy and its tests skip without it.
# pygments: tox.ini's [testenv] (pytest, pytest-cov, pytest-randomly, wcag-contrast-ratio).
#   pytest-randomly runs with --randomly-seed=0 --randomly-dont-reorganize: the same
#   order in every run, and random seeded at the session's start, before collection --
#   tests/test_basic_api.py shuffles its random input at import with an unseeded random,
#   which made the runs take different paths (and the two pathprof runs differ).
# h11: no test dependencies declared; its tests are the package's h11/tests (measured too).
# werkzeug: pyproject.toml's "tests" group (cffi, cryptography, ephemeral-port-reserve,
#   pytest, pytest-timeout, watchdog) less the compiled cffi, cryptography and watchdog
#   (the tests that need them skip: TLS dev servers, the watchdog reloader).
# more-itertools: requirements/testing.txt is coverage and ruff: nothing beyond pytest (the
#   suite is unittest's, collected by pytest).
# cachetools: tox.ini's [testenv] (pytest, pytest-cov).
# arrow: requirements/requirements-tests.txt less pre-commit, pytest-cov, type stubs and
#   dateparser (it pulls in the compiled regex; its one test skips itself); tox.ini's
#   [pytest] addopts (--cov... --cov-fail-under=99, --junitxml) are cleared with -o.
# idna: the "all" extra less ruff, mypy, ty and coverage (pytest, hypothesis).
# jsonschema: pyproject.toml's "test" group less virtue (the runner noxfile.py uses; pytest
#   collects the same unittest suite): jsonpath-ng; and the "format-nongpl" extra, one of
#   the three installs noxfile.py tests (pure Python; without it 474 format tests skip).
#   Its runtime dependency rpds-py (through referencing) is compiled, a wheel from the
#   index. The suite is the package's jsonschema/tests (measured too, as --cov=jsonschema
#   does); the JSON-Schema-Test-Suite is in the sdist (json/, found beside the package).
#   coverage.py runs with the project's [tool.coverage] (dynamic_context = test_function,
#   which costs it time; its report omits jsonschema/benchmarks and fuzz_validate.py).
# marshmallow: pyproject.toml's "tests" group (pytest, simplejson).
# pyflakes: no test dependencies (tox.ini, not in the sdist: unittest, and flake8 for lint);
#   its tests are the package's pyflakes/test (measured too).
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
    "click": Project("click", "8.5.1", ["click"], [], ["tests"]),
    "pyparsing": Project(
        "pyparsing",
        "3.3.3",
        ["pyparsing"],
        ["railroad-diagrams", "jinja2"],
        # The 13 slowest tests (nested expressions and regexes on random input, numeric
        # expressions; 2 to 18 s each, 130 s of the suite's 250 on this machine) deselected.
        [
            "tests",
            "examples/tiny/tests",
            "-k",
            "not testNestedExpressionRandom and not test_make_compressed_re_random"
            " and not testNumericExpressions",
        ],
    ),
    "sqlparse": Project("sqlparse", "0.6.1", ["sqlparse"], [], ["tests"]),
    "tomlkit": Project("tomlkit", "0.15.2", ["tomlkit"], [], ["tests"]),
    "markdown": Project(
        "markdown",
        "3.11.3",
        ["markdown"],
        ["pyyaml"],
        # tests/test_legacy.py calls warnings.simplefilter("error") on import, which makes
        # pytest's collection warning for test_md_in_html.py's TestSuite class an error:
        # the files are named so that test_legacy.py is collected last.
        [
            "tests/test_syntax",
            "tests/test_apis.py",
            "tests/test_extensions.py",
            "tests/test_meta.py",
            "tests/test_legacy.py",
        ],
    ),
    "pygments": Project(
        "pygments",
        "2.21.0",
        ["pygments"],
        ["wcag-contrast-ratio", "pytest-randomly"],
        ["tests", "--randomly-seed=0", "--randomly-dont-reorganize"],
    ),
    "h11": Project("h11", "0.16.0", ["h11"], [], ["h11/tests"]),
    "werkzeug": Project(
        "werkzeug",
        "3.1.9",
        ["werkzeug"],
        ["ephemeral-port-reserve", "pytest-timeout"],
        # The dev_server tests run werkzeug in a subprocess (measured by neither tool); the
        # https ones wait forever for a server that needs cryptography.
        ["tests", "-m", "not dev_server"],
    ),
    "more-itertools": Project(
        "more-itertools",
        "11.2.1",
        ["more_itertools"],
        [],
        # test_primes alone is 43 s of the suite's 76 (a sieve up to 10**6, checked).
        ["tests", "--deselect", "tests/test_recipes.py::PrimeFunctionTests::test_primes"],
    ),
    "cachetools": Project("cachetools", "8.0.2", ["cachetools"], [], ["tests"]),
    "arrow": Project(
        "arrow",
        "1.4.0",
        ["arrow"],
        ["pytest-mock", "pytz==2025.2", "simplejson"],
        ["tests", "-o", "addopts="],
    ),
    "idna": Project("idna", "3.20", ["idna"], ["hypothesis"], ["tests", "--hypothesis-seed=0"]),
    "jsonschema": Project(
        "jsonschema",
        "4.26.0",
        ["jsonschema"],
        [
            "jsonpath-ng",
            "fqdn",
            "idna",
            "isoduration",
            "jsonpointer>1.13",
            "rfc3339-validator",
            "rfc3986-validator>0.1.0",
            "rfc3987-syntax>=1.1.0",
            "uri-template",
            "webcolors>=24.6.0",
        ],
        ["jsonschema/tests"],
    ),
    "marshmallow": Project("marshmallow", "4.4.0", ["marshmallow"], ["simplejson"], ["tests"]),
    "pyflakes": Project(
        "pyflakes",
        "4.1.0",
        ["pyflakes"],
        [],
        ["pyflakes/test"],
        # tox.ini's setenv (an unknown ast node is an error, not a silent pass); and
        # coverage.py at its defaults: setup.cfg's [coverage:run] names the covdefaults
        # plugin, which nothing installs (without it pytest-cov stops at start-up).
        env={"PYFLAKES_ERROR_UNKNOWN": "1", "COVERAGE_RCFILE": "/dev/null"},
    ),
}

OUTCOMES = ("passed", "failed", "skipped", "xfailed", "xpassed", "error", "deselected")
# pytest 9 counts subtests apart: "2,067 passed, 2107 subtests passed"
OUTCOMES += tuple(f"subtests {o}" for o in ("passed", "failed", "skipped", "xfailed", "xpassed"))
SUMMARY_RE = re.compile(
    r"^\W*(\d+ (?:subtests )?[a-z]+(?:, \d+ (?:subtests )?[a-z]+)*) in [\d.]+s\b"
)
MODES = ("plain", "cov", "pathprof", "pathprof-never", "pathprof-conditions")
#: "py3.11": the venvs and logs of one interpreter are kept apart from another's
PYTAG = f"py{sys.version_info[0]}.{sys.version_info[1]}"
#: a frame of pathprof's own code in a traceback: Python's ``File "…", line N`` or pytest's
#: ``path:N: in f`` / ``path:N: SomeError``, for pathprof installed in site-packages (from
#: ``--pathprof-rev``) or editable from a checkout's src/
PATHPROF_FRAME_RE = re.compile(
    r"(?:site-packages|src)/pathprof/[\w/]*\.py"
    r"(?:\", line \d+|:\d+: (?:in \S|\w+(?:Error|Exception)))"
)


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
    venv = work / "venvs" / f"{p.name}-{p.version}-{PYTAG}"
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
class Scan:
    """What a run printed beyond its summary line, looked at for pathprof's failures."""

    internalerror: int = 0  # lines starting "INTERNALERROR>"
    pathprof_frames: list[str] = field(default_factory=list)  # lines naming pathprof's files
    exception_ignored: int = 0  # lines with "Exception ignored" (unraisable exceptions)
    line_minus_1: int = 0  # "line -1" anywhere: a frame without a line number
    tracebacks: int = 0  # "Traceback (most recent call last)"


def scan_output(out: str) -> Scan:
    sc = Scan()
    for line in out.splitlines():
        if line.startswith("INTERNALERROR>"):
            sc.internalerror += 1
        if PATHPROF_FRAME_RE.search(line):
            sc.pathprof_frames.append(line.strip())
        if "Exception ignored" in line:
            sc.exception_ignored += 1
        sc.line_minus_1 += line.count("line -1")
        if "Traceback (most recent call last)" in line:
            sc.tracebacks += 1
    return sc


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
    #: the pathprof JSON report of the run with --pathprof-conditions
    pathprof_conditions: dict | None = None
    cov: dict | None = None
    term_lines: int = 0
    json_kib: float = 0.0
    #: "N of M": functions that went back to original code under --pathprof
    stopped: str = "-"
    #: the same under --pathprof-conditions, with its path executions counted against
    #: the --pathprof run's
    stopped_conditions: str = "-"
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: each run's output, scanned (the last of the repeats)
    scans: dict[str, Scan] = field(default_factory=dict)
    #: the problems in a few words, for the table
    short: list[str] = field(default_factory=list)
    timed_out: set[str] = field(default_factory=set)


def run_suite(
    p: Project,
    py: Path,
    tree: Path,
    work: Path,
    repeat: int,
    bytecode: bool = True,
    modes_run: tuple[str, ...] = MODES,
    timeout: float | None = None,
) -> Result:
    res = Result(p)
    out_dir = work / "out" / f"{p.name}-{p.version}-{PYTAG}"
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
    cond_json = out_dir / "pathprof-conditions.json"
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
        "pathprof-conditions": [
            *(f"--pathprof={k}" for k in p.packages),
            f"--pathprof-data-file={out_dir / '.pathprof-conditions'}",
            f"--pathprof-report=json:{cond_json}",
            "--pathprof-report=term",
            "--pathprof-conditions",
        ],
    }
    for mode, extra in modes.items():
        if mode not in modes_run:
            continue
        best = None
        for i in range(repeat):
            for f in {"cov": [cov_json], "pathprof": [pp_json],
                      "pathprof-never": [never_json],
                      "pathprof-conditions": [cond_json]}.get(mode, []):
                f.unlink(missing_ok=True)
            if not bytecode:
                # As a user under -B sees it: no instrumentation cache from an earlier run.
                for f in py.parent.parent.glob("lib/python*/site-packages/**/*.pathprof-*.pyc"):
                    f.unlink()
            logf = out_dir / f"{mode}.{i}.log"
            log(f"[{p.name}] {mode} run {i + 1}/{repeat} -> {logf}")
            t0 = time.perf_counter()
            try:
                proc = subprocess.run(
                    base + extra,
                    cwd=tree,
                    env=env,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    text=True,
                    timeout=timeout,
                )
                out, rc = proc.stdout, proc.returncode
            except subprocess.TimeoutExpired as e:
                out = e.stdout or ""
                out = out.decode(errors="replace") if isinstance(out, bytes) else out
                rc = -9
                res.timed_out.add(mode)
            t = time.perf_counter() - t0
            logf.write_text(out)
            best = t if best is None else min(best, t)
            res.rc[mode] = rc
            res.logs[mode] = logf
            res.counts[mode] = parse_summary(out)
            res.scans[mode] = scan_output(out)
            if mode == "pathprof":
                res.term_lines = pathprof_section_lines(out)
        res.times[mode] = best
    if cov_json.exists():
        res.cov = json.loads(cov_json.read_text())["totals"]
    elif "cov" in modes_run:
        res.problems.append(f"no coverage.py JSON report ({cov_json}); see {res.logs['cov']}")
        res.short.append("cov: no JSON report")
    if "pathprof" in modes_run:
        res.pathprof = read_report(res, "pathprof", pp_json)
        if res.pathprof is not None:
            res.json_kib = pp_json.stat().st_size / 1024
    elif pp_json.exists():
        res.pathprof = json.loads(pp_json.read_text())
        res.json_kib = pp_json.stat().st_size / 1024
    if "pathprof-never" in modes_run and never_json.exists():  # not a leftover of another run
        res.pathprof_never = read_report(res, "pathprof-never", never_json)
    if {"pathprof", "pathprof-never"} <= set(modes_run) and (out_dir / ".pathprof").exists() \
            and (out_dir / ".pathprof-never").exists():
        stopped, total, counted = stopped_functions(out_dir / ".pathprof")
        _, _, every = stopped_functions(out_dir / ".pathprof-never")
        left = 1 - counted / every if every else 0.0
        res.stopped = f"{stopped:,} of {total:,}; {left:.1%} of path executions uncounted"
    elif "pathprof" in modes_run and (out_dir / ".pathprof").exists():
        stopped, total, _ = stopped_functions(out_dir / ".pathprof")
        res.stopped = f"{stopped:,} of {total:,}"
    if "pathprof-conditions" in modes_run:
        res.pathprof_conditions = read_report(res, "pathprof-conditions", cond_json)
        if (out_dir / ".pathprof-conditions").exists():
            stopped, total, counted = stopped_functions(out_dir / ".pathprof-conditions")
            res.stopped_conditions = f"{stopped:,} of {total:,}"
            if "pathprof" in modes_run and (out_dir / ".pathprof").exists():
                _, _, base = stopped_functions(out_dir / ".pathprof")
                more = f"{counted / base:.1f}\u00d7" if base else "-"
                res.stopped_conditions += f"; path executions counted {more} --pathprof's"
    check(res)
    return res


def read_report(res: Result, mode: str, path: Path) -> dict | None:
    """A run's pathprof JSON report; a missing or unreadable one (empty: the session
    ended with a traceback as it wrote it) is a problem of ``mode``."""
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        what = "no pathprof JSON report"
    except ValueError:
        what = "unreadable pathprof JSON report"
    res.problems.append(f"{what} ({path}); see {res.logs[mode]}")
    res.short.append(f"{mode}: {what.replace('pathprof ', '')}")
    return None


def check(res: Result) -> None:
    def outcomes(c):
        return None if c is None else {k: v for k, v in c.items() if k in OUTCOMES}

    for mode in res.timed_out:
        res.problems.append(f"{mode} run timed out, killed (see {res.logs[mode]})")
        res.short.append(f"{mode}: timed out")
    for mode, sc in res.scans.items():
        # Whatever the mode: pathprof's plugin is loaded in all of them.
        if sc.internalerror:
            res.problems.append(
                f"{mode}: {sc.internalerror} INTERNALERROR lines (see {res.logs[mode]})"
            )
            res.short.append(f"{mode}: INTERNALERROR")
        if sc.pathprof_frames:
            res.problems.append(
                f"{mode}: {len(sc.pathprof_frames)} traceback lines in pathprof's own files, "
                f"first: {sc.pathprof_frames[0]} (see {res.logs[mode]})"
            )
            res.short.append(f"{mode}: {len(sc.pathprof_frames):,} pathprof frames")
    if "plain" not in res.counts:
        return
    plain = outcomes(res.counts["plain"])
    if plain is None:
        res.problems.append(f"no pytest summary line in the plain run ({res.logs['plain']})")
        res.short.append("plain: no summary")
    base = res.scans["plain"]
    for mode in MODES[1:]:
        if mode not in res.counts:
            continue
        got = outcomes(res.counts[mode])
        if got != plain:
            res.problems.append(
                f"{mode} results differ from plain: {fmt_counts(got)} vs {fmt_counts(plain)}"
                f" (see {res.logs[mode]})"
            )
            res.short.append(f"{mode}: outcomes differ")
        if res.rc[mode] != res.rc["plain"]:
            res.problems.append(f"{mode} exit status {res.rc[mode]}, plain {res.rc['plain']}")
        sc = res.scans[mode]
        for what, n, n0 in (
            ('"Exception ignored" lines', sc.exception_ignored, base.exception_ignored),
            ('"line -1"', sc.line_minus_1, base.line_minus_1),
        ):
            if n != n0 and mode == "cov":
                # coverage.py's own (3.14: its unclosed SQLite connections at exit).
                res.notes.append(f"{mode}: {n:,} {what}, plain {n0:,} (see {res.logs[mode]})")
            elif n != n0:
                res.problems.append(f"{mode}: {n:,} {what}, plain {n0:,} (see {res.logs[mode]})")
                res.short.append(f"{mode}: {n:,} {what} (plain {n0:,})")
        if sc.tracebacks != base.tracebacks:
            res.notes.append(
                f"{mode}: {sc.tracebacks} 'Traceback (most recent call last)' lines, plain "
                f"{base.tracebacks} (see {res.logs[mode]})"
            )
        w, wp = (
            (res.counts[mode] or {}).get("warnings", 0),
            (res.counts["plain"] or {}).get("warnings", 0),
        )
        if w != wp:
            res.notes.append(f"{mode}: {w} warnings, plain {wp} (see {res.logs[mode]})")
    if res.pathprof is not None and res.pathprof_never is not None:
        diff = stopping_differences(res.pathprof, res.pathprof_never)
        res.problems += diff
        if diff:
            res.short.append(f"stopping: {len(diff)} functions differ")
    if res.pathprof is not None and res.pathprof_conditions is not None:
        # Both runs stop a function only once its basis is full: the same basis coverage.
        diff = basis_differences(res.pathprof_conditions, res.pathprof)
        res.problems += diff
        if diff:
            res.short.append(f"conditions: {len(diff)} functions' basis differs")
    if res.pathprof is not None:
        m, who = one_out_max(res.pathprof)
        if m >= 2.0:
            res.problems.append(
                f"issue 24 section 1: leaving out {who} moves the headline by {m:.2f} points"
            )
            res.short.append(f"one-function move {m:.2f}")


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


def basis_differences(conditions: dict, paths: dict) -> list[str]:
    """Issue 39: with ``--pathprof-conditions`` a function stops counting once its basis
    is full and its decisions are done, so each function's basis path coverage must be
    that of the run without conditions (the paths run may be more)."""
    problems = []
    mine, theirs = _by_function(conditions), _by_function(paths)
    for key in sorted(set(mine) | set(theirs)):
        a, b = mine.get(key), theirs.get(key)
        if a is None or b is None:
            problems.append(f"{key[0]}:{key[2]} {key[1]} is in one of the --pathprof and "
                            f"--pathprof-conditions reports only")
        elif (a["basis_covered"], a["basis_dimension"]) != (b["basis_covered"],
                                                            b["basis_dimension"]):
            problems.append(f"{key[0]}:{key[2]} {key[1]}: basis {a['basis_covered']}/"
                            f"{a['basis_dimension']} with --pathprof-conditions, "
                            f"{b['basis_covered']}/{b['basis_dimension']} without")
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


def mcdc_cell(report: dict | None) -> str:
    """MC/DC (masking) and condition outcomes of a report's ``conditions_totals``."""
    if report is None:
        return "-"
    t = report.get("conditions_totals")
    if not t:
        return "no decision measured"
    return (f"{t['mcdc_percent']:.1f}% ({t['mcdc_masking']:,}/{t['conditions']:,}); "
            f"outcomes {t['outcomes_seen']:,}/{t['outcomes']:,}; "
            f"{t['decisions']:,} decisions")


def fmt_counts(c: dict[str, int] | None) -> str:
    if c is None:
        return "(no summary)"
    return ", ".join(f"{v:,} {k}" for k, v in c.items() if k != "warnings") or "no tests"


def big(n: int) -> str:
    return f"{n:,}" if n < 10**15 else f"{n:.3e}"


def table(results: list[Result]) -> str:
    head = (
        "| project | tests | problems | plain s | `--cov-branch` | `--pathprof` "
        "| `--pathprof` counting every run | `--pathprof-conditions` | functions stopped "
        "| functions stopped with conditions | basis path coverage "
        "(paths run of possible) | coverage.py branches (lines+branches) "
        "| MC/DC masking (conditions shown); condition outcomes "
        "| term lines | JSON KiB | max one-function move |"
    )
    rows = [head, "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- "
            "| ---: | --- | ---: | ---: | ---: |"]
    for r in results:
        p = r.project
        plain = r.times.get("plain")

        def ratio(m: str, r: Result = r, plain: float | None = plain) -> str:
            return f"{r.times[m] / plain:.2f}\u00d7" if plain and m in r.times else "-"

        problems = "; ".join(r.short) or ("none" if r.problems == [] else "see below")

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
            f"| {p.name} {p.version} | {fmt_counts(r.counts.get('plain'))} | {problems} | "
            f"{'-' if plain is None else f'{plain:.2f}'} | {ratio('cov')} | "
            f"{ratio('pathprof')} | {ratio('pathprof-never')} | "
            f"{ratio('pathprof-conditions')} | {r.stopped} | {r.stopped_conditions} | {pp} | "
            f"{cov} | {mcdc_cell(r.pathprof_conditions)} | "
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
    ap.add_argument(
        "--modes",
        default=",".join(MODES),
        help=f"which runs to make (default all: {','.join(MODES)}); the checks compare "
        "each with plain",
    )
    ap.add_argument(
        "--timeout",
        type=float,
        default=1200.0,
        help="seconds one pytest run may take before it is killed (a failure; default 1200)",
    )
    a = ap.parse_args(argv)
    t_start = time.perf_counter()
    modes_run = tuple(m.strip() for m in a.modes.split(",") if m.strip())
    if not set(modes_run) <= set(MODES):
        ap.error(f"unknown mode(s) in {a.modes}; known: {', '.join(MODES)}")
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
        results.append(
            run_suite(
                p, py, tree, work, a.repeat, not a.dont_write_bytecode, modes_run, a.timeout
            )
        )
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
    (work / f"results-{PYTAG}.md").write_text(table(ok) + "\n")
    print(f"\nWall time of this run: {(time.perf_counter() - t_start) / 60:.1f} minutes")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
