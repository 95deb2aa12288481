"""One walk of a module's tree, before it is rewritten: what later steps ask of the
program's own code, for every function at once.

The rewrite asks three things of each function's own code (not of a function,
class or lambda inside it): whether it is a generator (a ``yield`` of its own), whether it
names a way to its frame's locals (``sys._getframe``, ``eval``, ``locals``...:
:mod:`pathprof.python.outside` then keeps its registers outside the frame), and
where it calls ``locals()``, ``vars()`` or ``dir()`` without arguments (each call
then hides pathprof's names: :func:`pathprof.python.instrument.hide_own_names`).
Asking each question with a walk of its own cost a walk per function per
question, and nested functions were walked again inside every function around
them; :func:`scan_module` answers all three in one walk of the module.

A function's own code is its body. Its decorators, default values and
annotations run in the scope around it, so they count for the function (or
class body, or module) that defines it; likewise a class's bases and a lambda's
defaults. For frames, a lambda is part of the function it is written in (it runs
in a frame of its own, but what reaches that frame reaches the same names).

Invariant: for every function node ``f`` of the tree, ``is_generator(f)`` and
``reaches_frame(f)`` (read back from the node) are what a walk of ``f.body``
alone, stopping at nested scopes, finds.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from pathprof.python.nodes import node_fields

__all__ = ["ModuleScan", "is_generator", "names_a_frame", "reaches_own_frame", "scan_module"]

#: Names whose call, or attribute access, can reach the calling frame's locals.
_FRAME_NAMES = frozenset({"eval", "exec", "breakpoint", "locals", "vars", "dir", "_getframe",
                          "currentframe", "set_trace"})
_FRAME_ATTRIBUTES = frozenset({"_getframe", "currentframe", "f_locals", "f_back", "set_trace",
                               "getouterframes", "getinnerframes", "_current_frames"})
_INSPECT_FUNCTIONS = frozenset({"stack", "trace", "getframeinfo"})
#: Builtins that, called without arguments, show the caller's local names.
NAME_VIEWS = frozenset({"locals", "vars", "dir"})

#: Attributes of a function's node that keep the scan's answers.
_GENERATOR = "_pathprof_generator"
_REACHES_FRAME = "_pathprof_reaches_frame"

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
#: The fields of a scope's node that hold its own code; the others (decorators,
#: defaults, annotations, bases) belong to the scope around it.
_OWN_FIELDS = {ast.FunctionDef: "body", ast.AsyncFunctionDef: "body", ast.ClassDef: "body",
               ast.Lambda: "body"}


def names_a_frame(node: ast.AST) -> bool:
    """Whether ``node`` itself (a name or an attribute) is a way to a frame's locals."""
    if isinstance(node, ast.Name):
        return node.id in _FRAME_NAMES
    return isinstance(node, ast.Attribute) and (
        node.attr in _FRAME_ATTRIBUTES
        or (node.attr in _INSPECT_FUNCTIONS and isinstance(node.value, ast.Name)
            and node.value.id == "inspect"))


def is_name_view(node: ast.AST) -> bool:
    """Whether ``node`` is ``locals()``, ``vars()`` or ``dir()`` without arguments."""
    return (type(node) is ast.Call and type(node.func) is ast.Name
            and node.func.id in NAME_VIEWS and not node.args and not node.keywords)


@dataclass
class ModuleScan:
    """What :func:`scan_module` found."""

    #: every function of the module, outermost first, in source order
    functions: list[ast.FunctionDef | ast.AsyncFunctionDef] = field(default_factory=list)
    #: the functions whose own code names a way to their frame, in that order
    reaching: list[ast.FunctionDef | ast.AsyncFunctionDef] = field(default_factory=list)
    #: the ``locals()``, ``vars()`` and ``dir()`` calls without arguments inside
    #: functions (a class body inside a function included)
    name_views: list[ast.Call] = field(default_factory=list)


def scan_module(tree: ast.AST) -> ModuleScan:
    """Walk ``tree`` once; keep on each function's node whether it is a generator
    and whether its own code reaches its frame (:func:`is_generator`,
    :func:`reaches_own_frame` read them back). ``tree`` may be a function itself:
    its decorators and defaults then belong to no function."""
    scan = ModuleScan()
    generators: set[int] = set()
    reaching: set[int] = set()
    # (node, innermost function or class around it, innermost function, class or
    # lambda around it, whether inside a function)
    pending: list[tuple[ast.AST, ast.AST | None, ast.AST | None, bool]] = [
        (tree, None, None, False)]
    while pending:
        node, owner, scope, in_function = pending.pop()
        kind = type(node)
        if kind is ast.Name:
            if node.id in _FRAME_NAMES and type(owner) in _FUNCTIONS:  # type: ignore[attr-defined]
                reaching.add(id(owner))
            continue
        if kind is ast.Attribute:
            if type(owner) in _FUNCTIONS and names_a_frame(node):
                reaching.add(id(owner))
        elif kind is ast.Yield or kind is ast.YieldFrom:
            if type(scope) in _FUNCTIONS:
                generators.add(id(scope))
        elif kind is ast.Call and in_function and is_name_view(node):
            scan.name_views.append(node)  # type: ignore[arg-type]
        own = _OWN_FIELDS.get(kind)
        inner: tuple[ast.AST | None, ast.AST | None, bool]
        if own is not None and node is not tree:
            if kind is not ast.Lambda:
                if kind is not ast.ClassDef:
                    scan.functions.append(node)  # type: ignore[arg-type]
                inner = (node, node, in_function or kind is not ast.ClassDef)
            else:
                inner = (owner, node, in_function)
        elif own is not None:  # the tree is a function: its body is its own code
            inner = (node, node, True)
        else:
            inner = (owner, scope, in_function)
        children = []
        for name in node_fields(kind):
            value = getattr(node, name, None)
            context = inner if name == own else (owner, scope, in_function)
            if type(value) is list:
                children += [(item, *context) for item in value if isinstance(item, ast.AST)]
            elif isinstance(value, ast.AST):
                children.append((value, *context))
        pending += reversed(children)  # in source order
    if type(tree) in _FUNCTIONS:
        scan.functions.insert(0, tree)  # type: ignore[arg-type]
    for function in scan.functions:
        setattr(function, _GENERATOR, id(function) in generators)
        setattr(function, _REACHES_FRAME, id(function) in reaching)
    scan.reaching = [f for f in scan.functions if id(f) in reaching]
    return scan


def is_generator(node: ast.AST) -> bool:
    """Whether the function ``node`` is a generator (or an async generator): a
    ``yield`` of its own, not of a function, lambda or class inside it (kept on the
    node by :func:`scan_module`; the instrumentation adds no ``yield``)."""
    known = getattr(node, _GENERATOR, None)
    if known is None:
        scan_module(node)
        known = getattr(node, _GENERATOR)
    return bool(known)


def reaches_own_frame(func: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether ``func``'s own code (not that of functions defined in it) names a
    way to its frame's locals (kept on the node by :func:`scan_module`; the
    instrumentation names none)."""
    known = getattr(func, _REACHES_FRAME, None)
    if known is None:
        scan_module(func)
        known = getattr(func, _REACHES_FRAME)
    return bool(known)
