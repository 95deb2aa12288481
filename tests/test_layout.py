"""The package's layout holds: no import cycle between pathprof's modules, and the
parts that run inside the measured program import only the standard library.

Imports are read from the source (every ``import`` statement, inside functions
too, except under ``if TYPE_CHECKING:``), so a cycle hidden in a function body
counts as one.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pathprof

PACKAGE = Path(pathprof.__file__).parent

#: Sub-packages whose modules run inside the measured program: standard library only.
IN_PROGRAM = ("runtime", "measure", "python", "graph", "data")


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(path: Path, modules: set[str]) -> set[str]:
    """The modules ``path`` imports, by full name (``from pkg import sub`` names
    the submodule where there is one)."""
    found: set[str] = set()
    todo: list[ast.AST] = [ast.parse(path.read_text(encoding="utf-8"))]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.If) and _is_type_checking(node):
            todo.extend(node.orelse)
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                found.add(full if full in modules else node.module)
        todo.extend(ast.iter_child_nodes(node))
    return found


def _graph() -> dict[str, set[str]]:
    paths = {_module_name(path): path for path in PACKAGE.rglob("*.py")}
    return {name: {imported for imported in _imports(path, set(paths)) if imported in paths
                   and imported != name}
            for name, path in paths.items()}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(name: str) -> list[str] | None:
        state[name] = 1
        stack.append(name)
        for target in sorted(graph[name]):
            if state.get(target) == 1:
                return [*stack[stack.index(target):], target]
            if target not in state and (found := visit(target)):
                return found
        stack.pop()
        state[name] = 2
        return None

    for name in sorted(graph):
        if name not in state and (found := visit(name)):
            return found
    return None


def test_no_module_imports_one_that_imports_it_back() -> None:
    graph = _graph()
    assert len(graph) > 50
    assert "pathprof.measure.profiler" in graph["pathprof"]  # function-level imports count
    assert _cycle(graph) is None


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_what_runs_inside_the_program_imports_only_the_standard_library() -> None:
    paths = {_module_name(path): path for path in PACKAGE.rglob("*.py")}
    outside: list[str] = []
    for name, path in paths.items():
        if name.split(".")[1:2] and name.split(".")[1] in IN_PROGRAM:
            for imported in _imports(path, set(paths)):
                top = imported.split(".")[0]
                if top != "pathprof" and top not in sys.stdlib_module_names:
                    outside.append(f"{name} imports {imported}")
    assert outside == []


def test_the_runtime_imports_nothing_of_pathprof_but_itself() -> None:
    """Generated code imports :mod:`pathprof.runtime`; loading it must not pull in
    the instrumenter, the data file or the reports (the typed contract it reads the
    metadata with is standard library only)."""
    graph = _graph()
    runtime = [name for name in graph if name.startswith("pathprof.runtime")]
    assert {"pathprof.runtime", "pathprof.runtime.events",
            "pathprof.runtime.blockmap"} <= set(runtime)
    for name in runtime:
        assert all(target.startswith("pathprof.runtime")
                   or target in ("pathprof", "pathprof.contract")
                   for target in graph[name]), (name, graph[name])
