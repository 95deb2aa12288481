"""pathprof.runtime.stopping: counter tables that tell when a path first runs. A list
slot holds an ``Unseen`` exactly until its path's first count since the table was armed,
and each first count is reported to the watcher once (a ``FirstSeen`` hash table the
same through ``__missing__``); a report's failure never reaches the program, but what a
signal handler raised does, leaving the slot unseen; ``UnseenVector`` reports a decision
vector's first run as ``-1 - slot``; ``PARKED`` counts nothing and indexes the spare
slot; everything pickles as the plain counts it stands for. The watcher is set with
monkeypatch, and put back after each test."""

from __future__ import annotations

import pickle
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pathprof.runtime import stopping
from pathprof.runtime.stopping import (
    PARKED,
    FirstSeen,
    Parked,
    Unseen,
    UnseenVector,
    arm,
    new_table,
    vector_runs,
)

STATE: Any = object()  # what the tables hand the watcher back; they read nothing of it


class Watcher:
    """Hears of first runs; ``then`` runs inside each report."""

    def __init__(self, then: Any = None) -> None:
        self.heard: list[tuple[object, int, int]] = []
        self.then = then

    def seen(self, state: object, index: int, number: int) -> None:
        self.heard.append((state, index, number))
        if self.then is not None:
            self.then()


@pytest.fixture
def watcher(monkeypatch: pytest.MonkeyPatch) -> Watcher:
    listening = Watcher()
    monkeypatch.setattr(stopping, "watcher", listening)
    return listening


def test_a_new_list_table_holds_one_unseen_per_path_and_a_spare_zero() -> None:
    table = new_table(STATE, 4, 3, spare=True)
    assert isinstance(table, list)
    assert len(table) == 4
    assert [type(slot) for slot in table] == [Unseen, Unseen, Unseen, int]
    assert table[3] == 0
    assert [(slot.state, slot.index, slot.number, slot.table) for slot in table[:3]] == [
        (STATE, 4, 0, table), (STATE, 4, 1, table), (STATE, 4, 2, table)]
    assert len(new_table(STATE, 0, 2)) == 2  # no spare unless asked


def test_a_new_table_of_too_many_paths_is_a_first_seen_hash_table() -> None:
    table = new_table(STATE, 2, -1)
    assert type(table) is FirstSeen
    assert (table.state, table.index, len(table)) == (STATE, 2, 0)


def test_the_first_count_of_a_path_is_reported_once_and_leaves_an_int(watcher: Watcher
                                                                      ) -> None:
    table = new_table(STATE, 7, 3)
    table[1] += 1
    assert watcher.heard == [(STATE, 7, 1)]
    assert type(table[1]) is int
    assert table[1] == 1
    table[1] += 1
    table[1] += 1
    assert table[1] == 3
    table[0] += 1
    assert watcher.heard == [(STATE, 7, 1), (STATE, 7, 0)]
    assert type(table[2]) is Unseen


def test_with_no_watcher_a_first_count_is_just_counted(monkeypatch: pytest.MonkeyPatch
                                                       ) -> None:
    monkeypatch.setattr(stopping, "watcher", None)
    table = new_table(STATE, 0, 2)
    table[0] += 1
    assert table == [1, table[1]]
    assert type(table[1]) is Unseen


def test_an_unseen_slot_stands_for_zero() -> None:
    (slot,) = new_table(STATE, 0, 1)
    assert isinstance(slot, Unseen)
    assert not slot
    assert repr(slot) == "0"
    assert slot - 3 == -3  # a count taken back before the path counted
    assert pickle.loads(pickle.dumps(slot)) == 0
    assert type(pickle.loads(pickle.dumps(slot))) is int


def test_a_count_another_thread_made_during_the_report_is_kept(monkeypatch: pytest.MonkeyPatch
                                                               ) -> None:
    table = new_table(STATE, 0, 2)

    def other_thread_counts() -> None:
        table[0] = 5  # (the other thread's first count had already been stored)

    monkeypatch.setattr(stopping, "watcher", Watcher(then=other_thread_counts))
    table[0] += 1
    assert table[0] == 6


def test_a_failing_report_is_kept_from_the_program(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken() -> None:
        raise RuntimeError("the watcher's own bug")

    listening = Watcher(then=broken)
    monkeypatch.setattr(stopping, "watcher", listening)
    table = new_table(STATE, 0, 1)
    table[0] += 1
    assert table[0] == 1
    assert listening.heard == [(STATE, 0, 0)]
    hashed = new_table(STATE, 1, -1)
    hashed[9] += 1
    assert hashed == {9: 1}


def test_a_signal_handlers_exception_in_a_report_reaches_the_program(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted() -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(stopping, "watcher", Watcher(then=interrupted))
    table = new_table(STATE, 0, 1)
    with pytest.raises(KeyboardInterrupt):
        table[0] += 1
    assert type(table[0]) is Unseen  # the path was cut there: its slot stays unseen
    hashed = new_table(STATE, 0, -1)
    with pytest.raises(KeyboardInterrupt):
        hashed[3] += 1
    assert 3 not in hashed


def test_a_hash_table_reports_each_paths_first_count(watcher: Watcher) -> None:
    table = new_table(STATE, 5, -1)
    table[10] += 1
    table[10] += 1
    table[2**70] += 1
    assert table == {10: 2, 2**70: 1}
    assert watcher.heard == [(STATE, 5, 10), (STATE, 5, 2**70)]
    restored = pickle.loads(pickle.dumps(table))
    assert type(restored) is dict
    assert restored == {10: 2, 2**70: 1}


def test_a_hash_table_does_not_report_the_parked_key(watcher: Watcher) -> None:
    table = new_table(STATE, 0, -1)
    table[PARKED] += 1
    assert watcher.heard == []
    assert table == {PARKED: 1}  # under a key of its own, which equals no path
    table[-1] += 1
    assert table == {PARKED: 1, -1: 1}


def test_a_vectors_first_run_is_reported_as_a_negative_number(watcher: Watcher) -> None:
    counter = UnseenVector(STATE, 3, 4, 7)
    assert counter + 1 == 8  # what it had counted before, and the new run
    assert watcher.heard == [(STATE, 3, -5)]
    assert 1 + counter == 8
    assert counter  # object's truth: no call
    assert pickle.loads(pickle.dumps(counter)) == 0


def test_vector_runs_reads_an_int_an_unseen_vector_and_nothing() -> None:
    assert vector_runs(12) == 12
    assert vector_runs(UnseenVector(STATE, 0, 0, 9)) == 9
    assert vector_runs(None) == 0  # the module's globals are gone
    assert vector_runs(True) == 0  # not an int the counter holds


def test_parked_counts_nothing_and_indexes_the_spare_slot() -> None:
    assert PARKED + 1 is PARKED
    assert 1 + PARKED is PARKED
    assert PARKED - 1 is PARKED
    assert [10, 20, 30][PARKED] == 30
    assert repr(PARKED) == "PARKED"
    assert PARKED != 0
    assert PARKED != -1
    assert {PARKED: 1}[PARKED] == 1
    assert pickle.loads(pickle.dumps(PARKED)) is PARKED
    assert isinstance(PARKED, Parked)


def test_a_parked_register_counts_into_the_spare_slot_unreported(watcher: Watcher) -> None:
    table = new_table(STATE, 0, 2, spare=True)
    table[PARKED] += 1
    assert table[2] == 1
    assert watcher.heard == []
    assert [type(slot) for slot in table[:2]] == [Unseen, Unseen]


def test_arming_makes_every_path_unseen_again_and_drops_counts(watcher: Watcher) -> None:
    table = new_table(STATE, 1, 3, spare=True)
    table[0] += 1
    table[2] += 1
    table[3] += 4  # the spare slot
    arm(STATE, 1, table, 3)
    assert [type(slot) for slot in table] == [Unseen, Unseen, Unseen, int]
    assert table[3] == 0
    table[0] += 1
    assert watcher.heard == [(STATE, 1, 0), (STATE, 1, 2), (STATE, 1, 0)]
    hashed = new_table(STATE, 1, -1)
    hashed[4] += 1
    arm(STATE, 1, hashed)
    assert hashed == {}
    hashed[4] += 1
    assert watcher.heard[-1] == (STATE, 1, 4)


def test_arming_a_plain_table_without_a_size_arms_every_slot() -> None:
    table: list[int | Unseen] = [3, 0, 1]
    arm(STATE, 2, table)
    assert [(type(s), s.number) for s in table] == [  # type: ignore[union-attr]
        (Unseen, 0), (Unseen, 1), (Unseen, 2)]
    assert all(s.table is table for s in table)  # type: ignore[union-attr]


@settings(max_examples=50, deadline=None)
@given(st.lists(st.one_of(st.integers(0, 4), st.just("arm")), max_size=40))
def test_a_slot_is_unseen_exactly_until_its_first_count_since_armed(steps: list[object]
                                                                     ) -> None:
    listening = Watcher()
    saved = stopping.watcher
    stopping.watcher = listening
    try:
        table = new_table(STATE, 0, 5)
        expected_reports: list[int] = []
        counts = [0] * 5
        for step in steps:
            if step == "arm":
                arm(STATE, 0, table, 5)
                counts = [0] * 5
                continue
            assert isinstance(step, int)
            if counts[step] == 0:
                expected_reports.append(step)
            table[step] += 1
            counts[step] += 1
            for slot, count in enumerate(counts):
                assert (type(table[slot]) is Unseen) is (count == 0)
                if count:
                    assert table[slot] == count
        assert [number for _s, _i, number in listening.heard] == expected_reports
    finally:
        stopping.watcher = saved
