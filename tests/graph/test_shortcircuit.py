"""Tests for pathprof.graph.shortcircuit: the boolean tree of a decision, its compact
text and the parse back, and the vectors of its short-circuit DAG -- exactly those
Python's own evaluation gives for independent conditions, each once, numbered false
edge first (Ball-Larus 1996, §3.1) -- with the outcome of a full assignment and the
one-condition-at-a-time walk of :func:`next_step`."""

from __future__ import annotations

import ast
import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pathprof.graph.shortcircuit import (
    Tree,
    Vector,
    boolean_tree,
    evaluation_vectors,
    next_step,
    outcome_of,
    parse_tree,
    tree_text,
)

T, F, N = True, False, None


def leaf(i: int) -> Tree:
    return ("leaf", i)


# ---------------------------------------------------------------------------
# The tree of an expression


def test_the_tree_of_a_decision_has_its_conditions_as_leaves_left_to_right() -> None:
    tree, leaves = boolean_tree(ast.parse("a > 1 and (b or not c)", mode="eval").body)
    assert tree == ("and", (leaf(0), ("or", (leaf(1), ("not", leaf(2))))))
    assert [ast.unparse(node) for node in leaves] == ["a > 1", "b", "c"]


def test_a_chain_of_one_operator_is_one_node_and_parentheses_nest() -> None:
    flat, _ = boolean_tree(ast.parse("a and b and c", mode="eval").body)
    assert flat == ("and", (leaf(0), leaf(1), leaf(2)))
    nested, _ = boolean_tree(ast.parse("(a and b) and c", mode="eval").body)
    assert nested == ("and", (("and", (leaf(0), leaf(1))), leaf(2)))


def test_an_expression_without_operators_is_one_condition() -> None:
    tree, leaves = boolean_tree(ast.parse("f(x) == 2", mode="eval").body)
    assert tree == leaf(0)
    assert [ast.unparse(node) for node in leaves] == ["f(x) == 2"]
    # other unary operators are part of the condition, only `not` is the tree's
    tree, leaves = boolean_tree(ast.parse("-x", mode="eval").body)
    assert tree == leaf(0)


def test_a_repeated_name_is_two_conditions() -> None:
    tree, leaves = boolean_tree(ast.parse("a or a", mode="eval").body)
    assert tree == ("or", (leaf(0), leaf(1)))
    assert len(leaves) == 2


# ---------------------------------------------------------------------------
# The compact text


@pytest.mark.parametrize(("tree", "text"), [
    (leaf(0), "0"),
    (("not", leaf(0)), "!0"),
    (("and", (leaf(0), leaf(1))), "&(0,1)"),
    (("or", (("and", (leaf(0), leaf(1))), ("not", leaf(2)))), "|(&(0,1),!2)"),
    (("not", ("not", leaf(12))), "!!12"),
])
def test_the_text_of_a_tree_and_its_parse_back(tree: Tree, text: str) -> None:
    assert tree_text(tree) == text
    assert parse_tree(text) == tree


@pytest.mark.parametrize("text", [
    "", "!", "&(0)", "&0", "&(0,1", "&(0,)", "|(0,1)x", "0 ", "x", "&(,1)", "()",
])
def test_anything_but_a_tree_text_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="boolean tree"):
        parse_tree(text)


# ---------------------------------------------------------------------------
# Vectors, worked by hand


def test_the_vectors_of_and_take_the_false_edge_first() -> None:
    assert evaluation_vectors(parse_tree("&(0,1)"), 2) == [
        Vector((F, N), False), Vector((T, F), False), Vector((T, T), True)]


def test_the_vectors_of_or_stop_at_the_first_true() -> None:
    assert evaluation_vectors(parse_tree("|(0,1)"), 2) == [
        Vector((F, F), False), Vector((F, T), True), Vector((T, N), True)]


def test_not_flips_the_outcome_and_keeps_the_order() -> None:
    assert evaluation_vectors(parse_tree("!0"), 1) == [
        Vector((F,), True), Vector((T,), False)]


def test_the_vectors_of_a_and_b_or_c() -> None:
    # a false skips b and asks c; a true asks b, and b false asks c too
    assert evaluation_vectors(parse_tree("|(&(0,1),2)"), 3) == [
        Vector((F, N, F), False), Vector((F, N, T), True),
        Vector((T, F, F), False), Vector((T, F, T), True),
        Vector((T, T, N), True)]


def test_a_vector_describes_itself_in_the_conditions_words() -> None:
    vector = Vector((T, F, N), False)
    assert vector.describe(["a", "b", "c"]) == (
        "a true, b false, c not evaluated → false")
    with pytest.raises(ValueError, match="zip"):
        vector.describe(["a", "b"])  # one name per condition


def test_outcome_of_a_full_assignment() -> None:
    tree = parse_tree("|(&(0,1),!2)")
    assert outcome_of(tree, (T, T, T)) is True   # a and b
    assert outcome_of(tree, (T, F, T)) is False  # neither a and b nor not c
    assert outcome_of(tree, (F, F, F)) is True   # not c


def test_next_step_names_the_condition_asked_next_or_the_vector_completed() -> None:
    tree = parse_tree("&(0,|(1,2))")  # a and (b or c)
    assert next_step(tree, (), 3) == 0
    assert next_step(tree, (F,), 3) == Vector((F, N, N), False)
    assert next_step(tree, (T,), 3) == 1
    assert next_step(tree, (T, F), 3) == 2
    assert next_step(tree, (T, F, T), 3) == Vector((T, F, T), True)
    assert next_step(tree, (T, T), 3) == Vector((T, T, N), True)


# ---------------------------------------------------------------------------
# Against Python's own evaluation


@st.composite
def trees(draw: st.DrawFn, max_leaves: int = 5) -> tuple[Tree, int]:
    """A random boolean tree and its number of conditions (leaves numbered left to
    right, as boolean_tree numbers them)."""
    count = 0

    def node(depth: int) -> Tree:
        nonlocal count
        kinds = ["leaf"] if depth >= 3 or count >= max_leaves - 1 else [
            "leaf", "not", "and", "or"]
        kind = draw(st.sampled_from(kinds))
        if kind == "leaf":
            count += 1
            return ("leaf", count - 1)
        if kind == "not":
            return ("not", node(depth + 1))
        width = draw(st.integers(min_value=2, max_value=3))
        return (kind, tuple(node(depth + 1) for _ in range(width)))

    tree = node(0)
    return tree, count


def python_text(tree: Tree) -> str:
    """The tree as a Python expression whose condition i is ``c(i)``."""
    if tree[0] == "leaf":
        return f"c({tree[1]})"
    if tree[0] == "not":
        return f"(not {python_text(tree[1])})"
    return "(" + f" {tree[0]} ".join(python_text(child) for child in tree[1]) + ")"


def python_vectors(tree: Tree, conditions: int) -> set[tuple[tuple[bool | None, ...], bool]]:
    """Every (values, outcome) Python's evaluation gives, over all assignments."""
    code = compile(python_text(tree), "<tree>", "eval")
    found = set()
    for full in itertools.product((False, True), repeat=conditions):
        seen: list[bool | None] = [None] * conditions

        def c(i: int, full: tuple[bool, ...] = full, seen: list[bool | None] = seen) -> bool:
            seen[i] = full[i]
            return full[i]

        outcome = bool(eval(code, {"c": c}))
        found.add((tuple(seen), outcome))
    return found


@settings(max_examples=50, deadline=None)
@given(trees())
def test_the_vectors_are_exactly_pythons_each_once(drawn: tuple[Tree, int]) -> None:
    tree, conditions = drawn
    vectors = evaluation_vectors(tree, conditions)
    listed = [(v.values, v.outcome) for v in vectors]
    assert len(listed) == len(set(listed))
    assert set(listed) == python_vectors(tree, conditions)


@settings(max_examples=50, deadline=None)
@given(trees())
def test_outcome_of_agrees_with_python(drawn: tuple[Tree, int]) -> None:
    tree, conditions = drawn
    code = compile(python_text(tree), "<tree>", "eval")
    for full in itertools.product((False, True), repeat=conditions):
        expected = bool(eval(code, {"c": lambda i, full=full: full[i]}))
        assert outcome_of(tree, full) is expected


@settings(max_examples=50, deadline=None)
@given(trees())
def test_the_numbering_takes_false_before_true_and_the_walk_reaches_each_vector(
        drawn: tuple[Tree, int]) -> None:
    tree, conditions = drawn
    vectors = evaluation_vectors(tree, conditions)
    orders = []
    for vector in vectors:
        # walk the DAG with the vector's values, one condition at a time
        prefix: tuple[bool, ...] = ()
        asked: list[int] = []
        step = next_step(tree, prefix, conditions)
        while not isinstance(step, Vector):
            asked.append(step)
            value = vector.values[step]
            assert value is not None  # the walk asks only what the vector evaluated
            prefix = (*prefix, value)
            step = next_step(tree, prefix, conditions)
        assert step == vector
        assert sorted(asked) == [i for i, v in enumerate(vector.values) if v is not None]
        orders.append(prefix)
    # numbered in the order of a search taking each condition false first: the
    # values in evaluation order sort as False < True, prefixes never being compared
    # (no vector's evaluation is a prefix of another's)
    assert orders == sorted(orders)
