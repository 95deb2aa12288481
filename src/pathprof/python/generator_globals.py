"""Generators and coroutines read pathprof's module names into locals as they start.

A local is the cheapest read there is: a generator, resumed many times, reads its
tables and its module's state from its own frame rather than from the holder
(:mod:`pathprof.runtime.holder`) at every probe. Names that change while the
program runs (switches, flags) are read where they are tested.
"""

from __future__ import annotations

import ast

from pathprof.python.names import captured_name, is_capturable
from pathprof.python.nodes import (
    assign,
    first_code,
    holder_name,
    is_inserted,
    load,
    locate_at,
    node_fields,
)
from pathprof.python.plan import FunctionPlan
from pathprof.python.scan import is_generator

__all__ = ["capture_globals"]


def capture_globals(fp: FunctionPlan) -> None:
    """In ``fp``'s function, if a generator or coroutine, read pathprof's module
    names into locals as it starts (``@pp_gc3 = _@pp_c3``...), after the
    docstring, and use those; not the globals that change while the program runs
    (:func:`~pathprof.python.names.is_capturable`). Functions, classes and lambdas
    inside it are left alone. Run once the probes are in."""
    node = fp.cfg.node
    start = fp.cfg.body_start
    if not (isinstance(node, ast.AsyncFunctionDef) or is_generator(node)):
        return
    captured: dict[str, str] = {}
    pending: list[ast.AST] = list(node.body[start:])
    while pending:
        parent = pending.pop()
        if isinstance(parent, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
                      | ast.Lambda):
            continue  # (their decorators, defaults and bases are the program's code)
        for field in node_fields(type(parent)):
            value = getattr(parent, field, None)
            items = value if type(value) is list else [value]
            for i, child in enumerate(items):
                if not isinstance(child, ast.AST):
                    continue
                name = holder_name(child)
                if (name is not None and isinstance(child.ctx, ast.Load)  # type: ignore[attr-defined]
                        and is_capturable(name)):
                    local = captured_name(name)
                    captured[local] = name
                    read = ast.copy_location(ast.Name(id=local, ctx=ast.Load()), child)
                    if type(value) is list:
                        value[i] = read
                    else:
                        setattr(parent, field, read)
                else:
                    pending.append(child)
    if not captured:
        return
    reads = [assign(local, load(name)) for local, name in sorted(captured.items())]
    first = _first_program_code(node.body[start:])
    if first is not None and not fp.mark_probes:
        locate_at(reads, first)
    node.body[start:start] = reads


def _first_program_code(stmts: list[ast.stmt]) -> ast.AST | None:
    """:func:`~pathprof.python.nodes.first_code`, looking into the statements
    pathprof wrapped the program's in (an inserted ``try``, the measured branch of
    a switch)."""
    for stmt in stmts:
        if is_inserted(stmt) and isinstance(stmt, ast.Try | ast.If):
            found = _first_program_code(stmt.body)
            if found is not None:
                return found
            continue
        found = first_code([stmt])
        if found is not None:
            return found
    return None
