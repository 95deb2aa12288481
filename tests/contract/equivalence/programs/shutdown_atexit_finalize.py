# Risk 2: shutdown work run by atexit: handlers (registered in order, with arguments and
# keywords, one unregistered) that call the program's functions and read its globals, and
# weakref.finalize callbacks for objects kept in module globals (run at exit too).
import atexit
import weakref

TOTALS = []


def fmt(tag, values):
    parts = []
    for v in values:
        if v % 2:
            parts.append(f"{v}!")
        else:
            parts.append(str(v))
    return f"{tag}[{','.join(parts)}]"


class Resource:
    def __init__(self, name):
        self.name = name


def on_finalize(name, values):
    TOTALS.append(name)
    print(fmt(f"finalize {name}", values), flush=True)


def on_exit(label, *, values=()):
    print(fmt(f"atexit {label}", [*values, len(TOTALS)]), flush=True)
    if label == "first-registered":
        print("TOTALS at last atexit:", TOTALS, flush=True)


def never():
    print("unregistered handler ran")


res_a = Resource("a")
res_b = Resource("b")
fin_a = weakref.finalize(res_a, on_finalize, "a", [1, 2, 3])
atexit.register(on_exit, "first-registered", values=[7])
fin_b = weakref.finalize(res_b, on_finalize, "b", [4, 5])
atexit.register(never)
atexit.register(on_exit, "second-registered")
atexit.unregister(never)
print("finalizers alive:", fin_a.alive, fin_b.alive, flush=True)
