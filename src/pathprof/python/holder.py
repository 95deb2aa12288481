"""The module's names move to its holder, once the module is rewritten.

The rewriter and the prologue write pathprof's module names as names (``_@pp_c3``,
``_@pp_m.exits``...), which is how every part of the front end builds and reads its
code. :func:`move_to_holder` then makes each of them an attribute of the holder:
``_@pp_c3`` becomes ``<PLACEHOLDER>._@pp_c3``, the placeholder being a string
constant that :func:`pathprof.runtime.holder.bind` replaces by the holder of the
module's execution (:mod:`pathprof.runtime.holder` says why). The holder itself,
which the prologue hands :func:`pathprof.runtime.register`, is written
:data:`~pathprof.python.names.HOLDER` and becomes the bare constant.

Only reads of the holder's attributes come out of it: a string constant that is the
object of an attribute access is left as it is by CPython's compiler on every
version (no folding, no specialization on its value), so after :func:`bind` the code
reads the holder. Each new node takes the location of the name it replaces.

Invariant: after it, no ``_@pp_*`` name is left in the tree, and the placeholder
appears only as the object of an attribute access or as a call's argument (the
holder handed to ``register``).
"""

from __future__ import annotations

import ast

from pathprof.python.names import HOLDER, PLACEHOLDER, in_holder
from pathprof.python.nodes import node_fields

__all__ = ["move_to_holder"]


def _moved(name: ast.Name) -> ast.expr:
    holder = ast.copy_location(ast.Constant(value=PLACEHOLDER), name)
    if name.id == HOLDER:
        if not isinstance(name.ctx, ast.Load):
            raise ValueError("the holder itself is only read")
        return holder
    return ast.copy_location(ast.Attribute(value=holder, attr=name.id, ctx=name.ctx), name)


def move_to_holder(tree: ast.AST) -> None:
    """Every ``_@pp_*`` name in ``tree`` made a read of (or a store to) the holder's
    attribute of that name, in place (see the module docstring). A name the holder
    cannot stand for (the target of a ``:=``, a ``global`` declaration) is an error:
    no code of pathprof's has one."""
    todo: list[ast.AST] = [tree]
    fields_of = node_fields
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Global | ast.Nonlocal):
            if any(in_holder(name) for name in node.names):
                raise ValueError(f"{node.names}: the holder's names are not declared")
            continue
        for field in fields_of(type(node)):
            value = getattr(node, field, None)
            if type(value) is list:
                for i, item in enumerate(value):
                    if type(item) is ast.Name and in_holder(item.id):
                        value[i] = _moved(item)
                    elif isinstance(item, ast.AST):
                        todo.append(item)
            elif type(value) is ast.Name:
                if in_holder(value.id):
                    if isinstance(node, ast.NamedExpr):
                        raise ValueError(f"{value.id} := ...: the holder's names are "
                                         "not assigned in an expression")
                    setattr(node, field, _moved(value))
            elif isinstance(value, ast.AST):
                todo.append(value)
