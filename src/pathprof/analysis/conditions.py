"""Decisions, their conditions and MC/DC, from the source and evaluation vectors.

A *decision* is a boolean expression whose value chooses where control goes (an
``if``/``elif``/``while`` test, a conditional expression's test, a comprehension's
``if``, an ``assert``, a ``match`` guard). Its *conditions* are the operands of its
``and``/``or`` operators, through ``not`` and parentheses: the leaves of the
expression's boolean tree. Python evaluates them left to right and stops as soon as
the outcome is known (short-circuit), so one evaluation of a decision is a *vector*:
each condition true, false or not evaluated, with the decision's outcome.

The vectors a decision allows are the paths through its short-circuit DAG (one node
per condition, an edge per outcome, to the next condition evaluated or to the
decision's outcome); numbering them as Ball and Larus number a DAG's paths (Ball-Larus
1996, §3.1: in the order the DFS meets them, the false edge first) gives each vector a
number in ``range(len(vectors))``, so that counting one evaluation is one counter
update.

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
for short-circuit code and what GCC 14's ``-fcondition-coverage`` measures (clang's
``-fcoverage-mcdc`` measures unique-cause; J. Kvalsvik, gcc mailing list, 2025-12-04);
both are computed. With the don't-care reading, the two agreed on every pair of the
small decisions tried while writing this (``a and b or c``, ``(a or b) and c``,
``a and (b or c)``, ``(a and b) or (c and d)``).

This module is the analysis half of issue 39: decisions from the source, the vectors
their short-circuit DAG allows, and the verdicts from the vectors that ran. Counting
the vectors as the program runs (an expression-level numbering in the instrumented
code) is the other half, not written yet.

Invariant: :func:`evaluation_vectors` lists exactly the vectors Python's evaluation
can produce for independent conditions, each once, numbered ``0 .. n - 1``.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["ConditionVerdict", "Decision", "Vector", "boolean_tree", "decisions_in",
           "evaluation_vectors", "mcdc", "parse_tree", "tree_text"]

#: A condition's outcome in one evaluation: True, False, or None (not evaluated).
Outcome = bool | None


@dataclass(frozen=True)
class Vector:
    """One evaluation of a decision: each condition's outcome, and the decision's."""

    values: tuple[Outcome, ...]
    outcome: bool

    def describe(self, names: Sequence[str]) -> str:
        """``a true, b false, c not evaluated → false``."""
        parts = [f"{name} {'not evaluated' if v is None else str(v).lower()}"
                 for name, v in zip(names, self.values, strict=True)]
        return ", ".join(parts) + f" → {str(self.outcome).lower()}"


# The boolean tree: ("and" | "or", children), ("not", child), ("leaf", index).
_Tree = tuple


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
    def from_info(cls, info: Any) -> Decision:
        """The decision the contract declares (a :class:`pathprof.contract.DecisionInfo`)."""
        return cls(info.kind, info.span.line, info.text, tuple(info.conditions),
                   parse_tree(info.tree))

    @property
    def vectors(self) -> list[Vector]:
        """Every evaluation the decision allows, in number order."""
        return evaluation_vectors(self.tree, len(self.conditions))


def boolean_tree(node: ast.expr) -> tuple[_Tree, list[ast.expr]]:
    """The boolean tree of a decision's test and its conditions (the leaves), left to
    right."""
    leaves: list[ast.expr] = []
    return _tree(node, leaves), leaves


def tree_text(tree: _Tree) -> str:
    """The compact form of a boolean tree the contract keeps: a condition is its
    number, ``!x`` is not, ``&(x,y)`` and ``|(x,y)`` are and and or."""
    kind = tree[0]
    if kind == "leaf":
        return str(tree[1])
    if kind == "not":
        return "!" + tree_text(tree[1])
    return ("&(" if kind == "and" else "|(") + ",".join(map(tree_text, tree[1])) + ")"


def parse_tree(text: str) -> _Tree:
    """The boolean tree :func:`tree_text` wrote; ValueError for anything else."""
    position = 0

    def parse() -> _Tree:
        nonlocal position
        if position >= len(text):
            raise ValueError(f"a boolean tree cut short: {text!r}")
        head = text[position]
        if head == "!":
            position += 1
            return ("not", parse())
        if head in "&|":
            if text[position + 1:position + 2] != "(":
                raise ValueError(f"not a boolean tree: {text!r}")
            position += 2
            children = [parse()]
            while text[position:position + 1] == ",":
                position += 1
                children.append(parse())
            if text[position:position + 1] != ")" or len(children) < 2:
                raise ValueError(f"not a boolean tree: {text!r}")
            position += 1
            return ("and" if head == "&" else "or", tuple(children))
        end = position
        while end < len(text) and text[end].isdigit():
            end += 1
        if end == position:
            raise ValueError(f"not a boolean tree: {text!r}")
        number, position = int(text[position:end]), end
        return ("leaf", number)

    tree = parse()
    if position != len(text):
        raise ValueError(f"not a boolean tree: {text!r}")
    return tree


def _tree(node: ast.expr, leaves: list[ast.expr]) -> _Tree:
    """The boolean tree of ``node``; its leaves appended to ``leaves`` left to right."""
    if isinstance(node, ast.BoolOp):
        op = "and" if isinstance(node.op, ast.And) else "or"
        return (op, tuple(_tree(v, leaves) for v in node.values))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return ("not", _tree(node.operand, leaves))
    leaves.append(node)
    return ("leaf", len(leaves) - 1)


def _decision(kind: str, node: ast.expr) -> Decision:
    leaves: list[ast.expr] = []
    tree = _tree(node, leaves)
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


def _evaluate(tree: _Tree, values: list[Outcome], chosen: Iterator[bool]) -> bool:
    """Evaluate ``tree`` with short-circuit, taking each condition evaluated from
    ``chosen`` and recording it in ``values``."""
    kind = tree[0]
    if kind == "leaf":
        value = next(chosen)
        values[tree[1]] = value
        return value
    if kind == "not":
        return not _evaluate(tree[1], values, chosen)
    stop = kind == "or"  # ``or`` stops at a true operand, ``and`` at a false one
    for child in tree[1]:
        if _evaluate(child, values, chosen) is stop:
            return stop
    return not stop


def evaluation_vectors(tree: _Tree, conditions: int) -> list[Vector]:
    """Every vector of a decision whose boolean tree is ``tree``, numbered in the order
    of a search that takes each condition false before true (Ball-Larus numbering of
    the short-circuit DAG)."""
    result: list[Vector] = []

    def search(prefix: tuple[bool, ...]) -> None:
        values: list[Outcome] = [None] * conditions
        chosen = iter(prefix)
        try:
            outcome = _evaluate(tree, values, chosen)
        except StopIteration:  # a condition past the prefix is evaluated: branch on it
            search((*prefix, False))
            search((*prefix, True))
            return
        result.append(Vector(tuple(values), outcome))

    search(())
    return result


def _consistent(vector: Vector, conditions: int) -> Iterator[tuple[bool, ...]]:
    """Every full assignment of the conditions that agrees with ``vector``."""
    free = [i for i, v in enumerate(vector.values) if v is None]
    for choice in itertools.product((False, True), repeat=len(free)):
        full = list(vector.values)
        for i, value in zip(free, choice, strict=True):
            full[i] = value
        yield tuple(bool(v) for v in full)


def _outcome(tree: _Tree, full: tuple[bool, ...]) -> bool:
    """The decision's outcome when its conditions have the values ``full``."""
    kind = tree[0]
    if kind == "leaf":
        return full[tree[1]]
    if kind == "not":
        return not _outcome(tree[1], full)
    stop = kind == "or"
    for child in tree[1]:
        if _outcome(child, full) is stop:
            return stop
    return not stop


def _masked(tree: _Tree, vector: Vector, condition: int) -> bool:
    """Whether ``condition``'s value cannot change the outcome, given the rest of
    ``vector`` (any value for the conditions it did not evaluate)."""
    if vector.values[condition] is None:
        return True
    for full in _consistent(vector, len(vector.values)):
        flipped = list(full)
        flipped[condition] = not flipped[condition]
        if _outcome(tree, full) != _outcome(tree, tuple(flipped)):
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
