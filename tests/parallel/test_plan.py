"""Unit tests of :mod:`pathprof.parallel.plan`: which copy of a parallel run profiles
which paths. :func:`plan_copies` over small source files: every function gets an owner
(a copy, or tasks dealt to copies for a function split among them), a file that cannot
be read or parsed is not planned, a source read twice is planned once, the plan depends
only on the files' contents and the number of copies, a function called from one
place is split where it pays (and never without ``partition``), an earlier profile
splits the hot function whatever its call sites; each split function's paths lie in
exactly one task (the module's invariant); :func:`call_sites` counts calls by the name
they call; :class:`CopiesPlan` writes the JSON a copy reads
(:mod:`pathprof.measure.partial`)."""

from __future__ import annotations

import ast
import hashlib
import json
import textwrap
from pathlib import Path

import pytest

from pathprof.data.profile import FunctionProfile
from pathprof.graph import iter_paths, number_paths, to_dag
from pathprof.measure.partial import PLAN_FORMAT
from pathprof.parallel.plan import CopiesPlan, call_sites, plan_copies
from pathprof.python.cfg import build_cfg, iter_functions
from pathprof.python.instrument import instrument_source

# grade: a chain of four ifs that return, 5 paths; called from one place.
ONCE = textwrap.dedent('''\
    def grade(score):
        if score >= 90:
            return "A"
        if score >= 60:
            return "B"
        if score >= 30:
            return "C"
        if score >= 10:
            return "E"
        return "D"


    print(grade(1))
''')
# grade: 4 paths, called from two places; once: 1 path.
TWICE = textwrap.dedent('''\
    def grade(score):
        if score >= 90:
            return "A"
        if score >= 60:
            return "B"
        if score >= 30:
            return "C"
        return "D"


    def once(xs):
        return len(xs)


    print(grade(1), grade(2), once([]))
''')


def _file(directory: Path, name: str, text: str) -> str:
    path = directory / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def _check_split(text: str, owners: tuple[object, ...], copies: int) -> None:
    """Each path of each split function lies in exactly one of its tasks."""
    dags = [to_dag(build_cfg(node, name).to_graph())
            for node, name in iter_functions(ast.parse(text))]
    for dag, owner in zip(dags, owners, strict=True):
        if not isinstance(owner, dict):
            continue
        assert len(owner["tasks"]) == len(owner["copies"])
        assert all(0 <= copy < copies for copy in owner["copies"])
        tasks = [frozenset(task) for task in owner["tasks"]]
        for path in iter_paths(number_paths(dag)):
            assert sum(set(path.edges) <= task for task in tasks) == 1


def test_at_least_one_copy() -> None:
    with pytest.raises(ValueError, match="copies must be at least 1, not 0"):
        plan_copies([], 0)


def test_no_files_plan_nothing() -> None:
    plan = plan_copies([], 3)
    assert (plan.copies, plan.owners, plan.files, plan.loads) == (3, {}, {}, (0, 0, 0))
    assert plan.split() == 0


def test_one_copy_profiles_everything(tmp_path: Path) -> None:
    file = _file(tmp_path, "twice.py", TWICE)
    plan = plan_copies([file], 1)
    assert plan.owners == {_digest(TWICE): (0, 0)}
    assert plan.files == {_digest(TWICE): file}
    assert len(plan.loads) == 1


def test_a_function_called_from_one_place_is_split_where_it_pays(tmp_path: Path) -> None:
    file = _file(tmp_path, "once.py", ONCE)
    plan = plan_copies([file], 3)
    (owner,) = plan.owners[_digest(ONCE)]
    assert isinstance(owner, dict)
    assert sorted(owner["copies"]) == [0, 1, 2]  # one task per copy
    assert plan.split() == 1
    _check_split(ONCE, plan.owners[_digest(ONCE)], 3)


def test_without_partition_every_function_is_whole(tmp_path: Path) -> None:
    file = _file(tmp_path, "once.py", ONCE)
    plan = plan_copies([file], 3, partition=False)
    (owner,) = plan.owners[_digest(ONCE)]
    assert isinstance(owner, int)
    assert plan.split() == 0
    # one whole task: its copy carries all the load, the others none
    assert sorted(plan.loads)[:2] == [0, 0]
    assert plan.loads[owner] > 0


def test_a_function_called_from_two_places_is_whole(tmp_path: Path) -> None:
    file = _file(tmp_path, "twice.py", TWICE)
    plan = plan_copies([file], 3)
    owners = plan.owners[_digest(TWICE)]
    assert all(isinstance(owner, int) and 0 <= owner < 3 for owner in owners)
    assert plan.split() == 0


def test_an_earlier_profile_splits_the_hot_function(tmp_path: Path) -> None:
    file = _file(tmp_path, "twice.py", TWICE)
    info = instrument_source(TWICE, file).metadata
    profile = []
    for meta in info.functions:
        fn = FunctionProfile(file, meta.qualname, meta.code_line, info.source_hash, meta)
        # grade ran each of its 4 paths 1000 times, once ran once: grade outweighs
        # a copy's share (a third of the total)
        fn.counts = ({n: 1000 for n in range(meta.num_paths)} if meta.qualname == "grade"
                     else {0: 1})
        profile.append(fn)
    plan = plan_copies([file], 3, profile=profile)
    grade, once = plan.owners[_digest(TWICE)]
    assert isinstance(grade, dict)  # split, though called from two places
    assert isinstance(once, int)
    _check_split(TWICE, plan.owners[_digest(TWICE)], 3)
    assert not isinstance(plan_copies([file], 3, profile=profile,
                                      partition=False).owners[_digest(TWICE)][0], dict)


def test_a_profile_of_other_code_changes_nothing(tmp_path: Path) -> None:
    file = _file(tmp_path, "twice.py", TWICE)
    stranger = FunctionProfile(file, "grade", 1, "0" * 32, None)  # another version
    stranger.counts = {0: 10 ** 6}
    plan = plan_copies([file], 3, profile=[stranger])
    assert plan.split() == 0


def test_files_that_cannot_be_read_or_parsed_are_not_planned(tmp_path: Path) -> None:
    good = _file(tmp_path, "twice.py", TWICE)
    broken = _file(tmp_path, "broken.py", "def f(:\n")
    plan = plan_copies([str(tmp_path / "missing.py"), broken, str(tmp_path), good], 2)
    assert list(plan.owners) == [_digest(TWICE)]
    assert plan.files == {_digest(TWICE): good}


def test_a_source_read_twice_is_planned_once(tmp_path: Path) -> None:
    first = _file(tmp_path, "a.py", TWICE)
    _file(tmp_path, "b.py", TWICE)
    plan = plan_copies([first, str(tmp_path / "b.py")], 2)
    assert plan.files == {_digest(TWICE): first}
    assert len(plan.owners[_digest(TWICE)]) == 2


def test_the_plan_depends_only_on_the_contents_and_the_copies(tmp_path: Path) -> None:
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    here = [_file(tmp_path / "one", "once.py", ONCE), _file(tmp_path / "one", "t.py", TWICE)]
    there = [_file(tmp_path / "two", "x.py", ONCE), _file(tmp_path / "two", "y.py", TWICE)]
    first, again, elsewhere = (plan_copies(here, 4), plan_copies(here, 4),
                               plan_copies(there, 4))
    assert first == again
    assert first.owners == elsewhere.owners
    assert first.loads == elsewhere.loads


def test_a_module_without_functions_has_no_owners(tmp_path: Path) -> None:
    file = _file(tmp_path, "flat.py", "x = 1\nprint(x)\n")
    assert plan_copies([file], 2).owners == {_digest("x = 1\nprint(x)\n"): ()}


def test_call_sites_count_calls_by_the_name_they_call() -> None:
    trees = [ast.parse("f(1)\nobj.f(2)\ng()\nh = f\n"), ast.parse("m.n.g(f(3))\n(lambda: 0)()\n")]
    assert call_sites(trees) == {"f": 3, "g": 2}
    assert call_sites([]) == {}


def test_the_plan_is_written_as_the_json_a_copy_reads(tmp_path: Path) -> None:
    split = {"tasks": [[0, 1], [0, 2]], "copies": [1, 0]}
    plan = CopiesPlan(2, {"abc": (0, split, 1)}, {"abc": "/src/m.py"}, (5, 3))
    assert plan.to_json() == {"format": PLAN_FORMAT, "copies": 2,
                              "owners": {"abc": [0, split, 1]},
                              "files": {"abc": "/src/m.py"}, "loads": [5, 3]}
    assert plan.split() == 1
    target = tmp_path / "plan.json"
    plan.write(str(target))
    assert json.loads(target.read_text(encoding="utf-8")) == plan.to_json()
