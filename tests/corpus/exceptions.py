"""Exceptions: caught, re-raised, escaping, in handlers and finally clauses."""


class Oops(Exception):
    pass


def fail(kind):
    if kind == "value":
        raise ValueError(kind)
    if kind == "key":
        raise KeyError(kind)
    if kind == "oops":
        raise Oops(kind)
    return kind


def handlers(kind):
    try:
        result = fail(kind)
        result += "!"
    except ValueError as err:
        result = f"value {err}"
    except (KeyError, IndexError):
        result = "lookup"
    else:
        result += "?"
    return result


def reraise(kind):
    try:
        return fail(kind)
    except ValueError:
        raise
    except KeyError as err:
        raise Oops("wrapped") from err


def finally_paths(n):
    log = []
    for i in range(n):
        try:
            if i == 1:
                continue
            if i == 3:
                break
            if i == 4:
                return log
            log.append(i)
        finally:
            log.append(-i)
    return log


def finally_with_exception(kind):
    log = []
    try:
        try:
            fail(kind)
        finally:
            log.append("inner")
    except Exception as err:
        log.append(type(err).__name__)
    finally:
        log.append("outer")
    return log


def return_in_finally(kind):
    try:
        fail(kind)
    finally:
        return "swallowed"  # noqa: B012


def handler_raises(kind):
    try:
        fail(kind)
    except ValueError:
        fail("key")
    return "never"


def escape_from_loop(items):
    total = 0
    for item in items:
        total += 10 // item
    return total


def nested_handlers(a, b):
    try:
        try:
            x = 10 // a
        except ZeroDivisionError:
            x = 10 // b
        return x
    except ZeroDivisionError:
        return None


def assert_positive(n):
    assert n > 0, n
    return n


def groups(kind):
    log = []
    try:
        if kind == "both":
            raise ExceptionGroup("g", [ValueError(1), KeyError(2)])
        if kind == "value":
            raise ExceptionGroup("g", [ValueError(1)])
        log.append("none")
    except* ValueError:
        log.append("value")
    except* KeyError:
        log.append("key")
    return log


def return_value_raises(kind, items):
    # Returns whose value raises: the path is counted before the value (when no
    # with or finally follows the return), so the count must be taken back.
    for item in items:
        if item < 0:
            return fail(kind).upper()
    try:
        return {"a": 1}[kind]
    except KeyError:
        return len(fail(kind))


def drive():
    out = []
    for kind, items in (("ok", [1, -1]), ("value", [-1]), ("a", []), ("key", []),
                        ("oops", [2]), ("ok", [])):
        try:
            out.append(return_value_raises(kind, items))
        except Exception as err:
            out.append(type(err).__name__)
    for kind in ("ok", "value", "key"):
        out.append(handlers(kind))
    for kind in ("ok", "value", "key", "oops"):
        try:
            out.append(reraise(kind))
        except Exception as err:
            out.append(type(err).__name__)
    out.append(finally_paths(2))
    out.append(finally_paths(6))
    out.append(finally_with_exception("ok"))
    out.append(finally_with_exception("value"))
    out.append(return_in_finally("value"))
    out.append(return_in_finally("ok"))
    for kind in ("ok", "value"):
        try:
            out.append(handler_raises(kind))
        except KeyError:
            out.append("key from handler")
    try:
        escape_from_loop([1, 2, 0, 4])
    except ZeroDivisionError:
        out.append("zero")
    out.append(escape_from_loop([1, 2]))
    out.append([nested_handlers(a, b) for a, b in ((1, 1), (0, 2), (0, 0))])
    for n in (1, 0):
        try:
            out.append(assert_positive(n))
        except AssertionError:
            out.append("assert")
    out.append(groups("none"))
    out.append(groups("value"))
    out.append(groups("both"))
    return out
