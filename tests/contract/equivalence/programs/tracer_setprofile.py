# Risk 4: `sys.setprofile` recording call/return events of the program's own functions,
# and the C functions they call (c_call / c_return / c_exception, with the builtin's
# name): instrumented code must not add or remove any call a profiler can see.
import sys

THIS_FILE = sys._getframe().f_code.co_filename
events = []


def profiler(frame, event, arg):
    code = frame.f_code
    if code.co_filename != THIS_FILE or code.co_name == "profiler":
        return
    if event.startswith("c_"):
        events.append((code.co_name, event, getattr(arg, "__name__", "?")))
    elif event == "return":
        ret = arg if isinstance(arg, (int, str, type(None))) else type(arg).__name__
        events.append((code.co_name, event, frame.f_lineno - code.co_firstlineno, ret))
    else:
        events.append((code.co_name, event, frame.f_lineno - code.co_firstlineno))


def leaf(values):
    if not values:
        return 0
    return max(values) - min(values)


def raises(n):
    try:
        int("x" * n)
    except ValueError:
        return -n
    return n


def gen(n):
    for i in range(n):
        yield len(str(i))


def middle(n):
    total = 0
    for i in range(n):
        if i % 3 == 0:
            total += leaf([i, i * 2, 1])
        elif i % 3 == 1:
            total += raises(i)
        else:
            total += sum(gen(i))
    return total


class Thing:
    def __init__(self, v):
        self.v = v

    def method(self):
        return abs(self.v)


def run():
    r = middle(6)
    t = Thing(-3)
    return r + t.method() + len(sorted({3: 1, 1: 2}))


print("getprofile before:", sys.getprofile())
sys.setprofile(profiler)
result = run()
sys.setprofile(None)
print("result", result)
for e in events:
    print(e)
