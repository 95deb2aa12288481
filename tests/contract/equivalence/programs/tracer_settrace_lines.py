# Risk 4: a program that installs its own `sys.settrace` and records the events of its own
# functions (line numbers relative to the function, call/return values, exceptions,
# local names at return): if/else, loops, try/except/finally, with, early returns, a
# parameter named `vars`, `sys._getframe()` and `locals()`, a generator and a closure.
import sys

THIS_FILE = sys._getframe().f_code.co_filename
events = []


def tracer(frame, event, arg):
    code = frame.f_code
    if code.co_filename != THIS_FILE or code.co_name in ("tracer", "local_tracer", "show"):
        return None
    return local_tracer(frame, event, arg)


def show(value):
    if isinstance(value, (int, str, tuple, list, type(None))):
        return repr(value)
    return type(value).__name__


def local_tracer(frame, event, arg):
    code = frame.f_code
    rel = frame.f_lineno - code.co_firstlineno
    if event == "return":
        events.append((code.co_name, event, rel, show(arg), sorted(frame.f_locals)))
    elif event == "exception":
        events.append((code.co_name, event, rel, arg[0].__name__))
    else:
        events.append((code.co_name, event, rel))
    return local_tracer


def branches(x):
    if x > 10:
        kind = "big"
    elif x > 5:
        kind = "medium"
    else:
        kind = "small"
    return kind


def loops(n):
    total = 0
    for i in range(n):
        if i == 1:
            continue
        if i == 4:
            break
        total += i
    else:
        total = -1
    j = 0
    while j < 3:
        j += 1
    return total + j


def trying(k):
    try:
        if k == 0:
            raise ValueError("zero")
        result = 10 // (k - 1)
    except ValueError:
        result = -1
    except ZeroDivisionError:
        return "div"
    else:
        result += 1
    finally:
        k += 100
    return result


class CM:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return exc[0] is KeyError


def with_block(flag):
    with CM() as cm:
        if flag:
            raise KeyError("swallowed")
        value = cm is not None
    return flag or value


def early(x):
    if x < 0:
        return "negative"
    if x == 0:
        return "zero"
    for i in range(x):
        if i * i > x:
            return i
    return None


def takes_vars(vars, *args, **kwargs):
    count = len(vars)
    if args:
        count += len(args)
    return count + len(kwargs)


def uses_frame(a):
    f = sys._getframe()
    names = (f.f_code.co_name, f.f_back.f_code.co_name, f.f_lineno - f.f_code.co_firstlineno)
    return names, sorted(f.f_locals)


def uses_locals(a, b=2):
    c = a + b
    snapshot = locals()
    d = c * 2
    return sorted(snapshot), sorted(locals()), d


def gen(n):
    for i in range(n):
        if i % 2:
            yield i
    return "end"


def closure(x):
    def inner(y):
        return x + y

    return inner(1)


def run():
    for x in (0, 7, 12):
        branches(x)
    loops(3)
    loops(6)
    for k in (0, 1, 2):
        trying(k)
    with_block(True)
    with_block(False)
    for x in (-1, 0, 9):
        early(x)
    takes_vars([1, 2], 3, z=4)
    uses_frame(1)
    uses_locals(1)
    list(gen(4))
    closure(5)


print("gettrace before:", sys.gettrace())
sys.settrace(tracer)
run()
sys.settrace(None)
for e in events:
    print(e)
print("direct:", uses_frame(2), uses_locals(3))
