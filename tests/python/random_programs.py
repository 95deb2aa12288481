"""Random Python functions for property tests: nested loops, try, with, match.

:func:`functions` draws the source of a module that defines ``f(c, n)``: every
decision of ``f`` asks ``c()`` (a tape of booleans, False once it runs out) or
reads ``n`` (the length of every ``for`` loop), so a test can run it on many
inputs and every run ends: ``while`` loops stop when the tape runs out, ``for``
loops after ``n`` steps. Every statement sits on a line of its own, so line
events tell every branch apart.

What the grammar draws: assignments; ``yield`` (then ``f`` is a generator, which
a test may consume in part and close); ``if``/``elif``/``else``; ``while`` (with
``else``), ``while True`` left by ``break``, ``for`` (with ``else``); ``try`` with
matching and non-matching ``except`` clauses, ``else`` and ``finally``; ``with``
whose ``__exit__`` may swallow the exception; ``match`` with guards; ``raise``
of two exception types and bare ``raise`` in handlers; ``break``, ``continue``
and ``return`` anywhere they are legal (not inside ``finally``, which Python
3.14 warns about).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from hypothesis import strategies as st

PRELUDE = '''\
class Boom(Exception):
    pass


class Other(Exception):
    pass


class Gate:
    def __init__(self, c):
        self.c = c

    def __enter__(self):
        return self

    def __exit__(self, kind, value, traceback):
        return kind is Boom and self.c()


def pick(c):
    return 2 * c() + c()

'''


@dataclass
class _Writer:
    draw: st.DrawFn
    max_depth: int
    generator: bool = False
    lines: list[str] = field(default_factory=list)
    budget: int = 40  # statements left to draw

    def emit(self, indent: int, text: str) -> None:
        self.lines.append("    " * indent + text)

    def choice(self, options: list[str]) -> str:
        return self.draw(st.sampled_from(options))

    def flag(self) -> bool:
        return self.draw(st.booleans())

    def test(self) -> str:
        """A decision's test: mostly one call of ``c``, sometimes several joined by
        ``and``/``or``/``not`` (conditions for issue 39). Each is false once the tape
        has run out, so a ``while`` on it still stops."""
        return self.choice(["c()", "c()", "c()", "c() and c()", "c() or c()",
                            "not c() and (c() or c())", "(c() or c()) and not c()"])

    def block(self, indent: int, depth: int, *, loop: bool, handler: bool,
              in_finally: bool) -> None:
        """A statement list of one to three statements."""
        count = self.draw(st.integers(min_value=1, max_value=3))
        for position in range(count):
            last = position == count - 1
            if not self.statement(indent, depth, loop=loop, handler=handler,
                                  in_finally=in_finally, last=last):
                return  # control never falls through: the rest would be dead code

    def statement(self, indent: int, depth: int, *, loop: bool, handler: bool,
                  in_finally: bool, last: bool) -> bool:
        """Emit one statement; return whether control can fall through it."""
        self.budget -= 1
        kinds = ["assign", "assign"]
        if self.generator:
            kinds.append("yield")
        if depth < self.max_depth and self.budget > 0:
            kinds += ["if", "while", "while-true", "for", "try", "with", "match", "raise"]
        if handler:
            kinds.append("reraise")
        if last and not in_finally:
            kinds.append("return")
            if loop:
                kinds += ["break", "continue"]
        kind = self.choice(kinds)
        inner = {"handler": handler, "in_finally": in_finally}
        if kind == "assign":
            self.emit(indent, "x += 1")
        elif kind == "yield":
            self.emit(indent, "yield x")
        elif kind == "return":
            self.emit(indent, "return x")
            return False
        elif kind in ("break", "continue"):
            self.emit(indent, kind)
            return False
        elif kind == "reraise":
            self.emit(indent, "if c():")
            self.emit(indent + 1, "raise")
        elif kind == "raise":
            self.emit(indent, "if c():")
            self.emit(indent + 1, f"raise {self.choice(['Boom', 'Other'])}()")
        elif kind == "if":
            self.emit(indent, f"if {self.test()}:")
            self.block(indent + 1, depth + 1, loop=loop, **inner)
            for _ in range(self.draw(st.integers(min_value=0, max_value=1))):
                self.emit(indent, f"elif {self.test()}:")
                self.block(indent + 1, depth + 1, loop=loop, **inner)
            if self.flag():
                self.emit(indent, "else:")
                self.block(indent + 1, depth + 1, loop=loop, **inner)
        elif kind in ("while", "for"):
            self.emit(indent, f"while {self.test()}:" if kind == "while"
                      else "for i in range(n):")
            self.block(indent + 1, depth + 1, loop=True, handler=handler, in_finally=False)
            if self.flag():
                self.emit(indent, "else:")
                self.block(indent + 1, depth + 1, loop=loop, **inner)
        elif kind == "while-true":
            self.emit(indent, "while True:")
            self.emit(indent + 1, "if not c():")
            self.emit(indent + 2, "break")
            self.block(indent + 1, depth + 1, loop=True, handler=handler, in_finally=False)
        elif kind == "try":
            self.try_statement(indent, depth, loop=loop, **inner)
        elif kind == "with":
            self.emit(indent, "with Gate(c):")
            self.block(indent + 1, depth + 1, loop=loop, **inner)
        elif kind == "match":
            self.emit(indent, "match pick(c):")
            self.emit(indent + 1, "case 0:")
            self.block(indent + 2, depth + 1, loop=loop, **inner)
            self.emit(indent + 1, f"case 1 if {self.test()}:")
            self.block(indent + 2, depth + 1, loop=loop, **inner)
            if self.flag():
                self.emit(indent + 1, "case _:")
                self.block(indent + 2, depth + 1, loop=loop, **inner)
        return True

    def try_statement(self, indent: int, depth: int, *, loop: bool, handler: bool,
                      in_finally: bool) -> None:
        self.emit(indent, "try:")
        self.block(indent + 1, depth + 1, loop=loop, handler=handler, in_finally=in_finally)
        clauses = self.draw(st.lists(
            st.sampled_from(["Boom", "Other", "(Other, Boom)", "Exception", "KeyError"]),
            max_size=3, unique=True))
        for clause in clauses:
            self.emit(indent, f"except {clause}:")
            self.block(indent + 1, depth + 1, loop=loop, handler=True, in_finally=in_finally)
        if clauses and self.flag():
            self.emit(indent, "else:")
            self.block(indent + 1, depth + 1, loop=loop, handler=handler, in_finally=in_finally)
        if not clauses or self.flag():
            self.emit(indent, "finally:")
            self.block(indent + 1, depth + 1, loop=loop, handler=handler, in_finally=True)


@st.composite
def functions(draw: st.DrawFn, max_depth: int = 3, generators: bool = True) -> str:
    """The source of a module defining ``f(c, n)`` (and its helpers); with
    ``generators``, ``f`` may be a generator (``yield x`` among the statements,
    always at least one)."""
    generator = generators and draw(st.booleans())
    writer = _Writer(draw, max_depth, generator=generator)
    writer.emit(0, "def f(c, n):")
    writer.emit(1, "x = 0")
    if generator:
        writer.emit(1, "yield x")
    writer.block(1, 0, loop=False, handler=False, in_finally=False)
    writer.emit(1, "return x")
    return PRELUDE + "\n".join(writer.lines) + "\n"


def tape(seed: int, length: int = 30) -> Callable[[], bool]:
    """A decision source: ``length`` random booleans, then False for ever."""
    rng = random.Random(seed)
    bits: Iterator[bool] = iter([rng.random() < 0.5 for _ in range(length)])
    return lambda: next(bits, False)
