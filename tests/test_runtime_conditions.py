"""A module's vector counters (``runtime/conditions.py``): what ``counts`` returns with
``reset``, summed over every call, is what the counters counted, whatever runs between
the calls; a module executed again in the same globals keeps what its counters held."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from pathprof.runtime.conditions import Conditions

VECTORS = (2, 0, 3)  # three functions' vector counts: slots 0-1, none, 2-4


class _State:
    """What Conditions reads of a module state: its globals."""

    def __init__(self, namespace: dict[str, object] | None) -> None:
        self.namespace = namespace
        self.conditions: Conditions | None = None


def _conditions(namespace: dict[str, object] | None) -> Conditions:
    state = _State(namespace)
    conditions = state.conditions = Conditions(state, VECTORS)  # type: ignore[arg-type]
    conditions.start(namespace, [], ())
    return conditions


STEPS = st.lists(st.one_of(st.tuples(st.just("run"), st.integers(0, 4)),
                           st.tuples(st.just("take"), st.integers(0, 2)),
                           st.tuples(st.just("peek"), st.integers(0, 2))), max_size=40)


@given(STEPS)
def test_what_is_taken_adds_up_to_what_ran(steps: list[tuple[str, int]]) -> None:
    namespace: dict[str, object] = {}
    conditions = _conditions(namespace)
    assert conditions.slots == (range(0, 2), range(2, 2), range(2, 5))
    assert all(namespace[name] == 0 for name in conditions.names)
    ran = [0] * 5
    taken = [0] * 5
    for step, value in steps:
        if step == "run":  # what a rewritten decision does: its counter += 1
            name = conditions.names[value]
            namespace[name] = int(namespace[name]) + 1  # type: ignore[call-overload]
            ran[value] += 1
        else:
            found = conditions.counts(value, reset=step == "take")
            assert set(found) <= set(conditions.slots[value])
            for slot, runs in found.items():
                assert isinstance(slot, int)
                assert runs == ran[slot] - taken[slot]
                if step == "take":
                    taken[slot] += runs
    for index in range(len(VECTORS)):
        for slot, runs in conditions.counts(index, reset=True).items():
            assert isinstance(slot, int)
            taken[slot] += runs
    assert taken == ran


def test_a_module_executed_again_keeps_its_runs() -> None:
    namespace: dict[str, object] = {}
    first = _conditions(namespace)
    namespace[first.names[3]] = 4
    second_state = _State(namespace)
    second = Conditions(second_state, VECTORS)  # type: ignore[arg-type]
    second.start(namespace, [first.state], ())  # (importlib.reload: the same globals)
    assert first.kept is not None
    assert first.counts(2, reset=True) == {3: 4}
    assert namespace[first.names[3]] == 0  # the new state counts from 0
    namespace[first.names[3]] = 1
    assert first.counts(2, reset=False) == {}  # the first state reads its counters no more
    assert second.counts(2, reset=False) == {3: 1}


def test_without_globals_nothing_is_read() -> None:
    conditions = _conditions(None)
    assert conditions.counts(0, reset=True) == {}
    conditions.reset()  # nothing to take, and no error
