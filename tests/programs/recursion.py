"""Run by tests/test_processes.py: recursion to near the limit, and past it."""

import sys


def down(n):
    if n == 0:
        return 0
    return 1 + down(n - 1)

def forever(n):
    return forever(n + 1)

def main():
    print(down(sys.getrecursionlimit() - 60))
    try:
        forever(0)
    except RecursionError as e:
        print("caught", type(e.__context__).__name__ if e.__context__ else None)
    print(down(200))
main()
