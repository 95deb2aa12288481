"""A small program for the end-to-end tests: run by `pathprof run`, never imported."""

import sys

import helper


def classify(n):
    if n < 0:
        return "neg"
    elif n == 0:
        return "zero"
    return "pos"


def main(count):
    out = [classify(i % 7 - 2) for i in range(count)]
    print(helper.total([1, 2, 3, 4]), out.count("pos"))
    if "--fail" in sys.argv:
        helper.explode()
    if "--exit" in sys.argv:
        sys.exit(3)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 1000)
