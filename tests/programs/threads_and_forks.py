"""Run by tests/test_processes.py under `pathprof run`: threads, fork, multiprocessing."""

import multiprocessing
import os
import sys
import threading


def step(i):
    if i % 3 == 0:
        return 0
    if i % 3 == 1:
        return 1
    return 2


def hammer(n):
    total = 0
    for i in range(n):
        total += step(i)
    return total


def threads(count, n):
    sys.setswitchinterval(1e-6)
    workers = [threading.Thread(target=hammer, args=(n,)) for _ in range(count)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()


def child_work(n):
    return hammer(n)


def forked(n):
    pid = os.fork()
    if pid == 0:
        hammer(n)
        os._exit(0)
    os.waitpid(pid, 0)


def pool(n):
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(2) as p:
        p.map(child_work, [n, n])


if __name__ == "__main__":
    kind, n = sys.argv[1], int(sys.argv[2])
    if kind == "threads":
        threads(8, n)
    elif kind == "fork":
        hammer(n)  # counted in the parent before the fork: must not be doubled
        forked(n)
    elif kind == "pool":
        pool(n)
