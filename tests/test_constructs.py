"""The table of statement kinds (:mod:`pathprof.constructs`) against the running
Python's own :mod:`ast`: every statement kind is named once, the CFG has a rule for
exactly the compound and leaving ones, and each row's fields are the node's."""

from __future__ import annotations

import ast
import textwrap

import pytest

from pathprof import constructs
from pathprof.constructs import CONSTRUCTS, LEAVING, SIMPLE
from pathprof.python.cfg import _Builder, build_cfg

#: The fields of a node that can hold statement lists or clauses.
_STATEMENT_FIELDS = {"body", "orelse", "finalbody"}
_CLAUSE_FIELDS = {"handlers", "cases"}


def _statement_kinds() -> set[type[ast.stmt]]:
    """Every subclass of :class:`ast.stmt` this Python defines (its ``ast`` module's
    own, not classes a test or a library derived)."""
    found: set[type[ast.stmt]] = set()
    todo: list[type[ast.stmt]] = [ast.stmt]
    while todo:
        for kind in todo.pop().__subclasses__():
            if kind.__module__ == "ast" and kind is getattr(ast, kind.__name__, None):
                found.add(kind)
                todo.append(kind)
    return found


def test_every_statement_kind_of_this_python_is_named_once() -> None:
    """A Python that adds a statement kind fails here until the table says what it
    is (and the CFG has a rule for it, if it is not simple)."""
    kinds = _statement_kinds()
    assert len(kinds) >= 27  # 3.11's statements (3.12 adds TypeAlias)
    groups = [set(CONSTRUCTS), set(LEAVING), set(SIMPLE)]
    for kind in kinds:
        assert sum(kind in group for group in groups) == 1, kind.__name__
    assert set().union(*groups) == kinds


def test_the_cfg_has_a_rule_for_exactly_the_compound_and_leaving_statements() -> None:
    for kind in _statement_kinds():
        has_rule = hasattr(_Builder, f"_handle_{kind.__name__}")
        assert has_rule == (kind in CONSTRUCTS or kind in LEAVING), kind.__name__


def test_each_rows_fields_are_the_nodes_statement_fields() -> None:
    for kind, row in CONSTRUCTS.items():
        fields = set(kind._fields)
        assert set(row.bodies) == fields & _STATEMENT_FIELDS, kind.__name__
        assert set(row.clauses) == fields & _CLAUSE_FIELDS, kind.__name__
        assert row.is_async == kind.__name__.startswith("Async"), kind.__name__


def test_the_groups_are_the_rows_that_say_so() -> None:
    assert set(constructs.LOOPS) == {k for k, row in CONSTRUCTS.items() if row.loop}
    assert set(constructs.FOR_LOOPS) == {k for k in constructs.LOOPS if "iter" in k._fields}
    assert set(constructs.WITHS) == {k for k, row in CONSTRUCTS.items()
                                     if row.wraps and "items" in k._fields}
    assert set(constructs.TRIES) == {k for k, row in CONSTRUCTS.items()
                                     if "handlers" in row.clauses}
    assert set(constructs.SCOPES) <= set(SIMPLE)
    assert set(constructs.FUNCTIONS) == {k for k in constructs.SCOPES if "args" in k._fields}


@pytest.mark.parametrize(("source", "wraps"), [
    ("with a: pass", True),
    ("async def f():\n    async with a: pass", True),
    ("try: pass\nfinally: pass", True),
    ("try: pass\nexcept* E: pass", True),
    ("try: pass\nexcept E: pass", False),
    ("for x in y: pass", False),
    ("x = 1", False),
])
def test_what_runs_code_on_every_way_out_of_its_body(source: str, wraps: bool) -> None:
    node = ast.parse(source).body[0]
    if isinstance(node, ast.AsyncFunctionDef):
        node = node.body[0]
    assert constructs.wraps(node) is wraps


def test_a_statement_kind_with_no_rule_fails_loudly() -> None:
    """A statement the CFG has no rule for is never taken for a simple one."""

    class Novel(ast.stmt):
        _fields = ()

    tree = ast.parse(textwrap.dedent("""
        def f():
            pass
    """))
    function = tree.body[0]
    assert isinstance(function, ast.FunctionDef)
    function.body = [ast.copy_location(Novel(), function.body[0])]
    with pytest.raises(NotImplementedError, match="Novel"):
        build_cfg(function, "f")
