"""The HTML report's index per file, its "where to test next", and the next tests to
write on a function page: the figures are those of path coverage (``api.coverage``:
exclusions applied, files never imported at 0%), read back from the pages with
:mod:`html.parser`."""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from pathprof import api
from pathprof.analysis.decisions import path_story
from pathprof.config import read_config

from .test_html import _browser, needs_browser
from .test_pytest_plugin import pytest_in
from .test_run import pathprof_cli

ALPHA = '''\
from typing import overload


@overload
def pick(x: int) -> int: ...
@overload
def pick(x: str) -> str: ...
def pick(x, strict=False):
    if x is None:  # pragma: no cover
        raise ValueError("no")
    if strict:
        x = abs(x)
    return x


def grade(score, curve):
    if curve:
        score += 5
    if score > 90:
        return "A"
    if score > 80:
        return "B"
    return "C"


def same(flag):
    if flag:
        a = 1
    else:
        a = 2
    if flag:
        a += 1
    return a
'''

BETA = '''\
def total(items):
    s = 0
    for i in items:
        if i < 0:
            continue
        s += i
    return s


def whole():
    return 1


def tag(text):
    if text == "</script><b>":
        return "<i>"
    return text
'''

NEVER = '''\
def unused(a, b):
    if a:
        return 1
    if b:
        return 2
    return 3
'''

PROGRAM = '''\
from pkg import alpha, beta

alpha.pick(3)
alpha.grade(95, False)
alpha.grade(50, True)
alpha.same(True)
beta.total([1, 2])
beta.whole()
beta.tag("x")
'''

TESTS = '''\
import runpy


def test_program():
    runpy.run_path("prog.py")
'''


# -- a small DOM from html.parser --------------------------------------------------

VOID = {"meta", "link", "br", "input", "img", "hr", "wbr"}


@dataclass
class Node:
    tag: str
    attrs: dict[str, str]
    children: list[Node | str] = field(default_factory=list)

    @property
    def classes(self) -> list[str]:
        return self.attrs.get("class", "").split()

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def walk(self) -> Iterator[Node]:
        yield self
        for child in self.children:
            if isinstance(child, Node):
                yield from child.walk()

    def all(self, tag: str, cls: str | None = None) -> list[Node]:
        return [n for n in self.walk() if n.tag == tag and (cls is None or cls in n.classes)]

    def by_id(self, ident: str) -> Node | None:
        return next((n for n in self.walk() if n.attrs.get("id") == ident), None)


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].children.append(node)
        if tag not in VOID:
            self.stack.append(node)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.stack[-1].children.append(Node(tag, {k: v or "" for k, v in attrs}))

    def handle_endtag(self, tag: str) -> None:
        for depth in range(len(self.stack) - 1, 0, -1):
            if self.stack[depth].tag == tag:
                del self.stack[depth:]
                return

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)


def parse(page: Path) -> Node:
    builder = _Builder()
    builder.feed(page.read_text(encoding="utf-8"))
    builder.close()
    return builder.root


def figures(row: Node) -> dict[str, Any]:
    """A table row's figures, from its cells' data-sort values and text."""
    cells = row.all("td")
    basis = cells[4].text().split("/")
    return {"name": cells[0].attrs.get("data-sort", cells[0].text()),
            "run": int(cells[1].attrs["data-sort"]),
            "possible": int(cells[2].attrs["data-sort"]),
            "percent": cells[3].text(),
            "basis": (int(basis[0].replace(",", "")), int(basis[1].replace(",", ""))),
            "basis_percent": cells[5].text(),
            "executions": int(cells[7].attrs["data-sort"])}


def page_data(page: Path) -> dict[str, Any]:
    script = parse(page).by_id("pathprof-data")
    assert script is not None
    return json.loads(script.text())


# -- the project -------------------------------------------------------------------


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three files under the source (one never imported), overload stubs and a
    pragma, measured by ``pathprof run``, and its report with and without
    exclusions."""
    root = tmp_path_factory.mktemp("index")
    (root / "pyproject.toml").write_text('[tool.pathprof]\nsource = ["pkg"]\n\n'
                                         '[tool.pytest.ini_options]\npythonpath = ["."]\n')
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "alpha.py").write_text(ALPHA)
    (root / "pkg" / "beta.py").write_text(BETA)
    (root / "pkg" / "never.py").write_text(NEVER)
    (root / "prog.py").write_text(PROGRAM)
    pathprof_cli(root, "run", "prog.py")
    pathprof_cli(root, "html", "-d", "report")
    pathprof_cli(root, "html", "-d", "raw", "--no-exclude")
    return root


def page_of(project: Path, readable: str) -> Path:
    """The report's page of a function, by the readable part of its name (its file's
    base name, qualified name and first line; a digest of where it is follows)."""
    pages = list((project / "report").glob(f"{readable}_*.html"))
    assert len(pages) == 1, pages
    assert re.fullmatch(rf"{readable}_[0-9a-f]{{12}}\.html", pages[0].name)
    return pages[0]


def coverage_of(project: Path, exclude: bool = True) -> Any:
    """What ``pathprof coverage`` finds in the project (configuration, source)."""
    with contextlib.chdir(project):
        config = read_config()
        return api.coverage(api.load(".pathprof"), api.exclusion_rules(config, exclude),
                            api.unmeasured_candidates(config))


def groups(index: Node) -> dict[str, tuple[Node, list[Node]]]:
    """File name -> (its tbody, its function rows), from the index table."""
    table = index.by_id("functions")
    assert table is not None
    found = {}
    for body in table.all("tbody", "group"):
        rows = body.all("tr")
        assert "file-row" in rows[0].classes
        assert all("fn" in row.classes for row in rows[1:])
        found[figures(rows[0])["name"]] = (body, rows[1:])
    return found


def test_a_file_row_is_the_sum_of_its_functions_and_matches_coverage(project: Path) -> None:
    index = parse(project / "report" / "index.html")
    found = groups(index)
    coverage = coverage_of(project)
    assert list(found) == ["pkg/alpha.py", "pkg/beta.py", "pkg/never.py"]
    for file in coverage.files:
        name = os.path.relpath(file.file, project)
        body, rows = found[name]
        fns = [figures(r) for r in rows]
        whole = figures(body.all("tr", "file-row")[0])
        # the file's row adds up its functions' rows
        assert whole["run"] == sum(f["run"] for f in fns)
        assert whole["possible"] == sum(f["possible"] for f in fns)
        assert whole["basis"] == (sum(f["basis"][0] for f in fns),
                                  sum(f["basis"][1] for f in fns))
        assert whole["executions"] == sum(f["executions"] for f in fns)
        # ... and both are path coverage's figures, exclusions applied
        assert (whole["run"], whole["possible"], whole["basis"]) == (
            file.totals.run, file.totals.possible, (file.basis.run, file.basis.possible))
        assert [(f["name"], f["run"], f["possible"], f["basis"]) for f in fns] == [
            (fn.qualname, fn.totals.run, fn.totals.possible,
             (fn.basis.run, fn.basis.possible)) for fn in file.functions]
    # pick: 3 paths less the one through the excluded raise; same: 4 paths, 3 dimensions
    alpha = {f["name"]: f for f in map(figures, found["pkg/alpha.py"][1])}
    assert (alpha["pick"]["possible"], alpha["pick"]["basis"]) == (2, (1, 2))
    assert (alpha["same"]["possible"], alpha["same"]["basis"]) == (4, (1, 3))
    total = figures(index.all("tr", "total")[0])
    assert (total["run"], total["possible"], total["basis"]) == (
        coverage.totals.run, coverage.totals.possible,
        (coverage.basis.run, coverage.basis.possible))
    assert total["basis_percent"] == f"{100 * coverage.basis.run / coverage.basis.possible:.1f}%"
    headline = index.all("p", "totals")[0].text()
    assert headline.startswith(f"{total['basis_percent']} basis path coverage: "
                               f"{coverage.basis.run} of {coverage.basis.possible} "
                               "independent paths in 7 functions of 3 files")


def test_a_never_imported_file_is_marked_and_counted_at_zero(project: Path) -> None:
    index = parse(project / "report" / "index.html")
    body, rows = groups(index)["pkg/never.py"]
    assert "never" in body.classes
    assert [t.text() for t in body.all("span", "tag")] == ["never imported"]
    whole = figures(body.all("tr", "file-row")[0])
    assert (whole["run"], whole["possible"], whole["basis"], whole["percent"],
            whole["basis_percent"]) == (0, 3, (0, 3), "0.0%", "0.0%")
    # measured files carry no such mark
    assert not groups(index)["pkg/beta.py"][0].all("span", "tag")
    scope = [p.text() for p in index.all("p", "scope")]
    assert "1 file under the source never imported, counted at 0%." in scope
    # its function's page renders, with the source read from disk
    link = rows[0].all("a")[0].attrs["href"]
    page = parse(project / "report" / link)
    line = page.by_id("line-2")
    assert line is not None
    assert line.text().strip() == "2    if a:"
    assert "never imported" in " ".join(p.text() for p in page.all("p", "scope"))
    data = page_data(project / "report" / link)
    assert [p["kind"] for p in data["paths"]].count("run") == 0
    assert [p["kind"] for p in data["paths"]].count("next") == 3


def test_excluded_functions_are_left_out_and_the_headline_names_them(project: Path) -> None:
    index = parse(project / "report" / "index.html")
    alpha = [figures(r)["name"] for r in groups(index)["pkg/alpha.py"][1]]
    assert alpha == ["pick", "grade", "same"]  # the two @overload stubs are gone
    assert [p.name for p in (project / "report").glob("*_pick_*.html")] == [
        page_of(project, "alpha_py_pick_8").name]
    scope = [p.text() for p in index.all("p", "scope")]
    # the stubs (a path and a dimension each) and the pragma'd raise of pick
    assert ("Excluded: 2 functions (@overload 2), code in 1 other function, 3 paths and 3 "
            "basis dimensions (--no-exclude counts them).") in scope
    pick = parse(page_of(project, "alpha_py_pick_8"))
    assert ("Excluded here: 1 path and 1 basis dimension (--no-exclude counts them)."
            in [p.text() for p in pick.all("p", "scope")])
    # --no-exclude: the stubs are back, nothing is said to be excluded, and the
    # totals take back what was excluded
    raw = parse(project / "raw" / "index.html")
    names = [(figures(r)["name"], r.all("span", "where")[0].text())
             for r in groups(raw)["pkg/alpha.py"][1]]
    assert names == [("pick", ":4"), ("pick", ":6"), ("pick", ":8"), ("grade", ":16"),
                     ("same", ":26")]
    assert not any(p.text().startswith("Excluded") for p in raw.all("p", "scope"))
    kept, every = figures(index.all("tr", "total")[0]), figures(raw.all("tr", "total")[0])
    assert every["possible"] == kept["possible"] + 3
    assert every["basis"][1] == kept["basis"][1] + 3
    unexcluded = coverage_of(project, exclude=False)
    assert every["basis"] == (unexcluded.basis.run, unexcluded.basis.possible)


def test_where_to_test_next_comes_first_in_order_and_links_to_pages(project: Path) -> None:
    index = parse(project / "report" / "index.html")
    order = [n.attrs.get("id") for n in index.walk() if n.attrs.get("id")]
    assert order.index("where-next") < order.index("functions")
    items = index.all("ol", "where-next")[0].all("li")
    coverage = coverage_of(project)
    expected = coverage.where_to_test_next()
    # never.unused misses 3, then grade (2, called twice) before same (2, once), then
    # the three missing one, by file and line
    assert [fn.qualname for fn in expected] == ["unused", "grade", "same", "pick", "total",
                                                "tag"]
    assert len(items) == len(expected)
    for item, fn in zip(items, expected, strict=True):
        links = item.all("a")
        assert links[0].text() == fn.qualname
        where = f"{os.path.relpath(fn.profile.file, project)}:{fn.profile.first_line}"
        assert links[1].text() == where
        page = links[0].attrs["href"]
        assert links[1].attrs["href"] == page
        assert (project / "report" / page).is_file()
        assert item.all("span", "basis")[0].text() == f"{fn.basis.run}/{fn.basis.possible}"
        assert item.all("strong", "missing")[0].text() == str(fn.basis.missed)
        first = fn.next_paths().paths[0]
        story = links[2]
        assert story.text() == path_story(fn.profile, first, fn.lines)
        target, _hash, number = story.attrs["href"].partition("#path-")
        assert target == page
        chosen = page_data(project / "report" / page)["paths"][int(number)]
        assert (chosen["kind"], chosen["key"]) == ("next", first.key)
    # a story quotes the source, escaped
    text = (project / "report" / "index.html").read_text()
    assert "if text == &quot;&lt;/script&gt;&lt;b&gt;&quot;: → true" in text
    assert "<b>" not in text


def _steps(item: Node) -> list[tuple[int, str]]:
    """The decisions a next path's item tells: (line, branch)."""
    return [(int(li.all("span", "n")[0].text()), li.all("span", "take")[0].text())
            for li in item.all("ol", "steps")[0].all("li") if li.all("span", "n")]


def _grade_lines(steps: list[tuple[int, str]]) -> list[int]:
    """The lines of grade that run when its decisions go as ``steps`` say."""
    taken = dict(steps)
    lines = [17] + ([18] if taken[17] == "true" else []) + [19]
    if taken[19] == "true":
        return [*lines, 20]
    return [*lines, 21, 22 if taken[21] == "true" else 23]


def test_a_function_page_lists_the_next_paths_with_the_lines_they_run(project: Path
                                                                     ) -> None:
    page_file = page_of(project, "alpha_py_grade_16")
    page = parse(page_file)
    data = page_data(page_file)
    fn = next(f for f in coverage_of(project).functions() if f.qualname == "grade")
    expected = fn.next_paths().paths
    assert len(expected) == 2  # 2 of grade's 4 independent paths ran
    ol = page.by_id("next-paths")
    assert ol is not None
    items = [li for li in ol.all("li") if "path" in li.classes]
    assert [li.all("span", "label")[0].text() for li in items] == ["next 1", "next 2"]
    ran = {p["key"] for p in data["paths"] if p["kind"] == "run"}
    for item, path in zip(items, expected, strict=True):
        assert "next" in item.classes
        assert item.attrs["tabindex"] == "0"
        shown = data["paths"][int(item.attrs["data-index"])]
        assert (shown["kind"], shown["key"], shown["missed"]) == ("next", path.key, True)
        assert shown["key"] not in ran
        steps = _steps(item)
        # the lines highlighted are those the decisions told beside it run
        assert shown["lines"] == _grade_lines(steps)
        assert {int(k): v for k, v in shown["decisions"].items()} == dict(steps)
        for line in shown["lines"]:
            assert page.by_id(f"line-{line}") is not None
    # the missed paths list stays: grade's other 4 paths
    kinds = [p["kind"] for p in data["paths"]]
    assert (kinds.count("run"), kinds.count("missed")) == (2, 4)


def test_impossible_paths_are_listed_with_their_reason(project: Path) -> None:
    page_file = page_of(project, "alpha_py_same_26")
    page = parse(page_file)
    data = page_data(page_file)
    fn = next(f for f in coverage_of(project).functions() if f.qualname == "same")
    found = fn.next_paths()
    # flag true then false (or false then true) cannot run: one path remains to write,
    # the last dimension has no feasible path
    assert (len(found.paths), len(found.impossible), found.unfound) == (1, 2, 1)
    ol = page.by_id("impossible-paths")
    assert ol is not None
    items = [li for li in ol.all("li") if "path" in li.classes]
    assert [li.all("span", "reason")[0].text() for li in items] == [
        f"cannot run: {why}" for _path, why in found.impossible]
    reason = items[0].all("span", "reason")[0].text()
    assert "`flag`" in reason  # the test, and the two lines it is made on
    assert "line 27" in reason
    assert "line 31" in reason
    assert [data["paths"][int(li.attrs["data-index"])]["key"] for li in items] == [
        path.key for path, _why in found.impossible]
    unfound = page.by_id("unfound")
    assert unfound is not None
    assert unfound.text().startswith("1 more independent path:")
    # a complete basis says so, and lists nothing to write
    whole = parse(page_of(project, "beta_py_whole_10"))
    assert whole.by_id("next-none") is not None
    assert whole.by_id("next-paths") is None


def test_the_pytest_plugins_html_has_the_terminal_reports_figures(project: Path,
                                                                  tmp_path: Path) -> None:
    """The session's HTML report is computed with the same exclusions as its table."""
    suite = tmp_path / "suite"
    suite.mkdir()
    for name in ("pyproject.toml", "prog.py"):
        (suite / name).write_text((project / name).read_text())
    (suite / "pkg").mkdir()
    for name in ("__init__.py", "alpha.py", "beta.py"):
        (suite / "pkg" / name).write_text((project / "pkg" / name).read_text())
    (suite / "test_prog.py").write_text(TESTS)
    done = pytest_in(suite, "--pathprof", "--pathprof-report=term",
                     "--pathprof-report=html:report", "test_prog.py")
    assert done.returncode == 0, done.stdout + done.stderr
    table = re.search(r"^TOTAL\s+(\d+)\s+(\d+)\s+\d+\s+\S+\s+(\d+)/(\d+)", done.stdout, re.M)
    assert table is not None, done.stdout
    possible, run, basis, dimension = map(int, table.groups())
    index = parse(suite / "report" / "index.html")
    total = figures(index.all("tr", "total")[0])
    assert (total["possible"], total["run"], total["basis"]) == (possible, run,
                                                                 (basis, dimension))
    # the overload stubs and pick's raise are left out, as in the table
    assert possible == 2 + 6 + 4 + 6 + 1 + 2
    assert any(p.text().startswith("Excluded: 2 functions (@overload 2)")
               for p in index.all("p", "scope"))


def test_pages_escape_what_the_next_paths_quote(project: Path) -> None:
    text = page_of(project, "beta_py_tag_14").read_text()
    assert '<code>if text == &quot;&lt;/script&gt;&lt;b&gt;&quot;:</code>' in text
    assert text.count("</script>") == 2  # the data block and the script tag
    assert "<b>" not in text
    assert "<i>" not in text


@needs_browser
def test_a_next_path_is_highlighted_in_a_browser(project: Path) -> None:
    """The where-to-test-next link opens the page on its path: the browser runs the
    page's script, which highlights the lines the path runs and selects its item."""
    index = parse(project / "report" / "index.html")
    story = index.all("ol", "where-next")[0].all("li")[1].all("a")[2]  # grade's first
    page, _hash, number = story.attrs["href"].partition("#path-")
    data = page_data(project / "report" / page)
    assert data["paths"][int(number)]["kind"] == "next"
    dom = _browser("--dump-dom", (project / "report" / page).as_uri() + f"#path-{number}").stdout
    on = [int(n) for n in re.findall(r'<tr id="line-(\d+)" class="on">', dom)]
    assert on == data["paths"][int(number)]["lines"]
    assert re.search(rf'<li class="path missed next selected" data-index="{number}"', dom)
    assert re.search(r'<body class="function[^"]*show-next', dom)
