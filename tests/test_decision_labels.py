"""Every decision on a path has its documented label, in the text report and the
JSON alike: a branch that falls off the function's end is the branch it is
(``false``, ``exhausted``, ``case 2 fails``), not ``return``, and the decision a path
ends on when it goes back to a loop's header is listed too."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

PROGRAM = Path(__file__).parent / "programs" / "decision_kinds.py"

#: function -> its paths as (start, end, ((line, branch taken), ...)), sorted
EXPECTED = {
    "tail_if": [("entry", "return", ((2, "false"),)), ("entry", "return", ((2, "true"),))],
    "tail_for": [("entry", "loop-back", ((7, "next"),)),
                 ("entry", "return", ((7, "exhausted"),)),
                 ("loop-header", "loop-back", ((7, "next"),)),
                 ("loop-header", "return", ((7, "exhausted"),))],
    "tail_while": [("entry", "loop-back", ((12, "true"),)),
                   ("loop-header", "loop-back", ((12, "true"),)),
                   ("loop-header", "return", ((12, "false"),))],
    "back_if": [("entry", "loop-back", ((18, "next"), (19, "false"))),
                ("loop-header", "loop-back", ((18, "next"), (19, "false"))),
                ("loop-header", "loop-back", ((18, "next"), (19, "true"))),
                ("loop-header", "return", ((18, "exhausted"),))],
    "tail_match": [("entry", "return", ((26, "case 1"),)),
                   ("entry", "return", ((26, "case 1 fails"), (28, "case 2"))),
                   ("entry", "return", ((26, "case 1 fails"), (28, "case 2 fails")))],
    "try_it": [("entry", "exception", ()), ("entry", "return", ()), ("handler", "return", ())],
    "bad": [("entry", "raise", ())],
}


def _pathprof(cwd: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PATHPROF_")}
    env["COLUMNS"] = "150"
    done = subprocess.run([sys.executable, "-m", "pathprof", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_each_kind_of_decision_is_labelled_in_json_and_text(tmp_path: Path) -> None:
    shutil.copy(PROGRAM, tmp_path / "kinds.py")
    _pathprof(tmp_path, "run", "kinds.py")
    report = json.loads(_pathprof(tmp_path, "report", "--format", "json"))
    found = {fn["qualname"]: sorted(
        (p["start"], p["end"], tuple((d["line"], d["taken"]) for d in p["decisions"]))
        for p in fn["paths"]) for fn in report["functions"]}
    assert found == EXPECTED
    # The text report shows each decision on its line, with the same label.
    text = _pathprof(tmp_path, "report", "--top", "10")
    shown = set()
    for row in text.splitlines():
        if "  → " in row:
            before, label = row.rsplit("  → ", 1)
            # "... entry → return      2 if x:": the source line's number is the last
            # number followed by a space (no code line here has one of its own)
            shown.add((re.findall(r"(\d+) ", before)[-1], label.strip()))
    wanted = {(str(line), label) for paths in EXPECTED.values() for _s, _e, taken in paths
              for line, label in taken}
    assert wanted <= shown
    assert not any(row.rstrip().endswith(":  → return") for row in text.splitlines())


def test_the_text_reports_counts_add_up(tmp_path: Path) -> None:
    """The header counts what is listed: complete paths, and paths an exception cut
    short; singulars are singular; the closing summary covers every function that
    ran, shown or not."""
    shutil.copy(PROGRAM, tmp_path / "kinds.py")
    _pathprof(tmp_path, "run", "kinds.py")
    text = _pathprof(tmp_path, "report", "--top", "10")
    heads = {row.split()[0]: row for row in text.splitlines()
             if re.match(r"^\w+  kinds\.py:\d+  ", row)}
    assert "2 of 2 paths run + 1 path cut short by an exception · 3 path executions" in (
        heads["try_it"])
    assert heads["bad"].endswith("1 of 1 paths run · 1 path execution · 1 call ended by an "
                                 "exception")
    listed = text.split("try_it  kinds.py")[1].split("\n\n")[0]
    assert len(re.findall(r"^\s*\d+\s+1\s+33\.3%", listed, re.MULTILINE)) == 3
    few = _pathprof(tmp_path, "report", "--functions", "2", "--top", "1")
    assert "… and 3 more paths" in few  # back_if: 4 paths, 1 shown
    assert "5 more functions ran (--functions shows more)" in few
    assert "hottest path in 5 of 7 functions" in few.replace("\n", " ")


GENERATORS = '''
def numbers(n):
    for i in range(n):
        yield i


def failing(n):
    for i in range(n):
        if i == 1:
            raise ValueError(i)
        yield i


def first(items):
    for x in items:
        return x


first(numbers(5))
first(numbers(5))
list(numbers(2))
try:
    list(failing(3))
except ValueError:
    pass
'''


def test_a_generator_closed_early_is_said_so_and_saved(tmp_path: Path) -> None:
    """``for x in gen(): return x``: the consumer's close() throws GeneratorExit into
    the generator at its yield. Such calls are counted apart from the calls an
    exception ended, in the data file, the JSON and the text."""
    (tmp_path / "gens.py").write_text(GENERATORS)
    _pathprof(tmp_path, "run", "gens.py")
    report = json.loads(_pathprof(tmp_path, "report", "--format", "json"))
    calls = {fn["qualname"]: (fn["raised"], fn["closed"]) for fn in report["functions"]}
    assert calls["numbers"] == (2, 2)  # closed twice, exhausted once
    assert calls["failing"] == (1, 0)  # a ValueError: not a close
    text = _pathprof(tmp_path, "report")
    heads = {row.split()[0]: row for row in text.splitlines()
             if re.match(r"^\w+  gens\.py:\d+  ", row)}
    assert heads["numbers"].endswith(
        "· 2 calls closed early (the generator's consumer stopped)")
    assert "ended by an exception" not in heads["numbers"]
    assert heads["failing"].endswith("· 1 call ended by an exception")
    # Appended runs add up; a file written before the table existed reads as none.
    _pathprof(tmp_path, "run", "--append", "gens.py")
    again = json.loads(_pathprof(tmp_path, "report", "--format", "json"))
    assert {fn["qualname"]: fn["closed"] for fn in again["functions"]}["numbers"] == 4
    import sqlite3

    db = sqlite3.connect(tmp_path / ".pathprof")
    db.execute("DROP TABLE closed_calls")
    db.commit()
    db.close()
    older = json.loads(_pathprof(tmp_path, "report", "--format", "json"))
    assert {fn["qualname"]: (fn["raised"], fn["closed"])
            for fn in older["functions"]}["numbers"] == (4, 0)
