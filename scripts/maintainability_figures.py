"""Figures of how easily pathprof's tree is changed, to compare two trees (issue 52).

Run: ``python scripts/maintainability_figures.py TREE [TREE ...]`` with each ``TREE`` a
checkout (a ``git worktree`` or an unpacked ``git archive``); it prints one markdown row
per tree, and ``--json OUT`` writes the figures with their details. What each column
counts, read from ``TREE/src/pathprof`` (its ``*.py`` files):

- **Any per kLOC**: ``Any`` names (the tokenizer's NAME tokens, imports included) per
  1,000 physical lines.
- **modules over 800 lines**, and the **largest class** by its lines (``class`` line to
  its last line).
- **files testing for a compound statement**: modules outside ``constructs.py`` that
  test a node against a compound statement's class (``ast.If``, ``ast.For``,
  ``ast.Try``, ``ast.Match``, ..., in ``isinstance``, ``type(node) is``, or a ``case``)
  — where a new statement kind would have to be taught, besides the table of
  constructs and the CFG builder.
- **places naming the lcov report**: modules other than the renderer itself
  (``report/lcov.py``) holding a string constant that names it (docstrings left out) or
  importing the renderer — the places a new report format like it touches.
- **modules with a test file named after them**: modules other than ``__init__.py``
  (of the ``modules`` counted) for which ``TREE/tests`` has ``<package path>/test_<name>.py``,
  ``test_<name>.py`` or ``test_<package>_<name>.py``.
- **configuration reads per pytest session**: calls of ``pathprof.config.read_config`` in
  one ``pytest --pathprof=pkg --pathprof-report=term --pathprof-report=lcov``
  session of a two-test
  project, run with this interpreter and ``PYTHONPATH=TREE/src`` (the plugin named by
  ``-p``, entry points off).
"""

from __future__ import annotations

import argparse
import ast
import io
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import tokenize
from pathlib import Path

COMPOUND = {"If", "For", "AsyncFor", "While", "With", "AsyncWith", "Try", "TryStar", "Match"}

COUNT_READS = textwrap.dedent("""
    import sys
    import pathprof.config as config
    calls = [0]
    real = config.read_config
    def counted(*args, **kwargs):
        calls[0] += 1
        return real(*args, **kwargs)
    config.read_config = counted
    import pytest
    status = pytest.main(sys.argv[2:])
    with open(sys.argv[1], "w") as out:
        out.write(f"{calls[0]} {int(status)}")
""")


def modules(tree: Path) -> list[Path]:
    return sorted((tree / "src" / "pathprof").rglob("*.py"))


def any_names(source: str) -> int:
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    return sum(1 for t in tokens if t.type == tokenize.NAME and t.string == "Any")


def docstrings(module: ast.Module) -> set[int]:
    """The ids of the docstring constants of a module, its classes and functions."""
    found = set()
    for node in ast.walk(module):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def compound_names(module: ast.Module) -> int:
    """How many tests of a node's kind name a compound statement: the classes in an
    ``isinstance`` call's second argument, compared with ``type(...)``, or matched by
    a ``case`` (building a node, ``ast.If(...)``, or naming one in an annotation is not
    a test a new statement kind would have to join)."""
    imported = set()
    for node in ast.walk(module):
        if isinstance(node, ast.ImportFrom) and node.module == "ast":
            imported |= {a.asname or a.name for a in node.names if a.name in COMPOUND}
    count = 0
    for tested in kind_tests(module):
        count += sum(is_compound_name(n, imported) for n in ast.walk(tested))
    return count


def kind_tests(module: ast.Module) -> list[ast.AST]:
    """The expressions that name the kinds a node is tested against."""
    found: list[ast.AST] = []
    for node in ast.walk(module):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in ("isinstance", "issubclass") and len(node.args) == 2):
            found.append(node.args[1])
        elif (isinstance(node, ast.Compare) and isinstance(node.left, ast.Call)
                and isinstance(node.left.func, ast.Name) and node.left.func.id == "type"):
            found += node.comparators
        elif isinstance(node, ast.MatchClass):
            found.append(node.cls)
    return found


def is_compound_name(node: ast.AST, imported: set[str]) -> bool:
    if isinstance(node, ast.Attribute):
        return (node.attr in COMPOUND and isinstance(node.value, ast.Name)
                and node.value.id == "ast")
    return isinstance(node, ast.Name) and node.id in imported


def names_lcov(module: ast.Module) -> bool:
    skip = docstrings(module)
    return any(lcov_node(node, skip) for node in ast.walk(module))


def lcov_node(node: ast.AST, skip: set[int]) -> bool:
    if isinstance(node, ast.Constant):
        return (isinstance(node.value, str) and id(node) not in skip
                and "lcov" in node.value.lower())
    if isinstance(node, ast.ImportFrom) and node.module:
        return (node.module.endswith("report.lcov") or (node.module.endswith("report")
                and any(a.name == "lcov" for a in node.names)))
    return False


def config_reads(tree: Path) -> int:
    plugin = ("pathprof.pytest.plugin" if (tree / "src/pathprof/pytest/plugin.py").exists()
              else "pathprof.pytest_plugin")
    with tempfile.TemporaryDirectory() as work:
        project = Path(work)
        (project / "pkg").mkdir()
        (project / "pkg/__init__.py").write_text(
            "def sign(x):\n    if x < 0:\n        return -1\n    return 1\n")
        (project / "test_pkg.py").write_text(
            "from pkg import sign\n\ndef test_neg():\n    assert sign(-2) == -1\n\n"
            "def test_pos():\n    assert sign(3) == 1\n")
        result = project / "reads.txt"
        env = dict(os.environ, PYTHONPATH=f"{tree / 'src'}{os.pathsep}{project}",
                   PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
        subprocess.run(
            [sys.executable, "-c", COUNT_READS, str(result), "-q", "-p", plugin,
             "--pathprof=pkg", "--pathprof-report=term", "--pathprof-report=lcov",
             "-p", "no:cacheprovider",
             "test_pkg.py"],
            cwd=project, env=env, check=True, capture_output=True)
        reads, status = result.read_text().split()
        if status != "0":
            raise SystemExit(f"{tree}: the pytest session failed ({status})")
        return int(reads)


def tested_by_name(tree: Path, root: Path) -> tuple[int, list[str]]:
    """How many of the tree's modules (``__init__.py`` left out) have a test file named
    after them, and those that have none."""
    tests = tree / "tests"
    untested = []
    counted = 0
    for path in modules(tree):
        relative = path.relative_to(root)
        if path.name == "__init__.py":
            continue
        counted += 1
        name = f"test_{path.stem}.py"
        package = relative.parent.parts
        candidates = [tests.joinpath(*package, name), tests / name]
        if package:
            candidates.append(tests / f"test_{package[-1]}_{path.stem}.py")
        if not any(candidate.exists() for candidate in candidates):
            untested.append(str(relative))
    return counted, untested


def figures(tree: Path) -> dict[str, object]:
    root = tree / "src" / "pathprof"
    lines = anys = 0
    big: list[tuple[str, int]] = []
    classes: list[tuple[str, int]] = []
    compound: dict[str, int] = {}
    lcov: list[str] = []
    for path in modules(tree):
        name = str(path.relative_to(root))
        source = path.read_text()
        count = len(source.splitlines())
        lines += count
        anys += any_names(source)
        if count > 800:
            big.append((name, count))
        module = ast.parse(source)
        for node in ast.walk(module):
            if isinstance(node, ast.ClassDef):
                classes.append((f"{name}:{node.name}", node.end_lineno - node.lineno + 1))
        if name != "constructs.py":
            uses = compound_names(module)
            if uses:
                compound[name] = uses
        if name != "report/lcov.py" and names_lcov(module):
            lcov.append(name)
    classes.sort(key=lambda c: -c[1])
    counted, untested = tested_by_name(tree, root)
    return {
        "modules": len(modules(tree)), "lines": lines, "any": anys,
        "any_per_kloc": round(anys * 1000 / lines, 1),
        "modules_over_800": sorted(big, key=lambda b: -b[1]),
        "largest_classes": classes[:3],
        "files_naming_a_compound_statement": compound,
        "places_naming_lcov": lcov,
        "config_reads_per_session": config_reads(tree),
        "modules_counted_for_tests": counted,
        "modules_without_a_test_file": untested,
    }


def row(tree: str, f: dict) -> str:
    big = ", ".join(f"{n} {c}" for n, c in f["modules_over_800"]) or "none"
    cls, size = f["largest_classes"][0]
    compound = f["files_naming_a_compound_statement"]
    return (f"| {tree} | {f['modules']} / {f['lines']:,} | {f['any_per_kloc']} ({f['any']}) "
            f"| {len(f['modules_over_800'])}: {big} | {cls} {size} "
            f"| {len(compound)} ({sum(compound.values())} tests) "
            f"| {len(f['places_naming_lcov'])} | {f['config_reads_per_session']} "
            f"| {f['modules_counted_for_tests'] - len(f['modules_without_a_test_file'])} of "
            f"{f['modules_counted_for_tests']} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trees", nargs="+", type=Path)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    found = {str(tree): figures(tree) for tree in args.trees}
    print("| tree | modules / lines | Any per kLOC (uses) | modules over 800 lines "
          "| largest class (lines) | files testing for a compound statement "
          "| places naming the lcov report | configuration reads per pytest session "
          "| modules with a test file named after them |")
    print("| --- | --- | ---: | --- | --- | ---: | ---: | ---: | ---: |")
    for tree, f in found.items():
        print(row(tree, f))
    if args.json:
        args.json.write_text(json.dumps(found, indent=1))


if __name__ == "__main__":
    main()
