"""Independent oracles for the numbering: enumerate DAG paths by brute force."""

from __future__ import annotations

from collections.abc import Iterator

from pathprof.graph import Dag


def all_dag_paths(dag: Dag, limit: int = 20_000) -> Iterator[tuple[int, ...]]:
    """Every ENTRY -> EXIT path of the DAG as a tuple of dag edge ids, by DFS."""
    produced = 0
    stack: list[tuple[int, tuple[int, ...]]] = [(dag.entry, ())]
    while stack:
        block, edges = stack.pop()
        if block == dag.exit:
            produced += 1
            if produced > limit:
                raise OverflowError("too many paths for the brute-force oracle")
            yield edges
            continue
        for eid in dag.out_edges[block]:
            stack.append((dag.edges[eid].dst, (*edges, eid)))
