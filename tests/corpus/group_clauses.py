"""except* with two and three clauses (DESIGN §4, issue 50): a group split between the
clauses, matched by one only, nested groups, a clause that raises, a finally, returns
from the try's body, a rest no clause matches caught outside, and clauses that end in
a compound statement (a try/finally, a match, a nested try with except*, a loop whose
break leaves through a finally).

How a path ends and starts around such a try, from the contract:
- the try's body raising ends its path (a raise statement or a call raising);
- the first clause that matches starts a new path (a clause that does not match adds
  none);
- a clause's end that hands the group's rest over -- to the next matching clause, or
  to the try's re-raise when no later clause matches or an earlier clause raised --
  is a transfer: its path ends there ("ho" below), and the next clause starts one;
- the end of a clause whose group is then fully handled, with no clause raising,
  flows on to the code after the try (or into its finally) without a cut;
- a finally entered by the rest leaving the try starts a path that ends re-raising.

(return, break and continue cannot appear in an except* clause: a SyntaxError.)
"""

ERRORS = {"v": ValueError, "t": TypeError, "k": KeyError}


def group(kind):
    return ExceptionGroup(kind, [ERRORS[c](c) for c in kind])


def split_in_a_loop(n):
    # The shape.
    handled = 0
    for i in range(n):
        try:
            raise ExceptionGroup("g", [ValueError(i), TypeError(i)])
        except* ValueError:
            handled += 1
        except* TypeError:
            handled += 2
    return handled


def three(kinds):
    log = []
    for kind in kinds:
        try:
            if kind:
                raise group(kind)
            log.append("none")
        except* ValueError:
            log.append("v")
        except* TypeError:
            log.append("t")
        except* KeyError:
            log.append("k")
    return log


def rest_goes_on(kind):
    log = []
    try:
        raise group(kind)
    except* ValueError:
        log.append("v")
    except* TypeError:
        log.append("t")
    log.append("after")
    return log


def caught_outside(kinds):
    log = []
    for kind in kinds:
        try:
            try:
                raise group(kind)
            except* ValueError:
                log.append("v")
            except* TypeError:
                log.append("t")
        except ExceptionGroup as rest:
            log.append(len(rest.exceptions))
    return log


def nested(item):
    if item == 0:
        return ExceptionGroup("o", [ValueError(0), ExceptionGroup("i", [TypeError(0),
                                                                        ValueError(0)])])
    if item == 1:
        return ExceptionGroup("o", [ExceptionGroup("i", [ValueError(1)])])
    return ExceptionGroup("o", [ExceptionGroup("i", [TypeError(2)]),
                                ExceptionGroup("j", [TypeError(2)])])


def nested_groups(items):
    seen = []
    for item in items:
        try:
            raise nested(item)
        except* ValueError as eg:
            seen.append(len(eg.exceptions))
        except* TypeError as eg:
            seen.append(-len(eg.exceptions))
    return seen


def clause_raises(kinds):
    log = []
    for kind, fail in kinds:
        try:
            try:
                raise group(kind)
            except* ValueError:
                log.append("v")
                if fail:
                    raise RuntimeError(kind)
            except* TypeError:
                log.append("t")
        except Exception as err:
            log.append(type(err).__name__)
    return log


def with_finally(kinds):
    log = []
    for kind in kinds:
        try:
            try:
                if kind:
                    raise group(kind)
                log.append("body")
            except* ValueError:
                log.append("v")
            except* TypeError:
                log.append("t")
            finally:
                log.append("finally")
        except ExceptionGroup:
            log.append("rest")
    return log


def returns_from_body(kind):
    try:
        if not kind:
            return "nothing raised"
        raise group(kind)
    except* ValueError:
        note = "v"
    except* TypeError:
        note = "t"
    return note


def while_split(n):
    handled = 0
    while n:
        n -= 1
        try:
            raise ExceptionGroup("g", [ValueError(n), TypeError(n)])
        except* ValueError:
            handled += 1
        except* TypeError:
            handled += 2
        else:
            handled += 100
    return handled


def last_statement(kind, log):
    try:
        raise group(kind)
    except* ValueError:
        log.append("v")
    except* KeyError:
        log.append("k")


def inner_finally(n):
    done = 0
    for i in range(n):
        try:
            raise ExceptionGroup("g", [ValueError(i), TypeError(i)])
        except* ValueError:
            try:
                done += 1
            finally:
                done += 10
        except* TypeError:
            done += 2
    return done


def inner_finally_last(n):
    done = 0
    for i in range(n):
        try:
            raise ExceptionGroup("g", [ValueError(i), TypeError(i)])
        except* ValueError:
            done += 1
        except* TypeError:
            try:
                done += 2
            finally:
                done += 20
    return done


def inner_finally_one(n):
    done = 0
    for i in range(n):
        try:
            raise ExceptionGroup("g", [ValueError(i)])
        except* ValueError:
            try:
                done += 1
            finally:
                done += 10
    return done


def ends_in_match(items):
    out = 0
    for item in items:
        try:
            raise ExceptionGroup("g", [ValueError(item), TypeError(item)])
        except* ValueError:
            match item:
                case 0:
                    out += 1
                case 1:
                    out += 2
        except* TypeError:
            out += 10
    return out


def nested_in_clause(kinds):
    log = []
    for kind in kinds:
        try:
            raise group(kind)
        except* ValueError:
            try:
                raise ExceptionGroup("again", [KeyError(kind), TypeError(kind)])
            except* KeyError:
                log.append("inner k")
            except* TypeError:
                log.append("inner t")
        except* TypeError:
            log.append("t")
    return log


def break_through_finally(n):
    total = 0
    for i in range(n):
        try:
            raise ExceptionGroup("g", [ValueError(i), TypeError(i)])
        except* ValueError:
            for j in range(3):
                try:
                    if j == i:
                        break
                finally:
                    total += 1
        except* TypeError:
            total += 100
    return total


def gen_split(n):
    for i in range(n):
        try:
            raise ExceptionGroup("g", [ValueError(i), TypeError(i)])
        except* ValueError:
            yield "v"
        except* TypeError:
            yield "t"


# Counted by hand, per function: (path executions, sorted counts). "ho": a clause's
# end handing over (its path ends there); "→ back": on to the loop's header.
EXPECTED = {
    # one call per group(...) below: three 6, rest_goes_on 4, caught_outside 4,
    # clause_raises 4, with_finally 4, returns_from_body 2, last_statement 2,
    # nested_in_clause 2.
    "group": (28, [28]),
    # n = 3: entry → raise; header → raise ×2; the value clause ho ×3; the type
    # clause → back ×3; header → return.
    "split_in_a_loop": (10, [1, 1, 2, 3, 3]),
    # ["vt", "v", "tk", "k", "", "vtk", "vk"]: entry → raise (vt); header → raise
    # ×5; v ho ×3 (vt, vtk, vk); v → back (v); t ho ×2 (tk, vtk); t → back (vt);
    # k → back ×4 (tk, k, vtk, vk); header → none → back (""); header → return.
    "three": (19, [1, 1, 1, 1, 1, 2, 3, 4, 5]),
    # "vt", "vk", "k", "t": entry → raise ×4; v ho ×2 (vt to the type clause, vk
    # to the re-raise: the group leaves the call); t → after → return ×2 (vt, t).
    "rest_goes_on": (8, [2, 2, 4]),
    # ["vk", "k", "vt", "tk"]: entry → raise (vk); header → raise ×3; v ho ×2 (vk
    # to the re-raise, vt); the outer handler → back ×3 (vk, k, tk); t → back (vt);
    # t ho (tk, to the re-raise); header → return.
    "caught_outside": (12, [1, 1, 1, 1, 2, 3, 3]),
    # entry → return (0, 1, 2 each once, 0 again): item 0 ×2, 1, 2.
    "nested": (4, [1, 1, 2]),
    # [0, 1, 2, 0]: entry → raise; header → raise ×3; v ho ×2 (0, 0); t → back ×3
    # (0, 2, 0); v → back (1); header → return.
    "nested_groups": (11, [1, 1, 1, 2, 3, 3]),
    # [("vt", False), ("vt", True), ("v", True), ("t", False)]: entry → raise;
    # header → raise ×3; v (no raise) ho (1); t → back ×2 (1, 4); v → raise ×2
    # (2, 3); t ho (2: the clause before it raised, the try re-raises); the outer
    # handler → back ×2 (2, 3); header → return.
    "clause_raises": (13, [1, 1, 1, 1, 2, 2, 2, 3]),
    # ["vt", "", "v", "vk", "t"]: entry → raise (vt); v ho ×2 (vt, vk); t →
    # finally → back ×2 (vt, t); header → body → finally → back (""); header →
    # raise ×3 (v, vk, t); v → finally → back (v); the finally entered by vk's rest,
    # re-raising; the outer handler → back (vk); header → return.
    "with_finally": (13, [1, 1, 1, 1, 1, 1, 2, 2, 3]),
    # "", "vt", "t": entry → return (""); entry → raise ×2; v ho (vt); t → return
    # ×2 (vt, t).
    "returns_from_body": (6, [1, 1, 2, 2]),
    # n = 2: entry → raise; v ho ×2; t → back ×2; header → raise; header → return.
    "while_split": (7, [1, 1, 1, 2, 2]),
    # "vk", "k": entry → raise ×2; v ho (vk); k → return ×2.
    "last_statement": (5, [1, 2, 2]),
    # n = 3, the value clause ending in a try/finally: entry → raise; header →
    # raise ×2; v → its finally → ho ×3; t → back ×3; header → return.
    "inner_finally": (10, [1, 1, 2, 3, 3]),
    # n = 3, the type clause ending in a try/finally: the same counts.
    "inner_finally_last": (10, [1, 1, 2, 3, 3]),
    # n = 3, one clause ending in a try/finally: entry → raise; header → raise ×2;
    # v → its finally → back ×3; header → return.
    "inner_finally_one": (7, [1, 1, 2, 3]),
    # [0, 1, 2], the value clause ending in a match no case of which matches 2:
    # entry → raise; header → raise ×2; v ho by case 0, by case 1, by no case
    # (three paths); t → back ×3; header → return.
    "ends_in_match": (10, [1, 1, 1, 1, 1, 2, 3]),
    # ["vt", "v"]: entry → raise (vt); header → raise (v); the value clause's inner
    # try raising ×2; the inner k clause ho ×2; the inner t clause flowing on to
    # the value clause's end, ho to the type clause (vt); the inner t clause
    # flowing on through the value clause's end → back (v); t → back (vt); header →
    # return.
    "nested_in_clause": (10, [1, 1, 1, 1, 1, 1, 2, 2]),
    # n = 2: i = 0: entry → raise; v → inner loop → break → its finally → ho; t →
    # back. i = 1: header → raise; v → inner loop → finally → back to the inner
    # header (j = 0); inner header → break → finally → ho; t → back. Header → return.
    "break_through_finally": (8, [1, 1, 1, 1, 1, 1, 2]),
    # n = 2 (yields cut nothing): entry → raise; header → raise; v ho ×2; t → back
    # ×2; header → exhausted → the end of the generator.
    "gen_split": (7, [1, 1, 1, 2, 2]),
}


def drive():
    out = [split_in_a_loop(3), three(["vt", "v", "tk", "k", "", "vtk", "vk"])]
    for kind in ("vt", "vk", "k", "t"):
        try:
            out.append(rest_goes_on(kind))
        except ExceptionGroup as rest:
            out.append(f"left: {[type(e).__name__ for e in rest.exceptions]}")
    out.append(caught_outside(["vk", "k", "vt", "tk"]))
    out.append(nested_groups([0, 1, 2, 0]))
    out.append(clause_raises([("vt", False), ("vt", True), ("v", True), ("t", False)]))
    out.append(with_finally(["vt", "", "v", "vk", "t"]))
    out.extend(returns_from_body(kind) for kind in ("", "vt", "t"))
    out.append(while_split(2))
    log: list[str] = []
    for kind in ("vk", "k"):
        try:
            last_statement(kind, log)
        except ExceptionGroup as rest:
            log.append(f"left: {[type(e).__name__ for e in rest.exceptions]}")
    out.append(log)
    out.extend([inner_finally(3), inner_finally_last(3), inner_finally_one(3)])
    out.append(ends_in_match([0, 1, 2]))
    out.append(nested_in_clause(["vt", "v"]))
    out.append(break_through_finally(2))
    out.append(list(gen_split(2)))
    return out
