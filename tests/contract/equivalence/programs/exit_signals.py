# Risk 6: signals the program sends itself: a Python handler (which sees the interrupted
# frame and its line), SIGINT with Python's default handler (KeyboardInterrupt, caught or
# not: status -2), SIGINT ignored from the start (nothing happens), SIGTERM with the
# default action (status -15), and a handler that raises SystemExit (status from it).
# case: handler
# case: sigint-caught
# case: sigint-uncaught
# case: sigterm
# case: handler-exits
# case-sigint-ignored: sigint-uncaught
import os
import signal
import sys

seen = []


def handler(signum, frame):
    code = frame.f_code
    seen.append((signal.Signals(signum).name, code.co_name, frame.f_lineno - code.co_firstlineno))
    if sys.argv[1] == "handler-exits":
        print("handler exits:", seen, flush=True)
        sys.exit(9)


def send(sig, rounds):
    total = 0
    for i in range(rounds):
        if i == 2:
            os.kill(os.getpid(), sig)
        total += i
    return total


def run(case):
    handlers = [signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGUSR1)]
    print("handlers at start:", [getattr(h, "__name__", h) for h in handlers], flush=True)
    if case in ("handler", "handler-exits"):
        signal.signal(signal.SIGUSR1, handler)
        print("sum", send(signal.SIGUSR1, 4), "seen", seen)
        print("sum", send(signal.SIGUSR1, 3), "seen", seen)
    elif case == "sigint-caught":
        try:
            send(signal.SIGINT, 5)
        except KeyboardInterrupt as e:
            tb = e.__traceback__
            lines = []
            while tb is not None:
                lines.append((tb.tb_frame.f_code.co_name, tb.tb_lineno))
                tb = tb.tb_next
            print("KeyboardInterrupt caught at", lines)
    elif case == "sigint-uncaught":
        print("sending SIGINT", flush=True)
        send(signal.SIGINT, 5)
    elif case == "sigterm":
        print("sending SIGTERM", flush=True)
        send(signal.SIGTERM, 5)
        print("not reached")


run(sys.argv[1])
print("end of", sys.argv[1])
