"""Tests of the source oracle (`tests/source_oracle.py`) against path counts worked out by hand.

Each test writes small functions into a module of its own, runs them under `SourceOracle`
and compares the oracle's profile with the profile counted by hand from DESIGN.md §4 (the
comments give the count). A path is written ``(units, start, end)``: the first line of each
statement executed, in order; how the path started (``entry``, ``header``, ``handler``);
how it ended (``return``, ``backedge``, ``raise``, ``exception``, ``reraise``). The module
line numbers are given in the source listings (``# 3`` is line 3). Nothing here imports
pathprof: the oracle must stand on the source and the line events alone.
"""

from __future__ import annotations

import contextlib
import importlib.util
import itertools
import sys
import textwrap
import threading
import types
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from .source_oracle import SourceOracle

_modules = itertools.count()


def _load(tmp_path: Path, source: str) -> tuple[types.ModuleType, str]:
    """Write ``source`` (dedented; its first line is line 1) to a module of its own, import it."""
    name = f"source_oracle_case_{next(_modules)}"
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, str(path)


def _oracle(tmp_path: Path, source: str) -> tuple[SourceOracle, types.ModuleType]:
    module, path = _load(tmp_path, source)
    return SourceOracle([path]), module


def _by_name(oracle: SourceOracle) -> dict[str, Counter[Any]]:
    return {key[1]: counter for key, counter in oracle.paths.items()}


def _key(oracle: SourceOracle, qualname: str) -> tuple[str, str, int]:
    (key,) = [key for key in oracle.functions if key[1] == qualname]
    return key


def test_issue_loops_whose_handlers_go_back_to_the_header(tmp_path: Path) -> None:
    """The two functions of the issue: a handler at the end of a loop body goes back to the
    header, so every iteration's path starts at the header, and an exception caught in the
    body makes two paths of its iteration (cut at the raise, then handler -> header)."""
    oracle, m = _oracle(
        tmp_path,
        """\
        def total_lengths(lines):                     # 1
            n = 0                                     # 2
            for line in lines:                        # 3
                try:                                  # 4
                    n += len(line.encode("ascii"))    # 5
                except UnicodeEncodeError:            # 6
                    n -= 1                            # 7
            return n                                  # 8


        def drain(queue):                             # 11
            got = []                                  # 12
            while queue:                              # 13
                item = queue.pop()                    # 14
                try:                                  # 15
                    got.append(1 // item)             # 16
                except ZeroDivisionError:             # 17
                    continue                          # 18
            return got                                # 19
        """,
    )
    oracle.run(lambda: m.total_lengths(["ab", "é", "cd", "ü", "x"] * 10))
    oracle.run(lambda: m.drain([1, 0, 2, 0, 0, 3] * 5))
    paths = _by_name(oracle)
    # 50 lines, 30 ASCII (the first is "ab"), 20 not.
    assert paths["total_lengths"] == {
        ((2, 3, 4, 5), "entry", "backedge"): 1,  # entry, first line ("ab"), back
        ((3, 4, 5), "header", "backedge"): 29,  # the other ASCII lines
        ((3, 4), "header", "exception"): 20,  # not ASCII: cut in the try's block (4-5)
        ((6, 7), "handler", "backedge"): 20,  # ... then the handler goes back
        ((3, 8), "header", "return"): 1,  # exhausted
    }
    # 30 items popped from the end (3 first), 15 zeros.
    assert paths["drain"] == {
        ((12, 13, 14, 15, 16), "entry", "backedge"): 1,  # entry, 3, back
        ((13, 14, 15, 16), "header", "backedge"): 14,  # the other non-zero items
        ((13, 14), "header", "exception"): 15,  # zero: cut in the try's block (14-16)
        ((17, 18), "handler", "backedge"): 15,  # ... continue
        ((13, 19), "header", "return"): 1,  # queue empty
    }
    total, drain = _key(oracle, "total_lengths"), _key(oracle, "drain")
    assert (oracle.executions(total), oracle.counts(total)) == (71, [1, 1, 20, 20, 29])
    assert (oracle.executions(drain), oracle.counts(drain)) == (46, [1, 1, 14, 15, 15])
    assert oracle.distinguishable(total)
    assert oracle.distinguishable(drain)
    assert oracle.not_compared == {}
    # Without the cut paths (whose identity depends on where in a block the cut is).
    assert oracle.counts(total, cuts=False) == [1, 1, 20, 29]


def test_nested_loops(tmp_path: Path) -> None:
    """An inner loop's exhaustion at the end of the outer body is a back edge of the outer
    loop: the inner header's last test is a path of its own."""
    oracle, m = _oracle(
        tmp_path,
        """\
        def nested(rows):             # 1
            total = 0                 # 2
            for row in rows:          # 3
                for x in row:         # 4
                    total += x        # 5
            return total              # 6
        """,
    )
    assert oracle.run(lambda: m.nested([[1, 2], [], [3]])) == 6
    assert _by_name(oracle)["nested"] == {
        ((2, 3, 4, 5), "entry", "backedge"): 1,  # row 1, x = 1, back to 4
        ((4, 5), "header", "backedge"): 1,  # x = 2
        ((4,), "header", "backedge"): 2,  # row 1 and row 3 exhausted: back to 3
        ((3, 4), "header", "backedge"): 1,  # row 2, empty: at once back to 3
        ((3, 4, 5), "header", "backedge"): 1,  # row 3, x = 3
        ((3, 6), "header", "return"): 1,  # rows exhausted
    }


def test_while_true_with_break_and_continue(tmp_path: Path) -> None:
    """``while True`` has no test: its header is the ``while`` line, which CPython reports
    at the jump back (and ``continue`` jumps to); it is never recorded in a path."""
    oracle, m = _oracle(
        tmp_path,
        """\
        def countdown(n):                     # 1
            steps = 0                         # 2
            while True:                       # 3
                n -= 1                        # 4
                if n <= 0:                    # 5
                    break                     # 6
                steps += 1                    # 7
            return steps                      # 8


        def evens(items):                     # 11
            out = []                          # 12
            i = 0                             # 13
            while True:                       # 14
                i += 1                        # 15
                if i > len(items):            # 16
                    return out                # 17
                if items[i - 1] % 2:          # 18
                    continue                  # 19
                out.append(items[i - 1])      # 20
        """,
    )
    oracle.run(lambda: (m.countdown(3), m.countdown(1), m.evens([1, 2, 3])))
    paths = _by_name(oracle)
    assert paths["countdown"] == {
        ((2, 4, 5, 7), "entry", "backedge"): 1,  # countdown(3): n = 2
        ((3, 4, 5, 7), "header", "backedge"): 1,  # n = 1
        ((3, 4, 5, 6, 8), "header", "return"): 1,  # n = 0
        ((2, 4, 5, 6, 8), "entry", "return"): 1,  # countdown(1)
    }
    assert paths["evens"] == {
        ((12, 13, 15, 16, 18, 19), "entry", "backedge"): 1,  # 1: odd, continue
        ((14, 15, 16, 18, 20), "header", "backedge"): 1,  # 2: kept
        ((14, 15, 16, 18, 19), "header", "backedge"): 1,  # 3: odd, continue
        ((14, 15, 16, 17), "header", "return"): 1,  # past the end
    }


def test_for_else(tmp_path: Path) -> None:
    """The ``else`` of a loop is outside its body: reaching it is the exhausted header's
    path, not a back edge."""
    oracle, m = _oracle(
        tmp_path,
        """\
        def find(items, target):                  # 1
            for i, item in enumerate(items):      # 2
                if item == target:                # 3
                    break                         # 4
            else:                                 # 5
                return -1                         # 6
            return i                              # 7
        """,
    )
    oracle.run(lambda: (m.find([5, 7], 7), m.find([5], 9), m.find([], 1)))
    assert _by_name(oracle)["find"] == {
        ((2, 3), "entry", "backedge"): 2,  # 5 in both non-empty calls
        ((2, 3, 4, 7), "header", "return"): 1,  # 7 found
        ((2, 6), "header", "return"): 1,  # [5] exhausted: else
        ((2, 6), "entry", "return"): 1,  # [] exhausted at once
    }


def test_return_through_finally_inside_a_loop(tmp_path: Path) -> None:
    """A ``return`` in a ``try`` runs the ``finally`` then returns; falling off the ``try``
    runs the ``finally`` then goes back to the header."""
    oracle, m = _oracle(
        tmp_path,
        """\
        def first_negative(items):    # 1
            checked = 0               # 2
            for x in items:           # 3
                try:                  # 4
                    if x < 0:         # 5
                        return x      # 6
                finally:              # 7
                    checked += 1      # 8
            return None               # 9
        """,
    )
    oracle.run(lambda: [m.first_negative(xs) for xs in ([1, -2, 3], [], [4])])
    assert _by_name(oracle)["first_negative"] == {
        ((2, 3, 4, 5, 8), "entry", "backedge"): 2,  # 1 of the first call, 4 of the third
        ((3, 4, 5, 6, 8), "header", "return"): 1,  # -2
        ((2, 3, 9), "entry", "return"): 1,  # []
        ((3, 9), "header", "return"): 1,  # [4] exhausted
    }


def test_with_that_swallows_inside_a_loop(tmp_path: Path) -> None:
    """A ``with`` whose ``__exit__`` swallows the exception starts a path (at the ``with``)
    that goes back to the header. A normal exit reports the ``with`` line again."""
    oracle, m = _oracle(
        tmp_path,
        """\
        import contextlib                                     # 1


        def safe_inverses(items):                             # 4
            total = 0                                         # 5
            for x in items:                                   # 6
                with contextlib.suppress(ZeroDivisionError):  # 7
                    total += 1 // x                           # 8
            return total                                      # 9
        """,
    )
    assert oracle.run(lambda: m.safe_inverses([1, 0, 2, 0])) == 1
    assert _by_name(oracle)["safe_inverses"] == {
        ((5, 6, 7, 8, 7), "entry", "backedge"): 1,  # 1
        ((6, 7), "header", "exception"): 2,  # the zeros: cut in the with's block (7-8)
        ((7,), "handler", "backedge"): 2,  # ... the with swallows, back to the header
        ((6, 7, 8, 7), "header", "backedge"): 1,  # 2
        ((6, 9), "header", "return"): 1,
    }


def test_generator_consumed_in_part_then_closed(tmp_path: Path) -> None:
    """A generator's path spans its ``yield``s; closing it at a ``yield`` ends the path there
    by an exception (3.11 and 3.12 run the close, 3.13 does not run a generator suspended
    outside any ``try``: the oracle sees it closed when run() ends). A generator closed before
    it started ran no call."""
    oracle, m = _oracle(
        tmp_path,
        """\
        def numbers(n):               # 1
            i = 0                     # 2
            while i < n:              # 3
                yield i               # 4
                i += 1                # 5
            return i                  # 6


        def take_two():               # 9
            gen = numbers(10)         # 10
            first = next(gen)         # 11
            second = next(gen)        # 12
            gen.close()               # 13
            numbers(5).close()        # 14
            return first + second     # 15
        """,
    )
    assert oracle.run(m.take_two) == 1
    assert oracle.run(lambda: list(m.numbers(2))) == [0, 1]
    paths = _by_name(oracle)
    assert paths["numbers"] == {
        ((2, 3, 4, 5), "entry", "backedge"): 2,  # yields 0, resumes, back to the test
        ((3, 4), "header", "exception"): 1,  # take_two: yields 1, closed at the yield
        ((3, 4, 5), "header", "backedge"): 1,  # list: yields 1, resumes, back
        ((3, 6), "header", "return"): 1,  # list: i == 2
    }
    assert paths["take_two"] == {((10, 11, 12, 13, 14, 15), "entry", "return"): 1}
    assert oracle.not_compared == {}


def test_generator_still_suspended_or_started_before_run_is_not_compared(
    tmp_path: Path,
) -> None:
    """A generator left suspended when run() ends has an unfinished path, and one started
    before run() is first seen mid-call: the oracle says so instead of guessing."""
    oracle, m = _oracle(
        tmp_path,
        """\
        def ticks():      # 1
            yield 1       # 2
            yield 2       # 3
        """,
    )
    kept = []
    key = _key(oracle, "ticks")

    def leave_suspended() -> None:
        gen = m.ticks()
        next(gen)
        kept.append(gen)

    oracle.run(leave_suspended)
    assert "still suspended" in oracle.not_compared[key]
    assert oracle.executions(key) == 0

    started = m.ticks()
    next(started)
    second = SourceOracle(oracle.files)
    assert second.run(lambda: next(started)) == 2
    assert "mid-call" in second.not_compared[key]
    kept.clear()
    started.close()


def test_coroutine_driven_by_send(tmp_path: Path) -> None:
    """``await`` does not cut: the coroutine's path goes on where ``send`` resumes it; the
    ``StopIteration`` that ends it is an exception in the caller's frame."""
    oracle, m = _oracle(
        tmp_path,
        """\
        class Ask:                                    # 1
            def __await__(self):                      # 2
                value = yield "ask"                   # 3
                return value                          # 4


        async def adder(limit):                       # 7
            total = 0                                 # 8
            while total < limit:                      # 9
                total += await Ask()                  # 10
            return total                              # 11


        def drive():                                  # 14
            coro = adder(5)                           # 15
            coro.send(None)                           # 16
            coro.send(2)                              # 17
            try:                                      # 18
                coro.send(4)                          # 19
            except StopIteration as stop:             # 20
                return stop.value                     # 21


        async def done():                             # 24
            return 1                                  # 25


        async def both():                             # 28
            total = await done() + await Ask()        # 29
            return total                              # 30


        def drive_both():                             # 33
            coro = both()                             # 34
            coro.send(None)                           # 35
            try:                                      # 36
                coro.send(5)                          # 37
            except StopIteration as stop:             # 38
                return stop.value                     # 39
        """,
    )
    assert oracle.run(m.drive) == 6
    assert oracle.run(m.drive_both) == 6
    paths = _by_name(oracle)
    assert paths["adder"] == {
        ((8, 9, 10), "entry", "backedge"): 1,  # suspended at the await, resumed with 2
        ((9, 10), "header", "backedge"): 1,  # suspended, resumed with 4
        ((9, 11), "header", "return"): 1,  # 6 >= 5
    }
    assert paths["Ask.__await__"] == {((3, 4), "entry", "return"): 3}
    assert paths["drive"] == {
        ((15,), "entry", "exception"): 1,  # send raises StopIteration: cut in block 15-19
        ((20, 21), "handler", "return"): 1,
    }
    # done() ends with a StopIteration in both's frame, then the same statement suspends.
    assert paths["both"] == {((29, 30), "entry", "return"): 1}
    assert paths["done"] == {((25,), "entry", "return"): 1}
    assert oracle.not_compared == {}


def test_stop_iteration_thrown_into_a_generator(tmp_path: Path) -> None:
    """A StopIteration thrown in at a yield becomes a RuntimeError that leaves the frame
    (3.11 and 3.12 report the return event at the yield): the path ends there."""
    oracle, m = _oracle(
        tmp_path,
        """\
        def gen():                            # 1
            x = yield 1                       # 2
            yield x                           # 3


        def program():                        # 6
            g = gen()                         # 7
            next(g)                           # 8
            try:                              # 9
                g.throw(StopIteration)        # 10
            except RuntimeError:              # 11
                return 1                      # 12
        """,
    )
    assert oracle.run(m.program) == 1
    assert _by_name(oracle)["gen"] == {((2,), "entry", "exception"): 1}
    assert oracle.not_compared == {}


def test_async_for_and_async_with(tmp_path: Path) -> None:
    """``async for`` ends on ``StopAsyncIteration`` handled inside the loop statement (no
    cut); an ``async with`` whose ``__aexit__`` swallows starts a path at the ``with``."""
    oracle, m = _oracle(
        tmp_path,
        """\
        import asyncio                                    # 1


        async def agen(n):                                # 4
            for i in range(n):                            # 5
                yield i                                   # 6


        class Guard:                                      # 9
            async def __aenter__(self):                   # 10
                return self                               # 11

            async def __aexit__(self, kind, value, tb):   # 13
                return kind is ValueError                 # 14


        async def consume(n):                             # 17
            total = 0                                     # 18
            async for i in agen(n):                       # 19
                async with Guard():                       # 20
                    if i == 1:                            # 21
                        raise ValueError(i)               # 22
                    total += i                            # 23
            return total                                  # 24


        def main():                                       # 27
            return asyncio.run(consume(3))                # 28
        """,
    )
    assert oracle.run(m.main) == 2
    paths = _by_name(oracle)
    assert paths["consume"] == {
        ((18, 19, 20, 21, 23, 20), "entry", "backedge"): 1,  # i = 0; the exit reports 20
        ((19, 20, 21, 22), "header", "raise"): 1,  # i = 1: the raise statement
        ((20,), "handler", "backedge"): 1,  # ... Guard swallows it
        ((19, 20, 21, 23, 20), "header", "backedge"): 1,  # i = 2
        ((19, 24), "header", "return"): 1,  # exhausted (StopAsyncIteration: no cut)
    }
    assert paths["agen"] == {
        ((5, 6), "entry", "backedge"): 1,
        ((5, 6), "header", "backedge"): 2,
        ((5,), "header", "return"): 1,
    }
    assert paths["Guard.__aenter__"] == {((11,), "entry", "return"): 3}
    assert paths["Guard.__aexit__"] == {((14,), "entry", "return"): 3}


def test_function_run_in_a_thread(tmp_path: Path) -> None:
    """Threads started inside run() are traced too (threading.settrace)."""
    oracle, m = _oracle(
        tmp_path,
        """\
        import threading                                              # 1


        def work(items, out):                                         # 4
            for x in items:                                           # 5
                if x % 2:                                             # 6
                    out.append(x)                                     # 7


        def in_thread(items):                                         # 10
            out = []                                                  # 11
            worker = threading.Thread(target=work, args=(items, out)) # 12
            worker.start()                                            # 13
            worker.join()                                             # 14
            return out                                                # 15
        """,
    )
    before = threading.gettrace()
    assert oracle.run(lambda: m.in_thread([1, 2, 3])) == [1, 3]
    assert threading.gettrace() is before
    paths = _by_name(oracle)
    assert paths["work"] == {
        ((5, 6, 7), "entry", "backedge"): 1,  # 1
        ((5, 6), "header", "backedge"): 1,  # 2
        ((5, 6, 7), "header", "backedge"): 1,  # 3
        ((5,), "header", "return"): 1,  # exhausted: the implicit return is on line 5
    }
    assert paths["in_thread"] == {((11, 12, 13, 14, 15), "entry", "return"): 1}
    assert oracle.not_compared == {}


def test_recursion(tmp_path: Path) -> None:
    """Each frame is a call of its own."""
    oracle, m = _oracle(
        tmp_path,
        """\
        def fact(n):                      # 1
            if n <= 1:                    # 2
                return 1                  # 3
            return n * fact(n - 1)        # 4
        """,
    )
    assert oracle.run(lambda: m.fact(4)) == 24
    assert _by_name(oracle)["fact"] == {
        ((2, 4), "entry", "return"): 3,  # 4, 3, 2
        ((2, 3), "entry", "return"): 1,  # 1
    }


def test_exception_leaving_the_function(tmp_path: Path) -> None:
    """An exception that nothing in the function catches ends the call's path there; a
    ``raise`` statement ends it as ``raise``."""
    oracle, m = _oracle(
        tmp_path,
        """\
        def parse(text):                          # 1
            value = int(text)                     # 2
            if value < 0:                         # 3
                raise ValueError(text)            # 4
            return value                          # 5


        def parse_all(texts):                     # 8
            out = []                              # 9
            for text in texts:                    # 10
                try:                              # 11
                    out.append(parse(text))       # 12
                except ValueError:                # 13
                    out.append(None)              # 14
            return out                            # 15
        """,
    )
    assert oracle.run(lambda: m.parse_all(["1", "x", "-2"])) == [1, None, None]
    paths = _by_name(oracle)
    assert paths["parse"] == {
        ((2, 3, 5), "entry", "return"): 1,  # "1"
        ((2,), "entry", "exception"): 1,  # "x": int() raises
        ((2, 3, 4), "entry", "raise"): 1,  # "-2"
    }
    assert paths["parse_all"] == {
        ((9, 10, 11, 12), "entry", "backedge"): 1,  # "1"
        ((10, 11), "header", "exception"): 2,  # "x", "-2": parse raised (block 11-12)
        ((13, 14), "handler", "backedge"): 2,
        ((10, 15), "header", "return"): 1,
    }


def test_except_clauses_that_do_not_match_add_no_path(tmp_path: Path) -> None:
    """Clauses tested without matching are dispatch, not paths: the handler path starts at
    the clause that matches; an exception no clause matches leaves with no further path."""
    oracle, m = _oracle(
        tmp_path,
        """\
        def classify(x):                  # 1
            try:                          # 2
                return 10 // x            # 3
            except TypeError:             # 4
                return "type"             # 5
            except ZeroDivisionError:     # 6
                return "zero"             # 7


        def lookup(mapping, key):         # 10
            try:                          # 11
                return mapping[key]       # 12
            except KeyError:              # 13
                return None               # 14
        """,
    )

    def program() -> None:
        m.classify(2)
        m.classify(0)
        m.classify("a")
        m.lookup({1: 2}, 1)
        m.lookup({}, 1)
        with pytest.raises(IndexError):
            m.lookup([], 1)

    oracle.run(program)
    paths = _by_name(oracle)
    assert paths["classify"] == {
        ((2, 3), "entry", "return"): 1,  # 2
        ((2,), "entry", "exception"): 2,  # 0 and "a" (block 2-3)
        ((6, 7), "handler", "return"): 1,  # 0: line 4 was tested, no path through it
        ((4, 5), "handler", "return"): 1,  # "a"
    }
    assert paths["lookup"] == {
        ((11, 12), "entry", "return"): 1,
        ((11,), "entry", "exception"): 2,  # {} and []
        ((13, 14), "handler", "return"): 1,  # KeyError; the IndexError is not caught
    }


def test_except_star_clauses_hand_over_or_flow_on(tmp_path: Path) -> None:
    """``except*`` (DESIGN.md §4): the first clause that matches starts a path; a clause's
    end that hands the group's rest over -- to a later clause that matches, or to the
    re-raise -- ends its path ``reraise``, and the next clause starts one; the end of a
    clause whose group is then fully handled flows on without a cut, however many later
    clauses are tested after it (each of their lines gets a line event, and 3.11 lends the
    try's end code the last clause's line)."""
    oracle, m = _oracle(
        tmp_path,
        """\
        def split(kinds):                     # 1
            log = []                          # 2
            for kind in kinds:                # 3
                try:                          # 4
                    raise ExceptionGroup("g", [E(0) for E in kind])
                except* ValueError:           # 6
                    log.append("v")           # 7
                except* TypeError:            # 8
                    log.append("t")           # 9
                except* KeyError:             # 10
                    log.append("k")           # 11
            return log                        # 12


        def rest(kind):                       # 15
            try:                              # 16
                raise ExceptionGroup("g", [E(0) for E in kind])
            except* ValueError:               # 18
                pass                          # 19
            finally:                          # 20
                kind = None                   # 21
            return kind                       # 22
        """,
    )

    def program() -> None:
        m.split([(ValueError,), (ValueError, TypeError), (TypeError, KeyError), (KeyError,)])
        m.rest((ValueError,))
        with pytest.raises(ExceptionGroup):
            m.rest((ValueError, KeyError))

    oracle.run(program)
    paths = _by_name(oracle)
    assert paths["split"] == {
        ((2, 3, 4, 5), "entry", "raise"): 1,
        ((3, 4, 5), "header", "raise"): 3,
        ((6, 7), "handler", "backedge"): 1,  # (V,): lines 8 and 10 tested, no cut
        ((6, 7), "handler", "reraise"): 1,  # (V, T): handed over to line 8
        ((8, 9), "handler", "backedge"): 1,  # (V, T)
        ((8, 9), "handler", "reraise"): 1,  # (T, K)
        ((10, 11), "handler", "backedge"): 2,  # (T, K) and (K,)
        ((3, 12), "header", "return"): 1,
    }
    assert paths["rest"] == {
        ((16, 17), "entry", "raise"): 2,
        ((18, 19, 21, 22), "handler", "return"): 1,  # flows on into the finally
        ((18, 19), "handler", "reraise"): 1,  # the KeyError goes on: the try re-raises
        ((21,), "handler", "reraise"): 1,  # the finally entered by it
    }
    assert oracle.not_compared == {}


def test_bare_raise_and_finally_reraise(tmp_path: Path) -> None:
    """A bare ``raise`` and the end of a ``finally`` entered by an exception re-raise
    without an exception event: they end their paths ``reraise``."""
    oracle, m = _oracle(
        tmp_path,
        """\
        def careful(x):                           # 1
            try:                                  # 2
                try:                              # 3
                    return 1 // x                 # 4
                except ZeroDivisionError:         # 5
                    x = None                      # 6
                    raise                         # 7
                finally:                          # 8
                    x = 0                         # 9
            except ZeroDivisionError:             # 10
                return -1                         # 11


        def double_fault(x):                      # 14
            try:                                  # 15
                return 1 // x                     # 16
            finally:                              # 17
                x = 1 // x                        # 18
                x = 2                             # 19
        """,
    )

    def program() -> None:
        m.careful(0)
        m.careful(1)
        m.double_fault(2)
        with pytest.raises(ZeroDivisionError):
            m.double_fault(0)

    oracle.run(program)
    paths = _by_name(oracle)
    assert paths["careful"] == {
        ((2,), "entry", "exception"): 1,  # block 2-4
        ((5, 6, 7), "handler", "reraise"): 1,  # the bare raise
        ((9,), "handler", "reraise"): 1,  # the finally, entered by it, re-raises
        ((10, 11), "handler", "return"): 1,
        ((2, 3, 4, 9), "entry", "return"): 1,  # careful(1)
    }
    # 3.11 reports a line event (line 19) in the cleanup that re-raises the finally's own
    # exception: no statement runs there.
    assert paths["double_fault"] == {
        ((15, 16, 18, 19), "entry", "return"): 1,
        ((15,), "entry", "exception"): 1,
        ((18,), "handler", "exception"): 1,
    }


def test_generator_finally_run_by_close(tmp_path: Path) -> None:
    """Closing a generator in a ``try`` runs its ``finally`` (a handler path that re-raises
    GeneratorExit); 3.11 reports a line event at that re-raise, which runs no statement."""
    oracle, m = _oracle(
        tmp_path,
        """\
        def guarded(flag):        # 1
            try:                  # 2
                yield 1           # 3
            finally:              # 4
                if flag:          # 5
                    flag = 0      # 6


        def program():            # 9
            for flag in (0, 1):   # 10
                gen = guarded(flag)   # 11
                next(gen)         # 12
                gen.close()       # 13
        """,
    )
    oracle.run(m.program)
    assert _by_name(oracle)["guarded"] == {
        ((2,), "entry", "exception"): 2,  # block 2-3
        ((5,), "handler", "reraise"): 1,
        ((5, 6), "handler", "reraise"): 1,
    }


def test_break_out_of_a_loop_in_a_finally_entered_by_an_exception(tmp_path: Path) -> None:
    """A ``break`` that leaves the ``finally`` for its re-raise: 3.12 makes the break a copy
    of the re-raise, whose line event is the break's own (not one of 3.11's borrowed lines
    at a re-raise, which are dropped)."""
    oracle, m = _oracle(
        tmp_path,
        """\
        def settle(x):                # 1
            try:                      # 2
                return 1 // x         # 3
            finally:                  # 4
                while True:           # 5
                    if x:             # 6
                        break         # 7
                    x = 1             # 8
        """,
    )

    def program() -> None:
        m.settle(1)
        with pytest.raises(ZeroDivisionError):
            m.settle(0)

    oracle.run(program)
    assert _by_name(oracle)["settle"] == {
        ((2, 3, 6, 7), "entry", "return"): 1,  # settle(1)
        ((2,), "entry", "exception"): 1,  # settle(0) (block 2-3)
        ((5, 6, 8), "handler", "backedge"): 1,  # the finally, x == 0
        ((5, 6, 7), "header", "reraise"): 1,  # x == 1: break, then re-raise
    }


def test_generator_destroyed_without_running_again_is_not_compared(tmp_path: Path) -> None:
    """A generator that yields while being closed ignores GeneratorExit; if its finaliser's
    close yields again, it is destroyed suspended, its last path never ended: not compared
    (unlike a 3.13 generator closed at a yield outside any try, which ends its path)."""
    oracle, m = _oracle(
        tmp_path,
        """\
        def stubborn():           # 1
            try:                  # 2
                yield 1           # 3
            finally:              # 4
                try:              # 5
                    yield 2       # 6
                finally:          # 7
                    yield 3       # 8
        """,
    )

    def program() -> None:
        gen = m.stubborn()
        next(gen)
        with pytest.raises(RuntimeError):
            gen.close()  # GeneratorExit at 3, the finally yields 2
        hook = sys.unraisablehook
        sys.unraisablehook = lambda unraisable: None
        try:
            del gen  # the finaliser's close: GeneratorExit at 6, the inner finally yields 3
        finally:
            sys.unraisablehook = hook

    oracle.run(program)
    key = _key(oracle, "stubborn")
    assert oracle.paths[key] == {
        ((2,), "entry", "exception"): 1,  # block 2-3
        ((5,), "handler", "exception"): 1,  # block 5-6
    }
    assert "destroyed" in oracle.not_compared[key]


def test_stop_iteration_handled_inside_a_statement_cuts_nothing(tmp_path: Path) -> None:
    """A generator that returns a value ends a ``for`` loop with a StopIteration that 3.11
    and 3.12 report as an exception in the loop's frame; an exception inside a 3.12+ inlined
    comprehension is reported, and re-reported in its cleanup, on the statement's line."""
    oracle, m = _oracle(
        tmp_path,
        """\
        def produce():                            # 1
            yield 1                               # 2
            return "done"                         # 3


        def total():                              # 6
            s = 0                                 # 7
            for v in produce():                   # 8
                s += v                            # 9
            return s                              # 10


        def inverses(xs):                         # 13
            try:                                  # 14
                return [1 // x for x in xs]       # 15
            except ZeroDivisionError:             # 16
                return None                       # 17
        """,
    )
    oracle.run(lambda: (m.total(), m.inverses([1, 2]), m.inverses([1, 0])))
    paths = _by_name(oracle)
    assert paths["total"] == {
        ((7, 8, 9), "entry", "backedge"): 1,
        ((8, 10), "header", "return"): 1,
    }
    assert paths["produce"] == {((2, 3), "entry", "return"): 1}
    assert paths["inverses"] == {
        ((14, 15), "entry", "return"): 1,
        ((14,), "entry", "exception"): 1,  # block 14-15
        ((16, 17), "handler", "return"): 1,
    }


def test_multi_line_headers_and_statements(tmp_path: Path) -> None:
    """Whichever lines of a multi-line header or statement CPython reports (and how often),
    they name one unit: its first line."""
    oracle, m = _oracle(
        tmp_path,
        """\
        def weigh(pairs):                 # 1
            total = 0                     # 2
            for (name,                    # 3
                 weight) in sorted(       # 4
                    pairs):               # 5
                total += (weight *        # 6
                          2)              # 7
            while (total >                # 8
                   10):                   # 9
                total = (total            # 10
                         - 7)             # 11
            return total                  # 12
        """,
    )
    assert oracle.run(lambda: m.weigh([("a", 1), ("b", 5)])) == 5
    key = _key(oracle, "weigh")
    assert oracle.paths[key] == {
        ((2, 3, 6), "entry", "backedge"): 1,  # a
        ((3, 6), "header", "backedge"): 1,  # b: total 12
        ((3, 8, 10), "header", "backedge"): 1,  # exhausted; 12 > 10: total 5
        ((8, 12), "header", "return"): 1,
    }
    assert oracle.distinguishable(key)


def test_one_line_decision_is_not_distinguishable(tmp_path: Path) -> None:
    """``if c: return`` on one line: both outcomes report the same line, so only the number
    of paths is comparable."""
    oracle, m = _oracle(
        tmp_path,
        """\
        def sign(x):                  # 1
            if x < 0: return -1       # 2
            return 1                  # 3


        def pair(x):                  # 6
            a = x; b = -x             # 7
            return a + b              # 8
        """,
    )
    oracle.run(lambda: [m.sign(x) for x in (-5, 3, 4)] + [m.pair(1)])
    sign, pair = _key(oracle, "sign"), _key(oracle, "pair")
    assert oracle.paths[sign] == {((2,), "entry", "return"): 1, ((2, 3), "entry", "return"): 2}
    assert oracle.executions(sign) == 3
    assert not oracle.distinguishable(sign)
    assert not oracle.distinguishable(pair)  # two statements on a line
    assert "lines holding more than one statement: 2" in oracle.functions[sign].ambiguities
    assert oracle.not_compared == {}


def test_constructs_that_cannot_be_judged(tmp_path: Path) -> None:
    """A loop whose body is on its header's line (its iterations cannot be told from line
    re-reports): the function is in not_compared. A guard on a case's line and a block
    without code make a function not distinguishable."""
    oracle, m = _oracle(
        tmp_path,
        """\
        def spin(n):                          # 1
            while n: n -= 1                   # 2
            return n                          # 3


        def guarded(x):                       # 6
            match x:                          # 7
                case int() if x > 0:          # 8
                    return 1                  # 9
            return 0                          # 10


        def codeless(c):                      # 13
            if c:                             # 14
                global G                      # 15
            return 1                          # 16
        """,
    )
    oracle.run(lambda: (m.spin(3), m.guarded(1), m.codeless(1)))
    spin = _key(oracle, "spin")
    assert "header's line" in oracle.not_compared[spin]
    for name in ("spin", "guarded", "codeless"):
        assert not oracle.distinguishable(_key(oracle, name)), name
    assert set(oracle.not_compared) == {spin}


def test_inserted_statements_on_existing_lines_change_nothing(tmp_path: Path) -> None:
    """An instrumenter that keeps every line number but adds statements on existing lines
    (as pathprof does) must get the same profile: units are named by their first line."""
    plain = """\
        def clip(values, top):            # 1
            out = []                      # 2
            for v in values:              # 3
                if v > top:               # 4
                    v = top               # 5
                out.append(v)             # 6
            return out                    # 7
        """
    probed = """\
        def clip(values, top):
            P.append(0); out = []
            for v in values:
                if v > top:
                    P.append(1); v = top
                out.append(v); P.append(2)
            P.append(3); return out
        P = []
        """
    results = []
    for source in (plain, probed):
        oracle, m = _oracle(tmp_path, source)
        assert oracle.run(lambda m=m: m.clip([1, 5, 2, 9], 3)) == [1, 3, 2, 3]
        (counter,) = oracle.paths.values()
        results.append(counter)
    assert results[0] == results[1]
    assert results[0] == {
        ((2, 3, 4, 6), "entry", "backedge"): 1,
        ((3, 4, 5, 6), "header", "backedge"): 2,
        ((3, 4, 6), "header", "backedge"): 1,
        ((3, 7), "header", "return"): 1,
    }


def test_function_names_and_first_lines(tmp_path: Path) -> None:
    """Functions are keyed as their code objects name them: methods, nested classes,
    ``<locals>``, names declared ``global``, decorated functions (first decorator's line);
    lambdas, comprehensions and class bodies are not functions."""
    oracle, m = _oracle(
        tmp_path,
        """\
        def decorate(fn):                 # 1
            return fn                     # 2


        class Box:                        # 5
            def get(self):                # 6
                return [x for x in (1,)]  # 7

            class Inner:                  # 9
                @decorate                 # 10
                def deep(self):           # 11
                    return (lambda: 2)()  # 12


        def outer():                      # 15
            global made                   # 16

            def inner():                  # 18
                return 3                  # 19

            def made():                   # 21
                return 4                  # 22

            return inner() + made()       # 24
        """,
    )
    codes = [
        m.decorate.__code__,
        m.Box.get.__code__,
        m.Box.Inner.deep.__code__,
        m.outer.__code__,
    ]
    oracle.run(lambda: (m.Box().get(), m.Box.Inner().deep(), m.outer()))
    codes.append(m.made.__code__)
    expected = {(code.co_filename, code.co_qualname, code.co_firstlineno) for code in codes}
    expected.add((codes[0].co_filename, "outer.<locals>.inner", 18))
    assert set(oracle.functions) == expected
    assert ("Box.Inner.deep", 10) in {(key[1], key[2]) for key in oracle.functions}
    assert {key[1] for key in oracle.paths} == {
        "Box.get",
        "Box.Inner.deep",
        "outer",
        "outer.<locals>.inner",
        "made",
    }


def test_tracers_are_restored_and_exceptions_propagate(tmp_path: Path) -> None:
    """run() returns fn's result or raises its exception, and puts back the tracers that were
    installed before it (sys.settrace and threading.settrace)."""
    oracle, m = _oracle(
        tmp_path,
        """\
        def fail():                       # 1
            raise KeyError("x")           # 2
        """,
    )

    def previous(frame: types.FrameType, event: str, arg: Any) -> None:
        return None

    saved, saved_threads = sys.gettrace(), threading.gettrace()
    sys.settrace(previous)
    threading.settrace(previous)
    try:
        with pytest.raises(KeyError):
            oracle.run(m.fail)
        assert oracle.run(lambda: 7) == 7
        assert sys.gettrace() is previous
        assert threading.gettrace() is previous
    finally:
        sys.settrace(saved)
        threading.settrace(saved_threads)  # type: ignore[arg-type]
    assert _by_name(oracle)["fail"] == {((2,), "entry", "raise"): 1}


def test_program_that_switches_the_tracer_off_is_not_compared(tmp_path: Path) -> None:
    """A program that removes or replaces the tracer loses events: the whole run is marked
    not comparable (key None), and the previous tracer is still restored."""
    oracle, m = _oracle(
        tmp_path,
        """\
        import sys                        # 1


        def switch_off():                 # 4
            sys.settrace(None)            # 5
            return 1                      # 6
        """,
    )
    saved = sys.gettrace()
    assert oracle.run(m.switch_off) == 1
    assert sys.gettrace() is saved
    assert None in oracle.not_compared
    assert "tracer" in oracle.not_compared[None]


def test_exception_paths_are_known_by_their_block(tmp_path: Path) -> None:
    """Two statements of one block raising end one path (the profile names a cut path by
    the block it was cut in); a statement in another block ends another. A try whose
    handlers all leave does not end the block: what follows the try is in the body's."""
    oracle, m = _oracle(
        tmp_path,
        """\
        def parse(a, b):              # 1
            x = int(a)                # 2
            y = int(b)                # 3
            try:                      # 4
                z = x // y            # 5
            except ZeroDivisionError: # 6
                return None           # 7
            w = 10 // (z - 1)         # 8
            if w:                     # 9
                w = 1 // (w - 5)      # 10
            return w                  # 11
        """,
    )

    def program() -> None:
        for a, b in (("x", "1"), ("1", "y"), ("6", "2"), ("4", "2"), ("1", "1"), ("3", "0")):
            with contextlib.suppress(ValueError, ZeroDivisionError):
                m.parse(a, b)

    oracle.run(program)
    assert _by_name(oracle)["parse"] == {
        # One block (2-5, and 8 after the try): int("x") at 2, int("y") at 3,
        # 10 // (1 - 1) at 8, and 3 // 0 at 5 (caught: a handler path follows)
        ((2,), "entry", "exception"): 4,
        ((6, 7), "handler", "return"): 1,
        ((2, 3, 4, 5, 8, 9, 10), "entry", "exception"): 1,  # "6", "2": w = 5, 1 // 0
        ((2, 3, 4, 5, 8, 9, 10, 11), "entry", "return"): 1,  # "4", "2": w = 10, then 0
    }


def test_a_for_loops_iterable_and_step_raise_in_different_blocks(tmp_path: Path) -> None:
    """The iterable is computed before the loop; the step (next item) is the header."""
    oracle, m = _oracle(
        tmp_path,
        """\
        def total(source):            # 1
            n = 0                     # 2
            for x in source():        # 3
                n += x                # 4
            return n                  # 5


        def broken():                 # 8
            yield 1                   # 9
            raise ValueError          # 10
        """,
    )

    def program() -> None:
        m.total(lambda: [1, 2])
        for source in (lambda: 5, m.broken):  # 5 is not iterable; broken fails at a step
            with pytest.raises((TypeError, ValueError)):
                m.total(source)

    oracle.run(program)
    assert _by_name(oracle)["total"] == {
        ((2, 3, 4), "entry", "backedge"): 2,  # [1, 2] and broken: the first item
        ((3, 4), "header", "backedge"): 1,  # [1, 2]: 2
        ((3, 5), "header", "return"): 1,
        ((2,), "entry", "exception"): 1,  # iter(5): in the block of 2
        ((3,), "header", "exception"): 1,  # broken's second next(): in the header
    }


def test_ignored_module_copies_are_not_observed(tmp_path: Path) -> None:
    """Functions of a module object the oracle is told to ignore (an earlier copy of a
    module a test imports afresh) are not observed; the same file's fresh copy is."""
    module, path = _load(tmp_path, "def f(x):\n    return x + 1\n")
    spec = importlib.util.spec_from_file_location("fresh_copy_of_it", path)
    assert spec is not None
    assert spec.loader is not None
    fresh = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fresh)
    oracle = SourceOracle([path])
    oracle.ignore([module])
    oracle.run(lambda: (module.f(1), fresh.f(2), fresh.f(3)))
    assert _by_name(oracle)["f"] == {((2,), "entry", "return"): 2}


def test_the_oracle_takes_nothing_from_pathprof() -> None:
    """It imports only the standard library: no part of pathprof (its CFG, its block
    map, its runtime) can agree with pathprof's mistakes by sharing them."""
    import ast as syntax

    from . import source_oracle

    tree = syntax.parse(Path(source_oracle.__file__).read_text(encoding="utf-8"))
    imported = {alias.name for node in syntax.walk(tree) if isinstance(node, syntax.Import)
                for alias in node.names}
    imported |= {node.module or "" for node in syntax.walk(tree)
                 if isinstance(node, syntax.ImportFrom)}
    assert imported
    assert all(name.split(".")[0] in sys.stdlib_module_names or name == "__future__"
               for name in imported), imported
