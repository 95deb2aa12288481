"""pathprof.python.lasti: observers keep the frame's last instruction.

Behaviour is checked on whole programs elsewhere (the trace-event and random-program
tests compare every frame's line with plain Python's); here, the rewriting itself on
code nobody here wrote: CPython's standard library and its tests."""

from __future__ import annotations

import ast
import sysconfig
import warnings
from pathlib import Path
from types import CodeType

import pytest

from pathprof.python.lasti import _encode, _parse, keep_last_instruction


def _stdlib_codes() -> list[tuple[str, CodeType]]:
    codes = []
    root = Path(sysconfig.get_paths()["stdlib"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for path in sorted(root.rglob("*.py")):
            if "site-packages" in path.parts:
                continue
            try:
                codes.append((str(path), compile(path.read_bytes(), str(path), "exec",
                                                 dont_inherit=True)))
            except (SyntaxError, ValueError):
                continue  # test data that is not Python on purpose
    return codes


def _walk(code: CodeType) -> list[CodeType]:
    found, stack = [], [code]
    while stack:
        code = stack.pop()
        found.append(code)
        stack.extend(c for c in code.co_consts if isinstance(c, CodeType))
    return found


def test_exception_tables_read_back_exactly_and_plain_code_is_left_alone() -> None:
    """Every code object of the standard library and its tests: the table parses and
    encodes to the same bytes, and no handler the compiler wrote is taken for an
    observer (the code comes back unchanged)."""
    modules = _stdlib_codes()
    assert len(modules) > 1000
    tables = 0
    for path, module in modules:
        for code in _walk(module):
            table = code.co_exceptiontable
            assert _encode(_parse(table)) == table, (path, code.co_qualname)
            tables += bool(table)
        assert keep_last_instruction(module) is module, path
    assert tables > 10_000


def _observed(source: str) -> CodeType:
    """``source``'s function ``f`` whose body is wrapped in a location-less
    ``try: ... except ((), ())[1]: pass`` and, around that, a location-less
    ``try: ... finally: pass``, as pathprof writes observers."""
    tree = ast.parse(source)
    func = tree.body[0]
    assert isinstance(func, ast.FunctionDef)
    never = ast.Subscript(value=ast.Tuple(elts=[ast.Tuple(elts=[], ctx=ast.Load())] * 2,
                                          ctx=ast.Load()),
                          slice=ast.Constant(1), ctx=ast.Load())
    inner = ast.Try(body=func.body, handlers=[ast.ExceptHandler(type=never, name=None,
                                                                body=[ast.Pass()])],
                    orelse=[], finalbody=[])
    outer = ast.Try(body=[inner], handlers=[], orelse=[], finalbody=[ast.Pass()])
    for node in (outer, inner, inner.handlers[0], never, *ast.walk(never),
                 inner.handlers[0].body[0], outer.finalbody[0]):
        node.lineno = node.end_lineno = -1  # type: ignore[attr-defined]
        node.col_offset = node.end_col_offset = -1  # type: ignore[attr-defined]
    func.body = [outer]
    module = compile(tree, "<observed>", "exec")
    return next(c for c in module.co_consts if isinstance(c, CodeType))


SOURCE = """\
def f(values):
    total = 0
    for v in values:
        if v < 0:
            raise ValueError(v)
        total += v
    return total
"""


@pytest.mark.parametrize("patched", [False, True])
def test_a_frame_an_exception_left_stands_at_the_raise(patched: bool) -> None:
    code = _observed(SOURCE)
    if patched:
        code = keep_last_instruction(code)
        assert keep_last_instruction(code) is code  # already done: nothing to find
    namespace: dict = {}
    exec(compile(SOURCE, "<observed>", "exec"), namespace)
    f = namespace["f"]
    f.__code__ = code
    assert f([1, 2]) == 3
    with pytest.raises(ValueError, match="-2") as caught:
        f([1, -2])
    frame = caught.value.__traceback__.tb_next.tb_frame
    assert caught.value.__traceback__.tb_next.tb_lineno == 5
    assert frame.f_lineno == (5 if patched else None)
