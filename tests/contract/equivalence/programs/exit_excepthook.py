# Risk 6: an uncaught exception handled by a custom `sys.excepthook` (which prints the
# frames it is given to stdout; the status stays 1), and a hook that itself fails
# (Python then reports both, "Error in sys.excepthook", on stderr).
# case: hook
# case: failing-hook
import sys


def hook(et, ev, tb):
    print("excepthook:", et.__name__, ev)
    while tb is not None:
        code = tb.tb_frame.f_code
        print("  frame:", code.co_name, tb.tb_lineno, tb.tb_lineno - code.co_firstlineno)
        tb = tb.tb_next
    print("excepthook sees sys.exc_info():", sys.exc_info()[0])
    if sys.argv[1] == "failing-hook":
        raise RuntimeError("the hook failed too")


def work(items):
    total = 0
    for item in items:
        try:
            total += 10 // item
        except ZeroDivisionError:
            total -= 1
        finally:
            total += 0
    if total > 5:
        raise LookupError(f"total {total}")
    return total


sys.excepthook = hook
print("work:", work([0, 5]))
work([1, 0, 2])
