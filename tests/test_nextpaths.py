"""The next tests to write (pathprof.analysis.nextpaths), the path space exclusions
leave (pathprof.analysis.pathspace) and the paths the source proves cannot run
(pathprof.analysis.feasibility).

The graph properties check every figure against a brute force that shares nothing
with the code under test: every path number regenerated, its edges tested against
the space, ranks by dense rational elimination (``oracle_rank``)."""

from __future__ import annotations

import ast
import contextlib
import random
import textwrap
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from pathprof.analysis.decisions import decisions, path_brief
from pathprof.analysis.feasibility import function_facts, infeasible
from pathprof.analysis.nextpaths import SEARCH_BUDGET, CutShort, complete_basis, next_paths
from pathprof.analysis.pathcoverage import path_coverage
from pathprof.analysis.pathspace import path_space
from pathprof.data.measurement import Measurement
from pathprof.data.profile import FunctionProfile, decode_paths, numbering_of
from pathprof.graph import Cfg, number_paths, regenerate, to_dag

from .graph.strategies import cfgs, examples
from .loading import load_instrumented
from .test_basis import edge_vectors, oracle_rank, profiles, write

MAX_PATHS = 400  # brute force over every path number: keep graphs this small


def _all_numbers(numbering) -> range:
    return range(numbering.total)


@settings(max_examples=examples(300), deadline=None)
@given(cfgs(), st.randoms(use_true_random=False))
def test_a_space_counts_its_paths_and_spans_its_dimension(g: Cfg, rng: random.Random
                                                          ) -> None:
    """Whatever is excluded, ``possible`` is the number of paths that use only the
    space's edges, ``dimension`` the rank of their vectors, and excluding more never
    raises either (:mod:`pathprof.analysis.pathspace`'s invariant)."""
    numbering = number_paths(to_dag(g))
    if not 0 < numbering.total <= MAX_PATHS:
        return
    inner = [b for b in range(g.num_blocks) if b not in (g.entry, g.exit)]
    excluded = {b for b in inner if rng.random() < 0.3}
    space = path_space(numbering, excluded)
    counted = [n for n in _all_numbers(numbering)
               if set(regenerate(numbering, n).edges) <= space.edges]
    assert [n for n in _all_numbers(numbering) if space.counts(n)] == counted
    assert space.possible == len(counted)
    assert space.dimension == (oracle_rank(edge_vectors(numbering, counted))
                               if counted else 0)
    more = path_space(numbering, excluded | {b for b in inner if rng.random() < 0.3})
    assert more.possible <= space.possible
    assert more.dimension <= space.dimension
    if not excluded:
        assert space.possible == numbering.total
        assert not space.removed


@settings(max_examples=examples(300), deadline=None)
@given(cfgs(), st.randoms(use_true_random=False))
def test_suggested_paths_raise_the_rank_by_exactly_their_number(
        g: Cfg, rng: random.Random) -> None:
    """The issue's property: adding the suggested paths' edge vectors to those of the
    paths that ran raises the rank by exactly their number, and with nothing
    rejected it reaches the dimension."""
    numbering = number_paths(to_dag(g))
    if not 0 < numbering.total <= MAX_PATHS:
        return
    inner = [b for b in range(g.num_blocks) if b not in (g.entry, g.exit)]
    space = path_space(numbering, {b for b in inner if rng.random() < 0.2})
    counted = [n for n in range(numbering.total) if space.counts(n)]
    ran = [(rng.randint(1, 9), n) for n in counted if rng.random() < 0.3]
    found = complete_basis(space, ran)
    before = oracle_rank(edge_vectors(numbering, [n for _c, n in ran])) if ran else 0
    after = oracle_rank(edge_vectors(numbering, [n for _c, n in ran] + found.added)
                        ) if ran or found.added else 0
    assert found.rank == before
    assert after == before + len(found.added)
    assert after == space.dimension
    assert len(set(found.added)) == len(found.added)
    assert not set(found.added) & {n for _c, n in ran}
    assert all(space.counts(n) for n in found.added)


@settings(max_examples=examples(200), deadline=None)
@given(cfgs(), st.randoms(use_true_random=False))
def test_rejected_paths_are_never_suggested_and_nothing_feasible_is_left(
        g: Cfg, rng: random.Random) -> None:
    """With some paths rejected (as the source would prove them infeasible), none is
    suggested, the rank still rises by one per suggestion, and when the search could
    look at every path, every path not rejected lies in the span reached."""
    numbering = number_paths(to_dag(g))
    if not 0 < numbering.total <= min(MAX_PATHS, SEARCH_BUDGET):
        return
    space = path_space(numbering)
    rejected = {n for n in range(numbering.total) if rng.random() < 0.4}
    ran = [(1, n) for n in range(numbering.total) if rng.random() < 0.2]
    found = complete_basis(space, ran, lambda n: "no" if n in rejected else None)
    assert not set(found.added) & rejected
    base = [n for _c, n in ran]
    reached = oracle_rank(edge_vectors(numbering, base + found.added)) if (
        base or found.added) else 0
    before = oracle_rank(edge_vectors(numbering, base)) if base else 0
    assert reached == before + len(found.added)
    for number in range(numbering.total):
        if number not in rejected:
            assert oracle_rank(edge_vectors(numbering, base + found.added + [number])
                               ) == reached
    assert all(reason == "no" and n in rejected for n, reason in found.rejected)


def test_a_limit_stops_the_suggestions() -> None:
    g = Cfg(5, 0, 4, [(0, 1), (0, 1), (1, 2), (1, 2), (2, 3), (2, 3), (3, 4)])
    space = path_space(number_paths(to_dag(g)))
    assert space.dimension == 4
    assert len(complete_basis(space, [], limit=2).added) == 2
    assert len(complete_basis(space, []).added) == 4


# -- Functions measured for real --------------------------------------------------

DECIDE = """\
    def decide(x, items):
        n = 0
        if x is None:
            n = 1
        for i in items:
            if i > 2:
                n += i
        if x is not None:
            n += 2
        if not items:
            return -1
        return n
    """


def _function(tmp_path: Path, source: str, name: str, run) -> tuple[FunctionProfile, str]:
    path = write(tmp_path, source)
    return profiles(path, run)[name], path.read_text()


def _rank(fn: FunctionProfile) -> int:
    numbering = numbering_of(fn.meta)
    ran = [n for n, c in fn.counts.items() if c]
    return oracle_rank(edge_vectors(numbering, ran)) if ran else 0


def test_the_opposite_outcome_of_an_identity_test_is_proved_impossible(tmp_path: Path
                                                                       ) -> None:
    fn, source = _function(tmp_path, DECIDE, "decide",
                           lambda m: [m.decide(None, [1, 5]), m.decide(None, [])])
    facts = function_facts(fn, ast.parse(source))
    assert facts is not None
    found = next_paths(fn, path_space(numbering_of(fn.meta)), facts)
    assert (found.rank, found.dimension) == (_rank(fn), 7)
    assert len(found.paths) == found.needed == 3
    assert found.unfound == 0
    # `x is None` true, then `x is not None` true: the path that cannot run
    assert found.impossible
    for _path, why in found.impossible:
        assert (why.test, why.first_line, why.second_line) == ("x is None", 3, 8)
    for path in found.paths:
        assert infeasible(fn, path, facts) is None
    # every missed path the prover names really has both tests going opposite ways
    numbering = numbering_of(fn.meta)
    named = [n for n in range(numbering.total)
             if infeasible(fn, decode_paths(fn.meta, {n: 0}, {})[0], facts)]
    assert named
    for n in named:
        taken = {d["line"]: d["taken"]
                 for d in decisions(fn, decode_paths(fn.meta, {n: 0}, {})[0])}
        assert taken[3] == taken[8], taken


CLASSIFY = """\
    def classify(x, y, strict):
        if x is None:
            return "none"
        kind = "small"
        if x > 10:
            kind = "big"
        if y:
            kind += "!"
        if strict:
            return kind.upper()
        return kind
    """

#: every input of a small domain, to find a call that runs a suggested path
DOMAIN = [(x, y, strict) for x in (None, 1, 20) for y in (0, 1) for strict in (False, True)]


def test_a_test_written_from_each_suggestion_raises_the_basis_by_one(tmp_path: Path
                                                                      ) -> None:
    """The suggestions are tests one can write: for each, a call of the domain that
    runs that very path is found, and running them one after another raises the
    rank by exactly one each time, to the dimension."""
    path = write(tmp_path, CLASSIFY)
    loaded = load_instrumented(path, mark_probes=False)
    loaded.execute()
    loaded.snapshot()
    ran_by: dict[int, tuple] = {}
    for args in DOMAIN:
        loaded.module.classify(*args)
        paths = loaded.snapshot()[0][0]
        (number,) = [n for n, c in paths.items() if c]
        ran_by.setdefault(number, args)
    meta = loaded.metadata.functions[0]
    fn = FunctionProfile(str(path), meta.qualname, meta.code_line,
                         loaded.metadata.source_hash, meta)
    first = ran_by and next(n for n, a in ran_by.items() if a == (1, 0, False))
    fn.counts = {first: 1}
    facts = function_facts(fn, ast.parse(path.read_text()))
    found = next_paths(fn, path_space(numbering_of(fn.meta)), facts)
    assert (found.rank, found.dimension) == (1, 5)
    assert not found.impossible
    numbering = numbering_of(fn.meta)
    done = [first]
    for suggestion in found.paths:
        number = suggestion.id
        assert number in ran_by, path_brief(fn, suggestion)  # a call runs it
        before = oracle_rank(edge_vectors(numbering, done))
        done.append(number)
        assert oracle_rank(edge_vectors(numbering, done)) == before + 1
    assert oracle_rank(edge_vectors(numbering, done)) == found.dimension


def test_a_limit_gives_the_first_of_a_functions_next_paths(tmp_path: Path) -> None:
    """``FunctionCoverage.next_paths(limit)`` stops the search at ``limit`` paths: they
    are the first of those found without one, and ``needed`` still counts all."""
    path = write(tmp_path, CLASSIFY)
    fns = profiles(path, lambda m: m.classify(1, 0, False))
    (fn,) = path_coverage(Measurement(functions=list(fns.values()))).functions()
    first_two = fn.next_paths(2)
    whole = fn.next_paths()
    assert (whole.needed, len(whole.paths), whole.unfound) == (4, 4, 0)
    assert [p.key for p in first_two.paths] == [p.key for p in whole.paths[:2]]
    assert (first_two.needed, first_two.unfound) == (4, 0)
    assert fn.next_paths(2) is first_two
    assert fn.next_paths() is whole


NOT_PROVED = """\
    FLAG = True

    def mutated(items, x):
        if not items:
            items.append(1)
        if items:
            return 1
        return 0

    def rebound(x):
        if x is None:
            x = 0
        if x is not None:
            return x
        return -1

    def called(x, log):
        if x is None:
            log("none")
        if x is not None:
            return 1
        return 0

    def global_flag():
        if FLAG:
            pass
        if not FLAG:
            return 1
        return 0

    def closure(x):
        def reset():
            nonlocal x
            x = None
        if x is None:
            reset()
        if x is not None:
            return 1
        return 0
    """


def test_what_the_prover_must_not_claim(tmp_path: Path) -> None:
    """A test whose names were rebound, or whose object a call could change, or a
    global's, proves nothing; a call does not change an identity test."""
    path = write(tmp_path, NOT_PROVED)
    fns = profiles(path, lambda m: None)
    tree = ast.parse(path.read_text())
    claims = {}
    for name in ("mutated", "rebound", "called", "global_flag", "closure"):
        fn = fns[name]
        facts = function_facts(fn, tree)
        numbering = numbering_of(fn.meta)
        claims[name] = sum(
            1 for n in range(numbering.total)
            if infeasible(fn, decode_paths(fn.meta, {n: 0}, {})[0], facts))
    # `mutated`: only the path where nothing ran between the two tests (the false
    # arm of the first); `rebound`: that one, and the one through `x = 0` that then
    # finds `x is not None` false; in `called`, log() cannot change what `x is None`
    # says, so both arms are; a global or a nonlocal proves nothing
    assert claims == {"mutated": 1, "rebound": 2, "called": 2, "global_flag": 0,
                      "closure": 0}


def test_source_of_another_version_proves_nothing(tmp_path: Path) -> None:
    fn, _source = _function(tmp_path, DECIDE, "decide", lambda m: m.decide(None, []))
    assert function_facts(fn, ast.parse("def other(): pass\n")) is None
    assert textwrap.dedent(DECIDE).startswith("def decide")


# -- The prover against execution ----------------------------------------------------

#: Tests a provable function draws (local names, constants, operators) and the
#: statements between them: rebinding to constants or not, calls that reach a name's
#: object or do not, loops over literals and over a list.
_TESTS = ["a", "not a", "a is None", "a is not None", "a == 1", "a == 2", "1 == a",
          "a == []", "e", "not e", "c", "a == [1]",
          "a in (1, 2)", "a not in (1, 2)", "b > 0", "b", "items", "not items",
          "a == b", "(a, b) == (1, 0)", "a is None or b"]
_STATEMENTS = ["a = None", "a = 1", "a = 2", "b = b - 1", "b = 0", "log(a)", "a = []",
               "a = [1]", "a.append(1) if isinstance(a, list) else None", "c = a",
               "d = [a]", "d[0].append(2) if isinstance(d[0], list) else None",
               "e = {}", "e[1] = a", "log(e)",
               "items.append(1) if len(items) < 4 else None",  # loops over it end
               "log(items)", "pass", "a = b", "items = []",
               "c = a", "c.append(1) if isinstance(c, list) else None"]


@st.composite
def provable_functions(draw: st.DrawFn) -> str:
    """``f(a, b, items, log)``: ifs on drawn tests, loops over literals and over
    ``items``, the drawn statements between."""
    lines = ["def f(a, b, items, log):", "    c = None", "    d = [None]", "    e = {}"]

    def block(depth: int, indent: str) -> None:
        for _ in range(draw(st.integers(1, 3))):
            kind = draw(st.sampled_from(["stmt", "stmt", "if", "if", "for"])
                        if depth < 3 else st.just("stmt"))
            if kind == "stmt":
                lines.append(indent + draw(st.sampled_from(_STATEMENTS)))
            elif kind == "if":
                lines.append(f"{indent}if {draw(st.sampled_from(_TESTS))}:")
                block(depth + 1, indent + "    ")
                if draw(st.booleans()):
                    lines.append(f"{indent}else:")
                    block(depth + 1, indent + "    ")
            else:
                iterable = draw(st.sampled_from(["(1, 2)", "[a]", "'xy'", "range(2)",
                                                 "items", "range(b)"]))
                lines.append(f"{indent}for x in {iterable}:")
                block(depth + 1, indent + "    ")
    block(1, "    ")
    lines.append("    return a")
    return "\n".join(lines) + "\n"


_INPUTS = [(a, b, items) for a in (None, 0, 1, 2) for b in (-1, 0, 1, 2)
           for items in ([], [1], [0, 2])]


@settings(max_examples=examples(200), deadline=None)
@given(provable_functions())
def test_no_path_that_ran_is_proved_impossible(tmp_path_factory, source: str) -> None:
    """Soundness against execution: run ``f`` on every input of a small domain; the
    prover must call none of the paths that ran impossible."""
    path = tmp_path_factory.mktemp("prove") / "subject.py"
    path.write_text(source)
    loaded = load_instrumented(path, mark_probes=False)
    loaded.execute()
    loaded.snapshot()
    for a, b, items in _INPUTS:
        loaded.module.f(a, b, list(items), lambda value: None)
    ran = loaded.snapshot()[0][0]
    meta = loaded.metadata.functions[0]
    fn = FunctionProfile(str(path), meta.qualname, meta.code_line,
                         loaded.metadata.source_hash, meta)
    facts = function_facts(fn, ast.parse(source))
    assert facts is not None
    for number, count in ran.items():
        if count:
            claimed = infeasible(fn, decode_paths(meta, {number: 0}, {})[0], facts)
            assert claimed is None, (source, number, str(claimed))


PROVED = """\
    def equal(name):
        if name == "cp":
            kind = 1
        else:
            kind = 2
        if name == "pp":
            kind = 3
        return kind

    def constant(tokens):
        position = None
        for token in tokens:
            pass
        if position is None:
            return 0
        return 1

    def literal(a):
        for version in (10, 11):
            a = version
        return a

    def tuple_test(version, out):
        if version >= (11, 0):
            out.append(1)
        if version >= (11, 0):
            return 1
        return 0

    def collect(items):
        errors = []
        for item in items:
            errors.append(item)
        if errors:
            raise ValueError(errors)
        return 0
    """


def test_what_the_prover_proves(tmp_path: Path) -> None:
    """Two equalities on one name, a name set to a constant, a loop over a literal,
    a test of a tuple with a call between that does not reach `version`."""
    path = write(tmp_path, PROVED)
    fns = profiles(path, lambda m: None)
    tree = ast.parse(path.read_text())
    found = {}
    for name in ("equal", "constant", "literal", "tuple_test", "collect"):
        fn = fns[name]
        facts = function_facts(fn, tree)
        numbering = numbering_of(fn.meta)
        found[name] = sorted(
            str(why) for n in range(numbering.total)
            if (why := infeasible(fn, decode_paths(fn.meta, {n: 0}, {})[0], facts)))
    assert found["equal"] == [
        '`name == \'cp\'` is true on line 2, so `name == \'pp\'` cannot be true on line '
        '6, and nothing between changes `name`']
    assert found["constant"] == [
        "`position = None` on line 11, so `position is None` can only be true on line 14"]
    assert found["literal"] == [
        "the loop on line 19 goes over `(10, 11)`, which is never empty: it cannot be "
        "exhausted before its first item"]
    # a new list nothing else holds yet, with the loop not run: still empty; once
    # `errors.append` passed it on, nothing is known of it
    assert found["collect"] == [
        "`errors = []` on line 31, so `errors` can only be false on line 34"]
    # `out.append(1)` cannot reach `version`'s object: both mixed paths go
    assert found["tuple_test"] == [
        "`version >= (11, 0)` is false on line 24 but true on line 26, and nothing "
        "between can change it",
        "`version >= (11, 0)` is true on line 24 but false on line 26, and nothing "
        "between can change it"]


ALWAYS_RAISES = """\
    def fail(message):
        message = str(message)  # more than a raise: the source does not prove it
        raise ValueError(message)

    def check(x, strict):
        if x < 0:
            fail("negative")
        if strict:
            return 1
        return 0
    """


def test_a_path_the_tests_saw_cut_short_every_time_is_suggested_last(tmp_path: Path
                                                                      ) -> None:
    """``fail()`` always raises, which the CFG cannot know: the paths through it are
    cut short at its block every time the tests take them. The data file's cut paths
    say so; such a path is suggested only when nothing else completes the basis, and
    the evidence comes with it."""
    def run(m):
        m.check(1, False)
        for _ in range(3):
            with contextlib.suppress(ValueError):
                m.check(-1, False)

    fn, source = _function(tmp_path, ALWAYS_RAISES, "check", run)
    assert sum(fn.cuts.values()) == 3
    found = next_paths(fn, path_space(numbering_of(fn.meta)),
                       function_facts(fn, ast.parse(source)))
    assert (found.rank, found.dimension) == (1, 3)
    briefs = [path_brief(fn, p) for p in found.paths]
    # the path a test can take first; then one through fail(), the last resort
    assert briefs[0] == "6 → false · 8 → true · 9"
    assert len(briefs) == 2
    assert briefs[1].startswith("6 → true · 7")
    assert found.unfound == 0
    assert list(found.cut_short) == [found.paths[1].id]
    why = found.cut_short[found.paths[1].id]
    assert isinstance(why, CutShort)
    assert (why.line, why.times) == (7, 3)
    assert str(why) == ("the tests ran this path as far as line 7 3 times, and an "
                        "exception ended it there each time")
    assert str(CutShort(5, 1, 7)) == ("the tests ran this path as far as lines 5-7 once, "
                                      "and an exception ended it there then")


NO_RETURN = """\
    import sys


    def fail(message):
        \"\"\"Stop here.\"\"\"
        raise SystemExit(message)


    def main(args, exit=None):
        if not args:
            sys.exit(2)
        if args[0] == "x":
            fail("no x")
        return 0


    def shadowed(args, fail):
        if not args:
            fail("not the module's")
        return 0
    """


def test_a_statement_that_never_returns_ends_every_path_through_it(tmp_path: Path) -> None:
    """``sys.exit()`` and a module function that only raises: no complete path goes on
    past them; a parameter named like them proves nothing."""
    path = write(tmp_path, NO_RETURN)
    fns = profiles(path, lambda m: None)
    tree = ast.parse(path.read_text())
    claims = {}
    for name in ("main", "shadowed"):
        fn = fns[name]
        facts = function_facts(fn, tree)
        numbering = numbering_of(fn.meta)
        claims[name] = sorted(
            str(why) for n in range(numbering.total)
            if (why := infeasible(fn, decode_paths(fn.meta, {n: 0}, {})[0], facts)))
    # main's 4 paths: through sys.exit (2: then x or not), through fail (1), neither
    assert claims["main"] == [
        "`fail()` on line 13 never returns: a path through it ends there, cut short",
        "`sys.exit()` on line 11 never returns: a path through it ends there, cut short",
        "`sys.exit()` on line 11 never returns: a path through it ends there, cut short"]
    assert claims["shadowed"] == []
