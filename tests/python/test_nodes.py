"""Unit tests of :mod:`pathprof.python.nodes`: walking trees without the context and
operator singletons (against :mod:`ast`'s own walkers), copying them, making inserted
nodes artificial and locating them (start of the anchor, no width, located parts
left alone), the first code of a statement list and the first evaluated part of an
expression, and the builders -- reads and stores of locals and of the holder's
names, counts, adds, and the observer, an ``except`` clause that never matches but
whose type expression runs as the exception passes. Built code is compiled and run
to check what it does."""

from __future__ import annotations

import ast
import types

import pytest
from hypothesis import given, settings

from pathprof.python.names import HOLDER, MODULE, PLACEHOLDER, REGISTER
from pathprof.python.nodes import (
    PROBE_MARK_LINE,
    UNLOCATED,
    add,
    artificial,
    artificial_shell,
    assign,
    call_module,
    child_nodes,
    const,
    copy_tree,
    count,
    first_code,
    first_evaluated,
    holder_name,
    is_inserted,
    line_anchor,
    load,
    locate_at,
    mark_located_later,
    mark_unlocated,
    node_fields,
    observer,
    store,
    walk,
)
from pathprof.runtime import holder as holders

from .random_programs import functions

_SINGLETONS = (ast.expr_context, ast.operator, ast.unaryop, ast.boolop, ast.cmpop)

SAMPLE = """\
def f(a, *, b=1):
    x = [i * 2 for i in range(a) if i]
    if x and not b:
        return {k: v for k, v in zip(x, x)}
    while a > 0:
        a -= 1
    return lambda y: y + a
"""


def _statements(source: str) -> list[ast.stmt]:
    return ast.parse(source).body


def _run(stmts: list[ast.stmt], namespace: dict[str, object]) -> dict[str, object]:
    """Compile ``stmts`` as a module (inserted code may stay unlocated) and run them."""
    module = ast.Module(body=stmts, type_ignores=[])
    exec(compile(module, "<nodes>", "exec"), namespace)
    return namespace


def _bound(stmts: list[ast.stmt], names: dict[str, object]) -> types.CodeType:
    """``stmts`` compiled, the holder's placeholder bound to a holder with ``names``."""
    code = compile(ast.Module(body=stmts, type_ignores=[]), "<nodes>", "exec")
    holder = types.ModuleType("holder")
    holder.__dict__.update(names)
    return holders.bind(code, holder)


# ---------------------------------------------------------------------------
# Walking


def test_node_fields_leave_out_the_singletons() -> None:
    assert node_fields(ast.BinOp) == ("left", "right")
    assert node_fields(ast.Compare) == ("left", "comparators")
    assert node_fields(ast.Name) == ("id",)
    assert node_fields(ast.Subscript) == ("value", "slice")


def test_child_nodes_are_iter_child_nodes_without_singletons() -> None:
    for node in ast.walk(ast.parse(SAMPLE)):
        expected = [c for c in ast.iter_child_nodes(node) if not isinstance(c, _SINGLETONS)]
        assert child_nodes(node) == expected


def test_walk_starts_with_the_node_and_finds_what_ast_walk_finds() -> None:
    tree = ast.parse(SAMPLE)
    found = walk(tree)
    assert found[0] is tree
    expected = [n for n in ast.walk(tree) if not isinstance(n, _SINGLETONS)]
    assert sorted(map(id, found)) == sorted(map(id, expected))
    assert len(found) == len(expected)  # each node once
    assert not any(isinstance(n, _SINGLETONS) for n in found)


def test_walk_of_a_leaf_is_the_leaf() -> None:
    leaf = ast.Constant(value=1)
    assert walk(leaf) == [leaf]


@settings(max_examples=25, deadline=None)
@given(functions(max_depth=2))
def test_walk_and_copy_hold_for_random_programs(source: str) -> None:
    tree = ast.parse(source)
    expected = [n for n in ast.walk(tree) if not isinstance(n, _SINGLETONS)]
    assert sorted(map(id, walk(tree))) == sorted(map(id, expected))
    memo: dict[int, ast.AST] = {}
    copied = copy_tree(tree, memo)
    assert ast.dump(copied, include_attributes=True) == ast.dump(tree, include_attributes=True)
    assert set(memo) == {id(n) for n in expected}
    originals = {id(n) for n in expected}
    assert not originals & {id(n) for n in walk(copied)}


# ---------------------------------------------------------------------------
# Copying


def test_a_copy_is_equal_and_shares_no_node_but_the_singletons() -> None:
    tree = ast.parse(SAMPLE)
    tree.body[0].marked = "kept"  # type: ignore[attr-defined]
    memo: dict[int, ast.AST] = {}
    copied = copy_tree(tree, memo)
    assert ast.dump(copied, include_attributes=True) == ast.dump(tree, include_attributes=True)
    assert copied.body[0].marked == "kept"  # type: ignore[attr-defined]
    for original in walk(tree):
        assert memo[id(original)] is not original
        assert type(memo[id(original)]) is type(original)
    # Context singletons are shared (nothing changes them in place).
    name = next(n for n in ast.walk(tree) if isinstance(n, ast.Name))
    assert memo[id(name)].ctx is name.ctx  # type: ignore[attr-defined]


def test_a_copys_lists_are_its_own() -> None:
    tree = ast.parse("def f():\n    a = 1\n")
    copied = copy_tree(tree)
    copied.body[0].body.append(ast.Pass())  # type: ignore[attr-defined]
    assert len(tree.body[0].body) == 1  # type: ignore[attr-defined]


def test_a_copy_changes_nothing_when_changed() -> None:
    tree = ast.parse("x = 1\n")
    copied = copy_tree(tree)
    copied.body[0].value.value = 2  # type: ignore[attr-defined]
    assert tree.body[0].value.value == 1  # type: ignore[attr-defined]


# ---------------------------------------------------------------------------
# Locations


def _locations(node: ast.AST) -> tuple[object, object, object, object]:
    return (getattr(node, "lineno", None), getattr(node, "col_offset", None),
            getattr(node, "end_lineno", None), getattr(node, "end_col_offset", None))


def test_artificial_takes_every_location_away() -> None:
    stmt = _statements("x = f(a, b + 1)\n")[0]
    assert artificial(stmt) is stmt
    located = [n for n in walk(stmt) if "lineno" in n._attributes]
    # Assign, Name x, Call, Name f, Name a, BinOp, Name b, Constant 1
    assert len(located) == 8
    for node in located:
        assert _locations(node) == (UNLOCATED, -1, UNLOCATED, -1)


def test_an_artificial_shell_keeps_what_it_holds_located() -> None:
    stmt = _statements("if a:\n    b = 1\n")[0]
    assert artificial_shell(stmt) is stmt
    assert _locations(stmt) == (UNLOCATED, -1, UNLOCATED, -1)
    assert _locations(stmt.test) == (1, 3, 1, 4)  # type: ignore[attr-defined]
    assert _locations(stmt.body[0]) == (2, 4, 2, 9)  # type: ignore[attr-defined]


def test_locate_at_gives_the_anchors_start_with_no_width() -> None:
    inserted = assign("@pp_r", ast.BinOp(left=load("@pp_r"), op=ast.Add(), right=const(2)))
    program = ast.Name(id="kept", ctx=ast.Load(), lineno=9, col_offset=1, end_lineno=9,
                       end_col_offset=5)
    inserted.value.right = program  # type: ignore[attr-defined]
    anchor = _statements("\n\nz = (a +\n     b)\n")[0].value  # type: ignore[attr-defined]
    assert _locations(anchor) == (3, 5, 4, 6)  # spans two lines
    assert locate_at([inserted], anchor) == [inserted]
    assert _locations(inserted) == (3, 5, 3, 5)
    assert _locations(inserted.value) == (3, 5, 3, 5)  # type: ignore[attr-defined]
    assert _locations(program) == (9, 1, 9, 5)  # a located part keeps its location


def test_mark_unlocated_puts_inserted_code_at_the_mark_line() -> None:
    tree = ast.parse("x = 1\n")
    tree.body.append(assign("y", const(2)))
    mark_unlocated(tree)
    assert tree.body[0].lineno == 1
    assert tree.body[1].lineno == tree.body[1].end_lineno == PROBE_MARK_LINE
    assert PROBE_MARK_LINE == (1 << 30) - 1


def test_inserted_code_is_unlocated_or_marked() -> None:
    stmt = assign("y", const(2))
    assert is_inserted(stmt)
    stmt.lineno = PROBE_MARK_LINE
    assert is_inserted(stmt)
    located = locate_at([assign("y", const(2))], line_anchor(4))[0]
    assert not is_inserted(located)  # once located, taken for the program's


def test_a_line_anchor_stands_at_the_start_of_its_line() -> None:
    assert _locations(line_anchor(12)) == (12, 0, 12, 0)


def test_first_code_passes_over_declarations_and_inserted_code() -> None:
    stmts = _statements("global g\nnonlocal_free = 1\n")
    stmts.insert(0, assign("@pp_r", const(0)))
    first = first_code(stmts)
    assert first is not None
    assert _locations(first) == (2, 0, 2, 0)


def test_first_code_passes_over_code_located_later() -> None:
    later = locate_at([assign("@pp_r", const(0))], line_anchor(5))[0]
    mark_located_later(later)
    stmts = [later, *_statements("\n\n\nx = 1\n")]
    first = first_code(stmts)
    assert first is not None
    assert _locations(first) == (4, 0, 4, 0)


def test_first_code_of_a_decorated_def_is_its_first_decorator() -> None:
    stmts = _statements("@a\n@b\ndef f():\n    pass\n")
    first = first_code(stmts)
    assert first is not None
    assert _locations(first) == (1, 1, 1, 1)


def test_first_code_of_no_code_is_none() -> None:
    assert first_code([]) is None
    assert first_code(_statements("global a, b\n")) is None
    assert first_code([assign("x", const(1))]) is None


@pytest.mark.parametrize(("source", "line", "column"), [
    ("f(\n  x)", 1, 0),  # a call: its function
    ("[\n  x,\n  y]", 2, 2),  # a list reports its first item first
    ("(\n  a.b.c)", 2, 2),  # an attribute chain: the innermost value
    ("(\n  a\n  if c else b)", 3, 5),  # a conditional expression: its test
    ("(\n  -x)", 2, 3),  # a unary operation: its operand
    ("(\n  a + b)", 2, 2),  # a binary operation: its left side
    ("{\n  1: 2}", 2, 2),  # a dict: its first key
    ("{**d}", 1, 0),  # a dict whose first item is unpacked: the dict itself
    ("[]", 1, 0),  # an empty list: itself
    ("x", 1, 0),
])
def test_first_evaluated_finds_the_part_that_runs_first(source: str, line: int,
                                                       column: int) -> None:
    expr = ast.parse(source, mode="eval").body
    found = first_evaluated(expr)
    assert (found.lineno, found.col_offset) == (line, column)


def test_first_evaluated_stops_at_a_part_without_a_location() -> None:
    expr = ast.parse("f(x)", mode="eval").body
    expr.func = ast.Name(id="g", ctx=ast.Load())  # type: ignore[attr-defined]
    assert first_evaluated(expr) is expr


# ---------------------------------------------------------------------------
# Builders


def test_a_local_is_read_and_stored_as_a_name() -> None:
    read, written = load("@pp_r"), store("@pp_r")
    assert isinstance(read, ast.Name)
    assert isinstance(read.ctx, ast.Load)
    assert read.id == "@pp_r"
    assert isinstance(written, ast.Name)
    assert isinstance(written.ctx, ast.Store)
    assert holder_name(read) is None


def test_a_module_name_is_an_attribute_of_the_holders_placeholder() -> None:
    read = load("_@pp_c0")
    assert isinstance(read, ast.Attribute)
    assert read.attr == "_@pp_c0"
    assert isinstance(read.value, ast.Constant)
    assert read.value.value == PLACEHOLDER
    assert holder_name(read) == "_@pp_c0"
    assert isinstance(store("_@pp_c0").ctx, ast.Store)
    # To visitors and to unparse it is an Attribute.
    assert type(read).__name__ == "Attribute"
    assert ast.unparse(read) == repr(PLACEHOLDER) + "._@pp_c0"


def test_the_holder_itself_is_read_as_its_placeholder_and_never_stored() -> None:
    read = load(HOLDER)
    assert isinstance(read, ast.Constant)
    assert read.value == PLACEHOLDER
    assert holder_name(read) is None
    with pytest.raises(ValueError, match="only read"):
        store(HOLDER)


def test_locating_a_holder_read_locates_its_placeholder() -> None:
    read = load("_@pp_m")
    ast.copy_location(read, ast.Name(id="x", lineno=7, col_offset=3, end_lineno=7,
                                     end_col_offset=4))
    assert _locations(read.value) == (7, 3, 7, 4)  # type: ignore[attr-defined]
    read.lineno = 8
    assert read.value.lineno == 8  # type: ignore[attr-defined]


def test_holder_name_is_none_for_a_program_attribute() -> None:
    attribute = ast.parse("a.b", mode="eval").body
    assert holder_name(attribute) is None


def test_builders_make_artificial_statements() -> None:
    for stmt in (assign("@pp_r", const(1)), add("@pp_r", 2), count("@pp_c", const(0))):
        assert all(getattr(n, "lineno", UNLOCATED) == UNLOCATED for n in walk(stmt))


def test_assign_add_and_count_do_what_they_say() -> None:
    stmts = [assign("@pp_r", const(5)), add("@pp_r", 3), count("table", load("@pp_r")),
             count("table", const(1)), count("table", const(1))]
    namespace = _run(stmts, {"table": [0] * 10})
    assert namespace["@pp_r"] == 8
    assert namespace["table"] == [0, 2, 0, 0, 0, 0, 0, 0, 1, 0]


def test_a_holder_name_is_read_from_the_bound_holder() -> None:
    table = [0, 0, 0]
    code = _bound([count("_@pp_c1", const(2)), assign("_@pp_x", const("set"))],
                  {"_@pp_c1": table})
    namespace: dict[str, object] = {}
    exec(code, namespace)
    assert table == [0, 0, 1]
    assert "_@pp_c1" not in namespace
    assert "_@pp_x" not in namespace


def test_call_module_calls_the_module_state() -> None:
    calls: list[tuple[object, ...]] = []
    state = types.SimpleNamespace(handler=lambda *args: calls.append(args) or 42)
    code = _bound([assign("@pp_r", call_module("handler", const(1), const("a")))],
                  {MODULE: state})
    namespace: dict[str, object] = {}
    exec(code, namespace)
    assert calls == [(1, "a")]
    assert namespace["@pp_r"] == 42


def test_const_is_a_constant() -> None:
    assert const((1, "a")).value == (1, "a")


def _guarded(handler: ast.ExceptHandler, raised: str) -> list[ast.stmt]:
    """``try: <raised> except <handler>``, then ``after = True``."""
    body = _statements(raised)
    wrapper = ast.Try(body=body, handlers=[handler], orelse=[], finalbody=[])
    return [artificial_shell(wrapper), *_statements("after = True\n")]


def test_an_observer_runs_its_effects_and_lets_the_exception_pass() -> None:
    seen: list[object] = []
    effect = ast.Call(func=ast.Name(id="note", ctx=ast.Load()),
                      args=[ast.Call(func=ast.Name(id="exception", ctx=ast.Load()), args=[],
                                     keywords=[])], keywords=[])
    clause = observer([(REGISTER, effect), ("second", const(7))])
    assert clause.name is None
    assert len(clause.body) == 1
    stmts = [assign(REGISTER, const(0)), *_guarded(clause, "raise KeyError('k')\n")]
    namespace: dict[str, object] = {"note": lambda e: seen.append(e) or "noted",
                                    "exception": __import__("sys").exception}
    with pytest.raises(KeyError) as caught:
        _run(stmts, namespace)
    assert seen == [caught.value]  # the effect saw the passing exception
    assert namespace[REGISTER] == "noted"  # assigned by :=
    assert namespace["second"] == 7
    assert "after" not in namespace  # the exception left: the clause never matched


def test_an_observers_effects_do_not_run_without_an_exception() -> None:
    clause = observer([(REGISTER, const(1))])
    namespace = _run([assign(REGISTER, const(0)), *_guarded(clause, "x = 1\n")], {})
    assert namespace[REGISTER] == 0
    assert namespace["after"] is True


def test_an_observer_of_no_effects_still_matches_nothing() -> None:
    with pytest.raises(ZeroDivisionError):
        _run(_guarded(observer([]), "1 / 0\n"), {})
