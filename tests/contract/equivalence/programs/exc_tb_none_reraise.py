# Risk 1: a handler sets `e.__traceback__ = None` and then re-raises with a bare `raise`:
# inside a function, a loop, a generator, a `with` block, a nested function, and
# under try/finally. The tracebacks Python then builds are printed; the last one
# escapes uncaught (stderr traceback, exit status 1).
import traceback


def show(label, exc):
    print(f"--- {label}")
    print("".join(traceback.format_exception(exc)), end="")
    tb = exc.__traceback__
    while tb is not None:
        print("  tb", tb.tb_frame.f_code.co_name, tb.tb_lineno, tb.tb_frame.f_lineno)
        tb = tb.tb_next


def in_function(x):
    try:
        if x > 0:
            raise ValueError(f"in function {x}")
        return x
    except ValueError as e:
        e.__traceback__ = None
        raise


def in_loop(n):
    total = 0
    for i in range(n):
        try:
            if i % 2:
                raise KeyError(i)
            total += i
        except KeyError as e:
            e.__traceback__ = None
            if i == 3:
                raise
            total -= 1
    return total


def in_generator(n):
    for i in range(n):
        try:
            if i == 2:
                raise IndexError(i)
            yield i
        except IndexError as e:
            e.__traceback__ = None
            raise


class Manager:
    def __init__(self, name):
        self.name = name

    def __enter__(self):
        print("enter", self.name)
        return self

    def __exit__(self, et, ev, tb):
        line = None if tb is None else tb.tb_lineno
        print("exit", self.name, et and et.__name__, line)
        return False


def in_with(flag):
    with Manager("w1"):
        try:
            if flag:
                raise TypeError("in with")
        except TypeError as e:
            e.__traceback__ = None
            raise
    return "no error"


def in_nested(k):
    base = k * 2

    def inner(j):
        try:
            if j + base > 3:
                raise ZeroDivisionError(j)
        except ZeroDivisionError as e:
            e.__traceback__ = None
            raise
        return j

    return inner(k)


def under_finally(x):
    try:
        try:
            raise LookupError(x)
        except LookupError as e:
            e.__traceback__ = None
            raise
        finally:
            print("finally ran", x)
    except LookupError as e2:
        print("re-caught", e2.__traceback__ is not None)
        e2.__traceback__ = None
        raise


def caller(fn, *args):
    try:
        result = fn(*args)
    except Exception as e:
        show(fn.__name__, e)
    else:
        print("---", fn.__name__, "returned", result)


caller(in_function, 0)
caller(in_function, 1)
caller(in_loop, 2)
caller(in_loop, 5)
caller(lambda: list(in_generator(5)))
caller(in_with, False)
caller(in_with, True)
caller(in_nested, 1)
caller(in_nested, 2)
caller(under_finally, 7)
in_loop(6)
