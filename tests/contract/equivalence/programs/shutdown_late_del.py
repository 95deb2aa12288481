# Risk 2: `__del__` methods that run late in interpreter shutdown, after module globals
# have been cleared (set to None) or the module dropped: objects parked in builtins, in a
# module object of their own, in sys, and behind the main module's own globals. Each
# reports what it can still see through os.write captured as a default argument.
import builtins
import os
import sys
import types

MARK = "mark"


def helper(name):
    return f"helper({name})"


class Late:
    def __init__(self, name):
        self.name = name

    # Builtins are captured too: the builtins module may be cleared before this runs.
    def __del__(self, _write=os.write, _repr=repr, _g=globals, _type=type, _range=range):
        try:
            seen = []
            for key in ("MARK", "helper", "Late", "os", "sys"):
                value = _g().get(key, "<missing>")
                seen.append(f"{key}={'None' if value is None else 'set'}")
            text = f"{self.name}: {' '.join(seen)}"
            if helper is not None:
                text += " " + helper(self.name)
            if self.name == "in-builtins":
                for i in _range(3):
                    if i == 2 and MARK is None:
                        text += " mark-gone"
            _write(1, (text + "\n").encode())
        except BaseException as exc:
            _write(1, f"{self.name} failed: {_type(exc).__name__}: {_repr(str(exc))}\n".encode())


# The sys module (alive until the very end) keeps the main module alive, so shutdown
# clears its dict (names to None, in order) before these objects are freed.
sys.keep_main = sys.modules[__name__]
builtins.late_in_builtins = Late("in-builtins")
holder = types.ModuleType("late_holder")
holder.obj = Late("in-module")
sys.modules["late_holder"] = holder
sys.late_in_sys = Late("in-sys")
self_ref = Late("self-cycle")
self_ref.me = self_ref
_underscore = Late("underscore-global")
plain = Late("plain-global")
print("main done")
