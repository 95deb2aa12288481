"""The measured program cannot tell: `pathprof run` against plain `python`.

Each program in programs/ is run from a fresh directory holding only a copy of it (the
directory pathprof measures by default): as `python prog.py ARGS` (once, for every
mode; once per xdist worker), and as `python -m pathprof run --data-file DATA prog.py
ARGS` in each pathprof mode. Its stdout must be byte for byte the same, its stderr the
same once the lines pathprof itself prints (they start with `pathprof:`) are dropped,
and its exit status the same.

The runs of a case use the same directory path (it appears in tracebacks), recreated
before each so every run sees exactly what the plain run saw. A program may declare
several command lines with `# case: ARGS` comment lines; otherwise it runs with no
arguments.
Programs stored as `.pysrc` are ones ruff cannot read (not UTF-8, or not valid Python);
they are run as `.py` files like the others.

Both runs start with SIGINT at its default action, as from a terminal, whatever the
test runner inherited (a shell's background job has it ignored, and Python behaves
differently then); a `# case-sigint-ignored: ARGS` line runs a case with SIGINT
ignored from the start instead, as from such a background job.
"""

from __future__ import annotations

import difflib
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PROGRAMS = Path(__file__).parent / "programs"
TIMEOUT = 60  # seconds, for each run: a hang fails the test instead of blocking it
MODES = {
    "default": [],
    "basis": ["--stop-counting", "basis"],
    "edge": ["--mode", "edge"],
    "time": ["--metric", "time"],
    "conditions": ["--conditions", "--stop-counting", "basis"],
}
CASE_LINE = re.compile(rb"^# case(-sigint-ignored)?:(.*)$")

# Sets the SIGINT disposition (argv[1]: "default" or "ignored"), then becomes argv[2:].
# The dispositions of SIGPIPE and SIGXFSZ, which Python ignores, are put back too.
LAUNCHER = """\
import os, signal, sys
for sig in (signal.SIGPIPE, signal.SIGXFSZ):
    signal.signal(sig, signal.SIG_DFL)
signal.signal(signal.SIGINT, signal.SIG_IGN if sys.argv[1] == "ignored" else signal.SIG_DFL)
os.execv(sys.argv[2], sys.argv[2:])
"""


def _cases(path: Path) -> list[tuple[list[str], str]]:
    """The (arguments, SIGINT disposition) cases a program declares at its top."""
    cases = []
    for line in path.read_bytes().splitlines():
        if not line.startswith(b"#"):
            break
        match = CASE_LINE.match(line)
        if match:
            sigint = "ignored" if match.group(1) else "default"
            cases.append((shlex.split(match.group(2).decode("ascii")), sigint))
    return cases or [([], "default")]


#: What docs/guarantees.md lists under "Not yet, and known", as these programs show it:
#: program -> (modes it shows in (None: every mode), whether it shows on this Python,
#: the difference). Each is a strict xfail: a fix makes the test say so.
KNOWN_LIMITS = {
    "exc_cleared_frames": (None, True, "a traceback's frames show pathprof's locals"),
    "tracer_settrace_lines": (None, True, "a tracer's f_locals show pathprof's locals"),
    "main_module_plain": ({"conditions"}, True,
                          "with --conditions, dir() at module level shows the vector counters"),
    "main_directory_listing": ({"conditions"}, True,
                               "with --conditions, the vector counters are module globals "
                               "(__@pp_v<n>__), which a listing of dunder names shows"),
    "frames_introspection": (None, True, "the frames below <module> are pathprof's runner"),
    "tracer_setprofile": ({"time"}, True, "a profile function sees the clock's C calls"),
    "tracer_jump": (None, sys.version_info >= (3, 12),
                    "a jump (f_lineno) warns of pathprof's unbound locals, and can leave "
                    "the frame inconsistent on 3.14"),
}
#: The baseline and the Python most users install run every mode; the others, the two
#: every run uses (to keep the suite's time: each case is two processes).
EVERY_MODE = sys.version_info[:2] in ((3, 11), (3, 14))


def _params():
    sources = sorted([*PROGRAMS.glob("*.py"), *PROGRAMS.glob("*.pysrc")])
    for source in sources:
        for args, sigint in _cases(source):
            for mode, options in MODES.items():
                if not EVERY_MODE and mode not in ("default", "basis"):
                    continue
                parts = [source.stem, *args]
                if sigint != "default":
                    parts.append(f"sigint_{sigint}")
                case_id = "-".join([*parts, mode]).replace(" ", "_")
                marks = []
                limit = KNOWN_LIMITS.get(source.stem)
                if limit is not None and limit[1] and (limit[0] is None or mode in limit[0]):
                    marks.append(pytest.mark.xfail(strict=True, reason=f"known limit "
                                                   f"(docs/guarantees.md): {limit[2]}"))
                yield pytest.param(source, args, sigint, options, id=case_id, marks=marks)


def _run(cmd: list[str], cwd: Path, sigint: str) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(
            [sys.executable, "-c", LAUNCHER, sigint, *cmd],
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(
            f"timed out after {TIMEOUT}s: {shlex.join(cmd)}\n"
            f"stdout so far:\n{_text(exc.stdout or b'')}\n"
            f"stderr so far:\n{_text(exc.stderr or b'')}"
        )


def _fresh_copy(source: Path, workdir: Path) -> str:
    """Recreate workdir holding only the program, named *.py; return its file name."""
    if workdir.exists():
        shutil.rmtree(workdir)
    workdir.mkdir()
    name = source.stem + ".py"
    shutil.copyfile(source, workdir / name)
    return name


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="backslashreplace")


def _without_pathprof_lines(stderr: bytes) -> bytes:
    lines = stderr.splitlines(keepends=True)
    return b"".join(line for line in lines if not line.startswith(b"pathprof:"))


def _diff(what: str, plain: bytes, measured: bytes) -> str:
    diff = difflib.unified_diff(
        _text(plain).splitlines(keepends=True),
        _text(measured).splitlines(keepends=True),
        fromfile=f"{what} (python)",
        tofile=f"{what} (pathprof run)",
    )
    lines = [line if line.endswith("\n") else line + "\n" for line in diff]
    if len(lines) > 80:
        lines = [*lines[:80], f"... ({len(lines) - 80} more diff lines)\n"]
    return "".join(lines) or f"{what}: differs only in line endings or trailing bytes\n"


#: The plain run of each case (program, arguments, SIGINT disposition), made once in
#: a worker and compared with the run of every mode: (its directory, what it did).
_PLAIN_RUNS: dict[tuple[str, tuple[str, ...], str],
                  tuple[Path, subprocess.CompletedProcess[bytes]]] = {}


@pytest.fixture(scope="module")
def case_dirs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cases")


def _plain_run(source: Path, args: list[str], sigint: str, case_dirs: Path
               ) -> tuple[Path, subprocess.CompletedProcess[bytes]]:
    """The plain run of a case, in a directory of its own that the runs of its modes
    use too (it appears in tracebacks)."""
    key = (source.name, tuple(args), sigint)
    if key not in _PLAIN_RUNS:
        workdir = case_dirs / f"case{len(_PLAIN_RUNS)}" / "prog"
        workdir.parent.mkdir()
        name = _fresh_copy(source, workdir)
        _PLAIN_RUNS[key] = workdir, _run([sys.executable, name, *args], workdir, sigint)
    return _PLAIN_RUNS[key]


@pytest.mark.parametrize(("source", "args", "sigint", "options"), list(_params()))
def test_program_cannot_tell(
    source: Path, args: list[str], sigint: str, options: list[str], tmp_path: Path,
    case_dirs: Path,
):
    data_file = tmp_path / "profile.pathprof"
    workdir, plain = _plain_run(source, args, sigint, case_dirs)

    name = _fresh_copy(source, workdir)
    measured_cmd = [
        sys.executable, "-m", "pathprof", "run", "--data-file", os.fspath(data_file),
        *options, name, *args,
    ]  # fmt: skip
    measured = _run(measured_cmd, workdir, sigint)

    problems = []
    if measured.returncode != plain.returncode:
        problems.append(
            f"exit status: python {plain.returncode}, pathprof run {measured.returncode}\n"
        )
    if measured.stdout != plain.stdout:
        problems.append(_diff("stdout", plain.stdout, measured.stdout))
    plain_err = _without_pathprof_lines(plain.stderr)
    measured_err = _without_pathprof_lines(measured.stderr)
    if measured_err != plain_err:
        problems.append(_diff("stderr", plain_err, measured_err))
    assert not problems, f"{shlex.join(measured_cmd)}\n" + "\n".join(problems)
