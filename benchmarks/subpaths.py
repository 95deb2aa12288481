"""OSP on the benchmark workloads: overhead of ``pathprof hot``, and its estimates
against the exact subpath counts (Oren 2002, §4: Tables 4.3, 4.8-4.10).

``python benchmarks/subpaths.py [--workloads a,b] [--accuracy a,b] [--incremental a]``

- **Overhead** (§2.2): each workload's own timed call (``workloads.py`` prints it,
  so start-up and instrumentation are left out), best of ``--repeat``, plain;
  under ``pathprof hot`` with a period too long to ever sample (skipping only: the
  bulk countdown where paths end); sampling at the default settings (period 10,000,
  every length at every start), with one length drawn per start (Oren's geometric
  lengths) and at period 1,000. Ratios to plain: total overhead = sampling / plain
  - 1, skipping = skip / plain - 1, sampling alone = the difference. Memory: the
  sample at the end of the default run, distinct subpaths against the budget, and
  its bytes. With ``--exact-overhead``, each workload is also timed once under
  ``--exact`` (every block observed and every subpath counted).
- **Accuracy**: one run with ``--exact`` (the sampler and the exact counter see
  the same stream), at a period of 1,000 and a reduced number of loops, or with
  ``--accuracy-seconds S`` at the default settings on runs of about S seconds
  plain: whether the estimated top 5 is the exact top 5 as a set, how many
  estimates of the top 10 lie within their 95 % bounds, and the hottest subpath's
  (or the top 5's largest) error against its bound.
- **Incremental results** (Table 4.11): at ten evenly spaced moments of one run, the
  rank among the estimates of each of the exact top 5 so far.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from workloads import WORKLOADS, measured_files

HERE = Path(__file__).parent


def _timed(command: list[str]) -> float:
    """The workload's own seconds, as ``workloads.py`` prints them."""
    done = subprocess.run(command, check=True, capture_output=True, text=True)
    line = next(line for line in reversed(done.stdout.splitlines()) if line.startswith("{"))
    return float(json.loads(line)["seconds"])


def _hot(name: str, loops: int, *options: str) -> list[str]:
    sources = [arg for f in measured_files(name) for arg in ("--source", f)]
    return [sys.executable, "-m", "pathprof", "hot", "--no-live", *sources, *options,
            str(HERE / "workloads.py"), name, str(loops)]


def overhead(name: str, repeat: int, exact: bool = False) -> dict[str, Any]:
    loops = WORKLOADS[name].loops
    plain = [sys.executable, str(HERE / "workloads.py"), name, str(loops)]
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "hot.json"
        modes = {"plain": plain, "skip": _hot(name, loops, "--period", "1e15"),
                 "hot": _hot(name, loops, "--json", str(report)),
                 "geometric": _hot(name, loops, "--lengths", "geometric"),
                 "hot1000": _hot(name, loops, "--period", "1000")}
        best = {mode: min(_timed(command) for _ in range(repeat))
                for mode, command in modes.items()}
        if exact:  # every block observed and counted: slow, so timed once
            best["exact"] = _timed(_hot(name, loops, "--exact"))
        # The sample's memory at the default period, at the end of the run (the JSON
        # is written after the timed call).
        memory = json.loads(report.read_text())
    return {mode: seconds / best["plain"] for mode, seconds in best.items()} | {
        "plain_seconds": best["plain"], "distinct": memory["distinct_sampled"],
        "sampled": memory["sampled"],
        "budget": memory["budget"], "sample_bytes": memory["sample_bytes"]}


def loops_for(name: str, seconds: float) -> int:
    """The loops that make ``name``'s timed call take about ``seconds`` of CPU plain
    (CPU, not wall: a busy machine would make the runs short)."""
    default = WORKLOADS[name].loops
    done = subprocess.run([sys.executable, str(HERE / "workloads.py"), name, str(default)],
                          check=True, capture_output=True, text=True)
    line = next(line for line in reversed(done.stdout.splitlines()) if line.startswith("{"))
    return max(1, round(seconds * default / float(json.loads(line)["cpu"])))


def accuracy(name: str, loops: int, *options: str, exact: bool = True,
             period: str | None = "1000", keep: str | None = None) -> dict[str, Any]:
    """One run of ``pathprof hot`` (seed 1, every repetition of a loop listed: the
    ranking itself), with ``--exact`` unless told not to, at ``period`` (None: the
    default settings)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "hot.json"
        start = time.perf_counter()
        subprocess.run(_hot(name, loops, *(["--period", period] if period else []),
                            *(["--exact"] if exact else []), "--seed", "1",
                            "--every-repetition", "--top", "1000000", "--json", str(out),
                            *options),
                       check=True, capture_output=True)
        seconds = time.perf_counter() - start
        report = json.loads(out.read_text())
        if keep:
            Path(keep).mkdir(parents=True, exist_ok=True)
            shutil.copy(out, Path(keep) / f"{name}-{loops}{'-exact' if exact else ''}.json")
    found = report["subpaths"]
    top5 = found[:5]
    summary = {"blocks": report["positions"], "sampled": report["sampled"],
               "distinct": report["distinct_sampled"], "period": report["period"],
               "listed": min(10, len(found)), "failures": report["failures"],
               "seconds": seconds, "moments": report.get("moments", []),
               # the widest 95 % bound of the five ranked first: the thesis's (eq. 2.14),
               # and how far the interval's ends lie from the estimate
               "top5_bound": max((s["relative_error"] for s in top5), default=None),
               "top5_interval": max((max(s["estimate"] - s["low"],
                                         (s["high"] or float("inf")) - s["estimate"])
                                     / s["estimate"] for s in top5), default=None)}
    if not exact:
        return summary
    # The estimated top 5 is the exact top 5 when each of them is counted at least as
    # often as the fifth hottest subpath (ties make any choice among them right). The
    # exact counts of subpaths never sampled are not in the report: a subpath hotter
    # than all five yet never sampled would go unseen here (the --checkpoint moments,
    # which rank the exact top 5 over every subpath, would show it).
    counts = sorted((s["exact"] for s in found), reverse=True)
    fifth = counts[4] if len(counts) >= 5 else 0
    within = sum(s["low"] <= s["exact"] <= (s["high"] or float("inf")) for s in found[:10])
    hottest = found[0] if found else None
    return summary | {
        "top5_same": all(s["exact"] >= fifth for s in top5), "within10": within,
        # ties a sample cannot order: each within 5 % of the fifth's count
        "top5_close": all(s["exact"] >= 0.95 * fifth for s in top5),
        "top5_error": max((abs(s["estimate"] - s["exact"]) / s["exact"] for s in top5
                           if s["exact"]), default=None),
        "hottest_error": (abs(hottest["estimate"] - hottest["exact"]) / hottest["exact"]
                          if hottest and hottest["exact"] else None),
        "hottest_bound": hottest["relative_error"] if hottest else None,
        "hottest_length": len(hottest["blocks"]) if hottest else None}


def incremental(name: str, loops: int) -> list[dict[str, Any]]:
    """Table 4.11: at ten evenly spaced moments of the run, the exact top 5 so far
    and each one's rank among the estimates."""
    total = accuracy(name, loops)["blocks"]
    return accuracy(name, loops, "--checkpoint-every", str(max(total // 10, 1)))["moments"]


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def _row(*cells: str) -> None:
    """One row of a Markdown table, printed at once (runs take minutes)."""
    print("| " + " | ".join(cells) + " |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workloads", default=",".join(WORKLOADS))
    parser.add_argument("--accuracy", default="", help="workloads for the --exact runs")
    parser.add_argument("--accuracy-loops", type=int, default=1)
    parser.add_argument("--accuracy-seconds", type=float, default=0.0,
                        help="accuracy at the default settings on runs of about this many "
                        "seconds plain (loops worked out per workload)")
    parser.add_argument("--keep", metavar="DIR",
                        help="with --accuracy-seconds: keep each run's JSON in DIR")
    parser.add_argument("--no-exact", action="store_true",
                        help="with --accuracy-seconds: no --exact (bounds only)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--exact-overhead", action="store_true",
                        help="also time each workload once under --exact")
    parser.add_argument("--incremental", default="", help="a workload for Table 4.11")
    args = parser.parse_args()
    names = [n for n in args.workloads.split(",") if n]
    if names:
        _row("workload", "plain (s)", "skipping", "sampling (default: every length)",
             "one length per start (Oren's)", "every length, period 1,000",
             "samples kept (default)", "sample: subpaths / budget, KiB",
             *(["--exact (once)"] if args.exact_overhead else []))
        _row("---", *["---:"] * (8 if args.exact_overhead else 7))
        for name in names:
            r = overhead(name, args.repeat, args.exact_overhead)
            _row(name, f"{r['plain_seconds']:.3f}", f"{r['skip']:.2f}x", f"{r['hot']:.2f}x",
                 f"{r['geometric']:.2f}x", f"{r['hot1000']:.2f}x", f"{r['sampled']:,}",
                 f"{r['distinct']:,} / {r['budget']:,}, {r['sample_bytes'] / 1024:,.1f}",
                 *([f"{r['exact']:.1f}x"] if args.exact_overhead else []))
    picked = [n for n in args.accuracy.split(",") if n]
    if picked and args.accuracy_seconds:
        exact = not args.no_exact
        print(f"\nDefault settings, runs of about {args.accuracy_seconds:g} s plain"
              + (", with --exact" if exact else "") + "\n")
        _row("workload", "loops", "blocks", "samples (distinct)", "final period",
             *(["top 5 = exact top 5", "the same, ties within 5 %", "top 5: largest error"]
               if exact else []),
             "top 5: widest bound (eq. 2.14)", "top 5: widest interval",
             *(["top 10 within 95 %"] if exact else []))
        _row("---", *["---:"] * 4, *([":---:", ":---:", "---:"] if exact else []), "---:", "---:",
             *(["---:"] if exact else []))
        for name in picked:
            loops = loops_for(name, args.accuracy_seconds)
            a = accuracy(name, loops, exact=exact, period=None, keep=args.keep)
            cells = [name, str(loops), f"{a['blocks']:,}", f"{a['sampled']:,} ({a['distinct']:,})",
                     f"{a['period']:,.0f}"]
            if exact:
                cells += ["yes" if a["top5_same"] else "no", "yes" if a["top5_close"] else "no",
                          _percent(a["top5_error"])]
            cells += [_percent(a["top5_bound"]), _percent(a["top5_interval"])]
            if exact:
                cells.append(f"{a['within10']}/{a['listed']}")
            _row(*cells)
    elif picked:
        print()
        _row("workload", "blocks", "samples (distinct)", "final period", "top 5 = exact top 5",
             "top 10 within 95 % bound", "hottest: error / bound (length)")
        _row("---", "---:", "---:", "---:", ":---:", "---:", "---:")
        for name in picked:
            a = accuracy(name, args.accuracy_loops)
            hottest = ("-" if a["hottest_error"] is None else
                       f"{a['hottest_error']:.2%} / {a['hottest_bound']:.2%} "
                       f"({a['hottest_length']})")
            _row(name, f"{a['blocks']:,}", f"{a['sampled']:,} ({a['distinct']:,})",
                 f"{a['period']:,.0f}", "yes" if a["top5_same"] else "no",
                 f"{a['within10']}/{a['listed']}", hottest)

    if args.incremental:
        moments = incremental(args.incremental, args.accuracy_loops)
        print(f"\nTable 4.11 on {args.incremental}: rank among the estimates of each of "
              "the exact top 5 so far (- : not sampled)\n")
        _row("exact rank", *(f"{m['positions']:,}" for m in moments))
        _row(*["---:"] * (len(moments) + 1))
        for row in range(5):
            cells = [m["ranks"][row] if row < len(m["ranks"]) else None for m in moments]
            _row(str(row + 1), *("-" if c is None else str(c) for c in cells))


if __name__ == "__main__":
    main()
