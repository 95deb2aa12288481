"""Finally clauses that end in several ways (issue 34 §2): a break in a finally inside a
loop inside a finally (it ends the outer clause, not the inner one: the inner clause's
end dispatch ran on that break, and the outer one's before it, and the register was None
-- a TypeError in the program), a clause that ends in a try/finally whose clause ends in
branches (the frame stood at no line), loops left through a with, a while whose test
spans lines; each entered by an exception and by falling through."""


class CM:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def break_in_inner_finally(x, raising):
    log = []
    try:
        if raising:
            raise ValueError(x)
        log.append("body")
    finally:
        for i in range(3):
            try:
                log.append(i)
            finally:
                if i == x:
                    break
    return log


def ends_in_try_finally(x, raising):
    log = []
    try:
        if raising:
            raise ValueError(x)
    finally:
        try:
            x += 1
        finally:
            if x % 2:
                log.append("odd")
            else:
                log.append("even")
    return log


def break_through_with(x, raising):
    log = []
    try:
        if raising:
            raise KeyError(x)
    finally:
        for i in range(3):
            with CM():
                if i == x:
                    break
        log.append(i)
    return log


def multiline_while(x, raising):
    # (not last in the clause: a while whose test spans lines, last in a finally
    # entered by an exception, is a known limit: docs/guarantees.md)
    try:
        if raising:
            raise IndexError(x)
    finally:
        while (x < 3
               and x > -1):
            x += 1
        x += 10
    return x


def drive():
    out = []
    for function in (break_in_inner_finally, ends_in_try_finally, break_through_with,
                     multiline_while):
        for x in (0, 1, 5):
            for raising in (False, True):
                try:
                    out.append(function(x, raising))
                except LookupError as err:
                    out.append(type(err).__name__)
                except ValueError:
                    out.append("value")
    return out
