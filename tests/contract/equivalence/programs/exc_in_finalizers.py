# Risk 1: exceptions raised in `__del__`, in weakref callbacks and in `atexit` handlers
# (Python reports and ignores them). `__del__` failures go through a custom
# `sys.unraisablehook` (the default one prints an address), and so do those of a
# `weakref.finalize`; weakref and atexit callbacks are objects with a fixed repr,
# reported by Python's own hooks on stderr.
import atexit
import gc
import re
import sys
import traceback
import weakref


def hook(unraisable):
    obj = unraisable.object
    name = getattr(obj, "__qualname__", None) or re.sub(r" at 0x[0-9a-f]+", "", repr(obj))
    msg = re.sub(r" at 0x[0-9a-f]+", "", unraisable.err_msg or "")
    exc = f"{unraisable.exc_type.__name__}({unraisable.exc_value})"
    print(f"unraisable: {exc} from {name}; {msg}")
    for line in traceback.format_tb(unraisable.exc_traceback):
        print("   ", line.rstrip().replace("\n", " | "))


def helper(tag):
    if tag.startswith("k"):
        raise KeyError(tag)
    raise ValueError(tag)


class Dies:
    def __init__(self, tag):
        self.tag = tag

    def __del__(self):
        if self.tag == "quiet":
            return
        try:
            helper(self.tag)
        finally:
            print("Dies.__del__ finally", self.tag)


class Callback:
    def __init__(self, tag):
        self.tag = tag

    def __repr__(self):
        return f"Callback({self.tag!r})"

    def __call__(self, *args):
        print("callback", self.tag, len(args))
        for i in range(3):
            if i == 2:
                helper(self.tag)


class Target:
    pass


def with_hook():
    for tag in ("quiet", "k1", "v2"):
        d = Dies(tag)
        del d
    a = Dies("kcycle")
    b = Dies("quiet")
    a.other, b.other = b, a
    del a, b
    print("collected", gc.collect() > 0)


def weakref_callbacks():
    t = Target()
    r = weakref.ref(t, Callback("kref"))
    del t
    print("weakref dead:", r() is None)


def finalize_callback():
    t2 = Target()
    weakref.finalize(t2, Callback("vfinalize"), 1, 2)
    del t2


sys.unraisablehook = hook
with_hook()
finalize_callback()
sys.unraisablehook = sys.__unraisablehook__
weakref_callbacks()
atexit.register(Callback("katexit"), "arg")
atexit.register(print, "atexit print runs first")
print("main done")
