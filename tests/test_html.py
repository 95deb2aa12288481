"""The HTML report: files, figures, escaping, the CFG picture, and a real browser.

Pages are checked by reading the files written; the browser tests run Debian's
Chromium headless (``chromium --headless --dump-dom`` runs the page's script and
prints the resulting DOM) and skip with a reason where no browser is installed.
"""

from __future__ import annotations

import html
import itertools
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from pathprof import load
from pathprof.cli import main
from pathprof.data.profile import cfg_of
from pathprof.graph import to_dag
from pathprof.report.cfg_picture import cfg_picture

from .test_run import pathprof_cli

SAMPLE = Path(__file__).resolve().parent.parent / "examples" / "pathcov"
BROWSER = shutil.which("chromium") or shutil.which("chromium-browser")
needs_browser = pytest.mark.skipif(BROWSER is None, reason="no Chromium installed "
                                   "(Debian: apt-get install chromium)")

TRICKY = '''
def shout(text):
    """Returns <b>bold</b> & "quoted" </script><script>alert(1)</script>"""
    if "<" in text:
        return "</script>"
    return text.upper()

shout("a")
shout("<")
'''


@pytest.fixture(scope="module")
def sample_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """examples/pathcov measured by its test suite (with test contexts), as HTML."""
    project = tmp_path_factory.mktemp("html") / "pathcov"
    shutil.copytree(SAMPLE, project, ignore=shutil.ignore_patterns(".pathprof*", "htmlpath*",
                                                                   "__pycache__"))
    # Not as an xdist worker, even when this suite runs under xdist.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "PATHPROF_"))}
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                    "--pathprof", "--pathprof-context=test", "--pathprof-report=html:report"],
                   cwd=project, check=True, capture_output=True, timeout=300, env=env)
    return project


def page_data(page: Path) -> dict:
    text = page.read_text()
    raw = re.search(r'<script type="application/json" id="pathprof-data">(.*?)</script>',
                    text, re.S)
    assert raw is not None
    return json.loads(raw.group(1))


def test_index_lists_every_function_with_its_figures(sample_report: Path) -> None:
    index = (sample_report / "report" / "index.html").read_text()
    # basis: dimensions 3 + 5 + 5 (reserve: 2 decisions; price: 4; reorder_list: 3
    # decisions and a loop header), all the paths that ran independent: 2 + 3 + 2
    assert "<strong>53.8%</strong> basis path coverage: 7 of 13 independent paths" in index
    assert "30.4% of paths: 7 of 23 paths run" in index  # 3 + 8 + 12 possible
    rows = re.findall(r'<tr class="fn">(.*?)</tr>', index, re.S)
    price = next(r for r in rows if ">price</a>" in r)
    cells = re.findall(r'data-sort="([^"]*)"', price)
    assert cells[1:6] == ["2", "12", "16.666667", "5", "40.000000"]
    assert ">2/5<" in price
    for page in re.findall(r'href="([^"]+\.html)"', index):
        assert (sample_report / "report" / page).is_file()
    for static in ("style.css", "pathprof.js"):
        assert (sample_report / "report" / static).is_file()


def test_function_page_has_every_run_and_missed_path(sample_report: Path) -> None:
    page = next((sample_report / "report").glob("*_price_*.html"))
    data = page_data(page)
    assert data["format"] == 2
    kinds = [p["kind"] for p in data["paths"]]
    # 2 of 12 paths ran; basis 2 of 5: 3 next paths to write, all among the missed
    assert (kinds.count("run"), kinds.count("missed"), kinds.count("next")) == (2, 10, 3)
    assert all(p["missed"] == (p["kind"] != "run") for p in data["paths"])
    text = page.read_text()
    for path in data["paths"]:
        for line in path["lines"]:
            assert f'id="line-{line}"' in text  # every highlighted line is on the page
    assert "ran in 1 test" in text  # contexts: each run path by one test
    assert "test_price_plain" in text
    svg = html.unescape(text)  # Graphviz writes the "-" of an id as &#45;
    assert 'id="node-' in svg
    assert 'id="edge-' in svg


def test_no_network_and_source_is_escaped(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "tricky.py"
    script.write_text(TRICKY)
    pathprof_cli(tmp_path, "run", "--data-file", str(tmp_path / "d"), str(script))
    assert main(["html", "--data-file", str(tmp_path / "d"), "-d", str(tmp_path / "out")]) == 0
    for page in (tmp_path / "out").glob("*.html"):
        text = page.read_text()
        assert not re.search(r'(src|href)="(https?:)?//', text), page.name
        assert "<script>alert" not in text
        assert "<b>bold" not in text
    shout = next((tmp_path / "out").glob("*shout*.html")).read_text()
    assert "&lt;b&gt;bold&lt;/b&gt; &amp; &quot;quoted&quot;" in shout
    assert shout.count("</script>") == 2  # the data block and the script tag, nothing else


def test_fallback_picture_has_every_block_and_edge(sample_report: Path) -> None:
    fn = next(f for f in load(str(sample_report / ".pathprof")).functions
              if f.qualname == "reorder_list")
    picture = cfg_picture(fn, {}, None, use_graphviz=False)
    assert picture.drawn_by == "pathprof"
    dag = to_dag(cfg_of(fn.meta))
    for block in dag.reachable:
        assert picture.svg.count(f'id="node-{block}"') == 1
    for eid, (src, dst, _label) in enumerate(fn.meta.edges):
        if src in dag.reachable and dst in dag.reachable:
            assert picture.svg.count(f'id="edge-{eid}"') == 1


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")
def test_graphviz_picture_keeps_the_ids(sample_report: Path) -> None:
    fn = next(f for f in load(str(sample_report / ".pathprof")).functions
              if f.qualname == "price")
    picture = cfg_picture(fn, {0: 2}, None)
    assert picture.drawn_by == "graphviz"
    assert picture.svg.startswith("<svg")
    svg = html.unescape(picture.svg)  # Graphviz writes the "-" of an id as &#45;
    assert 'id="node-0"' in svg
    assert 'id="edge-0"' in svg


def _browser(*args: str) -> subprocess.CompletedProcess[str]:
    assert BROWSER is not None
    return subprocess.run([BROWSER, "--headless", "--no-sandbox", "--disable-gpu",
                           "--hide-scrollbars", *args], capture_output=True, text=True,
                          timeout=120)


@needs_browser
def test_selecting_a_path_highlights_its_lines_in_a_browser(sample_report: Path) -> None:
    page = next((sample_report / "report").glob("*_price_*.html"))
    data = page_data(page)
    for index in (0, 1, 5):
        dom = _browser("--dump-dom", f"{page.as_uri()}#path-{index}").stdout
        on = {int(n) for n in re.findall(r'<tr id="line-(\d+)" class="on">', dom)}
        assert on == set(data["paths"][index]["lines"])
        assert re.search(rf'<li class="path[^"]* selected" data-index="{index}"', dom)


def _png_colours(path: Path) -> int:
    """Distinct byte values in the decompressed image data: 1-2 for a blank page."""
    raw = path.read_bytes()
    assert raw[:8] == b"\x89PNG\r\n\x1a\n"
    data, at = b"", 8
    while at < len(raw):
        (length,) = struct.unpack(">I", raw[at:at + 4])
        kind = raw[at + 4:at + 8]
        if kind == b"IDAT":
            data += raw[at + 8:at + 8 + length]
        at += 12 + length
    return len(set(zlib.decompress(data)))


@needs_browser
def test_screenshots_of_index_and_function_page(sample_report: Path, tmp_path: Path) -> None:
    report = sample_report / "report"
    for page in (report / "index.html", next(report.glob("*_price_*.html"))):
        shot = tmp_path / f"{page.stem}.png"
        _browser("--window-size=1280,900", f"--screenshot={shot}", page.as_uri())
        assert shot.is_file()
        assert _png_colours(shot) > 20  # text, highlight and picture, not a blank page


def test_time_metric_is_shown_per_path(tmp_path: Path) -> None:
    script = tmp_path / "tricky.py"
    script.write_text(TRICKY)
    pathprof_cli(tmp_path, "run", "--metric", "time", "--data-file", str(tmp_path / "d"),
                 str(script))
    assert main(["html", "--data-file", str(tmp_path / "d"), "-d", str(tmp_path / "out")]) == 0
    shout = next((tmp_path / "out").glob("*shout*.html")).read_text()
    times = re.findall(r'<span class="time">([^<]*)</span>', shout)
    assert len(times) == 2  # both paths ran once, each with its own time
    assert all(re.fullmatch(r"[\d.]+ (ns|µs|ms|s)", t) for t in times)


def _pages_by_place(report: Path) -> dict[str, str]:
    """``file:line qualname`` -> the page the index links it to, each link checked
    to lead to a page that shows that function."""
    index = (report / "index.html").read_text()
    found = {}
    for body in re.findall(r'<tbody class="group[^"]*">(.*?)</tbody>', index, re.S):
        file = html.unescape(re.search(r'class="toggle"[^>]*>([^<]*)<', body).group(1))
        for page, name, line in re.findall(r'<tr class="fn"><td[^>]*><a href="([^"]+)">'
                                           r'([^<]*)</a> <span class="where">:(\d+)', body):
            where = re.search(r'<span class="where">([^<]*)</span></h1>',
                              (report / page).read_text()).group(1)
            assert html.unescape(where) == f"{file}:{line}", (page, where)
            found[f"{file}:{line} {html.unescape(name)}"] = page
    return found


def test_every_function_has_a_page_of_its_own_the_same_in_every_run(tmp_path: Path) -> None:
    """Three files named util.py: each function has its page, and the index links
    each row to its own. The names depend only on the function (they were numbered
    in the order written: a/util.py's ``f_1`` on line 2 took ``util_py_f_1_2.html``,
    which c/util.py's ``f`` then overwrote as the third page of ``util_py_f_1``), so
    they stay the same when the report holds other files."""
    for package, body in (("a", "\ndef f_1(x):\n    return x\n"),
                          ("b", "def f(x):\n    return x\n"),
                          ("c", "def f(x):\n    return -x\n")):
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("")
        (tmp_path / package / "util.py").write_text(body)
    (tmp_path / "main.py").write_text("import sys\nfrom b import util as b\n"
                                      "from c import util as c\nb.f(1); c.f(1)\n"
                                      "if sys.argv[1:]:\n    from a import util as a\n"
                                      "    a.f_1(1)\n")
    pathprof_cli(tmp_path, "run", "--data-file", "all", "main.py", "with-a")
    pathprof_cli(tmp_path, "html", "--data-file", "all", "-d", "all_report")
    pages = _pages_by_place(tmp_path / "all_report")
    assert sorted(pages) == ["a/util.py:2 f_1", "b/util.py:1 f", "c/util.py:1 f"]
    assert len(set(pages.values())) == 3
    assert len(list((tmp_path / "all_report").glob("util_py_*.html"))) == 3
    pathprof_cli(tmp_path, "run", "--data-file", "some", "main.py")  # without a/util.py
    pathprof_cli(tmp_path, "html", "--data-file", "some", "-d", "some_report")
    assert _pages_by_place(tmp_path / "some_report") == {
        place: page for place, page in pages.items() if not place.startswith("a/")}


STOPS = '''\
def two(a, b):
    n = 0
    if a:
        n += 1
    if b:
        n += 2
    return n


for a, b in [(0, 0), (1, 0), (0, 1), (1, 1), (1, 1)]:
    two(a, b)
'''


def test_lower_bounds_are_marked_as_the_terminal_report_marks_them(tmp_path: Path) -> None:
    """``two`` has 4 paths in a space of 3: once 3 independent ones ran it stopped
    counting (--stop-counting basis, pytest --pathprof's default), so its paths run,
    their share and its executions are lower bounds, and its missed path may have
    run. The terminal says ≥3 and ≥75.0%; so does every HTML figure of them."""
    (tmp_path / "stops.py").write_text(STOPS)
    pathprof_cli(tmp_path, "run", "--stop-counting", "basis", "stops.py")
    table = pathprof_cli(tmp_path, "coverage").stdout
    assert re.search(r"^TOTAL\s+4\s+≥3\s+≤1\s+≥75\.0%\s+3/3\s+100\.0%$", table, re.M), table
    pathprof_cli(tmp_path, "html", "-d", "out")
    index = (tmp_path / "out" / "index.html").read_text()
    assert ("basis path coverage: 3 of 3 independent paths in 1 function of 1 file · "
            "≥75.0% of paths: ≥3 of 4 paths run.") in index
    rows = re.findall(r'<tr class="(?:file-row|fn|total)">(.*?)</tr>', index, re.S)
    assert len(rows) == 3  # the file, its function, the total
    for row in rows:
        cells = re.findall(r'<td class="num"[^>]*>([^<]*)</td>', row)
        assert (cells[0], cells[2], cells[-1]) == ("≥3", "≥75.0%", "≥3"), cells
        assert cells[3:5] == ["3/3", "100.0%"]  # basis figures are exact
    page = next((tmp_path / "out").glob("stops_py_two_1_*.html")).read_text()
    assert ("<strong>≥75.0%</strong> path coverage: ≥3 of 4 paths run · "
            "<strong>100.0%</strong> basis path coverage: 3 of 3 independent paths · "
            "≥3 path executions") in page
    counts = re.findall(r'<span class="count">([^<]*)</span>', page)
    assert sorted(counts) == ["not seen run", "≥1 · 33.3%", "≥1 · 33.3%", "≥1 · 33.3%"]


GUARDS = '''\
def check(x, scale):
    if x is None:
        raise ValueError("no x")
    y = x * scale
    return y + 1


def total(items):
    if items is None:
        raise ValueError("no items")
    total = 0
    for i in items:
        if i < 0:
            continue
        total += i
    return total


check(1, 2)
check(2, 3)
total([1, 2, -3])
total([])
'''


def _boxes_and_routes(svg: str) -> tuple[dict[int, tuple[float, ...]],
                                         dict[int, tuple[str, list[tuple[float, float]]]]]:
    """Each block's box (x, y, width, height), and each edge's class and the points
    of its route (a curve's control points taken as a route: the curve lies within)."""
    boxes = {int(n): tuple(map(float, box)) for n, *box in re.findall(
        r'<g id="node-(\d+)" class="node"><rect x="([\d.]+)" y="([\d.]+)" '
        r'width="([\d.]+)" height="([\d.]+)"', svg)}
    routes = {}
    for eid, classes, shape, rest in re.findall(
            r'<g id="edge-(\d+)" class="([^"]*)"><path d="([^"]*)"([^>]*)>', svg):
        numbers = [float(v) for v in re.findall(r"-?[\d.]+", shape)]
        routes[int(eid)] = (classes + ("" if "dasharray" not in rest else " dashed"),
                            list(zip(numbers[::2], numbers[1::2], strict=True)))
    return boxes, routes


def _enters(a: tuple[float, float], b: tuple[float, float], box: tuple[float, ...]) -> bool:
    """Whether the segment from a to b passes through the inside of the box (its
    border left out): Liang-Barsky clipping."""
    x, y, width, height = box
    low, high = 0.0, 1.0
    dx, dy = b[0] - a[0], b[1] - a[1]
    for p, q in ((-dx, a[0] - x - 1), (dx, x + width - 1 - a[0]),
                 (-dy, a[1] - y - 1), (dy, y + height - 1 - a[1])):
        if p == 0:
            if q < 0:
                return False
        elif p < 0:
            low = max(low, q / p)
        else:
            high = min(high, q / p)
    return low < high


def _on_border(point: tuple[float, float], box: tuple[float, ...]) -> bool:
    x, y, width, height = box
    near = x - 0.2 <= point[0] <= x + width + 0.2 and y - 0.2 <= point[1] <= y + height + 0.2
    return near and not (x + 0.2 < point[0] < x + width - 0.2
                         and y + 0.2 < point[1] < y + height - 0.2)


def test_the_picture_joins_the_right_blocks_and_shows_the_edges_that_never_ran(
        tmp_path: Path) -> None:
    """Guard clauses, drawn without Graphviz: every edge starts on its source's box
    and ends on its target's, crosses no other box (``total``'s raise went to EXIT
    under the loop's blocks, where it could not be seen), ends at a point of its
    own (the return's arrow covered the raise's at EXIT's middle), and is dashed,
    with the class ``never``, exactly when it never ran."""
    from pathprof.analysis.edgepredict import cfg_edge_counts
    from pathprof.data.profile import numbering_of

    (tmp_path / "guards.py").write_text(GUARDS)
    pathprof_cli(tmp_path, "run", "guards.py")
    problems = []
    for fn in load(str(tmp_path / ".pathprof")).functions:
        counts = cfg_edge_counts(fn, numbering_of(fn.meta))
        boxes, routes = _boxes_and_routes(cfg_picture(fn, counts, None,
                                                      use_graphviz=False).svg)
        assert len(routes) == len(fn.meta.edges)
        ends: dict[tuple[float, float], int] = {}
        for eid, (classes, points) in routes.items():
            src, dst, _label = fn.meta.edges[eid]
            where = f"{fn.qualname}: edge {eid} ({src} -> {dst})"
            if not (_on_border(points[0], boxes[src]) and _on_border(points[-1], boxes[dst])):
                problems.append(f"{where} does not join its blocks")
            for a, b in itertools.pairwise(points):
                problems += [f"{where} crosses block {block}" for block, box in boxes.items()
                             if _enters(a, b, box)]
            if points[-1] in ends:
                problems.append(f"{where} ends where edge {ends[points[-1]]} does")
            ends[points[-1]] = eid
            never = not counts.get(eid, 0)
            if ("never" in classes.split(), "dashed" in classes.split()) != (never, never):
                problems.append(f"{where} ran {counts.get(eid, 0)} times, drawn {classes!r}")
    assert problems == []
