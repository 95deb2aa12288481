"""Leaving statements that pass through several finallies or a with, and backedges
whose source statement has nowhere for code of its own (issue 17, found by the
random programs of tests/python/test_random_programs.py).

``EXPECTED``: per function, path executions and sorted path counts of one
``drive()``, counted by hand (see the comments).
"""


def nested_return(flag):
    x = 0
    try:
        if flag:
            try:
                return x
            finally:
                x += 1
    finally:
        x += 1
    return x


# True, False, True: entry -> return -> inner finally -> outer finally -> exit: 2;
# entry -> false -> outer finally -> return x: 1. (The return was lost when the
# inner finally handed it on without telling the outer one.)


def nested_continue(items):
    out = []
    for item in items:
        try:
            try:
                if item:
                    continue
                out.append(item)
            finally:
                out.append("inner")
        finally:
            out.append("outer")
    return out


# [1, 0, 2]: entry -> continue -> both finallies -> back: 1; header -> append ->
# both finallies -> back: 1 (0); header -> continue -> ... -> back: 1 (2);
# header -> exhausted -> return: 1.


class Quiet:
    def __enter__(self):
        return self

    def __exit__(self, kind, value, traceback):
        return False


def nested_break(rows):
    found = None
    for row in rows:
        for cell in row:
            with Quiet():
                if cell < 0:
                    found = cell
                    break
    return found


# [[1, -2, 3], [4]]: entry -> inner loop, 1 -> with -> inner back: 1; inner header
# -> -2 -> break through the with -> end of the outer body -> outer back: 1; outer
# header -> [4] -> 4 -> inner back: 1; inner header -> exhausted -> outer back: 1;
# outer header -> exhausted -> return: 1. (The break's backedge has no site of its
# own: __exit__ runs between it and the jump.)


def tally(codes):
    seen = 0
    for code in codes:
        match code:
            case 0:
                seen += 1
            case 1 if seen:
                seen += 10
    return seen


# [0, 1, 5, 1]: entry -> case 0 -> back: 1; header -> case 1, guard true -> back: 2;
# header -> no case (5) -> back: 1; header -> exhausted -> return: 1.
# [1]: entry -> case 1, guard false -> back: 1; header -> exhausted -> return: 1.
# (Where no case matches, the last case's failure has no site of its own.)


def finally_loop(flags, n):
    x = 0
    for flag in flags:
        try:
            if flag:
                return x
        finally:
            for i in range(n):
                x += 1
    return x


# ([False, True], 2): entry -> false -> finally -> inner loop, i=0 -> inner back: 1;
# inner header -> i=1 -> inner back: 2 (once per flag); inner header -> exhausted
# -> outer back: 1 (after False); outer header -> true -> return -> finally -> inner
# loop, i=0 -> inner back: 1; inner header -> exhausted -> return (the return goes
# on): 1. 6 executions.


def keep_going(values):
    """A continue in a finally overrides the break and swallows the exception of its
    try (3.14 warns: PEP 765)."""
    seen = 0
    for value in values:
        try:
            if value is None:
                break
            seen += 1 // value
        finally:
            continue  # noqa: B012
    return seen


EXPECTED = {
    # [1, None, 0, 2]: entry and 1 (the finally continues); None breaks, and the
    # finally's continue overrides it; 0 raises (a path ends) and the finally's path
    # continues; 2 from the header; the exhaustion.
    "keep_going": (6, [1, 1, 1, 1, 1, 1]),
    "nested_return": (3, [1, 2]),
    "nested_continue": (4, [1, 1, 1, 1]),
    "Quiet.__enter__": (3, [3]),
    "Quiet.__exit__": (3, [3]),
    "nested_break": (5, [1, 1, 1, 1, 1]),
    "tally": (7, [1, 1, 1, 2, 2]),
    "finally_loop": (6, [1, 1, 1, 1, 2]),
}


def drive():
    out = [nested_return(flag) for flag in (True, False, True)]
    out.append(nested_continue([1, 0, 2]))
    out.append(nested_break([[1, -2, 3], [4]]))
    out += [tally([0, 1, 5, 1]), tally([1])]
    out.append(finally_loop([False, True], 2))
    out.append(keep_going([1, None, 0, 2]))
    return out
