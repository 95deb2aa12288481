"""A picture of a function's control-flow graph as SVG, edge thickness by frequency.

With Graphviz's ``dot`` on ``PATH`` the graph is laid out by Graphviz; without it,
by a small layered layout of our own (longest-path layers over the Ball-Larus DAG,
blocks in a layer side by side, backedges drawn as arcs on the right), and the
picture says which one drew it. Every block's SVG element has the id
``node-<block>`` and every edge's ``edge-<cfg edge id>``, so the HTML page can
highlight a path on it.

Invariant: every block with code and every CFG edge between reachable blocks
appears exactly once; all text is escaped.
"""

from __future__ import annotations

import html
import shutil
import subprocess
from dataclasses import dataclass

from pathprof.data.profile import FunctionProfile, numbering_of

__all__ = ["CfgPicture", "cfg_picture"]

#: Seconds Graphviz may take before the fallback layout is used instead.
DOT_TIMEOUT = 10


@dataclass(frozen=True)
class CfgPicture:
    svg: str
    drawn_by: str  #: "graphviz" or "pathprof"


def _node_label(fn: FunctionProfile, block: int, lines: list[str] | None) -> str:
    if block == fn.meta.entry:
        return "ENTRY"
    if block == fn.meta.exit:
        return "EXIT"
    span = fn.block_lines(block)
    if span is None:
        return fn.meta.blocks[block].kind
    first, last = span
    where = f"{first}" if first == last else f"{first}-{last}"
    code = lines[first - 1].strip() if lines and 0 < first <= len(lines) else ""
    label = f"{where}: {code}" if code else where
    return label if len(label) <= LABEL_CHARS else label[:LABEL_CHARS - 1] + "…"


def _width(count: int, most: int) -> float:
    return 1.0 + 5.0 * count / most if most else 1.0


def cfg_picture(fn: FunctionProfile, edge_counts: dict[int, int], lines: list[str] | None,
                *, use_graphviz: bool = True) -> CfgPicture:
    """The SVG picture of ``fn``'s CFG; ``edge_counts`` maps CFG edge ids to counts."""
    dag = numbering_of(fn.meta).dag
    blocks = sorted(dag.reachable)
    edges = [(eid, src, dst, label) for eid, (src, dst, label) in enumerate(fn.meta.edges)
             if src in dag.reachable and dst in dag.reachable]
    labels = {b: _node_label(fn, b, lines) for b in blocks}
    if use_graphviz and shutil.which("dot"):
        svg = _graphviz(blocks, edges, labels, edge_counts)
        if svg is not None:
            return CfgPicture(svg, "graphviz")
    return CfgPicture(_layered(fn, dag, blocks, edges, labels, edge_counts), "pathprof")


def _graphviz(blocks: list[int], edges: list[tuple[int, int, int, str]],
              labels: dict[int, str], counts: dict[int, int]) -> str | None:
    most = max(counts.values(), default=0)

    def quote(text: str) -> str:
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'

    out = ["digraph cfg {", 'graph [rankdir=TB, bgcolor="transparent"];',
           'node [shape=box, style="rounded", fontname="monospace", fontsize=10];',
           'edge [fontname="sans-serif", fontsize=9];']
    for b in blocks:
        out.append(f"b{b} [id={quote(f'node-{b}')}, label={quote(labels[b])}];")
    for eid, src, dst, label in edges:
        count = counts.get(eid, 0)
        style = "solid" if count else "dashed"
        out.append(f"b{src} -> b{dst} [id={quote(f'edge-{eid}')}, "
                   f"label={quote(f'{label} {count:,}')}, penwidth={_width(count, most):.2f}, "
                   f"style={style}];")
    out.append("}")
    try:
        done = subprocess.run(["dot", "-Tsvg"], input="\n".join(out), capture_output=True,
                              text=True, timeout=DOT_TIMEOUT, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    svg = done.stdout
    start = svg.find("<svg")
    return svg[start:] if start >= 0 else None


BOX_W, BOX_H, GAP_X, GAP_Y, MARGIN = 210, 30, 24, 46, 20
#: Characters of a block's label that fit its box (11 px monospace).
LABEL_CHARS = 30


def _layered(fn: FunctionProfile, dag: object, blocks: list[int],
             edges: list[tuple[int, int, int, str]], labels: dict[int, str],
             counts: dict[int, int]) -> str:
    # Layers: the longest path from ENTRY over the DAG's normal edges (backedges left
    # out), so every forward edge goes down the picture.
    from pathprof.graph import Dag, EdgeKind

    assert isinstance(dag, Dag)
    layer = {b: 0 for b in blocks}
    for block in dag.topo_order:
        for eid in dag.out_edges[block]:
            edge = dag.edges[eid]
            if edge.kind is EdgeKind.NORMAL:
                layer[edge.dst] = max(layer[edge.dst], layer[block] + 1)
    rows: dict[int, list[int]] = {}
    for b in sorted(blocks, key=lambda b: (layer[b], fn.block_lines(b) or (0, 0), b)):
        rows.setdefault(layer[b], []).append(b)
    widest = max(len(r) for r in rows.values())
    width = MARGIN * 2 + widest * (BOX_W + GAP_X) + 60
    height = MARGIN * 2 + len(rows) * (BOX_H + GAP_Y)
    where: dict[int, tuple[float, float]] = {}
    for depth, row in rows.items():
        row_width = len(row) * (BOX_W + GAP_X) - GAP_X
        left = (width - 60 - row_width) / 2
        for i, b in enumerate(row):
            where[b] = (left + i * (BOX_W + GAP_X), MARGIN + depth * (BOX_H + GAP_Y))
    most = max(counts.values(), default=0)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" '
             f'height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}" class="cfg">',
             '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" '
             'markerWidth="6" markerHeight="6" orient="auto-start-reverse">'
             '<path d="M 0 0 L 10 5 L 0 10 z" fill="context-stroke"/></marker></defs>']
    for eid, src, dst, label in edges:
        count = counts.get(eid, 0)
        (sx, sy), (dx, dy) = where[src], where[dst]
        x1, y1 = sx + BOX_W / 2, sy + BOX_H
        x2, y2 = dx + BOX_W / 2, dy
        if layer[dst] <= layer[src]:  # a backedge: an arc out to the right and up
            x1, y1 = sx + BOX_W, sy + BOX_H / 2
            x2, y2 = dx + BOX_W, dy + BOX_H / 2
            bulge = max(x1, x2) + 40
            shape = f"M {x1:.1f} {y1:.1f} C {bulge:.1f} {y1:.1f} {bulge:.1f} {y2:.1f} " \
                    f"{x2:.1f} {y2:.1f}"
            lx, ly = bulge - 10, (y1 + y2) / 2
        else:
            shape = f"M {x1:.1f} {y1:.1f} L {x2:.1f} {y2:.1f}"
            lx, ly = (x1 + x2) / 2 + 4, (y1 + y2) / 2
        dash = "" if count else ' stroke-dasharray="4 3"'
        text = html.escape(f"{label} {count:,}")
        parts.append(f'<g id="edge-{eid}" class="edge"><path d="{shape}" fill="none" '
                     f'stroke-width="{_width(count, most):.2f}"{dash} '
                     f'marker-end="url(#arrow)"/><text x="{lx:.1f}" y="{ly:.1f}">{text}'
                     "</text></g>")
    for b in blocks:
        x, y = where[b]
        parts.append(f'<g id="node-{b}" class="node"><rect x="{x:.1f}" y="{y:.1f}" '
                     f'width="{BOX_W}" height="{BOX_H}" rx="6"/><text x="{x + 6:.1f}" '
                     f'y="{y + BOX_H / 2 + 4:.1f}">{html.escape(labels[b])}</text></g>')
    parts.append("</svg>")
    return "\n".join(parts)
