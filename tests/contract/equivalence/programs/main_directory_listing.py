# Risk 5: the script's own directory (the current directory here) as the program sees it,
# at start and again from an atexit handler: running it must not add files next to it
# (no __pycache__, no data file) that plain `python script.py` would not create. The
# handler also reports which dunder globals the main module still has after the script
# ended (CPython removes __file__ and __cached__ then), and whether the module is still
# sys.modules["__main__"].
import atexit
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
MAIN = sys.modules[__name__]


def listing(when):
    names = sorted(os.listdir(HERE))
    print(when, names, flush=True)
    dunders = sorted(k for k in globals() if k.startswith("__"))
    print(when, "dunders:", dunders, flush=True)
    print(when, "still __main__:", sys.modules.get("__main__") is MAIN, flush=True)


listing("at start:")
atexit.register(listing, "at exit:")
