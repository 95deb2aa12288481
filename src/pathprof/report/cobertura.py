"""Cobertura XML (``pathprof xml``, ``--pathprof-report=xml``), for CI services,
diff-cover and pycobertura.

The elements and attributes of Cobertura's ``coverage-04.dtd``, as coverage.py
writes them: a ``<package>`` per directory, a ``<class>`` per file (its name the
file's name, its ``filename`` relative to the ``<source>``, the current
directory, where it lies under it), a ``<method>`` per function with its own
lines, and ``<line number hits branch condition-coverage>`` with a
``<conditions>`` element on lines with a decision. Rates are those of
:mod:`pathprof.analysis.linecoverage`; complexity is not measured and written as 0.

Cobertura has no element for paths, and the DTD allows no extra attribute: each
method's path coverage is an XML comment as its first child, which every XML
consumer skips::

    <!-- pathprof paths: 3 of 5 run -->

and the root carries the totals the same way.
"""

from __future__ import annotations

import os
import time
import xml.etree.ElementTree as ET
from typing import Any, TextIO

from pathprof.analysis.linecoverage import Decision, LineCoverage, relative_name
from pathprof.analysis.pathcoverage import CoverageTotals
from pathprof.version import __version__

__all__ = ["render", "write_cobertura"]


def _rate(rate: CoverageTotals) -> str:
    return f"{rate.fraction:.4g}"


def _rates(element: ET.Element, lines: CoverageTotals, branches: CoverageTotals) -> None:
    element.set("line-rate", _rate(lines))
    element.set("branch-rate", _rate(branches))
    element.set("complexity", "0")


def _line(parent: ET.Element, number: int, hits: int, decisions: list[Decision]) -> None:
    line = ET.SubElement(parent, "line", number=str(number), hits=str(hits))
    if not decisions:
        line.set("branch", "false")
        return
    arms = sum(len(d.arms) for d in decisions)
    covered = sum(d.covered for d in decisions)
    line.set("branch", "true")
    line.set("condition-coverage", f"{100 * covered // arms}% ({covered}/{arms})")
    conditions = ET.SubElement(line, "conditions")
    for number_, decision in enumerate(decisions):
        ET.SubElement(conditions, "condition", number=str(number_), type="jump",
                      coverage=f"{100 * decision.covered // len(decision.arms)}%")


def _by_line(decisions: list[Decision]) -> dict[int, list[Decision]]:
    at: dict[int, list[Decision]] = {}
    for decision in decisions:
        at.setdefault(decision.line, []).append(decision)
    return at


def _paths_comment(paths: CoverageTotals) -> ET.Element[Any]:
    return ET.Comment(f" pathprof paths: {paths.run} of {paths.possible} run ")


def write_cobertura(coverage: LineCoverage, output: TextIO, root: str | None = None) -> None:
    """Write ``coverage`` as Cobertura XML; file names relative to ``root`` (default:
    the current directory) where they lie under it."""
    root = os.path.abspath(root or os.getcwd())
    lines, branches = coverage.line_rate, coverage.branch_rate
    top = ET.Element("coverage", {
        "version": f"pathprof {__version__}", "timestamp": str(int(time.time() * 1000)),
        "lines-valid": str(lines.possible), "lines-covered": str(lines.run),
        "line-rate": _rate(lines), "branches-valid": str(branches.possible),
        "branches-covered": str(branches.run), "branch-rate": _rate(branches),
        "complexity": "0"})
    top.append(_paths_comment(coverage.path_rate))
    ET.SubElement(ET.SubElement(top, "sources"), "source").text = root
    packages = ET.SubElement(top, "packages")
    by_package: dict[str, list] = {}
    for file in coverage.files:
        name = relative_name(file.file, root)
        package = os.path.dirname(name).replace(os.sep, ".").strip(".") or "."
        by_package.setdefault(package, []).append((name, file))
    for package_name, files in sorted(by_package.items()):
        package_node = ET.SubElement(packages, "package", name=package_name)
        package_lines, package_branches = CoverageTotals(), CoverageTotals()
        classes = ET.SubElement(package_node, "classes")
        for name, file in files:
            klass = ET.SubElement(classes, "class", name=os.path.basename(name),
                                  filename=name.replace(os.sep, "/"))
            _rates(klass, file.line_rate, file.branch_rate)
            package_lines.add(file.line_rate.run, file.line_rate.possible)
            package_branches.add(file.branch_rate.run, file.branch_rate.possible)
            methods = ET.SubElement(klass, "methods")
            for fn in file.functions:
                method = ET.SubElement(methods, "method", name=fn.name, signature="")
                _rates(method, fn.line_rate, fn.branch_rate)
                method.append(_paths_comment(fn.path_rate))
                method_lines = ET.SubElement(method, "lines")
                at = _by_line(fn.decisions)
                for number, hits in fn.lines.items():
                    _line(method_lines, number, hits, at.get(number, []))
            file_lines = ET.SubElement(klass, "lines")
            at = _by_line(file.decisions)
            for number, hits in file.lines.items():
                _line(file_lines, number, hits, at.get(number, []))
        _rates(package_node, package_lines, package_branches)
    ET.indent(top)
    output.write('<?xml version="1.0" ?>\n')
    output.write(f"<!-- Written by pathprof {__version__}, in the elements of Cobertura's "
                 "coverage-04.dtd -->\n")
    output.write(ET.tostring(top, encoding="unicode"))
    output.write("\n")


def render(coverage: LineCoverage, out: TextIO, **options: str | None) -> None:
    """The renderer (see :mod:`pathprof.report`): :func:`write_cobertura` on ``out``."""
    write_cobertura(coverage, out, **options)
