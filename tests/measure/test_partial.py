"""Unit tests of :mod:`pathprof.measure.partial`: one copy of a parallel run. The plan
of a copy is read from the environment variable :data:`~pathprof.measure.partial.ENVIRONMENT`
(absent or empty: not a copy; every way the plan can fail to be read is one
ValueError naming the variable); :meth:`CopyPlan.calls_only` gives the functions whose
calls only this copy counts (a module the plan does not know: profiled by copy 0,
counted by the others), :meth:`CopyPlan.shares` the split functions it holds part of,
and :meth:`CopyPlan.write_calls` writes its call counts, sorted, to a file of its own
beside the calls file. A property checks the module's invariant: every function is
profiled by exactly one copy."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pathprof.data.files import files_of
from pathprof.measure.partial import ENVIRONMENT, PLAN_FORMAT, CopyPlan, from_environment


def _write_plan(path: Path, **plan: object) -> str:
    path.write_text(json.dumps(plan), encoding="utf-8")
    return str(path)


def _environ(plan: str, index: int = 1, calls: str = "/tmp/calls.json",
             **more: object) -> dict[str, str]:
    return {ENVIRONMENT: json.dumps({"plan": plan, "index": index, "calls": calls, **more})}


def test_the_variable_and_the_plan_format_are_the_documented_ones() -> None:
    assert ENVIRONMENT == "PATHPROF_COPY"
    assert PLAN_FORMAT == 1


def test_no_variable_or_an_empty_one_is_not_a_copy() -> None:
    assert from_environment({}) is None
    assert from_environment({ENVIRONMENT: ""}) is None
    assert from_environment({"OTHER": "x"}) is None


def test_the_process_environment_is_read_by_default(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENVIRONMENT, raising=False)
    assert from_environment() is None
    plan = _write_plan(tmp_path / "plan.json", format=1, copies=2, owners={})
    monkeypatch.setenv(ENVIRONMENT, json.dumps({"plan": plan, "index": 1, "calls": "c"}))
    found = from_environment()
    assert found is not None
    assert (found.index, found.copies, found.calls_file) == (1, 2, "c")


def test_a_plan_is_read_with_its_owners_as_tuples(tmp_path: Path) -> None:
    split = {"tasks": [[0, 2], [1]], "copies": [0, 2]}
    plan = _write_plan(tmp_path / "plan.json", format=1, copies=3,
                       owners={"abc": [0, 1, split], "def": []})
    found = from_environment(_environ(plan, index=2, calls="/x/calls.json",
                                      data="/x/copy.pathprof"))
    assert found is not None
    assert found.index == 2
    assert found.copies == 3
    assert dict(found.owners) == {"abc": (0, 1, split), "def": ()}
    assert found.calls_file == "/x/calls.json"
    assert found.data_file == "/x/copy.pathprof"


def test_a_plan_without_a_data_file_has_none(tmp_path: Path) -> None:
    plan = _write_plan(tmp_path / "plan.json", format=1, copies=1, owners={})
    found = from_environment(_environ(plan, index=0))
    assert found is not None
    assert found.data_file is None


@pytest.mark.parametrize(("settings_text", "plan_text", "why"), [
    ("{not json", None, "Expecting property name"),
    ('{"index": 0, "calls": "c"}', None, "'plan'"),  # no plan named
    (None, None, "No such file"),  # the plan file is missing
    (None, '{"format": 2, "copies": 1, "owners": {}}', "plan format 2, not 1"),
    (None, '{"copies": 1, "owners": {}}', "plan format None, not 1"),
    (None, '{"format": 1, "owners": {}}', "'copies'"),
    (None, '{"format": 1, "copies": 1}', "'owners'"),
    (None, "[not a plan", "Expecting value"),
    (None, '{"format": 1, "copies": "two", "owners": {}}', "invalid literal"),
])
def test_a_plan_that_cannot_be_read_is_a_value_error_naming_the_variable(
        tmp_path: Path, settings_text: str | None, plan_text: str | None, why: str) -> None:
    plan = tmp_path / "plan.json"
    if plan_text is not None:
        plan.write_text(plan_text, encoding="utf-8")
    text = settings_text if settings_text is not None else json.dumps(
        {"plan": str(plan), "index": 0, "calls": "c"})
    with pytest.raises(ValueError, match=r"^PATHPROF_COPY: cannot read this copy's plan \(") as err:
        from_environment({ENVIRONMENT: text})
    assert why in str(err.value)


@pytest.mark.parametrize("plan_text", [
    "[1, 2]",
    '{"format": 1, "copies": 1, "owners": [0]}',
    '{"format": 1, "copies": 1, "owners": {"m": 0}}',  # a module's owners not a list
    '{"format": 1, "copies": 1, "owners": {"m": ["0"]}}',  # an owner neither copy nor split
    '{"format": 1, "copies": 1, "owners": {"m": [true]}}',
    '{"format": 1, "copies": 2, "owners": {"m": [{"copies": [0]}]}}',  # no tasks
    '{"format": 1, "copies": 2, "owners": {"m": [{"tasks": [[0]]}]}}',  # no copies
    '{"format": 1, "copies": 2, "owners": {"m": [{"tasks": [0], "copies": [0]}]}}',
    '{"format": 1, "copies": 2, "owners": {"m": [{"tasks": [[0]], "copies": ["0"]}]}}',
    '{"format": 1, "copies": 2, "owners": {"m": [{"tasks": [[0], [1]], "copies": [0]}]}}',
    '{"format": 1, "copies": true, "owners": {}}',
    "[" * 100_000 + "]" * 100_000,  # too deeply nested for the decoder
])
def test_a_plan_of_another_shape_is_a_value_error_naming_the_variable(
        tmp_path: Path, plan_text: str) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text(plan_text, encoding="utf-8")
    with pytest.raises(ValueError, match="PATHPROF_COPY: cannot read this copy's plan"):
        from_environment(_environ(str(plan), index=0))


@pytest.mark.parametrize("settings", [
    [1, 2],
    {"plan": 3, "index": 0, "calls": "c"},
    {"plan": "PLAN", "index": 0, "calls": 7},
    {"plan": "PLAN", "index": 0, "calls": "c", "data": ["d"]},
    {"plan": "PLAN", "index": "0", "calls": "c"},
    {"plan": "PLAN", "index": 0.5, "calls": "c"},
    {"plan": "PLAN", "index": None, "calls": "c"},
])
def test_settings_of_another_shape_are_a_value_error_naming_the_variable(
        tmp_path: Path, settings: object) -> None:
    plan = _write_plan(tmp_path / "plan.json", format=1, copies=1, owners={})
    text = json.dumps(settings).replace("PLAN", plan)
    with pytest.raises(ValueError, match="PATHPROF_COPY: cannot read this copy's plan"):
        from_environment({ENVIRONMENT: text})


def test_an_index_that_is_not_a_number_is_a_value_error(tmp_path: Path) -> None:
    plan = _write_plan(tmp_path / "plan.json", format=1, copies=1, owners={})
    with pytest.raises(ValueError, match="PATHPROF_COPY"):
        from_environment(_environ(plan, index="first"))  # type: ignore[arg-type]


def _plan(index: int, owners: dict[str, tuple[object, ...]], copies: int = 3) -> CopyPlan:
    return CopyPlan(index, copies, owners, "calls.json")  # type: ignore[arg-type]


def test_calls_only_are_the_functions_another_copy_profiles() -> None:
    owners = {"m": (0, 1, 2, 1)}
    assert set(_plan(0, owners).calls_only("m")) == {1, 2, 3}
    assert set(_plan(1, owners).calls_only("m")) == {0, 2}
    assert set(_plan(2, owners).calls_only("m")) == {0, 1, 3}


def test_a_split_function_is_counted_only_by_the_copies_holding_no_task_of_it() -> None:
    split = {"tasks": [[0], [1], [2]], "copies": [0, 2, 2]}
    owners = {"m": (1, split)}
    assert set(_plan(0, owners).calls_only("m")) == {0}  # holds a task of function 1
    assert set(_plan(1, owners).calls_only("m")) == {1}  # profiles 0, holds no task of 1
    assert set(_plan(2, owners).calls_only("m")) == {0}


def test_an_unknown_module_is_profiled_by_copy_0_and_counted_by_the_others() -> None:
    owners = {"known": (1,)}
    zero = _plan(0, owners).calls_only("unknown")
    assert 0 not in zero
    assert 10_000 not in zero
    other = _plan(2, owners).calls_only("unknown")
    assert 0 in other
    assert 10_000 in other
    assert "anything" in other  # every function, whatever the index


def test_a_module_of_no_functions_has_no_calls_only() -> None:
    assert set(_plan(1, {"m": ()}).calls_only("m")) == set()


def test_shares_are_the_split_functions_this_copy_holds_tasks_of() -> None:
    first = {"tasks": [[0, 1], [2]], "copies": [0, 1]}
    second = {"tasks": [[3], [4]], "copies": [2, 2]}
    owners = {"m": (0, first, second)}
    assert _plan(0, owners).shares("m") == {1: ([[0, 1], [2]], [0, 1], 0)}
    assert _plan(1, owners).shares("m") == {1: ([[0, 1], [2]], [0, 1], 1)}
    assert _plan(2, owners).shares("m") == {2: ([[3], [4]], [2, 2], 2)}


def test_a_module_the_plan_does_not_know_has_no_shares() -> None:
    assert _plan(0, {}).shares("unknown") == {}
    assert _plan(1, {"m": (0, 1)}).shares("m") == {}


def test_write_calls_writes_sorted_counts_beside_the_calls_file(tmp_path: Path) -> None:
    calls = str(tmp_path / "calls.json")
    plan = CopyPlan(1, 3, {}, calls)
    plan.write_calls({"b.py|g|3|h": 2, "a.py|f|1|h": 5})
    (written,) = files_of(calls, "copy")
    assert Path(written).name.startswith("calls.json.copy-1of3.")
    text = Path(written).read_text(encoding="utf-8")
    assert text == '{"a.py|f|1|h": 5, "b.py|g|3|h": 2}'
    assert not (tmp_path / "calls.json").exists()
    assert not list(tmp_path.glob("*.tmp"))  # built beside it and renamed


def test_a_later_save_of_the_process_replaces_its_calls(tmp_path: Path) -> None:
    calls = str(tmp_path / "calls.json")
    plan = CopyPlan(0, 2, {}, calls)
    plan.write_calls({"f": 1})
    plan.write_calls({"f": 4, "g": 0})
    (written,) = files_of(calls, "copy")
    assert json.loads(Path(written).read_text(encoding="utf-8")) == {"f": 4, "g": 0}


def test_no_calls_write_an_empty_object(tmp_path: Path) -> None:
    calls = str(tmp_path / "calls.json")
    CopyPlan(0, 1, {}, calls).write_calls({})
    (written,) = files_of(calls, "copy")
    assert Path(written).read_text(encoding="utf-8") == "{}"


_owner = st.one_of(
    st.integers(0, 3),
    st.lists(st.integers(0, 3), min_size=1, max_size=4).map(
        lambda copies: {"tasks": [[k] for k in range(len(copies))], "copies": copies}))


@settings(max_examples=50, deadline=None)
@given(st.lists(_owner, max_size=8))
def test_every_whole_function_is_profiled_by_exactly_one_copy(owners: list[object]) -> None:
    """Of 4 copies, exactly one leaves a whole function out of its calls-only set; a
    split function is left out by exactly the copies that hold one of its tasks, and
    those are the copies that have it among their shares."""
    plans = [_plan(k, {"m": tuple(owners)}, copies=4) for k in range(4)]
    for i, owner in enumerate(owners):
        profiling = {k for k, plan in enumerate(plans) if i not in plan.calls_only("m")}
        if isinstance(owner, dict):
            assert profiling == set(owner["copies"])
            assert profiling == {k for k, plan in enumerate(plans) if i in plan.shares("m")}
        else:
            assert profiling == {owner}
            assert all(i not in plan.shares("m") for plan in plans)
