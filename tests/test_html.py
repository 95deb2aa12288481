"""The HTML report: files, figures, escaping, the CFG picture, and a real browser.

Pages are checked by reading the files written; the browser tests run Debian's
Chromium headless (``chromium --headless --dump-dom`` runs the page's script and
prints the resulting DOM) and skip with a reason where no browser is installed.
"""

from __future__ import annotations

import html
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
