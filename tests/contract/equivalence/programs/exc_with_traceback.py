# Risk 1: tracebacks replaced with `with_traceback`: `raise e.with_traceback(None)`, and
# `e.with_traceback(tb_of_another_frame)` followed by a bare `raise`, in functions, loops
# and generators. The tracebacks are printed frame by frame; the last one escapes uncaught.
import traceback


def frames(exc):
    out = []
    tb = exc.__traceback__
    while tb is not None:
        out.append(f"{tb.tb_frame.f_code.co_name}:{tb.tb_lineno}:{tb.tb_frame.f_lineno}")
        tb = tb.tb_next
    return out


def show(label, exc):
    print(f"--- {label}: {type(exc).__name__}({exc})")
    print("".join(traceback.format_exception(exc)), end="")
    print("  frames", frames(exc))


def donor(depth):
    if depth:
        return donor(depth - 1)
    try:
        raise RuntimeError("donor")
    except RuntimeError as e:
        return e.__traceback__


def with_none(x):
    try:
        if x:
            raise ValueError(x)
    except ValueError as e:
        raise e.with_traceback(None)  # noqa: B904
    return "fine"


def with_none_loop(n):
    seen = []
    for i in range(n):
        try:
            if i == 2:
                raise KeyError(i)
            seen.append(i)
        except KeyError as e:
            raise e.with_traceback(None) from None
    return seen


def with_other_then_bare(kind):
    other = donor(2)
    try:
        if kind == "attr":
            raise TypeError("attr")
        raise OSError("method")
    except TypeError as e:
        e.__traceback__ = other
        raise
    except OSError as e:
        e.with_traceback(other)
        raise


def with_other_raise(n):
    other = donor(n)
    err = IndexError(n)
    raise err.with_traceback(other)


def gen_with_other():
    other = donor(0)
    yield 1
    try:
        yield 2
        raise AttributeError("gen")
    except AttributeError as e:
        e.with_traceback(other)
        raise


def caller(label, fn, *args):
    try:
        result = fn(*args)
    except Exception as e:
        show(label, e)
        return e
    print("---", label, "returned", result)
    return None


caller("with_none 0", with_none, 0)
caller("with_none 1", with_none, 1)
caller("with_none_loop", with_none_loop, 4)
caller("other attr", with_other_then_bare, "attr")
caller("other method", with_other_then_bare, "method")
caller("other raise", with_other_raise, 1)
caller("gen", lambda: list(gen_with_other()))
saved = caller("saved", with_other_raise, 0)
caller("reraise saved", lambda: (_ for _ in ()).throw(saved))
with_other_then_bare("method")
