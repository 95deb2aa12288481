"""Structural checks of the hand-counted corpus, with plain Python (no pathprof).

Each case's source compiles and defines its function; its decisions are where the
corpus says, with the conditions it names; each vector is one that short-circuit
evaluation of that decision's and/or/not shape can produce; the evaluations add up
to a second hand count (below); the verdicts follow from the vectors by definition.
"""

from __future__ import annotations

import ast
import itertools
from typing import Any

import pytest

from tests.conditions_data.corpus import CASES
from tests.conditions_data.traced_oracle import mcdc_by_definition, traced_vectors

#: Evaluations of each decision (vectors plus raises), counted from the calls afresh.
EXPECTED_EVALUATIONS: dict[str, tuple[int, ...]] = {
    "and_of_two": (3,),
    "or_of_two_partial": (2,),
    "single_comparison": (3,),
    "not_of_truthiness": (3,),
    "three_and_full": (4,),
    "three_or_partial": (3,),
    "and_or_none_is_no_difference": (2,),
    "masking_only_or_then_and": (2,),
    "masking_only_and_then_or": (2,),
    "or_and_or_full": (5,),
    "and_or_and_nested_full": (6,),
    "not_over_and_with_call": (4,),
    "not_of_nots": (2,),
    "not_at_three_levels": (4,),
    "five_mixed": (4,),
    "six_full": (8,),
    "boolops_inside_a_condition": (3,),
    "assigned_and_returned_are_not_decisions": (3,),
    "walrus": (3,),
    "side_effect_append": (4,),
    "side_effect_global_counter": (4,),
    "toggling_bool_in_while": (6,),
    "while_counter_or_not": (7,),
    "raise_in_property": (5,),
    "raise_in_first_condition": (4,),
    "raise_hides_a_value": (3,),
    "raise_in_a_conditions_truth": (5,),
    "raise_caught_in_loop": (5,),
    "elif_chain": (7, 5, 3),
    "while_and_conditional_expression": (21, 18),
    "while_pops": (5,),
    "conditional_expression_or": (3,),
    "assert_or": (4,),
    "assert_not_with_raise": (5,),
    "match_guards": (4, 3),
    "never_evaluated": (1, 0),
    "multiline_tests": (3, 2),
    "comprehension_if": (5,),
    "dict_comprehension_two_ifs": (4, 3),
    "comprehension_walrus_not": (4,),
    "nested_comprehensions_order": (4, 3),
    "generator_expression_in_condition": (4, 6),
    "decision_inside_a_condition": (4, 4),
    "lambda_inside_a_condition": (3,),
    "nested_function_is_not_the_outer": (3, 4),
    "classmethod_chained_comparison": (4,),
    "plain_method": (4,),
    "nested_class_staticmethod_while": (6,),
    "generator_not_consumed": (0,),
    "generator_consumed": (4,),
    "async_function": (3,),
}

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _function_node(module: ast.Module, qualname: str) -> ast.AST:
    node: ast.AST = module
    for part in qualname.split("."):
        body = getattr(node, "body", [])
        matches = [
            child
            for child in body
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
            and child.name == part
        ]
        assert len(matches) == 1, f"no single definition of {part} in {qualname}"
        node = matches[0]
    assert isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    return node


def _decision_tests(function: ast.AST) -> list[ast.expr]:
    """The tests of the function's own decisions, by (line, column)."""
    found: list[ast.expr] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If | ast.While | ast.IfExp | ast.Assert):
            found.append(node.test)
        elif isinstance(node, ast.comprehension):
            found.extend(node.ifs)
        elif isinstance(node, ast.match_case) and node.guard is not None:
            found.append(node.guard)
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, _SCOPES):
                visit(child)

    for statement in function.body:  # type: ignore[attr-defined]
        if not isinstance(statement, _SCOPES):
            visit(statement)
    return sorted(found, key=lambda test: (test.lineno, test.col_offset))


def _leaves(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, ast.BoolOp):
        return [leaf for value in node.values for leaf in _leaves(value)]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return _leaves(node.operand)
    return [node]


def _shape(node: ast.expr, counter: list[int]) -> str:
    """The decision's and/or/not tree over c0(), c1(), ... (fully parenthesized)."""
    if isinstance(node, ast.BoolOp):
        op = " and " if isinstance(node.op, ast.And) else " or "
        return op.join(f"({_shape(value, counter)})" for value in node.values)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return f"not ({_shape(node.operand, counter)})"
    counter[0] += 1
    return f"c{counter[0] - 1}()"


def _resolve(namespace: dict[str, Any], qualname: str) -> Any:
    head, *rest = qualname.split(".")
    obj = namespace[head]
    for part in rest:
        obj = getattr(obj, part)
    return obj


def test_corpus_size_and_names():
    names = [case["name"] for case in CASES]
    assert len(names) >= 30
    assert len(set(names)) == len(names)
    assert set(names) == set(EXPECTED_EVALUATIONS)
    sizes = {len(d["conditions"]) for case in CASES for d in case["decisions"]}
    assert sizes == {1, 2, 3, 4, 5, 6}


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_case_is_consistent(case: dict[str, Any]) -> None:
    assert set(case) == {"name", "source", "function", "calls", "decisions"}
    code = compile(case["source"], f"<{case['name']}>", "exec")
    namespace: dict[str, Any] = {"__name__": f"corpus_{case['name']}"}
    exec(code, namespace)
    assert callable(_resolve(namespace, case["function"]))
    assert all(isinstance(args, tuple) for args in case["calls"])

    tests = _decision_tests(_function_node(ast.parse(case["source"]), case["function"]))
    decisions = case["decisions"]
    assert [d["line"] for d in decisions] == [test.lineno for test in tests]
    evaluations = []
    for decision, test in zip(decisions, tests, strict=True):
        conditions = decision["conditions"]
        assert conditions == tuple(ast.unparse(leaf) for leaf in _leaves(test))
        count = len(conditions)
        shape = _shape(test, [0])
        possible = traced_vectors(shape, itertools.product((True, False), repeat=count))
        for (values, outcome), times in decision["vectors"].items():
            assert len(values) == count
            assert isinstance(outcome, bool)
            assert isinstance(times, int)
            assert times > 0
            assert (values, outcome) in possible["vectors"], (values, outcome, shape)
        for index, times in decision["raised"].items():
            assert 0 <= index < count
            assert isinstance(times, int)
            assert times > 0
        evaluations.append(sum(decision["vectors"].values()) + sum(decision["raised"].values()))
        for key in ("condition_covered", "mcdc_unique", "mcdc_masking"):
            assert len(decision[key]) == count
            assert all(isinstance(verdict, bool) for verdict in decision[key])
        verdicts = mcdc_by_definition(shape, decision["vectors"])
        assert decision["condition_covered"] == verdicts["condition_covered"]
        assert decision["mcdc_unique"] == verdicts["unique"]
        assert decision["mcdc_masking"] == verdicts["masking"]
    assert tuple(evaluations) == EXPECTED_EVALUATIONS[case["name"]]
