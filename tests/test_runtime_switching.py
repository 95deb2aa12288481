"""pathprof.runtime.switching: one module's stop-counting switches, turned by hand (the
profiles they give are tests/python/test_stop_counting*.py's and tests/test_goback.py's)."""

from __future__ import annotations

import weakref

from hypothesis import given
from hypothesis import strategies as st

from pathprof.runtime.switching import Switching

#: function 0 and 1 carry their original body, 2 goes back by its __code__; function 0
#: has two loops that can go back alone
LOOPS = ((0, (((), ()), ((), ()))),)


def _switching() -> Switching:
    names = {"_@pp_i0": True, "_@pp_i1": True, "_@pp_k1": True,
             "_@pp_j0_0": False, "_@pp_j0_1": False}
    return Switching(names, (0, 1), (2,), LOOPS)


def test_a_function_sent_back_turns_its_switch_and_only_its_own() -> None:
    switching = _switching()
    switching.send_back(1)
    assert switching.names["_@pp_i1"] is False
    assert switching.names["_@pp_i0"] is True
    assert switching.sent_back == {1}
    assert [switching.stopped(i) for i in range(3)] == [False, True, False]


def test_a_function_that_goes_back_by_its_code_and_one_that_cannot_stop_turn_nothing() -> None:
    switching = _switching()
    before = dict(switching.names)
    switching.send_back(2)  # (pathprof.measure.goback sends it back)
    switching.send_back(7)  # not a function that can stop
    switching.send_conditions_back(0)  # no conditions switch
    assert switching.names == before
    assert switching.sent_back == set()
    assert switching.switches == {0, 1, 2}


def test_a_loop_sent_back_stops_its_function_and_turns_only_its_switch() -> None:
    switching = _switching()
    switching.send_loop_back(0, 1)
    switching.send_loop_back(1, 0)  # function 1 has no such loop
    assert (switching.names["_@pp_j0_1"], switching.names["_@pp_j0_0"]) == (True, False)
    assert switching.loops_back == {(0, 1)}
    assert [switching.stopped(i) for i in range(3)] == [True, False, False]


@given(st.lists(st.sampled_from(["function 0", "function 1", "conditions 1", "loop 0",
                                 "loop 1", "swap"]), max_size=8))
def test_rearming_measures_everything_again_whatever_went_back(done: list[str]) -> None:
    switching = _switching()
    armed = dict(switching.names)

    def measured() -> None:
        pass

    instrumented = measured.__code__
    original = (lambda: None).__code__
    for step in done:
        kind, which = step.split(" ") if " " in step else (step, "")
        if kind == "function":
            switching.send_back(int(which))
        elif kind == "conditions":
            switching.send_conditions_back(int(which))
        elif kind == "loop":
            switching.send_loop_back(0, int(which))
        else:  # what pathprof.measure.goback does to a function of the swaps
            measured.__code__ = original
            switching.swapped.append((weakref.ref(measured), instrumented, original))
            switching.sent_back.add(2)
    switching.rearm()
    assert switching.names == armed
    assert measured.__code__ is instrumented
    assert (switching.sent_back, switching.loops_back, switching.swapped) == (set(), set(), [])
    assert not any(switching.stopped(i) for i in range(3))
