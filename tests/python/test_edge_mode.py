"""Edge mode (chord counters, flow conservation) agrees with the path profile."""

from __future__ import annotations

import itertools
from collections import Counter
from pathlib import Path

import pytest

from pathprof.data.profile import cfg_of, decode_paths, edge_counts
from pathprof.graph import find_backedges

from ..loading import corpus_programs, load_instrumented
from ..oracles import with_entry_exit

PROGRAMS = corpus_programs()


def _edges_of_paths(meta: dict, paths: list) -> Counter:
    """(src, dst) edge counts implied by a path profile."""
    cfg = cfg_of(meta)
    back_from: dict[int, list[tuple[int, int]]] = {}
    for eid in find_backedges(cfg):
        src, dst = cfg.edges[eid]
        back_from.setdefault(src, []).append((src, dst))
    result: Counter = Counter()
    for path in paths:
        blocks = with_entry_exit(meta, path)
        for pair in itertools.pairwise(blocks):
            result[pair] += path.count
        if path.end == "loop-back":
            (edge,) = set(back_from[blocks[-1]])
            result[edge] += path.count
    return result


def _run(path: Path, mode: str) -> tuple[dict, dict]:
    loaded = load_instrumented(path, f"pathprof_edge_{mode}_{path.stem}", mark_probes=False,
                               mode=mode)
    loaded.execute()
    loaded.snapshot()  # discard what module execution counted
    loaded.module.drive()
    counts, cuts, _raised, unattributed = loaded.snapshot()
    assert not any(unattributed)
    return loaded.metadata, {"counts": counts, "cuts": cuts}


@pytest.mark.parametrize("path", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_edge_counts_equal_the_edges_of_the_path_profile(path: Path) -> None:
    path_meta, path_data = _run(path, "path")
    edge_meta, edge_data = _run(path, "edge")
    compared = 0
    for i, (pmeta, emeta) in enumerate(zip(path_meta.functions, edge_meta.functions,
                                           strict=True)):
        assert emeta.mode == "edge"
        assert pmeta.mode == "path"
        paths = decode_paths(pmeta, path_data["counts"][i], path_data["cuts"][i])
        expected = _edges_of_paths(pmeta, paths)
        by_pair: Counter = Counter()
        for eid, count in edge_counts(emeta, edge_data["counts"][i]).items():
            src, dst, _label = emeta.edges[eid]
            by_pair[(src, dst)] += count
        assert +by_pair == +expected, pmeta.qualname
        compared += sum(expected.values())
    assert compared > 0
