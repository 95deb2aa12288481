"""pathprof.report.cfg_picture, the SVG picture of a function's CFG: every reachable
block once as ``node-<block>``, every CFG edge between reachable blocks once as
``edge-<id>``, labels from the source (cut to the box, escaped), edge thickness by
count and never-run edges dashed; in pathprof's own layout every edge starts on its
source's box and ends on its target's, each at a point of its own, crossing no box;
with Graphviz's ``dot`` (a stand-in script here) the DOT it is given and what happens
when it fails. Functions come from tiny sources instrumented in memory (not run: the
edge counts are given by hand)."""

from __future__ import annotations

import itertools
import os
import re
import stat
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from pathprof.data.profile import FunctionProfile, cfg_of
from pathprof.graph import to_dag
from pathprof.python.instrument import instrument_source
from pathprof.report.cfg_picture import BOX_H, BOX_W, LABEL_CHARS, CfgPicture, cfg_picture

SVG = "{http://www.w3.org/2000/svg}"

SIGN = """\
def sign(x):
    if x < 0:
        return -1
    return 1
"""
#: loops, a break and an else, a try with a handler and a finally, a with: backedges,
#: long edges and restarts (handler blocks)
SHAPES = """\
def loop(xs):
    n = 0
    for x in xs:
        if x:
            continue
        n += 1
    return n


def guarded(f):
    try:
        f()
    except ValueError:
        return 1
    finally:
        print("done")
    return 0


def spin(n):
    while n:
        n -= 1
        if n == 3:
            break
    else:
        return -1
    return n


def nested(rows):
    total = 0
    for row in rows:
        for cell in row:
            if cell > 0:
                total += cell
            elif cell < -10:
                return None
    return total


def ctx(m):
    with m:
        return 1
"""


def _functions(source: str, file: str = "/p/m.py") -> list[FunctionProfile]:
    meta = instrument_source(source, file).metadata
    return [FunctionProfile(file, info.qualname, info.code_line, meta.source_hash, info)
            for info in meta.functions]


def _edge(fn: FunctionProfile, label: str) -> int:
    return next(eid for eid, edge in enumerate(fn.meta.edges) if edge.label == label)


def _parse(picture: CfgPicture) -> tuple[dict[int, tuple[float, float]],
                                          dict[int, list[tuple[float, float]]],
                                          ET.Element]:
    """The picture's boxes (block -> top left corner) and edges (id -> points)."""
    root = ET.fromstring(picture.svg)
    boxes, edges = {}, {}
    for group in root.iter(f"{SVG}g"):
        kind, number = group.get("id", "").split("-")
        if kind == "node":
            rect = group.find(f"{SVG}rect")
            boxes[int(number)] = (float(rect.get("x")), float(rect.get("y")))
        else:
            d = group.find(f"{SVG}path").get("d")
            numbers = [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?", d)]
            edges[int(number)] = list(zip(numbers[::2], numbers[1::2], strict=True))
    return boxes, edges, root


def _crosses(a: tuple[float, float], b: tuple[float, float], box: tuple[float, float]) -> bool:
    """Whether the segment a-b passes through the inside of ``box`` (Liang-Barsky
    clipping against the box shrunk by half a pixel: touching its side is no crossing)."""
    x0, y0 = box[0] + 0.5, box[1] + 0.5
    x1, y1 = box[0] + BOX_W - 0.5, box[1] + BOX_H - 0.5
    dx, dy = b[0] - a[0], b[1] - a[1]
    low, high = 0.0, 1.0
    for p, q in ((-dx, a[0] - x0), (dx, x1 - a[0]), (-dy, a[1] - y0), (dy, y1 - a[1])):
        if p == 0:
            if q < 0:
                return False
            continue
        t = q / p
        if p < 0:
            low = max(low, t)
        else:
            high = min(high, t)
        if low > high:
            return False
    return True


def test_the_fallback_layout_has_every_block_and_edge_once() -> None:
    for fn in _functions(SIGN + "\n\n" + SHAPES):
        picture = cfg_picture(fn, {}, None, use_graphviz=False)
        assert picture.drawn_by == "pathprof"
        dag = to_dag(cfg_of(fn.meta))
        for block in dag.reachable:
            assert picture.svg.count(f'id="node-{block}"') == 1, (fn.qualname, block)
        drawn = sorted(int(n) for n in re.findall(r'id="edge-(\d+)"', picture.svg))
        assert drawn == [eid for eid, (src, dst, _label) in enumerate(fn.meta.edges)
                         if src in dag.reachable and dst in dag.reachable], fn.qualname


def test_every_edge_runs_from_its_sources_box_to_its_targets_and_crosses_no_box() -> None:
    for fn in _functions(SHAPES):
        boxes, edges, _root = _parse(cfg_picture(fn, {}, None, use_graphviz=False))
        starts, ends = [], []
        for eid, points in edges.items():
            src, dst, _label = fn.meta.edges[eid]
            (sx, sy), (ex, ey) = points[0], points[-1]
            # leaves the bottom of its source's box, enters the top of its target's
            assert sy == boxes[src][1] + BOX_H, (fn.qualname, eid)
            assert boxes[src][0] < sx < boxes[src][0] + BOX_W, (fn.qualname, eid)
            assert ey == boxes[dst][1], (fn.qualname, eid)
            assert boxes[dst][0] < ex < boxes[dst][0] + BOX_W, (fn.qualname, eid)
            starts.append((sx, sy))
            ends.append((ex, ey))
            for a, b in itertools.pairwise(points):
                for block, box in boxes.items():
                    assert not _crosses(a, b, box), (fn.qualname, eid, block)
        assert len(set(starts)) == len(starts), fn.qualname  # each at a point of its own
        assert len(set(ends)) == len(ends), fn.qualname


def test_blocks_are_labelled_with_their_lines_and_code() -> None:
    (fn,) = _functions(SIGN)
    picture = cfg_picture(fn, {}, SIGN.splitlines(), use_graphviz=False)
    _boxes, _edges, root = _parse(picture)
    labels = {group.get("id"): group.find(f"{SVG}text").text
              for group in root.iter(f"{SVG}g") if group.get("id", "").startswith("node-")}
    assert sorted(labels.values()) == ["2: if x < 0:", "3: return -1", "4: return 1", "ENTRY",
                                       "EXIT"]
    assert labels[f"node-{fn.meta.entry}"] == "ENTRY"
    assert labels[f"node-{fn.meta.exit}"] == "EXIT"
    assert "2: if x &lt; 0:" in picture.svg  # escaped in the SVG text


def test_without_the_source_a_block_is_its_lines() -> None:
    source = "def f(x):\n    y = (x +\n         1)\n    return y\n"
    (fn,) = _functions(source)
    svg = cfg_picture(fn, {}, None, use_graphviz=False).svg
    assert ">2-4</text>" in svg  # the block runs lines 2 to 4
    with_source = cfg_picture(fn, {}, source.splitlines(), use_graphviz=False).svg
    assert ">2-4: y = (x +</text>" in with_source
    short = cfg_picture(fn, {}, ["def f(x):"], use_graphviz=False).svg  # line 2 not there
    assert ">2-4</text>" in short


def test_a_long_label_is_cut_to_the_box_with_an_ellipsis() -> None:
    source = "def f(abcdefghijklmnopqrstuvwxyz):\n    return abcdefghijklmnopqrstuvwxyz\n"
    (fn,) = _functions(source)
    svg = cfg_picture(fn, {}, source.splitlines(), use_graphviz=False).svg
    assert LABEL_CHARS == 30
    label = "2: return abcdefghijklmnopqrs"  # 29 characters, then the ellipsis
    assert len(label) == LABEL_CHARS - 1
    assert f">{label}…</text>" in svg
    fits = "def f(abcdefghijklmnopqrst):\n    return abcdefghijklmnopqrst\n"
    (whole,) = _functions(fits)  # "2: return abcdefghijklmnopqrst": 30, kept whole
    assert ">2: return abcdefghijklmnopqrst</text>" in cfg_picture(
        whole, {}, fits.splitlines(), use_graphviz=False).svg


def test_edges_are_as_thick_as_their_counts_and_never_run_ones_dashed() -> None:
    (fn,) = _functions(SIGN)
    call, true, false = _edge(fn, "call"), _edge(fn, "true"), _edge(fn, "false")
    counts = {call: 4, true: 1, false: 3}
    _boxes, _edges, root = _parse(cfg_picture(fn, counts, None, use_graphviz=False))
    by_id = {group.get("id"): group for group in root.iter(f"{SVG}g")}

    def drawn(eid: int) -> tuple[str | None, str | None, str | None, str | None]:
        group = by_id[f"edge-{eid}"]
        path = group.find(f"{SVG}path")
        return (group.get("class"), path.get("stroke-width"), path.get("stroke-dasharray"),
                group.find(f"{SVG}text").text)

    # 1 + 5 * count / most, most = 4: 6.00, 2.25 and 4.75; a count of 0: 1.00, dashed
    assert drawn(call) == ("edge", "6.00", None, "call 4")
    assert drawn(true) == ("edge", "2.25", None, "true 1")
    assert drawn(false) == ("edge", "4.75", None, "false 3")
    returns = [eid for eid, edge in enumerate(fn.meta.edges) if edge.label == "return"]
    for eid in returns:
        assert drawn(eid) == ("edge never", "1.00", "5 3", "return 0")


def test_counts_have_thousands_separators() -> None:
    (fn,) = _functions(SIGN)
    svg = cfg_picture(fn, {_edge(fn, "call"): 1234567}, None, use_graphviz=False).svg
    assert ">call 1,234,567</text>" in svg


def test_with_no_count_at_all_every_edge_is_thin_and_dashed() -> None:
    (fn,) = _functions(SIGN)
    svg = cfg_picture(fn, {}, None, use_graphviz=False).svg
    assert svg.count('class="edge never"') == len(fn.meta.edges)
    assert svg.count('stroke-width="1.00"') == len(fn.meta.edges)


def test_the_picture_is_an_svg_document_of_its_own_size() -> None:
    (fn,) = _functions(SIGN)
    picture = cfg_picture(fn, {}, None, use_graphviz=False)
    root = ET.fromstring(picture.svg)
    assert root.tag == f"{SVG}svg"
    assert root.get("class") == "cfg"
    width, height = float(root.get("width")), float(root.get("height"))
    assert root.get("viewBox") == f"0 0 {width:.0f} {height:.0f}"
    boxes, _edges, _root = _parse(picture)
    for x, y in boxes.values():  # every box inside the picture
        assert x >= 0
        assert x + BOX_W <= width
        assert y >= 0
        assert y + BOX_H <= height


def _fake_dot(directory: Path, script: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A ``dot`` of our own first on PATH."""
    dot = directory / "dot"
    dot.write_text("#!/bin/sh\n" + script)
    dot.chmod(dot.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{directory}{os.pathsep}{os.environ.get('PATH', '')}")


@pytest.mark.skipif(os.name != "posix", reason="the stand-in dot is a shell script")
def test_graphviz_is_given_every_block_and_edge_and_its_svg_is_kept(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    given = tmp_path / "given.dot"
    _fake_dot(tmp_path, f'cat > "{given}"\nprintf \'<?xml version="1.0"?>\\n'
                        '<svg id="drawn"></svg>\\n\'\n', monkeypatch)
    source = 'def f(x):\n    if x == "a\\\\b":\n        return 1\n    return 2\n'
    (fn,) = _functions(source)
    true = _edge(fn, "true")
    picture = cfg_picture(fn, {_edge(fn, "call"): 2, true: 2}, source.splitlines())
    assert picture == CfgPicture('<svg id="drawn"></svg>\n', "graphviz")  # prolog dropped
    dot = given.read_text()
    assert dot.startswith("digraph cfg {")
    for block in to_dag(cfg_of(fn.meta)).reachable:
        assert f'b{block} [id="node-{block}", ' in dot
    # the label's quote and backslash escaped for DOT
    assert 'label="2: if x == \\"a\\\\\\\\b\\":"' in dot
    # a run edge: solid, as thick as the most run; one never run: dashed, class never
    assert (f'-> b{fn.meta.edges[true].dst} [id="edge-{true}", label="true 2", '
            "penwidth=6.00, style=solid];") in dot
    false = _edge(fn, "false")
    assert (f'-> b{fn.meta.edges[false].dst} [id="edge-{false}", class=never, '
            'label="false 0", penwidth=1.00, style=dashed];') in dot


@pytest.mark.skipif(os.name != "posix", reason="the stand-in dot is a shell script")
def test_a_failing_graphviz_falls_back_to_our_layout(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_dot(tmp_path, "exit 1\n", monkeypatch)
    (fn,) = _functions(SIGN)
    picture = cfg_picture(fn, {}, None)
    assert picture.drawn_by == "pathprof"
    assert picture.svg.startswith('<svg xmlns="http://www.w3.org/2000/svg"')


def test_without_dot_on_path_our_layout_draws(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty directory: no dot
    (fn,) = _functions(SIGN)
    assert cfg_picture(fn, {}, None).drawn_by == "pathprof"
