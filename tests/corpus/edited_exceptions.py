"""Exceptions the program edits before they leave: a traceback cleared or replaced,
a chain rewritten (even into a cycle), one exception object raised from two frames,
frames of a traceback cleared (issue 34 §1)."""

import sys
import traceback


class Boom(Exception):
    pass


def cleared(kind):
    try:
        if kind:
            raise ValueError(kind)
        return "ok"
    except ValueError as err:
        err.__traceback__ = None
        raise


def cleared_in_loop(items):
    total = 0
    for item in items:
        try:
            total += 10 // item
        except ZeroDivisionError as err:
            if total > 5:
                err.__traceback__ = None
                raise
            total -= 1
    return total


class Recorder:
    def __init__(self, log, clear=False):
        self.log = log
        self.clear = clear

    def __enter__(self):
        self.log.append("enter")
        return self

    def __exit__(self, kind, value, tb):
        self.log.append("exit " + (kind.__name__ if kind else "-"))
        if value is not None and self.clear:
            value.__traceback__ = None
        return False


def cleared_in_with(kind):
    log = []
    with Recorder(log):
        try:
            log.append(int(kind))
        except ValueError as err:
            err.__traceback__ = None
            raise
    return log


def cleared_by_exit(kind, log):
    with Recorder(log, clear=True):
        log.append(int(kind))
    return log


def other_frames_traceback(kind):
    try:
        return int(kind)
    except ValueError as err:
        err.__traceback__ = sys.exception().__traceback__.tb_next
        raise


def with_traceback_none(kind):
    try:
        return int(kind)
    except ValueError as err:
        raise err.with_traceback(None)


def cleared_generator(items):
    for item in items:
        try:
            yield 10 // item
        except ZeroDivisionError as err:
            err.__traceback__ = None
            raise


def chain_rewritten(kind):
    first = Boom("first")
    second = Boom("second")
    if kind == "cycle":
        first.__context__ = second
        second.__context__ = first
    elif kind == "cause":
        first.__cause__ = second
    elif kind == "none":
        first.__context__ = None
        first.__suppress_context__ = True
    try:
        raise first
    except Boom as err:
        return f"{err} after {err.__context__}" if kind != "cause" else f"{err} from {err.__cause__}"


def cycle_escapes(flag):
    first = Boom("a")
    second = Boom("b")
    first.__context__ = second
    second.__context__ = first
    if flag:
        raise first
    return "no"


SHARED = Boom("shared")


def raise_shared(depth):
    if depth:
        return raise_shared(depth - 1)
    raise SHARED


def catch_shared(depth):
    try:
        raise_shared(depth)
    except Boom as err:
        tb = err.__traceback__
        n = 0
        while tb is not None:
            n += 1
            tb = tb.tb_next
        err.__traceback__ = None
        return n


def inner_failure():
    raise Boom("inner")


def frames_cleared():
    try:
        inner_failure()
    except Boom as err:
        traceback.clear_frames(err.__traceback__)
        return str(err)


def reraised_after_clear(kind):
    try:
        frames_reraise(kind)
    except Boom as err:
        return f"caught {err} with traceback: {err.__traceback__ is not None}"
    return "none"


def frames_reraise(kind):
    try:
        inner_failure()
    except Boom as err:
        traceback.clear_frames(err.__traceback__)
        if kind:
            err.__traceback__ = None
        raise


def drive():
    out = []
    for kind in ("", "x"):
        try:
            out.append(cleared(kind))
        except ValueError as err:
            out.append(f"cleared {err} {err.__traceback__ is None}")
    for items in ([1, 2], [1, 0, 2], [1, 2, 0], [0, 0]):
        try:
            out.append(cleared_in_loop(items))
        except ZeroDivisionError:
            out.append("zero")
    for kind in ("3", "x"):
        try:
            out.append(cleared_in_with(kind))
        except ValueError:
            out.append("value")
        log = []
        try:
            out.append(cleared_by_exit(kind, log))
        except ValueError as err:
            out.append(f"{log} {err.__traceback__ is None}")
        try:
            out.append(other_frames_traceback(kind))
        except ValueError as err:
            out.append(f"other {err.__traceback__ is None}")
        try:
            out.append(with_traceback_none(kind))
        except ValueError:
            out.append("with_traceback")
    try:
        out.append(list(cleared_generator([1, 2, 0, 5])))
    except ZeroDivisionError:
        out.append("generator")
    for kind in ("cycle", "cause", "none", "plain"):
        out.append(chain_rewritten(kind))
    for flag in (False, True):
        try:
            out.append(cycle_escapes(flag))
        except Boom as err:
            out.append(f"escaped {err}")
    out.append([catch_shared(depth) for depth in (0, 2, 1)])
    out.append(frames_cleared())
    out.append(reraised_after_clear(""))
    out.append(reraised_after_clear("x"))
    return out
