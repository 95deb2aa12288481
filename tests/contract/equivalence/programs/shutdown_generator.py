# Risk 2: a generator left suspended in module globals: at exit the collector closes it,
# and its except GeneratorExit / finally clauses run measured code (through `yield from`
# into an inner generator, calling module-level functions, reading globals), writing
# with os.write(1, ...) captured as a default argument.
import os

LABEL = "ticker"


def fmt(tag, values):
    parts = []
    for v in values:
        if v % 2:
            parts.append(f"{v}!")
        else:
            parts.append(str(v))
    return f"{tag}[{','.join(parts)}]"


def ticker(name, _write=os.write):
    count = 0
    try:
        while True:
            count += 1
            yield count
    except GeneratorExit:
        _write(1, (fmt(f"{LABEL} {name} closed after", [count, count + 1]) + "\n").encode())
        raise
    finally:
        _write(1, f"{LABEL} {name} finally\n".encode())


def outer(_write=os.write):
    for inner in ("x", "y"):
        try:
            yield from ticker(f"nested-{inner}")
        finally:
            _write(1, f"outer finally {inner}\n".encode())


suspended = outer()
next(suspended)
next(suspended)
next(suspended)
print("main done", flush=True)
