"""Time the graph algorithms on a large CFG (a benchmark, not a test).

Run: ``python benchmarks/graph_algorithms.py [--blocks 5000] [--repeat 5]``.
Builds a deterministic structured CFG of about N blocks (nested ifs, loops with
breaks, multi-way branches, returns), then times each step of the pipeline:
DAG conversion, Ball-Larus numbering, spanning tree + chord/query increments,
probe planning, and the edge-profiling plan. Prints the median of the repeats.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable

from pathprof.graph import (
    Cfg,
    find_backedges,
    number_paths,
    place,
    plan_edge_counters,
    plan_probes,
    to_dag,
)


def structured_cfg(target_blocks: int, seed: int = 2026) -> Cfg:
    """A reducible CFG shaped like a long Python function."""
    rng = random.Random(seed)
    edges: list[tuple[int, int]] = []
    count = 2  # 0 = ENTRY, 1 = EXIT

    def new() -> int:
        nonlocal count
        count += 1
        return count - 1

    def body(start: int, depth: int, loop_exit: int | None, budget: int) -> int | None:
        current = start
        while budget > 0 and count < target_blocks:
            kind = rng.choices(["plain", "if", "loop", "switch", "return", "break"],
                               [5, 4, 2, 1, 0.2, 0.3 if loop_exit is not None else 0])[0]
            if depth > 6 and kind in ("if", "loop", "switch"):
                kind = "plain"
            if kind == "plain":
                nxt = new()
                edges.append((current, nxt))
                current, budget = nxt, budget - 1
            elif kind == "return":
                edges.append((current, 1))
                return None
            elif kind == "break":
                assert loop_exit is not None
                edges.append((current, loop_exit))
                return None
            elif kind in ("if", "switch"):
                join = new()
                arms = 2 if kind == "if" else rng.randint(3, 6)
                share = max(1, budget // (arms * 3))
                for _ in range(arms):
                    arm = new()
                    edges.append((current, arm))
                    end = body(arm, depth + 1, loop_exit, rng.randint(1, share))
                    if end is not None:
                        edges.append((end, join))
                current, budget = join, budget - arms * share
            else:
                header, after, first = new(), new(), new()
                edges.append((current, header))
                edges.append((header, first))
                end = body(first, depth + 1, after, rng.randint(1, max(1, budget // 3)))
                if end is not None:
                    edges.append((end, header))
                edges.append((header, after))
                current, budget = after, budget - budget // 3 - 2
        return current

    first = new()
    edges.append((0, first))
    while count < target_blocks:
        end = body(first, 0, None, target_blocks - count)
        if end is None:
            break
        first = end
    if end is not None:
        edges.append((end, 1))
    return Cfg(count, 0, 1, edges)


def timed(fn: Callable[[], object], repeat: int) -> tuple[float, object]:
    times = []
    result: object = None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blocks", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    cfg = structured_cfg(args.blocks)
    backedges = find_backedges(cfg)
    print(f"Python {sys.version.split()[0]}; CFG: {cfg.num_blocks} blocks, "
          f"{len(cfg.edges)} edges, {len(backedges)} backedges")
    t_dag, dag = timed(lambda: to_dag(cfg), args.repeat)
    t_num, numbering = timed(lambda: number_paths(dag), args.repeat)  # type: ignore[arg-type]
    t_place, placement = timed(lambda: place(numbering), args.repeat)  # type: ignore[arg-type]
    t_plan, plan = timed(lambda: plan_probes(placement), args.repeat)  # type: ignore[arg-type]
    t_edges, _ = timed(lambda: plan_edge_counters(cfg), args.repeat)
    total = numbering.total  # type: ignore[attr-defined]
    print(f"  acyclic paths: about 10^{len(str(total)) - 1}")
    print(f"  to_dag            {t_dag * 1e3:8.1f} ms")
    print(f"  number_paths      {t_num * 1e3:8.1f} ms")
    print(f"  place (tree+inc)  {t_place * 1e3:8.1f} ms")
    print(f"  plan_probes       {t_plan * 1e3:8.1f} ms")
    print(f"  numbering + placement + plan: {(t_num + t_place + t_plan) * 1e3:.1f} ms")
    print(f"  plan_edge_counters {t_edges * 1e3:7.1f} ms")
    print(f"  probes: {plan.static_count()} for {len(dag.edges)} dag edges")  # type: ignore


if __name__ == "__main__":
    main()
