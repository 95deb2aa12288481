"""Unit tests of :mod:`pathprof.python.generator_globals`: a generator or coroutine
reads pathprof's module names into locals as it starts (after its docstring, one
``@pp_g<x> = _@pp_<x>`` per name, in order of the local's name) and uses the locals,
except for the names that change while the program runs (switches, flags), which it
reads where they are tested; plain functions, and the functions, classes and lambdas
inside a generator, are left alone. Checked on the tree, and by running a generator
whose holder changes between its steps."""

from __future__ import annotations

import ast
import textwrap
import types

from pathprof.python.cfg import build_cfg
from pathprof.python.generator_globals import capture_globals
from pathprof.python.names import HOLDER
from pathprof.python.nodes import (
    PROBE_MARK_LINE,
    UNLOCATED,
    artificial,
    artificial_shell,
    holder_name,
    load,
    store,
)
from pathprof.python.plan import FunctionPlan, plan_function
from pathprof.runtime import holder as holders


def _plan(source: str, *, mark_probes: bool = True) -> tuple[ast.Module, FunctionPlan]:
    tree = ast.parse(textwrap.dedent(source))
    node = tree.body[0]
    assert isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    fp = plan_function(build_cfg(node, node.name))
    fp.mark_probes = mark_probes
    return tree, fp


def _replace_names(tree: ast.AST) -> None:
    """Every read of a program name ``H_<x>`` becomes a read of the holder's
    ``_@pp_<x>`` (the rewriter's :func:`~pathprof.python.nodes.load`), keeping its
    location; a store ``H_<x> = ...`` becomes a store to the holder."""
    class Swap(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.AST:
            if not node.id.startswith("H_"):
                return node
            name = "_@pp_" + node.id[2:]
            made = load(name) if isinstance(node.ctx, ast.Load) else store(name)
            return ast.copy_location(made, node)

    Swap().visit(tree)


def _holder_reads(node: ast.AST) -> list[str]:
    return sorted(name for n in ast.walk(node) if (name := holder_name(n)) is not None
                  and isinstance(n.ctx, ast.Load))  # type: ignore[attr-defined]


def _local_reads(node: ast.AST) -> list[str]:
    return sorted(n.id for n in ast.walk(node) if isinstance(n, ast.Name)
                  and n.id.startswith("@pp_g") and isinstance(n.ctx, ast.Load))


GENERATOR = """\
def g():
    "the docstring"
    yield (H_c0[0], H_m, H_i0)
    yield (H_c0[0], H_m, H_i0)
"""


def test_a_generator_reads_its_fixed_names_once_as_it_starts() -> None:
    tree, fp = _plan(GENERATOR)
    _replace_names(tree)
    capture_globals(fp)
    node = fp.cfg.node
    assert isinstance(node.body[0], ast.Expr)  # the docstring stays first
    reads = node.body[1:3]
    assert [ast.unparse(r.targets[0]) for r in reads] == ["@pp_gc0", "@pp_gm"]  # type: ignore[attr-defined]
    assert [holder_name(r.value) for r in reads] == ["_@pp_c0", "_@pp_m"]  # type: ignore[attr-defined]
    rest = ast.Module(body=node.body[3:], type_ignores=[])
    # the switch is read where it is tested; the others are the locals now
    assert _holder_reads(rest) == ["_@pp_i0", "_@pp_i0"]
    assert _local_reads(rest) == ["@pp_gc0", "@pp_gc0", "@pp_gm", "@pp_gm"]


def test_the_generator_sees_fixed_names_as_they_were_and_switches_as_they_are() -> None:
    tree, fp = _plan(GENERATOR)
    _replace_names(tree)
    capture_globals(fp)
    holder = types.ModuleType("holder")
    holder.__dict__.update({"_@pp_c0": ["first table"], "_@pp_m": "first state",
                            "_@pp_i0": True})
    namespace: dict[str, object] = {}
    exec(holders.bind(compile(ast.fix_missing_locations(tree), "<g>", "exec"), holder),
         namespace)
    generator = namespace["g"]()  # type: ignore[operator]
    assert next(generator) == ("first table", "first state", True)
    holder.__dict__.update({"_@pp_c0": ["second table"], "_@pp_m": "second state",
                            "_@pp_i0": False})
    assert next(generator) == ("first table", "first state", False)


def test_a_coroutine_reads_them_too() -> None:
    tree, fp = _plan("async def g():\n    return H_c1\n")
    _replace_names(tree)
    capture_globals(fp)
    node = fp.cfg.node
    assert [ast.unparse(s) for s in node.body[:1]] == [
        "@pp_gc1 = " + repr(holders.PLACEHOLDER) + "._@pp_c1"]
    assert _local_reads(node.body[1]) == ["@pp_gc1"]


def test_a_plain_function_is_left_alone() -> None:
    tree, fp = _plan("def f():\n    return H_c0\n")
    _replace_names(tree)
    before = ast.dump(tree, include_attributes=True)
    capture_globals(fp)
    assert ast.dump(tree, include_attributes=True) == before


def test_a_generator_without_pathprofs_names_is_left_alone() -> None:
    tree, fp = _plan("def g(x):\n    yield x\n")
    before = ast.dump(tree, include_attributes=True)
    capture_globals(fp)
    assert ast.dump(tree, include_attributes=True) == before


def test_stores_and_the_holder_itself_are_not_captured() -> None:
    tree, fp = _plan("def g():\n    H_c0 = 1\n    yield 1\n")
    _replace_names(tree)
    fp.cfg.node.body.append(ast.Expr(value=load(HOLDER)))
    before = ast.dump(tree)
    capture_globals(fp)
    assert ast.dump(tree) == before


def test_functions_classes_and_lambdas_inside_are_left_alone() -> None:
    tree, fp = _plan("""\
        def g():
            def inner():
                return H_c0
            class K:
                x = H_c0
            f = lambda: H_c0
            yield H_c0
        """)
    _replace_names(tree)
    capture_globals(fp)
    node = fp.cfg.node
    assert ast.unparse(node.body[0].targets[0]) == "@pp_gc0"  # type: ignore[attr-defined]
    inner, klass, lam, last = node.body[1:]
    assert _holder_reads(inner) == ["_@pp_c0"]
    assert _holder_reads(klass) == ["_@pp_c0"]
    assert _holder_reads(lam) == ["_@pp_c0"]
    assert _local_reads(last) == ["@pp_gc0"]


def test_the_reads_are_located_at_the_first_code_of_the_program() -> None:
    tree, fp = _plan("def g():\n    'doc'\n\n    x = 1\n    yield H_c0\n", mark_probes=False)
    _replace_names(tree)
    capture_globals(fp)
    read = fp.cfg.node.body[1]
    assert (read.lineno, read.col_offset, read.end_lineno) == (4, 4, 4)


def test_the_first_code_is_looked_for_inside_pathprofs_own_try() -> None:
    tree, fp = _plan("def g():\n    x = 1\n    yield H_c0\n", mark_probes=False)
    _replace_names(tree)
    node = fp.cfg.node
    # the body in an inserted try, as the rewriter leaves it, after an inserted assign
    wrapper = artificial_shell(ast.Try(body=node.body, handlers=[
        artificial(ast.ExceptHandler(type=None, name=None, body=[ast.Pass()]))],
        orelse=[], finalbody=[]))
    node.body = [wrapper]
    capture_globals(fp)
    read = node.body[0]
    assert (read.lineno, read.col_offset) == (2, 4)


def test_the_reads_stay_unlocated_in_a_build_that_marks_probes() -> None:
    tree, fp = _plan("def g():\n    x = 1\n    yield H_c0\n", mark_probes=True)
    _replace_names(tree)
    capture_globals(fp)
    assert fp.cfg.node.body[0].lineno in (UNLOCATED, PROBE_MARK_LINE)


def test_an_instrumented_generator_keeps_its_counter_table_in_a_local() -> None:
    from pathprof.python.instrument import instrument_source

    source = "def g(n):\n    for i in range(n):\n        yield i\n\ndef f():\n    return 1\n"
    module = instrument_source(source, "<gen>", module_key="generator-globals-test")
    codes = {c.co_name: c for c in module.compile_unbound("<gen>").co_consts
             if isinstance(c, types.CodeType)}
    assert "@pp_gc0" in codes["g"].co_varnames
    assert not any(n.startswith("@pp_g") for n in codes["f"].co_varnames)
