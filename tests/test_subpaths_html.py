"""``pathprof hot --html``: the index and the subpath pages against the JSON of the
same run (a workload whose subpaths cross from one file into another), escaping,
a source file gone by report time, an older JSON without ``function_line``, and
the empty report.

Pages are parsed with :mod:`html.parser` into a small tree."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

import pytest

from pathprof.api import subpath_sources
from pathprof.exceptions import DataError
from pathprof.report.subpaths_html import write_subpaths_html
from pathprof.report.subpaths_text import NOTHING_SAMPLED

# classify's def is on line 4, its first test on 5; the second test's line holds
# markup that must come out escaped.
HELPER = textwrap.dedent('''\
    """Words for numbers."""
    LIMIT = 3

    def classify(n):
        if n % 15 == 0:
            return "fizzbuzz"
        if n % 5 == 0:  # <script>alert(1)</script>
            return "buzz"
        if n % 3 == 0:
            return "fizz"
        return str(n)
''')

# tally's def is on line 4 and its loop on 9: the context before the loop starts
# at line 6, not at the def. Its inner loop (15-16) runs lines at several steps of
# one subpath.
WORK = textwrap.dedent('''\
    from helper import classify


    def tally(limit):
        counts = {}
        first = None
        last = None
        seen = 0
        for n in range(limit):
            word = classify(n)
            if word.isdigit():
                counts["number"] = counts.get("number", 0) + 1
            else:
                counts[word] = counts.get(word, 0) + 1
            for _ in range(2):
                seen += 1
        return counts


    print(tally(6000)["fizz"])
''')

TOP = 12
VOID = {"meta", "link", "br", "input", "img", "hr"}


@dataclass
class Node:
    tag: str
    attrs: dict[str, str]
    children: list[Node | str] = field(default_factory=list)

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def all(self, tag: str, **attrs: str) -> list[Node]:
        """Descendants with this tag whose attributes hold these values (``class_``:
        one of the classes)."""
        found = []
        for child in self.children:
            if isinstance(child, str):
                continue
            if child.tag == tag and all(
                    (value in child.attrs.get("class", "").split()) if name == "class_"
                    else child.attrs.get(name) == value for name, value in attrs.items()):
                found.append(child)
            found += child.all(tag, **attrs)
        return found

    def one(self, tag: str, **attrs: str) -> Node:
        found = self.all(tag, **attrs)
        assert len(found) == 1, (tag, attrs, len(found))
        return found[0]


class _TreeBuilder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("root", {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].children.append(node)
        if tag not in VOID:
            self.stack.append(node)

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            return
        assert self.stack[-1].tag == tag, (self.stack[-1].tag, tag)  # well formed
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)


def parse(page: Path) -> Node:
    builder = _TreeBuilder()
    builder.feed(page.read_text(encoding="utf-8"))
    builder.close()
    assert builder.stack == [builder.root]
    return builder.root


def _hot(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PATHPROF_")}
    env["COLUMNS"] = "140"
    return subprocess.run([sys.executable, "-m", "pathprof", "hot", "--no-live", *args],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def _workload(directory: Path) -> None:
    (directory / "helper.py").write_text(HELPER)
    (directory / "work.py").write_text(WORK)


@dataclass
class Run:
    directory: Path
    done: subprocess.CompletedProcess[str]
    document: dict

    @property
    def report(self) -> Path:
        return self.directory / "out"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    directory = tmp_path_factory.mktemp("hot_html")
    _workload(directory)
    done = _hot(directory, "--exact", "--seed", "5", "--period", "20", "--longest", "3",
                "--top", str(TOP), "--json", "hot.json", "--html", "out", "work.py")
    assert done.returncode == 0, done.stderr
    return Run(directory, done, json.loads((directory / "hot.json").read_text()))


def _segments(blocks: list[dict]) -> list[list[tuple[int, dict]]]:
    """The blocks, numbered from 1, in runs of one function."""
    runs: list[list[tuple[int, dict]]] = []
    for step, block in enumerate(blocks, 1):
        if not runs or (runs[-1][-1][1]["file"], runs[-1][-1][1]["function"]) != (
                block["file"], block["function"]):
            runs.append([])
        runs[-1].append((step, block))
    return runs


def test_the_command_writes_the_report_beside_the_table(run: Run) -> None:
    assert run.done.stdout.splitlines() == ["1600"]  # the program's own output, alone
    assert "Hottest subpaths" in run.done.stderr  # the terminal table is still there
    assert run.done.stderr.splitlines()[-1] == f"wrote {os.path.join('out', 'index.html')}"
    for name in ("index.html", "style.css", "pathprof.js"):
        assert (run.report / name).is_file()


def test_the_index_lists_every_subpath_with_the_json_figures(run: Run) -> None:
    subpaths = run.document["subpaths"]
    assert len(subpaths) == TOP
    index = parse(run.report / "index.html")
    table = index.one("table", id="subpaths")
    assert "sortable" in table.attrs["class"].split()
    heads = [th.text() for th in table.all("th")]
    assert heads == ["#", "Estimated", "± (95%)", "Interval", "Exact", "Length", "Functions",
                     "Route"]
    rows = table.all("tr")[1:]
    assert len(rows) == TOP
    for row, subpath in zip(rows, subpaths, strict=True):
        cells = row.all("td")
        assert [c.text() for c in cells[:1]] == [str(subpath["rank"])]
        assert float(cells[1].attrs["data-sort"]) == subpath["estimate"]
        assert cells[1].text() == f"{subpath['estimate']:,.0f}"
        error = subpath["relative_error"]
        assert cells[2].text() == ("≥100%" if error >= 1 else f"{error:.1%}")
        high = "∞" if subpath["high"] is None else f"{subpath['high']:,.0f}"
        assert cells[3].text() == f"{subpath['low']:,.0f}\u2013{high}"
        assert cells[4].text() == f"{subpath['exact']:,}"
        assert cells[5].text() == str(subpath["length"]) == str(len(subpath["blocks"]))
        names = [seg[0][1]["function"] for seg in _segments(subpath["blocks"])]
        assert cells[6].text() == " → ".join(names)
        link = cells[7].one("a")
        assert link.attrs["href"] == f"subpath-{subpath['rank']}.html"
        cycle = subpath.get("cycle")
        if cycle is None:
            assert "-block cycle" not in cells[7].text()
        else:  # a row folded from a loop's subpaths says so, after its route
            assert f"of a {cycle['turn_length']}-block cycle" in cells[7].text()
            assert "-block cycle" not in link.text()
        assert (run.report / link.attrs["href"]).is_file()
    assert not (run.report / f"subpath-{TOP + 1}.html").exists()
    summary = index.one("p", class_="summary").text()
    assert summary.startswith(f"About {run.document['positions']:,} blocks run; "
                              f"{run.document['sampled']:,} samples kept of "
                              f"{run.document['distinct_sampled']:,} distinct subpaths "
                              f"(budget {run.document['budget']:,}); one start per "
                              f"{run.document['period']:,.0f} blocks (--period 20; "
                              f"{run.document['resamplings']} resampling")


def test_each_page_shows_the_json_figures(run: Run) -> None:
    for subpath in run.document["subpaths"]:
        page = parse(run.report / f"subpath-{subpath['rank']}.html")
        estimate = page.one("dd", id="estimate")
        assert float(estimate.attrs["data-value"]) == subpath["estimate"]
        assert estimate.text() == f"{subpath['estimate']:,.0f}"
        exact = page.one("dd", id="exact")
        assert int(exact.attrs["data-value"]) == subpath["exact"]
        assert exact.text() == f"{subpath['exact']:,}"
        assert page.one("dd", id="length").text() == f"{subpath['length']} blocks"


def _check_sections(page: Node, subpath: dict, *, function_lines: dict[str, int]) -> None:
    """Sections in the order of the blocks' functions; highlighted lines = the blocks'
    ranges, each with its steps; the context from 3 lines before (not before the
    function's first line, when known) to 3 after."""
    runs = _segments(subpath["blocks"])
    sections = page.all("section", class_="segment")
    assert len(sections) == len(runs)
    for k, (section, blocks) in enumerate(zip(sections, runs, strict=True), 1):
        file, function = blocks[0][1]["file"], blocks[0][1]["function"]
        first = min(b["first_line"] for _s, b in blocks)
        last = max(b["last_line"] for _s, b in blocks)
        assert section.attrs["id"] == f"segment-{k}"
        heading = section.one("h2")
        assert heading.one("code").text() == function
        assert heading.one("span", class_="where").text() == f"{os.path.basename(file)}:{first}"
        steps: dict[int, list[int]] = {}
        for step, block in blocks:
            for line in range(block["first_line"], block["last_line"] + 1):
                steps.setdefault(line, []).append(step)
        rows = section.one("table", class_="source").all("tr")
        numbers = [int(r.one("td", class_="n").text()) for r in rows]
        source = Path(file).read_text().splitlines()
        start = max(first - 3, function_lines.get(function, 1))
        assert numbers == list(range(start, min(last + 3, len(source)) + 1))
        on = {n: r.one("td", class_="taken").text() for n, r in zip(numbers, rows, strict=True)
              if "on" in r.attrs.get("class", "").split()}
        assert on == {n: ", ".join(map(str, s)) for n, s in steps.items()}
        for n, row in zip(numbers, rows, strict=True):
            assert row.one("td", class_="code").text() == source[n - 1]
            assert row.attrs["id"] == f"s{k}-line-{n}"


def test_a_page_across_two_files_shows_both_in_order(run: Run) -> None:
    subpaths = run.document["subpaths"]
    for subpath in subpaths:
        page = parse(run.report / f"subpath-{subpath['rank']}.html")
        _check_sections(page, subpath, function_lines={"tally": 4, "classify": 4})
        route = page.one("p", class_="route").text()
        pieces = []
        for blocks in _segments(subpath["blocks"]):
            for i, (_step, b) in enumerate(blocks):
                lines = (str(b["first_line"]) if b["first_line"] == b["last_line"]
                         else f"{b['first_line']}-{b['last_line']}")
                pieces.append(f"{b['function']}:{lines}" if i == 0 else lines)
        assert route == " → ".join(pieces)
        cycle = subpath.get("cycle")
        if cycle is not None:  # a row folded from a loop's subpaths says so
            said = page.one("p", class_="cycle").text()
            assert said.startswith(f"{cycle['turns']:g} turn")
            assert f"of a {cycle['turn_length']}-block cycle" in said
    # The cases checked above are there: a subpath from work.py into helper.py, and a
    # line run at several steps of one segment (its steps column shows them all).
    crossing = [str(run.directory / "work.py"), str(run.directory / "helper.py")]
    assert any([seg[0][1]["file"] for seg in _segments(s["blocks"])][-2:] == crossing
               for s in subpaths)
    assert any(len({b["first_line"] for _s, b in seg}) < len(seg)
               for s in subpaths for seg in _segments(s["blocks"]))


def test_source_text_is_escaped(run: Run) -> None:
    shown = [s for s in run.document["subpaths"]
             if any(b["function"] == "classify" and b["first_line"] in (5, 7, 9)
                    for b in s["blocks"])]
    assert shown
    for subpath in shown:
        text = (run.report / f"subpath-{subpath['rank']}.html").read_text()
        assert "<script>alert" not in text
        assert "# &lt;script&gt;alert(1)&lt;/script&gt;" in text
        assert "<script" not in text  # the subpath pages need no script at all


def test_an_unreadable_source_file_is_named_not_fatal(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # files are shown relative to the current directory
    _workload(tmp_path)
    done = _hot(tmp_path, "--exact", "--seed", "5", "--period", "20", "--longest", "3",
                "--top", str(TOP), "--json", "hot.json", "work.py")
    assert done.returncode == 0, done.stderr
    (tmp_path / "helper.py").unlink()
    document = json.loads((tmp_path / "hot.json").read_text())
    index = write_subpaths_html(document, str(tmp_path / "late"),
                                sources=subpath_sources(document))
    assert index == str(tmp_path / "late" / "index.html")
    checked = 0
    for subpath in document["subpaths"]:
        page = parse(tmp_path / "late" / f"subpath-{subpath['rank']}.html")
        sections = page.all("section", class_="segment")
        for section, blocks in zip(sections, _segments(subpath["blocks"]), strict=True):
            if blocks[0][1]["function"] == "classify":
                assert section.all("table") == []
                assert section.one("p", class_="warn").text() == (
                    "The source cannot be read (No such file or directory).")
                assert section.one("p", class_="lines-run").text() == "Lines run: " + ", ".join(
                    f"{b['first_line']}" + ("" if b["first_line"] == b["last_line"]
                                            else f"-{b['last_line']}") + f" (step {s})"
                    for s, b in blocks)
                checked += 1
            else:
                assert section.all("p", class_="warn") == []
                assert section.one("table", class_="source").all("tr", class_="on")
    assert checked


def test_an_older_json_without_function_line(run: Run, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the function's first line, the context is 3 lines, from the file's top."""
    monkeypatch.chdir(run.directory)  # files are shown relative to the current directory
    document = json.loads(json.dumps(run.document))
    for subpath in document["subpaths"]:
        for block in subpath["blocks"]:
            del block["function_line"]
    write_subpaths_html(document, str(tmp_path / "old"), sources=subpath_sources(document))
    for subpath in document["subpaths"]:
        page = parse(tmp_path / "old" / f"subpath-{subpath['rank']}.html")
        _check_sections(page, subpath, function_lines={})


def test_nothing_sampled_says_so_and_json_to_stdout_moves_the_message(tmp_path: Path) -> None:
    (tmp_path / "tiny.py").write_text("def f():\n    return 1\n\nf()\n")
    done = _hot(tmp_path, "--period", "1e9", "--json", "-", "--html", "out", "tiny.py")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["subpaths"] == []  # standard output is the JSON alone
    assert done.stderr.splitlines()[-1] == f"wrote {os.path.join('out', 'index.html')}"
    index = parse(tmp_path / "out" / "index.html")
    assert index.one("p", class_="empty").text() == NOTHING_SAMPLED
    assert index.all("table") == []
    assert sorted(os.listdir(tmp_path / "out")) == ["index.html", "pathprof.js", "style.css"]


def test_a_report_that_cannot_be_written_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "tiny.py").write_text("def f():\n    return 1\n\nf()\n")
    (tmp_path / "taken").write_text("a file, not a directory")
    done = _hot(tmp_path, "--period", "1e9", "--html", "taken", "tiny.py")
    assert done.returncode != 0
    assert done.stderr.strip().splitlines()[-1].startswith(
        "pathprof: cannot write the report to taken: ")
    assert "Traceback" not in done.stderr


def test_blocks_without_lines_and_a_changed_file(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A document written by hand: a block with no source line is named so in the
    route and gets no highlighted line; a file now shorter than the lines run is
    said to have changed; another format is refused."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text("def f(x):\n    if x:\n        g()\n    return x\n")
    (tmp_path / "b.py").write_text("def g():\n    pass\n")
    a, b = str(tmp_path / "a.py"), str(tmp_path / "b.py")
    blocks = [{"file": a, "function": "f", "first_line": 2, "last_line": 3, "function_line": 1},
              {"file": a, "function": "f", "first_line": None, "last_line": None,
               "function_line": 1},
              {"file": b, "function": "g", "first_line": 9, "last_line": 9, "function_line": 8}]
    document = {"format": 1, "confidence": 0.9, "one_sided": True, "rank": "count",
                "encoding": "exact", "positions": 1000, "period": 10.0,
                "distinct_sampled": 1, "sampled": 3, "budget": 5, "resamplings": 0,
                "failures": 0,
                "subpaths": [{"rank": 1, "length": 3, "sampled": 3, "estimate": 120.0,
                              "relative_error": 1.5, "low": 10.0, "high": None,
                              "blocks": blocks}]}
    write_subpaths_html(document, "out", sources=subpath_sources(document))
    index = parse(tmp_path / "out" / "index.html")
    heads = [th.text() for th in index.one("table", id="subpaths").all("th")]
    assert "Exact" not in heads  # no exact counts in this document
    assert "± (90%)" in heads
    row = index.one("tr", id="subpath-1")
    assert [td.text() for td in row.all("td")][2:4] == ["≥100%", "10\u2013∞"]
    assert "bounds at 90% confidence (one-sided)." in index.one("p", class_="summary").text()
    page = parse(tmp_path / "out" / "subpath-1.html")
    assert page.one("p", class_="route").text() == "f:2-3 → (no source line) → g:9"
    first, second = page.all("section", class_="segment")
    on = {int(r.one("td", class_="n").text()): r.one("td", class_="taken").text()
          for r in first.all("tr", class_="on")}
    assert on == {2: "1", 3: "1"}
    assert [int(r.one("td", class_="n").text()) for r in first.all("tr")] == [1, 2, 3, 4]
    assert second.one("p", class_="warn").text() == (
        "The source has 2 lines, fewer than were run: it changed since the run.")
    assert second.one("p", class_="lines-run").text() == "Lines run: 9 (step 3)"
    with pytest.raises(DataError, match="format 2"):
        write_subpaths_html({**document, "format": 2}, "out2", sources={})
