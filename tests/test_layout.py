"""The package's layout holds: no import cycle between pathprof's modules, the
parts that run inside the measured program import only the standard library, and
each layer imports only what the layer rules (:data:`RULES`) let it.

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

#: Modules (sub-packages, or top-level modules) that run inside the measured program:
#: standard library only.
IN_PROGRAM = ("runtime", "measure", "python", "graph", "data", "contract", "hashing")


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


def _all_imports() -> dict[str, set[str]]:
    """Every module of pathprof -> every module it imports, pathprof's or not."""
    paths = {_module_name(path): path for path in PACKAGE.rglob("*.py")}
    return {name: _imports(path, set(paths)) - {name} for name, path in paths.items()}


# -- The layer rules ----------------------------------------------------------------
#
# One pipeline, one direction: the front end (python/) and the graph algorithms
# (graph/) instrument, the runtime counts, measure/ and parallel/ run, data/ keeps,
# analysis/ computes from a measured profile, a renderer (report/<format>) shows, and
# the faces (the command line, the pytest plugins) call the public API only.
#
# A pattern ending in ``.*`` names a package and everything under it; any other
# pattern names one module. ``ONLY`` rules restrict what a module imports *of
# pathprof* (the standard library and third-party packages stay allowed); ``NOT``
# rules forbid targets, pathprof's or not (``rich.*``).

ONLY, NOT = "imports only", "imports no"

#: What the faces may import of pathprof: the package, the API module the commands
#: and plugins call, and the small modules of the documented public interface
#: (configuration, errors and messages, the version, event counting and subpath
#: sampling, which are used by programs directly).
PUBLIC_API = ("pathprof", "pathprof.api", "pathprof.config", "pathprof.exceptions",
              "pathprof.messages", "pathprof.version", "pathprof.events",
              "pathprof.subpaths")

#: Tables of pure data, importing nothing of pathprof, that the faces build their
#: options from (the report formats: names, default files).
TABLES = ("pathprof.formats",)

#: The faces: what a user runs: the command line and the pytest package (the plugin,
#: its parallel session, and the end of a session: the reports it prints and writes).
FACES = ("pathprof.cli.*", "pathprof.__main__", "pathprof.pytest.*")

#: Modules of report/ that render nothing: a renderer may import them.
REPORT_HELPERS = ("pathprof.report", "pathprof.report.console", "pathprof.report.terminal",
                  "pathprof.report.formatting", "pathprof.report.htmlfiles")

#: A renderer's own pieces, which only it imports (the CFG picture of the HTML pages).
RENDERER_PARTS = {"pathprof.report.html": ("pathprof.report.cfg_picture",)}

#: What no layer below the faces may import.
_ABOVE = ("pathprof.measure.*", "pathprof.parallel.*", *FACES)

#: What draws on the terminal while work goes on (a progress bar, a live view): the
#: faces' alone. The library reports progress to a callback (``pathprof.cli.progress``).
_LIVE = ("rich.progress", "rich.live")


def _renderers(modules: set[str]) -> list[str]:
    """Every module of report/ that is neither a helper nor a face's: a renderer."""
    return sorted(name for name in modules if _matches(name, "pathprof.report.*")
                  and not any(_matches(name, pattern)
                              for pattern in (*REPORT_HELPERS, *FACES)))


def rules(modules: set[str]) -> list[tuple[str, str, tuple[str, ...]]]:
    """The layer rules as (source pattern, ONLY or NOT, target patterns)."""
    renderers = _renderers(modules)
    return [
        ("pathprof.contract", ONLY, ()),
        ("pathprof.constructs", ONLY, ()),
        *((table, ONLY, ()) for table in TABLES),
        ("pathprof.graph.*", ONLY, ("pathprof.graph.*", "pathprof.types",
                                    "pathprof.exceptions")),
        ("pathprof.runtime.*", ONLY, ("pathprof.runtime.*", "pathprof", "pathprof.contract")),
        ("pathprof.python.*", NOT, ("pathprof.data.store", "pathprof.analysis.*",
                                    "pathprof.report.*", *_ABOVE)),
        ("pathprof.analysis.*", NOT, ("pathprof.data.store", "pathprof.report.*",
                                      "pathprof.python.*", "rich.*", *_ABOVE)),
        *((renderer, NOT, ("pathprof.data.store", "pathprof.python.*", "pathprof.runtime.*",
                           *_ABOVE,
                           *(other for other in renderers if other != renderer
                             and other not in RENDERER_PARTS.get(renderer, ()))))
          for renderer in renderers),
        *((face, ONLY, (*PUBLIC_API, *TABLES, *FACES, *REPORT_HELPERS)) for face in FACES),
        ("pathprof.api", NOT, ("rich.*",)),
        ("pathprof.reporting", NOT, ("rich.*",)),
        *((name, NOT, _LIVE) for name in sorted(modules)
          if not any(_matches(name, face) for face in FACES)),
    ]


def _matches(name: str, pattern: str) -> bool:
    if pattern.endswith(".*"):
        return name == pattern[:-2] or name.startswith(pattern[:-1])
    return name == pattern


def violations(imports: dict[str, set[str]],
               table: list[tuple[str, str, tuple[str, ...]]]) -> list[str]:
    """Every import that breaks a rule of ``table``, as "module imports target
    (rule)"."""
    found: list[str] = []
    for source, kind, targets in table:
        for name in sorted(imports):
            if not _matches(name, source):
                continue
            for target in sorted(imports[name]):
                listed = any(_matches(target, pattern) for pattern in targets)
                if (kind == NOT and listed) or (
                        kind == ONLY and not listed
                        and _matches(target, "pathprof.*") and target != name):
                    found.append(f"{name} imports {target} ({source} {kind} "
                                 f"{', '.join(targets) or 'nothing of pathprof'})")
    return found


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


def test_every_layer_imports_only_what_its_rules_allow() -> None:
    imports = _all_imports()
    table = rules(set(imports))
    assert "pathprof.report.html" in _renderers(set(imports))
    assert violations(imports, table) == []


def test_the_rule_checker_finds_a_broken_rule() -> None:
    imports = {"pathprof.report.a": {"pathprof.report.b", "pathprof.data.store", "os"},
               "pathprof.report.b": {"pathprof.analysis.x", "rich.progress"},
               "pathprof.api": {"pathprof.report.b", "rich.console"},
               "pathprof.cli.progress": {"rich.progress"},
               "pathprof.graph.g": {"pathprof.graph.h", "pathprof.data.profile", "json"},
               "pathprof.cli": {"pathprof.api", "pathprof.measure.profiler", "argparse"},
               "pathprof.analysis.x": {"rich.table"}}
    table = rules(set(imports))
    assert [line.split(" (")[0] for line in violations(imports, table)] == [
        "pathprof.graph.g imports pathprof.data.profile",
        "pathprof.analysis.x imports rich.table",
        "pathprof.report.a imports pathprof.data.store",
        "pathprof.report.a imports pathprof.report.b",
        "pathprof.cli imports pathprof.measure.profiler",
        "pathprof.api imports rich.console",
        "pathprof.report.b imports rich.progress",
    ]
