"""The code a probe adds besides its count: ``--metric time``'s clock at a path's
end (:func:`time_path`, :func:`restart_clock`), and OSP's, the countdown in bulk where
a path ends (:func:`count_down`) and the note of a call beginning while blocks are
observed (:func:`note_call`); :mod:`pathprof.python.rewrite` places them.

Each function builds statements from the function's plan and the probe alone, the
same every time for the same plan (the generated code is compared byte for byte
across refactorings: ``scripts/generated_code_digest.py``).
"""

from __future__ import annotations

import ast
import sys

from pathprof.graph.placement import Probe, ProbeOp
from pathprof.python.names import (
    CALLER_LOCALS,
    CLOCK,
    COUNTDOWN,
    COUNTDOWN_LEFT,
    GETATTR,
    GETFRAME,
    IDENTITY,
    MODULE,
    NO_LOCALS,
    NOTE,
    NOW,
    OBSERVED_FLOOR,
    OBSERVING,
    PATH_START,
    REGISTER,
    TRACK,
    TRACK_TYPE,
    lengths_name,
)
from pathprof.python.nodes import artificial, assign, call_module, const, load, store
from pathprof.python.plan import FunctionPlan
from pathprof.python.scan import is_generator

__all__ = ["count_down", "note_call", "path_index", "register_plus", "restart_clock",
           "time_path"]


def register_plus(value: int) -> ast.expr:
    if value == 0:
        return load(REGISTER)
    return ast.BinOp(left=load(REGISTER), op=ast.Add(), right=const(value))


def time_path(table: str, probe: Probe) -> list[ast.stmt]:
    """``--metric time``: add the time since the path started to the path's total,
    and start the next path's clock (Ball-Larus path numbers index both tables)."""
    index = register_plus(probe.value) if probe.op is ProbeOp.COUNT else const(probe.value)
    target = ast.Subscript(value=load(table), slice=index, ctx=ast.Load())
    target.ctx = ast.Store()
    code = [
        assign(NOW, ast.Call(func=load(CLOCK), args=[], keywords=[])),
        artificial(ast.AugAssign(target=target, op=ast.Add(),
                                 value=ast.BinOp(left=load(NOW), op=ast.Sub(),
                                                 right=load(PATH_START)))),
        assign(PATH_START, load(NOW)),
    ]
    return code


def path_index(probe: Probe) -> ast.expr:
    return register_plus(probe.value) if probe.op is ProbeOp.COUNT else const(probe.value)


def count_down(index: int, probe: Probe, length: int | None = None) -> list[ast.stmt]:
    """OSP's bulk skipping where a path ends (:mod:`pathprof.measure.subpaths`)::

        _@pp_Q[0] = @pp_q = _@pp_Q[0] - _@pp_l<i>[path]
        if @pp_q <= 0:
            if (@pp_track is not None) & _@pp_O & (@pp_q > OBSERVED_FLOOR):
                _@pp_note((@pp_track, path))
            else:
                @pp_track = _@pp_m.osp_path(i, path, @pp_track)

    where ``length``, the one length of every path that ends here
    (:attr:`~pathprof.python.plan.FunctionPlan.end_lengths`), is given, it is
    subtracted in place of the lookup. The new countdown is kept in a local as it is
    stored, so the test reads the local, not the list again: with a constant
    length, 14 bytecodes where ``_@pp_Q[0] -= _@pp_l<i>[path]`` and a test of
    ``_@pp_Q[0]`` are 21.

    Far from a sample that is one subtraction and one test. While blocks are
    observed, a frame the runtime has met (its track set) notes its path ends
    in a list -- a C-level append, no Python frame -- and the runtime is called
    when the countdown falls to the floor, to decode the notes in bulk; the
    first path end of a frame it has not met, and a sample coming near, call it
    directly."""
    def countdown(ctx: ast.expr_context) -> ast.Subscript:
        return ast.Subscript(value=load(COUNTDOWN), slice=const(0), ctx=ctx)

    blocks: ast.expr = (const(length) if length is not None else ast.Subscript(
        value=load(lengths_name(index)), slice=path_index(probe), ctx=ast.Load()))
    step = ast.Assign(targets=[countdown(ast.Store()), store(COUNTDOWN_LEFT)],
                      value=ast.BinOp(left=countdown(ast.Load()), op=ast.Sub(), right=blocks))
    near = ast.Compare(left=load(COUNTDOWN_LEFT), ops=[ast.LtE()], comparators=[const(0)])
    met = ast.Compare(left=load(TRACK), ops=[ast.IsNot()], comparators=[const(None)])
    above = ast.Compare(left=load(COUNTDOWN_LEFT), ops=[ast.Gt()],
                        comparators=[const(OBSERVED_FLOOR)])
    # ``&`` rather than ``and``: CPython 3.13 and 3.14 copy a block with no line
    # number that ends at a loop's back edge once per jump into it (gh-107901),
    # and for an ``and`` of three tests the copies of the ``else`` ran on into one
    # another: the runtime was called up to three times for one path end. With
    # ``&`` one jump leads to the ``else``.
    noted = ast.BinOp(left=ast.BinOp(left=met, op=ast.BitAnd(), right=load(OBSERVING)),
                      op=ast.BitAnd(), right=above)
    note = ast.Expr(value=ast.Call(func=load(NOTE), args=[ast.Tuple(
        elts=[load(TRACK), path_index(probe)], ctx=ast.Load())], keywords=[]))
    call = assign(TRACK, call_module("osp_path", const(index), path_index(probe),
                                     load(TRACK)))
    observed = ast.If(test=noted, body=[note], orelse=[call])
    return [artificial(step), artificial(ast.If(test=near, body=[observed], orelse=[]))]


def note_call(fp: FunctionPlan) -> list[ast.stmt]:
    """A call beginning while blocks are observed (:mod:`pathprof.measure.subpaths`)::

        @pp_callers = _@pp_nolocals
        if "@pp_track" in _@pp_getattr(_@pp_getattr(_@pp_getframe(0).f_back, "f_code",
                                                    None), "co_varnames", ()):
            @pp_callers = _@pp_getframe(1).f_locals
        if @pp_callers.get("@pp_track") is None:
            @pp_track = _@pp_m.osp_enter(i)
        else:
            @pp_track = _@pp_tracktype()
            _@pp_note((@pp_track, _@pp_m, i, _@pp_id(_@pp_getframe(0)),
                       _@pp_getframe(0).f_code, @pp_callers["@pp_track"],
                       _@pp_getframe(1).f_lasti, @pp_callers.get("@pp_r", 0)))
        @pp_callers.clear()  # (before 3.13 only)
        @pp_callers = None

    When the caller holds a track (an instrumented function the observer has met),
    the call is noted with the caller's place and register -- C-level calls only,
    no Python frame -- and the observer fills in the blank track when it takes the
    note. Otherwise, and always for a generator, a coroutine (a stream of their own)
    and a with statement's ``__exit__`` (held: the observer must read the caller's
    frame now), the runtime is called. No frame is kept in a local. Only the locals
    of a caller pathprof instrumented are read (its code names ``@pp_track``), and
    before 3.13, where ``f_locals`` is a snapshot the frame keeps, the snapshot is
    cleared at once: it would keep the caller's values alive after the program let
    go of them (such a caller's code cannot reach its own frame, so nothing of the
    program holds that snapshot)."""
    call = assign(TRACK, call_module("osp_enter", const(fp.index)))
    node = fp.cfg.node
    if (isinstance(node, ast.AsyncFunctionDef) or is_generator(node)
            or node.name == "__exit__"):
        return [call]

    def frame(depth: int) -> ast.Call:
        return ast.Call(func=load(GETFRAME), args=[const(depth)], keywords=[])

    def attribute(value: ast.expr, attr: str) -> ast.Attribute:
        return ast.Attribute(value=value, attr=attr, ctx=ast.Load())

    def method(value: ast.expr, name: str, *args: ast.expr) -> ast.Call:
        return ast.Call(func=attribute(value, name), args=list(args), keywords=[])

    def getattr_(value: ast.expr, attr: str, default: ast.expr) -> ast.Call:
        return ast.Call(func=load(GETATTR), args=[value, const(attr), default], keywords=[])

    caller_code = getattr_(attribute(frame(0), "f_back"), "f_code", const(None))
    instrumented = ast.Compare(left=const(TRACK), ops=[ast.In()], comparators=[
        getattr_(caller_code, "co_varnames", const(()))])
    read = [assign(CALLER_LOCALS, load(NO_LOCALS)),
            ast.If(test=instrumented, body=[assign(CALLER_LOCALS, attribute(frame(1),
                                                                             "f_locals"))],
                   orelse=[])]
    caller_track = method(load(CALLER_LOCALS), "get", const(TRACK))
    untracked = ast.Compare(left=caller_track, ops=[ast.Is()], comparators=[const(None)])
    note = ast.Tuple(elts=[
        load(TRACK), load(MODULE), const(fp.index),
        ast.Call(func=load(IDENTITY), args=[frame(0)], keywords=[]),
        attribute(frame(0), "f_code"),
        ast.Subscript(value=load(CALLER_LOCALS), slice=const(TRACK), ctx=ast.Load()),
        attribute(frame(1), "f_lasti"),
        method(load(CALLER_LOCALS), "get", const(REGISTER), const(0)),
    ], ctx=ast.Load())
    noted = [assign(TRACK, ast.Call(func=load(TRACK_TYPE), args=[], keywords=[])),
             ast.Expr(value=ast.Call(func=load(NOTE), args=[note], keywords=[]))]
    let_go = ([ast.Expr(value=method(load(CALLER_LOCALS), "clear"))]
              if sys.version_info < (3, 13) else [])
    return [*read, ast.If(test=untracked, body=[call], orelse=noted), *let_go,
            assign(CALLER_LOCALS, const(None))]


def restart_clock() -> ast.stmt:
    return assign(PATH_START, ast.Call(func=load(CLOCK), args=[], keywords=[]))
