# Risk 5: the main module as Python makes it, for a script with a docstring and with
# module-level annotations: dir(), __annotations__, __doc__, dataclasses and
# typing.get_type_hints resolving names through sys.modules["__main__"].
"""The docstring of the annotated main module."""

import dataclasses
import os
import sys
import typing

LIMIT: int = 3
label: str
ratio: "float" = 0.5


@dataclasses.dataclass
class Item:
    name: str
    count: int = 0
    tags: list = dataclasses.field(default_factory=list)

    def bump(self, by: int = 1) -> "Item":
        if by > LIMIT:
            by = LIMIT
        return dataclasses.replace(self, count=self.count + by)


class Typed(typing.NamedTuple):
    a: int
    b: "Item"


def hints(obj) -> dict:
    return {k: getattr(v, "__name__", repr(v)) for k, v in typing.get_type_hints(obj).items()}


print("annotations in dir():", "__annotations__" in dir())
print("dir():", dir())
module_annotations = sys.modules[__name__].__annotations__
print("__annotations__:", {k: getattr(v, "__name__", v) for k, v in module_annotations.items()})
print("__doc__:", __doc__)
print("__name__:", __name__, os.path.basename(__file__))
print("__spec__:", type(__spec__).__name__, "__loader__:", type(__loader__).__name__)
print("__builtins__:", type(__builtins__).__name__)
print("sys.argv:", sys.argv, "sys.path[0]:", os.path.basename(sys.path[0]))
print("item:", Item("x").bump(5), Item("y", 1).bump())
print("fields:", [f.name for f in dataclasses.fields(Item)])
print("hints Item:", hints(Item), "bump:", hints(Item.bump))
print("hints module:", hints(sys.modules[__name__]))
print("typed:", Typed(1, Item("z")), Typed.__annotations__.keys() == {"a", "b"})
