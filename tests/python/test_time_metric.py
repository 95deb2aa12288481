"""``--metric time``: each path's time is the clock's advance from its start to its end."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from pathprof import runtime

from ..loading import corpus_programs, load_instrumented

PROGRAMS = corpus_programs()


@pytest.mark.parametrize("path", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_times_follow_the_clock_and_counts_are_unchanged(
        path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plain = load_instrumented(path, f"pathprof_untimed_{path.stem}", mark_probes=False)
    plain.execute()
    plain.snapshot()
    plain.module.drive()
    untimed = plain.snapshot()[0]

    ticks = itertools.count()
    monkeypatch.setattr(runtime, "clock", lambda: next(ticks))
    timed = load_instrumented(path, f"pathprof_timed_{path.stem}", mark_probes=False,
                              metric="time")
    timed.execute()
    timed.snapshot()
    timed.module.drive()
    for state, counts, _cuts, _raised, _unattributed, times, _closed, _vectors in (
            runtime.take_snapshot()):
        if state.key != timed.metadata.key:
            continue
        assert counts == untimed  # timing changes no count
        for i, function_times in enumerate(times):
            assert set(function_times) <= set(counts[i])
            for number, elapsed in function_times.items():
                # Each completed path reads the clock once more than it started it;
                # with one tick per reading, a path's time is at least its count.
                assert elapsed >= counts[i][number]
        # Times are inclusive (a caller's path includes its callees' ticks), so
        # they may add up to more than the clock advanced; every path has some.
        assert all(set(t) == set(c) for t, c in zip(times, counts, strict=True))
        return
    raise AssertionError("module not registered")


def test_leaf_function_time_is_exactly_one_tick_per_path(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = tmp_path / "leaf.py"
    source.write_text("def leaf(n):\n    if n:\n        return 1\n    return 0\n\n"
                      "def drive():\n    return [leaf(i % 3) for i in range(9)]\n")
    ticks = itertools.count()
    monkeypatch.setattr(runtime, "clock", lambda: next(ticks))
    loaded = load_instrumented(source, "pathprof_leaf", mark_probes=False, metric="time")
    loaded.execute()
    loaded.module.drive()
    for state, counts, _cuts, _raised, _unattributed, times, _closed, _vectors in (
            runtime.take_snapshot()):
        if state.key == loaded.metadata.key:
            # leaf reads the clock at entry and at its return: one tick per call.
            assert times[0] == counts[0]
            assert sorted(counts[0].values()) == [3, 6]
            return
    raise AssertionError("module not registered")
