"""The one walk before the rewrite (:mod:`pathprof.python.scan`): its answers for
every function at once, checked against the compiler's own and by hand."""

from __future__ import annotations

import ast
import inspect
import sysconfig
import textwrap
from pathlib import Path
from types import CodeType

import pytest

from pathprof.python.scan import is_generator, reaches_own_frame, scan_module

STDLIB = Path(sysconfig.get_paths()["stdlib"])
#: Modules with generators, async generators, nested functions and lambdas.
MODULES = ["asyncio/tasks.py", "glob.py", "difflib.py", "pkgutil.py", "os.py",
           "tokenize.py", "typing.py", "ast.py"]


def _code_objects(code: CodeType) -> dict[tuple[str, int], CodeType]:
    found = {}
    for const in code.co_consts:
        if isinstance(const, CodeType):
            found[(const.co_name, const.co_firstlineno)] = const
            found.update(_code_objects(const))
    return found


def _first_line(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    return node.decorator_list[0].lineno if node.decorator_list else node.lineno


@pytest.mark.parametrize("module", MODULES)
def test_generators_are_the_ones_the_compiler_makes(module: str) -> None:
    """The oracle is CPython's: a function's code object has the generator flag
    exactly when its own code yields."""
    path = STDLIB / module
    source = path.read_text(encoding="utf-8")
    codes = _code_objects(compile(source, str(path), "exec"))
    scan = scan_module(ast.parse(source))
    assert scan.functions
    flags = inspect.CO_GENERATOR | inspect.CO_ASYNC_GENERATOR
    checked = generators = 0
    for node in scan.functions:
        code = codes[(node.name, _first_line(node))]
        assert is_generator(node) is bool(code.co_flags & flags), (module, node.name)
        checked += 1
        generators += is_generator(node)
    assert checked == len(scan.functions)
    assert generators > 0


@pytest.mark.parametrize(("source", "generators"), [
    ("def f():\n    yield 1", {"f"}),
    ("def f():\n    def g():\n        yield 1\n    return g", {"g"}),
    ("def f():\n    return (x for x in ())", set()),  # the generator expression's own
    ("def f():\n    return lambda: (yield)", set()),
    ("def f():\n    class C:\n        def m(self):\n            yield\n    return C", {"m"}),
    # a default value runs in the scope that defines the function
    ("def f():\n    def g(x=(yield)):\n        return x\n    return g", {"f"}),
    ("def f():\n    @(yield)\n    def g():\n        pass", {"f"}),
    ("async def f():\n    yield 1", {"f"}),
    ("async def f():\n    await g()", set()),
])
def test_a_yield_belongs_to_the_scope_it_runs_in(source: str, generators: set[str]) -> None:
    scan = scan_module(ast.parse(source))
    assert {f.name for f in scan.functions if is_generator(f)} == generators
    # Asked of one function alone, the answer is the same.
    for function in scan.functions:
        alone = ast.parse(textwrap.dedent(ast.unparse(function))).body[0]
        assert is_generator(alone) is is_generator(function), function.name


@pytest.mark.parametrize(("source", "reaching"), [
    ("def f():\n    return sys._getframe()", ["f"]),
    ("def f():\n    g = lambda: eval('1')\n    return g", ["f"]),  # a lambda is f's code
    ("def f():\n    @decorate(locals())\n    def g():\n        pass", ["f"]),
    ("def f():\n    def g(x=vars()):\n        return x", ["f"]),
    ("def f():\n    def g():\n        return g.f_back\n    return g", ["g"]),
    ("def f():\n    class C(base(dir())):\n        pass", ["f"]),
    ("def f():\n    class C:\n        x = dir()", []),  # the class body's own
    ("@decorate(locals())\ndef f():\n    pass", []),  # module code
])
def test_frame_reaching_code_belongs_to_the_scope_it_runs_in(source: str,
                                                             reaching: list[str]) -> None:
    scan = scan_module(ast.parse(source))
    assert [f.name for f in scan.reaching] == reaching
    assert [f.name for f in scan.functions if reaches_own_frame(f)] == reaching


def test_name_views_are_the_calls_inside_functions() -> None:
    source = textwrap.dedent("""
        top = locals()
        def f(a):
            x = locals()
            y = vars(a)        # an argument: not a view of f's names
            class C:
                z = dir()      # inside a function, in a class body
            return sorted(dir()), x, y, C
    """)
    scan = scan_module(ast.parse(source))
    assert sorted((call.lineno, call.func.id) for call in scan.name_views) == [
        (4, "locals"), (7, "dir"), (8, "dir")]


def test_functions_are_listed_outermost_first_in_source_order() -> None:
    source = textwrap.dedent("""
        def a():
            def b():
                def c(): pass
            def d(): pass
        class K:
            def e(self): pass
        def f(): pass
    """)
    assert [f.name for f in scan_module(ast.parse(source)).functions] == [
        "a", "b", "c", "d", "e", "f"]
