"""Tests for pathprof.graph.p3: P3's plan of a program (Afraz, Saha and Kanade 2015,
§3.2, Algorithm 2 lines 1-22, with the threshold of §4.1) -- the threshold ``Δ``, the
LPT dealing of tasks to copies (Graham's 4/3 bound), each copy's instrumentation per
procedure (Ball-Larus, none, or PSPP on the union of its tasks' edges), the loads, and
the owner of each path. The property test checks the module's invariant: every path of
every procedure has exactly one owner, whose instrumentation holds it."""

from __future__ import annotations

import itertools
from collections.abc import Hashable
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pathprof.graph.cfg import Cfg, Dag, to_dag
from pathprof.graph.numbering import number_paths
from pathprof.graph.p3 import Instrumentation, Kind, Plan, assign, owner, plan_program, threshold
from pathprof.graph.partition import Task

from .oracle import all_dag_paths
from .strategies import cfgs


def three_ways() -> Dag:
    """ENTRY 0 -> 1, 2, 3 -> EXIT 4: dag edges 0: 0->1, 1: 0->2, 2: 0->3, 3: 1->4,
    4: 2->4, 5: 3->4 (three ways from ENTRY: no diamond to collapse)."""
    return to_dag(Cfg(5, 0, 4, [(0, 1), (0, 2), (0, 3), (1, 4), (2, 4), (3, 4)]))


# ---------------------------------------------------------------------------
# threshold


def test_the_threshold_is_entrys_out_degree_or_the_copies_whichever_is_larger() -> None:
    dag = three_ways()
    assert threshold(dag, 2) == 3
    assert threshold(dag, 3) == 3
    assert threshold(dag, 5) == 5
    straight = to_dag(Cfg(3, 0, 2, [(0, 1), (1, 2)]))
    assert threshold(straight, 1) == 1


# ---------------------------------------------------------------------------
# assign


def test_the_papers_example_5_is_dealt_largest_first() -> None:
    # 7 -> copy 0; 3 -> copy 1; 1 -> copy 1 (load 3 < 7); 1 -> copy 1 (4 < 7)
    assert assign([1, 1, 3, 7], 2) == (1, 1, 1, 0)


def test_equal_costs_keep_their_order_and_equal_loads_go_to_the_lowest_copy() -> None:
    # all 2: task 0 -> copy 0, task 1 -> copy 1, task 2 -> copy 0 (loads 2, 2: lowest)
    assert assign([2, 2, 2], 2) == (0, 1, 0)
    assert assign([5, 5], 3) == (0, 1)


def test_no_tasks_deal_nothing_and_one_copy_takes_everything() -> None:
    assert assign([], 4) == ()
    assert assign([3, 1, 2], 1) == (0, 0, 0)


def test_fewer_than_one_copy_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one copy"):
        assign([1], 0)
    with pytest.raises(ValueError, match="at least one copy"):
        assign([], -1)


def _optimum(costs: list[int], copies: int) -> int:
    """The least largest load over every assignment, by brute force."""
    best = sum(costs)
    for choice in itertools.product(range(copies), repeat=len(costs)):
        loads = [0] * copies
        for cost, copy in zip(costs, choice, strict=True):
            loads[copy] += cost
        best = min(best, max(loads))
    return best


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=20), max_size=6),
       st.integers(min_value=1, max_value=3))
def test_the_largest_load_is_within_grahams_bound(costs: list[int], copies: int) -> None:
    dealt = assign(costs, copies)
    assert len(dealt) == len(costs)
    assert all(0 <= copy < copies for copy in dealt)
    loads = [0] * copies
    for cost, copy in zip(costs, dealt, strict=True):
        loads[copy] += cost
    bound = Fraction(4, 3) - Fraction(1, 3 * copies)
    assert max(loads, default=0) <= bound * _optimum(costs, copies)


# ---------------------------------------------------------------------------
# plan_program, worked by hand


def test_a_plan_of_a_split_procedure_and_one_called_from_two_sites() -> None:
    dag = three_ways()
    plan = plan_program({"f": dag, "g": dag}, {"f": 1, "g": 2}, 2)
    assert plan.copies == 2
    assert plan.dags == {"f": dag, "g": dag}
    # f (one call site) splits in Δ = 3 tasks, one path each, one probe each; g (two
    # call sites) is one whole task costed as Ball-Larus
    assert [(t.procedure, sorted(t.task.edges), t.task.cost, t.task.whole)
            for t in plan.tasks] == [("f", [0, 3], 1, False), ("f", [1, 4], 1, False),
                                     ("f", [2, 5], 1, False), ("g", list(range(6)), 2, True)]
    # LPT on costs 1, 1, 1, 2: g -> 0; f's first -> 1; f's second -> 1 (load 1 < 2);
    # f's third: loads 2, 2 -> copy 0
    assert [t.copy for t in plan.tasks] == [1, 1, 0, 0]
    assert plan.loads == (3, 2)
    assert plan.instrumentation[0] == {
        "f": Instrumentation(Kind.PSPP, frozenset({2, 5})),
        "g": Instrumentation(Kind.ALL, frozenset(range(6)))}
    assert plan.instrumentation[1] == {
        "f": Instrumentation(Kind.PSPP, frozenset({0, 1, 3, 4})),
        "g": Instrumentation(Kind.NONE, frozenset())}
    assert plan.profitable == frozenset({"f"})
    assert [sorted(t.task.edges) for t in plan.tasks_of("f")] == [[0, 3], [1, 4], [2, 5]]
    assert [t.task.whole for t in plan.tasks_of("g")] == [True]


def test_the_owner_of_a_path_is_the_copy_of_the_task_that_holds_it() -> None:
    dag = three_ways()
    plan = plan_program({"f": dag, "g": dag}, {"f": 1, "g": 2}, 2)
    assert owner(plan, "f", [0, 3]) == 1
    assert owner(plan, "f", (1, 4)) == 1
    assert owner(plan, "f", {2, 5}) == 0
    assert owner(plan, "g", [1, 4]) == 0  # g's whole task went to copy 0
    with pytest.raises(ValueError, match=r"edges \[0, 4\] are not a path of procedure 'f'"):
        owner(plan, "f", [0, 4])


def test_a_given_delta_replaces_the_threshold() -> None:
    dag = three_ways()
    one = plan_program({"f": dag}, {"f": 1}, 3, delta=1)
    assert [t.task.whole for t in one.tasks] == [True]
    assert one.profitable == frozenset()
    # with one task, the copy that has it profiles everything, the others nothing
    kinds = [one.instrumentation[c]["f"].kind for c in range(3)]
    assert kinds == [Kind.ALL, Kind.NONE, Kind.NONE]
    two = plan_program({"f": dag}, {"f": 1}, 3, delta=2)
    assert len(two.tasks) == 2


def test_a_cost_of_its_own_deals_the_tasks_and_makes_the_loads() -> None:
    dag = three_ways()
    seen: list[tuple[Hashable, Task]] = []

    def cost(procedure: Hashable, task: Task) -> int:
        seen.append((procedure, task))
        return 10 * min(task.edges)  # tasks holding edges 0, 1, 2 cost 0, 10, 20

    plan = plan_program({"f": dag}, {"f": 1}, 2, cost=cost)
    assert [p for p, _task in seen] == ["f", "f", "f"]
    # LPT on 0, 10, 20: 20 -> copy 0, 10 -> copy 1, 0 -> copy 1 (load 10 < 20)
    assert [t.copy for t in plan.tasks] == [1, 1, 0]
    assert plan.loads == (20, 10)


def test_an_empty_program_is_an_empty_plan() -> None:
    plan = plan_program({}, {}, 2)
    assert plan.tasks == ()
    assert plan.loads == (0, 0)
    assert plan.instrumentation == ({}, {})
    assert plan.profitable == frozenset()


def test_the_plans_arguments_are_checked() -> None:
    dag = three_ways()
    with pytest.raises(ValueError, match="at least one copy"):
        plan_program({"f": dag}, {"f": 1}, 0)
    with pytest.raises(ValueError, match=r"no caller count for procedures \['g'\]"):
        plan_program({"f": dag, "g": dag}, {"f": 1}, 2)
    with pytest.raises(ValueError, match="threshold must be at least 1"):
        plan_program({"f": dag}, {"f": 1}, 2, delta=0)


def test_a_delta_below_one_is_refused_whatever_the_procedures() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        plan_program({"g": three_ways()}, {"g": 2}, 2, delta=0)
    with pytest.raises(ValueError, match="at least 1"):
        plan_program({}, {}, 2, delta=0)  # no procedure at all
    with pytest.raises(ValueError, match="at least 1"):
        plan_program({"g": three_ways()}, {"g": 2}, 2, delta=-1)


# ---------------------------------------------------------------------------
# The invariant, on random programs


@st.composite
def programs(draw: st.DrawFn) -> tuple[dict[str, Dag], dict[str, int], int, int | None]:
    names = ["f", "g", "h"][: draw(st.integers(min_value=1, max_value=3))]
    dags = {}
    for name in names:
        dag = to_dag(draw(cfgs()))
        if number_paths(dag).total > 200:
            dag = three_ways()
        dags[name] = dag
    callers = {name: draw(st.integers(min_value=0, max_value=3)) for name in names}
    copies = draw(st.integers(min_value=1, max_value=4))
    delta = draw(st.none() | st.integers(min_value=1, max_value=6))
    return dags, callers, copies, delta


def _check_plan(plan: Plan, dags: dict[str, Dag], callers: dict[str, int]) -> None:
    loads = [0] * plan.copies
    for planned in plan.tasks:
        loads[planned.copy] += planned.task.cost
    assert plan.loads == tuple(loads)
    for name, dag in dags.items():
        tasks = plan.tasks_of(name)
        if callers[name] > 1:
            assert [t.task.whole for t in tasks] == [True]
        for copy in range(plan.copies):
            mine = frozenset().union(*(t.task.edges for t in tasks if t.copy == copy))
            instrumentation = plan.instrumentation[copy][name]
            assert instrumentation.edges == mine
            expected = (Kind.NONE if not mine else
                        Kind.ALL if mine == frozenset(range(len(dag.edges))) else Kind.PSPP)
            assert instrumentation.kind is expected
        for path in all_dag_paths(dag):
            holding = [t for t in tasks if set(path) <= t.task.edges]
            assert len(holding) == 1  # exactly one owner
            copy = owner(plan, name, path)
            assert copy == holding[0].copy
            assert set(path) <= plan.instrumentation[copy][name].edges


@settings(max_examples=50, deadline=None)
@given(programs())
def test_every_path_has_exactly_one_owner_that_profiles_it(
        program: tuple[dict[str, Dag], dict[str, int], int, int | None]) -> None:
    dags, callers, copies, delta = program
    plan = plan_program(dags, callers, copies, delta=delta)
    _check_plan(plan, dags, callers)
