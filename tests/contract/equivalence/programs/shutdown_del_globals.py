# Risk 2: code that runs while the interpreter shuts down: objects with `__del__` kept in
# module globals and collected at exit run measured methods: one whose body is only a
# docstring, and one that calls other methods and module-level functions and reads module
# globals, writing with sys.stdout.write and os.write(1, ...). Only one finalizer writes
# (the order in which the garbage collector finalizes several objects is its own affair).
import os
import sys

PREFIX = "del"
COUNTS = {"calls": 0}
SEEN = []


def describe(name, depth):
    COUNTS["calls"] += 1
    if depth > 0:
        return describe(name, depth - 1) + "."
    return f"{PREFIX}:{name}"


def classify(values):
    out = []
    for v in values:
        if v is None:
            out.append("none")
        elif isinstance(v, str):
            out.append("str")
        else:
            out.append(type(v).__name__)
    return out


class DocOnly:
    def __del__(self):
        """Nothing but a docstring: this finalizer does nothing."""


class Reporter:
    def __init__(self, name, parts):
        self.name = name
        self.parts = parts

    def summary(self):
        return describe(self.name, len(self.parts)) + f" calls={COUNTS['calls']}"

    def __del__(self, _write=os.write):
        try:
            sys.stdout.write(self.summary() + "\n")
            sys.stdout.write(f"globals seen: {classify([PREFIX, describe, SEEN, DocOnly])}\n")
            sys.stdout.flush()
            _write(1, f"via os.write: parts={self.parts} seen={SEEN}\n".encode())
        except BaseException as exc:
            _write(1, f"Reporter failed: {type(exc).__name__}: {exc}\n".encode())


doc_only = DocOnly()
reporter = Reporter("global", ["a", "b"])
SEEN.append(describe("main", 1))
os.write(1, b"os.write from main\n")
print("main done", flush=True)
