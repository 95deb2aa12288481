"""Unit tests of :mod:`pathprof.python.exits`, what a function's observer notes as an
exception leaves it: the key ``(index, register, lasti, code, context lasti,
closed)`` counted in the module state's ``exits`` dict (and, with the time metric,
the path's time so far added to ``exit_times``). The code is built into a small
function, bound to a holder whose module state is a stand-in offering what the
docstrings say the runtime offers (``exception``, ``getframe``, ``getattr``,
``closed_type``, the dicts), and run; a lasti is compared with the traceback the
exception leaves with."""

from __future__ import annotations

import ast
import sys
import textwrap
import types
from typing import Any

import pytest

from pathprof.python.cfg import build_cfg
from pathprof.python.exits import exception_position, exit_effects
from pathprof.python.names import CLOCK, MODULE, PATH_START, REGISTER
from pathprof.python.nodes import artificial_shell, assign, const, load, observer
from pathprof.python.plan import plan_function
from pathprof.runtime import holder as holders


def _state() -> types.SimpleNamespace:
    return types.SimpleNamespace(exception=sys.exception, getframe=sys._getframe,
                                 getattr=getattr, closed_type=GeneratorExit, exits={},
                                 exit_times={})


def _observed(source: str, index: int = 3, register: int = 5, timed: bool = False,
              start: int = 0) -> tuple[Any, types.SimpleNamespace]:
    """``f`` of ``source``, its body in ``try: ... except <observer of exit_effects>``
    with the register set to ``register`` first; and the module state it notes in."""
    tree = ast.parse(textwrap.dedent(source))
    node = tree.body[0]
    assert isinstance(node, ast.FunctionDef)
    fp = plan_function(build_cfg(node, node.name), index)
    fp.timed = timed
    clause = observer(exit_effects(fp, load(REGISTER)))
    wrapper = artificial_shell(ast.Try(body=node.body, handlers=[clause], orelse=[],
                                       finalbody=[]))
    node.body = [assign(REGISTER, const(register)), assign(PATH_START, const(start)),
                 wrapper]
    code = compile(tree, "<exits>", "exec")
    state = _state()
    holder = types.ModuleType("holder")
    holder.__dict__[MODULE] = state
    holder.__dict__[CLOCK] = lambda: 100
    namespace: dict[str, object] = {}
    exec(holders.bind(code, holder), namespace)
    return namespace[node.name], state


def _lasti_in(exc: BaseException | None, code: types.CodeType) -> int:
    """The lasti of ``exc``'s traceback entry for a frame running ``code``."""
    assert exc is not None
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code is code:
            return tb.tb_lasti
        tb = tb.tb_next
    raise AssertionError("no entry for the frame")


def test_the_position_is_three_expressions() -> None:
    position = exception_position()
    assert len(position) == 3
    assert all(isinstance(part, ast.expr) for part in position)


def test_an_exit_is_counted_under_its_key() -> None:
    f, state = _observed("""\
        def f():
            x = 1
            raise KeyError(x)
        """)
    with pytest.raises(KeyError) as caught:
        f()
    lasti = _lasti_in(caught.value, f.__code__)
    assert lasti >= 0
    assert state.exits == {(3, 5, lasti, f.__code__, -1, False): 1}
    with pytest.raises(KeyError):
        f()
    assert state.exits == {(3, 5, lasti, f.__code__, -1, False): 2}  # bounded by the code


def test_two_ways_out_are_two_keys() -> None:
    f, state = _observed("""\
        def f(first):
            if first:
                raise KeyError
            raise ValueError
        """, index=0, register=9)
    for first in (True, False, True):
        with pytest.raises(LookupError if first else ValueError):
            f(first)
    assert sorted(state.exits.values()) == [1, 2]
    assert {key[:2] for key in state.exits} == {(0, 9)}
    assert len({key[2] for key in state.exits}) == 2  # two instructions


def test_an_exception_raised_while_handling_another_keeps_its_contexts_place() -> None:
    f, state = _observed("""\
        def f():
            try:
                raise KeyError
            except KeyError:
                raise ValueError("second")
        """)
    with pytest.raises(ValueError, match="second") as caught:
        f()
    here = _lasti_in(caught.value, f.__code__)
    context = _lasti_in(caught.value.__context__, f.__code__)
    assert context >= 0
    assert context != here
    assert state.exits == {(3, 5, here, f.__code__, context, False): 1}


def test_a_cleared_traceback_gives_no_lasti() -> None:
    # ``e.__traceback__ = None; raise``: the bare raise adds no entry for this frame.
    f, state = _observed("""\
        def f():
            try:
                raise KeyError
            except KeyError as e:
                e.__traceback__ = None
                raise
        """)
    with pytest.raises(KeyError):
        f()
    ((index, register, lasti, code, context, closed),) = state.exits
    assert (index, register, lasti, context, closed) == (3, 5, -1, -1, False)
    assert code is f.__code__


def test_another_frames_traceback_gives_no_lasti() -> None:
    # The program gives the exception another frame's traceback and re-raises it
    # (a bare raise adds no entry for this frame): its top entry is not this frame's.
    f, state = _observed("""\
        def f(other):
            try:
                raise KeyError
            except KeyError as e:
                e.__traceback__ = other
                raise
        """)
    try:
        raise ValueError("elsewhere")
    except ValueError as error:
        other = error.__traceback__
    with pytest.raises(KeyError) as caught:
        f(other)
    assert caught.value.__traceback__ is not None
    ((key, count),) = state.exits.items()
    assert count == 1
    assert key[:3] == (3, 5, -1)


def test_a_generator_closed_by_its_consumer_says_so() -> None:
    f, state = _observed("""\
        def f():
            yield 1
            yield 2
        """)
    generator = f()
    assert next(generator) == 1
    generator.close()
    ((key, count),) = state.exits.items()
    assert count == 1
    assert key[5] is True


def test_a_generator_that_raises_was_not_closed() -> None:
    f, state = _observed("""\
        def f():
            yield 1
            raise KeyError
        """)
    generator = f()
    next(generator)
    with pytest.raises(KeyError):
        next(generator)
    ((key, _count),) = state.exits.items()
    assert key[5] is False


def test_a_timed_exit_adds_the_paths_time_so_far() -> None:
    # the clock reads 100 and the path started at 40: 60 so far
    f, state = _observed("def f():\n    raise KeyError\n", timed=True, start=40)
    for _ in range(2):
        with pytest.raises(KeyError):
            f()
    ((key, count),) = state.exits.items()
    assert count == 2
    assert state.exit_times == {key: 120}


def test_an_untimed_exit_adds_no_time() -> None:
    f, state = _observed("def f():\n    raise KeyError\n", timed=False, start=40)
    with pytest.raises(KeyError):
        f()
    assert state.exit_times == {}


def test_the_effects_assign_the_register_only() -> None:
    fp = plan_function(build_cfg(ast.parse("def f():\n    pass\n").body[0],  # type: ignore[arg-type]
                                 "f"), 0)
    assert [name for name, _ in exit_effects(fp, load(REGISTER))] == [REGISTER, REGISTER]
    fp.timed = True
    assert [name for name, _ in exit_effects(fp, load(REGISTER))] == [REGISTER] * 3
