"""Executed probes per 1,000 executed blocks: a deterministic measure of probe cost.

``python benchmarks/probes.py PATH_DATA [EDGE_DATA]`` reads a path-mode data file (and
optionally an edge-mode data file of the same program and input) and prints, as JSON:

- ``blocks``: basic blocks executed (the blocks of every recorded path, times its count);
- ``paths``: paths executed, each ending in one counter increment;
- ``path_probes``: probe operations pathprof's path mode executed — register sets and
  adds, and counter increments, as placed by Ball-Larus §3.3 with Ball 1994's spanning
  tree under the static loop-depth weights pathprof uses;
- ``path_probes_measured_weights``: the same had placement used the edge frequencies of
  this very run as weights (BL §3.3's "measured" weights, the best any profile-guided
  placement can do for this input);
- ``edge_probes``: counter increments edge mode executed (the sum of its chord counters);
- each per 1,000 blocks; the lower, the cheaper.

The count is exact and independent of the machine: the same paths always execute
the same probes. Not counted: the per-call register initialisation and the end-of-call
marker some returns carry (they depend on the call, not the path).
Paths an exception cut short (recorded as prefixes) are left out.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from pathprof.data.store import read
from pathprof.graph import EdgeKind, ProbeOp, regenerate
from pathprof.python.instrument import function_metadata, instrument_source
from pathprof.python.plan import plan_function


def _ops(plan: Any, edges: tuple[int, ...]) -> int:
    """Probe operations the rewriter emits along ``edges`` (a SET 0 on a normal edge
    emits nothing: the register starts at 0)."""
    dag = plan.dag
    ops = 0
    for edge in edges:
        probe = plan.probes.get(edge)
        if probe is None:
            continue
        if probe.op is ProbeOp.SET and probe.value == 0 and dag.edges[edge].kind is EdgeKind.NORMAL:
            continue
        ops += 1
    return ops


def path_figures(data_file: str) -> dict[str, int]:
    measurement = read(data_file)
    plans: dict[str, dict[tuple[str, int], Any]] = {}
    blocks = probes = measured = paths = 0
    for function in measurement.functions:
        if function.file not in plans:
            source = Path(function.file).read_text(encoding="utf-8")
            module = instrument_source(source, function.file)
            plans[function.file] = {
                (meta.qualname, meta.code_line): fp
                for fp in module.functions for meta in [function_metadata(fp)]}
        fp = plans[function.file][(function.qualname, function.first_line)]
        dag = fp.numbering.dag
        edge_freq: Counter[int] = Counter()
        for number, count in function.counts.items():
            path = regenerate(fp.numbering, number)
            paths += count
            blocks += count * sum(1 for b in path.blocks if b not in (dag.entry, dag.exit))
            probes += count * _ops(fp.plan, path.edges)
            for edge in path.edges:
                edge_freq[edge] += count
        if function.counts:
            weights = [float(edge_freq[e]) for e in range(len(dag.edges))]
            guided = plan_function(fp.cfg, fp.index, weights=weights)
            for number, count in function.counts.items():
                measured += count * _ops(guided.plan, regenerate(fp.numbering, number).edges)
    return {"blocks": blocks, "paths": paths, "path_probes": probes,
            "path_probes_measured_weights": measured}


def edge_increments(data_file: str) -> int:
    return sum(sum(f.edges.values()) for f in read(data_file).functions)


def figures(path_data: str, edge_data: str | None = None) -> dict[str, Any]:
    result: dict[str, Any] = path_figures(path_data)
    if edge_data:
        result["edge_probes"] = edge_increments(edge_data)
    blocks = result["blocks"] or 1
    for key in ("paths", "path_probes", "path_probes_measured_weights", "edge_probes"):
        if key in result:
            result[key + "_per_1000_blocks"] = round(1000 * result[key] / blocks, 1)
    return result


if __name__ == "__main__":
    print(json.dumps(figures(*sys.argv[1:3]), indent=2))
