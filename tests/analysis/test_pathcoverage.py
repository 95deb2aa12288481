"""Tests for pathprof.analysis.pathcoverage: paths run of paths possible (Ball-Larus
1996, §3.1: NumPaths(ENTRY)) and basis paths covered of the dimension, per function,
file and in total -- the totals' arithmetic, what exclusions take (whole functions and
branches), files never imported, the edge-profile refusal, cut paths (calls, not runs),
stopped functions (a lower bound), the missed paths shortest first, the paths the
source proves impossible, where to test next, and the memo of what an earlier report
derived. A property test checks the invariant ``0 <= run <= possible`` for paths and
basis, with files and the total as sums over their functions."""

from __future__ import annotations

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pathprof.analysis.exclusions import ExclusionRules
from pathprof.analysis.memo import AnalysisMemo, paths_key
from pathprof.analysis.pathcoverage import (
    CoverageTotals,
    Excluded,
    FunctionCoverage,
    PathCoverage,
    missed_paths,
    path_coverage,
)
from pathprof.analysis.pathspace import path_space
from pathprof.data.measurement import Measurement
from pathprof.data.modules import ModuleContract, Sources
from pathprof.data.profile import FunctionProfile, numbering_of
from pathprof.exceptions import PathprofError
from pathprof.python.instrument import instrument_source

FILE = "/project/cover.py"
SOURCE = textwrap.dedent('''\
    def two(a, b):
        x = 0
        if a:
            x += 1
        if b:
            x += 2
        return x


    def skipped():  # pragma: no cover
        return 1


    def decide(x):
        if x is None:
            y = 1
        else:
            y = 2
        if x is not None:
            y += 1
        return y
    ''')
# two:    paths 0 = TT (blocks 2 3 4 5 6), 1 = TF (2 3 4 6), 2 = FT (2 4 5 6), 3 = FF
#         (2 4 6); 8 dag edges, 7 blocks: dimension 3.
# skipped: 1 path, dimension 1.
# decide: paths 0 = None, then `is not None` true (2 3 5 6 7), 1 = None then false
#         (2 3 5 7), 2 = not None then true (2 4 5 6 7), 3 = not None then false
#         (2 4 5 7); 9 edges, 8 blocks: dimension 3. Paths 0 and 3 cannot run.


def profiles(source: str = SOURCE, file: str = FILE, mode: str = "path",
             **counts: dict[int, int]) -> list[FunctionProfile]:
    module = instrument_source(source, file, mode=mode).metadata
    result = []
    for meta in module.functions:
        fn = FunctionProfile(file, meta.qualname, meta.code_line, module.source_hash, meta)
        fn.counts = dict(counts.get(meta.qualname, {}))
        result.append(fn)
    return result


def measurement(fns: list[FunctionProfile], source: str | None = SOURCE) -> Measurement:
    sources = (Sources() if source is None
               else Sources({(fn.file, fn.source_hash): source for fn in fns}))
    return Measurement(functions=fns, sources=sources)


def figures(totals: CoverageTotals) -> tuple[int, int]:
    return (totals.run, totals.possible)


def function(coverage: PathCoverage, name: str) -> FunctionCoverage:
    (found,) = [fn for fn in coverage.functions() if fn.qualname == name]
    return found


# ---------------------------------------------------------------------------
# CoverageTotals and Excluded


def test_totals_say_what_is_missed_and_in_what_share() -> None:
    totals = CoverageTotals(3, 8)
    assert totals.missed == 5
    assert totals.percent == 37.5
    assert totals.fraction == 0.375
    assert str(totals) == "37.50% (3 of 8)"
    assert not totals.lower_bound


def test_nothing_possible_is_full_coverage() -> None:
    empty = CoverageTotals()
    assert (empty.percent, empty.fraction, empty.missed) == (100.0, 1.0, 0)
    assert str(empty) == "100.00% (0 of 0)"


def test_totals_add_up_and_a_lower_bound_stays_one() -> None:
    totals = CoverageTotals()
    totals.add(1, 4)
    totals.add(2, 3, lower_bound=True)
    totals.add(0, 1)
    assert (totals.run, totals.possible, totals.lower_bound) == (3, 8, True)


def test_a_percentage_of_paths_beyond_a_floats_range_is_exact() -> None:
    huge = CoverageTotals(2**1100, 2**1101)
    assert huge.percent == 50.0
    assert huge.missed == 2**1100


def test_excluded_figures_add_up_by_reason() -> None:
    excluded = Excluded({"excluded line": 1}, paths=3, dimensions=1)
    excluded.add(Excluded({"excluded line": 2, "overload": 1}, paths=1, dimensions=2,
                          partly=1))
    assert excluded == Excluded({"excluded line": 3, "overload": 1}, 4, 3, 1)
    assert excluded.function_count == 4
    assert excluded
    assert not Excluded()
    assert Excluded(paths=1)


# ---------------------------------------------------------------------------
# path_coverage


def test_figures_per_function_file_and_total() -> None:
    fns = profiles(two={0: 2, 3: 1}, decide={1: 1})
    coverage = path_coverage(measurement(fns))
    (file,) = coverage.files
    assert file.file == FILE
    assert file.imported
    # `skipped` is excluded by its pragma (the default rules)
    assert [fn.qualname for fn in file.functions] == ["two", "decide"]
    two, decide = file.functions
    assert (figures(two.totals), figures(two.basis)) == ((2, 4), (2, 3))
    assert (figures(decide.totals), figures(decide.basis)) == ((1, 4), (1, 3))
    assert (figures(file.totals), figures(file.basis)) == ((3, 8), (3, 6))
    assert (figures(coverage.totals), figures(coverage.basis)) == ((3, 8), (3, 6))
    assert file.excluded == Excluded({"excluded line": 1}, paths=1, dimensions=1)
    assert coverage.excluded == file.excluded
    assert (two.calls, decide.calls) == (3, 1)


def test_rules_that_exclude_nothing_count_every_function() -> None:
    coverage = path_coverage(measurement(profiles(two={0: 1})), ExclusionRules.none())
    assert [fn.qualname for fn in coverage.functions()] == ["two", "skipped", "decide"]
    assert figures(coverage.totals) == (1, 9)
    assert figures(coverage.basis) == (1, 7)
    assert not coverage.excluded


def test_an_excluded_branch_takes_its_paths_and_dimensions() -> None:
    source = SOURCE.replace("x += 1", "x += 1  # pragma: no cover")
    fns = profiles(source, two={0: 1, 3: 1})
    two = function(path_coverage(measurement(fns, source)), "two")
    # FT and FF are left: of TT and FF, only FF counts
    assert (figures(two.totals), figures(two.basis)) == ((1, 2), (1, 2))
    assert two.excluded == Excluded(paths=2, dimensions=1, partly=1)
    assert two.path_space.removed == frozenset({1, 2})  # into and out of `x += 1`


def test_without_its_source_nothing_of_a_file_is_excluded() -> None:
    coverage = path_coverage(measurement(profiles(), source=None))
    assert [fn.qualname for fn in coverage.functions()] == ["two", "skipped", "decide"]
    assert function(coverage, "decide").tree is None
    assert function(coverage, "decide").lines is None


def test_files_come_in_name_order_and_functions_in_line_order() -> None:
    b = profiles(file="/project/b.py")
    a = profiles(file="/project/a.py")
    coverage = path_coverage(measurement([*reversed(b), *a]))
    assert [f.file for f in coverage.files] == ["/project/a.py", "/project/b.py"]
    assert [fn.qualname for fn in coverage.files[1].functions] == ["two", "decide"]


def test_files_never_imported_count_at_zero_with_notes_and_unparsed() -> None:
    never = profiles(file="/project/never.py")
    coverage = path_coverage(measurement(profiles(two={0: 1})), unmeasured=never,
                             unparsed=[("/project/bad.py", "invalid syntax")],
                             notes=["a note"])
    assert [f.file for f in coverage.unimported] == ["/project/never.py"]
    unimported = coverage.unimported[0]
    assert not unimported.imported
    assert figures(unimported.totals) == (0, 9)  # no source for it: nothing excluded
    assert figures(coverage.totals) == (1, 8 + 9)
    assert coverage.unparsed == [("/project/bad.py", "invalid syntax")]
    assert coverage.notes == ["a note"]


def test_an_edge_profile_is_refused_and_a_mixed_one_keeps_its_paths() -> None:
    with pytest.raises(PathprofError, match="path coverage needs a path profile"):
        path_coverage(Measurement(functions=profiles(mode="edge")))
    mixed = [*profiles(mode="edge", file="/project/edges.py"), *profiles(two={0: 1})]
    coverage = path_coverage(measurement(mixed))
    assert [f.file for f in coverage.files] == [FILE]


def test_an_empty_measurement_covers_nothing() -> None:
    coverage = path_coverage(Measurement())
    assert coverage.files == []
    assert figures(coverage.totals) == (0, 0)
    assert coverage.where_to_test_next() == []


def test_a_cut_path_is_a_call_but_not_a_path_run() -> None:
    fns = profiles(two={3: 1})
    fns[0].cuts = {(2, 0): 4}  # four calls cut short in block 2
    two = function(path_coverage(measurement(fns)), "two")
    assert figures(two.totals) == (1, 4)
    assert figures(two.basis) == (1, 3)
    assert two.calls == 5


def test_a_function_that_stopped_counting_gives_a_lower_bound() -> None:
    fns = profiles(two={0: 1}, decide={2: 1})
    fns[0].stopped = True
    coverage = path_coverage(measurement(fns))
    assert function(coverage, "two").totals.lower_bound
    assert not function(coverage, "decide").totals.lower_bound
    assert coverage.totals.lower_bound
    assert coverage.files[0].totals.lower_bound
    # all of its paths ran: nothing is missing, no bound
    fns[0].counts = {0: 1, 1: 1, 2: 1, 3: 1}
    assert not function(path_coverage(measurement(fns)), "two").totals.lower_bound


def test_versions_of_one_function_count_once_each() -> None:
    moved = "\n\n" + SOURCE
    fns = [*profiles(two={0: 1}), *profiles(moved, two={1: 1})]
    sources = Sources({(FILE, fns[0].source_hash): SOURCE, (FILE, fns[3].source_hash): moved})
    coverage = path_coverage(Measurement(functions=fns, sources=sources))
    assert [(fn.qualname, fn.profile.first_line) for fn in coverage.functions()] == [
        ("two", 1), ("two", 3), ("decide", 14), ("decide", 16)]
    assert figures(coverage.totals) == (2, 16)


# ---------------------------------------------------------------------------
# What a FunctionCoverage tells


def test_missed_paths_come_shortest_first_then_by_number() -> None:
    coverage = path_coverage(measurement(profiles(two={0: 2, 3: 1}, decide={1: 1})))
    two, decide = coverage.functions()
    assert [p.id for p in two.missed()] == [1, 2]  # both 5 edges long
    # decide: 3 is 5 edges long, 0 and 2 six
    assert [p.id for p in decide.missed()] == [3, 0, 2]
    assert [p.id for p in decide.missed(limit=1)] == [3]
    assert all(p.count == 0 for p in decide.missed(None))


def test_the_source_proves_some_missed_paths_impossible() -> None:
    decide = function(path_coverage(measurement(profiles(decide={1: 1}))), "decide")
    told = {p.id: decide.impossible(p) for p in decide.missed()}
    assert told[2] is None
    for number, first in ((0, True), (3, False)):
        why = told[number]
        assert why is not None
        assert (why.test, why.first_line, why.second_line, why.first_outcome) == (
            "x is None", 15, 19, first)
    found = decide.next_paths()
    assert (found.rank, found.dimension) == (1, 3)
    assert [p.id for p in found.paths] == [2]
    assert sorted(p.id for p, _why in found.impossible) == [0, 3]
    assert decide.next_paths() is found  # asked again: the same answer


def test_without_the_source_nothing_is_proved() -> None:
    decide = function(path_coverage(measurement(profiles(decide={1: 1}), source=None)),
                      "decide")
    assert decide.facts is None
    assert all(decide.impossible(p) is None for p in decide.missed())


def test_a_test_too_deep_to_read_back_proves_nothing_and_breaks_nothing() -> None:
    # (parsed: 1,500 additions; read back by ast.unparse, one frame each: past the
    # recursion limit, which pathprof html met as a RecursionError)
    deep = " + ".join(["x"] * 1500)
    source = f"def deep(x):\n    if {deep}:\n        return 1\n    return 2\n"
    coverage = path_coverage(measurement(profiles(source, deep={0: 1}), source=source))
    found = function(coverage, "deep")
    assert found.facts is None
    assert [p.id for p in found.missed()] == [1]
    assert found.impossible(found.missed()[0]) is None
    assert [p.id for p in found.next_paths().paths] == [1]


def test_contexts_are_named_by_path_key_and_sorted() -> None:
    fns = profiles(two={3: 1, 0: 1})
    fns[0].contexts = {3: {"test_b", "test_a"}, (2, 0): {"test_c"}, 0: {"test_z"}}
    two = function(path_coverage(measurement(fns)), "two")
    assert two.contexts == {"0": ["test_z"], "3": ["test_a", "test_b"],
                            "cut:2:0": ["test_c"]}
    assert list(two.contexts) == ["0", "3", "cut:2:0"]


def test_where_to_test_next_puts_the_most_missing_first_then_the_most_called() -> None:
    fns = profiles(two={0: 5}, decide={1: 1})
    other = [fn for fn in profiles(file="/project/zz.py", two={0: 1, 3: 1})
             if fn.qualname == "two"]
    coverage = path_coverage(measurement([*fns, *other]))
    ranked = coverage.where_to_test_next()
    # missing dimensions: two (cover.py) 2, decide 2, two (zz.py) 1; two has 5 calls
    assert [(fn.profile.file, fn.qualname) for fn in ranked] == [
        (FILE, "two"), (FILE, "decide"), ("/project/zz.py", "two")]
    assert [fn.qualname for fn in coverage.where_to_test_next(limit=1)] == ["two"]
    complete = profiles(two={0: 1, 1: 1, 3: 1})
    assert "two" not in [fn.qualname for fn in
                         path_coverage(measurement(complete)).where_to_test_next(None)]


def test_missed_paths_of_a_profile_within_a_space() -> None:
    two = profiles(two={0: 1})[0]
    assert [p.id for p in missed_paths(two)] == [3, 1, 2]
    assert [p.id for p in missed_paths(two, limit=2)] == [3, 1]
    # with block 3 (`x += 1`) excluded, only FT and FF count
    space = path_space(numbering_of(two.meta), {3})
    assert [p.id for p in missed_paths(two, None, space)] == [3, 2]
    assert [p.blocks for p in missed_paths(two, 1)] == [(2, 4, 6)]


# ---------------------------------------------------------------------------
# The memo of an earlier report


def with_contract(fns: list[FunctionProfile]) -> list[FunctionProfile]:
    contract = ModuleContract.of_functions(fns[0].file, fns[0].source_hash,
                                           [fn.meta for fn in fns])
    for position, fn in enumerate(fns):
        fn.module, fn.position = contract, position
    return fns


def test_a_memo_keeps_what_was_derived_and_gives_the_same_figures() -> None:
    fns = with_contract(profiles(two={0: 1, 1: 1, 3: 1}, decide={1: 1}))
    plain = path_coverage(measurement(fns))
    memos: dict[tuple[str, str], AnalysisMemo] = {}
    first = path_coverage(measurement(fns), memos=memos)
    memo = memos[(FILE, fns[0].source_hash)]
    assert memo.changed
    key = f"{fns[0].module.digest}:0"  # type: ignore[union-attr]
    assert memo.space(key) == (4, 3)
    assert memo.rank(key, paths_key([0, 1, 3])) == 3  # three paths: a rank was derived
    excluded = memo.excluded()
    assert excluded is not None
    assert excluded.function_reason(10) == "excluded line"
    second = path_coverage(measurement(fns), memos=memos)
    for coverage in (first, second):
        assert [(fn.qualname, figures(fn.totals), figures(fn.basis))
                for fn in coverage.functions()] == [
            (fn.qualname, figures(fn.totals), figures(fn.basis))
            for fn in plain.functions()]
        assert coverage.excluded == plain.excluded
    # the space the memo stood for is made when asked for
    assert function(second, "two").path_space.possible == 4


# ---------------------------------------------------------------------------
# The invariant


@settings(max_examples=50, deadline=None)
@given(st.dictionaries(st.integers(0, 3), st.integers(0, 3)),
       st.dictionaries(st.integers(0, 3), st.integers(0, 3)),
       st.booleans())
def test_run_stays_within_possible_and_files_and_total_are_sums(
        two: dict[int, int], decide: dict[int, int], exclude: bool) -> None:
    source = SOURCE.replace("x += 2", "x += 2  # pragma: no cover") if exclude else SOURCE
    fns = [*profiles(source, two=two, decide=decide),
           *profiles(source, file="/project/other.py", two=decide)]
    coverage = path_coverage(measurement(fns, source))
    for fn in coverage.functions():
        assert 0 <= fn.totals.run <= fn.totals.possible
        assert 0 <= fn.basis.run <= fn.basis.possible
        ran = {n for n, c in fn.profile.counts.items() if c}
        assert fn.totals.run <= len(ran)
        assert fn.basis.run <= fn.totals.run
    for file in coverage.files:
        assert figures(file.totals) == (sum(f.totals.run for f in file.functions),
                                        sum(f.totals.possible for f in file.functions))
        assert figures(file.basis) == (sum(f.basis.run for f in file.functions),
                                       sum(f.basis.possible for f in file.functions))
    assert figures(coverage.totals) == (sum(f.totals.run for f in coverage.files),
                                        sum(f.totals.possible for f in coverage.files))
    assert figures(coverage.basis) == (sum(f.basis.run for f in coverage.files),
                                       sum(f.basis.possible for f in coverage.files))
