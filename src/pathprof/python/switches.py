"""Coverage that stops paying (DESIGN.md §4): measured code, then the original.

A function that can (:func:`can_switch`) goes back to the code its module's loader
compiles, by its ``__code__``, once its paths are all known (:func:`can_swap`,
:mod:`pathprof.measure.goback`); a nested function, a lambda, and any function
where conditions are measured, carries its original body beside the measured one
instead, behind a module global the runtime sets false then (:func:`add_switch`).
Each of its loops that can goes back to its original body for the rest of the
loop once the paths it would leave uncounted are all known
(:func:`plan_loop_switches`, :func:`wrap_loop_switches`).
"""

from __future__ import annotations

import ast
from typing import Any

from pathprof.constructs import LOOPS, SCOPES, WITHS
from pathprof.contract import Role
from pathprof.graph import ProbeOp
from pathprof.python.cfg import is_constant_true
from pathprof.python.cfgtypes import SiteKind
from pathprof.python.names import (
    REGISTER,
    conditions_switch_name,
    loop_mode_name,
    switch_name,
)
from pathprof.python.nodes import (
    artificial,
    assign,
    const,
    copy_tree,
    first_code,
    first_evaluated,
    is_inserted,
    line_anchor,
    load,
    locate_at,
    walk,
)
from pathprof.python.plan import FunctionPlan, LoopSwitch
from pathprof.python.statements import (
    STATEMENT_FIELDS,
    enclosed_lists,
    loop_breaks,
    loop_exit_line,
    statement_parents,
)

__all__ = ["add_switch", "can_swap", "can_switch", "original_body", "plan_loop_switches",
           "wrap_loop_switches"]


def can_switch(fp: FunctionPlan) -> bool:
    """Whether ``fp``'s function can carry its original body beside its measured
    one. Not a function that defines functions or classes of its own: their
    definitions would be compiled once per branch, and twice again per level of
    nesting below; nor one with an empty body (nothing to save); nor one that
    returns from inside a ``with``, whose return counts its path before
    ``__exit__`` runs: should ``__exit__`` raise, the runtime takes the count back,
    and a first run reported in between would not have been one.

    A function given a switch has ``fp.switch`` set, so that its returns count after their
    value is computed (a value that raises never counted).
    """
    node = fp.cfg.node
    if fp.calls_only or fp.share is not None or fp.subpaths or fp.timed:
        return False
    if fp.edge_plan is not None or len(node.body) <= fp.cfg.body_start:
        return False
    # (statements only: a definition and a return are statements, and no expression
    # holds one)
    pending: list[tuple[ast.AST, bool]] = [(stmt, False) for stmt in node.body[fp.cfg.body_start:]]
    while pending:
        child, in_with = pending.pop()
        if isinstance(child, SCOPES):
            return False
        if isinstance(child, ast.Return) and in_with:
            return False
        in_with = in_with or isinstance(child, WITHS)
        for field in STATEMENT_FIELDS:
            inner = getattr(child, field, None)
            if inner:
                pending.extend((grandchild, in_with) for grandchild in inner)
    return True


def can_swap(fp: FunctionPlan) -> bool:
    """Whether ``fp``'s function, which can stop counting (:func:`can_switch`), goes
    back by its ``__code__`` (:mod:`pathprof.measure.goback`: the code its module's
    loader compiles), with no copy of its body: where its function objects can be
    found by qualified name, a module's function or a class's method. A nested
    function or a lambda (every call of the enclosing one makes a new function
    object) carries its original body instead (:func:`add_switch`), as does every
    function where conditions are measured (their decisions count on after its
    paths are done)."""
    return not any(part.startswith("<") for part in fp.cfg.qualname.split("."))


def original_body(fp: FunctionPlan) -> list[ast.stmt]:
    """A copy of ``fp``'s body as written (after the docstring), taken before the
    probes go in (:func:`_original_copy`)."""
    return _original_copy(fp.cfg.node.body[fp.cfg.body_start:])


def _original_copy(stmts: list[ast.stmt], memo: dict[int, ast.AST] | None = None
                   ) -> list[ast.stmt]:
    """A copy of ``stmts`` without their ``global`` and ``nonlocal`` statements: the
    measured branch, which the compiler reads first, declares the same names, and a
    second declaration after their use would be a SyntaxError. (They make no code,
    so no line event goes with them.) ``memo`` receives the copy of each node by
    the original's id (:func:`~pathprof.python.nodes.copy_tree`'s memo)."""
    shell = ast.Module(body=[copy_tree(stmt, memo) for stmt in stmts], type_ignores=[])
    for node in walk(shell):
        for name, value in ast.iter_fields(node):
            if isinstance(value, list) and any(isinstance(v, ast.Global | ast.Nonlocal)
                                               for v in value):
                kept = [v for v in value if not isinstance(v, ast.Global | ast.Nonlocal)]
                setattr(node, name, kept or [artificial(ast.Pass())])
    return shell.body


def plan_loop_switches(fp: FunctionPlan) -> list[LoopSwitch]:
    """The loops of a function given a switch (:func:`can_switch`) that can go back
    to their original body for the rest of a loop: every ``for`` and ``while``
    whose backedges start a path with a register set to a constant, except loops
    inside a ``with`` or a ``try`` with a ``finally`` or ``except*`` (their
    measured exits pass route flags and cut records that an original body would
    not set), and loops with a ``break`` that ends an enclosing loop's iteration
    from inside a ``with`` or such a ``try`` of their own. Called before the probes
    go in: the originals are copies of the bodies as written."""
    cfg, dag = fp.cfg, fp.numbering.dag
    enclosed = enclosed_lists(cfg.node)
    parents = statement_parents(cfg.node)
    starts = {dag.edges[start].dst: start for _, start in dag.backedges.values()}
    path_starts = {**dag.restart_edges, **starts}  # every block a path can start at
    # Breaks whose edge is an enclosing loop's backedge, and those of them whose
    # code is inserted right before them.
    break_edges = [eid for eid in cfg.backedges if cfg.edges[eid].label == "break"]
    outer_breaks = {id(piece.node) for eid in break_edges
                    for piece in cfg.blocks[cfg.edges[eid].src].pieces
                    if isinstance(piece.node, ast.Break)}
    ends_outer = {id(site.stmts[site.index]) for eid in break_edges
                  if (site := cfg.edges[eid].site).kind is SiteKind.INSERT
                  and site.stmts is not None and site.index < len(site.stmts)}
    headers = {id(piece.node): block.id for block in cfg.blocks for piece in block.pieces
               if piece.role in (Role.TEST, Role.FOR_NEXT)}
    loops: list[LoopSwitch] = []
    for node in ast.walk(cfg.node):
        if not isinstance(node, LOOPS):
            continue
        where = parents.get(id(node))
        if where is None or id(where[0]) in enclosed:
            continue
        header = headers.get(id(node.test if isinstance(node, ast.While) else node.target))
        start = starts.get(header) if header is not None else None
        if header is None or start is None:
            continue
        probe = fp.plan.probes.get(start)
        into_body = [dag.normal_edges.get(eid) for eid in cfg.out_edges(header)
                     if cfg.edges[eid].label in ("true", "next")]
        if probe is None or probe.op is not ProbeOp.SET or len(into_body) != 1 \
                or into_body[0] is None:
            continue
        own = loop_breaks(node)
        if any(through or id(stmts) in enclosed for _, stmts, through in own):
            continue
        breaks = [b for b, _, _ in own if id(b) in ends_outer]
        if any(id(b) in outer_breaks and id(b) not in ends_outer for b, _, _ in own):
            continue  # (no such break is known: its code would be lost)
        # each node's copy by the original's id: a Break's is a Break (LoopSwitch's
        # breaks), which no type of the memo says
        memo: dict[int, Any] = {}
        original = _original_copy(node.body, memo)
        inside = next(loop.body for loop in cfg.loops if loop.header == header)
        inner_starts = tuple(sorted(edge for block, edge in path_starts.items()
                                    if block in inside and block != header))
        loops.append(LoopSwitch(node, len(loops), header, start, into_body[0], probe.value,
                                original, {id(b): memo[id(b)] for b in breaks},
                                inner_starts))
    return loops


def wrap_loop_switches(fp: FunctionPlan) -> None:
    """Give each loop of ``fp.loop_switches`` its original body, after the probes
    went in::

        @pp_o<k> = False
        while <test>:
            if @pp_o<k>: <original body>
            else: <measured body>        # its backedges may set @pp_o<k>
        else:
            if @pp_o<k>: @pp_r = <start value>      # (_restore_on_exit)
            <measured else>

    The first iteration of every loop entry is measured (its path comes from
    outside the loop). The inserted code is located where the code that runs next
    anyway is, so tracers see no extra line."""
    if not fp.loop_switches:
        return
    parents = statement_parents(fp.cfg.node)  # (statement lists stay the same objects below)
    for loop in fp.loop_switches:
        node = loop.node
        mode = loop_mode_name(loop.ordinal)
        test = load(mode)
        first = first_code(loop.original)
        if first is not None and not fp.mark_probes:
            ast.copy_location(test, first)
        else:
            artificial(test)
        choose = ast.If(test=test, body=loop.original, orelse=node.body)
        ast.copy_location(choose, test)
        choose.end_lineno, choose.end_col_offset = test.end_lineno, test.end_col_offset
        node.body = [choose]
        if not (isinstance(node, ast.While) and is_constant_true(node.test)):
            _restore_on_exit(node, mode, loop.start_value, fp.mark_probes)
        stmts, _ = parents[id(node)]
        init = assign(mode, const(False))
        if not fp.mark_probes:
            locate_at([init], first_evaluated(node.test if isinstance(node, ast.While)
                                              else node.iter))
        stmts.insert(next(i for i, stmt in enumerate(stmts) if stmt is node), init)


def _restore_on_exit(node: ast.For | ast.AsyncFor | ast.While, mode: str, start: int,
                     mark_probes: bool) -> None:
    """At the start of ``node``'s ``else``: ``if @pp_o<k>: @pp_r = <start>``.

    Code after a jump starts a block of its own; code there without a location
    would leave CPython 3.12 the function's return after it without a line. So the
    test and the inserted code after it are located at the line the loop ends on
    (its ``for``'s iterable, its ``while``'s test), which runs just before anyway;
    where that line is not one line, the jump-free ``@pp_r = (@pp_r,
    <start>)[@pp_o<k>]`` does it (and in a build with ``mark_probes``, which
    locates nothing)."""
    line = loop_exit_line(node)
    if line is None or mark_probes:
        restore = assign(REGISTER, ast.Subscript(
            value=ast.Tuple(elts=[load(REGISTER), const(start)], ctx=ast.Load()),
            slice=load(mode), ctx=ast.Load()))
        after = first_code(node.orelse)
        if after is not None and not mark_probes:
            locate_at([restore], after)
        node.orelse.insert(0, restore)
        return
    node.orelse.insert(0, artificial(ast.If(
        test=load(mode), body=[assign(REGISTER, const(start))], orelse=[])))
    inserted = 0
    while inserted < len(node.orelse) and is_inserted(node.orelse[inserted]):
        inserted += 1
    locate_at(node.orelse[:inserted], line_anchor(line))


def add_switch(fp: FunctionPlan, original: list[ast.stmt],
               conditioned: list[ast.stmt] | None = None) -> None:
    """``if _@pp_i<n>: <measured body> else: <original body>`` after the docstring.

    One global load and test per call; once the runtime sets the switch false,
    each call runs the program's own statements with no probe at all. A call that
    began measured ends measured, so every path counted is a whole path. The test
    is located at the first statement's code, as the register's start is, so
    tracers see no extra line.

    With ``conditioned`` (conditions measured: the original body with its decisions
    rewritten to count, :mod:`pathprof.python.conditioncode`), a function whose
    paths have told all they can still counts its decisions' vectors, with no path
    probe, until each decision is done: ``if _@pp_i<n>: <measured> elif
    _@pp_k<n>: <conditioned> else: <original>``."""
    node = fp.cfg.node
    start = fp.cfg.body_start
    head, measured = node.body[:start], node.body[start:]
    test = load(switch_name(fp.index))
    first = first_code(original)
    if first is not None and not fp.mark_probes:
        ast.copy_location(test, first)
    else:
        artificial(test)
    if conditioned is not None:
        second = ast.copy_location(load(conditions_switch_name(fp.index)), test)
        second.end_lineno, second.end_col_offset = test.end_lineno, test.end_col_offset
        if not isinstance(second, ast.Name):  # (a read of the holder: locate its parts)
            for part in ast.walk(second):
                ast.copy_location(part, test)
        inner = ast.If(test=second, body=conditioned, orelse=original)
        ast.copy_location(inner, second)
        inner.end_lineno, inner.end_col_offset = second.end_lineno, second.end_col_offset
        original = [inner]
    switch = ast.If(test=test, body=measured, orelse=original)
    ast.copy_location(switch, test)
    switch.end_lineno, switch.end_col_offset = test.end_lineno, test.end_col_offset
    node.body = [*head, switch]
