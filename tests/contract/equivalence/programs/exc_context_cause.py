# Risk 1: exception chaining edited by the program: `__context__` and `__cause__` set to
# other exceptions, to None, to a cycle (a.__context__ = b; b.__context__ = a) and then
# raised; `__suppress_context__` toggled. The chains are printed; a cycle escapes uncaught.
import traceback


def chain(exc):
    out = []
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        out.append(
            f"{type(exc).__name__}({exc}) cause={type(exc.__cause__).__name__}"
            f" context={type(exc.__context__).__name__} suppress={exc.__suppress_context__}"
        )
        exc = exc.__cause__ or exc.__context__
    return out


def show(label, exc):
    print(f"--- {label}")
    for line in chain(exc):
        print("  ", line)
    print("".join(traceback.format_exception(exc)), end="")


def context_to_other():
    try:
        raise ValueError("first")
    except ValueError:
        err = KeyError("second")
        err.__context__ = OSError("planted")
        raise err  # noqa: B904


def context_to_none():
    try:
        raise ValueError("first")
    except ValueError as e:
        try:
            raise KeyError("second")
        except KeyError as k:
            k.__context__ = None
            raise
        finally:
            print("context_to_none finally, e is", type(e).__name__)


def cause_to_other(flag):
    try:
        raise ValueError("first")
    except ValueError as e:
        err = RuntimeError("with cause")
        err.__cause__ = e if flag else TypeError("other cause")
        raise err from err.__cause__


def cause_to_none_later():
    try:
        try:
            raise ValueError("inner")
        except ValueError as e:
            raise RuntimeError("outer") from e
    except RuntimeError as r:
        r.__cause__ = None
        r.__suppress_context__ = False
        raise


def suppress_toggle(n):
    for i in range(n):
        try:
            try:
                raise ValueError(i)
            except ValueError:
                raise KeyError(i) from None
        except KeyError as k:
            k.__suppress_context__ = bool(i % 2)
            if i == n - 1:
                raise


def make_cycle():
    a = ValueError("a")
    b = KeyError("b")
    a.__context__ = b
    b.__context__ = a
    return a, b


def raise_cycle():
    a, _ = make_cycle()
    raise a


def raise_cycle_in_handler():
    a, b = make_cycle()
    try:
        raise b
    except KeyError:
        raise a from None


def caller(label, fn, *args):
    try:
        fn(*args)
    except Exception as e:
        show(label, e)
    else:
        print("---", label, "no exception")


caller("context_to_other", context_to_other)
caller("context_to_none", context_to_none)
caller("cause_to_other True", cause_to_other, True)
caller("cause_to_other False", cause_to_other, False)
caller("cause_to_none_later", cause_to_none_later)
caller("suppress_toggle 3", suppress_toggle, 3)
caller("suppress_toggle 4", suppress_toggle, 4)
caller("raise_cycle", raise_cycle)
caller("raise_cycle_in_handler", raise_cycle_in_handler)
raise_cycle()
