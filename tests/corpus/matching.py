"""match statements: literals, sequences, mappings, classes, guards."""

from dataclasses import dataclass


@dataclass
class Point:
    x: int
    y: int


def describe(value):
    match value:
        case 0 | 1:
            return "bit"
        case int(n) if n < 0:
            return "negative"
        case int():
            return "int"
        case [x, y]:
            return f"pair {x} {y}"
        case [x, *rest] if len(rest) > 2:
            return "long"
        case {"kind": kind, **extra}:
            return f"dict {kind} {len(extra)}"
        case Point(x=0, y=y):
            return f"on y axis {y}"
        case Point(x, y) if x == y:
            return "diagonal"
        case str() as s:
            return s.upper()
    return "unknown"


def no_default(value):
    label = "?"
    match value:
        case 1:
            label = "one"
        case 2:
            label = "two"
    return label


def ends_in_a_match(value, seen):
    # No case matches some values: the function's last statement does nothing.
    match value:
        case 1:
            seen.append("one")
        case [a, b]:
            seen.append(a + b)


def ends_in_a_guard(value, seen):
    match value:
        case int(n) if n > 3:
            seen.append(n)


def drive():
    values = [0, 1, -5, 7, [1, 2], [1, 2, 3, 4], [1, 2, 3], {"kind": "k", "a": 1},
              Point(0, 3), Point(2, 2), Point(1, 2), "abc", 2.5]
    seen = []
    for v in (1, "x", [1, 2], 3, 5, 2.5):
        ends_in_a_match(v, seen)
        ends_in_a_guard(v, seen)
    return [describe(v) for v in values] + [no_default(v) for v in (1, 2, 3)] + seen
