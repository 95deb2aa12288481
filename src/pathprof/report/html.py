"""``pathprof html``: an index of functions and a page per function, static files.

Two steps, as coverage.py's HTML report: first plain data (:class:`FunctionPage`,
:class:`IndexRow`) computed from the measurement, then text filled into small
templates (:class:`string.Template`), with every piece of source text and every
name escaped and the per-page data embedded as JSON that cannot close its
``<script>`` element. The pages need no network: the stylesheet and script are
copied beside them, and they open from disk.

A function page shows the function's source; each executed path (hottest first)
and each of the shortest missed paths can be selected and is then highlighted on
the source, with the branch taken at each decision, and on the picture of the CFG
(:mod:`pathprof.report.cfg_picture`).
"""

from __future__ import annotations

import html
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pathprof.analysis.basis import basis_coverage
from pathprof.analysis.decisions import decisions
from pathprof.analysis.edgepredict import cfg_edge_counts, predict_from_edges, summarize
from pathprof.analysis.pathcoverage import CoverageTotals, missed_paths
from pathprof.data.measurement import Measurement
from pathprof.data.profile import FunctionProfile, Path, numbering_of
from pathprof.graph import EdgeKind, regenerate, regenerate_prefix
from pathprof.report.cfg_picture import cfg_picture
from pathprof.report.formatting import (
    BASIS_NOTE,
    FEASIBILITY_NOTE,
    format_duration,
    format_percent,
)
from pathprof.report.htmlfiles import copy_static_files, json_for_script, template
from pathprof.version import __version__

__all__ = ["HTML_FORMAT_VERSION", "render", "write_html"]

#: Changes when the meaning of the embedded page data changes.
HTML_FORMAT_VERSION = 1
MISSED_SHOWN = 20


@dataclass
class PathView:
    """One path as the page shows it; ``lines`` in execution order."""

    key: str
    label: str
    count: int
    share: float
    start: str
    end: str
    lines: list[int]
    decisions: dict[int, str]
    blocks: list[int]
    edges: list[int]
    time: str | None = None
    contexts: list[str] = field(default_factory=list)
    missed: bool = False
    predicted: bool = False
    brief: str = ""  #: the decisions, e.g. "36 true · 40 false"


@dataclass
class IndexRow:
    file: str
    qualname: str
    first_line: int
    page: str
    totals: CoverageTotals
    executions: int
    hottest_share: float | None
    basis: CoverageTotals = field(default_factory=CoverageTotals)
    #: went back to its original code (--stop-counting): counts are lower bounds
    stopped: bool = False


@dataclass
class FunctionPage:
    row: IndexRow
    source: list[tuple[int, str]] | None
    paths: list[PathView]
    missed_more: int
    picture_svg: str
    drawn_by: str
    prediction: str | None


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_")[:60] or "f"


def _path_view(fn: FunctionProfile, path: Path, total: int, cfg_edges_of: Callable[[Path],
               list[int]], predicted_key: str | None, missed: bool = False) -> PathView:
    lines: list[int] = []
    for block in path.blocks:
        for piece in fn.meta.blocks[block].pieces:
            for line in range(piece.line, piece.end_line + 1):
                if not lines or lines[-1] != line:
                    lines.append(line)
    taken: dict[int, str] = {}
    for d in decisions(fn, path):
        if d["line"] is not None:
            taken[d["line"]] = d["taken"]
    return PathView(
        key=path.key, label=path.key, count=path.count,
        share=path.count / total if total else 0.0, start=path.start, end=path.end,
        lines=lines, decisions=taken, blocks=list(path.blocks), edges=cfg_edges_of(path),
        time=None if path.time_ns is None else format_duration(path.time_ns),
        contexts=sorted(fn.contexts.get(path.key, ())), missed=missed,
        predicted=path.key == predicted_key,
        brief=" · ".join(f"{line} {label}" for line, label in taken.items()))


def _function_page(measurement: Measurement, fn: FunctionProfile, page: str) -> FunctionPage:
    numbering = numbering_of(fn.meta)
    dag = numbering.dag
    backedge_of = {end: cfg for cfg, (end, _start) in dag.backedges.items()}
    backedge_of.update({start: cfg for cfg, (_end, start) in dag.backedges.items()})

    def cfg_edges(dag_edges: tuple[int, ...]) -> list[int]:
        result = []
        for eid in dag_edges:
            edge = dag.edges[eid]
            if edge.kind is EdgeKind.NORMAL and edge.cfg_edge is not None:
                result.append(edge.cfg_edge)
            elif edge.kind is EdgeKind.LOOP_END:
                result.append(backedge_of[eid])
        return result

    def cfg_edges_of(path: Path) -> list[int]:
        if path.key.startswith("cut:"):
            block, value = (int(x) for x in path.key[4:].split(":"))
            return cfg_edges(regenerate_prefix(numbering, block, value).edges)
        return cfg_edges(regenerate(numbering, int(path.key)).edges)

    edge_counts = cfg_edge_counts(fn, numbering)
    text = measurement.sources.get((fn.file, fn.source_hash))
    all_lines = text.splitlines() if text is not None else None
    prediction = predict_from_edges(fn) if fn.counts else None
    predicted_key = prediction.predicted.key if prediction else None
    total = fn.total
    views = [_path_view(fn, p, total, cfg_edges_of, predicted_key) for p in fn.paths]
    for i, view in enumerate(views, 1):
        view.label = f"#{i}"
    missed_more = 0
    if fn.counts or not fn.edges:
        missed = missed_paths(fn, MISSED_SHOWN)
        for j, p in enumerate(missed, 1):
            view = _path_view(fn, p, total, cfg_edges_of, predicted_key, missed=True)
            view.label = f"missed {j}"
            views.append(view)
        missed_more = max(0, fn.paths_possible - fn.paths_run - len(missed))
    prediction_text = None
    if prediction is not None and fn.paths_possible > 1:
        if prediction.right:
            prediction_text = "Following the most frequent edges finds the hottest path."
        else:
            ran = prediction.predicted.count
            prediction_text = (
                "Following the most frequent edges predicts a path that "
                + (f"ran {_times(ran)}" if ran else "never ran")
                + f" (marked ◆), not the hottest (#1, {_times(prediction.hottest.count)}).")
            if not ran:
                view = _path_view(fn, prediction.predicted, total, cfg_edges_of, predicted_key,
                                  missed=True)
                view.label = "edge guess"
                if all(v.key != view.key for v in views):
                    views.append(view)
        prediction_text += (f" {prediction.wrong_share:.0%} of path executions took another "
                            "path than the one edge counts predict from where they started.")
    picture = cfg_picture(fn, edge_counts, all_lines)
    source = None
    if all_lines is not None:
        first, last = fn.meta.first_line, fn.meta.last_line
        source = [(n, all_lines[n - 1]) for n in range(first, min(last, len(all_lines)) + 1)]
    row = _index_row(fn, page)
    row.basis = CoverageTotals(*basis_coverage(fn, numbering))
    return FunctionPage(row, source, views, missed_more, picture.svg, picture.drawn_by,
                        prediction_text)


STOPPED_NOTE = (" This function, or a loop of it, went back to its original code once the "
                "paths that ran told all its basis can (--stop-counting): its counts are "
                "lower bounds, and a path shown as missed may have run after that; its basis "
                "coverage is exact.")


def _at_least(totals: CoverageTotals) -> str:
    """Paths run, marked ≥ where a function stopped counting (its later paths unknown)."""
    return f"{'≥' if totals.lower_bound else ''}{totals.run:,}"


def _times(count: int) -> str:
    return "once" if count == 1 else f"{count:,} times"


def _index_row(fn: FunctionProfile, page: str) -> IndexRow:
    paths = fn.paths
    hottest = paths[0].count / fn.total if paths and fn.total else None
    return IndexRow(fn.file, fn.qualname, fn.first_line, page,
                    CoverageTotals(fn.paths_run, fn.paths_possible,
                                   fn.stopped and fn.paths_run < fn.paths_possible),
                    fn.total, hottest, stopped=fn.stopped)


def _render_function(page: FunctionPage, title: str) -> str:
    esc = html.escape
    row = page.row
    rows = []
    for i, view in enumerate(page.paths):
        badge = " ◆" if view.predicted else ""
        classes = "path missed" if view.missed else "path"
        time = f'<span class="time">{esc(view.time)}</span>' if view.time else ""
        contexts = ""
        if view.contexts:
            shown = "".join(f"<li>{esc(c)}</li>" for c in view.contexts)
            tests = f"{len(view.contexts)} test" + ("s" if len(view.contexts) > 1 else "")
            contexts = (f'<details class="contexts"><summary>ran in {tests}'
                        f"</summary><ul>{shown}</ul></details>")
        count = "never ran" if view.missed else f"{view.count:,} · {view.share:.1%}"
        rows.append(
            f'<li class="{classes}" data-index="{i}" tabindex="0">'
            f'<span class="label">{esc(view.label)}{badge}</span> '
            f'<span class="count">{count}</span> {time}'
            f'<span class="ends">{esc(view.start)} → {esc(view.end)}</span>'
            f'<span class="brief">{esc(view.brief)}</span>{contexts}</li>')
    if page.missed_more:
        rows.append(f'<li class="more">… and {page.missed_more:,} more missed paths</li>')
    if page.source is None:
        source = '<p class="warn">The source has changed since it was measured and was ' \
                 "not saved; paths are listed without it.</p>"
    else:
        source = "\n".join(
            f'<tr id="line-{n}"><td class="n">{n}</td><td class="code"><code>{esc(code)}'
            f'</code></td><td class="taken"></td></tr>' for n, code in page.source)
        source = f'<table class="source">{source}</table>'
    data = {"format": HTML_FORMAT_VERSION,
            "paths": [{"key": v.key, "lines": v.lines, "decisions": v.decisions,
                       "blocks": v.blocks, "edges": v.edges, "missed": v.missed}
                      for v in page.paths]}
    drawn_by = ("Laid out by Graphviz" if page.drawn_by == "graphviz" else
                "Laid out by pathprof (Graphviz's dot was not found)")
    return template("function.html").substitute(
        title=esc(f"{row.qualname} — {title}"),
        qualname=esc(row.qualname),
        where=esc(f"{os.path.relpath(row.file)}:{row.first_line}"),
        run=_at_least(row.totals), possible=f"{row.totals.possible:,}",
        percent=esc(format_percent(row.totals)), executions=f"{row.executions:,}",
        basis_run=f"{row.basis.run:,}", basis_dimension=f"{row.basis.possible:,}",
        basis_percent=esc(format_percent(row.basis)),
        prediction=esc(page.prediction or ""),
        note=esc(FEASIBILITY_NOTE + (STOPPED_NOTE if row.stopped else "")),
        paths="\n".join(rows), source=source, picture=page.picture_svg,
        drawn_by=esc(drawn_by), data=json_for_script(data), version=esc(__version__))


def _render_index(rows: list[IndexRow], totals: CoverageTotals, basis: CoverageTotals,
                  title: str, summary_text: str) -> str:
    esc = html.escape
    body = []
    for row in rows:
        hot = "" if row.hottest_share is None else f"{row.hottest_share:.1%}"
        body.append(
            "<tr>"
            f'<td data-sort="{esc(os.path.relpath(row.file))}">'
            f"{esc(os.path.relpath(row.file))}</td>"
            f'<td data-sort="{esc(row.qualname)}"><a href="{esc(row.page)}">'
            f"{esc(row.qualname)}</a></td>"
            f'<td class="num" data-sort="{row.totals.run}">{_at_least(row.totals)}</td>'
            f'<td class="num" data-sort="{row.totals.possible}">{row.totals.possible:,}</td>'
            f'<td class="num" data-sort="{row.totals.percent:.6f}">'
            f"{esc(format_percent(row.totals))}</td>"
            f'<td class="num" data-sort="{row.basis.possible}">'
            f"{row.basis.run:,}/{row.basis.possible:,}</td>"
            f'<td class="num" data-sort="{row.basis.percent:.6f}">'
            f"{esc(format_percent(row.basis))}</td>"
            f'<td class="num" data-sort="{row.hottest_share or 0:.6f}">{hot}</td>'
            f'<td class="num" data-sort="{row.executions}">{row.executions:,}</td>'
            "</tr>")
    return template("index.html").substitute(
        title=esc(title), rows="\n".join(body), run=_at_least(totals),
        possible=f"{totals.possible:,}", percent=esc(format_percent(totals)),
        basis_run=f"{basis.run:,}", basis_dimension=f"{basis.possible:,}",
        basis_percent=esc(format_percent(basis)), basis_note=esc(BASIS_NOTE),
        note=esc(FEASIBILITY_NOTE), summary=esc(summary_text), version=esc(__version__),
        count=f"{len(rows):,}")


def write_html(measurement: Measurement, directory: str, *, title: str = "pathprof report",
               progress: Callable[[int, int], None] | None = None) -> str:
    """Write the report into ``directory`` (created); returns the index file's path.

    ``progress(done, total)`` is called after each function page."""
    os.makedirs(directory, exist_ok=True)
    functions = sorted(measurement.functions, key=lambda f: (f.file, f.first_line, f.qualname))
    rows = []
    totals, basis = CoverageTotals(), CoverageTotals()
    used: set[str] = set()
    for i, fn in enumerate(functions):
        name = f"{_slug(os.path.basename(fn.file))}_{_slug(fn.qualname)}_{fn.first_line}"
        page = f"{name}.html"
        if page in used:
            page = f"{name}_{i}.html"
        used.add(page)
        data = _function_page(measurement, fn, page)
        with open(os.path.join(directory, page), "w", encoding="utf-8") as f:
            f.write(_render_function(data, title))
        rows.append(data.row)
        totals.add(data.row.totals.run, data.row.totals.possible, data.row.totals.lower_bound)
        basis.add(data.row.basis.run, data.row.basis.possible)
        if progress is not None:
            progress(i + 1, len(functions))
    summary_text = summarize([f for f in functions if f.counts]).sentence()
    index = os.path.join(directory, "index.html")
    with open(index, "w", encoding="utf-8") as f:
        f.write(_render_index(rows, totals, basis, title, summary_text))
    copy_static_files(directory)
    return index


def render(measurement: Measurement, out: str, **options: Any) -> str:
    """The renderer (see :mod:`pathprof.report`): :func:`write_html` into the directory
    ``out``; the index file's path."""
    return write_html(measurement, out, **options)
