# Risk 1: tracebacks whose frames were cleared (`traceback.clear_frames(tb)`,
# `tb.tb_frame.clear()` on a finished frame, `frame.clear()` on an executing or
# suspended frame), then the exception re-raised, caught and printed; the last escapes.
import sys
import traceback


def leaf(x):
    local_in_leaf = x * 3
    raise ValueError(f"leaf {local_in_leaf}")


def middle(x):
    local_in_middle = [x]
    return leaf(local_in_middle[0])


def top(x):
    return middle(x)


def frames(exc):
    out = []
    tb = exc.__traceback__
    while tb is not None:
        f = tb.tb_frame
        out.append(f"{f.f_code.co_name}:{tb.tb_lineno}:{f.f_lineno}:{sorted(f.f_locals)}")
        tb = tb.tb_next
    return out


def catch(x):
    try:
        top(x)
    except ValueError as e:
        return e
    return None


def reraise(exc):
    raise exc


def run_cleared_all():
    e = catch(1)
    print("before clear", frames(e)[1:])
    traceback.clear_frames(e.__traceback__)
    print("after clear_frames", frames(e)[1:])
    try:
        reraise(e)
    except ValueError as again:
        print("".join(traceback.format_exception(again)), end="")


def run_clear_one():
    e = catch(2)
    tb = e.__traceback__
    while tb.tb_frame.f_code.co_name != "middle":
        tb = tb.tb_next
    tb.tb_frame.clear()
    print("after middle clear", frames(e)[1:])
    try:
        try:
            reraise(e)
        finally:
            print("finally while re-raising cleared")
    except ValueError as again:
        print("".join(traceback.format_exception(again)), end="")


def clear_executing():
    try:
        sys._getframe().clear()
    except RuntimeError as exc:
        print("clear executing:", exc)


def suspended():
    try:
        yield 1
        yield 2
    finally:
        print("suspended generator finally")


def clear_suspended():
    g = suspended()
    next(g)
    try:
        g.gi_frame.clear()
        print("cleared suspended; gi_frame is None:", g.gi_frame is None)
    except RuntimeError as exc:
        print("clear suspended:", exc)
        g.close()


def clear_in_loop(n):
    kept = []
    for i in range(n):
        e = catch(i)
        if i % 2:
            traceback.clear_frames(e.__traceback__)
        kept.append(len(frames(e)))
    return kept


run_cleared_all()
run_clear_one()
clear_executing()
clear_suspended()
print("clear_in_loop", clear_in_loop(4))
final = catch(9)
traceback.clear_frames(final.__traceback__)
reraise(final)
