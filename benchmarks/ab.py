"""A/B of two pathprof revisions on the pyperformance workloads, interleaved.

Run: ``python benchmarks/ab.py --before REV [--after REV] [--mode path]
[--repeats 5] [--workloads a,b]``. ``--before`` (and ``--after``, default: this
checkout's working tree) are checked out into temporary git worktrees; each timed
run is ``python -m pathprof run`` in the given mode with ``PYTHONPATH`` pointing at
that revision's ``src`` (before the installed package), interleaved with plain runs
(plain, before, after; plain, before, after; ...). Printed per workload: the median
over the repeats of each revision's time over the plain time of the same repeat, and
the change of the overhead, ``(after - 1) / (before - 1) - 1``. Used to keep or drop a
change to the generated code by measurement (docs/benchmarks.md records the runs).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import overhead  # noqa: E402
from report import TIMES  # noqa: E402
from workloads import WORKLOADS  # noqa: E402

REPO = HERE.parent


def checkout(rev: str, into: Path) -> Path:
    subprocess.run(["git", "worktree", "add", "--detach", str(into), rev], cwd=REPO,
                   check=True, capture_output=True)
    return into / "src"


def timed(mode: str, name: str, loops: int, tmp: Path, src: Path | None) -> float:
    saved = os.environ.get("PYTHONPATH")
    if src is not None:
        os.environ["PYTHONPATH"] = str(src)
    try:
        return overhead.run_once(mode, name, loops, tmp)["seconds"]
    finally:
        if saved is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = saved


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", required=True)
    parser.add_argument("--after", default=None, help="default: the working tree")
    parser.add_argument("--mode", default="path", choices=sorted(overhead.PATHPROF_MODES))
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--workloads", default=",".join(WORKLOADS))
    args = parser.parse_args()
    names = [n for n in args.workloads.split(",") if n]
    with tempfile.TemporaryDirectory(prefix="pathprof-ab-") as tmp_name:
        tmp = Path(tmp_name)
        sources = {"before": checkout(args.before, tmp / "before"),
                   "after": (checkout(args.after, tmp / "after") if args.after
                             else REPO / "src")}
        try:
            rows = []
            for name in names:
                loops = WORKLOADS[name].loops
                work = tmp / f"work-{name}"
                work.mkdir()
                for src in sources.values():  # fill each revision's cache
                    timed(args.mode, name, 1, work, src)
                ratios: dict[str, list[float]] = {"before": [], "after": []}
                for _ in range(args.repeats):
                    plain = timed("plain", name, loops, work, None)
                    for label, src in sources.items():
                        ratios[label].append(timed(args.mode, name, loops, work, src) / plain)
                before = statistics.median(ratios["before"])
                after = statistics.median(ratios["after"])
                change = (after - 1) / (before - 1) - 1 if before > 1 else float("nan")
                rows.append((name, before, after, change))
                print(f"  {name:15} before {before:.3f}  after {after:.3f}  overhead "
                      f"{change:+.1%}", file=sys.stderr)
        finally:
            for label in ("before", "after"):
                if (tmp / label).exists():
                    subprocess.run(["git", "worktree", "remove", "--force", str(tmp / label)],
                                   cwd=REPO, check=False, capture_output=True)
    print(f"Python {sys.version.split()[0]}, mode {args.mode}, before {args.before}, after "
          f"{args.after or 'working tree'}, {args.repeats} interleaved repeats (median ratio "
          "to plain)\n")
    print(f"| workload | before {TIMES} | after {TIMES} | overhead change |\n"
          "| --- | ---: | ---: | ---: |")
    for name, before, after, change in rows:
        print(f"| {name} | {before:.3f} | {after:.3f} | {change:+.1%} |")
    changes = [c for *_, c in rows if c == c]
    print(f"| **median** | {statistics.median(r[1] for r in rows):.3f} | "
          f"{statistics.median(r[2] for r in rows):.3f} | "
          f"{statistics.median(changes) if changes else float('nan'):+.1%} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
