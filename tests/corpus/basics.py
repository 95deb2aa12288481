"""Branches, loops, early exits, nesting: the everyday constructs."""

COUNTER = 0


def classify(n):
    if n < 0:
        return "negative"
    elif n == 0:
        return "zero"
    elif n % 2:
        kind = "odd"
    else:
        kind = "even"
    if n > 100:
        kind = "big " + kind
    return kind


def loops(items, limit):
    total = 0
    for item in items:
        if item is None:
            continue
        if item > limit:
            break
        total += item
    else:
        total = -total
    n = 0
    while n < 3:
        n += 1
        if total > 1000:
            break
    else:
        total += 1
    return total


def nested(grid):
    found = []
    for row in grid:
        for cell in row:
            if cell % 3 == 0:
                found.append(cell)
                if len(found) > 4:
                    return found
            elif cell % 5 == 0:
                continue
        else:
            found.append(-1)
    return found


def infinite(limit):
    i = 0
    while True:
        i += 1
        if i >= limit:
            break
    while 1:
        return i


def expressions(xs, flag):
    # expressions do not split blocks
    ys = [x * 2 for x in xs if x > 0]
    key = (lambda v: -v) if flag else abs
    best = max(ys, key=key, default=None) if ys else None
    ok = (flag and bool(ys)) or not xs
    if (n := len(ys)) > 2:
        return n, best, ok
    return best, ok


def scope_statements(values):
    global COUNTER
    counter = 0

    def bump():
        nonlocal counter
        counter += 1
        return counter

    for v in values:
        bump()
        COUNTER += v
    tmp = list(values)
    del tmp[0:1]
    assert counter == len(values), "count mismatch"
    pass
    return counter, tmp


def empty():
    """Only a docstring."""


def single_pass():
    pass


def one_liners(x):
    if x: return 1  # noqa: E701
    for _ in range(2): x += 1  # noqa: E701
    while x > 10: x -= 7  # noqa: E701
    return x


def multi_line_return(items, label):
    if not items:
        return (
            label,
            0,
        )
    return [
        label.upper(),
        len(items),
        sum(
            items
        ),
    ]


def drive():
    out = [classify(n) for n in (-3, 0, 7, 8, 101, 202)]
    out.append(multi_line_return([1, 2], "a"))
    out.append(multi_line_return([], "b"))
    try:
        multi_line_return([1, "x"], "c")
    except TypeError:
        out.append("type")
    out.append(loops([1, 2, None, 3], 10))
    out.append(loops([1, 50, 2], 10))
    out.append(loops([], 10))
    out.append(loops([600, 600], 1000))
    out.append(nested([[3, 5, 7], [9, 10, 12], [15, 18, 21], [1]]))
    out.append(nested([[1, 2], [4]]))
    out.append(infinite(4))
    out.append(expressions([1, -2, 3, 4], True))
    out.append(expressions([], False))
    out.append(scope_statements([1, 2, 3]))
    try:
        scope_statements([])
    except IndexError:
        out.append("index")
    out.append(empty())
    out.append(single_pass())
    out.append([one_liners(x) for x in (0, 1, 30)])
    return out
