"""Tests for pathprof.analysis.pathdiff: the differences between two path profiles --
functions matched by file and qualified name, paths by number when the source is the
same and by shape (start, end, per block the line offset from the ``def`` and the
branch taken) when it changed; paths that appeared, vanished or changed by more than
the threshold, ``min_count`` filtering, the order of each list, functions only in one
profile, and the invariant that every path that ran in either profile is in exactly
one of appeared, vanished, changed or unchanged (a property test)."""

from __future__ import annotations

import math
import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pathprof.analysis.pathdiff import FunctionDiff, PathChange, ProfileDiff, diff_profiles
from pathprof.data.measurement import Measurement
from pathprof.data.profile import FunctionProfile, Path
from pathprof.python.instrument import instrument_source

FILE = "/project/subject.py"
TWO = textwrap.dedent('''\
    def two(a, b):
        x = 0
        if a:
            x += 1
        if b:
            x += 2
        return x


    def other(x):
        return x
    ''')
# two's paths: 0 = a and b true, 1 = a true b false, 2 = a false b true, 3 = both false
# (blocks: 2 `x = 0; if a`, 3 `x += 1`, 4 `if b`, 5 `x += 2`, 6 `return x`)
#: the same functions two lines further down: another source hash, the same shapes
MOVED = "import os\nimport sys\n" + TWO
#: a statement added before the tests of `two`: the lines of every block after it move
EDITED = TWO.replace("    x = 0\n", "    x = 0\n    y = 1\n", 1)


def profiles(source: str, counts: dict[str, dict[int, int]], file: str = FILE
             ) -> list[FunctionProfile]:
    module = instrument_source(source, file).metadata
    result = []
    for meta in module.functions:
        fn = FunctionProfile(file, meta.qualname, meta.code_line, module.source_hash, meta)
        fn.counts = dict(counts.get(meta.qualname, {}))
        result.append(fn)
    return result


def measurement(source: str = TWO, file: str = FILE, **counts: dict[int, int]
                ) -> Measurement:
    return Measurement(functions=profiles(source, counts, file))


def ids(changes: list[PathChange]) -> list[tuple[object, int, int]]:
    return [(c.path.id, c.old, c.new) for c in changes]


def only(diff: ProfileDiff, name: str = "two") -> FunctionDiff:
    (found,) = [f for f in diff.functions if f.qualname == name]
    return found


def test_paths_that_appear_vanish_and_change_on_the_same_source() -> None:
    old = measurement(two={0: 10, 1: 5, 2: 3})
    new = measurement(two={0: 10, 1: 8, 3: 4})
    diff = diff_profiles(old, new)
    two = only(diff)
    assert not two.source_changed
    assert ids(two.appeared) == [(3, 0, 4)]
    assert ids(two.vanished) == [(2, 3, 0)]
    assert ids(two.changed) == [(1, 5, 8)]  # +60% > 10%
    assert two.unchanged == 1  # path 0
    assert two.differs
    assert diff.differs
    assert two.file == FILE
    assert two.first_line == 1
    assert two.profile is new.functions[0]
    assert diff.threshold == 0.1


def test_a_change_within_the_threshold_is_unchanged() -> None:
    old = measurement(two={0: 100})
    # +10% exactly is not more than the threshold; +11% is
    assert only(diff_profiles(old, measurement(two={0: 110}))).unchanged == 1
    assert ids(only(diff_profiles(old, measurement(two={0: 111}))).changed) == [(0, 100, 111)]
    # a fall counts as a move too
    assert ids(only(diff_profiles(old, measurement(two={0: 89}))).changed) == [(0, 100, 89)]
    assert only(diff_profiles(old, measurement(two={0: 200}), threshold=1.0)).unchanged == 1


def test_identical_profiles_do_not_differ() -> None:
    diff = diff_profiles(measurement(two={0: 1, 3: 2}), measurement(two={0: 1, 3: 2}))
    assert not diff.differs
    assert [(f.qualname, f.unchanged, f.differs) for f in diff.functions] == [
        ("other", 0, False), ("two", 2, False)]
    assert diff.new_functions == diff.gone_functions == []


def test_paths_below_min_count_in_both_are_ignored() -> None:
    old = measurement(two={0: 10, 1: 5, 2: 3})
    new = measurement(two={0: 10, 1: 8, 3: 4})
    two = only(diff_profiles(old, new, min_count=5))
    # path 3 (4 runs) and path 2 (3 runs) stay below 5: unchanged; path 1 went to 8
    assert (two.appeared, two.vanished) == ([], [])
    assert ids(two.changed) == [(1, 5, 8)]
    assert two.unchanged == 3
    # a move from below to above min_count is a change
    moved = only(diff_profiles(measurement(two={0: 2}), measurement(two={0: 9}), min_count=5))
    assert ids(moved.changed) == [(0, 2, 9)]


def test_each_list_is_sorted_by_the_size_of_its_change() -> None:
    old = measurement(two={0: 1, 1: 1, 2: 50, 3: 7})
    new = measurement(two={0: 30, 1: 100})
    two = only(diff_profiles(old, new))
    assert ids(two.changed) == [(1, 1, 100), (0, 1, 30)]
    assert ids(two.vanished) == [(2, 50, 0), (3, 7, 0)]
    appeared = only(diff_profiles(measurement(two={}), measurement(two={0: 2, 3: 9, 1: 5})))
    assert ids(appeared.appeared) == [(3, 0, 9), (1, 0, 5), (0, 0, 2)]


def test_a_vanished_path_is_decoded_from_the_old_profile() -> None:
    two = only(diff_profiles(measurement(two={3: 4}), measurement(two={0: 1})))
    (gone,) = two.vanished
    assert gone.path.blocks == (2, 4, 6)  # both false
    assert gone.path.count == 4


def test_relative_change() -> None:
    path = Path(0, (2,), "entry", "return", 1)
    assert PathChange(path, 4, 6).relative == 0.5
    assert PathChange(path, 4, 1).relative == -0.75
    assert math.isinf(PathChange(path, 0, 3).relative)


def test_moved_source_matches_paths_by_their_shape() -> None:
    old = measurement(two={0: 10, 3: 2})
    new = measurement(MOVED, two={0: 10, 3: 2})
    two = only(diff_profiles(old, new))
    assert two.source_changed
    assert two.first_line == 3
    assert (two.appeared, two.vanished, two.changed, two.unchanged) == ([], [], [], 2)


def test_an_edit_inside_a_function_changes_the_shapes_after_it() -> None:
    old = measurement(two={3: 2})
    new = measurement(EDITED, two={3: 2})
    two = only(diff_profiles(old, new))
    assert two.source_changed
    # the path's blocks after `x = 0` start a line later: another shape
    assert [c.path.blocks for c in two.appeared] == [(2, 4, 6)]
    assert [c.path.blocks for c in two.vanished] == [(2, 4, 6)]


def test_functions_measured_in_one_profile_only() -> None:
    old = Measurement(functions=[fn for fn in profiles(TWO, {"two": {0: 1}, "other": {0: 3}})
                                 if fn.qualname == "other"])
    new = Measurement(functions=[fn for fn in profiles(TWO, {"two": {0: 1}, "other": {0: 3}})
                                 if fn.qualname == "two"])
    diff = diff_profiles(old, new)
    assert diff.functions == []
    assert [fn.qualname for fn in diff.new_functions] == ["two"]
    assert [fn.qualname for fn in diff.gone_functions] == ["other"]
    assert diff.differs


def test_a_function_that_never_ran_is_neither_new_nor_gone() -> None:
    diff = diff_profiles(Measurement(), measurement(two={}))
    assert diff.new_functions == []
    assert not diff.differs
    diff = diff_profiles(measurement(two={}), Measurement())
    assert diff.gone_functions == []


def test_measurements_of_one_version_are_added_before_comparing() -> None:
    twice = Measurement(functions=[*profiles(TWO, {"two": {0: 3}}),
                                   *profiles(TWO, {"two": {0: 4}})])
    two = only(diff_profiles(measurement(two={0: 7}), twice))
    assert two.unchanged == 1
    assert two.changed == []


def test_of_several_source_versions_the_most_executed_is_compared() -> None:
    versions = Measurement(functions=[*profiles(TWO, {"two": {0: 1}}),
                                      *profiles(MOVED, {"two": {3: 50}})])
    two = only(diff_profiles(measurement(two={3: 50}), versions))
    assert two.source_changed  # the MOVED version, 50 runs, against TWO
    assert two.unchanged == 1
    assert two.appeared == two.vanished == []


def test_a_negative_threshold_is_refused() -> None:
    with pytest.raises(ValueError, match="threshold must not be negative"):
        diff_profiles(Measurement(), Measurement(), threshold=-0.01)


@settings(max_examples=50, deadline=None)
@given(st.dictionaries(st.integers(0, 3), st.integers(0, 20), max_size=4),
       st.dictionaries(st.integers(0, 3), st.integers(0, 20), max_size=4),
       st.floats(0, 2), st.integers(1, 10), st.booleans())
def test_every_path_that_ran_is_in_exactly_one_list(
        old_counts: dict[int, int], new_counts: dict[int, int], threshold: float,
        min_count: int, moved: bool) -> None:
    old = measurement(two=old_counts)
    new = measurement(MOVED if moved else TWO, two=new_counts)
    two = only(diff_profiles(old, new, threshold=threshold, min_count=min_count))
    ran = {n for n, c in old_counts.items() if c} | {n for n, c in new_counts.items() if c}
    listed = [c.path.id for c in (*two.appeared, *two.vanished, *two.changed)]
    assert len(listed) == len(set(listed))  # moved: the same numbers and shapes
    assert len(listed) + two.unchanged == len(ran)
    for change in two.appeared:
        assert change.old == 0
        assert change.new == new_counts[change.path.id] >= min_count
    for change in two.vanished:
        assert change.new == 0
        assert change.old == old_counts[change.path.id] >= min_count
    for change in two.changed:
        assert abs((change.new - change.old) / change.old) > threshold
        assert max(change.old, change.new) >= min_count
