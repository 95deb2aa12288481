# Risk 4: a tracer that changes `frame.f_lineno` (as a debugger's "jump" does): skipping a
# statement forward, jumping back to repeat one, out of a finally clause, and a jump
# Python refuses (into a loop body) whose ValueError message the tracer prints.
import sys

THIS_FILE = sys._getframe().f_code.co_filename
PLAN = {}
log = []


def tracer(frame, event, arg):
    code = frame.f_code
    if code.co_filename != THIS_FILE or code.co_name == "tracer":
        return None
    if event == "line":
        rel = frame.f_lineno - code.co_firstlineno
        target = PLAN.get((code.co_name, rel))
        if target is not None:
            PLAN.pop((code.co_name, rel))
            try:
                frame.f_lineno = code.co_firstlineno + target
                log.append((code.co_name, rel, "->", target))
            except ValueError as exc:
                log.append((code.co_name, rel, "refused", target, str(exc)))
    return tracer


def skip_forward(x):
    x += 1
    x *= 10
    x -= 3
    return x


def repeat_back(x):
    x += 1
    x *= 2
    return x


def into_loop(n):
    total = 0
    for i in range(n):
        total += i
    return total


def out_of_finally(x):
    try:
        x += 1
    finally:
        x *= 2
    x += 100
    return x


def run():
    PLAN[("skip_forward", 2)] = 3
    PLAN[("repeat_back", 2)] = 1
    PLAN[("into_loop", 1)] = 3
    PLAN[("out_of_finally", 4)] = 6
    sys.settrace(tracer)
    results = [skip_forward(1), repeat_back(1), into_loop(4), out_of_finally(1)]
    sys.settrace(None)
    return results


print("results:", run())
for entry in log:
    print(entry)
