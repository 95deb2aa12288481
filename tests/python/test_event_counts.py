"""Exactness of event counts (Ball 1994): pathprof against an independent
``sys.settrace`` statement counter, per function (self and inclusive) and in total."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pathprof import _eventrt

from ..event_oracle import StatementCounter, plain_functions
from ..loading import load_instrumented

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
PROGRAMS = sorted(p for p in CORPUS.glob("*.py") if not p.name.startswith("_"))


def counted(key: str) -> tuple[dict[str, int], dict[str, int], int]:
    """Self and inclusive counts per function of the module registered with ``key``
    (summed over its executions), and its unattributed exceptions."""
    own: dict[str, int] = {}
    whole: dict[str, int] = {}
    lost = 0
    inclusive = _eventrt.inclusive_counts()
    for position, state in enumerate(_eventrt.modules()):
        if state.key != key:
            continue
        for i, meta in enumerate(state.meta["functions"]):
            name = meta["qualname"]
            own[name] = own.get(name, 0) + state.self_counts[i]
            whole[name] = whole.get(name, 0) + inclusive[(position, i)]
        lost += sum(state.unattributed)
    return own, whole, lost


def run_both(path: Path, kind: str, drive: str = "drive") -> tuple[Any, Any, Any]:
    plain, functions = plain_functions(path, kind)
    oracle = StatementCounter(functions)

    def execute_and_drive() -> Any:
        exec(plain.__pathprof_code__, plain.__dict__)  # decorators run as it executes
        return getattr(plain, drive)()

    expected = oracle.run(execute_and_drive)
    loaded = load_instrumented(path, f"pathprof_events_{path.stem}_{kind}", mark_probes=False,
                               mode="events", events=kind)
    loaded.execute()
    result = getattr(loaded.module, drive)()
    assert result == expected
    return oracle, counted(loaded.metadata["key"]), loaded


@pytest.mark.parametrize("kind", ["statements", "instructions"])
@pytest.mark.parametrize("path", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_counts_equal_the_settrace_counter(path: Path, kind: str) -> None:
    oracle, (own, whole, lost), _loaded = run_both(path, kind)
    assert lost == 0
    names = set(own)
    assert {n: own[n] for n in names} == {n: oracle.self_counts[n] for n in names}
    assert {n: whole[n] for n in names} == {n: oracle.inclusive[n] for n in names}
    assert sum(own.values()) == sum(oracle.self_counts.values()) > 0
