# Risk 4 (frames and code objects): what a program can see of its own functions and
# frames: inspect.stack(), f_back chains, f_locals, generator/coroutine frames, code
# object names, arguments, variables, closures, signatures, docstrings and source.
import asyncio
import functools
import inspect
import sys


def stack_names():
    return [(fi.function, fi.lineno, fi.code_context[0].strip()) for fi in inspect.stack()[:4]]


def chain():
    names = []
    f = sys._getframe()
    while f is not None:
        names.append((f.f_code.co_name, f.f_code.co_qualname, f.f_lineno))
        f = f.f_back
    return names


def outer(a, b=2, *rest, key=None, **extra):
    """Outer's docstring."""
    total = a + b
    captured = [total]

    def inner(c):
        captured.append(c)
        return stack_names(), chain(), sorted(sys._getframe().f_locals)

    return inner(total), sorted(locals())


def code_facts(fn):
    c = fn.__code__
    return {
        "name": c.co_name,
        "qualname": c.co_qualname,
        "firstlineno": c.co_firstlineno,
        "argcount": c.co_argcount,
        "posonly": c.co_posonlyargcount,
        "kwonly": c.co_kwonlyargcount,
        "varnames": c.co_varnames,
        "cellvars": c.co_cellvars,
        "freevars": c.co_freevars,
        "flags": c.co_flags & (inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_VARARGS),
    }


def gen(n):
    for i in range(n):
        yield i, sys._getframe().f_lineno


async def coro(n):
    await asyncio.sleep(0)
    frame = sys._getframe()
    return n, frame.f_code.co_name, frame.f_lineno - frame.f_code.co_firstlineno


def decorated(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)

    return wrapper


@decorated
def wrapped(x: int, y: "str" = "s") -> list:
    """Wrapped's docstring."""
    return [x, y]


print("outer:", outer(1, 3, 4, key=5, z=6))
print("code outer:", code_facts(outer))
print("code gen:", code_facts(gen))
print("code coro:", code_facts(coro))
print("signature:", inspect.signature(outer), inspect.signature(wrapped))
print("wrapped:", wrapped.__name__, wrapped.__qualname__, wrapped.__doc__, wrapped(1))
print("annotations:", wrapped.__wrapped__.__annotations__)
print("defaults:", outer.__defaults__, outer.__kwdefaults__, outer.__module__)
print("source of gen:", inspect.getsource(gen).splitlines())
print("getsourcelines first:", inspect.getsourcelines(outer)[1])
g = gen(3)
print("gen frame before:", g.gi_frame.f_lineno - g.gi_code.co_firstlineno, g.gi_running)
print("gen values:", list(g))
print("gen frame after:", g.gi_frame)
print("coro:", asyncio.run(coro(4)))
print("closure:", [type(c.cell_contents).__name__ for c in (outer.__closure__ or ())])
