"""The corpus against the oracle that knows no CFG (:mod:`tests.source_oracle`).

The oracle traces each corpus program run plainly; the production build of the same
program runs untraced; per function, the path executions agree, and so do the sorted
path counts wherever the oracle's line sequences tell the function's paths apart.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ..loading import corpus_programs, load_instrumented, load_plain
from ..source_oracle import SourceOracle

PROGRAMS = corpus_programs()


def _recorded(loaded: Any) -> dict[tuple[str, int], list[int]]:
    paths, cuts, _raised, _unattributed = loaded.snapshot()
    return {(meta.qualname, meta.code_line): sorted([*paths[i].values(),
                                                           *cuts[i].values()])
            for i, meta in enumerate(loaded.metadata.functions)}


@pytest.mark.parametrize("path", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_corpus_agrees_with_the_source_oracle(path: Path) -> None:
    oracle = SourceOracle([str(path)])
    plain = oracle.run(lambda: load_plain(path, f"pathprof_source_oracle_{path.stem}").drive())
    loaded = load_instrumented(path, mark_probes=False)
    loaded.execute()  # the module body's calls (decorators) count on both sides
    assert loaded.module.drive() == plain
    recorded = _recorded(loaded)
    assert None not in oracle.not_compared, oracle.not_compared
    compared = 0
    for key, info in oracle.functions.items():
        if key in oracle.not_compared:
            continue
        mine = recorded.get((key[1], key[2]), [])
        assert sum(mine) == oracle.executions(key), key[1]
        if info.distinguishable:
            assert mine == oracle.counts(key), key[1]
        compared += oracle.executions(key)
    assert compared > 0
