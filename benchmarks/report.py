"""Markdown tables and a PNG chart from the JSON results of ``overhead.py``.

``python benchmarks/report.py RESULTS.json`` prints the Markdown again and rewrites the
chart next to the JSON file. The targets checked at the end are issue 5's, for
Python 3.11: path overhead at most 25% on the median workload and 60% on any; path
mode no slower than edge mode on the median; path overhead at most one fifth of
coverage.py ``--branch``'s; a warm-cache import at most 10% slower than a plain one.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path
from typing import Any

TIMES = "\N{MULTIPLICATION SIGN}"
TITLES = {"path": "path", "edge": "edge", "path-time": "path --metric time",
          "cover": "path --stop-counting basis",
          "coverage": "coverage --branch", "slipcover": "SlipCover --branch",
          "cprofile": "cProfile", "settrace": "settrace paths", "events": "events",
          "events-statements": "events, add per statement",
          "events-blocks": "events, add per block", "events-totals": "events, totals only"}


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def ratio_table(results: dict[str, Any], key: str, plain_key: str) -> str:
    modes = [m for m in results["modes"] if m != "plain"]
    head = ["workload", "plain s", *(f"{TITLES[m]} {TIMES}" for m in modes)]
    rows = [_row(head), _row(["---"] + ["---:"] * (len(head) - 1))]
    columns: dict[str, list[float]] = {m: [] for m in modes}
    for entry in results["workloads"]:
        if plain_key not in entry:
            rows.append(_row([entry["workload"], "FAILED", *([""] * len(modes))]))
            continue
        cells = [entry["workload"], f"{entry[plain_key]:.3f}"]
        for mode in modes:
            ratio = entry[key].get(mode)
            if ratio is None:
                cells.append("FAILED" if mode in entry["errors"] else "")
            else:
                columns[mode].append(ratio)
                cells.append(f"{ratio:.2f}")
        rows.append(_row(cells))
    for label, fold in (("median", statistics.median), ("worst", max)):
        rows.append(_row([f"**{label}**", "", *(f"**{fold(columns[m]):.2f}**" if columns[m]
                                                else "" for m in modes)]))
    return "\n".join(rows)


def probe_table(results: dict[str, Any]) -> str:
    head = ["workload", "blocks run", "paths / 1k blocks", "path probes / 1k blocks",
            "… with measured weights", "edge increments / 1k blocks", "data file write ms"]
    rows = [_row(head), _row(["---"] + ["---:"] * (len(head) - 1))]
    for entry in results["workloads"]:
        figures = entry.get("probes")
        if not figures:
            continue
        written = entry.get("data_file", {})
        rows.append(_row([
            entry["workload"], f"{figures['blocks']:,}",
            f"{figures['paths_per_1000_blocks']:.0f}",
            f"{figures['path_probes_per_1000_blocks']:.0f}",
            f"{figures['path_probes_measured_weights_per_1000_blocks']:.0f}",
            f"{figures.get('edge_probes_per_1000_blocks', float('nan')):.0f}",
            f"{written.get('write_ms', float('nan')):.1f} ({written.get('functions', 0)} "
            f"functions, {written.get('paths', 0)} paths)"]))
    return "\n".join(rows)


def uninstrumented_table(results: dict[str, Any]) -> str:
    """Per workload: what the ``cover`` run left to original code (path executions and
    calls of the ``path`` run of the same loops), and the functions that went back."""
    rows = [_row(["workload", "path executions", "calls", "functions gone back"]),
            _row(["---", "---:", "---:", "---:"])]
    for entry in results["workloads"]:
        share = entry.get("uninstrumented")
        if share:
            rows.append(_row([entry["workload"], f"{share['paths']:.1%}",
                              f"{share['calls']:.1%}",
                              f"{share['stopped']} of {share['functions']}"]))
    return "\n".join(rows)


def targets(results: dict[str, Any]) -> list[str]:
    ratios = [e["ratio_seconds"] for e in results["workloads"] if "ratio_seconds" in e]
    lines = []

    def column(mode: str) -> list[float]:
        return [r[mode] for r in ratios if mode in r]

    path, edge, cov = column("path"), column("edge"), column("coverage")
    cover = column("cover")
    if cover:
        median, worst = statistics.median(cover), max(cover)
        lines.append(f"- --stop-counting basis on the median workload {median:.2f}{TIMES} "
                     f"(issue 21 target at most 1.15{TIMES}): "
                     f"{'met' if median <= 1.15 else 'missed'}; worst {worst:.2f}{TIMES}")
    if path:
        median, worst = statistics.median(path), max(path)
        lines.append(f"- path overhead on the median workload {100 * (median - 1):.0f}% "
                     f"(target at most 25%): {'met' if median <= 1.25 else 'missed'}")
        over = [e["workload"] for e in results["workloads"]
                if e.get("ratio_seconds", {}).get("path", 0) > 1.60]
        lines.append(f"- worst path overhead {100 * (worst - 1):.0f}% (target at most 60%): "
                     + ("met" if worst <= 1.60 else f"missed on {', '.join(over)}"))
    if path and edge:
        lines.append(f"- path vs edge mode, medians {statistics.median(path):.2f} vs "
                     f"{statistics.median(edge):.2f}: "
                     + ("met" if statistics.median(path) <= statistics.median(edge)
                        else "missed"))
    if path and cov:
        share = (statistics.median(path) - 1) / (statistics.median(cov) - 1)
        lines.append(f"- path overhead / coverage --branch overhead on the median: "
                     f"{share:.2f} (target at most 0.20): {'met' if share <= 0.2 else 'missed'}")
    totals, naive = column("events-totals"), column("events-statements")
    if totals and naive:
        share = (statistics.median(totals) - 1) / (statistics.median(naive) - 1)
        lines.append(f"- events, totals only / one add per statement, overheads on the median: "
                     f"{share:.2f} (issue 21 target at most 0.55): "
                     f"{'met' if share <= 0.55 else 'missed'}")
    shares = [e["uninstrumented"] for e in results["workloads"] if "uninstrumented" in e]
    if shares:
        lines.append("- ran on original code under --stop-counting basis, median share of "
                     f"path executions {statistics.median(s['paths'] for s in shares):.1%}, "
                     f"of calls {statistics.median(s['calls'] for s in shares):.1%}")
    imports = results.get("imports")
    if imports:
        ratio = imports["warm_over_plain"]
        lines.append(f"- warm-cache import / plain import: {ratio:.2f} (target at most 1.10): "
                     f"{'met' if ratio <= 1.10 else 'missed'}")
    return lines


def markdown(results: dict[str, Any]) -> str:
    versions = ", ".join(f"{k} {v}" for k, v in results["versions"].items() if v)
    parts = [
        f"Python {results['python']} on {results['platform']}, {results['cpus']} CPUs "
        f"(load average {results['loadavg_at_start'][0]:.2f} at start, "
        f"{results['loadavg_at_end'][0]:.2f} at end); {results['date']}; pathprof at "
        f"{results['pathprof_revision']}; {versions}"
        + (f"; coverage.py core {results['coverage_core']}" if results.get("coverage_core")
           else "") + ".",
        f"Command: `{results['command']}` — {results['repeats']} interleaved repeats; each "
        f"figure is the median over the repeats of the ratio to the plain run of the same "
        f"repeat.",
        "### Workload time, ratio to plain\n\n"
        + ratio_table(results, "ratio_seconds", "plain_seconds"),
        "### Workload CPU time (`time.process_time`), ratio to plain\n\n"
        + ratio_table(results, "ratio_cpu", "plain_cpu"),
        "### Fastest run of each mode over the fastest plain run\n\n"
        + ratio_table(results, "ratio_of_min_seconds", "plain_min_seconds"),
        "### Whole process (start-up, imports from the cache, saving the data), ratio to "
        "plain\n\n" + ratio_table(results, "ratio_wall", "plain_wall"),
        "### Probes executed (deterministic) and data-file write time\n\n"
        + probe_table(results),
    ]
    if any("uninstrumented" in e for e in results["workloads"]):
        parts.append("### Run on original code under `--stop-counting basis`\n\n"
                     + uninstrumented_table(results))
    imports = results.get("imports")
    if imports:
        per_k = imports["ms_per_1000_lines"]
        parts.append(
            f"### Import cost\n\n{imports['modules']} standard-library modules, "
            f"{imports['source_lines']:,} lines, imported in fresh processes: plain "
            f"{per_k['plain']:.1f} ms per 1,000 lines, instrumenting (cache empty) "
            f"{per_k['cold']:.1f}, cache warm {per_k['warm']:.1f} "
            f"(warm / plain {imports['warm_over_plain']:.2f}).")
    parts.append("### Targets (issue 5)\n\n" + "\n".join(targets(results)))
    errors = [(e["workload"], m, err) for e in results["workloads"]
              for m, err in e["errors"].items()]
    for workload, mode, err in errors:
        parts.append(f"{workload} failed in {mode} mode:\n```\n{err.rstrip()}\n```")
    return "\n\n".join(parts) + "\n"


def chart(results: dict[str, Any], path: Path) -> Path | None:
    """A bar chart of each mode's overhead per workload (log scale), or None without
    matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    entries = [e for e in results["workloads"] if "ratio_seconds" in e]
    modes = [m for m in results["modes"] if m != "plain"]
    width = 0.8 / max(1, len(modes))
    fig, ax = plt.subplots(figsize=(max(8, len(entries) * 0.9), 4.5))
    for i, mode in enumerate(modes):
        xs = [j + (i - (len(modes) - 1) / 2) * width for j in range(len(entries))]
        ys = [e["ratio_seconds"].get(mode, float("nan")) for e in entries]
        ax.bar(xs, ys, width, label=TITLES[mode])
    ax.set_yscale("log")
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks(range(len(entries)), [e["workload"] for e in entries], rotation=45,
                  ha="right")
    ax.set_ylabel("time / plain time (log scale)")
    ax.set_title(f"Overhead on pyperformance workloads, Python {results['python']}")
    ax.legend(fontsize="small", ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


if __name__ == "__main__":
    source = Path(sys.argv[1])
    data = json.loads(source.read_text(encoding="utf-8"))
    print(markdown(data))
    chart(data, source.with_suffix(".png"))
