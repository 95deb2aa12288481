"""Loops whose body catches an exception, and handlers that raise (issue 17).

Every iteration's path starts at the loop header (DESIGN §4): a path that starts in
a handler (or after a with that swallowed, or in a finally entered by an exception)
inside a loop ends where it goes back to the header, like any other iteration.

``EXPECTED`` gives, for each function, the number of path executions and the sorted
path counts of one ``drive()``, counted by hand; the comments show the count.
"""


def total_lengths(lines):
    n = 0
    for line in lines:
        try:
            n += len(line.encode("ascii"))
        except UnicodeEncodeError:
            n -= 1
    return n


# 50 lines, 30 ASCII, 20 not. entry -> first (ASCII) iteration -> back: 1;
# header -> ASCII -> back: 29; header -> not ASCII, cut in the try: 20;
# handler -> back: 20; header -> exhausted -> return: 1. 71 executions.


def drain(queue):
    got = []
    while queue:
        item = queue.pop()
        try:
            got.append(1 // item)
        except ZeroDivisionError:
            continue
    return got


# 30 items popped from the end (3 first), 15 zeros. entry -> first (3) -> back: 1;
# header -> non-zero -> back: 14; header -> zero, cut: 15; handler -> continue: 15;
# header -> false -> return: 1. 46 executions.


def parse_or_default(text):
    try:
        return int(text)
    except ValueError:
        return -1


# "1", "x", "2", "y", "z": entry -> return: 2; entry, cut in `return int(text)`: 3;
# handler -> return -1: 3. 8 executions.


def before(a, b):
    try:
        return a < b
    except TypeError:
        return None


# (1, 2), (1, "a"), ("a", "b"), (None, 1): entry -> return: 2; entry, cut in the
# comparison: 2; handler -> return None: 2. 6 executions.


def first_number(words):
    for word in words:
        try:
            return int(word)
        except ValueError:
            pass
    return None


# ["a", "b", "7", "c"], ["x"], []: entry -> header -> cut in the return: 2 (a, x);
# entry -> header -> exhausted -> return None: 1 ([]); handler -> back: 3 (a, b, x);
# header -> cut: 1 (b); header -> return int: 1 (7); header -> exhausted -> return
# None: 1 (after x). 9 executions.


class Registry:
    def __init__(self, items):
        self.items = items

    def missing(self, key):
        raise LookupError(key)

    def get(self, key):
        try:
            return self.items[key]
        except KeyError:
            self.missing(key)


# get: "a", "b" found: entry -> return: 2; "z", "y": entry, cut: 2, and the handler's
# path cut where `self.missing` raises (the exception leaves from the handler): 2.
# missing: entry -> raise: 2 here, and 1 from lookup_all below.


def lookup_all(registry, keys):
    found = []
    for key in keys:
        try:
            found.append(registry.items[key])
        except KeyError:
            registry.missing(key)
    return found


# ["a", "b", "q", "a"] (raises at "q"), then ["b"]: entry -> found -> back: 2 (a, b);
# header -> found -> back: 1 (b); header -> cut: 1 (q); handler -> cut: 1 (q);
# header -> exhausted -> return: 1. 6 executions.


class Suppress:
    def __enter__(self):
        return self

    def __exit__(self, kind, value, traceback):
        return kind is ValueError


def retry(attempts):
    tries = 0
    while tries < 5:
        tries += 1
        with Suppress():
            if tries in attempts:
                raise ValueError(tries)
    return tries


# attempts {2, 3}: entry -> first iteration -> back: 1; header -> raise: 2; after the
# with that swallowed -> back: 2; header -> no raise -> back: 2 (4, 5); header ->
# false -> return: 1. 8 executions.


def cleanup_each(items):
    done = []
    for item in items:
        try:
            if item < 0:
                raise ValueError(item)
            done.append(item)
        except ValueError:
            done.append(0)
        finally:
            done.append("f")
    return done


# [1, -1, 2], then [3, "x"] (TypeError in the test, no handler matches):
# entry -> append -> finally -> back: 2 (1, 3); header -> raise: 1 (-1);
# handler -> finally -> back: 1; header -> append -> finally -> back: 1 (2);
# header -> exhausted -> return: 1; header, cut in the test: 1 ("x");
# finally entered by the exception -> re-raise: 1. 8 executions.


def safe_inverses(values):
    for v in values:
        try:
            yield 1 / v
        except ZeroDivisionError:
            yield None


# list(safe_inverses([1, 0, 2])): entry -> yield -> back: 1; header -> cut: 1 (0);
# handler -> yield None -> back: 1; header -> yield -> back: 1 (2); header ->
# exhausted -> return: 1. 5 executions (yields do not cut).


EXPECTED = {
    "total_lengths": (71, [1, 1, 20, 20, 29]),
    "drain": (46, [1, 1, 14, 15, 15]),
    "parse_or_default": (8, [2, 3, 3]),
    "before": (6, [2, 2, 2]),
    "first_number": (9, [1, 1, 1, 1, 2, 3]),
    "Registry.__init__": (1, [1]),
    "Registry.missing": (3, [3]),
    "Registry.get": (6, [2, 2, 2]),
    "lookup_all": (6, [1, 1, 1, 1, 2]),
    "Suppress.__enter__": (5, [5]),
    "Suppress.__exit__": (5, [5]),
    "retry": (8, [1, 1, 2, 2, 2]),
    "cleanup_each": (8, [1, 1, 1, 1, 1, 1, 2]),
    "safe_inverses": (5, [1, 1, 1, 1, 1]),
}


def drive():
    out = [total_lengths(["ab", "é", "cd", "ü", "x"] * 10),
           drain([1, 0, 2, 0, 0, 3] * 5)]
    out += [parse_or_default(t) for t in ("1", "x", "2", "y", "z")]
    out += [before(a, b) for a, b in ((1, 2), (1, "a"), ("a", "b"), (None, 1))]
    out += [first_number(w) for w in (["a", "b", "7", "c"], ["x"], [])]
    registry = Registry({"a": 1, "b": 2})
    for key in ("a", "z", "b", "y"):
        try:
            out.append(registry.get(key))
        except LookupError as err:
            out.append(f"missing {err}")
    for keys in (["a", "b", "q", "a"], ["b"]):
        try:
            out.append(lookup_all(registry, keys))
        except LookupError as err:
            out.append(f"missing {err}")
    out.append(retry({2, 3}))
    for items in ([1, -1, 2], [3, "x"]):
        try:
            out.append(cleanup_each(items))
        except TypeError:
            out.append("type error")
    out.append(list(safe_inverses([1, 0, 2])))
    return out
