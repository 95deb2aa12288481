# Risk 5: the main module as Python makes it, for a script without annotations and
# without a docstring: dir(), globals, __file__, __name__, __spec__, __loader__,
# __builtins__, __doc__, sys.argv, sys.path, sys.modules["__main__"], pickling by
# reference to __main__. Run with arguments, some of which look like pathprof options.
# case:
# case: --mode edge -m --data-file x.data -- plain
import os
import pickle
import sys

import __main__


def probe(x):
    if x:
        return sorted(k for k in globals() if not k.startswith("_") or k.startswith("__"))
    return None


class Point:
    def __init__(self, x, y):
        self.x, self.y = x, y

    def __eq__(self, other):
        return (self.x, self.y) == (other.x, other.y)


print("annotations in dir():", "__annotations__" in dir())
print("dir():", dir())
print("globals:", probe(True))
print("__name__:", __name__)
print("__file__:", os.path.basename(__file__), os.path.isabs(__file__))
print("__spec__:", type(__spec__).__name__)
print("__loader__:", type(__loader__).__name__, getattr(__loader__, "name", None))
print("__builtins__:", type(__builtins__).__name__)
print("__package__:", __package__)
print("__cached__ defined:", "__cached__" in globals())
print("__doc__:", __doc__)
print("sys.argv:", sys.argv)
print("sys.path[0]:", os.path.basename(sys.path[0]), os.path.isabs(sys.path[0]))
print("sys.path[1:]:", sys.path[1:])
print("main is module:", sys.modules["__main__"] is __main__, __main__.__dict__ is globals())
print("probe module:", probe.__module__, Point.__module__, Point.__qualname__)
print("pickle:", pickle.loads(pickle.dumps(Point(1, 2))) == Point(1, 2))
print("pickle fn:", pickle.loads(pickle.dumps(probe)) is probe)
