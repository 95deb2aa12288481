# requires Python 3.14
"""Python 3.14's syntax: template strings (PEP 750) inside statements, ``except``
without parentheses (PEP 758), ``return`` in ``finally`` (PEP 765, a SyntaxWarning;
finallies.py has a ``continue`` there), and deferred annotations (PEP 649/749: the
compiler's ``__annotate__`` functions are not the program's paths)."""

import annotationlib
from string.templatelib import Interpolation, Template

# Per function: (path executions, sorted path counts), counted by hand from drive().
# A call's first path runs from the entry through its first iteration (only back
# edges, exits and exceptions end paths).
EXPECTED = {
    # 3 calls, two templates of 3 items ("hi ", the name, "!") and one of 1: the
    # entry and a str first item (3); an Interpolation from the header (2); a str
    # from the header (2, the "!"s); 3 exhaustions.
    "render": (10, [2, 2, 3, 3]),
    # names ["ann", "", "bo"]: entry and a truthy name; a falsy one; a truthy one;
    # the exhaustion.
    "greet": (4, [1, 1, 1, 1]),
    # ["1", "x", None, "2"]: entry and an int; "x" and None raise in the try (the
    # same block: 2) and each starts a handler path (2); "2" from the header; the
    # exhaustion.
    "parse": (7, [1, 1, 1, 2, 2]),
    # False: one path through both returns; True: the raise ends a path, the
    # finally starts one that returns.
    "swallow": (3, [1, 1, 1]),
    # One path per call; no __annotate__ function appears.
    "annotated": (1, [1]),
    "Config.resize": (2, [1, 1]),
}


def render(template: Template) -> str:
    parts = []
    for item in template:
        if isinstance(item, Interpolation):
            parts.append(str(item.value).upper())
        else:
            parts.append(item)
    return "".join(parts)


def greet(names):
    out = []
    for name in names:
        if t"{name}".interpolations[0].value:
            out.append(render(t"hi {name}!"))
        else:
            out.append(render(t"nobody"))
    return out


def parse(values):
    good = 0
    for value in values:
        try:
            good += int(value)
        except ValueError, TypeError:
            good -= 1
    return good


def swallow(fail):
    try:
        if fail:
            raise ValueError(fail)
        return "body"
    finally:
        return "finally"  # noqa: B012


class Config:
    name: str
    size: "int"

    def resize(self, by: int) -> "Config":
        if by:
            self.size = by
        return self


def annotated(x: int, y: list[str] = ()) -> dict[str, int]:
    return {s: x for s in y}


def drive():
    config = Config().resize(3).resize(0)
    return [
        greet(["ann", "", "bo"]),
        parse(["1", "x", None, "2"]),
        swallow(False),
        swallow(True),
        annotated(2, ["a"]),
        config.size,
        annotationlib.get_annotations(annotated),
        annotationlib.get_annotations(Config),
        annotationlib.get_annotations(Config.resize, format=annotationlib.Format.STRING),
    ]
