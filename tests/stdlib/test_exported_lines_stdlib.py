"""The LCOV export of CPython's own test suites, judged by line events.

``pathprof run --source MODULE -m unittest test.test_MODULE``, then ``pathprof lcov``:
every line the LCOV file marks as hit is one the uninstrumented suite ran
(``sys.settrace`` line events), and every line it ran that the file marks as not
hit lies in a block where an exception cut a path (pathprof records the block an
exception left, not the statement: docs/commands/exports.md). Several of these
modules (textwrap, fnmatch, shlex) are imported by the interpreter or by
pathprof before the program starts, so they are measured in place.

Marked ``stdlib_oracle``: ``make test`` runs them on the baseline Python only.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

import pathprof

pytestmark = pytest.mark.stdlib_oracle

MODULES = ["textwrap", "fnmatch", "shlex", "colorsys", "calendar", "difflib", "csv", "argparse",
           "configparser", "getopt", "gettext", "string", "base64", "quopri",
           "urllib.parse:urlparse",
           "json,json.decoder,json.encoder:json", "dataclasses", "ast"]
# Not tomllib: its recursion tests reach the limit inside the tracer, whose
# RecursionError then changes what the traced suite does. Not inspect: its suite runs
# `python -m inspect` in children, where pathprof has imported inspect before the
# child's runpy runs it again as __main__ from the plain spec: not measured there
# (docs/guarantees.md).

#: The line tracer both the suite's process and its children run: the lines of the
#: measured modules' files (``ran``: file -> lines).
TRACER = """
def tracer(frame, event, arg):
    lines = ran.get(frame.f_code.co_filename)
    if lines is None:
        return None
    if event == "line":
        lines.add(frame.f_lineno)
    return tracer
"""

# Traced from where `pathprof run` starts measuring: after the interpreter's and
# pathprof's own imports (a module imported then is measured in place, from then on),
# before the module's import otherwise (its import-time calls are then measured).
TRACE = """
import importlib.util, json, os, runpy, sys, threading
import pathprof.cli, pathprof.measure.execfile, pathprof.measure.profiler, pathprof.measure.inplace
# for the children only (this process traces itself, from here on)
os.environ.update(json.loads(os.environ.pop("ORACLE_CHILDREN", "{}")))
ran = {importlib.util.find_spec(name).origin: set() for name in sys.argv[1].split(",")}
""" + TRACER + """
# A test that recurses to the limit can make the tracer raise, which turns it off:
# every test starts with it on again.
import unittest
original_run = unittest.TestCase.run

def run(self, result=None):
    sys.settrace(tracer)
    return original_run(self, result)

unittest.TestCase.run = run
sys.argv = ["python -m unittest", "-q", sys.argv[2]]
threading.settrace(tracer)
sys.settrace(tracer)
try:
    runpy.run_module("unittest", run_name="__main__", alter_sys=True)
except SystemExit:
    pass
sys.settrace(None)
print(json.dumps({file: sorted(lines) for file, lines in ran.items()}))
"""


# Suites that run the module in a child interpreter (``python -m base64``,
# ``script_helper``, often with -I): pathprof measures those children, so the oracle
# traces them too, started by a .pth file of its own while the test runs.
CHILD_TRACER = """
import atexit, json, os, sys, threading
ran = {file: set() for file in os.environ["ORACLE_FILES"].split(os.pathsep)}
""" + TRACER + """
def dump():
    with open(os.path.join(os.environ["ORACLE_DIR"], f"{os.getpid()}.json"), "w") as out:
        json.dump({file: sorted(lines) for file, lines in ran.items()}, out)

if not hasattr(sys, "_oracle_tracing"):  # a .pth file may be read twice
    sys._oracle_tracing = True
    sys.settrace(tracer)
    threading.settrace(tracer)
    atexit.register(dump)
"""


def _lcov_lines(text: str, filename: str) -> dict[int, int]:
    record = text[text.index(f"SF:{filename}\n"):]
    record = record[:record.index("end_of_record")]
    return {int(line): int(hits) for line, hits in
            (entry[3:].split(",") for entry in record.splitlines() if entry.startswith("DA:"))}


# "module:suite" where the suite is not test.test_<module>; "a,b:suite" measures and
# checks modules a and b of one run of the suite.
@pytest.mark.parametrize("module", MODULES)
def test_lines_hit_in_the_lcov_file_are_lines_the_suite_ran(tmp_path: Path, module: str
                                                            ) -> None:
    module, _colon, test_name = module.partition(":")
    names = module.split(",")
    module = names[0]
    if module == "ast" and (3, 12) <= sys.version_info < (3, 14):
        pytest.skip("test_ast of 3.12 and 3.13 runs `python -m ast` in children, where "
                    "pathprof has imported ast before runpy runs it as __main__ (as inspect)")
    env = {**os.environ}
    env.pop("PYTHONDONTWRITEBYTECODE", None)

    def run(*args: str, check: bool = True) -> subprocess.CompletedProcess:
        result = subprocess.run([sys.executable, *args], cwd=tmp_path, env=env,
                                capture_output=True, text=True, timeout=600)
        assert result.returncode == 0 or not check, result.stderr[-3000:]
        return result

    def verdict(result: subprocess.CompletedProcess) -> str:
        """unittest's last line: OK or FAILED, with skips (a suite may fail here,
        e.g. a REPL test without a terminal: the same with and without pathprof)."""
        return result.stderr.strip().splitlines()[-1]

    test_module = f"test.test_{test_name or module}"
    sources = [arg for name in names for arg in ("--source", name)]
    measured = run("-m", "pathprof", "run", "--no-cache", *sources, "-m",
                   "unittest", "-q", test_module, check=False)
    run("-m", "pathprof", "lcov")
    (tmp_path / "trace.py").write_text(TRACE)
    (tmp_path / "child_tracer.py").write_text(CHILD_TRACER)
    children = tmp_path / "children"
    children.mkdir()
    pth = Path(sysconfig.get_paths()["purelib"]) / f"oracle-children-{os.getpid()}-{module}.pth"
    pth.write_text("import os; all(os.environ.get(v) for v in ('ORACLE_DIR', 'ORACLE_FILES', "
                   "'ORACLE_TRACER')) and exec(open(os.environ['ORACLE_TRACER']).read(), {})\n")
    env["ORACLE_CHILDREN"] = json.dumps({
        "ORACLE_DIR": str(children), "ORACLE_TRACER": str(tmp_path / "child_tracer.py"),
        "ORACLE_FILES": os.pathsep.join(
            str(importlib.util.find_spec(name).origin) for name in names)})
    try:
        traced = run("trace.py", ",".join(names), test_module, check=False)
    finally:
        pth.unlink()
        del env["ORACLE_CHILDREN"]
    assert verdict(measured) == verdict(traced)
    ran = {file: set(lines) for file, lines in json.loads(traced.stdout.splitlines()[-1]).items()}
    for child in children.glob("*.json"):
        for file, lines in json.loads(child.read_text()).items():
            ran[file] |= set(lines)
    lcov = (tmp_path / "coverage.lcov").read_text()
    functions = pathprof.load(str(tmp_path / ".pathprof")).functions
    for file, lines in ran.items():
        hits = _lcov_lines(lcov, file)
        hit = {line for line, count in hits.items() if count}
        assert hit, f"nothing measured in {file}"
        assert hit <= lines, (file, sorted(hit - lines))
        in_cut_blocks = set()
        for fn in functions:
            if fn.file != file:
                continue
            for block, _value in fn.cuts:
                in_cut_blocks |= {piece.line for piece in fn.meta.blocks[block].pieces}
        unexplained = (lines & set(hits)) - hit - in_cut_blocks
        assert not unexplained, (file, sorted(unexplained))
