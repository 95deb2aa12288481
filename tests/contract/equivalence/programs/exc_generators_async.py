# Risk 1 (generators and coroutines): exceptions thrown into generators with throw(),
# edited (`__traceback__ = None`) and re-raised inside a generator and a coroutine,
# StopIteration turned into RuntimeError, close() and GeneratorExit handling, and an
# async generator closed early; the tracebacks are printed, the last escapes uncaught.
import asyncio
import traceback


def show(label, exc):
    print(f"--- {label}")
    print("".join(traceback.format_exception(exc)), end="")


def echo():
    received = []
    while True:
        try:
            value = yield len(received)
            received.append(value)
        except KeyError as e:
            received.append(f"key {e}")
            e.__traceback__ = None
            if len(received) > 2:
                raise
        except GeneratorExit:
            print("echo closing with", received)
            raise


def leaks_stop():
    yield 1
    raise StopIteration("leaked")


async def inner(x):
    await asyncio.sleep(0)
    if x > 1:
        try:
            raise ValueError(x)
        except ValueError as e:
            e.__traceback__ = None
            raise
    return x


async def agen(n):
    try:
        for i in range(n):
            yield i
    finally:
        print("agen finally")


async def main():
    results = []
    for x in (1, 2):
        try:
            results.append(await inner(x))
        except ValueError as e:
            show(f"inner {x}", e)
    async for i in agen(5):
        if i == 2:
            break
        results.append(i)
    gen = agen(3)
    await gen.__anext__()
    await gen.aclose()
    return results


g = echo()
next(g)
g.send("a")
g.throw(KeyError("one"))
try:
    g.throw(KeyError("two"))
except KeyError as e:
    show("throw", e)
g2 = echo()
next(g2)
g2.close()
try:
    list(leaks_stop())
except RuntimeError as e:
    show("leaks_stop", e)
print("main:", asyncio.run(main()))
asyncio.run(inner(3))
