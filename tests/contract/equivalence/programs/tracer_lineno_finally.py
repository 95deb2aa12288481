# Risk 4: `frame.f_lineno` as a tracer sees it and as a traceback's `tb_frame` keeps it,
# after exceptions that passed through `finally` clauses of various shapes: a finally
# ending in a try/finally, a loop left by `break` inside a `with` and inside a `finally`,
# a `while` whose test spans several lines, a return overridden by an exception.
import sys

THIS_FILE = sys._getframe().f_code.co_filename
events = []


def tracer(frame, event, arg):
    if frame.f_code.co_filename != THIS_FILE or frame.f_code.co_name == "tracer":
        return None
    rel = frame.f_lineno - frame.f_code.co_firstlineno
    if event == "exception":
        events.append((frame.f_code.co_name, event, rel, arg[0].__name__))
    else:
        events.append((frame.f_code.co_name, event, rel))
    return tracer


class CM:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def finally_ends_in_try_finally(x):
    try:
        raise ValueError(x)
    finally:
        x += 1
        try:
            x += 2
        finally:
            x += 3


def break_in_with_then_raise(n):
    for i in range(n):
        with CM():
            if i == 2:
                break
    raise KeyError(i)


def break_in_finally(n):
    i = 0
    for i in range(n):
        try:
            if i == 1:
                raise OSError(i)
        finally:
            if i == 1:
                break  # noqa: B012
    raise IndexError(i)


def multiline_while(n):
    i = 0
    while (i < n
           and i != 7
           and n > 0):
        try:
            i += 1
            if i == 3:
                raise TypeError(i)
        finally:
            i += 0


def return_overridden(flag):
    try:
        return "from try"
    finally:
        if flag:
            raise LookupError("finally beats return")


def nested_loops_finally(n):
    for i in range(n):
        for j in range(n):
            try:
                if i == j == 1:
                    raise ZeroDivisionError
                continue
            finally:
                i += 0
    return n


def tb_report(exc):
    out = []
    tb = exc.__traceback__
    while tb is not None:
        f = tb.tb_frame
        first = f.f_code.co_firstlineno
        out.append((f.f_code.co_name, tb.tb_lineno - first, f.f_lineno - first, tb.tb_lasti >= 0))
        tb = tb.tb_next
    return out


def run(fn, *args):
    sys.settrace(tracer)
    try:
        fn(*args)
    except Exception as e:
        sys.settrace(None)
        print(fn.__name__, type(e).__name__, tb_report(e)[1:])
    else:
        sys.settrace(None)
        print(fn.__name__, "returned")
    for ev in events:
        print("   ", ev)
    events.clear()


run(finally_ends_in_try_finally, 1)
run(break_in_with_then_raise, 4)
run(break_in_finally, 3)
run(multiline_while, 5)
run(return_overridden, True)
run(return_overridden, False)
run(nested_loops_finally, 3)
