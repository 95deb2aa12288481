"""Reads of the event count taken everywhere: in loops, generators, handlers, with
exits, finally clauses, recursion and threads. Each read is noted with its thread."""

import threading

from pathprof.events import read

READS = []


def note(tag):
    READS.append((threading.current_thread().name, tag, read()))


def loop(n):
    total = 0
    for i in range(n):
        total += i
        if i % 2:
            note("odd")
        else:
            total -= 1
    while total > 0:
        total -= 7
        note("while")
    return total


def numbers(n):
    for i in range(n):
        note("gen before")
        yield i
        note("gen after")


def consumer():
    gen = numbers(3)
    first = next(gen)
    note("suspended")
    rest = [x for x in gen]
    return first, rest


class Guard:
    def __enter__(self):
        note("enter")
        return self

    def __exit__(self, *exc):
        note("exit")
        return exc[0] is KeyError


def handlers(kind):
    log = []
    try:
        log.append(1)
        if kind:
            raise ValueError(kind)
        log.append(2)
    except ValueError:
        note("except")
    finally:
        note("finally")
    with Guard():
        log.append(3)
        if kind:
            raise KeyError(kind)
        log.append(4)
    note("after with")
    try:
        try:
            raise IndexError(kind)
        finally:
            note("finally by exception")
    except IndexError:
        note("outer except")
    return log


def depth(n):
    if n == 0:
        note("bottom")
        return 0
    x = depth(n - 1)
    note("unwind")
    return x + 1


def worker(n):
    loop(n)
    handlers(n % 2)


def threads():
    pool = [threading.Thread(target=worker, args=(k + 3,), name=f"t{k}") for k in range(3)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()


def drive():
    loop(6)
    consumer()
    handlers(0)
    handlers(1)
    depth(4)
    threads()
    note("end")
    return len(READS)
