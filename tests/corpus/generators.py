"""Generators and coroutines: paths span yields and awaits."""

import asyncio


def countdown(n):
    while n > 0:
        if n % 2:
            yield n
        n -= 1
    return "done"


def delegate(n):
    result = yield from countdown(n)
    yield result


def echo():
    received = []
    try:
        while True:
            value = yield len(received)
            if value is None:
                break
            received.append(value)
    finally:
        received.clear()
    return received


class Ticker:
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return self

    def __next__(self):
        if self.n <= 0:
            raise StopIteration
        self.n -= 1
        return self.n


def consume(iterable):
    seen = 0
    for _ in iterable:
        seen += 1
    return seen


async def child(x):
    await asyncio.sleep(0)
    if x > 1:
        return x * 2
    return x


async def parent(xs):
    total = 0
    for x in xs:
        total += await child(x)
    async with asyncio.Lock():
        total += 1
    async for value in agen(3):
        total += value
    return total


async def agen(n):
    for i in range(n):
        await asyncio.sleep(0)
        yield i


def drive():
    out = [list(countdown(5)), list(delegate(4))]
    gen = echo()
    next(gen)
    gen.send(1)
    gen.send(2)
    try:
        gen.send(None)
    except StopIteration as stop:
        out.append(stop.value)
    closed = countdown(10)
    next(closed)
    closed.close()
    thrown = echo()
    next(thrown)
    try:
        thrown.throw(ValueError("in"))
    except ValueError:
        out.append("thrown")
    out.append(consume(Ticker(4)))
    out.append(consume(countdown(3)))
    out.append(asyncio.run(parent([1, 2, 3])))
    return out
