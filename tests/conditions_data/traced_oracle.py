"""An oracle of condition vectors and MC/DC that knows nothing of pathprof.

Decisions here are expressions over ``c0(), c1(), ...``: each ``ci()`` is condition
``i`` (conditions are numbered left to right, each appears once).

* :func:`random_decision` draws such an expression (``and``, ``or``, ``not``, nesting).
* :func:`traced_vectors` runs it as the test of an ``if`` statement, once per assignment,
  and records from the calls and from the operands' traced ``__bool__`` which
  conditions Python evaluated, the truth value it took of each, and the outcome.
* :func:`mcdc_by_definition` judges condition coverage and unique-cause and masking
  MC/DC from a set of vectors by brute force over the truth table.
"""

from __future__ import annotations

import ast
import itertools
import random
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any

Vector = tuple[tuple[bool | None, ...], bool]

#: What an assignment holds for a condition whose call should raise.
RAISE = "raise"


class _ConditionRaised(ValueError):
    """Raised by a traced ``ci()`` whose assignment is ``"raise"``."""

    def __init__(self, index: int) -> None:
        super().__init__(f"condition {index} raises")
        self.index = index


# --------------------------------------------------------------------------- drawing


def _draw_tree(rng: random.Random, leaves: int) -> Any:
    """A tree with ``leaves`` leaves: "leaf", ("not", t) or (op, left, right)."""
    if leaves == 1:
        tree: Any = "leaf"
    else:
        split = rng.randint(1, leaves - 1)
        op = rng.choice(("and", "or"))
        tree = (op, _draw_tree(rng, split), _draw_tree(rng, leaves - split))
    while rng.random() < 0.25:
        tree = ("not", tree)
    return tree


_PRECEDENCE = {"or": 1, "and": 2, "not": 3, "leaf": 4}


def _kind(tree: Any) -> str:
    return tree if tree == "leaf" else tree[0]


def _render(tree: Any, rng: random.Random, counter: list[int], parent: int) -> str:
    kind = _kind(tree)
    if kind == "leaf":
        text = f"c{counter[0]}()"
        counter[0] += 1
    elif kind == "not":
        text = "not " + _render(tree[1], rng, counter, _PRECEDENCE["not"])
    else:
        # an operand of the same operator needs no parentheses (and/or are associative
        # as far as short-circuit evaluation goes), a looser one does
        own = _PRECEDENCE[kind]
        left = _render(tree[1], rng, counter, own)
        right = _render(tree[2], rng, counter, own)
        text = f"{left} {kind} {right}"
    needs = _PRECEDENCE[kind] < parent
    if needs or (kind != "leaf" and parent and rng.random() < 0.15):
        text = f"({text})"
    return text


def random_decision(rng: random.Random, max_conditions: int = 6) -> str:
    """A random boolean expression over ``c0(), c1(), ...``, each once, left to right."""
    leaves = rng.randint(1, max_conditions)
    return _render(_draw_tree(rng, leaves), rng, [0], 0)


# --------------------------------------------------------------------------- structure


def condition_count(expression: str) -> int:
    """How many conditions ``c0(), c1(), ...`` the expression has (checks their order)."""
    tree = ast.parse(expression, mode="eval").body
    leaves: list[ast.expr] = []

    def walk(node: ast.expr) -> None:
        if isinstance(node, ast.BoolOp):
            for value in node.values:
                walk(value)
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            walk(node.operand)
        else:
            leaves.append(node)

    walk(tree)
    for index, leaf in enumerate(leaves):
        expected = f"c{index}()"
        if ast.unparse(leaf) != expected:
            raise ValueError(f"condition {index} of {expression!r} is not {expected}")
    return len(leaves)


def _function(expression: str, conditions: int) -> Callable[..., bool]:
    params = ", ".join(f"c{i}" for i in range(conditions))
    source = (
        f"def _decision({params}):\n"
        f"    if {expression}:\n"
        "        return True\n"
        "    return False\n"
    )
    namespace: dict[str, Any] = {}
    exec(compile(source, "<decision>", "exec"), namespace)
    decision: Callable[..., bool] = namespace["_decision"]
    return decision


def _truth_table(expression: str, conditions: int) -> dict[tuple[bool, ...], bool]:
    decision = _function(expression, conditions)
    table = {}
    for values in itertools.product((False, True), repeat=conditions):
        table[values] = decision(*[(lambda v=v: v) for v in values])
    return table


# --------------------------------------------------------------------------- tracing


class _Operand:
    """The value of a condition: Python's truth test of it is recorded."""

    def __init__(self, index: int, value: bool, truths: list[tuple[int, bool]]) -> None:
        self._index = index
        self._value = value
        self._truths = truths

    def __bool__(self) -> bool:
        self._truths.append((self._index, self._value))
        return self._value


def traced_vectors(
    expression: str, assignments: Iterable[Sequence[bool | str]]
) -> dict[str, dict[Any, int]]:
    """Evaluate ``if <expression>:`` once per assignment; the vectors Python produced.

    Returns ``{"vectors": {(values, outcome): count}, "raised": {index: count}}``.
    Raises AssertionError if Python did something no short-circuit evaluation does:
    called conditions out of order, took the truth of an operand twice, or not at all.
    """
    conditions = condition_count(expression)
    decision = _function(expression, conditions)
    vectors: Counter[Vector] = Counter()
    raised: Counter[int] = Counter()
    for assignment in assignments:
        if len(assignment) != conditions:
            raise ValueError(f"{assignment!r} does not assign {conditions} conditions")
        calls: list[int] = []
        truths: list[tuple[int, bool]] = []

        def make(
            index: int, value: bool | str, calls: list[int], truths: list[tuple[int, bool]]
        ) -> Callable[[], _Operand]:
            def condition() -> _Operand:
                calls.append(index)
                if value == RAISE:
                    raise _ConditionRaised(index)
                return _Operand(index, bool(value), truths)

            return condition

        functions = [make(i, value, calls, truths) for i, value in enumerate(assignment)]
        failed = -1
        try:
            outcome: bool | None = decision(*functions)
        except _ConditionRaised as error:
            outcome = None
            failed = error.index
        assert calls == sorted(set(calls)), f"conditions called out of order: {calls}"
        seen = [index for index, _ in truths]
        assert len(seen) == len(set(seen)), f"truth taken twice: {truths} ({expression})"
        tested = set(calls) if outcome is not None else set(calls) - {failed}
        assert set(seen) == tested, f"called {calls} but truth taken of {seen}"
        if outcome is None:
            raised[failed] += 1
            continue
        taken = dict(truths)
        values = tuple(taken.get(i) for i in range(conditions))
        vectors[values, outcome] += 1
    return {"vectors": dict(vectors), "raised": dict(raised)}


# --------------------------------------------------------------------------- MC/DC


def _completions(values: Sequence[bool | None]) -> Iterable[tuple[bool, ...]]:
    """Every full assignment that agrees with the evaluated conditions of a vector."""
    choices = [(v,) if v is not None else (False, True) for v in values]
    return itertools.product(*choices)


def _flip(values: tuple[bool, ...], index: int) -> tuple[bool, ...]:
    return (*values[:index], not values[index], *values[index + 1 :])


def mcdc_by_definition(expression: str, vectors: Iterable[Vector]) -> dict[str, tuple[bool, ...]]:
    """Condition coverage, unique-cause and masking MC/DC of each condition, by brute force.

    ``vectors`` are ``(values, outcome)`` of evaluations that ran (a dict of counts
    iterates as its keys). Returns ``{"condition_covered": (...), "unique": (...),
    "masking": (...)}``, one boolean per condition.
    """
    conditions = condition_count(expression)
    table = _truth_table(expression, conditions)
    ran = list(dict.fromkeys((tuple(values), bool(outcome)) for values, outcome in vectors))
    for values, outcome in ran:
        if len(values) != conditions:
            raise ValueError(f"{values!r} is not a vector of {conditions} conditions")
        if any(table[full] != outcome for full in _completions(values)):
            raise ValueError(f"{values!r} -> {outcome} is no evaluation of {expression!r}")

    def masked(values: tuple[bool | None, ...], index: int) -> bool:
        """Flipping condition ``index`` cannot change the outcome, whatever the Nones are."""
        return all(table[full] == table[_flip(full, index)] for full in _completions(values))

    covered, unique, masking = [], [], []
    for i in range(conditions):
        trues = [v for v in ran if v[0][i] is True]
        falses = [v for v in ran if v[0][i] is False]
        covered.append(bool(trues) and bool(falses))
        found_unique = found_masking = False
        for (one, out_one), (other, out_other) in itertools.product(trues, falses):
            if out_one == out_other:
                continue
            differing = [
                j
                for j in range(conditions)
                if j != i and one[j] is not None and other[j] is not None and one[j] != other[j]
            ]
            if not differing:
                found_unique = found_masking = True
                break
            if all(masked(one, j) and masked(other, j) for j in differing):
                found_masking = True
        unique.append(found_unique)
        masking.append(found_masking)
    return {
        "condition_covered": tuple(covered),
        "unique": tuple(unique),
        "masking": tuple(masking),
    }
