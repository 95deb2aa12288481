"""Basis path coverage (pathprof.analysis.basis): the dimension of a function's path
space, the rank of the paths that ran, and the suite headline built from them.

Expected figures are worked out by hand from the source, and the dimension formula
is checked against a brute-force rank of every path's edge vector."""

from __future__ import annotations

import random
import textwrap
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from pathprof.analysis.basis import basis_coverage, basis_rank, path_space_dimension
from pathprof.analysis.pathcoverage import path_coverage
from pathprof.data.measurement import Measurement
from pathprof.data.profile import FunctionProfile, numbering_of
from pathprof.exceptions import CfgError
from pathprof.graph import Cfg, Dag, DagEdge, EdgeKind, number_paths, regenerate, to_dag
from pathprof.python.instrument import instrument_source

from .graph.strategies import cfgs
from .loading import corpus_programs, load_instrumented


def oracle_rank(vectors: list[list[int]]) -> int:
    """Rank over the rationals by plain Gauss-Jordan elimination on dense rows."""
    rows = [[Fraction(x) for x in v] for v in vectors]
    rank = 0
    width = len(rows[0]) if rows else 0
    for col in range(width):
        pivot = next((r for r in range(rank, len(rows)) if rows[r][col] != 0), None)
        if pivot is None:
            continue
        rows[rank], rows[pivot] = rows[pivot], rows[rank]
        for r in range(len(rows)):
            if r != rank and rows[r][col] != 0:
                factor = rows[r][col] / rows[rank][col]
                rows[r] = [a - factor * b for a, b in zip(rows[r], rows[rank], strict=True)]
        rank += 1
    return rank


def edge_vectors(numbering: Any, numbers: list[int]) -> list[list[int]]:
    vectors = []
    for number in numbers:
        vector = [0] * len(numbering.dag.edges)
        for eid in regenerate(numbering, number).edges:
            vector[eid] = 1
        vectors.append(vector)
    return vectors


def profiles(path: Path, run: Any) -> dict[str, FunctionProfile]:
    """Instrument ``path`` in memory, call ``run(module)``, and return what each
    function recorded."""
    loaded = load_instrumented(path, mark_probes=False)
    loaded.execute()
    loaded.snapshot()  # forget what ran at import
    run(loaded.module)
    paths, cuts, _raised, _unattributed = loaded.snapshot()
    result = {}
    for i, meta in enumerate(loaded.metadata.functions):
        fn = FunctionProfile(str(path), meta.qualname, meta.code_line,
                             loaded.metadata.source_hash, meta)
        fn.counts, fn.cuts = dict(paths[i]), dict(cuts[i])
        result[meta.qualname] = fn
    return result


def write(tmp_path: Path, source: str) -> Path:
    path = tmp_path / "subject.py"
    path.write_text(textwrap.dedent(source))
    return path


TWO_IFS = """\
    def two(a, b):
        x = 0
        if a:
            x += 1
        if b:
            x += 2
        return x
    """


def test_two_sequential_ifs_four_paths_dimension_three(tmp_path: Path) -> None:
    """The worked example of docs/commands/coverage.md: TT and FF span 2 of the 3
    dimensions; TF adds the third, and FT (= TT + FF - TF) is then implied
    although it never ran."""
    path = write(tmp_path, TWO_IFS)
    fn = profiles(path, lambda m: (m.two(True, True), m.two(False, False)))["two"]
    assert (fn.paths_run, fn.paths_possible) == (2, 4)
    assert basis_coverage(fn) == (2, 3)
    fn = profiles(path, lambda m: (m.two(True, True), m.two(False, False),
                                   m.two(True, False)))["two"]
    assert (fn.paths_run, fn.paths_possible) == (3, 4)
    assert basis_coverage(fn) == (3, 3)
    fn = profiles(path, lambda m: [m.two(a, b) for a in (0, 1) for b in (0, 1)])["two"]
    assert (fn.paths_run, basis_coverage(fn)) == (4, (3, 3))


def test_a_loop_function(tmp_path: Path) -> None:
    """``for`` with an ``if`` inside: the DAG has ENTRY -> [s = 0] -> header, the
    header's two arms (body test, return), the test's arms (``s += x``, straight
    back), two latches -> EXIT and ENTRY -> header: 9 edges, 7 blocks, dimension 4
    (one more than the CFG's cyclomatic number 3: the two back edges become two
    latch -> EXIT edges, and ENTRY -> header is new), and 6 paths: from entry or
    from the header, then return, loop back through ``s += x``, or loop back past it."""
    path = write(tmp_path, """\
        def total(xs):
            s = 0
            for x in xs:
                if x > 0:
                    s += x
            return s
        """)
    fn = profiles(path, lambda m: m.total([]))["total"]
    assert (fn.paths_run, fn.paths_possible, basis_coverage(fn)) == (1, 6, (1, 4))
    fn = profiles(path, lambda m: m.total([-1]))["total"]
    assert (fn.paths_run, basis_coverage(fn)) == (2, (2, 4))
    # entry -> x>0 -> back; header -> x<=0 -> back; header -> x>0 -> back; header -> return:
    # 4 of 6 paths, and independent (each adds an edge the others lack or a new mix)
    fn = profiles(path, lambda m: m.total([1, -1, 2]))["total"]
    assert (fn.paths_run, basis_coverage(fn)) == (4, (4, 4))


def test_cut_paths_do_not_count(tmp_path: Path) -> None:
    path = write(tmp_path, """\
        def inverse(x):
            if x is not None:
                return 1 / x
            return None
        """)

    def run(module: Any) -> None:
        module.inverse(None)
        with pytest.raises(ZeroDivisionError):
            module.inverse(0)  # cut short inside ``return 1 / x``

    fn = profiles(path, run)["inverse"]
    assert fn.cuts
    assert fn.paths_run == 1
    assert basis_coverage(fn) == (1, 2)


def test_dimension_leaves_out_blocks_on_no_path() -> None:
    # blocks 2 and 3 are unreachable: they are not counted (5 blocks, 2 edges naively
    # would give 2 - 5 + 2 = -1)
    unreachable = to_dag(Cfg(5, 0, 4, [(0, 1), (1, 4), (2, 3), (3, 4)]))
    assert path_space_dimension(unreachable) == 1
    # a block that cannot reach EXIT (a DAG to_dag would refuse, built by hand)
    cfg = Cfg(4, 0, 3, [(0, 1), (1, 3), (0, 2)])
    edges = tuple(DagEdge(s, d, EdgeKind.NORMAL, i) for i, (s, d) in enumerate(cfg.edges))
    dead_end = Dag(cfg, edges, {}, {}, {0: 0, 1: 1, 2: 2}, frozenset(range(4)), (0, 2, 1, 3))
    assert path_space_dimension(dead_end) == 1


@settings(max_examples=300, deadline=None)
@given(cfgs(), st.randoms(use_true_random=False))
def test_dimension_is_the_rank_of_all_paths(g: Cfg, rng: random.Random) -> None:
    try:
        numbering = number_paths(to_dag(g))
    except CfgError:
        assume(False)
        raise
    assume(numbering.total <= 300)
    dimension = path_space_dimension(numbering.dag)
    everything = list(range(numbering.total))
    assert dimension == oracle_rank(edge_vectors(numbering, everything))
    assert basis_rank(numbering, everything) == dimension
    some = rng.sample(everything, rng.randint(0, len(everything)))
    rank = basis_rank(numbering, some)
    assert 0 <= rank <= dimension
    assert rank == (oracle_rank(edge_vectors(numbering, some)) if some else 0)


PROGRAMS = corpus_programs()


@pytest.mark.parametrize("path", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_dimension_on_the_corpus(path: Path) -> None:
    """Every corpus function with at most 300 paths: the formula equals the brute-force
    rank of all its paths' vectors."""
    metadata = instrument_source(path.read_text(encoding="utf-8"), str(path)).metadata
    checked = 0
    for meta in metadata.functions:
        numbering = numbering_of(meta)
        if numbering.total > 300:
            continue
        everything = list(range(numbering.total))
        dimension = path_space_dimension(numbering.dag)
        assert dimension == oracle_rank(edge_vectors(numbering, everything)), meta.qualname
        assert basis_rank(numbering, everything) == dimension
        checked += 1
    assert checked


def _wide_source(ifs: int) -> str:
    body = "".join(f"    if flags[{i}]:\n        n += 1\n" for i in range(ifs))
    return (f"def wide(flags):\n    n = 0\n{body}    return n\n\n\n"
            "def sign(x):\n    if x < 0:\n        return -1\n    return 1\n")


def test_one_huge_function_does_not_swamp_the_headline(tmp_path: Path) -> None:
    """30 ifs in a row: 2**30 paths, dimension 31. Run with every flag false and then
    with each of the first 14 flags alone true: 15 paths, linearly independent (each
    single-true path differs from the all-false one in its own arm), so 15 of 31.
    Beside it ``sign``, fully covered: 2 of 2 paths, dimension 2.

    Paths: 17 of 2**30 + 2, under 0.1%. Basis: (15 + 2) / (31 + 2) = 17/33 = 51.52%."""
    path = tmp_path / "wide.py"
    path.write_text(_wide_source(30))

    def run(module: Any) -> None:
        module.wide([False] * 30)
        for i in range(14):
            module.wide([j == i for j in range(30)])
        module.sign(-3)
        module.sign(3)

    found = profiles(path, run)
    assert found["wide"].paths_possible == 2 ** 30
    assert basis_coverage(found["wide"]) == (15, 31)
    assert basis_coverage(found["sign"]) == (2, 2)
    coverage = path_coverage(Measurement(functions=list(found.values())))
    assert (coverage.totals.run, coverage.totals.possible) == (17, 2 ** 30 + 2)
    assert coverage.totals.percent < 0.1
    assert (coverage.basis.run, coverage.basis.possible) == (17, 33)
    assert coverage.basis.percent == pytest.approx(100 * 17 / 33)
    # all false and each flag alone true: 31 paths of 2**30 make a basis
    found = profiles(path, lambda m: [m.wide([j == i for j in range(30)]) for i in range(-1, 30)])
    assert basis_coverage(found["wide"]) == (31, 31)
    assert found["wide"].paths_run == 31


def _leave_one_out(figures: list[tuple[int, int]]) -> list[float]:
    """How far the percentage of the summed figures moves when each one is left out."""
    run, possible = sum(r for r, _p in figures), sum(p for _r, p in figures)
    whole = 100 * run / possible
    return [abs(100 * (run - r) / (possible - p) - whole) for r, p in figures]


def test_no_one_function_decides_the_corpus_headline() -> None:
    """Issue 24's acceptance, offline: the corpus programs driven as their ``drive()``
    does (90 functions). ``flags`` (14 flags: 16,384 paths, 204 run) decides the paths
    total, 2.7%: leaving it out moves that by about 49 points. The basis total, 82.6%,
    moves by less than 2 points whichever function is left out."""
    found: list[FunctionProfile] = []
    for path in PROGRAMS:
        found += profiles(path, lambda m: m.drive()).values()
    coverage = path_coverage(Measurement(functions=found))
    functions = coverage.functions()
    paths = _leave_one_out([(fn.totals.run, fn.totals.possible) for fn in functions])
    basis = _leave_one_out([(fn.basis.run, fn.basis.possible) for fn in functions])
    assert coverage.totals.percent < 5
    assert coverage.basis.percent > 75
    assert max(paths) > 40
    assert max(basis) < 2
    assert max(basis) < max(paths)


def test_the_pathcov_example(tmp_path: Path) -> None:
    """examples/pathcov's calls, by hand: reserve (2 decisions, dimension 3) takes 2
    paths, reorder_list (3 decisions and a loop, dimension 5) 3, price (4
    decisions, dimension 5) 2, all independent: basis 7 of 13 = 53.85%, paths 7 of 23.
    Leaving out a function moves the basis total by at most 8.65 points (price:
    5 of 8), the paths total by up to 15.02 (price: 5 of 11 = 45.45%)."""
    stock = Path(__file__).resolve().parent.parent / "examples/pathcov/inventory/stock.py"

    def run(m: Any) -> None:
        m.reserve({"bolt": 10}, "bolt", 4)
        with pytest.raises(m.OutOfStock):
            m.reserve({"bolt": 1}, "bolt", 2)
        m.reorder_list({"bolt": 3, "nut": 50}, minimum=10, pack_size=5)
        m.price(100, 1.0, member=True)
        m.price(1, 2.5)

    coverage = path_coverage(Measurement(functions=list(profiles(stock, run).values())))
    assert [(fn.qualname, fn.basis.run, fn.basis.possible) for fn in coverage.functions()] == [
        ("reserve", 2, 3), ("reorder_list", 3, 5), ("price", 2, 5)]
    assert (coverage.basis.run, coverage.basis.possible) == (7, 13)
    assert (coverage.totals.run, coverage.totals.possible) == (7, 23)
    functions = coverage.functions()
    basis = _leave_one_out([(fn.basis.run, fn.basis.possible) for fn in functions])
    paths = _leave_one_out([(fn.totals.run, fn.totals.possible) for fn in functions])
    assert max(basis) == pytest.approx(100 * 5 / 8 - 100 * 7 / 13)
    assert max(paths) == pytest.approx(100 * 5 / 11 - 100 * 7 / 23)
    assert max(basis) < max(paths)
