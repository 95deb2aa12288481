"""Decisions, their conditions and MC/DC, from the source and evaluation vectors.

A *decision* is a boolean expression whose value chooses where control goes (an
``if``/``elif``/``while`` test, a conditional expression's test, a comprehension's
``if``, an ``assert``, a ``match`` guard). Its *conditions* are the operands of its
``and``/``or`` operators, through ``not`` and parentheses: the leaves of the
expression's boolean tree. Python evaluates them left to right and stops as soon as
the outcome is known (short-circuit), so one evaluation of a decision is a *vector*:
each condition true, false or not evaluated, with the decision's outcome.

The vectors a decision allows, and their numbers, are those of its short-circuit DAG
(:mod:`pathprof.graph.shortcircuit`).

*Condition coverage*: each condition has been true and false. *MC/DC* (modified
condition/decision coverage, RTCA DO-178C §6.4.4.2 and its glossary; CAST-6 and
Chilenski 2001 for the forms): each condition has been shown to affect the outcome
independently, by two vectors that ran where it takes both values and the outcome
differs:

* **unique-cause**: every other condition has the same value in both, or was not
  evaluated in one of them (short-circuit: the usual reading for languages that skip
  operands, since a skipped operand cannot be held fixed);
* **masking**: every other condition whose value differs is *masked* in both vectors:
  given the rest of the vector, its value cannot change the outcome.

Unique-cause implies masking. The default verdict is masking, what DO-178C accepts
for short-circuit code and what GCC 14's ``-fcondition-coverage`` measures (the gcov
manual's MC/DC section: "An outcome is considered covered if it has an independent
effect on the decision, also known as masking MC/DC"); both are computed. With the
don't-care reading, the two agreed on every pair of the
small decisions tried while writing this (``a and b or c``, ``(a or b) and c``,
``a and (b or c)``, ``(a and b) or (c and d)``).

This module is the analysis half of issue 39: decisions from the source and the
verdicts from the vectors that ran; :mod:`pathprof.python.conditioncode` counts the
vectors as the program runs.

Invariant: a verdict's pair is two vectors that ran and show the condition's
independent effect in its form; ``missing`` is offered only where no such pair ran.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pathprof.graph.shortcircuit import (
    Tree,
    Vector,
    boolean_tree,
    evaluation_vectors,
    outcome_of,
    parse_tree,
    tree_text,
)

_Tree = Tree

if TYPE_CHECKING:
    from pathprof.contract import DecisionInfo

__all__ = ["ConditionVerdict", "Decision", "Vector", "boolean_tree", "decisions_in",
           "evaluation_vectors", "mcdc", "parse_tree", "tree_text"]


@dataclass(frozen=True)
class Decision:
    """A decision of the source: what kind, where, its text and its conditions' texts
    (in evaluation order)."""

    kind: str
    line: int
    text: str
    conditions: tuple[str, ...]
    tree: _Tree

    @classmethod
    def from_info(cls, info: DecisionInfo) -> Decision:
        """The decision the contract declares (a :class:`pathprof.contract.DecisionInfo`)."""
        return cls(info.kind, info.span.line, info.text, tuple(info.conditions),
                   parse_tree(info.tree))

    @property
    def vectors(self) -> list[Vector]:
        """Every evaluation the decision allows, in number order."""
        return evaluation_vectors(self.tree, len(self.conditions))


def _decision(kind: str, node: ast.expr) -> Decision:
    leaves: list[ast.expr] = []
    tree, found = boolean_tree(node)
    leaves.extend(found)
    return Decision(kind, node.lineno, ast.unparse(node),
                    tuple(ast.unparse(leaf) for leaf in leaves), tree)


def decisions_in(source: str) -> list[Decision]:
    """The decisions of a module's source, in source order: the tests of ``if``,
    ``elif``, ``while``, conditional expressions, comprehension ``if`` clauses,
    ``assert`` and ``match`` guards. (A boolean expression that is only assigned or
    returned chooses no branch: it is not counted, as GCC does not count one.)"""
    found: list[tuple[tuple[int, int], Decision]] = []
    for node in ast.walk(ast.parse(source)):
        tests: list[tuple[str, ast.expr]] = []
        if isinstance(node, ast.If):
            tests.append(("if", node.test))
        elif isinstance(node, ast.While):
            tests.append(("while", node.test))
        elif isinstance(node, ast.IfExp):
            tests.append(("conditional expression", node.test))
        elif isinstance(node, ast.comprehension):
            tests += [("comprehension if", test) for test in node.ifs]
        elif isinstance(node, ast.Assert):
            tests.append(("assert", node.test))
        elif isinstance(node, ast.match_case) and node.guard is not None:
            tests.append(("guard", node.guard))
        for kind, test in tests:
            found.append(((test.lineno, test.col_offset), _decision(kind, test)))
    return [decision for _position, decision in sorted(found, key=lambda f: f[0])]


def _consistent(vector: Vector, conditions: int) -> Iterator[tuple[bool, ...]]:
    """Every full assignment of the conditions that agrees with ``vector``."""
    free = [i for i, v in enumerate(vector.values) if v is None]
    for choice in itertools.product((False, True), repeat=len(free)):
        full = list(vector.values)
        for i, value in zip(free, choice, strict=True):
            full[i] = value
        yield tuple(bool(v) for v in full)


def _masked(tree: _Tree, vector: Vector, condition: int) -> bool:
    """Whether ``condition``'s value cannot change the outcome, given the rest of
    ``vector`` (any value for the conditions it did not evaluate)."""
    if vector.values[condition] is None:
        return True
    for full in _consistent(vector, len(vector.values)):
        flipped = list(full)
        flipped[condition] = not flipped[condition]
        if outcome_of(tree, full) != outcome_of(tree, tuple(flipped)):
            return False
    return True


@dataclass(frozen=True)
class ConditionVerdict:
    """One condition's coverage: seen true and false (condition coverage), and the
    pair of vectors that shows its independent effect in each MC/DC form (None if no
    pair of vectors that ran does), with, when none does, a vector that would complete
    a pair with one that ran (the test to write)."""

    condition: int
    seen_true: bool
    seen_false: bool
    unique_cause: tuple[Vector, Vector] | None
    masking: tuple[Vector, Vector] | None
    missing: tuple[Vector, Vector] | None

    @property
    def condition_covered(self) -> bool:
        return self.seen_true and self.seen_false


def _pairs(tree: _Tree, condition: int, first: Vector, second: Vector) -> tuple[bool, bool]:
    """Whether ``first`` and ``second`` show ``condition``'s independent effect:
    ``(unique-cause, masking)``."""
    a, b = first.values[condition], second.values[condition]
    if a is None or b is None or a == b or first.outcome == second.outcome:
        return False, False
    others = [i for i in range(len(first.values)) if i != condition]
    held = [i for i in others if not (first.values[i] == second.values[i]
                                      or first.values[i] is None or second.values[i] is None)]
    # unique-cause: every other condition held (or skipped in one: a don't-care);
    # masking: each one that changed cannot change either outcome
    unique = not held
    masking = unique or all(_masked(tree, first, i) and _masked(tree, second, i)
                            for i in held)
    return unique, masking


def mcdc(decision: Decision, ran: Mapping[int, int] | Iterable[int]) -> list[ConditionVerdict]:
    """Condition coverage and MC/DC of ``decision`` from the vectors that ran (their
    numbers, or numbers -> counts; a count of 0 did not run)."""
    vectors = decision.vectors
    counts = dict(ran) if isinstance(ran, Mapping) else dict.fromkeys(ran, 1)
    seen = [vectors[n] for n in sorted(counts, key=lambda n: (-counts[n], n)) if counts[n]]
    verdicts = []
    for condition in range(len(decision.conditions)):
        unique = masking = None
        for first, second in itertools.combinations(seen, 2):
            is_unique, is_masking = _pairs(decision.tree, condition, first, second)
            if is_unique and unique is None:
                unique = (first, second)
            if is_masking and masking is None:
                masking = (first, second)
        missing = None
        if masking is None:
            for have in seen:
                partner = next((v for v in vectors if v not in seen
                                and _pairs(decision.tree, condition, have, v)[1]), None)
                if partner is not None:
                    missing = (have, partner)
                    break
            if missing is None:
                missing = next(((a, b) for a, b in itertools.combinations(vectors, 2)
                                if _pairs(decision.tree, condition, a, b)[1]), None)
        values = [v.values[condition] for v in seen]
        verdicts.append(ConditionVerdict(condition, True in values, False in values,
                                         unique, masking, missing))
    return verdicts
