"""Tests for pathprof.analysis.feasibility: the paths the source proves cannot run --
one test both ways, two different equalities, a test of names bound to constants, a
loop over a non-empty literal exhausted at once, a call that never returns -- and what
the prover must not claim: a test whose names were rebound, passed on to a call, are
not the function's own (``global``, rebound by a nested function), or a path that
starts after an iteration. Each function of the source below is checked on every one
of its paths, named by the branches it takes (as ``pathprof.analysis.decisions``
tells them); a property test checks soundness: no path a traced call ran is named."""

from __future__ import annotations

import ast
import sys
import textwrap
from types import FrameType

from hypothesis import given, settings
from hypothesis import strategies as st

from pathprof.analysis.decisions import decisions
from pathprof.analysis.feasibility import Contradiction, function_facts, infeasible
from pathprof.data.profile import FunctionProfile, decode_paths
from pathprof.python.instrument import instrument_source

FILE = "/project/feasible.py"
SOURCE = textwrap.dedent('''\
    import os
    import sys


    def fail(message):
        """Stop."""
        raise SystemExit(message)


    def same(x):
        if x is None:
            a = 1
        else:
            a = 2
        if x is not None:
            a += 1
        return a


    def equal(interp):
        if interp == "cp":
            k = 1
        else:
            k = 2
        if interp == "pp":
            k += 1
        return k


    def constant(flag):
        pos = None
        if flag:
            pos = 3
        if pos is None:
            return 0
        return pos


    def fresh(items):
        errors = []
        for item in items:
            if item < 0:
                errors.append(item)
        if errors:
            return errors
        return None


    def both():
        a = 1
        b = 2
        if a < b:
            return 0
        return 1


    def ranges(k):
        for i in range(3):
            k += i
        for j in range(0):
            k -= j
        return k


    def literal():
        n = 0
        for c in (1, 2):
            n += c
        return n


    def exits(x):
        if x:
            sys.exit(1)
        return 0


    def kills(x):
        if x:
            os._exit(1)
        return 0


    def fails(x):
        if x:
            fail("no")
        return 0


    def shadowed(x, exit):
        if x:
            exit()
        return 0


    def rebound(x, g):
        if x:
            a = 1
        else:
            a = 2
        x = g()
        if x:
            a += 1
        return a


    def called(x, log):
        if x:
            a = 1
        else:
            a = 2
        log(x)
        if x:
            a += 1
        return a


    def identity(x, log):
        if x is None:
            a = 1
        else:
            a = 2
        log(x)
        if x is None:
            a += 1
        return a


    def global_flag():
        global FLAG
        if FLAG:
            a = 1
        else:
            a = 2
        if FLAG:
            a += 1
        return a


    def closure(x):
        def reset():
            nonlocal x
            x = None
        if x:
            a = 1
        else:
            a = 2
        reset()
        if x:
            a += 1
        return a


    def gen(x):
        if x is None:
            yield 1
        if x is None:
            yield 2


    def guarded(x):
        try:
            if x is None:
                v = 1
            else:
                v = 2
        except ValueError:
            v = 3
        if x is None:
            v += 1
        return v


    def alias(x):
        y = x
        if y:
            a = 1
        else:
            a = 2
        if y:
            a += 1
        return a
    ''')
TREE = ast.parse(SOURCE)
_MODULE = instrument_source(SOURCE, FILE).metadata
FUNCTIONS = {meta.qualname: FunctionProfile(FILE, meta.qualname, meta.code_line,
                                            _MODULE.source_hash, meta)
             for meta in _MODULE.functions}

Key = tuple[str, ...]


def verdicts(name: str) -> dict[Key, Contradiction | None]:
    """Every path of ``name``, as (how it starts -- ``entry``, or ``loop-header`` or
    ``handler`` and its first line -- then the branches it takes), and what
    :func:`infeasible` says of it."""
    fn = FUNCTIONS[name]
    facts = function_facts(fn, TREE)
    assert facts is not None
    result: dict[Key, Contradiction | None] = {}
    for number in range(fn.meta.num_paths):
        (path,) = decode_paths(fn.meta, {number: 1}, {})
        start = path.start
        if start != "entry":  # which header or handler: the line of its first block
            span = fn.block_lines(path.blocks[0])
            start += f" {span[0] if span else '?'}"
        key = (start, *(d["taken"] for d in decisions(fn, path)))
        assert key not in result
        result[key] = infeasible(fn, path, facts)
    return result


def proved(name: str) -> dict[Key, tuple[str, int, int, bool]]:
    """The paths of ``name`` proved impossible, with (test, lines, first outcome)."""
    return {key: (why.test, why.first_line, why.second_line, why.first_outcome)
            for key, why in verdicts(name).items() if why is not None}


# ---------------------------------------------------------------------------
# What is proved


def test_one_test_both_ways_is_impossible() -> None:
    # `x is None` on line 11, `x is not None` (the same test, flipped) on line 15
    assert proved("same") == {
        ("entry", "true", "true"): ("x is None", 11, 15, True),
        ("entry", "false", "false"): ("x is None", 11, 15, False)}
    why = verdicts("same")[("entry", "true", "true")]
    assert str(why) == ("`x is None` is true on line 11 but false on line 15, and "
                        "nothing between can change it")
    other = verdicts("same")[("entry", "false", "false")]
    assert str(other) == ("`x is None` is false on line 11 but true on line 15, and "
                          "nothing between can change it")


def test_two_different_equalities_cannot_both_hold() -> None:
    assert proved("equal") == {
        ("entry", "true", "true"): ("interp == 'pp'", 21, 25, True)}
    why = verdicts("equal")[("entry", "true", "true")]
    assert str(why) == ("`interp == 'cp'` is true on line 21, so `interp == 'pp'` cannot "
                        "be true on line 25, and nothing between changes `interp`")


def test_a_test_of_a_name_bound_to_a_constant_has_one_outcome() -> None:
    assert proved("constant") == {
        ("entry", "true", "true"): ("pos is None", 33, 34, False),   # pos = 3
        ("entry", "false", "false"): ("pos is None", 31, 34, True)}  # pos = None
    assert str(verdicts("constant")[("entry", "false", "false")]) == (
        "`pos = None` on line 31, so `pos is None` can only be true on line 34")


def test_a_new_empty_list_is_false_until_something_is_put_in_it() -> None:
    # the loop not run: `errors` is still the `[]` of line 40
    assert proved("fresh") == {
        ("entry", "exhausted", "true"): ("errors", 40, 44, False)}


def test_names_bound_to_constants_together() -> None:
    assert proved("both") == {("entry", "false"): ("a < b", 50, 52, True)}
    assert str(verdicts("both")[("entry", "false")]) == (
        "`a`, `b` set to constants from line 50, so `a < b` can only be true on line 52")


def test_a_loop_over_a_non_empty_literal_is_not_exhausted_at_once() -> None:
    assert proved("literal") == {
        ("entry", "exhausted"): ("for … in (1, 2)", 67, 67, True)}
    assert str(verdicts("literal")[("entry", "exhausted")]) == (
        "the loop on line 67 goes over `(1, 2)`, which is never empty: it cannot be "
        "exhausted before its first item")


def test_a_range_of_constants_is_a_literal_when_it_is_not_empty() -> None:
    found = proved("ranges")
    # range(3) exhausted at once, whatever range(0) does after; range(0) proves nothing
    assert found == {
        ("entry", "exhausted", "next"): ("for … in range(3)", 58, 58, True),
        ("entry", "exhausted", "exhausted"): ("for … in range(3)", 58, 58, True)}


def test_a_call_that_never_returns_ends_every_path_through_it() -> None:
    assert proved("exits") == {("entry", "true"): ("sys.exit()", 74, 74, True)}
    assert str(verdicts("exits")[("entry", "true")]) == (
        "`sys.exit()` on line 74 never returns: a path through it ends there, cut short")
    assert proved("kills") == {("entry", "true"): ("os._exit()", 80, 80, True)}
    # a function of the module whose body (after its docstring) only raises
    assert proved("fails") == {("entry", "true"): ("fail()", 86, 86, True)}


def test_identity_tests_survive_calls_and_yields() -> None:
    assert proved("identity") == {
        ("entry", "true", "false"): ("x is None", 119, 124, True),
        ("entry", "false", "true"): ("x is None", 119, 124, False)}
    assert set(proved("gen")) == {("entry", "true", "false"), ("entry", "false", "true")}


def test_a_name_copied_from_another_is_still_known_by_its_own_tests() -> None:
    assert proved("alias") == {
        ("entry", "true", "false"): ("y", 176, 180, True),
        ("entry", "false", "true"): ("y", 176, 180, False)}


def test_a_try_body_is_followed_through_and_a_handler_knows_nothing() -> None:
    found = proved("guarded")
    assert found == {("entry", "true", "false"): ("x is None", 163, 169, True),
                     ("entry", "false", "true"): ("x is None", 163, 169, False)}
    facts = function_facts(FUNCTIONS["guarded"], TREE)
    assert facts is not None
    assert facts.guarded_lines == frozenset({163, 164, 165, 166})


# ---------------------------------------------------------------------------
# What must not be claimed


def test_nothing_is_proved_where_something_between_can_change_the_test() -> None:
    # rebound: `x = g()`; called: `log(x)` passes x on (a list may be emptied);
    # global_flag: FLAG is not the function's own; closure: reset() rebinds x;
    # shadowed: `exit` is a parameter, not the builtin
    for name in ("rebound", "called", "global_flag", "closure", "shadowed"):
        assert proved(name) == {}, name
    assert all(why is None for why in verdicts("called").values())


def test_a_path_after_an_iteration_may_follow_any_earlier_one() -> None:
    for name in ("fresh", "literal", "ranges"):
        assert all(key[0] == "entry" for key in proved(name)), name
    # the same tests from a loop's header: exhausted after an iteration can run
    assert verdicts("literal")[("loop-header 67", "exhausted")] is None
    assert verdicts("ranges")[("loop-header 58", "exhausted", "exhausted")] is None
    assert verdicts("fresh")[("loop-header 41", "exhausted", "true")] is None
    # and a handler starts knowing nothing of what the try body tested
    assert verdicts("guarded")[("handler 168", "false")] is None


def test_a_source_without_the_function_gives_no_facts() -> None:
    assert function_facts(FUNCTIONS["same"], ast.parse("def other():\n    pass\n")) is None
    # the same name on another line is another version of it
    assert function_facts(FUNCTIONS["same"], ast.parse("\n\ndef same(x):\n    pass\n")) is None


def test_facts_say_which_functions_suspend_and_which_loops_are_never_empty() -> None:
    facts = {name: function_facts(fn, TREE) for name, fn in FUNCTIONS.items()}
    assert {name for name, f in facts.items() if f is not None and f.suspends} == {"gen"}
    literal = facts["literal"]
    assert literal is not None
    (loop,) = literal.nonempty_loops.values()
    assert loop[1:] == (67, "(1, 2)")
    same = facts["same"]
    assert same is not None
    assert same.local == frozenset({"x", "a"})
    global_flag = facts["global_flag"]
    assert global_flag is not None
    assert "FLAG" not in global_flag.local


def test_a_contradiction_with_its_own_words_says_them() -> None:
    why = Contradiction("t", 1, 2, detail="said otherwise")
    assert str(why) == "said otherwise"
    assert str(Contradiction("t", 3, 4)) == (
        "`t` is true on line 3 but false on line 4, and nothing between can change it")


# ---------------------------------------------------------------------------
# Soundness: no path that runs is named


RUNNABLE = textwrap.dedent('''\
    def f(a, b, items):
        c = None
        if a is None:
            c = 1
        if b == 1:
            items = []
        for x in items:
            if x:
                c = 2
        if b == 2:
            c = 3
        if a is not None:
            return c
        if c is None:
            return 0
        return 1
    ''')


def _runnable() -> tuple[FunctionProfile, object]:
    module = instrument_source(RUNNABLE, FILE).metadata
    meta = module.functions[0]
    fn = FunctionProfile(FILE, meta.qualname, meta.code_line, module.source_hash, meta)
    namespace: dict[str, object] = {}
    exec(compile(RUNNABLE, FILE, "exec"), namespace)
    return fn, namespace["f"]


RUNNABLE_FN, RUNNABLE_CALL = _runnable()


def _first_segment(a: int | None, b: int, items: list[bool]) -> set[int]:
    """The lines a call of RUNNABLE's ``f`` runs from its entry to its first backedge
    (the first line not after the one before) or its return, traced by Python."""
    lines: list[int] = []

    def trace(frame: FrameType, event: str, arg: object) -> object:
        if frame.f_code.co_name == "f" and event == "line":
            lines.append(frame.f_lineno)
        return trace

    previous = sys.gettrace()
    sys.settrace(trace)  # type: ignore[arg-type]
    try:
        RUNNABLE_CALL(a, b, list(items))  # type: ignore[operator]
    finally:
        sys.settrace(previous)
    segment = lines[:1]
    for line in lines[1:]:
        if line < segment[-1]:
            break
        segment.append(line)
    return set(segment)


def test_some_paths_of_the_runnable_function_are_proved_impossible() -> None:
    # (or the property below would check nothing): `a is None` true, then
    # `a is not None` true on line 12
    facts = function_facts(RUNNABLE_FN, ast.parse(RUNNABLE))
    assert facts is not None
    named = [n for n in range(RUNNABLE_FN.meta.num_paths)
             if infeasible(RUNNABLE_FN, decode_paths(RUNNABLE_FN.meta, {n: 1}, {})[0], facts)]
    assert len(named) >= 4


@settings(max_examples=50, deadline=None)
@given(st.sampled_from([None, 0, 1]), st.sampled_from([0, 1, 2]),
       st.lists(st.booleans(), max_size=3))
def test_no_path_a_call_runs_is_proved_impossible(a: int | None, b: int,
                                                  items: list[bool]) -> None:
    """The path a real call starts with, found by tracing its lines (not by the
    numbering), is never named impossible."""
    fn = RUNNABLE_FN
    facts = function_facts(fn, ast.parse(RUNNABLE))
    assert facts is not None
    ran = _first_segment(a, b, items)
    matching = []
    for number in range(fn.meta.num_paths):
        (path,) = decode_paths(fn.meta, {number: 1}, {})
        lines = {piece.line for block in path.blocks for piece in fn.meta.blocks[block].pieces}
        if path.start == "entry" and lines == ran:
            matching.append(path)
    assert len(matching) == 1, (ran, matching)
    assert infeasible(fn, matching[0], facts) is None
