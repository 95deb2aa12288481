# Risk 1: `ExceptionGroup` and `except*`: groups fully handled, partly handled (the rest
# propagates), handled inside loops, handlers that raise, nested groups; the last
# partly-handled group escapes uncaught (its boxed traceback goes to stderr).
import traceback


def make(i):
    excs = []
    if i % 2 == 0:
        excs.append(ValueError(f"v{i}"))
    if i % 3 == 0:
        excs.append(KeyError(f"k{i}"))
    if i % 5 == 0:
        excs.append(ExceptionGroup(f"inner{i}", [OSError(f"o{i}"), ValueError(f"iv{i}")]))
    excs.append(TypeError(f"t{i}"))
    return ExceptionGroup(f"group{i}", excs)


def handle_all(n):
    log = []
    for i in range(n):
        try:
            raise make(i)
        except* ValueError as eg:
            log.append(("V", i, len(eg.exceptions)))
        except* (KeyError, OSError) as eg:
            log.append(("KO", i, len(eg.exceptions)))
        except* TypeError:
            log.append(("T", i))
        log.append(("after", i))
    return log


def handle_part(i):
    try:
        raise make(i)
    except* TypeError as eg:
        print("  handled part", i, [str(e) for e in eg.exceptions])


def handler_raises(i):
    try:
        raise make(i)
    except* KeyError:
        raise RuntimeError(f"from handler {i}") from None
    except* Exception as eg:
        print("  rest", i, type(eg).__name__, len(eg.exceptions))


def loop_partial(n):
    survivors = []
    for i in range(n):
        try:
            handle_part(i)
        except ExceptionGroup as eg:
            survivors.append(sorted(type(e).__name__ for e in eg.exceptions))
            if i == 3:
                print("".join(traceback.format_exception(eg)), end="")
        finally:
            survivors.append(i)
    return survivors


def plain_catch_of_group():
    try:
        raise ExceptionGroup("plain", [ValueError(1)])
    except ExceptionGroup as eg:
        return eg.split(ValueError)[0].exceptions[0].args


print("handle_all", handle_all(7))
print("loop_partial", loop_partial(6))
for i in (0, 3, 5):
    try:
        handler_raises(i)
    except Exception as e:
        print("handler_raises", i)
        print("".join(traceback.format_exception(e)), end="")
print("plain", plain_catch_of_group())
handle_part(10)
