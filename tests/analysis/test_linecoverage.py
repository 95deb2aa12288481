"""Tests for pathprof.analysis.linecoverage: the line, branch and function coverage a
path profile implies (Ball-Larus 1996, §2: edge and block profiles are projections of
the path profile) -- line hits from the blocks each path ran (a cut block counts its
first line only), decisions and their arms, calls, codeless lines, what exclusion
rules leave out, per function, file and in total, with the choice among several
source versions, the progress callback, and the edge-profile refusal. Counts are
worked by hand in the comments; a property test checks the module's invariant."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pathprof.analysis.exclusions import ExcludedSource, ExclusionRules
from pathprof.analysis.linecoverage import (
    Arm,
    Decision,
    codeless_lines,
    function_lines,
    line_coverage,
    relative_name,
)
from pathprof.contract import Span
from pathprof.data.measurement import Measurement
from pathprof.data.modules import Sources
from pathprof.data.profile import FunctionProfile, decode_paths
from pathprof.exceptions import PathprofError
from pathprof.python.instrument import instrument_source

FILE = "/project/lines.py"
SOURCE = textwrap.dedent('''\
    def two(a, b):
        """Add."""
        x = 0
        if a:
            x += 1
        if b:  # pragma: no cover
            x += 2
        return x


    def skipped():  # pragma: no cover
        return 1


    def picky(x):
        global G
        if x:
            return 1
        return 2  # pragma: no cover


    def total(items):
        n = 0
        for x in items:
            if x > 2:
                n += x
        return n
    ''')
# two:    block 2 = `x = 0` (3) + `if a` (4), 3 = `x += 1` (5), 4 = `if b` (6),
#         5 = `x += 2` (7), 6 = `return x` (8). Paths: 0 = TT, 1 = TF, 2 = FT, 3 = FF.
# picky:  block 2 = `global G` (16, no code) + `if x` (17), 3 = `return 1` (18),
#         4 = `return 2` (19). Paths: 0 = true, 1 = false.
# total:  block 2 = `n = 0` (23) + iterable (24), 3 = next item (24), 4 = `if x > 2`
#         (25), 5 = `n += x` (26), 6 = `return n` (27).


def profiles(source: str = SOURCE, file: str = FILE, mode: str = "path",
             **counts: dict[int, int]) -> list[FunctionProfile]:
    module = instrument_source(source, file, mode=mode).metadata
    result = []
    for meta in module.functions:
        fn = FunctionProfile(file, meta.qualname, meta.code_line, module.source_hash, meta)
        fn.counts = dict(counts.get(meta.qualname, {}))
        result.append(fn)
    return result


def by_name(fns: list[FunctionProfile]) -> dict[str, FunctionProfile]:
    return {fn.qualname: fn for fn in fns}


def measurement(fns: list[FunctionProfile], source: str | None = SOURCE) -> Measurement:
    sources = Sources() if source is None else Sources({(fns[0].file, fns[0].source_hash):
                                                        source})
    return Measurement(functions=fns, sources=sources)


# ---------------------------------------------------------------------------
# function_lines


def test_lines_hits_decisions_and_calls_of_one_function() -> None:
    two = by_name(profiles(two={0: 2, 3: 1}))["two"]  # TT twice, FF once
    lines = function_lines(two)
    assert lines.calls == 3
    # the docstring (line 2) compiles to no piece; x += 1 and x += 2 ran twice
    assert lines.lines == {3: 3, 4: 3, 5: 2, 6: 3, 7: 2, 8: 3}
    assert lines.decisions == [
        Decision(4, 2, 3, (Arm("true", 2), Arm("false", 1))),
        Decision(6, 4, 3, (Arm("true", 2), Arm("false", 1)))]
    assert [d.covered for d in lines.decisions] == [2, 2]
    assert (lines.line_rate.run, lines.line_rate.possible) == (6, 6)
    assert (lines.branch_rate.run, lines.branch_rate.possible) == (4, 4)
    assert (lines.path_rate.run, lines.path_rate.possible) == (2, 4)
    # TT and FF are independent: 2 of the dimension 8 - 7 + 2
    assert (lines.basis_rate.run, lines.basis_rate.possible) == (2, 3)
    assert (lines.name, lines.first_line, lines.last_line) == ("two", 1, 8)


def test_a_function_that_never_ran_has_every_line_and_arm_at_zero() -> None:
    lines = function_lines(by_name(profiles())["two"])
    assert lines.calls == 0
    assert lines.lines == {3: 0, 4: 0, 5: 0, 6: 0, 7: 0, 8: 0}
    assert [[arm.count for arm in d.arms] for d in lines.decisions] == [[0, 0], [0, 0]]
    assert (lines.line_rate.run, lines.branch_rate.run) == (0, 0)


def test_a_block_cut_short_counts_its_first_line_only() -> None:
    two = by_name(profiles())["two"]
    # cut in block 2 on entry: its prefix continues by first (value-0) edges, path 0
    two.cuts = {(2, 0): 1}
    assert [p.blocks for p in decode_paths(two.meta, {}, two.cuts)] == [(2,)]
    lines = function_lines(two)
    assert lines.lines[3] == 1  # `x = 0`, the block's first line
    assert lines.lines[4] == 0  # `if a` is not known to have run
    assert lines.calls == 1  # it started at the entry


def test_a_loop_counts_its_lines_once_per_iteration() -> None:
    total = by_name(profiles())["total"]
    # total([1, 5]): entry -> 2 3 4 (1 skipped) -> back; header -> 3 4 5 (5 added) ->
    # back; header -> 3 6 (exhausted)
    decoded = [decode_paths(total.meta, {n: 1}, {})[0] for n in range(6)]
    numbers = {(*p.blocks, p.start): n for n, p in enumerate(decoded)}
    total.counts = {numbers[(2, 3, 4, "entry")]: 1, numbers[(3, 4, 5, "loop-header")]: 1,
                    numbers[(3, 6, "loop-header")]: 1}
    lines = function_lines(total)
    # line 24 holds two blocks: the iterable's (once) and the next item's (3 times)
    assert lines.lines == {23: 1, 24: 4, 25: 2, 26: 1, 27: 1}
    assert lines.calls == 1  # paths from the loop header are no calls
    (decision_next, decision_if) = lines.decisions
    assert decision_next == Decision(24, 3, 3, (Arm("next", 2), Arm("exhausted", 1)))
    assert decision_if == Decision(25, 4, 2, (Arm("true", 1), Arm("false", 1)))


def test_codeless_lines_are_not_listed() -> None:
    picky = by_name(profiles(picky={0: 1}))["picky"]
    assert 16 in function_lines(picky).lines  # `global G` has a piece of its block
    lines = function_lines(picky, codeless=codeless_lines(SOURCE))
    assert lines.lines == {17: 1, 18: 1, 19: 0}


def test_codeless_lines_of_a_source() -> None:
    source = textwrap.dedent('''\
        def f():
            """Doc."""
            global G
            ...
            G = 1
            x = 1; ...
        ''')
    # line 6 holds a statement with code beside the `...`
    assert codeless_lines(source) == {2, 3, 4}
    assert codeless_lines("def broken(:\n") == set()
    assert codeless_lines("") == set()


def test_an_excluded_branch_takes_its_lines_its_arm_and_its_paths() -> None:
    two = by_name(profiles(two={0: 2, 3: 1}))["two"]
    # `x += 2` excluded (what the pragma on `if b:` does: the clause's body)
    found = ExcludedSource(spans=[Span(7, 8, 7, 14)])
    lines = function_lines(two, excluded=found)
    assert lines.lines == {3: 3, 4: 3, 5: 2, 6: 3, 8: 3}
    # `if b` is left with one arm: no decision
    assert [d.line for d in lines.decisions] == [4]
    # the space is TF and FF; of TT and FF only FF counts
    assert (lines.path_rate.run, lines.path_rate.possible) == (1, 2)
    assert (lines.basis_rate.run, lines.basis_rate.possible) == (1, 2)
    assert lines.found is found
    assert lines.space is not None


# ---------------------------------------------------------------------------
# line_coverage


def test_a_files_figures_are_sums_over_its_functions() -> None:
    fns = profiles(two={0: 2, 3: 1}, picky={0: 1})
    coverage = line_coverage(measurement(fns))
    (file,) = coverage.files
    assert file.file == FILE
    assert [fn.name for fn in file.functions] == ["two", "skipped", "picky", "total"]
    # lines 16 (`global G`) and the docstring are codeless
    assert file.lines == {3: 3, 4: 3, 5: 2, 6: 3, 7: 2, 8: 3, 12: 0, 17: 1, 18: 1, 19: 0,
                          23: 0, 24: 0, 25: 0, 26: 0, 27: 0}
    assert (file.line_rate.run, file.line_rate.possible) == (8, 15)
    # arms: two 4 of 4, picky 1 of 2, total 0 of 4
    assert (file.branch_rate.run, file.branch_rate.possible) == (5, 10)
    assert (file.function_rate.run, file.function_rate.possible) == (2, 4)
    # paths: 2 of 4, 0 of 1, 1 of 2, 0 of 6; basis: 2 of 3, 0 of 1, 1 of 2, and 0 of
    # total's 4 (9 dag edges: 6 normal, 2 loop ends, 1 loop start; 7 blocks)
    assert (file.path_rate.run, file.path_rate.possible) == (3, 13)
    assert (file.basis_rate.run, file.basis_rate.possible) == (3, 10)
    assert [d.line for d in file.decisions] == [4, 6, 17, 24, 25]
    assert coverage.summary() == ("lines 53.33% (8 of 15), branches 50.00% (5 of 10), "
                                  "functions 50.00% (2 of 4), paths 23.08% (3 of 13)")
    assert (coverage.basis_rate.run, coverage.basis_rate.possible) == (3, 10)
    assert coverage.older_versions == []


def test_exclusion_rules_leave_out_functions_lines_and_arms() -> None:
    fns = profiles(two={0: 2, 3: 1}, picky={0: 1})
    coverage = line_coverage(measurement(fns), rules=ExclusionRules())
    (file,) = coverage.files
    # `skipped` is excluded whole; `x += 2` and `return 2` are excluded lines
    assert [fn.name for fn in file.functions] == ["two", "picky", "total"]
    assert file.lines == {3: 3, 4: 3, 5: 2, 6: 3, 8: 3, 17: 1, 18: 1,
                          23: 0, 24: 0, 25: 0, 26: 0, 27: 0}
    # `if b` and `if x` in picky are left with one arm each
    assert [d.line for d in file.decisions] == [4, 24, 25]
    assert (file.function_rate.run, file.function_rate.possible) == (2, 3)
    # two: 1 of 2 (FF; TT ran x += 2); picky: 1 of 1
    picky = file.functions[1]
    assert (picky.path_rate.run, picky.path_rate.possible) == (1, 1)


def test_rules_that_exclude_nothing_change_nothing() -> None:
    fns = profiles(two={0: 2})
    plain = line_coverage(measurement(fns))
    none = line_coverage(measurement(fns), rules=ExclusionRules.none())
    assert plain.files[0].lines == none.files[0].lines
    assert plain.summary() == none.summary()


def test_without_the_source_nothing_is_codeless_or_excluded(tmp_path: Path) -> None:
    file = str(tmp_path / "gone.py")  # no such file, and not in the data
    fns = profiles(file=file, picky={0: 1})
    coverage = line_coverage(measurement(fns, source=None), rules=ExclusionRules())
    (lines,) = [fn for fn in coverage.files[0].functions if fn.name == "picky"]
    assert lines.lines == {16: 1, 17: 1, 18: 1, 19: 0}
    assert [fn.name for fn in coverage.files[0].functions] == [
        "two", "skipped", "picky", "total"]


def test_files_come_in_name_order_and_progress_is_told_per_file() -> None:
    b = profiles(file="/project/b.py", two={0: 1})
    a = profiles(file="/project/a.py", two={3: 1})
    told: list[tuple[int, int]] = []
    coverage = line_coverage(Measurement(functions=[*b, *a]),
                             progress=lambda done, total: told.append((done, total)))
    assert [f.file for f in coverage.files] == ["/project/a.py", "/project/b.py"]
    assert told == [(1, 2), (2, 2)]
    # no source at hand: every line with a piece counts, 6 + 1 + 4 + 5 per file, and
    # one line of each file (`x = 0`, line 3) ran
    assert coverage.line_rate.possible == 2 * 16
    assert coverage.files[0].lines[3] == coverage.files[1].lines[3] == 1


def test_of_several_versions_the_one_on_disk_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "lines.py"
    moved = "\n\n" + SOURCE  # the same functions two lines further down
    old = profiles(file=str(path), two={0: 50})
    new = profiles(moved, file=str(path), two={3: 1})
    path.write_text(moved, encoding="utf-8")
    coverage = line_coverage(Measurement(functions=[*old, *new]))
    (file,) = coverage.files
    assert coverage.older_versions == [(str(path), 1)]
    assert min(file.lines) == 5  # the moved version: `x = 0` on line 5
    # without that file, the version whose paths ran most
    path.unlink()
    coverage = line_coverage(Measurement(functions=[*old, *new]))
    assert min(coverage.files[0].lines) == 3
    assert coverage.older_versions == [(str(path), 1)]


def test_an_edge_profile_is_refused() -> None:
    with pytest.raises(PathprofError, match="need a path profile"):
        line_coverage(Measurement(functions=profiles(mode="edge")))


def test_an_empty_measurement_has_no_files() -> None:
    coverage = line_coverage(Measurement())
    assert coverage.files == []
    assert (coverage.line_rate.run, coverage.line_rate.possible) == (0, 0)
    assert coverage.summary().startswith("lines 100.00% (0 of 0)")


def test_relative_names() -> None:
    assert relative_name("/project/src/a.py", "/project") == "src/a.py"
    assert relative_name("/elsewhere/a.py", "/project") == "/elsewhere/a.py"
    assert relative_name("/project/a.py", "/project/") == "a.py"


# ---------------------------------------------------------------------------
# The invariant


def _blocks_on(fn: FunctionProfile, line: int) -> set[int]:
    """The blocks holding a statement (a piece) that starts on ``line``."""
    return {b for b, block in enumerate(fn.meta.blocks)
            if any(piece.line == line for piece in block.pieces)}


@settings(max_examples=50, deadline=None)
@given(st.dictionaries(st.integers(0, 3), st.integers(0, 5)),
       st.dictionaries(st.integers(0, 5), st.integers(0, 5)),
       st.booleans())
def test_hits_are_block_executions_and_rates_stay_within_their_totals(
        two_counts: dict[int, int], total_counts: dict[int, int], excluded: bool) -> None:
    fns = profiles(two=two_counts, total=total_counts)
    coverage = line_coverage(measurement(fns), rules=ExclusionRules() if excluded else None)
    (file,) = coverage.files
    for lines in file.functions:
        fn = lines.profile
        for line, hits in lines.lines.items():
            # the executions of the blocks holding a statement that starts on it
            on = _blocks_on(fn, line)
            assert hits == sum(p.count * sum(1 for b in p.blocks if b in on)
                               for p in fn.paths)
        for decision in lines.decisions:
            assert sum(arm.count for arm in decision.arms) <= decision.executed
            assert 0 <= decision.covered <= len(decision.arms)
        for rate in (lines.line_rate, lines.branch_rate, lines.path_rate, lines.basis_rate):
            assert 0 <= rate.run <= rate.possible
        if fn.qualname == "two":  # no line of two is in two of its blocks
            for line, hits in lines.lines.items():
                through = sum(p.count for p in fn.paths if _blocks_on(fn, line) & set(p.blocks))
                assert hits <= through
    for name in ("branch_rate", "path_rate", "basis_rate"):
        assert getattr(file, name).run == sum(getattr(f, name).run for f in file.functions)
        assert getattr(file, name).possible == sum(getattr(f, name).possible
                                                   for f in file.functions)
    summed: dict[int, int] = {}
    for lines in file.functions:
        for line, hits in lines.lines.items():
            summed[line] = summed.get(line, 0) + hits
    assert file.lines == summed


def test_a_for_line_is_hit_once_per_block_of_the_path_that_holds_it() -> None:
    total = by_name(profiles())["total"]
    decoded = [decode_paths(total.meta, {n: 1}, {})[0] for n in range(6)]
    # one call that runs one iteration and leaves by the backedge: entry -> 2 3 4 5
    (number,) = [n for n, p in enumerate(decoded) if p.blocks == (2, 3, 4, 5)
                 and p.start == "entry"]
    total.counts = {number: 1}
    lines = function_lines(total).lines
    # the `for` line starts a statement of block 2 (the iterable) and of block 3 (the
    # next item): one run of the path hits it twice, the other lines once
    assert _blocks_on(total, 24) == {2, 3}
    assert lines[24] == 2
    assert (lines[23], lines[25], lines[26], lines[27]) == (1, 1, 1, 0)
    (path,) = total.paths
    assert lines[24] == path.count * sum(1 for b in path.blocks if b in _blocks_on(total, 24))
