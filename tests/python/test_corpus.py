"""Differential test: pathprof's profile equals the instruction-trace oracle's, exactly."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..loading import corpus_programs, load_instrumented, load_plain
from ..oracles import BlockTraceOracle

PROGRAMS = corpus_programs()


@pytest.mark.parametrize("path", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_profile_equals_oracle(path: Path) -> None:
    loaded = load_instrumented(path)
    infos_holder: list = []

    def run() -> object:
        loaded.execute()
        return loaded.module.drive()

    # The code objects exist before execution: find them first.
    infos = loaded.function_infos()
    infos_holder.extend(infos)
    oracle = BlockTraceOracle(infos)
    result = oracle.run(run)
    assert not oracle.errors, oracle.errors
    recorded = loaded.recorded(infos)
    for info in infos:
        name = info.meta.qualname
        assert recorded[name] == oracle.paths[name], name
    plain = load_plain(path, f"pathprof_plain_{path.stem}")
    assert plain.drive() == result


HAND_COUNTED = [p for p in PROGRAMS if "EXPECTED =" in p.read_text(encoding="utf-8")]


@pytest.mark.parametrize("path", HAND_COUNTED, ids=[p.stem for p in HAND_COUNTED])
def test_profile_equals_hand_counts(path: Path) -> None:
    """The production build's counts equal the counts written down by hand:
    per function, the path executions and the sorted path counts."""
    loaded = load_instrumented(path, mark_probes=False)
    loaded.execute()
    loaded.module.drive()
    paths, cuts, _raised, _unattributed = loaded.snapshot()
    recorded = {}
    for i, meta in enumerate(loaded.metadata.functions):
        counts = sorted([*paths[i].values(), *cuts[i].values()])
        if counts and meta.qualname != "drive":
            recorded[meta.qualname] = (sum(counts), counts)
    expected = {name: (total, sorted(counts))
                for name, (total, counts) in loaded.module.EXPECTED.items()}
    assert recorded == expected
