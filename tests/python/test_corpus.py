"""Differential test: pathprof's profile equals the instruction-trace oracle's, exactly."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..loading import load_instrumented, load_plain
from ..oracles import BlockTraceOracle

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
PROGRAMS = sorted(p for p in CORPUS.glob("*.py") if not p.name.startswith("_"))


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
        name = info.meta["qualname"]
        assert recorded[name] == oracle.paths[name], name
    plain = load_plain(path, f"pathprof_plain_{path.stem}")
    assert plain.drive() == result
