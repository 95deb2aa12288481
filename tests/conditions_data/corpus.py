'''A hand-counted corpus of decisions, condition vectors and MC/DC verdicts.

Every expected vector, count and verdict below was worked out by hand from the
definitions (the comments give the reasoning where it is not plain): a test runs each
case's ``calls`` on its ``function`` (catching what they raise) and compares what
a tool records for that function's decisions with ``decisions``.

Vectors are ``((value of each condition, ...), outcome)`` with ``N`` (None) for a
condition short-circuit left unevaluated; ``raised`` counts evaluations that
raised in a condition (0-based) and so have no vector.
'''

from __future__ import annotations

import textwrap
from typing import Any

T, F, N = True, False, None


def _src(text: str) -> str:
    return textwrap.dedent(text)


def _decision(
    line: int,
    conditions: tuple[str, ...],
    vectors: dict[tuple[tuple[bool | None, ...], bool], int],
    *,
    covered: tuple[bool, ...],
    unique: tuple[bool, ...],
    masking: tuple[bool, ...],
    raised: dict[int, int] | None = None,
) -> dict[str, Any]:
    return dict(
        line=line,
        conditions=conditions,
        vectors=vectors,
        raised=raised or {},
        condition_covered=covered,
        mcdc_unique=unique,
        mcdc_masking=masking,
    )


def _all(value: bool, count: int) -> dict[str, tuple[bool, ...]]:
    """The same verdict for each of ``count`` conditions, for all three criteria."""
    return dict(covered=(value,) * count, unique=(value,) * count, masking=(value,) * count)


CASES: list[dict[str, Any]] = [
    # ------------------------------------------------------------------ basic shapes
    dict(
        name="and_of_two",
        source=_src("""\
            def f(a, b):
                if a and b:
                    return 1
                return 0
            """),
        function="f",
        calls=[(T, T), (T, F), (F, T)],
        decisions=[
            _decision(2, ("a", "b"),
                      {((T, T), T): 1, ((T, F), F): 1, ((F, N), F): 1},
                      **_all(T, 2)),
        ],
    ),
    dict(
        # b is never True: neither covered nor shown independent
        name="or_of_two_partial",
        source=_src("""\
            def f(a, b):
                if a or b:
                    return 1
                return 0
            """),
        function="f",
        calls=[(F, F), (T, F)],
        decisions=[
            _decision(2, ("a", "b"),
                      {((F, F), F): 1, ((T, N), T): 1},
                      covered=(T, F), unique=(T, F), masking=(T, F)),
        ],
    ),
    dict(
        name="single_comparison",
        source=_src("""\
            def f(x):
                if x > 0:
                    return 1
                return 0
            """),
        function="f",
        calls=[(1,), (2,), (-1,)],
        decisions=[
            _decision(2, ("x > 0",), {((T,), T): 2, ((F,), F): 1}, **_all(T, 1)),
        ],
    ),
    dict(
        # the truth value is Python's: () and "" are False, (0,) is True
        name="not_of_truthiness",
        source=_src("""\
            def f(items):
                if not items:
                    return 'empty'
                return 'full'
            """),
        function="f",
        calls=[((),), ((0,),), ("",)],
        decisions=[
            _decision(2, ("items",), {((F,), T): 2, ((T,), F): 1}, **_all(T, 1)),
        ],
    ),
    dict(
        name="three_and_full",
        source=_src("""\
            def f(a, b, c):
                if a and b and c:
                    return 1
                return 0
            """),
        function="f",
        calls=[(T, T, T), (T, T, F), (T, F, T), (F, T, T)],
        decisions=[
            _decision(2, ("a", "b", "c"),
                      {((T, T, T), T): 1, ((T, T, F), F): 1, ((T, F, N), F): 1,
                       ((F, N, N), F): 1},
                      **_all(T, 3)),
        ],
    ),
    dict(
        name="three_or_partial",
        source=_src("""\
            def f(a, b, c):
                if a or b or c:
                    return 1
                return 0
            """),
        function="f",
        calls=[(F, F, F), (F, F, T), (T, F, F)],
        decisions=[
            _decision(2, ("a", "b", "c"),
                      {((F, F, F), F): 1, ((F, F, T), T): 1, ((T, N, N), T): 1},
                      covered=(T, F, T), unique=(T, F, T), masking=(T, F, T)),
        ],
    ),
    # ------------------------------------------------------------------ unique vs masking
    dict(
        # (T,T,-)->T against (F,-,F)->F: b and c are None in one of the two, so the pair
        # is unique-cause for a (None is no difference); b, c are seen one way only
        name="and_or_none_is_no_difference",
        source=_src("""\
            def f(a, b, c):
                if a and b or c:
                    return 1
                return 0
            """),
        function="f",
        calls=[(T, T, F), (F, T, F)],
        decisions=[
            _decision(2, ("a", "b", "c"),
                      {((T, T, N), T): 1, ((F, N, F), F): 1},
                      covered=(T, F, F), unique=(T, F, F), masking=(T, F, F)),
        ],
    ),
    dict(
        # (F,T,T)->T against (T,-,F)->F: c flips with a; a is masked in both (b True in
        # one, c False in the other), so c has masking MC/DC only. For a, c differs and
        # decides the first vector: no pair.
        name="masking_only_or_then_and",
        source=_src("""\
            def f(a, b, c):
                if (a or b) and c:
                    return 1
                return 0
            """),
        function="f",
        calls=[(F, T, T), (T, F, F)],
        decisions=[
            _decision(2, ("a", "b", "c"),
                      {((F, T, T), T): 1, ((T, N, F), F): 1},
                      covered=(T, F, T), unique=(F, F, F), masking=(F, F, T)),
        ],
    ),
    dict(
        # (F,-,T)->T against (T,F,F)->F: a is masked in both (c True decides the first;
        # b False kills a's term in the second), c is not masked in (F,-,T)
        name="masking_only_and_then_or",
        source=_src("""\
            def f(a, b, c):
                if a and b or c:
                    return 1
                return 0
            """),
        function="f",
        calls=[(F, T, T), (T, F, F)],
        decisions=[
            _decision(2, ("a", "b", "c"),
                      {((F, N, T), T): 1, ((T, F, F), F): 1},
                      covered=(T, F, T), unique=(F, F, F), masking=(F, F, T)),
        ],
    ),
    # ------------------------------------------------------------------ nesting
    dict(
        name="or_and_or_full",
        source=_src("""\
            def f(a, b, c, d):
                if (a or b) and (c or d):
                    return 1
                return 0
            """),
        function="f",
        calls=[(T, F, T, F), (F, F, T, T), (F, T, F, F), (F, T, F, T), (T, F, F, F)],
        decisions=[
            _decision(2, ("a", "b", "c", "d"),
                      {((T, N, T, N), T): 1, ((F, F, N, N), F): 1, ((F, T, F, F), F): 1,
                       ((F, T, F, T), T): 1, ((T, N, F, F), F): 1},
                      **_all(T, 4)),
        ],
    ),
    dict(
        name="and_or_and_nested_full",
        source=_src("""\
            def f(a, b, c, d):
                if a and (b or (c and d)):
                    return 1
                return 0
            """),
        function="f",
        calls=[(T, T, F, F), (T, F, T, T), (T, F, T, F), (F, T, T, T), (T, F, F, T),
               (T, T, T, T)],
        decisions=[
            _decision(2, ("a", "b", "c", "d"),
                      {((T, T, N, N), T): 2, ((T, F, T, T), T): 1, ((T, F, T, F), F): 1,
                       ((F, N, N, N), F): 1, ((T, F, F, N), F): 1},
                      **_all(T, 4)),
        ],
    ),
    dict(
        name="not_over_and_with_call",
        source=_src("""\
            def f(x):
                return x
            def g(a, b, c):
                if not (a and f(b)) or c > 1:
                    return 1
                return 0
            """),
        function="g",
        calls=[(T, T, 0), (T, T, 5), (F, T, 0), (T, F, 0)],
        decisions=[
            _decision(4, ("a", "f(b)", "c > 1"),
                      {((T, T, F), F): 1, ((T, T, T), T): 1, ((F, N, N), T): 1,
                       ((T, F, N), T): 1},
                      **_all(T, 3)),
        ],
    ),
    dict(
        name="not_of_nots",
        source=_src("""\
            def f(a, b):
                if not (not a or not b):
                    return 1
                return 0
            """),
        function="f",
        calls=[(T, T), (F, T)],
        decisions=[
            _decision(2, ("a", "b"),
                      {((T, T), T): 1, ((F, N), F): 1},
                      covered=(T, F), unique=(T, F), masking=(T, F)),
        ],
    ),
    dict(
        # b: its True vector (T,T,-,F)->F differs from (T,F,F,T)->T in d too, and d
        # decides the first. d: against (T,T,-,F)->F, (T,F,F,T)->T differs in b, which
        # is masked in both (b or not c is True either way; d False ends the other).
        name="not_at_three_levels",
        source=_src("""\
            def f(a, b, c, d):
                if not (a and not (b or not c)) and d:
                    return 1
                return 0
            """),
        function="f",
        calls=[(F, T, T, T), (T, T, T, F), (T, F, T, T), (T, F, F, T)],
        decisions=[
            _decision(2, ("a", "b", "c", "d"),
                      {((F, N, N, T), T): 1, ((T, T, N, F), F): 1, ((T, F, T, N), F): 1,
                       ((T, F, F, T), T): 1},
                      covered=(T, T, T, T), unique=(T, F, T, F), masking=(T, F, T, T)),
        ],
    ),
    dict(
        name="five_mixed",
        source=_src("""\
            def f(a, b, c, d, e):
                if a or b and c or d and e:
                    return 1
                return 0
            """),
        function="f",
        calls=[(F, T, T, F, F), (F, T, F, T, F), (T, F, F, F, F), (F, F, T, T, T)],
        decisions=[
            _decision(2, ("a", "b", "c", "d", "e"),
                      {((F, T, T, N, N), T): 1, ((F, T, F, T, F), F): 1,
                       ((T, N, N, N, N), T): 1, ((F, F, N, T, T), T): 1},
                      covered=(T, T, T, F, T), unique=(T, F, T, F, F),
                      masking=(T, F, T, F, T)),
        ],
    ),
    dict(
        name="six_full",
        source=_src("""\
            def f(a, b, c, d, e, g):
                if (a or b) and (c or d) and not (e and g):
                    return 1
                return 0
            """),
        function="f",
        calls=[(T, F, T, F, F, F), (F, F, T, T, T, T), (F, T, F, F, T, T),
               (F, T, F, T, T, T), (F, T, F, T, T, F), (T, F, T, F, T, T),
               (F, T, F, T, F, F), (T, F, F, F, T, T)],
        decisions=[
            _decision(2, ("a", "b", "c", "d", "e", "g"),
                      {((T, N, T, N, F, N), T): 1, ((F, F, N, N, N, N), F): 1,
                       ((F, T, F, F, N, N), F): 1, ((F, T, F, T, T, T), F): 1,
                       ((F, T, F, T, T, F), T): 1, ((T, N, T, N, T, T), F): 1,
                       ((F, T, F, T, F, N), T): 1, ((T, N, F, F, N, N), F): 1},
                      **_all(T, 6)),
        ],
    ),
    dict(
        # `g(a and b)` and `(a or b) == c` are one condition each
        name="boolops_inside_a_condition",
        source=_src("""\
            def g(v):
                return v
            def f(a, b, c):
                if g(a and b) or (a or b) == c:
                    return 1
                return 0
            """),
        function="f",
        calls=[(1, 2, 0), (0, 5, 5), (0, 0, 1)],
        decisions=[
            _decision(4, ("g(a and b)", "(a or b) == c"),
                      {((T, N), T): 1, ((F, T), T): 1, ((F, F), F): 1},
                      **_all(T, 2)),
        ],
    ),
    dict(
        # only the `if` is a decision: the assigned and returned boolean expressions are not
        name="assigned_and_returned_are_not_decisions",
        source=_src("""\
            def f(a, b, c):
                both = a and b
                if both or c:
                    return a or c
                return not (b and c)
            """),
        function="f",
        calls=[(1, 1, 0), (0, 1, 0), (1, 0, 1)],
        decisions=[
            _decision(3, ("both", "c"),
                      {((T, N), T): 1, ((F, F), F): 1, ((F, T), T): 1},
                      **_all(T, 2)),
        ],
    ),
    dict(
        name="walrus",
        source=_src("""\
            def f(x):
                if (n := len(x)) > 3 and n % 2 == 0:
                    return n
                return -1
            """),
        function="f",
        calls=[((1, 2, 3, 4),), ((1, 2, 3, 4, 5),), ((1,),)],
        decisions=[
            _decision(2, ("(n := len(x)) > 3", "n % 2 == 0"),
                      {((T, T), T): 1, ((T, F), F): 1, ((F, N), F): 1},
                      **_all(T, 2)),
        ],
    ),
    # ------------------------------------------------------------------ side effects
    dict(
        # first_time appends: evaluating a condition twice would change its value
        name="side_effect_append",
        source=_src("""\
            SEEN = []
            def first_time(v):
                new = v not in SEEN
                SEEN.append(v)
                return new
            def f(a, b):
                if first_time(a) and first_time(b):
                    return 1
                return 0
            """),
        function="f",
        calls=[(1, 2), (1, 3), (3, 2), (4, 4)],
        decisions=[
            _decision(7, ("first_time(a)", "first_time(b)"),
                      {((T, T), T): 1, ((F, N), F): 1, ((T, F), F): 2},
                      **_all(T, 2)),
        ],
    ),
    dict(
        # bump() returns 1, 2 | 3 | 4, 5 | 6, 7 over the four calls
        name="side_effect_global_counter",
        source=_src("""\
            COUNT = 0
            def bump():
                global COUNT
                COUNT += 1
                return COUNT
            def f(limit):
                if bump() > limit and bump() % 2 == 0:
                    return 1
                return 0
            """),
        function="f",
        calls=[(0,), (5,), (0,), (0,)],
        decisions=[
            _decision(7, ("bump() > limit", "bump() % 2 == 0"),
                      {((T, T), T): 1, ((F, N), F): 1, ((T, F), F): 2},
                      **_all(T, 2)),
        ],
    ),
    dict(
        # __bool__ flips the value it returns: a second truth test of an operand (by the
        # tool, say) would send Python the other way. The while test runs 2 + 1 + 3 times.
        name="toggling_bool_in_while",
        source=_src("""\
            class Toggle:
                def __init__(self, v):
                    self.v = v
                def __bool__(self):
                    v = self.v
                    self.v = not v
                    return v
            def f(x, y):
                a, b = Toggle(x), Toggle(y)
                n = 0
                while (a or b) and n < 5:
                    n += 1
                return n
            """),
        function="f",
        calls=[(T, F), (F, F), (F, T)],
        decisions=[
            _decision(11, ("a", "b", "n < 5"),
                      {((T, N, T), T): 2, ((F, F, N), F): 3, ((F, T, T), T): 1},
                      covered=(T, T, F), unique=(T, T, F), masking=(T, T, F)),
        ],
    ),
    dict(
        # tick() counts 1..7 across the calls: stop=3 runs the test 3 times, stop=0 twice
        # (not n with n == 0 keeps it going once), stop=7 twice
        name="while_counter_or_not",
        source=_src("""\
            TICKS = [0]
            def tick():
                TICKS[0] += 1
                return TICKS[0]
            def f(stop):
                n = 0
                while tick() < stop or not n:
                    n += 1
                return n
            """),
        function="f",
        calls=[(3,), (0,), (7,)],
        decisions=[
            _decision(7, ("tick() < stop", "n"),
                      {((T, N), T): 3, ((F, T), F): 3, ((F, F), T): 1},
                      **_all(T, 2)),
        ],
    ),
    # ------------------------------------------------------------------ exceptions
    dict(
        # 10 // 0 raises in the property: twice, in condition 1
        name="raise_in_property",
        source=_src("""\
            class Box:
                def __init__(self, raw):
                    self.raw = raw
                @property
                def value(self):
                    return 10 // self.raw
            def make(raw):
                return None if raw is None else Box(raw)
            def f(raw):
                x = make(raw)
                if x is not None and x.value > 0:
                    return 1
                return 0
            """),
        function="f",
        calls=[(5,), (None,), (0,), (-5,), (0,)],
        decisions=[
            _decision(11, ("x is not None", "x.value > 0"),
                      {((T, T), T): 1, ((F, N), F): 1, ((T, F), F): 1},
                      raised={1: 2}, **_all(T, 2)),
        ],
    ),
    dict(
        name="raise_in_first_condition",
        source=_src("""\
            def f(d, flag):
                if 1 / d > 0 or flag:
                    return 1
                return 0
            """),
        function="f",
        calls=[(0, T), (2, F), (-1, F), (-1, T)],
        decisions=[
            _decision(2, ("1 / d > 0", "flag"),
                      {((T, N), T): 1, ((F, F), F): 1, ((F, T), T): 1},
                      raised={0: 1}, **_all(T, 2)),
        ],
    ),
    dict(
        # a condition's own __bool__ raises (the ValueError of Doubt), not a call in it:
        # once in condition 0, once in condition 1 (on 3.11 the jump that asks the truth
        # is located at the whole statement; the raise went uncounted)
        name="raise_in_a_conditions_truth",
        source=_src("""\
            class Doubt:
                def __bool__(self):
                    raise ValueError("no truth")


            DOUBT = Doubt()


            def f(a, b):
                x = (a, DOUBT)[a is None]
                y = (b, DOUBT)[b is None]
                if x and y:
                    return 1
                return 0
            """),
        function="f",
        calls=[(T, T), (T, F), (F, T), (None, T), (T, None)],
        decisions=[
            _decision(12, ("x", "y"),
                      {((T, T), T): 1, ((T, F), F): 1, ((F, N), F): 1},
                      raised={0: 1, 1: 1}, **_all(T, 2)),
        ],
    ),
    dict(
        # a is False only in evaluations that raised: those are no vectors, so a is not
        # covered (and the decision has one vector)
        name="raise_hides_a_value",
        source=_src("""\
            def f(a, d):
                if a or 1 / d > 0:
                    return 1
                return 0
            """),
        function="f",
        calls=[(F, 0), (T, 1), (F, 0)],
        decisions=[
            _decision(2, ("a", "1 / d > 0"), {((T, N), T): 1},
                      raised={1: 2}, **_all(F, 2)),
        ],
    ),
    dict(
        # the exception is caught inside the loop and the decision evaluated again
        name="raise_caught_in_loop",
        source=_src("""\
            def f(items):
                total = 0
                for it in items:
                    try:
                        if it[0] and it[1] > 0:
                            total += 1
                    except IndexError:
                        total -= 1
                return total
            """),
        function="f",
        calls=[(((1, 2), (1,), (0,), (1, -1), ()),)],
        decisions=[
            _decision(5, ("it[0]", "it[1] > 0"),
                      {((T, T), T): 1, ((F, N), F): 1, ((T, F), F): 1},
                      raised={1: 1, 0: 1}, **_all(T, 2)),
        ],
    ),
    # ------------------------------------------------------------------ statement kinds
    dict(
        name="elif_chain",
        source=_src("""\
            def classify(n):
                if n < 0:
                    return 'neg'
                elif n == 0 or n > 100:
                    return 'edge'
                elif n % 2 == 0 and not n % 3:
                    return 'six'
                else:
                    return 'other'
            """),
        function="classify",
        calls=[(-1,), (0,), (200,), (6,), (4,), (7,), (-5,)],
        decisions=[
            _decision(2, ("n < 0",), {((T,), T): 2, ((F,), F): 5}, **_all(T, 1)),
            _decision(4, ("n == 0", "n > 100"),
                      {((T, N), T): 1, ((F, T), T): 1, ((F, F), F): 3},
                      **_all(T, 2)),
            _decision(6, ("n % 2 == 0", "n % 3"),
                      {((T, F), T): 1, ((T, T), F): 1, ((F, N), F): 1},
                      **_all(T, 2)),
        ],
    ),
    dict(
        # Collatz: 6 takes 8 steps (evens 6 10 16 8 4 2, odds 3 5); 1 takes none; 27 is
        # stopped after 10 steps (evens 82 124 62 94 142, odds 27 41 31 47 71)
        name="while_and_conditional_expression",
        source=_src("""\
            def f(n):
                steps = 0
                while n > 1 and steps < 10:
                    n = n // 2 if n % 2 == 0 else 3 * n + 1
                    steps += 1
                return steps
            """),
        function="f",
        calls=[(6,), (1,), (27,)],
        decisions=[
            _decision(3, ("n > 1", "steps < 10"),
                      {((T, T), T): 18, ((F, N), F): 2, ((T, F), F): 1},
                      **_all(T, 2)),
            _decision(4, ("n % 2 == 0",), {((T,), T): 11, ((F,), F): 7}, **_all(T, 1)),
        ],
    ),
    dict(
        name="while_pops",
        source=_src("""\
            def f(items):
                items = list(items)
                seen = []
                while items and items[-1] != 0:
                    seen.append(items.pop())
                return seen
            """),
        function="f",
        calls=[((1, 2),), ((0, 3),)],
        decisions=[
            _decision(4, ("items", "items[-1] != 0"),
                      {((T, T), T): 3, ((F, N), F): 1, ((T, F), F): 1},
                      **_all(T, 2)),
        ],
    ),
    dict(
        # a returned conditional expression: its test is a decision
        name="conditional_expression_or",
        source=_src("""\
            def f(a, b):
                return 'yes' if a or b else 'no'
            """),
        function="f",
        calls=[(0, 0), (0, 1), (1, 0)],
        decisions=[
            _decision(2, ("a", "b"),
                      {((F, F), F): 1, ((F, T), T): 1, ((T, N), T): 1},
                      **_all(T, 2)),
        ],
    ),
    dict(
        # a failing assert still evaluated its test (outcome False) and raised after
        name="assert_or",
        source=_src("""\
            def f(x, y):
                assert x > 0 or y, 'bad'
                return x
            """),
        function="f",
        calls=[(1, 0), (0, 1), (0, 0), (-1, 0)],
        decisions=[
            _decision(2, ("x > 0", "y"),
                      {((T, N), T): 1, ((F, T), T): 1, ((F, F), F): 2},
                      **_all(T, 2)),
        ],
    ),
    dict(
        # ('a',)[0] > 0 raises TypeError in condition 1
        name="assert_not_with_raise",
        source=_src("""\
            def f(xs):
                assert not xs or xs[0] > 0
                return 1
            """),
        function="f",
        calls=[((),), ((1,),), ((-1,),), (None,), (("a",),)],
        decisions=[
            _decision(2, ("xs", "xs[0] > 0"),
                      {((F, N), T): 2, ((T, T), T): 1, ((T, F), F): 1},
                      raised={1: 1}, **_all(T, 2)),
        ],
    ),
    dict(
        # a guard runs only when its pattern matched: (1, 2, 3) matches neither
        name="match_guards",
        source=_src("""\
            def f(cmd):
                match cmd:
                    case (op, n) if op == 'add' and n > 0:
                        return n
                    case (op, _) if op == 'neg' or op == 'not':
                        return -1
                    case _:
                        return 0
            """),
        function="f",
        calls=[(("add", 2),), (("add", -1),), (("neg", 1),), (("not", 1),), ((1, 2, 3),)],
        decisions=[
            _decision(3, ("op == 'add'", "n > 0"),
                      {((T, T), T): 1, ((T, F), F): 1, ((F, N), F): 2},
                      **_all(T, 2)),
            _decision(5, ("op == 'neg'", "op == 'not'"),
                      {((F, F), F): 1, ((T, N), T): 1, ((F, T), T): 1},
                      **_all(T, 2)),
        ],
    ),
    dict(
        # a decision never reached has no vectors and covers nothing
        name="never_evaluated",
        source=_src("""\
            def f(x):
                if x is None:
                    return 0
                while x > 0 and x % 7:
                    x -= 3
                return x
            """),
        function="f",
        calls=[(None,)],
        decisions=[
            _decision(2, ("x is None",), {((T,), T): 1}, **_all(F, 1)),
            _decision(4, ("x > 0", "x % 7"), {}, **_all(F, 2)),
        ],
    ),
    dict(
        # the test starts at its parenthesis on line 2; the conditional expression's test
        # is on line 5. a: its pair differs in c, which decides (F,-,T). c: against
        # (T,F,F)->F, (F,-,T)->T differs in a, masked in both.
        name="multiline_tests",
        source=_src("""\
            def f(a, b, c):
                if (a and
                        b) or c:
                    y = (10
                         if c
                         else 20)
                    return y
                return 0
            """),
        function="f",
        calls=[(T, T, F), (T, F, F), (F, T, T)],
        decisions=[
            _decision(2, ("a", "b", "c"),
                      {((T, T, N), T): 1, ((T, F, F), F): 1, ((F, N, T), T): 1},
                      covered=(T, T, T), unique=(F, T, F), masking=(F, T, T)),
            _decision(5, ("c",), {((F,), F): 1, ((T,), T): 1}, **_all(T, 1)),
        ],
    ),
    # ------------------------------------------------------------------ comprehensions
    dict(
        name="comprehension_if",
        source=_src("""\
            def f(xs, lo):
                return [x for x in xs if x > lo and x % 2]
            """),
        function="f",
        calls=[((1, 2, 3, 4, 5), 2), ((), 0)],
        decisions=[
            _decision(2, ("x > lo", "x % 2"),
                      {((F, N), F): 2, ((T, T), T): 2, ((T, F), F): 1},
                      **_all(T, 2)),
        ],
    ),
    dict(
        # two if clauses: the second only runs for words the first let through
        name="dict_comprehension_two_ifs",
        source=_src("""\
            def f(words):
                return {w: len(w) for w in words if w if not w.startswith('_')}
            """),
        function="f",
        calls=[(("a", "", "_b", "c"),)],
        decisions=[
            _decision(2, ("w",), {((T,), T): 3, ((F,), F): 1}, **_all(T, 1)),
            _decision(2, ("w.startswith('_')",), {((F,), T): 2, ((T,), F): 1},
                      **_all(T, 1)),
        ],
    ),
    dict(
        name="comprehension_walrus_not",
        source=_src("""\
            def f(rows):
                return [y for r in rows if (y := sum(r)) > 2 or not r]
            """),
        function="f",
        calls=[(((1, 2), (), (5,), (0, 1)),)],
        decisions=[
            _decision(2, ("(y := sum(r)) > 2", "r"),
                      {((T, N), T): 2, ((F, F), T): 1, ((F, T), F): 1},
                      **_all(T, 2)),
        ],
    ),
    dict(
        # the inner comprehension's `if x` comes first in the source, so first in order,
        # though the outer `if r` runs first
        name="nested_comprehensions_order",
        source=_src("""\
            def f(rows):
                return [[x for x in r if x] for r in rows if r]
            """),
        function="f",
        calls=[(((1, 0, 2), (), (0,)),)],
        decisions=[
            _decision(2, ("x",), {((T,), T): 2, ((F,), F): 2}, **_all(T, 1)),
            _decision(2, ("r",), {((T,), T): 2, ((F,), F): 1}, **_all(T, 1)),
        ],
    ),
    dict(
        # any() stops the generator at the first element above lim: (4, 0) tests 4 only
        name="generator_expression_in_condition",
        source=_src("""\
            def f(xs, lim, ys):
                if any(x for x in xs if x > lim) or not ys:
                    return 1
                return 0
            """),
        function="f",
        calls=[((1, 5), 3, ()), ((1, 2), 3, (1,)), ((0,), 3, ()), ((4, 0), 3, (1,))],
        decisions=[
            _decision(2, ("any((x for x in xs if x > lim))", "ys"),
                      {((T, N), T): 2, ((F, T), F): 1, ((F, F), T): 1},
                      **_all(T, 2)),
            _decision(2, ("x > lim",), {((F,), F): 4, ((T,), T): 2}, **_all(T, 1)),
        ],
    ),
    # ------------------------------------------------------------------ scopes
    dict(
        # the conditional expression inside the first condition is a decision of its own,
        # second in order: the `and` starts at the parenthesis before it
        name="decision_inside_a_condition",
        source=_src("""\
            def f(a, x, y, b):
                if (x if a else y) and b:
                    return 1
                return 0
            """),
        function="f",
        calls=[(1, 1, 0, 1), (0, 1, 0, 1), (0, 0, 1, 0), (1, 0, 1, 1)],
        decisions=[
            _decision(2, ("x if a else y", "b"),
                      {((T, T), T): 1, ((F, N), F): 2, ((T, F), F): 1},
                      **_all(T, 2)),
            _decision(2, ("a",), {((T,), T): 2, ((F,), F): 2}, **_all(T, 1)),
        ],
    ),
    dict(
        # the lambda's `and` is its return value (and the lambda's): f has one decision
        name="lambda_inside_a_condition",
        source=_src("""\
            def f(xs, flag):
                if any(map(lambda v: v > 2 and v < 9, xs)) and flag:
                    return 1
                return 0
            """),
        function="f",
        calls=[((1, 5), T), ((1, 10), T), ((3,), F)],
        decisions=[
            _decision(2, ("any(map(lambda v: v > 2 and v < 9, xs))", "flag"),
                      {((T, T), T): 1, ((F, N), F): 1, ((T, F), F): 1},
                      **_all(T, 2)),
        ],
    ),
    dict(
        # keep()'s conditional expression belongs to keep; the comprehension's if to f
        name="nested_function_is_not_the_outer",
        source=_src("""\
            def f(xs, k):
                def keep(v):
                    return v % k == 0 if v else False
                if xs and k:
                    return [v for v in xs if keep(v)]
                return []
            """),
        function="f",
        calls=[((0, 3, 4, 6), 3), ((), 3), ((1,), 0)],
        decisions=[
            _decision(4, ("xs", "k"),
                      {((T, T), T): 1, ((F, N), F): 1, ((T, F), F): 1},
                      **_all(T, 2)),
            _decision(5, ("keep(v)",), {((F,), F): 2, ((T,), T): 2}, **_all(T, 1)),
        ],
    ),
    dict(
        # a chained comparison is one condition
        name="classmethod_chained_comparison",
        source=_src("""\
            class Gate:
                limit = 3
                @classmethod
                def admits(cls, n, vip):
                    if vip or 0 < n <= cls.limit:
                        return True
                    return False
            """),
        function="Gate.admits",
        calls=[(2, F), (5, F), (0, T), (0, F)],
        decisions=[
            _decision(5, ("vip", "0 < n <= cls.limit"),
                      {((F, T), T): 1, ((F, F), F): 2, ((T, N), T): 1},
                      **_all(T, 2)),
        ],
    ),
    dict(
        # called through the class with self=None (self is not used)
        name="plain_method",
        source=_src("""\
            class Helper:
                def parity(self, n, strict):
                    if n % 2 == 0 and (strict or n):
                        return 'even'
                    return 'odd'
            """),
        function="Helper.parity",
        calls=[(None, 4, F), (None, 0, F), (None, 0, T), (None, 3, T)],
        decisions=[
            _decision(3, ("n % 2 == 0", "strict", "n"),
                      {((T, F, T), T): 1, ((T, F, F), F): 1, ((T, T, N), T): 1,
                       ((F, N, N), F): 1},
                      **_all(T, 3)),
        ],
    ),
    dict(
        # (2, T, F): tests (T,T,-) then (T,F,F); (3, F, T): (T,F,T) (T,T,-) (T,F,T) (F,-,-)
        name="nested_class_staticmethod_while",
        source=_src("""\
            class Outer:
                class Inner:
                    @staticmethod
                    def check(a, b, c):
                        while a > 0 and (b or c):
                            a -= 1
                            b = not b
                        return a
            """),
        function="Outer.Inner.check",
        calls=[(2, T, F), (3, F, T)],
        decisions=[
            _decision(5, ("a > 0", "b", "c"),
                      {((T, T, N), T): 2, ((T, F, F), F): 1, ((T, F, T), T): 2,
                       ((F, N, N), F): 1},
                      **_all(T, 3)),
        ],
    ),
    # ------------------------------------------------------------------ generators, async
    dict(
        # calling a generator function runs none of its body
        name="generator_not_consumed",
        source=_src("""\
            def gen(xs):
                for x in xs:
                    if x:
                        yield x
            """),
        function="gen",
        calls=[((1, 2),)],
        decisions=[
            _decision(3, ("x",), {}, **_all(F, 1)),
        ],
    ),
    dict(
        # the module's `evens` is the decorator's wrapper, which consumes the generator
        # whose qualname is `evens`; -3 % 2 is 1 in Python
        name="generator_consumed",
        source=_src("""\
            def materialize(fn):
                def run(*args):
                    return list(fn(*args))
                return run
            @materialize
            def evens(xs):
                for x in xs:
                    if x % 2 == 0 or x < 0:
                        yield x
            """),
        function="evens",
        calls=[((1, 2, -3, 5),)],
        decisions=[
            _decision(8, ("x % 2 == 0", "x < 0"),
                      {((F, F), F): 2, ((T, N), T): 1, ((F, T), T): 1},
                      **_all(T, 2)),
        ],
    ),
    dict(
        # the wrapper drives the coroutine; ready() never suspends
        name="async_function",
        source=_src("""\
            def drive(fn):
                def run(*args):
                    coro = fn(*args)
                    try:
                        coro.send(None)
                    except StopIteration as stop:
                        return stop.value
                    raise RuntimeError('suspended')
                return run
            async def ready(v):
                return v
            @drive
            async def f(a, b):
                if await ready(a) and not await ready(b):
                    return 1
                return 0
            """),
        function="f",
        calls=[(1, 0), (1, 1), (0, 0)],
        decisions=[
            _decision(14, ("await ready(a)", "await ready(b)"),
                      {((T, F), T): 1, ((T, T), F): 1, ((F, N), F): 1},
                      **_all(T, 2)),
        ],
    ),
]
