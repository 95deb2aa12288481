# Risk 6: KeyboardInterrupt raised by the program itself and left uncaught (Python prints
# the traceback and dies of SIGINT: status -2 / 130, even when SIGINT was ignored at
# start), raised from a nested function through finally and with blocks; an earlier one
# is caught. The program also reports the SIGINT handler it found at start.
# case:
# case-sigint-ignored:
import contextlib
import signal


def interrupt(depth):
    if depth:
        try:
            interrupt(depth - 1)
        finally:
            print("finally", depth, flush=True)
    raise KeyboardInterrupt("by the program")


def caught_once():
    try:
        interrupt(1)
    except KeyboardInterrupt as e:
        print("caught", repr(e), flush=True)


handler = signal.getsignal(signal.SIGINT)
print("SIGINT handler at start:", getattr(handler, "__name__", handler), flush=True)
caught_once()
with contextlib.suppress(ValueError):
    interrupt(2)
