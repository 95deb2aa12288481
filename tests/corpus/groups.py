"""Exception groups and except* (DESIGN §4): the end of a clause whose group is fully
handled flows on to the code after the try with no cut, like an ordinary handler's end;
a clause that hands the group's rest over to the next matching clause, or to the try's
re-raise, ends its path there (issue 34 §2)."""


def in_a_loop(xs):
    # The program: 4 path executions for [1, 0].
    n = 0
    for x in xs:
        try:
            if x:
                raise ExceptionGroup("g", [ValueError(x)])
            n += 1
        except* ValueError:
            n += 2
    return n


def two_clauses(kind):
    log = []
    try:
        if kind == "both":
            raise ExceptionGroup("g", [ValueError(1), KeyError(2)])
        if kind == "value":
            raise ExceptionGroup("g", [ValueError(1)])
        if kind == "key":
            raise ExceptionGroup("g", [KeyError(1)])
        if kind == "type":
            raise ExceptionGroup("g", [TypeError(1), ValueError(2)])
        log.append("none")
    except* ValueError:
        log.append("value")
    except* KeyError:
        if kind == "key":
            log.append("key only")
        else:
            log.append("key")
    log.append("after")
    return log


def with_finally(kind):
    log = []
    try:
        if kind:
            raise ExceptionGroup("g", [ValueError(kind)] if kind != "type" else [TypeError(1)])
        log.append("body")
    except* ValueError:
        log.append("value")
    finally:
        log.append("finally")
    log.append("after")
    return log


def clause_leaves(kind):
    # (return, break and continue cannot appear in an except* clause)
    try:
        raise ExceptionGroup("g", [ValueError(1), KeyError(2)])
    except* ValueError:
        if kind == "raise":
            raise RuntimeError("from the clause")
    except* KeyError:
        pass
    return "fell"


def naked(kind):
    # A plain exception is wrapped for matching: unmatched, the original goes on.
    result = "none"
    try:
        if kind == "value":
            raise ValueError(1)
        raise KeyError(2)
    except* ValueError:
        result = "caught"
    return result


def nested(items):
    total = 0
    for item in items:
        try:
            try:
                if item < 0:
                    raise ExceptionGroup("inner", [ValueError(item), KeyError(item)])
                total += item
            except* ValueError:
                total -= 1
        except* KeyError:
            total -= 10
    return total


class Quiet:
    def __enter__(self):
        return self

    def __exit__(self, kind, value, tb):
        return kind is not None and issubclass(kind, ExceptionGroup)


def in_a_with(flag):
    log = []
    with Quiet():
        try:
            raise ExceptionGroup("g", [ValueError(1), KeyError(2)])
        except* ValueError:
            log.append("value")
        if flag:
            log.append("not reached")
    log.append("after")
    return log


def generator(kinds):
    for kind in kinds:
        try:
            if kind:
                raise ExceptionGroup("g", [kind(1)])
            yield "plain"
        except* ValueError:
            yield "value"
        except* KeyError:
            pass
    yield "end"


# Counted by hand, per function: (path executions, sorted counts).
EXPECTED = {
    # [1, 0]: entry → raise, handler → loop (no cut at the clause's end), loop → loop,
    # loop → return; [0, 0, 1, 1, 0]: entry → loop, loop → loop ×2, loop → raise ×2,
    # handler → loop ×2, loop → return.
    "in_a_loop": (12, [1, 1, 2, 2, 3, 3]),
    # raise ×4 (four raising branches); the value clause handing over ×2 ("both" to
    # the key clause, "type" to the re-raise); flows on: value, key, key only; none.
    "two_clauses": (10, [1, 1, 1, 1, 1, 1, 1, 1, 2]),
    # body → finally; raise ×2; the clause flows on into the finally; the finally
    # entered by the group no clause matched, re-raising.
    "with_finally": (5, [1, 1, 1, 2]),
    # raise ×2; the value clause raising, then the key clause handing over to the
    # re-raise; the value clause handing over, the key clause flowing on.
    "clause_leaves": (6, [1, 1, 1, 1, 2]),
    "naked": (3, [1, 1, 1]),
    # entry → loop; loop → loop; loop → raise ×2, the inner clause handing over ×2,
    # the outer clause flowing on ×2; loop → return.
    "nested": (9, [1, 1, 1, 2, 2, 2]),
    "Quiet.__enter__": (1, [1]),
    "Quiet.__exit__": (1, [1]),
    # raise in the with; the clause handing over; after the with that swallowed.
    "in_a_with": (3, [1, 1, 1]),
    "generator": (7, [1, 1, 1, 1, 1, 2]),
}


def drive():
    out = [in_a_loop([1, 0]), in_a_loop([0, 0, 1, 1, 0])]
    for kind in ("both", "value", "key", "none", "type"):
        try:
            out.append(two_clauses(kind))
        except ExceptionGroup as group:
            out.append(f"left: {[type(e).__name__ for e in group.exceptions]}")
    for kind in ("", "x", "type"):
        try:
            out.append(with_finally(kind))
        except ExceptionGroup:
            out.append("type left")
    for kind in ("raise", "fall"):
        try:
            out.append(clause_leaves(kind))
        except Exception as err:
            out.append(type(err).__name__)
    for kind in ("value", "key"):
        try:
            out.append(naked(kind))
        except KeyError:
            out.append("key went on")
    out.append(nested([1, -1, 2, -3]))
    out.append(in_a_with(False))
    out.append(list(generator([None, ValueError, KeyError, None])))
    return out
