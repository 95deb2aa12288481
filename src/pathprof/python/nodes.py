"""Building the nodes pathprof inserts, and giving them their locations.

The builders (:func:`assign`, :func:`count`, :func:`observer`...) make *artificial*
nodes: line :data:`UNLOCATED` (-1) and column -1, which CPython reads as "no
location" and compiles to instructions that take the location of the instructions
before them, so that no line event and no traceback ever shows them.

Inserted code that some of the program's code follows is then located by
:func:`locate_at`: at the start of that code (:func:`first_code`,
:func:`first_evaluated`, or the one line a loop or a ``with`` is left from), with
no width. Code without a location that starts a basic block would make the next
real line look new to tracers; located at a line that runs next anyway, it adds no
line event, and since probe code does not raise, it never shows in a traceback.
Where no such line is known (code at the end of a statement list, the ``try``
statements pathprof wraps around bodies, the observers in their ``except``
clauses), inserted code stays unlocated.

Tests that must tell probe instructions apart build with ``mark_probes``
(:attr:`pathprof.python.plan.FunctionPlan.mark_probes`): nothing is located, and
once the module is done :func:`mark_unlocated` puts every unlocated node at
:data:`PROBE_MARK_LINE`, a line no source file has.
"""

from __future__ import annotations

import ast
from typing import Any, TypeVar

from pathprof.python.names import HOLDER, MODULE, PLACEHOLDER, in_holder

#: The line (and column) of an artificial node: no location.
UNLOCATED = -1
#: A line no source file has, which tests' builds give inserted code
#: (:func:`mark_unlocated`); the block mapper treats it like "no location".
PROBE_MARK_LINE = (1 << 30) - 1

#: An attribute set on inserted code located at a later statement of the program
#: (:func:`mark_located_later`): it is not where the program's code begins.
_LOCATED_LATER = "_pathprof_located_later"


# ---------------------------------------------------------------------------
# Walking


#: Fields that hold only context and operator singletons (``Load()``, ``Add()``):
#: nodes without a location, which nothing pathprof asks of a tree is about.
_SINGLETON_FIELDS = frozenset({"ctx", "op", "ops"})
#: Per node class, the fields that may hold nodes.
_NODE_FIELDS: dict[type, tuple[str, ...]] = {}


def node_fields(kind: type) -> tuple[str, ...]:
    """The fields of node class ``kind`` that may hold nodes, singletons left out."""
    fields = _NODE_FIELDS.get(kind)
    if fields is None:
        fields = _NODE_FIELDS[kind] = tuple(
            name for name in kind._fields  # type: ignore[attr-defined]
            if name not in _SINGLETON_FIELDS)
    return fields


def child_nodes(node: ast.AST) -> list[ast.AST]:
    """The nodes directly in ``node``, in field order, without the context and
    operator singletons: :func:`ast.iter_child_nodes` as a list, at a third of its
    cost (no generator per node and field)."""
    found: list[ast.AST] = []
    for name in node_fields(type(node)):
        value = getattr(node, name, None)
        if type(value) is list:
            found += [item for item in value if isinstance(item, ast.AST)]
        elif isinstance(value, ast.AST):
            found.append(value)
    return found


def walk(node: ast.AST) -> list[ast.AST]:
    """Every node in ``node``, itself first, depth first, without the context and
    operator singletons: what :func:`ast.walk` yields of the nodes that have a
    location (and of every other kind pathprof looks for), in one list, at a
    fraction of its cost. The order is not :func:`ast.walk`'s (breadth first)."""
    found: list[ast.AST] = []
    todo = [node]
    fields_of = _NODE_FIELDS
    while todo:
        current = todo.pop()
        found.append(current)
        kind = type(current)
        fields = fields_of.get(kind) or node_fields(kind)
        for name in fields:
            value = getattr(current, name, None)
            if type(value) is list:
                todo += [item for item in value if isinstance(item, ast.AST)]
            elif isinstance(value, ast.AST):
                todo.append(value)
    return found


def copy_tree(node: _Copied, memo: dict[int, ast.AST] | None = None) -> _Copied:
    """A copy of ``node`` and everything in it, as :func:`copy.deepcopy` makes one of a
    tree, at a third of its cost: each node made afresh with its attributes (fields,
    locations and any pathprof set), lists copied, everything else (identifiers,
    constants, the context singletons ``Load()``/``Store()``) shared, as nothing
    changes those in place. ``memo`` receives the copy of each node by the original's
    id."""
    kind = type(node)
    new = ast.AST.__new__(kind)
    attributes = new.__dict__
    for name, value in node.__dict__.items():
        if type(value) is list:
            attributes[name] = [copy_tree(item, memo) if isinstance(item, ast.AST)
                                and not isinstance(item, _SHARED) else item
                                for item in value]
        elif isinstance(value, ast.AST) and not isinstance(value, _SHARED):
            attributes[name] = copy_tree(value, memo)
        else:
            attributes[name] = value
    if memo is not None:
        memo[id(node)] = new
    copied: _Copied = new
    return copied


#: Nodes :func:`copy_tree` shares: the context, operator and other singletons.
_SHARED = (ast.expr_context, ast.operator, ast.unaryop, ast.boolop, ast.cmpop)
_Copied = TypeVar("_Copied", bound=ast.AST)


# ---------------------------------------------------------------------------
# Locations


_Node = TypeVar("_Node", bound=ast.AST)


_NO_LOCATION = {"lineno": UNLOCATED, "end_lineno": UNLOCATED, "col_offset": -1,
                "end_col_offset": -1}


def artificial(node: _Node) -> _Node:
    """``node`` and everything in it made artificial (no location). (Written to each
    node's attributes at once: every node gets them, so a holder read's own
    propagation to its placeholder is not needed.)"""
    for child in walk(node):
        if "lineno" in child._attributes:
            child.__dict__.update(_NO_LOCATION)
    return node


def artificial_shell(node: ast.stmt) -> ast.stmt:
    """``node`` itself made artificial, what it holds left as it is (the program's
    code that pathprof wraps keeps its locations)."""
    node.lineno = node.end_lineno = UNLOCATED
    node.col_offset = node.end_col_offset = -1
    return node


def locate_at(nodes: list[ast.stmt], anchor: ast.AST) -> list[ast.stmt]:
    """Give the unlocated parts of inserted ``nodes`` the location of ``anchor``.

    The location is ``anchor``'s start, with no width: the end of a span over
    several lines is where CPython 3.11 locates the loading of a method, which
    would make a line event for a line that has not run. Production builds only:
    a build with ``mark_probes`` leaves inserted code unlocated (the callers ask).
    """
    line, column = anchor.lineno, anchor.col_offset  # type: ignore[attr-defined]
    for node in nodes:
        for part in walk(node):
            if "lineno" in part._attributes and getattr(part, "lineno", -1) in (-1, None):
                part.lineno = part.end_lineno = line  # type: ignore[attr-defined]
                part.col_offset = part.end_col_offset = column  # type: ignore[attr-defined]
    return nodes


def mark_unlocated(tree: ast.AST) -> None:
    """Put every unlocated node of ``tree`` (all inserted code, in a build with
    ``mark_probes``) at :data:`PROBE_MARK_LINE`."""
    for node in walk(tree):
        if getattr(node, "lineno", None) == UNLOCATED:
            node.lineno = PROBE_MARK_LINE  # type: ignore[attr-defined]
            if getattr(node, "end_lineno", None) == UNLOCATED:
                node.end_lineno = PROBE_MARK_LINE  # type: ignore[attr-defined]


def is_inserted(stmt: ast.stmt) -> bool:
    """Whether ``stmt`` is inserted code without a location (or marked, in a test
    build). Inserted code once located is taken for the program's."""
    return stmt.lineno in (UNLOCATED, PROBE_MARK_LINE)


def mark_located_later(stmt: ast.stmt) -> None:
    """Note that inserted ``stmt`` is located at a later statement of the program:
    :func:`first_code` passes over it."""
    setattr(stmt, _LOCATED_LATER, True)


def line_anchor(line: int) -> ast.AST:
    """A location at the start of ``line``, for :func:`locate_at`."""
    return ast.Pass(lineno=line, end_lineno=line, col_offset=0, end_col_offset=0)


def first_code(stmts: list[ast.stmt]) -> ast.AST | None:
    """Where the first statement that compiles to code begins: a location of no
    width at its start. (Not the statement's own span: code located at an ``if``
    that spans lines 4 to 5 would put a method call's instruction on line 5, the
    span's end, where CPython 3.11 locates the loading of a method, and a tracer
    would see line 5 before line 4 ran.)"""
    for stmt in stmts:
        if isinstance(stmt, ast.Global | ast.Nonlocal):
            continue
        if getattr(stmt, "lineno", -1) in (UNLOCATED, PROBE_MARK_LINE):
            continue
        if getattr(stmt, _LOCATED_LATER, False):
            continue
        decorators = getattr(stmt, "decorator_list", None)
        start = decorators[0] if decorators else stmt
        return ast.Pass(lineno=start.lineno, end_lineno=start.lineno,
                        col_offset=start.col_offset, end_col_offset=start.col_offset)
    return None


def first_evaluated(expr: ast.expr) -> ast.expr:
    """The part of ``expr`` whose code runs first, as far as locations go: a code
    located there runs on the line CPython reports first for ``expr`` (a list whose
    first item is on the next line reports that line first, not its bracket's)."""
    while True:
        if isinstance(expr, ast.Call):
            nxt: ast.expr | None = expr.func
        elif isinstance(expr, ast.Attribute | ast.Subscript | ast.Starred | ast.Await
                        | ast.NamedExpr | ast.FormattedValue):
            nxt = expr.value
        elif isinstance(expr, ast.BinOp | ast.Compare):
            nxt = expr.left
        elif isinstance(expr, ast.BoolOp | ast.JoinedStr):
            nxt = expr.values[0] if expr.values else None
        elif isinstance(expr, ast.List | ast.Tuple | ast.Set):
            nxt = expr.elts[0] if expr.elts else None
        elif isinstance(expr, ast.Dict):
            nxt = expr.keys[0] if expr.keys and expr.keys[0] is not None else None
        elif isinstance(expr, ast.IfExp):
            nxt = expr.test
        elif isinstance(expr, ast.UnaryOp):
            nxt = expr.operand
        else:
            nxt = None
        if nxt is None or getattr(nxt, "lineno", None) is None:
            return expr
        expr = nxt


# ---------------------------------------------------------------------------
# Builders: expressions (no location of their own) and artificial statements


def load(name: str) -> ast.expr:
    """A read of ``name``: a local, a module global, or one of the module's names in its
    holder (``_@pp_*``: ``<placeholder>.name``, :mod:`pathprof.runtime.holder`; the
    holder itself, :data:`~pathprof.python.names.HOLDER`, the placeholder)."""
    if in_holder(name):
        return _in_holder(name, ast.Load())
    return ast.Name(id=name, ctx=ast.Load())


# Any: a Name for a local (what ``:=`` and ``+=`` targets must be), an Attribute for a
# name in the holder; which one the name decides, not its type
def store(name: str) -> Any:
    """A store to ``name`` (see :func:`load`)."""
    if in_holder(name):
        return _in_holder(name, ast.Store())
    return ast.Name(id=name, ctx=ast.Store())


_LOCATION = frozenset({"lineno", "end_lineno", "col_offset", "end_col_offset"})


class _HolderRead(ast.Attribute):
    """``<placeholder>.name``, whose location is its placeholder's too: code that
    locates the read as it would locate a name (:func:`ast.copy_location`, setting
    ``lineno``...) locates both nodes, so the ``LOAD_CONST`` of the holder stands at
    the line the name's load stood at. (The compiler takes a subclass of a node as
    the node; its ``__name__`` is the node's, as :class:`ast.NodeVisitor` and
    :func:`ast.unparse` dispatch on it: ``visit_Attribute`` visits it.)"""

    def __setattr__(self, name: str, value: object) -> None:
        super().__setattr__(name, value)
        if name in _LOCATION:
            inner = self.__dict__.get("value")
            if inner is not None:
                setattr(inner, name, value)


_HolderRead.__name__ = "Attribute"


def _in_holder(name: str, ctx: ast.expr_context) -> ast.expr:
    holder = ast.Constant(value=PLACEHOLDER)
    if name == HOLDER:
        if not isinstance(ctx, ast.Load):
            raise ValueError("the holder itself is only read")
        return holder
    return _HolderRead(value=holder, attr=name, ctx=ctx)


def holder_name(node: ast.AST) -> str | None:
    """The name of the module's holder ``node`` reads or stores (:func:`load`), or
    None if it is no such read."""
    if type(node) is _HolderRead:
        return node.attr
    return None


# Any: a constant, or a tuple of constants (which the compiler takes, and typeshed's
# type of ast.Constant.value leaves out)
def const(value: Any) -> ast.Constant:
    return ast.Constant(value=value)


def call_module(method: str, *args: ast.expr) -> ast.expr:
    """``_@pp_m.method(*args)``: a call into the module's state in the runtime."""
    func = ast.Attribute(value=load(MODULE), attr=method, ctx=ast.Load())
    return ast.Call(func=func, args=list(args), keywords=[])


def assign(name: str, value: ast.expr) -> ast.stmt:
    """``name = value``, artificial (``value`` too)."""
    return artificial(ast.Assign(targets=[store(name)], value=value))


def add(name: str, value: int) -> ast.stmt:
    """``name += value``, artificial."""
    return artificial(ast.AugAssign(target=store(name), op=ast.Add(), value=const(value)))


def count(counter: str, index: ast.expr) -> ast.stmt:
    """``counter[index] += 1``, artificial (``index`` too)."""
    target = ast.Subscript(value=load(counter), slice=index, ctx=ast.Store())
    return artificial(ast.AugAssign(target=target, op=ast.Add(), value=const(1)))


def observer(effects: list[tuple[str, ast.expr]]) -> ast.ExceptHandler:
    """An except clause that never matches, whose type expression has effects.

    ``except ((@pp_r := call(...)), ())[1]: pass``: when an exception passes, the
    type expression runs (``sys.exception()`` is the exception), assigns, and
    evaluates to ``()``, which matches nothing. CPython then re-raises the
    exception itself (a ``raise`` in a handler would add to the traceback), and
    :func:`pathprof.python.lasti.keep_last_instruction` makes that re-raise put the
    frame back at the instruction the exception came from, so tracebacks,
    ``f_lineno`` and the ``return`` event of tracers stay exactly as without
    pathprof.
    """
    parts: list[ast.expr] = [ast.NamedExpr(target=store(name), value=value)
                             for name, value in effects]
    parts.append(ast.Tuple(elts=[], ctx=ast.Load()))
    kind = ast.Subscript(value=ast.Tuple(elts=parts, ctx=ast.Load()),
                         slice=const(len(parts) - 1), ctx=ast.Load())
    handler = ast.ExceptHandler(type=kind, name=None, body=[ast.Pass()])
    artificial(handler)
    return handler
