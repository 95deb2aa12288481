# Risk 6: `sys.exit` / `SystemExit` with ints (0, 3, -1, 256), strings, None, True, other
# objects, raised deep in functions, through finally clauses and with blocks, from inside
# an except clause; stdout printed before must still come out (exit status compared).
# case: int 0
# case: int 3
# case: int -1
# case: int 256
# case: str
# case: none
# case: true
# case: list
# case: chained 4
# case: caught 5
import sys


class Guard:
    def __enter__(self):
        print("guard enter")
        return self

    def __exit__(self, et, ev, tb):
        print("guard exit", et.__name__ if et else None, ev.code if et is SystemExit else "")
        return False


def leave(kind, arg):
    values = {"str": "fatal: stopped by the program", "none": None, "true": True,
              "list": [1, "two"]}
    if kind == "int":
        sys.exit(int(arg))
    if kind == "chained":
        try:
            raise ValueError("cause")
        except ValueError:
            raise SystemExit(int(arg)) from None
    sys.exit(values[kind])


def deep(kind, arg, depth):
    if depth:
        try:
            return deep(kind, arg, depth - 1)
        finally:
            print("finally at depth", depth)
    with Guard():
        for i in range(3):
            if i == 1:
                leave(kind, arg)
    return "unreachable"


kind = sys.argv[1]
arg = sys.argv[2] if len(sys.argv) > 2 else None
print("start", kind, arg)
sys.stderr.write("stderr before exit\n")
if kind == "caught":
    try:
        deep("int", arg, 1)
    except SystemExit as e:
        print("caught SystemExit", e.code)
        code = e.code
    sys.exit(code + 1)
deep(kind, arg, 2)
