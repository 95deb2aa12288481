"""The short-circuit DAG of a boolean expression: its evaluation vectors, numbered.

A decision's *conditions* are the operands of its ``and``/``or`` operators, through
``not`` and parentheses: the leaves of the expression's boolean tree. Python evaluates
them left to right and stops as soon as the outcome is known (short-circuit), so one
evaluation is a *vector*: each condition true, false or not evaluated, with the
outcome. The vectors a tree allows are the paths through its short-circuit DAG (one
node per condition, an edge per outcome, to the next condition evaluated or to the
outcome); numbering them as Ball and Larus number a DAG's paths (Ball-Larus 1996,
§3.1: in the order the DFS meets them, the false edge first) gives each vector a number
in ``range(len(vectors))``, so that counting one evaluation is one counter update.

Used by the front end, which counts the vectors (:mod:`pathprof.python.conditioncode`),
and by the analysis, which judges them (:mod:`pathprof.analysis.conditions`).

Invariant: :func:`evaluation_vectors` lists exactly the vectors Python's evaluation
can produce for independent conditions, each once, numbered ``0 .. n - 1``;
:func:`next_step` walks the same DAG one condition at a time.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Outcome", "Tree", "Vector", "boolean_tree", "evaluation_vectors", "next_step",
           "outcome_of", "parse_tree", "tree_text"]

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


#: The boolean tree: ("and" | "or", children), ("not", child), ("leaf", index).
#: (Any: the second item's type follows the tag, which the code tests as a string)
Tree = tuple[Any, ...]
_Tree = Tree


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


def outcome_of(tree: _Tree, full: tuple[bool, ...]) -> bool:
    """The decision's outcome when its conditions have the values ``full``."""
    kind = tree[0]
    if kind == "leaf":
        return bool(full[tree[1]])
    if kind == "not":
        return not outcome_of(tree[1], full)
    stop = kind == "or"
    for child in tree[1]:
        if outcome_of(child, full) is stop:
            return stop
    return not stop


def next_step(tree: Tree, prefix: tuple[bool, ...], conditions: int) -> int | Vector:
    """The condition Python evaluates next once the conditions evaluated so far took
    the values ``prefix`` (in evaluation order), or the vector they complete."""
    values: list[bool | None] = [None] * conditions
    answers = iter(prefix)
    asked: list[int] = []

    def evaluate(node: Tree) -> bool:
        kind = node[0]
        if kind == "leaf":
            asked.append(node[1])
            value = next(answers)
            values[node[1]] = value
            return value
        if kind == "not":
            return not evaluate(node[1])
        stop = kind == "or"
        for child in node[1]:
            if evaluate(child) is stop:
                return stop
        return not stop

    try:
        outcome = evaluate(tree)
    except StopIteration:
        return asked[-1]
    return Vector(tuple(values), outcome)
