# Risk 6: `os._exit(n)` from the main thread, deep in a function inside try/finally and
# with a pending atexit handler: flushed output survives, nothing after it runs (no
# finally, no atexit, no unflushed buffer), and the status is n.
# case: 7
# case: 0
import atexit
import os
import sys


def never(label):
    print("atexit must not run", label)


def bail(code, depth):
    if depth:
        try:
            bail(code, depth - 1)
        finally:
            print("finally must not run", depth)
    for i in range(3):
        if i == 2:
            print("about to os._exit", code, flush=True)
            sys.stderr.write("stderr before os._exit\n")
            sys.stderr.flush()
            print("unflushed line, lost")
            os._exit(code)


atexit.register(never, "handler")
print("main starts", flush=True)
bail(int(sys.argv[1]), 2)
