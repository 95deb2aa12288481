"""with statements: normal exits, swallowed exceptions, leaving by return/break."""

import contextlib


class Recorder:
    def __init__(self, log, swallow=False):
        self.log = log
        self.swallow = swallow

    def __enter__(self):
        self.log.append("enter")
        return self

    def __exit__(self, kind, value, tb):
        self.log.append("exit" if kind is None else f"exit {kind.__name__}")
        return self.swallow


def simple(log, fail):
    with Recorder(log) as rec:
        if fail:
            raise ValueError("inside")
        rec.log.append("body")
    log.append("after")
    return log


def swallowing(log, fail):
    with Recorder(log, swallow=True):
        if fail:
            raise KeyError("swallowed")
        log.append("body")
    log.append("after")
    return log


def leave_early(log, mode):
    for i in range(3):
        with Recorder(log):
            if mode == "return" and i == 1:
                return log
            if mode == "break" and i == 1:
                break
            log.append(i)
    return log


def multiple(log):
    with Recorder(log) as a, Recorder(log) as b:
        log.append(a is not b)
    with contextlib.suppress(ZeroDivisionError):
        log.append(1 // 0)
    return log


def nested(log, fail):
    with Recorder(log):
        with Recorder(log, swallow=True):
            if fail:
                raise RuntimeError
        log.append("between")
    return log


def drive():
    out = []
    out.append(simple([], False))
    try:
        simple([], True)
    except ValueError:
        out.append("value")
    out.append(swallowing([], False))
    out.append(swallowing([], True))
    out.append(leave_early([], "return"))
    out.append(leave_early([], "break"))
    out.append(leave_early([], "none"))
    out.append(multiple([]))
    out.append(nested([], False))
    out.append(nested([], True))
    return out
