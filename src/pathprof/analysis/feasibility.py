"""Paths the source proves cannot run.

The CFG knows nothing of what its tests mean, so some of its paths are infeasible
(Ball-Larus 1996, §1: a path profile may count paths no input can run; here, the
missed paths of a function). This module proves the commonest kinds infeasible,
each from the source and the path alone:

* **one test, both ways**: the same condition is tested twice on the path with
  opposite outcomes, and nothing between can change it (``if x is None:`` and later
  ``if x is not None:``; one flag tested in two places);
* **two equalities**: ``name == c1`` held, and later ``name == c2`` holds for a
  different constant (``interp == "cp"`` then ``interp == "pp"``);
* **a test of constants**: every name a test reads was last bound, on the path, to a
  constant or to a new list, set or dict of constants that nothing else holds
  (``pos = None`` ... ``if pos is None:`` → false; ``errors = []``, a loop not run,
  ``if errors:`` → true);
* **a loop over a literal**: a ``for`` over a non-empty tuple, list, set, string or
  ``range`` of constants, entered on the path, exhausted at once.
* **a call that never returns**: a statement that calls ``sys.exit``, ``os._exit``,
  ``os.abort``, ``exit``, ``quit``, or a function of the module whose body only
  raises: no complete path goes through it (the runtime records such a run as a path
  cut short by the exception).

A test is *provable* when it is built of local names of the function (parameters
and names its own body binds, none declared ``global`` or ``nonlocal``, none a
nested function rebinds), constants, tuples, lists and sets of those, comparisons,
``and``/``or``/``not`` and arithmetic; ``not E`` is ``E`` with the outcome flipped
(so are ``is not`` and ``not in``).

What can change a test between its two places on the path: a statement that binds
or deletes one of its names ends what is known of it. A call, an ``await``, a
``yield``, a store into an attribute or item, or any part of a compound statement
other than a plain statement or test (a ``for``'s next item, a ``with``'s enter and
exit) runs code that could change objects, but only objects it can reach: it ends
what is known of a test only if one of the test's names has *escaped* on the path so
far, that is, the function passed its object on (as an argument, a receiver
``x.f()``, an attribute or item read, a value assigned or put in a container, a
loop's iterable) at that piece or before it, or a nested function or lambda reads the
name. A name bound to a constant or a new container has not escaped; bound to what an
expression gave, it has if the expression passed on a local's object (``y = x``,
``y = x.items``: it may be that object) or if the function passes the name on
anywhere. A path that starts
after an iteration or in a handler starts with every name the function ever passes on
escaped. Identity tests (``x is None``) and names bound to immutable constants survive
any call: only rebinding changes them.

The assumptions, stated: operators' special methods (``==``, ``<``, ``in``, ``+``,
truth) change nothing and answer the same for the same objects; an object a name
refers to is changed only through this function's own names (no other reference to
it, held outside the function, is used to change it meanwhile); builtins ``range``
is the builtin, and so are ``sys.exit`` and its kind (nothing patches them). Under
them, a path :func:`infeasible` names is one no execution can take; a path it does
not name may still be infeasible (sound, not complete).
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pathprof.analysis.decisions import decisions
from pathprof.constructs import FUNCTIONS, SCOPES, TRIES
from pathprof.contract import FunctionInfo, Piece
from pathprof.data.profile import FunctionProfile, Path

__all__ = ["Contradiction", "FunctionFacts", "function_facts", "infeasible"]

_PURE_EXPRESSIONS = (ast.Name, ast.Constant, ast.Compare, ast.BoolOp, ast.UnaryOp,
                     ast.BinOp, ast.Tuple, ast.List, ast.Set, ast.Load, ast.boolop,
                     ast.cmpop, ast.unaryop, ast.operator)
#: Operators whose operands are read, not passed on (their special methods are
#: taken to change nothing).
_OPERATORS = (ast.Compare, ast.BoolOp, ast.UnaryOp, ast.BinOp)
# operands: constants of any type, which the operators (typed for the operands they
# support) are tried on: a TypeError is caught where they are compared
_COMPARE: dict[type, Callable[[Any, Any], object]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt,
    ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
    ast.Is: operator.is_, ast.IsNot: operator.is_not,
    ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b}
#: Types of constants whose values a name bound to one keeps through any call.
_IMMUTABLE = (type(None), bool, int, float, complex, str, bytes, tuple, frozenset,
              type(Ellipsis))


@dataclass(frozen=True)
class _Test:
    """A provable test: its text with ``not`` taken off, which way ``not`` flips it,
    the names it reads, whether only rebinding can change it, the expression itself,
    and ``(name, constant)`` when it is ``name == constant``."""

    key: str
    flipped: bool
    names: frozenset[str]
    identity: bool
    node: ast.expr = field(compare=False)
    equality: tuple[str, object] | None = field(default=None, compare=False)


@dataclass(frozen=True)
class _Effect:
    """What a piece of code can change: the names it binds or deletes, whether it
    runs code that can change objects, and the names it binds to constants (their
    values)."""

    binds: frozenset[str]
    opaque: bool
    constants: tuple[tuple[str, object], ...] = ()
    #: names whose objects this piece passes on
    escapes: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Contradiction:
    """Why a path cannot run. For one test both ways: the test on ``first_line`` went
    one way, the same on ``second_line`` the other; for the other kinds, ``detail``
    says it."""

    test: str
    first_line: int
    second_line: int
    #: what the test was on ``first_line`` (the opposite on ``second_line``)
    first_outcome: bool = True
    detail: str | None = None

    def __str__(self) -> str:
        if self.detail is not None:
            return self.detail
        first, second = ("true", "false") if self.first_outcome else ("false", "true")
        return (f"`{self.test}` is {first} on line {self.first_line} but {second} on line "
                f"{self.second_line}, and nothing between can change it")


@dataclass
class FunctionFacts:
    """What the source says of one function: each test piece's test, each piece's
    effect, the names whose objects escape, and each ``for`` over a non-empty literal
    (its next-item block -> its iterable's block and the loop's text)."""

    tests: dict[Piece, _Test]
    effects: dict[Piece, _Effect]
    escaping: _Escapes = field(default_factory=lambda: _Escapes(frozenset(), frozenset(),
                                                                 frozenset()))
    local: frozenset[str] = frozenset()
    nonempty_loops: dict[int, tuple[int, int, str]] = field(default_factory=dict)
    #: the function is a generator or coroutine (its consumer can end a call)
    suspends: bool = False
    #: lines of ``try`` bodies with a handler of the function's own (an exception
    #: there need not end the call)
    guarded_lines: frozenset[int] = frozenset()
    #: statements that call what always raises (``sys.exit()``...): piece -> what
    exits: dict[Piece, str] = field(default_factory=dict)


_OPAQUE = _Effect(frozenset(), True)  # a piece whose code is not at hand


def _function_node(tree: ast.Module, meta: FunctionInfo
                   ) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    for node in ast.walk(tree):
        if (isinstance(node, FUNCTIONS)
                and node.lineno == meta.first_line and node.name == meta.qualname.rsplit(
                    ".", 1)[-1]):
            return node
    return None


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _own_nodes(function: ast.AST, into_comprehensions: bool = False) -> list[ast.AST]:
    """The nodes of a function's own scope: nested functions', lambdas' and classes'
    bodies left out (their names and decorators kept); comprehensions' insides too,
    unless ``into_comprehensions`` (they run as the statement runs)."""
    result: list[ast.AST] = []
    stack = list(ast.iter_child_nodes(function))
    while stack:
        node = stack.pop()
        result.append(node)
        if isinstance(node, _SCOPES):
            stack.extend(getattr(node, "decorator_list", []))
            continue
        if isinstance(node, _COMPREHENSIONS) and not into_comprehensions:
            continue
        stack.extend(ast.iter_child_nodes(node))
    return result


def _local_names(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """Names local to the function that nothing outside its own code can rebind."""
    arguments = function.args
    names = {a.arg for a in (*arguments.posonlyargs, *arguments.args,
                             *arguments.kwonlyargs)}
    names.update(a.arg for a in (arguments.vararg, arguments.kwarg) if a is not None)
    declared: set[str] = set()
    for node in _own_nodes(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            names.add(node.id)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            declared.update(node.names)
    for node in ast.walk(function):
        if node is not function and isinstance(node, ast.Nonlocal):
            declared.update(node.names)  # a nested function rebinds it
    return names - declared


@dataclass(frozen=True)
class _Escapes:
    """Where a function passes names' objects on: the names that escape anywhere,
    where each escaping read is (``(line, col)`` of the name), and the names nested
    functions and lambdas read (those escape whenever the closure runs)."""

    names: frozenset[str]
    reads: frozenset[tuple[int, int]]
    closures: frozenset[str]


def _escaping(function: ast.FunctionDef | ast.AsyncFunctionDef) -> _Escapes:
    """Every read of a name that is not an operand of an operator nor a test of its
    own passes its object on (see the module docstring)."""
    parents: dict[ast.AST, ast.AST] = {}
    for outer in ast.walk(function):
        for child in ast.iter_child_nodes(outer):
            parents[child] = outer
    names: set[str] = set()
    reads: set[tuple[int, int]] = set()
    closures: set[str] = set()
    for node in ast.walk(function):
        if not (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)):
            continue
        scope: ast.AST | None = parents.get(node)
        while scope is not None and not isinstance(scope, _SCOPES):
            scope = parents.get(scope)
        if scope is not function:
            names.add(node.id)  # read by a nested function or lambda
            closures.add(node.id)
            continue
        # ``a or b`` is one of its operands: what it is part of decides
        used: ast.AST = node
        parent: ast.AST | None = parents.get(used)
        while isinstance(parent, ast.BoolOp):
            used = parent
            parent = parents.get(parent)
        if not (isinstance(parent, _OPERATORS)
                or (isinstance(parent, ast.If | ast.While | ast.IfExp | ast.Assert)
                    and parent.test is used)):
            names.add(node.id)
            reads.add((node.lineno, node.col_offset))
    return _Escapes(frozenset(names), frozenset(reads), frozenset(closures))


def _position(node: ast.AST) -> tuple[int, int, int, int]:
    return (node.lineno, node.col_offset,  # type: ignore[attr-defined]
            node.end_lineno or node.lineno,  # type: ignore[attr-defined]
            node.end_col_offset or 0)  # type: ignore[attr-defined]


def _position_of(piece: Piece) -> tuple[int, int, int, int]:
    return (piece.line, piece.col, piece.end_line, piece.end_col)


def _inside(node: ast.AST, piece: Piece) -> bool:
    line, col, end_line, end_col = _position(node)
    return ((piece.line, piece.col) <= (line, col)
            and (end_line, end_col) <= (piece.end_line, piece.end_col))


def _constant(node: ast.expr, fresh: bool = False) -> tuple[bool, object]:
    """``(True, value)`` for a constant or a tuple of constants, and with ``fresh`` for
    a list, set or dict display of constants too (a new object each time it runs);
    else ``(False, None)``."""
    if isinstance(node, ast.Constant):
        return True, node.value
    if isinstance(node, ast.Tuple | ast.List | ast.Set) and (
            fresh or isinstance(node, ast.Tuple)):
        values = [_constant(e) for e in node.elts]
        if all(ok for ok, _v in values):
            items = [v for _ok, v in values]
            try:
                return True, (tuple(items) if isinstance(node, ast.Tuple)
                              else list(items) if isinstance(node, ast.List) else set(items))
            except TypeError:  # an unhashable item in a set
                return False, None
    if fresh and isinstance(node, ast.Dict) and None not in node.keys:
        pairs = [(_constant(k), _constant(v))  # type: ignore[arg-type]
                 for k, v in zip(node.keys, node.values, strict=True)]
        if all(k[0] and v[0] for k, v in pairs):
            try:
                return True, {k[1]: v[1] for k, v in pairs}
            except TypeError:
                return False, None
    return False, None


def _test_of(node: ast.expr, local: set[str]) -> _Test | None:
    flipped = False
    while isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        node, flipped = node.operand, not flipped
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(
            node.ops[0], ast.IsNot | ast.NotIn):
        # ``a is not b`` is ``not (a is b)`` and ``a not in b`` ``not (a in b)``, by
        # the language's definition (``!=`` is left alone: ``__ne__`` may disagree)
        positive = ast.Is() if isinstance(node.ops[0], ast.IsNot) else ast.In()
        node, flipped = ast.Compare(node.left, [positive], node.comparators), not flipped
    parts = list(ast.walk(node))
    if not all(isinstance(part, _PURE_EXPRESSIONS) for part in parts):
        return None
    names = frozenset(part.id for part in parts if isinstance(part, ast.Name))
    if not names or not names <= local:
        return None
    identity = (isinstance(node, ast.Compare)
                and all(isinstance(op, ast.Is | ast.IsNot) for op in node.ops)
                and all(isinstance(o, ast.Name | ast.Constant)
                        for o in (node.left, *node.comparators)))
    equality = None
    if (isinstance(node, ast.Compare) and len(node.ops) == 1
            and isinstance(node.ops[0], ast.Eq)):
        for name, other in ((node.left, node.comparators[0]),
                            (node.comparators[0], node.left)):
            is_constant, value = _constant(other)
            if isinstance(name, ast.Name) and is_constant:
                equality = (name.id, value)
    return _Test(ast.unparse(node), flipped, names, identity, node, equality)


def _note_effect(node: ast.AST, binds: set[str]) -> bool:
    """Add the names ``node`` binds to ``binds``; whether it can change objects."""
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
        binds.add(node.id)
    elif isinstance(node, ast.alias):
        binds.add((node.asname or node.name).split(".")[0])
    elif isinstance(node, SCOPES):
        binds.add(node.name)
    elif isinstance(node, ast.MatchAs | ast.MatchStar):
        if node.name:
            binds.add(node.name)
    elif isinstance(node, ast.Attribute | ast.Subscript):
        return isinstance(node.ctx, ast.Store | ast.Del)
    else:
        return isinstance(node, ast.Call | ast.Await | ast.Yield | ast.YieldFrom
                          | ast.Global | ast.Nonlocal | ast.Delete)
    return False


def _effect_of(piece: Piece, by_line: dict[int, list[ast.AST]],
               statements: dict[tuple[int, int], ast.stmt],
               escaping_reads: frozenset[tuple[int, int]]) -> _Effect:
    binds: set[str] = set()
    # any part of a compound statement but a test runs code of the program's objects
    # (__next__, __enter__, __exit__, a pattern's __eq__); it binds what its span
    # holds (a for's target, a with's ``as`` name, a pattern's captures)
    opaque = piece.role not in ("stmt", "test")
    escapes: set[str] = set()
    for line in range(piece.line, piece.end_line + 1):
        for node in by_line.get(line, ()):
            if _inside(node, piece):
                opaque = _note_effect(node, binds) or opaque
                if isinstance(node, ast.Name) and (node.lineno,
                                                   node.col_offset) in escaping_reads:
                    escapes.add(node.id)
    constants: tuple[tuple[str, object], ...] = ()
    statement = statements.get((piece.line, piece.col))
    if (isinstance(statement, ast.Assign) and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)):
        is_constant, value = _constant(statement.value, fresh=True)
        if is_constant:
            constants = ((statement.targets[0].id, value),)
    return _Effect(frozenset(binds), opaque, constants, frozenset(escapes))


def _nonempty_literal(node: ast.expr, local: set[str]) -> bool:
    """A ``for``'s iterable that always yields an item: a non-empty display with no
    ``*`` in it, a non-empty string or bytes constant, ``range`` of constants."""
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return bool(node.elts) and not any(isinstance(e, ast.Starred) for e in node.elts)
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str | bytes) and bool(node.value)
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id == "range" and "range" not in local and not node.keywords
            and all(isinstance(a, ast.Constant) and type(a.value) is int
                    for a in node.args) and 1 <= len(node.args) <= 3):
        try:
            return len(range(*(a.value for a in node.args))) > 0  # type: ignore[attr-defined]
        except ValueError:  # a step of 0
            return False
    return False


def function_facts(fn: FunctionProfile, tree: ast.Module) -> FunctionFacts | None:
    """The tests and effects of ``fn``'s pieces, from its module's parsed source; None
    when the source holds no such function (it changed since it was measured)."""
    meta = fn.meta
    function = _function_node(tree, meta)
    if function is None:
        return None
    local = _local_names(function)
    nodes = [n for n in _own_nodes(function, into_comprehensions=True)
             if hasattr(n, "lineno")]
    expressions: dict[tuple[int, int, int, int], ast.expr] = {
        _position(n): n for n in nodes if isinstance(n, ast.expr)}
    statements = {(n.lineno, n.col_offset): n for n in nodes if isinstance(n, ast.stmt)}
    by_line: dict[int, list[ast.AST]] = {}
    for node in nodes:
        by_line.setdefault(getattr(node, "lineno"), []).append(node)  # noqa: B009
    guarded = {line for n in nodes if isinstance(n, TRIES) and n.handlers
               for line in range(n.body[0].lineno, (n.body[-1].end_lineno or 0) + 1)}
    suspends = isinstance(function, ast.AsyncFunctionDef) or any(
        isinstance(n, ast.Yield | ast.YieldFrom) for n in nodes)
    escaping = _escaping(function)
    facts = FunctionFacts({}, {}, escaping, frozenset(local), suspends=suspends,
                          guarded_lines=frozenset(guarded))
    for block in meta.blocks:
        for piece in block.pieces:
            if piece.role == "test":
                found = expressions.get(_position_of(piece))
                test = _test_of(found, local) if found is not None else None
                if test is not None:
                    facts.tests[piece] = test
            facts.effects[piece] = _effect_of(piece, by_line, statements, escaping.reads)
    raising = _always_raising(tree, local)
    for block in meta.blocks:
        for piece in block.pieces:
            statement = statements.get((piece.line, piece.col))
            if piece.role == "stmt" and isinstance(statement, ast.Expr | ast.Return):
                call = statement.value
                if isinstance(call, ast.Call) and ast.unparse(call.func) in raising:
                    facts.exits[piece] = ast.unparse(call.func)
    for compound in meta.compounds:
        if (compound.kind == "for" and compound.iter is not None
                and compound.for_iter is not None and compound.for_next is not None):
            iterable = expressions.get(tuple(compound.iter))  # type: ignore[arg-type]
            if iterable is not None and _nonempty_literal(iterable, local):
                facts.nonempty_loops[compound.for_next] = (
                    compound.for_iter, compound.span.line, ast.unparse(iterable))
    return facts


#: Calls that never return (they raise ``SystemExit`` or end the process), by the name
#: they are called by, and the module the first part must be.
_NO_RETURN = {"sys.exit": "sys", "os._exit": "os", "os.abort": "os", "exit": None,
              "quit": None}


def _module_bindings(tree: ast.Module) -> dict[str, int]:
    """How many times the module's own top level binds each name."""
    counts: dict[str, int] = {}
    for node in tree.body:
        names: list[str] = []
        if isinstance(node, SCOPES):
            names = [node.name]
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names = [(a.asname or a.name).split(".")[0] for a in node.names]
        else:
            names = [n.id for n in ast.walk(node)
                     if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)]
        for name in names:
            counts[name] = counts.get(name, 0) + 1
    return counts


def _always_raising(tree: ast.Module, local: set[str]) -> set[str]:
    """What a statement of the function can call that never returns: ``sys.exit``,
    ``os._exit``, ``os.abort``, ``exit`` and ``quit`` (the module imports ``sys`` or
    ``os`` as such, and nothing rebinds the names), and the module's own functions
    whose body only raises, called by their name (bound once, by the ``def``)."""
    bound = _module_bindings(tree)
    imported = {a.asname or a.name for node in tree.body if isinstance(node, ast.Import)
                for a in node.names}
    found = set()
    for name, module in _NO_RETURN.items():
        first = name.split(".")[0]
        if first in local:
            continue
        if ((module is None and first not in bound)
                or (module is not None and module in imported and bound.get(module) == 1)):
            found.add(name)
    for node in tree.body:
        if (isinstance(node, ast.FunctionDef) and node.name not in local
                and bound.get(node.name) == 1 and not node.decorator_list):
            body = node.body[1:] if (node.body and isinstance(node.body[0], ast.Expr)
                                     and isinstance(node.body[0].value, ast.Constant)
                                     and isinstance(node.body[0].value.value, str)) \
                else node.body
            if len(body) == 1 and isinstance(body[0], ast.Raise) and body[0].exc is not None:
                found.add(node.name)
    return found


def _evaluate(node: ast.expr, values: dict[str, object]) -> object:
    """The value of a test of names bound to constants; raises LookupError when it
    cannot be worked out here."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        if node.id in values:
            return values[node.id]
        raise LookupError(node.id)
    if isinstance(node, ast.Tuple):
        return tuple(_evaluate(e, values) for e in node.elts)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return not _evaluate(node.operand, values)
    if isinstance(node, ast.BoolOp):
        result: object = None
        for value in node.values:
            result = _evaluate(value, values)
            if bool(result) is isinstance(node.op, ast.Or):
                return result
        return result
    if isinstance(node, ast.Compare):
        left = _evaluate(node.left, values)
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = _evaluate(right_node, values)
            try:
                if not _COMPARE[type(op)](left, right):
                    return False
            except TypeError as err:  # None < 1: raises, so no outcome to compare
                raise LookupError(str(err)) from err
            left = right
        return True
    raise LookupError(type(node).__name__)


@dataclass
class _Known:
    """What is known at a point of the path: tests' outcomes, ``name == constant``
    that held, names bound to constants or to new containers of constants, each with
    the line that told it, and the names whose objects have been passed on."""

    escaped: set[str]
    #: the function's local names, and those it passes on somewhere
    local: frozenset[str] = frozenset()
    passed_on: frozenset[str] = frozenset()
    tests: dict[str, tuple[bool, int, _Test]] = field(default_factory=dict)
    equal: dict[str, tuple[object, int, str]] = field(default_factory=dict)
    values: dict[str, tuple[object, int]] = field(default_factory=dict)

    def clear(self, escaped: frozenset[str]) -> None:
        self.tests.clear()
        self.equal.clear()
        self.values.clear()
        self.escaped = set(escaped)

    def apply(self, effect: _Effect, line: int) -> None:
        """What ``effect`` (of a piece on ``line``) ends, and the constants it binds.
        A call can change only objects passed on before it or by it."""
        self.escaped |= effect.escapes
        for key, (_outcome, _line, test) in list(self.tests.items()):
            if test.names & effect.binds or (effect.opaque and not test.identity
                                             and test.names & self.escaped):
                del self.tests[key]
        for name in list(self.equal):
            if name in effect.binds or (effect.opaque and name in self.escaped):
                del self.equal[name]
        for name, (value, _line) in list(self.values.items()):
            if name in effect.binds or (effect.opaque and name in self.escaped
                                        and not isinstance(value, _IMMUTABLE)):
                del self.values[name]
        fresh = dict(effect.constants)
        shared = bool(effect.escapes & self.local)
        for name in effect.binds:
            # bound to a constant or a new container, a name's object is held by
            # nothing else; bound to what an expression made of a local's object gave
            # (``y = x``, ``y = x.items``), it may be that object: as passed on as it is
            if name in fresh:
                self.escaped.discard(name)
            elif shared or name in self.passed_on:
                self.escaped.add(name)
            else:
                self.escaped.discard(name)
        for name, value in effect.constants:
            self.values[name] = (value, line)


def _decide(test: _Test, outcome: bool, line: int, known: _Known) -> Contradiction | None:
    """Check a test's outcome on the path against what is known, then learn it."""
    if test.names <= known.values.keys():
        try:
            value = bool(_evaluate(test.node, {n: v for n, (v, _l) in known.values.items()}))
        except LookupError:
            pass
        else:
            if value != outcome:
                bound = min(known.values[n][1] for n in test.names)
                if len(test.names) == 1:
                    (name,) = test.names
                    told = f"`{name} = {known.values[name][0]!r}` on line {bound}"
                else:
                    names = ", ".join(f"`{n}`" for n in sorted(test.names))
                    told = f"{names} set to constants from line {bound}"
                return Contradiction(test.key, bound, line, value, (
                    f"{told}, so `{test.key}` can only be {str(value).lower()} on line "
                    f"{line}"))
    earlier = known.tests.get(test.key)
    if earlier is not None and earlier[0] != outcome:
        return Contradiction(test.key, earlier[1], line, earlier[0])
    if test.equality is not None and outcome:
        name, constant = test.equality
        held = known.equal.get(name)
        if held is not None and _differ(held[0], constant):
            return Contradiction(test.key, held[1], line, True, (
                f"`{held[2]}` is true on line {held[1]}, so `{test.key}` cannot be true on "
                f"line {line}, and nothing between changes `{name}`"))
        known.equal[name] = (constant, line, test.key)
    known.tests[test.key] = (outcome, line, test)
    return None


def _differ(first: object, second: object) -> bool:
    """Whether two constants are unequal (``1`` and ``True`` are equal)."""
    try:
        return bool(first != second)
    except TypeError:  # pragma: no cover - constants compare
        return False


def infeasible(fn: FunctionProfile, path: Path, facts: FunctionFacts
               ) -> Contradiction | None:
    """The contradiction that proves ``path`` cannot run, or None if none is found."""
    meta = fn.meta
    taken = {d["block"]: d["taken"] for d in decisions(fn, path)}
    # from the entry, only closures have the function's objects; from a loop's header
    # or a handler, earlier iterations may have passed any of them on
    known = _Known(set(facts.escaping.closures) if path.start == "entry"
                   else set(facts.escaping.names), facts.local, facts.escaping.names)
    previous = None
    for block in path.blocks:
        pieces = meta.blocks[block].pieces
        if meta.blocks[block].kind == "handler":
            known.clear(facts.escaping.names)  # what the raise changed is not known
        loop = facts.nonempty_loops.get(block)
        if loop is not None and previous == loop[0] and taken.get(block) == "exhausted":
            return Contradiction(f"for … in {loop[2]}", loop[1], loop[1], True, (
                f"the loop on line {loop[1]} goes over `{loop[2]}`, which is never empty: "
                "it cannot be exhausted before its first item"))
        previous = block
        branch = taken.get(block)
        for index, piece in enumerate(pieces):
            test = facts.tests.get(piece)
            if (test is not None and index == len(pieces) - 1
                    and branch in ("true", "false")):
                found = _decide(test, (branch == "true") != test.flipped, piece.line, known)
                if found is not None:
                    return found
                continue
            exit_call = facts.exits.get(piece)
            if exit_call is not None:  # a complete path cannot go on past it
                return Contradiction(f"{exit_call}()", piece.line, piece.line, True, (
                    f"`{exit_call}()` on line {piece.line} never returns: a path through "
                    "it ends there, cut short"))
            known.apply(facts.effects.get(piece, _OPAQUE), piece.line)
    return None
