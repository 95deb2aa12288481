"""Before and after, per suite and Python: ``benchmarks/phases.py`` for several
pathprof trees, as one markdown table.

``python benchmarks/phases_matrix.py --tree NAME=SRC [--tree ...] --suite
LABEL=PYTHON,DIR,PACKAGE,TESTS [--suite ...] [--rounds 3] [--json FILE]`` runs
``phases.py`` for every suite with every tree (``SRC`` is a pathprof ``src``
directory put first on ``PYTHONPATH``; ``PYTHON`` the suite's environment's
interpreter; ``TESTS`` its pytest arguments, split on spaces), the trees one after
the other for each suite, and prints a row per suite and tree: CPU seconds of plain
pytest, the ratios of ``--cov --cov-branch`` and of ``--pathprof`` on a first run and
warm to plain (each from the same invocation as its plain), and where pathprof's
extra time goes (instrumenting on a first run; counting, reports and exit warm), with
the maximum RSS warm. Ratios within a row are comparable; seconds across rows only
as far as the machine's load allowed (it is printed).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

PHASES = Path(__file__).resolve().parent / "phases.py"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", action="append", required=True, metavar="NAME=SRC")
    parser.add_argument("--suite", action="append", required=True,
                        metavar="LABEL=PYTHON,DIR,PACKAGE,TESTS")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", default=None, help="write every row here too")
    options = parser.parse_args()
    trees = [entry.split("=", 1) for entry in options.tree]
    rows = []
    print("| suite | pathprof | load | plain s | `--cov-branch` | first run | warm | first: "
          "instrumenting | warm: counting | warm: reports | warm: exit beyond plain | "
          "warm max RSS (plain) |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for suite in options.suite:
        label, spec = suite.split("=", 1)
        python, directory, package, tests = spec.split(",", 3)
        for name, src in trees:
            with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as out:
                result = out.name
            env = {**os.environ, "PYTHONPATH": src}
            done = subprocess.run(
                [sys.executable, str(PHASES), "--python", python, "--dir", directory,
                 "--package", package, "--rounds", str(options.rounds), "--json", result,
                 "--", *tests.split()], env=env, capture_output=True, text=True)
            if done.returncode:
                print(f"| {label} | {name} | failed: {done.stderr.strip()[-200:]} |")
                continue
            table = json.loads(Path(result).read_text())
            os.unlink(result)
            load = done.stdout.split(";", 1)[0].removeprefix("load ")
            plain, cov = table["plain"], table["cov"]
            first, warm = table["pathprof-first"], table["pathprof-warm"]
            rows.append({"suite": label, "tree": name, "load": load, **{
                mode: table[mode] for mode in table}})
            print(f"| {label} | {name} | {load} | {plain['cpu']:.2f} | {cov['ratio']:.2f}x "
                  f"| {first['ratio']:.2f}x | {warm['ratio']:.2f}x "
                  f"| {first['instrumenting']:.2f} s | {warm['counting']:.2f} s "
                  f"| {warm['reports']:.2f} s | {warm['exit']:.2f} s "
                  f"| {warm['max_rss_mb']:.0f} MB ({plain['max_rss_mb']:.0f} MB) |",
                  flush=True)
    if options.json:
        Path(options.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
