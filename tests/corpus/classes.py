"""Methods of every kind, recursion, decorators, nested classes."""

import functools


def traced(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if kwargs.get("skip"):
            return None
        return fn(*args)
    return wrapper


class Shape:
    registry = []

    def __init__(self, sides):
        self.sides = sides
        if sides > 2:
            Shape.registry.append(self)

    @property
    def kind(self):
        if self.sides == 3:
            return "triangle"
        return "polygon" if self.sides > 4 else "quad"

    @classmethod
    def make(cls, sides):
        return cls(sides) if sides > 0 else None

    @staticmethod
    def valid(sides):
        return sides >= 3

    def __eq__(self, other):
        if not isinstance(other, Shape):
            return NotImplemented
        return self.sides == other.sides

    __hash__ = None

    class Meta:
        def label(self, n):
            for i in range(n):
                if i == 2:
                    return i
            return -1


class Square(Shape):
    def __init__(self):
        super().__init__(4)

    @traced
    def area(self, side):
        return side * side


def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


def is_even(n):
    return True if n == 0 else is_odd(n - 1)


def is_odd(n):
    return False if n == 0 else is_even(n - 1)


def deep(n):
    if n == 0:
        return 0
    return 1 + deep(n - 1)


def drive():
    shapes = [Shape.make(n) for n in (0, 3, 5, 4)]
    out = [s.kind for s in shapes if s is not None]
    out.append(Shape.valid(2))
    out.append(Shape(3) == Shape(3))
    out.append(Shape(3) == 3)
    sq = Square()
    out.append(sq.area(3))
    out.append(sq.area(3, skip=True))
    out.append(Shape.Meta().label(5))
    out.append(Shape.Meta().label(1))
    out.append(fib(10))
    out.append(is_even(7))
    out.append(deep(500))
    return out
