"""Counting each way a decision is evaluated: the expression-level numbering of issue 39.

A decision's short-circuit evaluation is a small DAG (one node per condition, an edge
per outcome); its paths are the decision's *vectors*, numbered as
:func:`pathprof.analysis.conditions.evaluation_vectors` numbers them (Ball-Larus 1996,
§3.1, on the DAG of one expression). The test is rewritten, in place and as an
expression, into the tree that DAG unfolds to: each condition becomes the test of a
conditional expression whose two arms go on to the condition Python would evaluate
next, and each way out is the vector it completes, one counter update::

    if a and b or c:          # vectors 0..4: (F,-,F) (F,-,T) (T,F,F) (T,F,T) (T,T,-)

becomes::

    if (((v4 := (v4 or 0) + 1) if b else ((v3 := (v3 or 0) + 1) if c
                                          else not (v2 := (v2 or 0) + 1)))
            if a else ((v1 := (v1 or 0) + 1) if c else not (v0 := (v0 or 0) + 1))):

``vK`` standing for the module global ``_@pp_v<s+K>`` that counts vector ``K`` (the
function declares them ``global``, which a comprehension's assignment expression
honours too). Each way out adds one to its counter with no call (a profiler sees
nothing), and is true -- ``not`` makes the false ones false; ``or 0`` keeps it
working once the interpreter, shutting down, has set the globals to None. Until a
vector first runs, its counter may hold a
:class:`pathprof.runtime.stopping.UnseenVector`, whose add reports the run (coverage
that stops paying). Python still takes each condition's truth once, left to right, and
skips what it skips; the value of the test is now an int or ``False`` instead of the
last operand's, which only its truth decides in every place a decision stands
(``if``, ``elif``, ``while``, a conditional expression's test, a comprehension's
``if``, ``assert``, a ``match`` guard). Because no statement is added, the function's
blocks and paths are what path mode numbers without conditions: the two compose.

Not measured (declared with no vectors): a decision inside a comprehension's iterable,
where Python allows no assignment expression; and none is looked for in a lambda's
body, whose assignment expression would bind the lambda's own local.

A condition reached by more than one way (``(a or b) and c``: ``c`` after ``a`` and
after ``b``) is written once per way; each runs at most once per evaluation. A
decision whose unfolding would be too big (:data:`MAX_NODES`) is left as written and
declared with no vectors. A decision whose conditions are all constants (``while
True``) is not one.

Boolean expressions that are only assigned or returned (``x = a or default``) are not
decisions here: Python takes the truth of every operand but the last, so the
outcome would need a truth test the program never makes (a ``__bool__`` call that
may not exist, or do something).

Invariant: the rewritten test takes the truth of the same conditions, in the same
order, as the original, and is true exactly when the original is; it adds one to the
counter of the vector that ran, and nothing else.
"""

from __future__ import annotations

import ast
import copy
import sys
from collections.abc import Container, Iterator
from dataclasses import dataclass

from pathprof.constructs import FUNCTIONS
from pathprof.contract import DecisionInfo, Span
from pathprof.graph.shortcircuit import (
    Tree,
    Vector,
    boolean_tree,
    evaluation_vectors,
    next_step,
    tree_text,
)
from pathprof.python.names import DECISION_VALUE, vector_name
from pathprof.python.nodes import UNLOCATED, artificial, const, load, store, walk

__all__ = ["FROM_BRANCHES", "MAX_NODES", "DecisionSite", "counted", "counter_names",
           "decision_sites", "instrument_decisions"]

#: The most nodes a decision's unfolded test may hold (its conditions written once per
#: way they are reached); a bigger one is left as written, unmeasured.
MAX_NODES = 2000


@dataclass
class DecisionSite:
    """Where a decision's test stands: ``holder.attr`` (``[index]`` of that list when
    ``index`` is not None)."""

    kind: str
    holder: ast.AST
    attr: str
    index: int | None
    #: False inside a comprehension's iterable, where no assignment expression may go
    measurable: bool = True

    @property
    def test(self) -> ast.expr:
        value = getattr(self.holder, self.attr)
        return value if self.index is None else value[self.index]

    def replace(self, new: ast.expr) -> None:
        if self.index is None:
            setattr(self.holder, self.attr, new)
        else:
            getattr(self.holder, self.attr)[self.index] = new


def _own_nodes(stmts: list[ast.stmt]) -> Iterator[tuple[ast.AST, bool]]:
    """The nodes of a function's own code, each with whether it lies outside every
    comprehension's iterable: not the bodies of functions, classes and lambdas defined
    in it (their decorators, defaults and bases are its code)."""
    pending: list[tuple[ast.AST, bool]] = [(stmt, True) for stmt in reversed(stmts)]
    while pending:
        node, free = pending.pop()
        yield node, free
        if isinstance(node, FUNCTIONS):
            inner: list[ast.AST] = [*node.decorator_list, *node.args.defaults,
                                    *(d for d in node.args.kw_defaults if d is not None)]
        elif isinstance(node, ast.Lambda):
            inner = [*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)]
        elif isinstance(node, ast.ClassDef):
            inner = [*node.decorator_list, *node.bases, *node.keywords]
        elif isinstance(node, ast.comprehension):
            pending += [(test, free) for test in reversed(node.ifs)]
            pending += [(node.target, free), (node.iter, False)]
            continue
        else:
            inner = list(ast.iter_child_nodes(node))
        pending += [(child, free) for child in reversed(inner)]


def _is_elif(node: ast.If, parent: ast.If) -> bool:
    return (len(parent.orelse) == 1 and parent.orelse[0] is node
            and node.col_offset == parent.col_offset and node.lineno > parent.lineno)


def decision_sites(stmts: list[ast.stmt]) -> list[DecisionSite]:
    """The decisions of a function's own code (its body ``stmts``), ordered by where
    their tests start."""
    sites: list[DecisionSite] = []
    elifs: set[int] = set()
    for node, free in _own_nodes(stmts):
        if isinstance(node, ast.If):
            if node.orelse and isinstance(node.orelse[0], ast.If) and _is_elif(
                    node.orelse[0], node):
                elifs.add(id(node.orelse[0]))
            sites.append(DecisionSite("elif" if id(node) in elifs else "if", node, "test",
                                      None, free))
        elif isinstance(node, ast.While):
            sites.append(DecisionSite("while", node, "test", None, free))
        elif isinstance(node, ast.IfExp):
            sites.append(DecisionSite("conditional expression", node, "test", None, free))
        elif isinstance(node, ast.comprehension):
            sites += [DecisionSite("comprehension if", node, "ifs", i, free)
                      for i in range(len(node.ifs))]
        elif isinstance(node, ast.Assert):
            sites.append(DecisionSite("assert", node, "test", None, free))
        elif isinstance(node, ast.match_case) and node.guard is not None:
            sites.append(DecisionSite("guard", node, "guard", None, free))
    sites = [site for site in sites if not _constant(site.test)]
    sites.sort(key=lambda site: (site.test.lineno, site.test.col_offset))
    return sites


def _constant(test: ast.expr) -> bool:
    """Whether every condition of ``test`` is a constant (``while True``, ``if 0``,
    ``if __debug__``): what the compiler folds is no decision."""
    _tree, leaves = boolean_tree(test)
    return all(isinstance(leaf, ast.Constant)
               or (isinstance(leaf, ast.Name) and leaf.id == "__debug__") for leaf in leaves)


def _span(node: ast.expr) -> Span:
    return Span(node.lineno, node.col_offset, node.end_lineno or node.lineno,
                node.end_col_offset if node.end_col_offset is not None else -1)


def _unfold(tree: Tree, leaves: list[ast.expr], numbers: dict[Vector, int], slot: int
            ) -> ast.expr:
    """The test rewritten: a conditional expression per way each condition is
    reached, a counter update per vector. What is added takes the location of the
    condition evaluated just before it, so that no line event, traceback or
    ``f_lineno`` shows any other line (an instruction without a location would take
    the location of whatever the compiler lays out before it)."""
    used: set[int] = set()

    def build(prefix: tuple[bool, ...], last: ast.expr | None) -> ast.expr:
        step = next_step(tree, prefix, len(leaves))
        if isinstance(step, Vector):
            assert last is not None  # (a vector evaluates at least one condition)
            name = vector_name(slot + numbers[step])
            counted: ast.expr = ast.NamedExpr(
                target=store(name),
                value=ast.BinOp(left=ast.BoolOp(op=ast.Or(), values=[load(name), const(0)]),
                                op=ast.Add(), right=const(1)))
            if not step.outcome:
                counted = ast.UnaryOp(op=ast.Not(), operand=counted)
            return _located(counted, last)
        leaf = leaves[step]
        test = leaf if step not in used else copy.deepcopy(leaf)
        used.add(step)
        node = ast.IfExp(test=test, body=build((*prefix, True), leaf),
                         orelse=build((*prefix, False), leaf))
        return _located_shell(node, leaf)

    return build((), None)


#: Whether a rewritten test is evaluated as a value and tested once
#: (:func:`_tested_once`): on CPython 3.13 and later, whose compiler needs it (found on
#: both with argparse). 3.11 and 3.12 lay the tree out right, and there the store's
#: merge point would show a tracer a line of a test that spans lines again.
TEST_ONCE = sys.version_info >= (3, 13)


def _tested_once(unfolded: ast.expr, test: ast.expr) -> ast.expr:
    """``(_@pp_d := unfolded)``: the unfolded test evaluated as a value, then tested
    by one jump, as a plain ``if x:`` is. Left as a conditional expression, the
    compiler would jump from each way out straight to the branch taken; CPython 3.13
    and 3.14 then lay out the code that pathprof's path probes put at the start of a
    branch (code without a location) wrongly when two such jumps lead to it, running
    it twice (argparse's ``HelpFormatter._expand_help`` under ``--conditions``). The store,
    to a module global, nothing reads. It has the test's location where the test is
    on one line (without one, the compiler would start a new range of that line there,
    and a tracer would see the line again); where the test spans lines it has none
    (any one line would be wrong for the ways out on the others)."""
    node = ast.NamedExpr(target=store(DECISION_VALUE), value=unfolded)
    if test.lineno == test.end_lineno:
        for part in (node, node.target):
            ast.copy_location(part, test)
    else:
        artificial(node.target)
        node.lineno = node.end_lineno = UNLOCATED
        node.col_offset = node.end_col_offset = -1
    return node


def _located(node: ast.expr, where: ast.expr) -> ast.expr:
    """``node`` and all it holds given ``where``'s location."""
    for child in walk(node):
        if "lineno" in child._attributes:
            ast.copy_location(child, where)
    return node


def _located_shell(node: ast.expr, where: ast.expr) -> ast.expr:
    """``node`` itself given ``where``'s location (what it holds keeps its own)."""
    return ast.copy_location(node, where)


def _size(tree: Tree, leaves: list[ast.expr], vectors: list[Vector]) -> int:
    """How many nodes the unfolded test holds: each condition once per way it is
    reached (the vectors it is evaluated in, counted by their distinct prefixes)."""
    sizes = [len(walk(leaf)) for leaf in leaves]
    reached: set[tuple[int, tuple[bool | None, ...]]] = set()
    for vector in vectors:
        for i, value in enumerate(vector.values):
            if value is not None:
                reached.add((i, _prefix_before(vector, i)))
    return sum(sizes[i] for i, _ in reached) + 4 * len(vectors)


def _prefix_before(vector: Vector, condition: int) -> tuple[bool | None, ...]:
    return vector.values[:condition]


#: The slot of a decision whose vectors its branches count
#: (:data:`~pathprof.contract.DecisionInfo.slot`).
FROM_BRANCHES = -1


def instrument_decisions(stmts: list[ast.stmt], first_slot: int,
                         branches: Container[Span] = ()) -> list[DecisionInfo]:
    """Rewrite the decisions of a function's own code (its body ``stmts``) to count
    their vectors, in the module's counters from ``first_slot`` on; their contract,
    in source order. Inner decisions (a conditional expression inside a condition)
    are rewritten first, so a condition written out more than once carries its
    counting with it.

    A decision of one condition that is the test of a block with a true and a false
    edge (an ``if``, ``elif`` or ``while``: its span is in ``branches``) is left as
    written: its two vectors are its outcomes, which the path profile counts already
    (its branches' edges); it is declared with the slot :data:`FROM_BRANCHES`."""
    sites = decision_sites(stmts)
    infos: dict[int, DecisionInfo] = {}
    slot = first_slot
    for i, site in enumerate(sites):  # slots in source order
        tree, leaves = boolean_tree(site.test)
        vectors = evaluation_vectors(tree, len(leaves))
        span = _span(site.test)
        from_branches = len(leaves) == 1 and site.kind in ("if", "elif", "while") \
            and span in branches
        measured = site.measurable and _size(tree, leaves, vectors) <= MAX_NODES
        infos[i] = DecisionInfo(site.kind, span, ast.unparse(site.test),
                                tuple(ast.unparse(leaf) for leaf in leaves),
                                tuple(_span(leaf) for leaf in leaves), tree_text(tree),
                                FROM_BRANCHES if from_branches else slot if measured else 0,
                                len(vectors) if measured else 0)
        if measured and not from_branches:
            slot += len(vectors)
    for i in _innermost_first(sites):
        info = infos[i]
        if not info.vectors or info.slot == FROM_BRANCHES:
            continue
        site = sites[i]
        tree, leaves = boolean_tree(site.test)
        numbers = {v: k for k, v in enumerate(evaluation_vectors(tree, len(leaves)))}
        unfolded = _unfold(tree, leaves, numbers, info.slot)
        site.replace(_tested_once(unfolded, site.test) if TEST_ONCE else unfolded)
    return [infos[i] for i in range(len(sites))]


def counted(decisions: list[DecisionInfo]) -> int:
    """How many of the module's counters ``decisions`` own."""
    return sum(d.vectors for d in decisions if d.slot >= 0)


def counter_names(decisions: list[DecisionInfo]) -> list[str]:
    """The module globals that the rewritten ``decisions`` assign: their vectors'
    counters, and where one is measured, the value tested."""
    names = [vector_name(d.slot + k) for d in decisions if d.slot >= 0
             for k in range(d.vectors)]
    return [*names, DECISION_VALUE] if names else []


def _innermost_first(sites: list[DecisionSite]) -> list[int]:
    """The sites' indexes, those whose test lies inside more other tests first."""
    where = {id(site.test): i for i, site in enumerate(sites)}
    depth = [0] * len(sites)
    for site in sites:
        for node in walk(site.test)[1:]:
            inner = where.get(id(node))
            if inner is not None:
                depth[inner] += 1
    return sorted(range(len(sites)), key=lambda i: -depth[i])
