"""A picture of a function's control-flow graph as SVG, edge thickness by frequency.

With Graphviz's ``dot`` on ``PATH`` the graph is laid out by Graphviz; without it,
by a small layered layout of our own (longest-path layers over the Ball-Larus DAG,
blocks in a layer side by side in barycenter order, an edge that skips layers
routed through a point of its own in each layer it passes, backedges in lanes on
the right), and the picture says which one drew it. Every block's SVG element has
the id ``node-<block>`` and every edge's ``edge-<cfg edge id>``, so the HTML page
can highlight a path on it; an edge that never ran is dashed and has the class
``never``.

Invariant: every block with code and every CFG edge between reachable blocks
appears exactly once; all text is escaped. In our layout every edge starts on its
source's box and ends on its target's, at a point no other edge ends at, and
crosses no box.
"""

from __future__ import annotations

import html
import itertools
import shutil
import subprocess
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pathprof.data.profile import FunctionProfile, numbering_of

if TYPE_CHECKING:
    from pathprof.graph import Dag

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
        never = ", class=never" if not count else ""
        out.append(f"b{src} -> b{dst} [id={quote(f'edge-{eid}')}{never}, "
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


BOX_W, BOX_H, GAP_X, GAP_Y, MARGIN = 210, 30, 24, 56, 20
#: Characters of a block's label that fit its box (11 px monospace).
LABEL_CHARS = 30
#: The width a long edge takes where it passes a row (a point of its route), and the
#: room between two backedges' lanes on the right.
PASS_W, LANE_GAP = 12, 14
#: Sweeps of the barycenter ordering (Sugiyama et al.: fewer crossings).
SWEEPS = 4


@dataclass
class _Slot:
    """What a row of the layered picture holds: a block, or the point where a long
    edge passes the row (``edge``: its CFG edge id)."""

    block: int | None = None
    edge: int | None = None
    x: float = 0.0  #: left end

    @property
    def width(self) -> float:
        return BOX_W if self.block is not None else PASS_W

    @property
    def middle(self) -> float:
        return self.x + self.width / 2


def _layers(dag: Dag, blocks: list[int]) -> dict[int, int]:
    """Each block's row: the longest path from ENTRY over the DAG's forward edges and
    restarts (backedges left out), so every forward edge goes down the picture and a
    handler sits below ENTRY."""
    from pathprof.graph import EdgeKind

    layer = {b: 0 for b in blocks}
    for block in dag.topo_order:
        for eid in dag.out_edges[block]:
            edge = dag.edges[eid]
            if edge.kind in (EdgeKind.NORMAL, EdgeKind.RESTART) and edge.dst in layer:
                layer[edge.dst] = max(layer[edge.dst], layer[block] + 1)
    return layer


def _order(rows: dict[int, list[_Slot]], chains: list[list[_Slot]]) -> None:
    """Order each row by the barycenter of what it is joined to in the row above,
    then in the row below, a few times over (ties keep their order): fewer
    crossings, and a long edge's points near the blocks it joins. ``chains``: each
    forward edge as its source, its points and its target."""
    up: dict[int, list[int]] = {}  # id of a slot -> ids of the slots above joined to it
    down: dict[int, list[int]] = {}
    for chain in chains:
        for a, b in itertools.pairwise(chain):
            down.setdefault(id(a), []).append(id(b))
            up.setdefault(id(b), []).append(id(a))
    depths = sorted(rows)
    for sweep in range(SWEEPS):
        downwards = sweep % 2 == 0
        neighbours = up if downwards else down
        for depth in (depths[1:] if downwards else depths[-2::-1]):
            other = rows[depth - 1] if downwards else rows[depth + 1]
            place = {id(s): i for i, s in enumerate(other)}

            def key(item: tuple[int, _Slot], place: dict[int, int] = place,
                    neighbours: dict[int, list[int]] = neighbours) -> tuple[float, int]:
                at, slot = item
                joined = [place[n] for n in neighbours.get(id(slot), ()) if n in place]
                return (sum(joined) / len(joined) if joined else float(at), at)

            rows[depth] = [slot for _at, slot in sorted(enumerate(rows[depth]), key=key)]


def _ports(ends: list[tuple[int, float]], slot: _Slot) -> dict[int, float]:
    """Where each edge (id, the x of its other end) meets a box: spread along its
    side in the order of their other ends, so no two arrows meet at one point."""
    ends = sorted(ends, key=lambda e: (e[1], e[0]))
    if slot.block is None:
        return {eid: slot.middle for eid, _x in ends}
    step = slot.width / (len(ends) + 1)
    return {eid: slot.x + step * (i + 1) for i, (eid, _x) in enumerate(ends)}


def _layered(fn: FunctionProfile, dag: object, blocks: list[int],
             edges: list[tuple[int, int, int, str]], labels: dict[int, str],
             counts: dict[int, int]) -> str:
    """A layered drawing (after Sugiyama et al.): blocks in rows by their longest
    distance from ENTRY; an edge that skips rows goes through a point of its own in
    each row it passes (no block sits there), so no edge crosses a block it does not
    join; a backedge (or any edge that does not go down) leaves its block's bottom,
    goes right beyond every block of the rows it spans, up, and into its target's
    top. Every edge starts on its source's box and ends on its target's, each at a
    point of its own."""
    from pathprof.graph import Dag

    assert isinstance(dag, Dag)
    layer = _layers(dag, blocks)
    slot_of = {b: _Slot(block=b) for b in blocks}
    rows: dict[int, list[_Slot]] = {depth: [] for depth in range(max(layer.values()) + 1)}
    for b in sorted(blocks, key=lambda b: (layer[b], fn.block_lines(b) or (0, 0), b)):
        rows[layer[b]].append(slot_of[b])
    forward = [e for e in edges if layer[e[2]] > layer[e[1]]]
    backward = [e for e in edges if layer[e[2]] <= layer[e[1]]]
    routes: dict[int, list[_Slot]] = {}
    for eid, src, dst, _label in forward:
        routes[eid] = [_Slot(edge=eid) for _ in range(layer[src] + 1, layer[dst])]
        for depth, point in zip(range(layer[src] + 1, layer[dst]), routes[eid], strict=True):
            rows[depth].append(point)
    _order(rows, [[slot_of[src], *routes[eid], slot_of[dst]] for eid, src, dst, _l in forward])
    widest = max(sum(s.width for s in row) + GAP_X * (len(row) - 1) for row in rows.values())
    centre = MARGIN + widest / 2
    for row in rows.values():
        x = centre - (sum(s.width for s in row) + GAP_X * (len(row) - 1)) / 2
        for slot in row:
            slot.x = x
            x += slot.width + GAP_X

    def top(depth: int) -> float:
        return MARGIN + depth * (BOX_H + GAP_Y)

    def right_end(first: int, last: int) -> float:
        return max(s.x + s.width for depth in range(first, last + 1) for s in rows[depth])

    # Where each edge leaves and enters its boxes.
    outs: dict[int, list[tuple[int, float]]] = {}
    ins: dict[int, list[tuple[int, float]]] = {}
    # Each backedge's lane, beyond every block of the rows it spans and every lane
    # of an overlapping backedge already placed (the shortest spans innermost).
    lane_of: dict[int, float] = {}
    span = {eid: sorted((layer[src], layer[dst])) for eid, src, dst, _l in backward}
    for eid in sorted(span, key=lambda e: (span[e][1] - span[e][0], e)):
        first, last = span[eid]
        overlapping = [lane for other, lane in lane_of.items()
                       if span[other][0] <= last and first <= span[other][1]]
        lane_of[eid] = max([right_end(first, last), *overlapping]) + LANE_GAP
    for eid, src, dst, _label in edges:
        route = routes.get(eid)
        if route is not None:
            outs.setdefault(src, []).append((eid, (route or [slot_of[dst]])[0].middle))
            ins.setdefault(dst, []).append((eid, (route or [slot_of[src]])[-1].middle))
        else:  # out to the right: after every other edge on both boxes
            outs.setdefault(src, []).append((eid, float("inf")))
            ins.setdefault(dst, []).append((eid, float("inf")))
    out_port = {eid: x for b, ends in outs.items() for eid, x in _ports(ends, slot_of[b]).items()}
    in_port = {eid: x for b, ends in ins.items() for eid, x in _ports(ends, slot_of[b]).items()}

    most = max(counts.values(), default=0)
    farthest = MARGIN + widest + 60  # (room for the labels of the edges on the right)
    drawn = []
    for eid, src, dst, label in edges:
        start = (out_port[eid], top(layer[src]) + BOX_H)
        end = (in_port[eid], top(layer[dst]))
        if eid in routes:
            points = [start]
            for depth, point in zip(range(layer[src] + 1, layer[dst]), routes[eid], strict=True):
                points += [(point.middle, top(depth)), (point.middle, top(depth) + BOX_H)]
            points.append(end)
            (x1, y1), (x2, y2) = points[0], points[1]
            where = (x1 + (x2 - x1) / 2 + 4, y1 + (y2 - y1) / 2 + 3)
        else:
            lane = lane_of[eid]
            farthest = max(farthest, lane + 70)
            step = (lane - right_end(*span[eid])) / LANE_GAP % 4 * 4  # (lanes apart)
            below = top(layer[src]) + BOX_H + GAP_Y / 3 + step
            above = top(layer[dst]) - GAP_Y / 3 - step
            points = [start, (start[0], below), (lane, below), (lane, above), (end[0], above),
                      end]
            where = (lane + 4, (below + above) / 2 + 3 * step)  # (lanes' labels apart)
        drawn.append((eid, label, points, where))

    width = farthest + MARGIN
    height = MARGIN * 2 + len(rows) * (BOX_H + GAP_Y)  # (backedges from the last row)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" '
             f'height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}" class="cfg">',
             '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" '
             'markerUnits="userSpaceOnUse" markerWidth="11" markerHeight="11" '
             'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" '
             'fill="context-stroke"/></marker></defs>']
    for eid, label, points, (lx, ly) in drawn:
        count = counts.get(eid, 0)
        shape = "M " + " L ".join(f"{x:.1f} {y:.1f}" for x, y in points)
        never = "" if count else " never"
        dash = "" if count else ' stroke-dasharray="5 3"'
        text = html.escape(f"{label} {count:,}")
        parts.append(f'<g id="edge-{eid}" class="edge{never}"><path d="{shape}" fill="none" '
                     f'stroke-width="{_width(count, most):.2f}"{dash} '
                     f'marker-end="url(#arrow)"/><text x="{lx:.1f}" y="{ly:.1f}">{text}'
                     "</text></g>")
    for b in blocks:
        slot = slot_of[b]
        x, y = slot.x, top(layer[b])
        parts.append(f'<g id="node-{b}" class="node"><rect x="{x:.1f}" y="{y:.1f}" '
                     f'width="{BOX_W}" height="{BOX_H}" rx="6"/><text x="{x + 6:.1f}" '
                     f'y="{y + BOX_H / 2 + 4:.1f}">{html.escape(labels[b])}</text></g>')
    parts.append("</svg>")
    return "\n".join(parts)
