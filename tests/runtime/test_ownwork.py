"""pathprof.runtime.ownwork: pathprof's own work kept out of the program's counts.
Outside every ``with own_work`` a shared module's names hold its registered state's
tables; inside, scratch tables of the same shape (swapped on the first entry, put back
on the last exit, reentrant); ``released()`` lets the program's code count again and
gives the depth back after; a module pathprof's own work imported forgets what it
counted meanwhile, and is shared if asked, once the work ends. Every test uses an
``OwnWork`` of its own (the process's ``own_work`` is left alone)."""

from __future__ import annotations

import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pathprof.runtime import ModuleState
from pathprof.runtime.ownwork import OwnWork, own_work


def _state(filename: str = "/ownwork/shared.py", sizes: tuple[int, ...] = (2, 3),
           timed: bool = False) -> ModuleState:
    """A module's state whose names (its holder's) hold its tables, and one name of
    the program's own."""
    names: dict[str, object] = {"program": "kept"}
    state = ModuleState("shared", filename, f"{filename}:key", sizes, "{}", timed,
                        names=names)
    names["_@pp_m"] = state
    for i in range(len(sizes)):
        names[f"_@pp_c{i}"] = state.counters[i]
        if timed:
            names[f"_@pp_t{i}"] = state.times[i]
    return state


def _real(state: ModuleState) -> bool:
    """Whether the module's names hold the state's own tables (else asserts scratch)."""
    names = state.names
    if names["_@pp_m"] is state:
        assert all(names[f"_@pp_c{i}"] is state.counters[i] for i in range(len(state.sizes)))
        return True
    scratch = names["_@pp_m"]
    assert isinstance(scratch, ModuleState)
    assert all(names[f"_@pp_c{i}"] is scratch.counters[i]
               and names[f"_@pp_c{i}"] is not state.counters[i]
               for i in range(len(state.sizes)))
    return False


def test_the_depth_counts_entries_and_the_work_is_active_inside_only() -> None:
    work = OwnWork()
    assert not work.active
    with work:
        assert work.active
        with work:
            assert work.active
        assert work.active
    assert not work.active


def test_a_shared_module_counts_into_scratch_tables_while_the_work_runs() -> None:
    work = OwnWork()
    state = _state()
    work.share(state)
    assert _real(state)  # sharing outside the work swaps nothing yet
    with work:
        assert not _real(state)
        scratch = state.names["_@pp_m"]
        assert isinstance(scratch, ModuleState)
        assert (scratch.key, scratch.filename, scratch.sizes) == (state.key, state.filename,
                                                                  (2, 3))
        table = state.names["_@pp_c1"]
        assert isinstance(table, list)
        table[2] += 1  # what a function of the module counts meanwhile
        with work:
            assert not _real(state)
        assert not _real(state)  # the inner exit puts nothing back
    assert _real(state)
    assert state.counters == ([0, 0], [0, 0, 0])
    assert state.names["program"] == "kept"


def test_scratch_tables_have_the_shape_of_the_real_ones() -> None:
    work = OwnWork()
    state = _state(sizes=(-1, 4), timed=True)  # a hash table and a list
    work.share(state)
    with work:
        assert isinstance(state.names["_@pp_c0"], dict)
        assert state.names["_@pp_c0"] is not state.counters[0]
        assert state.names["_@pp_c1"] == [0, 0, 0, 0]
        assert state.names["_@pp_t1"] is not state.times[1]
        assert state.names["_@pp_t1"] == [0, 0, 0, 0]
    assert state.names["_@pp_t1"] is state.times[1]
    assert state.names["_@pp_t0"] is state.times[0]


def test_only_the_names_the_module_has_are_swapped() -> None:
    work = OwnWork()
    state = _state(sizes=(1, 1))
    del state.names["_@pp_c1"]  # a function whose table its code never names
    work.share(state)
    with work:
        assert "_@pp_c1" not in state.names
        assert state.names["_@pp_c0"] is not state.counters[0]
    assert set(state.names) == {"program", "_@pp_m", "_@pp_c0"}


def test_a_module_shared_while_the_work_runs_is_swapped_at_once() -> None:
    work = OwnWork()
    state = _state()
    with work:
        work.share(state)
        assert not _real(state)
    assert _real(state)


def test_released_lets_the_program_count_and_gives_the_depth_back() -> None:
    work = OwnWork()
    state = _state()
    work.share(state)
    with work, work:
        released = work.released()
        with released:
            assert not work.active
            assert _real(state)
            with work:  # pathprof's hook inside it (an import) enters again
                assert not _real(state)
            assert _real(state)
        assert work.active
        assert not _real(state)
        released.__exit__(None, None, None)  # again: nothing more
        assert work._depth == 2
    assert not work.active
    assert _real(state)


def test_released_outside_the_work_changes_nothing() -> None:
    work = OwnWork()
    state = _state()
    work.share(state)
    with work.released():
        assert not work.active
        assert _real(state)
    assert not work.active
    assert _real(state)


def test_a_module_imported_by_the_work_forgets_its_counts_and_is_shared_when_it_ends(
        ) -> None:
    work = OwnWork()
    shared, private, other = (_state("/ownwork/a.py"), _state("/ownwork/b.py"),
                              _state("/ownwork/c.py"))
    with work:
        work.importing("/ownwork/a.py", shared=True)
        work.importing("/ownwork/b.py", shared=False)
        for state in (shared, private, other):  # each module executes (register)
            work._registered(state)
            state.counters[0][1] += 3
            state.raised[0] += 1
        assert shared.counters[0] == [0, 3]  # settled only when the work ends
    assert shared.counters == ([0, 0], [0, 0, 0])
    assert private.counters == ([0, 0], [0, 0, 0])
    assert (shared.raised, private.raised) == ([0, 0], [0, 0])
    assert other.counters[0] == [0, 3]  # not imported by the work: the program's
    assert other.raised == [1, 0]
    with work:
        assert not _real(shared)
        assert _real(private)
        assert _real(other)


def test_what_the_work_imported_is_settled_when_the_program_runs_again() -> None:
    work = OwnWork()
    state = _state("/ownwork/a.py")
    with work:
        work.importing("/ownwork/a.py", shared=True)
        work._registered(state)
        state.counters[1][0] += 2
        with work.released():
            assert state.counters[1] == [0, 0, 0]
            assert _real(state)
            state.counters[1][0] += 1  # the program's own call
        assert not _real(state)
    assert state.counters[1] == [1, 0, 0]


def test_a_module_registered_without_an_import_of_the_works_is_not_touched() -> None:
    work = OwnWork()
    state = _state()
    work._registered(state)
    with work:
        work._registered(state)
        state.counters[0][0] += 1
    assert state.counters[0] == [1, 0]
    assert _real(state)


def test_threads_entering_at_once_swap_once_and_put_back_once() -> None:
    work = OwnWork()
    state = _state()
    work.share(state)
    inside = threading.Barrier(4)
    seen: list[bool] = []

    def enter() -> None:
        with work:
            inside.wait()
            seen.append(_real(state))
            inside.wait()

    threads = [threading.Thread(target=enter) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert seen == [False] * 4
    assert not work.active
    assert _real(state)


def test_the_process_has_one_own_work() -> None:
    assert isinstance(own_work, OwnWork)
    assert not own_work.active


STEPS = st.lists(st.sampled_from(["enter", "exit", "release", "hold again"]), max_size=30)


@settings(max_examples=50, deadline=None)
@given(STEPS)
def test_outside_every_with_the_shared_module_holds_its_real_tables(steps: list[str]
                                                                     ) -> None:
    work = OwnWork()
    state = _state()
    work.share(state)
    depth = 0  # the model: how deep the work is now
    open_releases: list[tuple[object, int]] = []  # (released window, depth it took)
    entered: list[str] = []  # what each "exit" closes, innermost last
    for step in steps:
        if step == "enter":
            work.__enter__()
            entered.append("work")
            depth += 1
        elif step == "exit" and entered and entered[-1] == "work":
            entered.pop()
            work.__exit__(None, None, None)
            depth -= 1
        elif step == "release":
            window = work.released()
            window.__enter__()
            open_releases.append((window, depth))
            entered.append("release")
            depth = 0
        elif step == "hold again" and entered and entered[-1] == "release":
            entered.pop()
            window, held = open_releases.pop()
            window.__exit__(None, None, None)  # type: ignore[attr-defined]
            depth += held
        else:
            continue
        assert work.active is (depth > 0)
        assert _real(state) is (depth == 0)
    while entered:  # every with ends
        if entered.pop() == "work":
            work.__exit__(None, None, None)
        else:
            window, _held = open_releases.pop()
            window.__exit__(None, None, None)  # type: ignore[attr-defined]
    assert not work.active
    assert _real(state)
    assert state.counters == ([0, 0], [0, 0, 0])


@pytest.mark.parametrize("error", [KeyboardInterrupt, ValueError])
def test_an_exception_inside_the_work_still_puts_the_real_tables_back(
        error: type[BaseException]) -> None:
    work = OwnWork()
    state = _state()
    work.share(state)
    with pytest.raises(error), work:
        raise error
    assert not work.active
    assert _real(state)
