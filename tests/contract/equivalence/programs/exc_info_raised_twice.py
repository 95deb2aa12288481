# Risk 1: what `sys.exc_info()` / `sys.exception()` report after `del e`, after a handler
# ends, inside nested handlers, generators and finally; and one exception object raised
# twice from different frames (its traceback grows), then re-raised uncaught.
import sys
import traceback


def info(label):
    et, ev, tb = sys.exc_info()
    line = None if tb is None else tb.tb_lineno
    print(f"  {label}: {et and et.__name__} {ev!r} tb_line={line}")


def after_del():
    try:
        raise ValueError("v")
    except ValueError as e:
        info("in handler")
        del e
        info("after del e")
        try:
            print("  e still bound?", e)
        except NameError as ne:
            print("  NameError:", ne)
            info("inside nested handler")
        info("back in outer handler")
    info("after handler")


def in_finally():
    try:
        try:
            raise KeyError("k")
        finally:
            info("finally with exception in flight")
    except KeyError:
        pass
    try:
        pass
    finally:
        info("finally without exception")


def gen():
    info("gen start")
    yield 1
    info("gen resumed")
    yield 2
    try:
        raise OSError("in gen")
    except OSError:
        info("gen handler")
        yield 3
        info("gen handler resumed")


def drive_gen():
    g = gen()
    next(g)
    try:
        raise TypeError("outer")
    except TypeError:
        next(g)
        next(g)
        info("caller after yield in gen handler")
    try:
        next(g)
    except StopIteration:
        info("StopIteration handler")


SHARED = LookupError("shared")


def raise_first(n):
    if n > 0:
        return raise_first(n - 1)
    raise SHARED


def raise_second():
    try:
        raise SHARED
    finally:
        print("  second finally")


def tb_lines(exc):
    out = []
    tb = exc.__traceback__
    while tb is not None:
        out.append((tb.tb_frame.f_code.co_name, tb.tb_lineno))
        tb = tb.tb_next
    return out


def twice():
    for fn, args in ((raise_first, (2,)), (raise_second, ())):
        try:
            fn(*args)
        except LookupError as e:
            print("  caught", e is SHARED, tb_lines(e))
            print("".join(traceback.format_exception(e)), end="")


print("--- after_del")
after_del()
print("--- in_finally")
in_finally()
print("--- generator")
drive_gen()
print("--- twice")
twice()
info("module level")
raise_first(1)
