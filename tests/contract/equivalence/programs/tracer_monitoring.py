# Risk 4: on Python 3.12+, `sys.monitoring` LINE, PY_START, PY_RETURN, RAISE and
# EXCEPTION_HANDLED events of the program's own functions (line numbers relative to
# the function). On 3.11, which has no sys.monitoring, it prints a fixed line instead.
import sys

THIS_FILE = sys._getframe().f_code.co_filename
events = []


def line_of(code, offset):
    for start, end, line in code.co_lines():
        if start <= offset < end:
            return None if line is None else line - code.co_firstlineno
    return None


def classify(n):
    if n < 0:
        return "neg"
    kinds = []
    for i in range(n):
        if i % 3 == 0:
            kinds.append("fizz")
        elif i % 3 == 1:
            continue
        else:
            kinds.append(str(i))
    return ",".join(kinds)


def guarded(x):
    try:
        if x == 2:
            raise ValueError(x)
        return x * 2
    except ValueError:
        return -1
    finally:
        x = None


def gen(n):
    i = 0
    while i < n:
        yield i
        i += 1


def workload():
    out = [classify(-1), classify(5)]
    out += [guarded(x) for x in (1, 2)]
    out.append(sum(gen(3)))
    return out


def main():
    mon = getattr(sys, "monitoring", None)
    if mon is None:
        print("sys.monitoring: not available")
        print("workload:", workload())
        return
    tool = mon.PROFILER_ID
    mon.use_tool_id(tool, "equivalence-test")
    E = mon.events

    def own(code):
        return code.co_filename == THIS_FILE and code.co_name not in ("main", "own")

    def on_line(code, line):
        if own(code):
            events.append((code.co_name, "line", line - code.co_firstlineno))

    def on_start(code, offset):
        if own(code):
            events.append((code.co_name, "start", line_of(code, offset)))

    def on_return(code, offset, value):
        if own(code):
            events.append((code.co_name, "return", line_of(code, offset), repr(value)))

    def on_raise(code, offset, exc):
        if own(code):
            events.append((code.co_name, "raise", line_of(code, offset), type(exc).__name__))

    def on_handled(code, offset, exc):
        if own(code):
            events.append((code.co_name, "handled", line_of(code, offset), type(exc).__name__))

    mon.register_callback(tool, E.LINE, on_line)
    mon.register_callback(tool, E.PY_START, on_start)
    mon.register_callback(tool, E.PY_RETURN, on_return)
    mon.register_callback(tool, E.RAISE, on_raise)
    mon.register_callback(tool, E.EXCEPTION_HANDLED, on_handled)
    mon.set_events(tool, E.LINE | E.PY_START | E.PY_RETURN | E.RAISE | E.EXCEPTION_HANDLED)
    try:
        result = workload()
    finally:
        mon.set_events(tool, 0)
        mon.free_tool_id(tool)
    print("sys.monitoring: available")
    print("workload:", result)
    for e in events:
        print(e)


main()
