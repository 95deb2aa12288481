"""What a function's observer notes as an exception leaves it (path and edge mode),
and where the exception left (every mode).

The observer (:func:`pathprof.python.nodes.observer`) runs in an ``except``
clause's type as the exception passes, so everything here is C calls and
attribute loads: nothing can raise anew.
"""

from __future__ import annotations

import ast

from pathprof.python.names import CLOCK, MODULE, PATH_START, REGISTER
from pathprof.python.nodes import call_module, const, load
from pathprof.python.plan import FunctionPlan
from pathprof.python.scan import is_generator

__all__ = ["exception_position", "exit_effects"]


def exception_position() -> list[ast.expr]:
    """``lasti`` of the leaving exception in this frame, the frame's code, and the
    lasti of the exception's context (-1 if none), with C calls and attribute loads
    only: evaluated as the exception leaves, nothing can raise anew (a call into
    Python could, at the recursion limit). The module state ``_@pp_m`` offers
    ``exception``, ``getframe`` and ``getattr`` (class attributes, there even as the
    interpreter shuts down).

    A lasti is read only from a traceback entry of this very frame, and is -1
    otherwise: the program may have cleared the exception's ``__traceback__``
    (``e.__traceback__ = None; raise``), given it another frame's, or chained
    another exception as its context; a bare ``raise`` adds no entry for the frame
    it runs in. The test is ``(tb.tb_frame is frame) * (tb.tb_lasti + 1) - 1``,
    through ``getattr`` with defaults: no conditional expression, since CPython
    3.13.0 fails to compile a ``:=`` in one inside an except clause ("Invalid
    CFG, stack underflow")."""
    def runtime(name: str) -> ast.expr:
        return ast.Attribute(value=load(MODULE), attr=name, ctx=ast.Load())

    def call(func: ast.expr, *args: ast.expr) -> ast.expr:
        return ast.Call(func=func, args=list(args), keywords=[])

    def getattr_or(value: ast.expr, name: str, default: int | None) -> ast.expr:
        return call(runtime("getattr"), value, const(name), const(default))

    def lasti_here(exc: ast.expr) -> ast.expr:
        tb = getattr_or(exc, "__traceback__", None)
        here = ast.Compare(left=getattr_or(tb, "tb_frame", None), ops=[ast.Is()],
                           comparators=[call(runtime("getframe"))])
        plus_one = ast.BinOp(left=getattr_or(tb, "tb_lasti", -1), op=ast.Add(),
                             right=const(1))
        return ast.BinOp(left=ast.BinOp(left=here, op=ast.Mult(), right=plus_one),
                         op=ast.Sub(), right=const(1))

    exception = call(runtime("exception"))
    code = ast.Attribute(value=call(runtime("getframe")), attr="f_code", ctx=ast.Load())
    # Raised while matching an except clause, the exception's own instruction is the
    # clause's: where the path was is where its context (the exception being
    # matched, caught in this frame) was raised.
    context = getattr_or(call(runtime("exception")), "__context__", None)
    return [lasti_here(exception), code, lasti_here(context)]


def exit_effects(fp: FunctionPlan, register: ast.expr) -> list[tuple[str, ast.expr]]:
    """The observer's effects: count the exit in ``_@pp_m.exits``, a dict from
    ``(index, @pp_r, lasti, code, context lasti, closed)`` (see
    :func:`exception_position`; ``closed``: a generator closed by its consumer)
    to how often it happened, so that its size is bounded by the code, not by how
    many exceptions leave (with ``--metric time``, also add the path's time so far
    to ``_@pp_m.exit_times``). Only C calls: nothing can raise anew as the exception
    leaves. The frame is ending, so its register holds the key meanwhile::

        @pp_r := (index, @pp_r, ...)
        @pp_r := _@pp_m.exits.__setitem__(@pp_r, _@pp_m.exits.get(@pp_r, 0) + 1)
    """
    # A generator's: whether its consumer closed it (close() throws GeneratorExit in).
    closed: ast.expr = const(False)
    if is_generator(fp.cfg.node):
        thrown = ast.Attribute(value=call_module("exception"), attr="__class__",
                               ctx=ast.Load())
        closed = ast.Compare(left=thrown, ops=[ast.Is()], comparators=[ast.Attribute(
            value=load(MODULE), attr="closed_type", ctx=ast.Load())])
    key = ast.Tuple(elts=[const(fp.index), register, *exception_position(), closed],
                    ctx=ast.Load())

    def add_to(table: str, amount: ast.expr) -> ast.expr:
        mapping = ast.Attribute(value=load(MODULE), attr=table, ctx=ast.Load())
        current = ast.Call(func=ast.Attribute(value=mapping, attr="get", ctx=ast.Load()),
                           args=[load(REGISTER), const(0)], keywords=[])
        return ast.Call(func=ast.Attribute(value=mapping, attr="__setitem__", ctx=ast.Load()),
                        args=[load(REGISTER), ast.BinOp(left=current, op=ast.Add(),
                                                        right=amount)],
                        keywords=[])

    effects: list[tuple[str, ast.expr]] = [(REGISTER, key)]
    if fp.timed:
        elapsed = ast.BinOp(left=ast.Call(func=load(CLOCK), args=[], keywords=[]),
                            op=ast.Sub(), right=load(PATH_START))
        # @pp_r := (<add the time>, @pp_r)[1]: the key stays in the register
        both = ast.Tuple(elts=[add_to("exit_times", elapsed), load(REGISTER)], ctx=ast.Load())
        effects.append((REGISTER, ast.Subscript(value=both, slice=const(1), ctx=ast.Load())))
    effects.append((REGISTER, add_to("exits", const(1))))
    return effects

