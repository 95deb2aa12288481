"""Threads that start while counted functions run in the main thread, and run while it
keeps counting: each function's self and inclusive counts must be those of its own
thread only. Run by tests/python/test_event_threads.py under ``pathprof count``."""

import sys
import threading


def mode():
    """'one' while pathprof takes the table of the one running thread, else 'many'."""
    runtime = sys.modules.get("pathprof.runtime.events")
    if runtime is None:
        return "plain"
    return "one" if runtime._single[0] is not None else "many"


MODES = []
#: the switch interval while driving: threads switch often (the oracle's run sets a
#: long one, see tests/python/test_event_threads.py)
SWITCH = 1e-5


def work(n):
    total = 0
    for i in range(n):
        if i % 3:
            total += i
        else:
            total -= 1
    return total


def busy(rounds):
    results = []
    for k in range(rounds):
        results.append(work(k % 7 + 5))
    return len(results)


def worker(rounds, done):
    done.append(busy(rounds))


def supervise():
    MODES.append(mode())
    busy(20)
    done = []
    pool = [threading.Thread(target=worker, args=(300 + k, done)) for k in range(3)]
    for thread in pool:
        thread.start()
    MODES.append(mode())
    busy(300)  # counting in the main thread while the others count too
    for thread in pool:
        thread.join()
    return sorted(done)


def drive():
    previous = sys.getswitchinterval()
    sys.setswitchinterval(SWITCH)
    try:
        return supervise()
    finally:
        sys.setswitchinterval(previous)


if __name__ == "__main__":
    print(drive(), MODES)
