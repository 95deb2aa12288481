"""Instrument a module's source: parse it, plan every function, rewrite, add the prologue.

The one entry point of the Python front end (:func:`instrument_source`): functions
are planned by :mod:`pathprof.python.plan`; path and edge mode rewrite them with
:mod:`pathprof.python.rewrite` (and :mod:`pathprof.python.switches`), event mode
with :mod:`pathprof.python.eventcode`; both hand the runtime the same metadata
(the CFG as plain data), built here. Names the program could see are hidden here too
(:func:`hide_own_names`).
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Container, Mapping, Sequence
from dataclasses import dataclass, field
from types import CodeType
from typing import TYPE_CHECKING, TypeVar

from pathprof.constructs import CONSTRUCTS, FOR_LOOPS, FUNCTIONS, WITHS
from pathprof.contract import (
    Block,
    Compound,
    CopyShareInfo,
    Edge,
    EdgeCounters,
    FunctionInfo,
    ModuleInfo,
    Piece,
    Restart,
    ReturnCount,
    Role,
    Span,
)
from pathprof.graph import number_paths, to_dag
from pathprof.graph.copyplan import CopyShare
from pathprof.hashing import source_hash
from pathprof.python import eventcode
from pathprof.python.cfg import build_cfg, iter_functions
from pathprof.python.cfgtypes import SiteKind
from pathprof.python.conditioncode import counted, counter_names, instrument_decisions
from pathprof.python.generator_globals import capture_globals
from pathprof.python.lasti import keep_last_instruction
from pathprof.python.names import (
    CLOCK,
    COUNTDOWN,
    GETATTR,
    GETFRAME,
    HOLDER,
    IDENTITY,
    LOCAL_PREFIX,
    MODULE,
    NO_LOCALS,
    NOTE,
    OBSERVING,
    PARKED,
    RUNTIME,
    TRACK_TYPE,
    conditions_switch_name,
    counter_name,
    lengths_name,
    loop_switch_name,
    switch_name,
    timer_name,
)
from pathprof.python.nodes import artificial, const, copy_tree, load, mark_unlocated, store
from pathprof.python.outside import move_registers_out
from pathprof.python.plan import (
    FunctionPlan,
    plan_edge_function,
    plan_function,
    plan_share_function,
    writable_path_count,
)
from pathprof.python.reraise_lines import locate_reraises
from pathprof.python.rewrite import count_calls, rewrite_function
from pathprof.python.scan import ModuleScan, scan_module
from pathprof.python.switches import (
    add_switch,
    can_swap,
    can_switch,
    original_body,
    plan_loop_switches,
)

if TYPE_CHECKING:
    from pathprof.python.cfgtypes import FunctionCfg
    from pathprof.python.cfgtypes import Piece as CfgPiece

__all__ = [
    "InstrumentedModule",
    "hide_own_names",
    "instrument_source",
    "source_hash",
]

#: A module's code object, or the tuple of its code objects the cache keeps.
_Code = TypeVar("_Code", CodeType, tuple[CodeType, ...])


def _hide_in_view(call: ast.Call) -> None:
    """``locals()`` → ``_@pp_m.program_names(locals, locals())``, in place (the call's
    node becomes the outer call), every part located at the call."""
    assert isinstance(call.func, ast.Name)
    inner = ast.copy_location(ast.Call(func=call.func, args=[], keywords=[]), call)
    view = ast.copy_location(ast.Name(id=call.func.id, ctx=ast.Load()), call)
    func = ast.Attribute(value=load(MODULE), attr="program_names", ctx=ast.Load())
    ast.copy_location(func, call)
    ast.copy_location(func.value, call)
    call.func = func
    call.args = [view, inner]


@dataclass
class RegistersMoved:
    """A function whose registers :func:`hide_own_names` moved out of its frame, and
    its body with them in the frame."""

    function: ast.FunctionDef | ast.AsyncFunctionDef
    body_in_frame: list[ast.stmt]


def hide_own_names(tree: ast.Module, scan: ModuleScan, everywhere: bool = False
                   ) -> list[RegistersMoved]:
    """In functions, ``locals()``, ``vars()`` and ``dir()`` without arguments become
    ``_@pp_rt.program_names(locals, locals())``: what the builtin returns without
    pathprof's ``@pp_*`` locals (a name the program bound to something else is
    called as written and its result left alone). Located where the call is: no
    new line, nothing in a traceback. ``eval`` and ``exec`` with the default
    namespace, and frames inspected from outside (``f_locals``), still see them.

    In the functions whose own source can reach their frame (``sys._getframe``,
    ``inspect.currentframe``, ``eval``, ``exec``, ``breakpoint``...), the ``@pp_*``
    names move out of the frame altogether (:mod:`pathprof.python.outside`); with
    ``everywhere`` (for tests), in every function. ``scan`` is what
    :func:`~pathprof.python.scan.scan_module` found in ``tree`` before the rewrite
    (which adds no such call or name). Returns the functions moved, each with its
    body as it was, for :meth:`InstrumentedModule.compile`."""
    for call in scan.name_views:
        _hide_in_view(call)
    reaching: list[ast.FunctionDef | ast.AsyncFunctionDef] = scan.reaching
    if everywhere:
        reaching = [node for node in ast.walk(tree)
                    if isinstance(node, FUNCTIONS)]
    moved = []
    for node in reaching:
        moved.append(RegistersMoved(node, [copy_tree(stmt) for stmt in node.body]))
        move_registers_out(node, LOCAL_PREFIX, MODULE)
    return moved


# ---------------------------------------------------------------------------
# Modules


@dataclass
class InstrumentedModule:
    """The rewritten module and what the runtime and the data file need to know."""

    tree: ast.Module
    functions: list[FunctionPlan]
    metadata: ModuleInfo
    #: the statements pathprof put at the top of the module (they are in ``tree``
    #: too): run alone in an imported module's namespace, they give its functions'
    #: instrumented code the names it needs (:mod:`pathprof.measure.inplace`)
    prologue: list[ast.stmt] = field(default_factory=list)
    #: functions whose registers live outside their frame (:func:`hide_own_names`)
    registers_moved: list[RegistersMoved] = field(default_factory=list)
    #: the runtime module the module's code reaches through its holder
    runtime: str = "pathprof.runtime"
    #: the functions that go back by their ``__code__`` (:mod:`pathprof.measure.goback`)
    swaps: tuple[int, ...] = ()

    def compile(self, filename: str) -> CodeType:
        """The module's code object, ready to run: :meth:`compile_unbound` bound to
        a holder of its own (:func:`pathprof.runtime.holder.bind`)."""
        return self.bind(self.compile_unbound(filename))

    def bind(self, code: _Code) -> _Code:
        """``code`` (this module's code unbound, or a tuple of its code objects, as the
        cache keeps them) bound to a new holder, with this module's runtime in it."""
        import importlib

        from pathprof.runtime import holder

        runtime = importlib.import_module(self.runtime)
        return holder.bind(code, holder.new_holder(runtime))

    def compile_unbound(self, filename: str) -> CodeType:
        """The module's code object as it is cached: the holder's placeholder where
        the holder will be. CPython 3.13 and 3.14 can fail to compile
        (``ValueError: Invalid CFG, stack underflow``) a function whose registers
        moved out of its frame, where calls with conditional expressions in their
        arguments sit in an ``except`` clause's type with no line number (seen on
        ``asyncio/__main__.py`` in event mode); those functions then keep their
        registers in the frame, as every other function does, and the module
        compiles as written."""
        try:
            code = compile(self.tree, filename, "exec", dont_inherit=True)
        except ValueError:
            if not self.registers_moved:
                raise
            for moved in self.registers_moved:
                moved.function.body = moved.body_in_frame
            self.registers_moved = []
            code = compile(self.tree, filename, "exec", dont_inherit=True)
        return locate_reraises(keep_last_instruction(code))

    def compile_prologue(self, filename: str) -> CodeType:
        """The prologue alone, unbound (:meth:`compile_unbound`)."""
        return compile(ast.Module(body=self.prologue, type_ignores=[]), filename, "exec",
                       dont_inherit=True)


def instrument_source(source: str | bytes, filename: str, *, module_key: str | None = None,
                      mark_probes: bool = False, mode: str = "path",
                      metric: str | None = None, events: str = "statements",
                      placement: str = "tree", registers_outside: bool = False,
                      calls_only: Container[int] = (),
                      shares: Mapping[int, Share] | None = None,
                      subpaths: bool = False, switches: bool = False,
                      totals_only: bool = False, conditions: bool = False,
                      swaps: bool = True) -> InstrumentedModule:
    """Parse, plan and rewrite a module's source.

    Raises whatever :func:`ast.parse` raises for source that does not parse, so a
    module that fails to parse fails the way it would without pathprof.
    ``mark_probes`` (for tests) puts inserted code at
    :data:`~pathprof.python.nodes.PROBE_MARK_LINE`;
    ``registers_outside`` (for tests) keeps every function's registers outside its
    frame, as those whose source can reach their frame always do. ``calls_only``
    holds the indexes (in :func:`~pathprof.python.cfg.iter_functions` order) of
    functions whose calls only are counted: in one copy of a parallel run, those
    another copy profiles (path and edge mode); ``shares`` maps the index of a
    function whose paths the copies split to ``(tasks, copies, this copy)``
    (:class:`~pathprof.graph.copyplan.CopyShare`; path mode). ``subpaths`` adds
    OSP's bulk skipping and block observation to path mode
    (:mod:`pathprof.measure.subpaths`). ``switches`` gives every function that can
    have one (:func:`~pathprof.python.switches.can_switch`) its original body beside
    the measured one, which the runtime can send it back to (path mode's coverage
    that stops paying: :mod:`pathprof.measure.stopping`), or, where it can
    (:func:`~pathprof.python.switches.can_swap`) and ``swaps`` says the module runs
    Python's compile of its source (not another tool's rewriting), none: it goes back
    by its ``__code__`` (:mod:`pathprof.measure.goback`). ``totals_only`` (mode
    "events"): each call hands its count to the thread's total alone, with no
    per-function self or inclusive count (:func:`pathprof.python.eventcode._hand_over`).
    """
    if mode == "events":
        module = _instrument_events(source, filename, module_key, events, placement,
                                    registers_outside, totals_only, mark_probes)
    else:
        module = _instrument(source, filename, module_key, mode, metric, registers_outside,
                             calls_only, shares or {}, subpaths, switches, mark_probes,
                             conditions, swaps)
    if mark_probes:
        mark_unlocated(module.tree)
        for moved in module.registers_moved:
            for stmt in moved.body_in_frame:
                mark_unlocated(stmt)
    return module


def _instrument(source: str | bytes, filename: str, module_key: str | None,
                mode: str = "path", metric: str | None = None,
                registers_outside: bool = False, calls_only: Container[int] = (),
                shares: Mapping[int, Share] | None = None,
                subpaths: bool = False, switches: bool = False,
                mark_probes: bool = False, conditions: bool = False,
                swaps: bool = True) -> InstrumentedModule:
    tree = ast.parse(source, filename)
    scan = scan_module(tree)
    if mode not in ("path", "edge"):
        raise ValueError(f"unknown instrumentation mode {mode!r}")
    if subpaths and (mode != "path" or shares or calls_only):
        raise ValueError("subpath sampling needs path mode, in a run of one copy")
    if conditions and (mode != "path" or subpaths or shares or metric):
        raise ValueError("conditions are measured in path mode, without a metric, "
                         "subpaths or shares")
    functions = [build_cfg(node, qualname) for node, qualname in iter_functions(tree)]
    planner = plan_edge_function if mode == "edge" else plan_function
    shares = shares or {}

    def plan_all() -> list[FunctionPlan]:
        return [_share_plan(cfg, i, shares[i]) if i in shares and mode == "path"
                and not metric else planner(cfg, i) for i, cfg in enumerate(functions)]

    plans = plan_all()
    too_big = [fp for fp in plans if not writable_path_count(fp.num_paths)]
    if too_big:  # (left as written: the others planned again, numbered without them)
        functions = [fp.cfg for fp in plans if writable_path_count(fp.num_paths)]
        plans = plan_all()
    unmeasured = tuple((fp.cfg.qualname, fp.cfg.node.lineno, fp.num_paths.bit_length())
                       for fp in too_big)
    if metric not in (None, "time"):
        raise ValueError(f"unknown metric {metric!r}")
    if metric == "time":
        if mode != "path":
            raise ValueError("the time metric needs path mode")
        for fp in plans:
            fp.timed = True
    key = module_key or f"{filename}:{source_hash(source)}"
    for fp in plans:
        fp.subpaths = subpaths
        fp.calls_only = fp.index in calls_only
        fp.mark_probes = mark_probes
    stopping = [fp for fp in plans if switches and mode == "path" and can_switch(fp)]
    swapped = tuple(fp.index for fp in stopping if swaps and not conditions and can_swap(fp))
    originals = {fp.index: original_body(fp) for fp in stopping if fp.index not in swapped}
    vectors = 0
    conditioned: dict[int, list[ast.stmt]] = {}
    if conditions:
        for fp in plans:
            if not fp.calls_only:
                branches = _branch_tests(fp)
                if fp.index in originals:  # counted after its paths are known too
                    copied = [copy_tree(stmt) for stmt in originals[fp.index]]
                    if counted(instrument_decisions(copied, vectors, branches)):
                        conditioned[fp.index] = copied
                fp.decisions = instrument_decisions(
                    fp.cfg.node.body[fp.cfg.body_start:], vectors, branches)
                vectors += counted(fp.decisions)
    for index in (*originals, *swapped):
        plans[index].switch = True
        if not counted(plans[index].decisions):
            # (a loop's original body would leave the decisions in it uncounted; those
            # its branches count are read off the paths, which a loop's switch keeps
            # exact in what they tell: every edge in the loop has run)
            plans[index].loop_switches = plan_loop_switches(plans[index])
    for fp in plans:
        if fp.calls_only:
            fp.timed = False
            count_calls(fp)
        else:
            rewrite_function(fp)
        capture_globals(fp)
    moved = hide_own_names(tree, scan, registers_outside)
    for index, original in originals.items():
        add_switch(plans[index], original, conditioned.get(index))
    for fp in plans:  # (its counters are module globals its decisions assign)
        names = counter_names(fp.decisions)
        if names:
            fp.cfg.node.body.insert(fp.cfg.body_start, artificial(ast.Global(names=names)))
    metadata = module_metadata(plans, filename, key, source)
    prologue = _add_prologue(
        tree, plans, filename, key, metadata, subpaths, tuple(originals),
        tuple(counted(fp.decisions) for fp in plans) if conditions else None, unmeasured,
        swapped)
    return InstrumentedModule(tree, plans, metadata, prologue, moved, swaps=swapped)


def _branch_tests(fp: FunctionPlan) -> set[Span]:
    """The spans of the tests whose block has a true and a false edge to different
    blocks: the outcome of such a test is the edge the path profile counts."""
    cfg = fp.cfg
    found = set()
    for block_id, block in enumerate(cfg.blocks):
        if not block.pieces or block.pieces[-1].role is not Role.TEST:
            continue
        branches = {cfg.fall_off.get(eid, e.label): e.dst for eid, e in enumerate(cfg.edges)
                    if e.src == block_id}
        if {"true", "false"} <= set(branches) and branches["true"] != branches["false"]:
            found.add(Span(*block.pieces[-1].span()))
    return found


#: A function's share in one copy: (its tasks' edge sets, each task's copy, this copy).
Share = tuple[Sequence[Sequence[int]], Sequence[int], int]


def _share_plan(cfg: FunctionCfg, index: int, share: Share) -> FunctionPlan:
    tasks, copies, this = share
    numbering = number_paths(to_dag(cfg.to_graph()))
    return plan_share_function(cfg, index, CopyShare(
        numbering, tuple(frozenset(t) for t in tasks), tuple(copies), this))


def _instrument_events(source: str | bytes, filename: str, module_key: str | None,
                       kind: str, placement: str = "tree",
                       registers_outside: bool = False,
                       totals_only: bool = False,
                       mark_probes: bool = False) -> InstrumentedModule:
    """Event-counting instrumentation (Ball 1994): see :mod:`pathprof.python.eventcode`."""
    if placement not in eventcode.PLACEMENTS:
        raise ValueError(f"unknown event placement {placement!r}; choose from "
                         f"{', '.join(eventcode.PLACEMENTS)}")
    if kind not in eventcode.EVENT_KINDS:
        raise ValueError(f"unknown event kind {kind!r}; choose from "
                         f"{', '.join(eventcode.EVENT_KINDS)}")
    tree = ast.parse(source, filename)
    scan = scan_module(tree)
    functions = [build_cfg(node, qualname, star_flows_on=False)
                 for node, qualname in iter_functions(tree)]
    plans = [plan_function(cfg, i) for i, cfg in enumerate(functions)]
    codes = eventcode.plain_codes(tree, filename)
    key = module_key or f"{filename}:{source_hash(source)}"
    extra = []
    for fp in plans:
        fp.mark_probes = mark_probes
        meta = function_metadata(fp)
        code = codes.get((fp.cfg.qualname, meta.code_line))
        weights = eventcode.piece_weights(fp.cfg, kind, code, meta)
        plan = eventcode.plan_events_for(fp.cfg, weights, placement)
        extra.append(eventcode.event_metadata(fp.cfg, plan, weights, kind))
        adds = (eventcode.statement_adds(fp.cfg, weights, kind, code, meta)
                if placement == "statements" else None)
        eventcode.rewrite_event_function(fp, plan, weights, adds, totals_only)
        capture_globals(fp)
    moved = hide_own_names(tree, scan, registers_outside)
    metadata = module_metadata(plans, filename, key, source)
    metadata = dataclasses.replace(
        metadata, events=kind, totals_only=totals_only,
        functions=tuple(dataclasses.replace(function, mode="events", events=events)
                        for function, events in zip(metadata.functions, extra, strict=True)))
    prologue = eventcode.event_prologue(len(plans), filename, key, metadata.encode())
    for stmt in prologue:
        artificial(stmt)
    body = tree.body
    position = 1 if _is_docstring(body[0] if body else None) else 0
    while (position < len(body) and isinstance(body[position], ast.ImportFrom)
           and body[position].module == "__future__"):  # type: ignore[attr-defined]
        position += 1
    body[position:position] = prologue
    return InstrumentedModule(tree, plans, metadata, prologue, moved,
                              runtime="pathprof.runtime.events")


def _add_prologue(tree: ast.Module, plans: list[FunctionPlan], filename: str, key: str,
                  metadata: ModuleInfo, subpaths: bool = False,
                  switches: tuple[int, ...] = (),
                  vectors: tuple[int, ...] | None = None,
                  unmeasured: tuple[tuple[str, int, int], ...] = (),
                  swaps: tuple[int, ...] = ()) -> list[ast.stmt]:
    position = 0
    body = tree.body
    if _is_docstring(body[0] if body else None):
        position = 1
    while (position < len(body) and isinstance(body[position], ast.ImportFrom)
           and body[position].module == "__future__"):  # type: ignore[attr-defined]
        position += 1
    sizes = ast.Tuple(
        elts=[const(fp.table_size) for fp in plans],
        ctx=ast.Load())
    register = ast.Call(
        func=ast.Attribute(value=load(RUNTIME), attr="register", ctx=ast.Load()),
        args=[load("__name__"), const(filename), const(key), sizes,
              const(metadata.encode())],
        keywords=[ast.keyword(arg="holder", value=load(HOLDER))])
    prologue: list[ast.stmt] = [
        ast.Assign(targets=[store(MODULE)], value=register),
    ]
    if plans:
        targets = ast.Tuple(elts=[store(counter_name(fp.index)) for fp in plans],
                            ctx=ast.Store())
        prologue.append(ast.Assign(
            targets=[targets],
            value=ast.Attribute(value=load(MODULE), attr="counters", ctx=ast.Load())))
    if subpaths:
        prologue += _subpath_prologue(plans, register)
    if unmeasured:  # the runtime says so, every run (a cached module too)
        register.keywords.append(ast.keyword(arg="unmeasured", value=const(unmeasured)))
    if vectors is not None:  # conditions measured: the runtime sets the counters
        register.keywords.append(ast.keyword(arg="vectors", value=const(vectors)))
    if swaps:  # (they go back by their code: pathprof.measure.goback)
        register.keywords.append(ast.keyword(arg="swaps", value=const(swaps)))
    if switches:  # every function measured until the runtime says otherwise
        register.keywords.append(ast.keyword(arg="switches", value=const(switches)))
        prologue.append(ast.Assign(targets=[store(switch_name(i)) for i in switches],
                                   value=const(True)))
        counting = [i for i in switches if vectors is not None and vectors[i]]
        if counting:  # (conditions measured: see switches.add_switch)
            prologue.append(ast.Assign(
                targets=[store(conditions_switch_name(i)) for i in counting],
                value=const(True)))
    if switches or swaps:
        loops = tuple((fp.index, tuple((tuple(loop.hidden_paths(fp.numbering)),
                                        tuple(loop.spanning_paths(fp.numbering)))
                                       for loop in fp.loop_switches))
                      for fp in plans if fp.loop_switches)
        if loops:  # every loop measured until the runtime says otherwise
            register.keywords.append(ast.keyword(arg="loops", value=const(loops)))
            prologue.append(ast.Assign(targets=[store(PARKED)], value=ast.Attribute(
                value=load(RUNTIME), attr="PARKED", ctx=ast.Load())))
            prologue.append(ast.Assign(
                targets=[store(loop_switch_name(fp.index, loop.ordinal))
                         for fp in plans for loop in fp.loop_switches],
                value=const(False)))
    if any(fp.timed for fp in plans):
        register.keywords.append(ast.keyword(arg="timed", value=const(True)))
        targets = ast.Tuple(elts=[store(timer_name(fp.index)) for fp in plans],
                            ctx=ast.Store())
        prologue.append(ast.Assign(
            targets=[targets],
            value=ast.Attribute(value=load(MODULE), attr="times", ctx=ast.Load())))
        prologue.append(ast.Assign(
            targets=[store(CLOCK)],
            value=ast.Attribute(value=load(RUNTIME), attr="clock", ctx=ast.Load())))
    for stmt in prologue:
        artificial(stmt)
    body[position:position] = prologue
    return prologue


def _subpath_prologue(plans: list[FunctionPlan], register: ast.Call) -> list[ast.stmt]:
    """``_@pp_Q``, ``_@pp_O``, ``_@pp_note``, what calls are noted with, and each
    function's ``_@pp_l<i>`` (path lengths): see
    :func:`pathprof.python.probecode.count_down`."""
    register.keywords.append(ast.keyword(arg="subpaths", value=ast.Tuple(
        elts=[const(fp.path_lengths) for fp in plans], ctx=ast.Load())))
    code: list[ast.stmt] = [
        ast.Assign(targets=[store(COUNTDOWN)], value=ast.Attribute(
            value=load(RUNTIME), attr="countdown", ctx=ast.Load())),
        ast.Assign(targets=[store(OBSERVING)], value=ast.Attribute(
            value=load(RUNTIME), attr="blocks_observed", ctx=ast.Load())),
        ast.Assign(targets=[store(NOTE)], value=ast.Attribute(value=ast.Attribute(
            value=load(RUNTIME), attr="osp_notes", ctx=ast.Load()), attr="append",
            ctx=ast.Load())),
        *(ast.Assign(targets=[store(name)], value=ast.Attribute(
            value=load(RUNTIME), attr=attr, ctx=ast.Load()))
          for name, attr in ((GETFRAME, "getframe"), (GETATTR, "osp_getattr"),
                             (IDENTITY, "osp_id"), (NO_LOCALS, "osp_no_locals"),
                             (TRACK_TYPE, "osp_track_type"))),
    ]
    if plans:
        targets = ast.Tuple(elts=[store(lengths_name(fp.index)) for fp in plans],
                            ctx=ast.Store())
        code.append(ast.Assign(targets=[targets], value=ast.Attribute(
            value=load(MODULE), attr="lengths", ctx=ast.Load())))
    return code


def _is_docstring(node: ast.stmt | None) -> bool:
    return (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str))


# ---------------------------------------------------------------------------
# Metadata: the CFG as plain data, for the runtime (query increments, block spans)
# and for reports (blocks, edges, labels).


def function_metadata(fp: FunctionPlan) -> FunctionInfo:
    """The contract (:mod:`pathprof.contract`) of one planned function."""
    cfg = fp.cfg
    dag = fp.numbering.dag
    blocks = tuple(
        Block(block.kind, block.label,
              tuple(Piece(*piece.span(), piece.role.value, _piece_flags(piece))
                    for piece in block.pieces))
        for block in cfg.blocks)
    # How each return statement counted its path, so that the runtime can take the
    # count back if a with's __exit__ raises after it.
    returns: dict[int, ReturnCount] = {}
    for eid, edge in enumerate(cfg.edges):
        dag_edge = dag.normal_edges.get(eid)
        if fp.edge_plan is not None:
            slot = fp.chord_slot(eid)
            if edge.site.kind is SiteKind.RETURN and slot is not None:
                returns[edge.src] = ReturnCount("SLOT", slot)
            continue
        if edge.site.kind is SiteKind.RETURN and dag_edge is not None:
            probe = fp.plan.probes.get(dag_edge)
            if probe is not None:
                returns[edge.src] = ReturnCount(probe.op.name, probe.value)
    share = None if fp.share is None else CopyShareInfo(
        tuple(tuple(sorted(t)) for t in fp.share.tasks), tuple(fp.share.copies),
        fp.share.index)
    counters = None if fp.edge_plan is None else EdgeCounters(
        tuple(fp.edge_plan.raising), tuple((a, b) for a, b in fp.edge_plan.endpoints),
        tuple(fp.edge_plan.chords))
    return FunctionInfo(
        qualname=cfg.qualname,
        first_line=cfg.node.lineno,
        last_line=cfg.node.end_lineno or cfg.node.lineno,
        code_line=min([cfg.node.lineno, *(d.lineno for d in cfg.node.decorator_list)]),
        is_async=isinstance(cfg.node, ast.AsyncFunctionDef),
        entry=cfg.entry,
        exit=cfg.exit,
        blocks=blocks,
        edges=tuple(Edge(e.src, e.dst, e.label) for e in cfg.edges),
        fall_off=dict(cfg.fall_off),
        restarts=tuple(Restart(r.block, r.kind) for r in cfg.restarts),
        backedges=tuple(dag.backedges),
        num_paths=fp.num_paths,
        counter=fp.kind.value,
        query=tuple(fp.plan.placement.query),
        returns=returns,
        early_returns=frozenset(fp.early_returns),
        compounds=_compounds(cfg),
        unreachable=tuple(sorted(set(range(len(cfg.blocks))) - dag.reachable)),
        mode="path" if fp.edge_plan is None else "edge",
        calls_only=fp.calls_only,
        share=share,
        edge_counters=counters,
        decisions=tuple(fp.decisions),
    )


def _compounds(cfg: FunctionCfg) -> tuple[Compound, ...]:
    """For and with statements: their whole span, and the blocks of their parts, so
    that instructions located at the statement can be told apart by opcode."""
    owners: dict[int, ast.AST] = {}
    blocks: dict[int, dict[Role, int]] = {}
    spans: dict[int, dict[Role, Span]] = {}
    for block in cfg.blocks:
        for piece in block.pieces:
            if piece.owner is None:
                continue
            key = id(piece.owner)
            owners.setdefault(key, piece.owner)
            blocks.setdefault(key, {})[piece.role] = block.id
            spans.setdefault(key, {})[piece.role] = Span(*piece.span())
    found = []
    for key, owner in owners.items():
        assert isinstance(owner, (*FOR_LOOPS, *WITHS))
        part, span = blocks[key], spans[key]
        found.append(Compound(
            kind="for" if isinstance(owner, FOR_LOOPS) else "with",
            is_async=CONSTRUCTS[type(owner)].is_async,
            span=Span(owner.lineno, owner.col_offset, owner.end_lineno or owner.lineno,
                      owner.end_col_offset or 0),
            header=span.get(Role.WITH_ENTER), iter=span.get(Role.FOR_ITER),
            for_iter=part.get(Role.FOR_ITER), for_next=part.get(Role.FOR_NEXT),
            with_enter=part.get(Role.WITH_ENTER), with_exit=part.get(Role.WITH_EXIT)))
    return tuple(found)


def _piece_flags(piece: CfgPiece) -> str:
    node = piece.node
    if piece.role is Role.STMT:
        if isinstance(node, ast.Raise):
            return "raise" if node.exc is not None else "reraise"
        if isinstance(node, ast.Return):
            return "return"
        if isinstance(node, ast.Break):
            return "break"
        if isinstance(node, ast.Continue):
            return "continue"
    return ""


def planned_metadata(source: str | bytes, filename: str) -> ModuleInfo:
    """The metadata :func:`instrument_source` (path mode, its defaults) records of a
    module, from its plans alone, at two fifths of its cost: nothing is rewritten (a
    report counting a file that was never imported needs no code of it), so only what
    the rewriter decides for the runtime is left out (``early_returns``: which returns
    count their path before their value, empty here). Raises what :func:`ast.parse`
    raises."""
    tree = ast.parse(source, filename)
    plans = [plan_function(build_cfg(node, qualname), i)
             for i, (node, qualname) in enumerate(iter_functions(tree))]
    if not all(writable_path_count(fp.num_paths) for fp in plans):
        plans = [plan_function(fp.cfg, i) for i, fp in
                 enumerate(fp for fp in plans if writable_path_count(fp.num_paths))]
    return module_metadata(plans, filename, f"{filename}:{source_hash(source)}", source)


def module_metadata(plans: list[FunctionPlan], filename: str, key: str,
                    source: str | bytes) -> ModuleInfo:
    return ModuleInfo(filename, key, source_hash(source),
                      tuple(function_metadata(fp) for fp in plans))
