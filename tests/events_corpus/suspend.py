"""Every shape of suspension the event counter hands over at: yields of names,
constants and expressions, ``x = yield``, ``yield from`` and ``await`` as statements
and inside expressions, throw() into a generator suspended in a ``with`` that
swallows it or in a ``try`` that catches it, close() through a ``finally``, a
generator resumed in another thread, and coroutines driven by hand and by asyncio."""

import asyncio
import threading


class Swallow:
    def __init__(self):
        self.seen = 0

    def __enter__(self):
        self.seen += 1
        return self

    def __exit__(self, kind, value, tb):
        if kind is not None:
            self.seen += 10
            return True
        return False


def helper(x):
    return x * 2 + 1


def names(n):
    total = 0
    for i in range(n):
        yield i
        yield 7
        yield
        total += i
        received = yield total
        if received:
            total += received
    return total


def expressions(n):
    for i in range(n):
        value = yield helper(i)
        total = (yield i) or 0
        yield helper(value or total)


def delegate(n):
    result = yield from names(n)
    yield from expressions(2)
    got = yield from names(1)
    return result + got


def thrown_into_with():
    guard = Swallow()
    count = 0
    with guard:
        count += 1
        yield count
        count += 100
    count += helper(count)
    yield count
    return guard.seen


def thrown_into_try():
    count = 0
    for i in range(3):
        try:
            count += i
            yield count
        except KeyError:
            count += helper(i)
        else:
            count -= 1
    yield count


def closed():
    try:
        yield 1
        yield 2
    finally:
        helper(3)


def drive_generators():
    out = []
    g = names(4)
    out.append(next(g))
    for _ in range(20):
        try:
            out.append(g.send(3))
        except StopIteration as stop:
            out.append(stop.value)
            break
    g = expressions(3)
    out.append(next(g))
    try:
        while True:
            out.append(g.send(5))
    except StopIteration:
        pass
    out.append(list(delegate(2)))
    g = thrown_into_with()
    out.append(next(g))
    out.append(g.throw(ValueError))
    try:
        next(g)
    except StopIteration as stop:
        out.append(stop.value)
    g = thrown_into_try()
    out.append(next(g))
    out.append(g.throw(KeyError))
    out.append(next(g))
    out.append(g.throw(KeyError))
    g = closed()
    out.append(next(g))
    g.close()
    return out


def resumed_elsewhere():
    """One generator, its steps taken by two threads in turn."""
    g = names(6)
    out = [next(g)]

    def step():
        out.append(next(g))
        out.append(helper(len(out)))

    for _ in range(3):
        thread = threading.Thread(target=step)
        thread.start()
        thread.join()
        out.append(next(g))
    return out


async def leaf(x):
    await asyncio.sleep(0)
    return helper(x)


async def middle(n):
    total = 0
    for i in range(n):
        await asyncio.sleep(0)
        value = await leaf(i)
        total += value
        total += await leaf(i) + helper(i)
    return total


async def gathered():
    results = await asyncio.gather(middle(3), middle(2), leaf(5))
    return sum(results)


class Ready:
    def __await__(self):
        value = yield "step"
        return value


async def by_hand():
    first = await Ready()
    second = await Ready()
    return first + second


async def both_by_hand():
    return (await Ready()) * 10 + (await Ready())


class Box:
    def __init__(self, value):
        self.value = value

    def scaled(self, factor, *, offset=0):
        return Box(self.value * factor + offset)


async def fib(n):
    if n <= 1:
        return n
    return await fib(n - 1) + await fib(n - 2)


async def awaits_in_expressions(box, n):
    order = []
    shifted = box.scaled(await leaf(n), offset=await leaf(n + 1)).value + 1
    order.append(shifted)
    pair = (await leaf(1), helper(2), [await leaf(3)][0])
    order.append(pair)
    -(await leaf(4)) + await leaf(5)
    order.append(await leaf(6) if box.value else await leaf(7))
    order.append(box.value and await leaf(8))
    order.append(box.value < await leaf(9) < 100)
    return (await leaf(len(order))
            + await fib(5)
            + helper(n))


class Boom(Exception):
    pass


async def fails(x):
    await asyncio.sleep(0)
    raise Boom(x)


async def awaits_that_raise(box):
    caught = []
    try:
        return await leaf(1) + await fails(2)
    except Boom as error:
        caught.append(error.args)
    try:
        value = (await fails(3)) + (await leaf(4))
        caught.append(value)
    except Boom:
        caught.append("first")
    try:
        value = box.missing + await leaf(5)
        caught.append(value)
    except AttributeError:
        caught.append("before")
    try:
        value = await leaf(6) + box.missing
    except AttributeError:
        caught.append("after")
    return caught


def by_hand_steps(coroutine, first, second):
    """Drive a coroutine that awaits Ready() twice: what it yields and returns."""
    steps = [coroutine.send(None), coroutine.send(first)]
    try:
        coroutine.send(second)
    except StopIteration as stop:
        steps.append(stop.value)
    return steps


def drive_coroutines():
    out = [asyncio.run(gathered())]
    out += by_hand_steps(by_hand(), 2, 3)
    out += by_hand_steps(both_by_hand(), 4, 5)
    out.append(asyncio.run(awaits_in_expressions(Box(2), 3)))
    out.append(asyncio.run(awaits_that_raise(Box(1))))
    out.append(asyncio.run(fib(6)))
    return out


def drive():
    return [drive_generators(), resumed_elsewhere(), drive_coroutines()]
