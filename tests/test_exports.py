"""LCOV and Cobertura exports: line hits, branch counts and function calls implied by
the path profile, checked against line events of the uninstrumented program and
read by real consumers (genhtml, pycobertura, diff-cover)."""

from __future__ import annotations

import inspect
import json
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pathprof
from pathprof.analysis.linecoverage import codeless_lines, function_lines, line_coverage
from pathprof.data.profile import FunctionProfile

from .loading import corpus_programs, load_instrumented, load_plain
from .python.random_programs import functions, tape
from .test_pytest_plugin import pytest_in
from .test_run import pathprof_cli, project  # noqa: F401  (a fixture)

PROGRAMS = corpus_programs()


def _profiles(loaded: Any) -> list[FunctionProfile]:
    paths, cuts, raised, unattributed = loaded.snapshot()
    result = []
    for i, meta in enumerate(loaded.metadata.functions):
        fn = FunctionProfile(str(loaded.module.__file__), meta.qualname, meta.code_line,
                             loaded.metadata.source_hash, meta)
        fn.counts, fn.cuts = dict(paths[i]), dict(cuts[i])
        fn.raised, fn.unattributed = raised[i], unattributed[i]
        result.append(fn)
    return result


def _lines_run(path: Path, run: Any) -> set[int]:
    """The lines of ``path`` the uninstrumented program ran (line events)."""
    seen: set[int] = set()
    filename = str(path)

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        if frame.f_code.co_filename != filename:
            return None
        if event == "line":
            seen.add(frame.f_lineno)
        return tracer

    sys.settrace(tracer)
    try:
        run()
    finally:
        sys.settrace(None)
    return seen


@pytest.mark.parametrize("path", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_lines_hit_are_the_lines_the_program_ran(path: Path) -> None:
    """Independent of pathprof's CFG: the lines Python reports running. A line pathprof
    counts as hit ran; in a function no exception cut short, every line that ran is
    hit (a block an exception cut counts its first line only: the statement that
    raised is not recorded)."""
    loaded = load_instrumented(path, mark_probes=False)
    loaded.execute()
    loaded.snapshot()  # what ran at import: not traced below
    loaded.module.drive()
    plain = load_plain(path, f"pathprof_plain_lines_{path.stem}")
    ran = _lines_run(path, plain.drive)
    compared = 0
    codeless = codeless_lines(path.read_text(encoding="utf-8"))
    for fn in _profiles(loaded):
        lines = function_lines(fn, codeless)
        hit = {line for line, hits in lines.lines.items() if hits}
        assert hit <= ran, (fn.qualname, sorted(hit - ran))
        if not fn.cuts:
            assert hit == ran & set(lines.lines), (fn.qualname, sorted((ran & set(lines.lines))
                                                                       - hit))
            compared += 1
    assert compared


def test_hand_counted_lines_branches_and_calls(project: Path) -> None:  # noqa: F811
    """tests/programs/app.py with 700: classify's if/elif ran 700 times: 200 negative,
    100 zero, 400 positive; helper.total's loop over 4 items."""
    pathprof_cli(project, "run", "app.py", "700")
    coverage = line_coverage(pathprof.load(str(project / ".pathprof")))
    by_name = {fn.name: fn for file in coverage.files for fn in file.functions}
    classify = by_name["classify"]
    assert classify.calls == 700
    assert classify.lines == {9: 700, 10: 200, 11: 500, 12: 100, 13: 400}
    assert [(d.line, [a.count for a in d.arms]) for d in classify.decisions] == [
        (9, [200, 500]), (11, [100, 400])]
    total = by_name["total"]
    assert total.calls == 1
    # for x in xs: the iterable once, the next item 5 times (4 items, then exhausted)
    assert total.lines == {5: 1, 6: 6, 7: 4, 8: 2, 10: 2, 11: 1}
    assert sorted((a.label, a.count) for d in total.decisions for a in d.arms) == [
        ("exhausted", 1), ("false", 2), ("next", 4), ("true", 2)]
    assert by_name["explode"].calls == 0
    assert str(coverage.function_rate) == "75.00% (3 of 4)"


@settings(max_examples=25, deadline=None)
@given(functions(), st.lists(st.integers(0, 50), min_size=1, max_size=4))
def test_implied_coverage_is_consistent_with_the_paths(tmp_path_factory: Any, source: str,
                                                       seeds: list[int]) -> None:
    """The invariants of linecoverage on random programs: a decision's arms ran at most
    as often as the decision; each line's hits are at most the path executions through
    it; rates stay within 0..valid; the function's first line ran once per call."""
    path = tmp_path_factory.mktemp("lines") / "program.py"
    path.write_text(source, encoding="utf-8")
    loaded = load_instrumented(path, mark_probes=False)
    loaded.execute()
    for seed in seeds:
        try:
            result = loaded.module.f(tape(seed), seed % 3)
            if hasattr(result, "close"):
                list(zip(range(seed % 4), result, strict=False))
                result.close()
        except Exception:
            pass
    fn = next(p for p in _profiles(loaded) if p.qualname == "f")
    lines = function_lines(fn)
    generator = bool(loaded.module.f.__code__.co_flags & inspect.CO_GENERATOR)
    # a generator closed before its first item never started
    assert lines.calls <= len(seeds) if generator else lines.calls == len(seeds)
    for line, hits in lines.lines.items():
        through = sum(p.count * sum(1 for b in p.blocks if line in _starts(fn, b))
                      for p in fn.paths)
        assert 0 <= hits <= through
    for decision in lines.decisions:
        assert sum(arm.count for arm in decision.arms) <= decision.executed
    for rate in (lines.line_rate, lines.branch_rate, lines.path_rate):
        assert 0 <= rate.run <= rate.possible


def _starts(fn: FunctionProfile, block: int) -> set[int]:
    return {piece.line for piece in fn.meta.blocks[block].pieces}


@pytest.fixture
def exported(project: Path) -> Path:  # noqa: F811
    pathprof_cli(project, "run", "app.py", "700")
    pathprof_cli(project, "lcov")
    pathprof_cli(project, "xml")
    return project


def _summary(directory: Path) -> Any:
    return line_coverage(pathprof.load(str(directory / ".pathprof")))


def test_lcov_records(exported: Path) -> None:
    text = (exported / "coverage.lcov").read_text()
    helper = text[text.index(f"SF:{exported / 'helper.py'}"):]
    helper = helper[:helper.index("end_of_record")]
    assert "FN:4,total\n" in helper
    assert "FNDA:1,total\n" in helper
    assert "FNDA:0,explode\n" in helper
    assert "# pathprof paths: 4,4,6,total\n" in helper
    assert "BRDA:6,0,0,4\nBRDA:6,0,1,1\n" in helper  # for: next item 4 times, exhausted once
    assert "DA:15,0\n" in helper
    assert "LF:7\nLH:6\n" in helper


@pytest.mark.skipif(shutil.which("genhtml") is None,
                    reason="genhtml is not installed (Debian: apt-get install lcov)")
def test_genhtml_renders_the_lcov_file_without_warnings(exported: Path) -> None:
    result = subprocess.run(["genhtml", "--branch-coverage", "-o", "html", "coverage.lcov"],
                            cwd=exported, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "WARNING" not in result.stdout + result.stderr
    assert (exported / "html" / "index.html").exists()
    summary = _summary(exported)
    figures = dict(re.findall(r"(lines|functions|branches)\.*: [\d.]+% \((\d+ of \d+)",
                              result.stdout))
    assert figures == {
        "lines": f"{summary.line_rate.run} of {summary.line_rate.possible}",
        "functions": f"{summary.function_rate.run} of {summary.function_rate.possible}",
        "branches": f"{summary.branch_rate.run} of {summary.branch_rate.possible}"}


def test_pycobertura_reads_the_rates_pathprof_computed(exported: Path) -> None:
    from pycobertura import Cobertura

    summary = _summary(exported)
    report = Cobertura(str(exported / "coverage.xml"))
    assert report.line_rate() == pytest.approx(summary.line_rate.fraction, abs=1e-4)
    assert report.branch_rate() == pytest.approx(summary.branch_rate.fraction, abs=1e-4)
    for file in summary.files:
        name = Path(file.file).name
        assert report.line_rate(name) == pytest.approx(file.line_rate.fraction, abs=1e-4)
        assert report.branch_rate(name) == pytest.approx(file.branch_rate.fraction, abs=1e-4)
        partial = {d.line for d in file.decisions if d.covered < len(d.arms)}
        expected = [(n, "miss") if not hits else (n, "partial")
                    for n, hits in file.lines.items() if not hits or n in partial]
        assert report.missed_lines(name) == expected
    # its command line reads it too
    result = subprocess.run([sys.executable, "-m", "pycobertura", "show", "--format", "json",
                             "coverage.xml"], cwd=exported, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    shown = json.loads(result.stdout)
    # pycobertura's table counts a line whose branches were not all taken as missed
    partial = sum(1 for file in summary.files for d in file.decisions
                  if d.covered < len(d.arms) and file.lines[d.line])
    assert shown["total"]["Stmts"] == summary.line_rate.possible
    assert shown["total"]["Miss"] == summary.line_rate.possible - summary.line_rate.run + partial


def test_the_cobertura_file_carries_paths_in_comments(exported: Path) -> None:
    tree = ET.parse(exported / "coverage.xml", ET.XMLParser(
        target=ET.TreeBuilder(insert_comments=True)))
    comments = [m.find("./*").text for m in tree.iter("method")]
    assert " pathprof paths: 3 of 3 run " in comments  # classify
    root = tree.getroot()
    assert root.get("branches-valid") == str(_summary(exported).branch_rate.possible)
    assert {el.tag for el in root.iter() if isinstance(el.tag, str)} <= {
        "coverage", "sources", "source", "packages", "package", "classes", "class",
        "methods", "method", "lines", "line", "conditions", "condition"}


def test_diff_cover_reports_the_changed_lines_pathprof_missed(project: Path) -> None:  # noqa: F811
    git = shutil.which("git")
    if git is None:
        pytest.skip("git is not installed")

    def run_git(*args: str) -> None:
        subprocess.run([git, "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=project,
                       check=True, capture_output=True)

    run_git("init", "-q", "-b", "main")
    run_git("add", "app.py", "helper.py")
    run_git("commit", "-qm", "base")
    run_git("checkout", "-qb", "change")
    helper = project / "helper.py"
    helper.write_text(helper.read_text() + "\n\ndef added(flag):\n    if flag:\n"
                      "        return 1\n    return 2\n")
    app = project / "app.py"
    app.write_text(app.read_text().replace("import helper", "import helper\n"
                                           "helper.added(True)"))
    run_git("commit", "-qam", "change")
    pathprof_cli(project, "run", "app.py", "700")
    pathprof_cli(project, "xml")
    result = subprocess.run([sys.executable, "-m", "diff_cover.diff_cover_tool", "coverage.xml",
                             "--compare-branch=main", "--format", "json:report.json"],
                            cwd=project, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    report = json.loads((project / "report.json").read_text())
    stats = report["src_stats"]["helper.py"]
    # added(True): `if flag` and `return 1` ran, `return 2` did not (the def line
    # runs at import, which pathprof does not measure: not a line of the report)
    lines = (project / "helper.py").read_text().splitlines()
    missed = lines.index("    return 2") + 1
    assert stats["violation_lines"] == [missed]
    assert stats["covered_lines"] == [missed - 2, missed - 1]


def test_pytest_writes_lcov_and_xml_reports(tmp_path: Path) -> None:
    (tmp_path / "mod.py").write_text("def sign(x):\n    if x < 0:\n        return -1\n"
                                     "    return 1\n")
    (tmp_path / "test_mod.py").write_text("import mod\n\ndef test_sign():\n"
                                          "    assert mod.sign(2) == 1\n")
    result = pytest_in(tmp_path, "-q", "--pathprof=mod.py", "--pathprof-report=lcov:out.lcov",
                       "--pathprof-report=xml")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "pathprof: wrote out.lcov" in result.stdout
    lcov = (tmp_path / "out.lcov").read_text()
    assert "DA:2,1\nDA:3,0\nDA:4,1\n" in lcov
    assert "BRDA:2,0,0,0\nBRDA:2,0,1,1\n" in lcov
    root = ET.parse(tmp_path / "coverage.xml").getroot()
    assert root.get("line-rate") == "0.6667"
    assert root.get("branch-rate") == "0.5"


def test_an_edge_profile_is_refused_clearly(project: Path) -> None:  # noqa: F811
    pathprof_cli(project, "run", "--mode", "edge", "app.py", "70")
    result = pathprof_cli(project, "lcov", check=False)
    assert result.returncode == 1
    assert "need a path profile" in result.stderr
    assert not (project / "coverage.lcov").exists()


def test_an_unwritable_destination_is_reported(project: Path) -> None:  # noqa: F811
    pathprof_cli(project, "run", "app.py", "70")
    result = pathprof_cli(project, "xml", "-o", str(project / "missing" / "c.xml"), check=False)
    assert result.returncode == 1
    assert "cannot write" in result.stderr


EXCLUDED = """\
from typing import overload


@overload
def pick(x: int) -> int: ...
def pick(x, strict=False):
    if x is None:  # pragma: no cover
        raise ValueError("no")
    if strict:
        x = abs(x)
    return x
"""


def test_exports_leave_out_what_is_excluded(tmp_path: Path) -> None:
    """As coverage.py's XML: the overload stub has no record, the excluded raise's line
    is no line, the `if x is None` decision with its excluded arm is no decision; paths
    and basis as path coverage counts them (2 paths, dimension 2); with no rules, all of
    it is there."""
    from pathprof.analysis.exclusions import ExclusionRules
    from pathprof.data.measurement import Measurement

    path = tmp_path / "subject.py"
    path.write_text(EXCLUDED)
    loaded = load_instrumented(path, mark_probes=False)
    loaded.execute()
    loaded.snapshot()
    loaded.module.pick(3)
    profiles = _profiles(loaded)
    measurement = Measurement(functions=profiles)
    excluded = line_coverage(measurement, rules=ExclusionRules())
    everything = line_coverage(measurement, rules=ExclusionRules.none())
    (kept,) = excluded.files[0].functions
    assert [fn.name for fn in everything.files[0].functions] == ["pick", "pick"]
    assert kept.first_line == 6
    assert 8 not in kept.lines
    assert sorted(kept.lines) == [7, 9, 10, 11]
    assert [d.line for d in kept.decisions] == [9]
    assert (kept.path_rate.run, kept.path_rate.possible) == (1, 2)
    assert (kept.basis_rate.run, kept.basis_rate.possible) == (1, 2)
    whole = everything.files[0].functions[1]
    assert 8 in whole.lines
    assert [d.line for d in whole.decisions] == [7, 9]
    assert (whole.path_rate.possible, whole.basis_rate.possible) == (3, 3)
