# Risk 1: exceptions raised from inside `finally` clauses (replacing the one in flight)
# and from `with` exits that swallow (return True), replace (raise another) or re-raise;
# contextlib.suppress / ExitStack; all inside loops too. The last replacement escapes.
import contextlib
import traceback


class Exit:
    def __init__(self, mode, log):
        self.mode = mode
        self.log = log

    def __enter__(self):
        self.log.append(f"enter:{self.mode}")
        return self

    def __exit__(self, et, ev, tb):
        self.log.append(f"exit:{self.mode}:{et and et.__name__}:{tb and tb.tb_lineno}")
        if self.mode == "swallow":
            return True
        if self.mode == "replace" and et is not None:
            raise RuntimeError(f"replaced {et.__name__}")
        if self.mode == "reraise" and ev is not None:
            raise ev
        return False


def show(label, exc, log):
    print(f"--- {label}: {log}")
    if exc is not None:
        print("".join(traceback.format_exception(exc)), end="")


def finally_replaces(x):
    try:
        if x:
            raise ValueError(x)
    finally:
        raise KeyError(f"from finally {x}")


def nested_finally(x):
    try:
        try:
            raise ValueError(x)
        finally:
            try:
                raise TypeError("inner finally")
            finally:
                print("  innermost finally sees", x)
    except TypeError as e:
        return type(e.__context__).__name__


def with_modes(mode, n, log):
    for i in range(n):
        with Exit(mode, log):
            if i == 1:
                raise ValueError(i)
            log.append(f"body:{i}")
    return "done"


def with_in_finally(mode, log):
    try:
        raise OSError("try")
    finally:
        with Exit(mode, log):
            raise IndexError("in finally's with")


def suppress_and_stack(n, log):
    for i in range(n):
        with contextlib.suppress(ZeroDivisionError):
            log.append(10 // (i - 1))
        with contextlib.ExitStack() as stack:
            stack.callback(log.append, f"cb{i}")
            stack.enter_context(Exit("swallow" if i % 2 else "plain", log))
            if i == 2:
                raise LookupError(i)
    return "done"


def run(label, fn, *args, log=None):
    try:
        result = fn(*args) if log is None else fn(*args, log)
    except Exception as e:
        show(label, e, log)
    else:
        show(label, None, (result, log))


run("finally_replaces 0", finally_replaces, 0)
run("finally_replaces 1", finally_replaces, 1)
run("nested_finally", nested_finally, 5)
for mode in ("plain", "swallow", "replace", "reraise"):
    run(f"with_modes {mode}", with_modes, mode, 3, log=[])
for mode in ("plain", "swallow", "replace"):
    run(f"with_in_finally {mode}", with_in_finally, mode, log=[])
run("suppress_and_stack", suppress_and_stack, 4, log=[])
with_modes("replace", 2, [])
