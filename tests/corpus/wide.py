"""A function with more paths than ARRAY_THRESHOLD: its counters are a hash table."""


def flags(n, fail=False):
    out = 0
    if n & 1:
        out += 1
    if n & 2:
        out += 2
    if n & 4:
        out += 4
    if n & 8:
        out += 8
    if n & 16:
        out += 16
    if n & 32:
        out += 32
    if n & 64:
        out += 64
    if n & 128:
        out += 128
    if n & 256:
        out += 256
    if n & 512:
        out += 512
    if n & 1024:
        out += 1024
    if fail:
        out = out // 0
    if n & 2048:
        out += 2048
    if n & 4096:
        out += 4096
    return out


def sweep(values):
    total = 0
    for v in values:
        try:
            total += flags(v, fail=v % 11 == 0)
        except ZeroDivisionError:
            total -= 1
    return total


def drive():
    return [sweep(range(0, 8192, 37)), sweep([5, 5, 5, 8191]), flags(0)]
