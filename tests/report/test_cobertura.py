"""pathprof.report.cobertura, Cobertura XML as coverage.py writes it: the root's totals and
rates, a ``<package>`` per directory under the ``<source>`` (the root), a ``<class>`` per
file named relative to it, a ``<method>`` per function with its own lines, ``<line>``
with ``condition-coverage`` and ``<conditions>`` where a decision is, and path coverage
in XML comments (the root's and each method's first child). The output is parsed and
its fields checked against coverage written by hand, and against a tiny program
measured in memory."""

from __future__ import annotations

import io
import types
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pathprof import runtime
from pathprof.analysis.linecoverage import (
    Arm,
    Decision,
    FileLines,
    FunctionLines,
    LineCoverage,
    line_coverage,
)
from pathprof.data.measurement import Measurement
from pathprof.data.modules import Sources
from pathprof.data.profile import FunctionProfile
from pathprof.python.instrument import instrument_source
from pathprof.report.cobertura import render, write_cobertura
from pathprof.version import __version__

SIGN = """\
def sign(x):
    if x < 0:
        return -1
    return 1
"""


def _measure(source: str, run: Callable[[Any], object], file: str) -> Measurement:
    """``source`` instrumented in memory as ``file``, executed, and ``run(module)``'s
    paths (the runtime's registry is put back as it was)."""
    instrumented = instrument_source(source, file, module_key=f"{file}:test-cobertura")
    module = types.ModuleType("cobertura_subject")
    module.__file__ = file
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(runtime, "_modules", [])
        exec(instrumented.compile(file), module.__dict__)
        runtime.take_snapshot()
        run(module)
        ((_state, paths, cuts, *_rest),) = runtime.take_snapshot()
    meta = instrumented.metadata
    functions = []
    for i, info in enumerate(meta.functions):
        fn = FunctionProfile(file, info.qualname, info.code_line, meta.source_hash, info)
        fn.counts, fn.cuts = dict(paths[i]), dict(cuts[i])
        functions.append(fn)
    return Measurement(functions=functions, sources=Sources({(file, meta.source_hash): source}))


def _profile(file: str, counts: dict[int, int], source: str = SIGN) -> FunctionProfile:
    meta = instrument_source(source, file).metadata
    (info,) = meta.functions
    fn = FunctionProfile(file, info.qualname, info.code_line, meta.source_hash, info)
    fn.counts = dict(counts)
    return fn


def _sign_file(file: str) -> FileLines:
    """sign called 3 times, never negative: lines 2 and 4 hit 3 times, line 3 never;
    the test's false arm taken, its true arm not; 1 of its 2 paths run."""
    fn = FunctionLines(_profile(file, {1: 3}), 3, {2: 3, 3: 0, 4: 3},
                       [Decision(2, 2, 3, (Arm("true", 0), Arm("false", 3)))])
    return FileLines(file, [fn], {2: 3, 3: 0, 4: 3})


def _xml(coverage: LineCoverage, root: str | None = "/proj") -> tuple[str, ET.Element]:
    out = io.StringIO()
    render(coverage, out, root=root)
    text = out.getvalue()
    parser = ET.XMLParser(target=ET.TreeBuilder(insert_comments=True))
    return text, ET.fromstring(text, parser)


def _comment(element: ET.Element) -> str | None:
    first = element[0]
    return first.text if first.tag is ET.Comment else None


def test_the_root_has_the_totals_and_the_rates() -> None:
    _text, root = _xml(LineCoverage([_sign_file("/proj/pkg/m.py")]))
    assert root.tag == "coverage"
    assert {key: root.get(key) for key in (
        "lines-valid", "lines-covered", "line-rate", "branches-valid", "branches-covered",
        "branch-rate", "complexity", "version")} == {
        "lines-valid": "3", "lines-covered": "2", "line-rate": "0.6667",  # 2 of 3
        "branches-valid": "2", "branches-covered": "1", "branch-rate": "0.5",
        "complexity": "0", "version": f"pathprof {__version__}"}
    assert _comment(root) == " pathprof paths: 1 of 2 run "
    assert root.find("sources/source").text == "/proj"


def test_the_timestamp_is_in_milliseconds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("time.time", lambda: 1_700_000_000.1234)
    _text, root = _xml(LineCoverage([]))
    assert root.get("timestamp") == "1700000000123"


def test_the_file_starts_with_the_declaration_and_says_who_wrote_it() -> None:
    text, _root = _xml(LineCoverage([]))
    lines = text.splitlines()
    assert lines[0] == '<?xml version="1.0" ?>'
    assert lines[1] == (f"<!-- Written by pathprof {__version__}, in the elements of "
                        "Cobertura's coverage-04.dtd -->")
    assert text.endswith("</coverage>\n")


def test_nothing_measured_is_complete_and_has_no_package() -> None:
    _text, root = _xml(LineCoverage([]))
    assert (root.get("line-rate"), root.get("branch-rate")) == ("1", "1")
    assert (root.get("lines-valid"), root.get("branches-valid")) == ("0", "0")
    assert _comment(root) == " pathprof paths: 0 of 0 run "
    assert list(root.find("packages")) == []


def test_a_package_per_directory_under_the_root_in_name_order() -> None:
    files = [_sign_file(name) for name in ("/proj/pkg/sub/m.py", "/proj/top.py",
                                           "/elsewhere/x.py", "/proj/pkg/sub/n.py")]
    _text, root = _xml(LineCoverage(files))
    packages = root.findall("packages/package")
    # a file outside the root keeps its absolute name: its package is its directory
    assert [p.get("name") for p in packages] == [".", "elsewhere", "pkg.sub"]
    classes = {p.get("name"): [(c.get("name"), c.get("filename"))
                               for c in p.findall("classes/class")] for p in packages}
    assert classes == {".": [("top.py", "top.py")],
                       "elsewhere": [("x.py", "/elsewhere/x.py")],
                       "pkg.sub": [("m.py", "pkg/sub/m.py"), ("n.py", "pkg/sub/n.py")]}


def test_a_packages_rates_sum_its_files() -> None:
    covered = FileLines("/proj/pkg/b.py", [FunctionLines(
        _profile("/proj/pkg/b.py", {0: 1, 1: 1}), 2, {2: 2, 3: 1, 4: 1},
        [Decision(2, 2, 2, (Arm("true", 1), Arm("false", 1)))])], {2: 2, 3: 1, 4: 1})
    _text, root = _xml(LineCoverage([_sign_file("/proj/pkg/a.py"), covered]))
    (package,) = root.findall("packages/package")
    # lines 2 + 3 of 3 + 3, branches 1 + 2 of 2 + 2
    assert (package.get("line-rate"), package.get("branch-rate"),
            package.get("complexity")) == ("0.8333", "0.75", "0")
    a, b = package.findall("classes/class")
    assert (a.get("line-rate"), a.get("branch-rate")) == ("0.6667", "0.5")
    assert (b.get("line-rate"), b.get("branch-rate")) == ("1", "1")


def test_a_method_has_its_rates_its_paths_and_its_lines() -> None:
    _text, root = _xml(LineCoverage([_sign_file("/proj/m.py")]))
    (method,) = root.iter("method")
    assert (method.get("name"), method.get("signature"), method.get("line-rate"),
            method.get("branch-rate"), method.get("complexity")) == (
        "sign", "", "0.6667", "0.5", "0")
    assert _comment(method) == " pathprof paths: 1 of 2 run "
    assert [(line.get("number"), line.get("hits"), line.get("branch"))
            for line in method.findall("lines/line")] == [
        ("2", "3", "true"), ("3", "0", "false"), ("4", "3", "false")]


def test_a_line_with_a_decision_has_its_condition_coverage() -> None:
    _text, root = _xml(LineCoverage([_sign_file("/proj/m.py")]))
    klass = root.find("packages/package/classes/class")
    line = klass.find("lines/line[@number='2']")
    assert line.get("condition-coverage") == "50% (1/2)"
    assert [(c.get("number"), c.get("type"), c.get("coverage"))
            for c in line.findall("conditions/condition")] == [("0", "jump", "50%")]
    plain = klass.find("lines/line[@number='3']")
    assert plain.get("condition-coverage") is None
    assert plain.find("conditions") is None


def test_decisions_on_one_line_are_one_line_with_a_condition_each() -> None:
    # a for's next item (taken, exhausted) and an if (true only, of three arms) on line 2:
    # 3 of 5 arms covered, 60%; each condition's own share rounded down (1 of 3: 33%)
    decisions = [Decision(2, 2, 4, (Arm("next", 3), Arm("exhausted", 1))),
                 Decision(2, 4, 3, (Arm("case 1", 3), Arm("case 2", 0), Arm("case 3", 0)))]
    fn = FunctionLines(_profile("/proj/m.py", {}), 1, {2: 4}, decisions)
    _text, root = _xml(LineCoverage([FileLines("/proj/m.py", [fn], {2: 4})]))
    line = root.find("packages/package/classes/class/lines/line")
    assert line.get("condition-coverage") == "60% (3/5)"
    assert [(c.get("number"), c.get("coverage")) for c in line.iter("condition")] == [
        ("0", "100%"), ("1", "33%")]


def test_file_names_are_relative_to_the_current_directory_by_default(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    write_cobertura(LineCoverage([_sign_file(str(tmp_path / "lib" / "m.py"))]), out)
    root = ET.fromstring(out.getvalue().split("\n", 2)[2])
    assert root.find("sources/source").text == str(tmp_path)
    klass = root.find("packages/package/classes/class")
    assert klass.get("filename") == "lib/m.py"
    assert root.find("packages/package").get("name") == "lib"


def test_only_the_elements_of_the_dtd_are_written() -> None:
    _text, root = _xml(LineCoverage([_sign_file("/proj/a/m.py")]))
    assert {el.tag for el in root.iter() if isinstance(el.tag, str)} == {
        "coverage", "sources", "source", "packages", "package", "classes", "class",
        "methods", "method", "lines", "line", "conditions", "condition"}


def test_a_measured_program_gives_the_hand_counted_figures() -> None:
    # sign(2), sign(5): line 2 and 4 twice, line 3 never; the false arm only
    measured = _measure(SIGN, lambda m: [m.sign(2), m.sign(5)], "/proj/sign.py")
    _text, root = _xml(line_coverage(measured))
    assert (root.get("line-rate"), root.get("branch-rate")) == ("0.6667", "0.5")
    assert _comment(root) == " pathprof paths: 1 of 2 run "
    lines = root.findall("packages/package/classes/class/lines/line")
    assert [(line.get("number"), line.get("hits")) for line in lines] == [
        ("2", "2"), ("3", "0"), ("4", "2")]
