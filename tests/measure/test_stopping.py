"""Unit tests of :mod:`pathprof.measure.stopping`: when a function goes back to its
original code. :func:`decision_done` (every vector ran, or MC/DC shown for each
condition), what one function's first runs show (``_Function``: ``"paths"`` needs every
path, ``"basis"`` paths that span the basis; loops whose hidden paths have nothing more
to tell), and :class:`StopCounting` hearing first runs and turning a module's real
:class:`~pathprof.runtime.switching.Switching` switches. The functions are planned from
small sources whose paths are counted by hand; the module state is a stand-in holding
the contract and the switches (no module is registered with the runtime)."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field

import pytest

from pathprof import runtime
from pathprof.contract import DecisionInfo, ModuleInfo
from pathprof.measure.stopping import WHEN, StopCounting, _Function, decision_done
from pathprof.python.instrument import instrument_source
from pathprof.runtime import stopping as runtime_stopping
from pathprof.runtime.switching import Switching

# two_ifs: two if statements one after the other: 4 paths (TT, TF, FT, FF), and their
# edge vectors have one relation, TT + FF = TF + FT: any 3 distinct paths span the
# basis, of dimension 3. one_if: 2 paths. either: ``(a and b) or c``, one decision
# of 5 evaluation vectors (F-F, F-T, TFF, TFT, TT-) counted at slots 0..4, on 2 paths.
SOURCE = textwrap.dedent('''\
    def two_ifs(a, b):
        x = 0
        if a:
            x = 1
        if b:
            x += 2
        return x


    def one_if(a):
        if a:
            return 1
        return 0


    def either(a, b, c):
        if (a and b) or c:
            return 1
        return 0
''')
TWO_IFS, ONE_IF, EITHER = 0, 1, 2


@pytest.fixture(scope="module")
def info() -> ModuleInfo:
    metadata = instrument_source(SOURCE, "stopping_subject.py", conditions=True,
                                 switches=True).metadata
    assert [f.qualname for f in metadata.functions] == ["two_ifs", "one_if", "either"]
    assert [f.num_paths for f in metadata.functions] == [4, 2, 2]
    return metadata


def _decision(info: ModuleInfo) -> DecisionInfo:
    (decision,) = info.functions[EITHER].decisions
    assert (decision.slot, decision.vectors) == (0, 5)
    return decision


# -- decision_done -------------------------------------------------------------------


def test_a_decision_is_done_once_every_vector_ran(info: ModuleInfo) -> None:
    assert decision_done(_decision(info), {0, 1, 2, 3, 4})


def test_mcdc_shown_for_every_condition_is_done_without_every_vector(info: ModuleInfo) -> None:
    # a: TT- (4) vs F-F (0); b: TT- (4) vs TFF (2); c: F-F (0) vs F-T (1): each a
    # unique-cause pair (the others held, or skipped in one of the two)
    assert decision_done(_decision(info), {0, 1, 2, 4})


def test_a_condition_with_no_pair_keeps_the_decision_going(info: ModuleInfo) -> None:
    assert not decision_done(_decision(info), {0, 2, 4})  # c never changed the outcome
    assert not decision_done(_decision(info), {3, 4})  # no pair for a, b or c


def test_fewer_than_two_vectors_tell_nothing(info: ModuleInfo) -> None:
    assert not decision_done(_decision(info), set())
    assert not decision_done(_decision(info), {4})


def test_a_decision_of_one_vector_is_done_by_it(info: ModuleInfo) -> None:
    one = _decision(info)._replace(vectors=1)
    assert decision_done(one, {0})
    assert not decision_done(one, set())


# -- one function's first runs -------------------------------------------------------


def test_with_paths_every_path_must_run(info: ModuleInfo) -> None:
    function = _Function(info.functions[TWO_IFS], "paths")
    assert function.add(0) == (False, [])
    assert function.add(3) == (False, [])
    assert function.add(1) == (False, [])
    assert function.add(2) == (True, [])


@pytest.mark.parametrize("order", [(0, 1, 2), (3, 2, 1), (1, 3, 0), (2, 0, 3)])
def test_with_basis_any_three_paths_of_two_ifs_span_it(info: ModuleInfo,
                                                       order: tuple[int, int, int]) -> None:
    function = _Function(info.functions[TWO_IFS], "basis")
    first, second, third = order
    assert function.add(first) == (False, [])
    assert function.add(second) == (False, [])
    assert function.add(third) == (True, [])
    assert function.basis is not None
    assert function.basis.rank == 3


def test_a_path_reported_again_changes_nothing_and_says_whether_it_is_complete(
        info: ModuleInfo) -> None:
    function = _Function(info.functions[TWO_IFS], "basis")
    assert function.add(2) == (False, [])
    assert function.add(2) == (False, [])
    assert function.numbers == {2}
    function.add(0)
    function.add(1)
    assert function.add(0) == (True, [])  # complete already: still complete


def test_a_number_no_path_has_is_ignored(info: ModuleInfo) -> None:
    function = _Function(info.functions[ONE_IF], "basis")
    assert function.add(-1) == (False, [])
    assert function.add(2) == (False, [])  # 2 paths: numbers 0 and 1
    assert function.numbers == set()


@pytest.mark.parametrize("when", ["basis", "paths"])
def test_a_function_of_two_paths_needs_both_and_no_numbering(info: ModuleInfo,
                                                             when: str) -> None:
    function = _Function(info.functions[ONE_IF], when)
    assert function.add(1) == (False, [])
    assert function.add(1) == (False, [])
    assert function.add(0) == (True, [])
    assert function.basis is None


def test_with_paths_a_loop_is_known_once_each_of_its_hidden_paths_ran(
        info: ModuleInfo) -> None:
    # a loop whose hidden paths are numbers 1 and 2 (the range (1, 2)); spanned by them
    loop = (((1, 2),), (1, 2))
    function = _Function(info.functions[TWO_IFS], "paths", (loop,))
    assert function.add(0) == (False, [])  # not hidden
    assert function.add(1) == (False, [])
    assert function.add(1) == (False, [])  # again: not a second hidden path
    assert function.add(2) == (False, [0])
    assert function.loops == {}  # told once
    assert function.add(3) == (True, [])


def test_with_basis_a_loop_is_known_once_its_spanning_paths_are_spanned(
        info: ModuleInfo) -> None:
    first = (((0, 2),), (0, 1))
    second = (((2, 1),), (2,))
    function = _Function(info.functions[TWO_IFS], "basis", (first, second))
    assert function.add(0) == (False, [])
    assert function.add(1) == (False, [0])
    assert function.add(3) == (True, [1])  # the basis is full: it spans path 2 too
    assert function.loops == {}


# -- decision vectors ------------------------------------------------------------------


def test_only_decisions_of_counted_vectors_are_followed(info: ModuleInfo) -> None:
    # two_ifs' tests are single conditions whose branches count them (slot -1)
    assert _Function(info.functions[TWO_IFS], "basis").decisions == {}
    assert _Function(info.functions[EITHER], "basis").decisions == {0: set()}


def test_the_decisions_are_done_once_mcdc_is_shown(info: ModuleInfo) -> None:
    function = _Function(info.functions[EITHER], "paths")
    assert not function.add_vector(4)
    assert not function.add_vector(0)
    assert not function.add_vector(2)
    assert function.decisions == {0: {0, 2, 4}}
    assert function.add_vector(1)
    assert function.decisions == {}


def test_a_vector_slot_of_no_decision_is_ignored(info: ModuleInfo) -> None:
    function = _Function(info.functions[EITHER], "paths")
    assert not function.add_vector(5)
    assert function.decisions == {0: set()}


# -- StopCounting ----------------------------------------------------------------------


@dataclass
class _State:
    """What StopCounting reads of a module's state: its contract and its switches."""

    meta: ModuleInfo
    switching: Switching
    rearmed: list[int] = field(default_factory=list)

    def rearm(self) -> None:
        self.rearmed.append(1)
        self.switching.rearm()


def _state(info: ModuleInfo, loops: tuple[tuple[int, tuple[object, ...]], ...] = ()
           ) -> _State:
    names: dict[str, object] = {"_@pp_i0": True, "_@pp_i1": True, "_@pp_i2": True,
                                "_@pp_k2": True}
    return _State(info, Switching(names, (0, 1, 2), (), loops))  # type: ignore[arg-type]


@pytest.fixture
def no_watcher(monkeypatch: pytest.MonkeyPatch) -> None:
    """The runtime's watcher and module list as they were, whatever the test sets."""
    monkeypatch.setattr(runtime_stopping, "watcher", None)


@pytest.mark.parametrize("when", ["never", "always", ""])
def test_stop_counting_when_must_be_basis_or_paths(when: str) -> None:
    with pytest.raises(ValueError, match="stop counting when: basis, paths, not"):
        StopCounting(when)


def test_when_is_never_basis_or_paths() -> None:
    assert WHEN == ("never", "basis", "paths")
    assert StopCounting("paths").when == "paths"


def test_a_function_goes_back_once_its_basis_is_spanned(info: ModuleInfo) -> None:
    state = _state(info)
    watcher = StopCounting("basis")
    watcher.seen(state, TWO_IFS, 0)  # type: ignore[arg-type]
    watcher.seen(state, TWO_IFS, 3)  # type: ignore[arg-type]
    assert state.switching.sent_back == set()
    assert state.switching.names["_@pp_i0"] is True
    watcher.seen(state, TWO_IFS, 1)  # type: ignore[arg-type]
    assert state.switching.sent_back == {TWO_IFS}
    assert state.switching.names["_@pp_i0"] is False
    assert state.switching.names["_@pp_i1"] is True  # the others still measured


def test_with_paths_a_function_goes_back_only_after_every_path(info: ModuleInfo) -> None:
    state = _state(info)
    watcher = StopCounting("paths")
    for number in (0, 3, 1):
        watcher.seen(state, TWO_IFS, number)  # type: ignore[arg-type]
    assert state.switching.sent_back == set()
    watcher.seen(state, TWO_IFS, 2)  # type: ignore[arg-type]
    assert state.switching.sent_back == {TWO_IFS}


def test_functions_are_followed_apart(info: ModuleInfo) -> None:
    state = _state(info)
    watcher = StopCounting("basis")
    watcher.seen(state, ONE_IF, 0)  # type: ignore[arg-type]
    watcher.seen(state, TWO_IFS, 1)  # type: ignore[arg-type]
    assert state.switching.sent_back == set()
    watcher.seen(state, ONE_IF, 1)  # type: ignore[arg-type]
    assert state.switching.sent_back == {ONE_IF}


def test_a_negative_number_is_a_vector_and_sends_the_conditions_back(info: ModuleInfo) -> None:
    state = _state(info)
    watcher = StopCounting("basis")
    for slot in (4, 0, 2):
        watcher.seen(state, EITHER, -1 - slot)  # type: ignore[arg-type]
    assert state.switching.names["_@pp_k2"] is True
    watcher.seen(state, EITHER, -1 - 1)  # type: ignore[arg-type]
    assert state.switching.names["_@pp_k2"] is False
    assert state.switching.sent_back == set()  # its paths still count


def test_a_loop_whose_hidden_paths_ran_goes_back_alone(info: ModuleInfo) -> None:
    loops = ((TWO_IFS, ((((1, 1),), (1,)),)),)
    state = _state(info, loops)
    state.switching.names["_@pp_j0_0"] = False
    watcher = StopCounting("paths")
    watcher.seen(state, TWO_IFS, 1)  # type: ignore[arg-type]
    assert state.switching.loops_back == {(TWO_IFS, 0)}
    assert state.switching.names["_@pp_j0_0"] is True
    assert state.switching.sent_back == set()


def test_start_listens_and_rearms_every_module_and_stop_lets_go(
        info: ModuleInfo, monkeypatch: pytest.MonkeyPatch, no_watcher: None) -> None:
    state = _state(info)
    monkeypatch.setattr(runtime, "modules", lambda: [state])
    watcher = StopCounting("basis")
    watcher.start()
    assert runtime_stopping.watcher is watcher
    assert state.rearmed == [1]
    watcher.seen(state, ONE_IF, 0)  # type: ignore[arg-type]
    watcher.seen(state, ONE_IF, 1)  # type: ignore[arg-type]
    assert state.switching.names["_@pp_i1"] is False
    watcher.stop()
    assert runtime_stopping.watcher is None
    watcher.start()  # afresh: measured again, and what was seen is forgotten
    assert state.rearmed == [1, 1]
    assert state.switching.names["_@pp_i1"] is True
    watcher.seen(state, ONE_IF, 1)  # type: ignore[arg-type]
    assert state.switching.sent_back == set()
    watcher.stop()


def test_stop_leaves_another_watcher_in_place(monkeypatch: pytest.MonkeyPatch,
                                              no_watcher: None) -> None:
    other = StopCounting("paths")
    monkeypatch.setattr(runtime_stopping, "watcher", other)
    StopCounting("basis").stop()
    assert runtime_stopping.watcher is other


def test_a_report_while_another_drains_waits_in_the_queue(info: ModuleInfo) -> None:
    state = _state(info)
    watcher = StopCounting("basis")
    watcher._draining = True  # another thread is at work
    watcher.seen(state, ONE_IF, 0)  # type: ignore[arg-type]
    watcher.seen(state, ONE_IF, 1)  # type: ignore[arg-type]
    assert state.switching.sent_back == set()
    assert len(watcher._queue) == 2
    watcher._draining = False
    watcher.seen(state, TWO_IFS, 0)  # type: ignore[arg-type]
    assert watcher._queue == []
    assert state.switching.sent_back == {ONE_IF}

