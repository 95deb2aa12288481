"""``pathprof html``: an index of files and functions and a page per function, static
files.

Two steps, as coverage.py's HTML report: first plain data (:class:`FunctionPage`,
:class:`FileRow`, :class:`IndexRow`) computed from the path coverage
(:class:`~pathprof.analysis.pathcoverage.PathCoverage`: exclusions applied, files
never imported counted at 0%, the same figures as ``pathprof coverage``), then text
filled into small templates (:class:`string.Template`), with every piece of source
text and every name escaped and the per-page data embedded as JSON that cannot close
its ``<script>`` element. The pages need no network: the stylesheet and script are
copied beside them, and they open from disk.

The index leads with where to test next (the functions whose tests would add the
most independent paths, each with the first path to write), then a row per file,
sortable, each opening onto its functions' rows. A function page shows the
function's source; each executed path (hottest first), each of the shortest missed
paths and each of the next paths to write can be selected and is then highlighted
on the source, with the branch taken at each decision, and on the picture of the
CFG (:mod:`pathprof.report.cfg_picture`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import html
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pathprof.analysis.conditioncoverage import DecisionCoverage, suggestion, totals_of
from pathprof.analysis.decisions import decisions, path_steps, path_story
from pathprof.analysis.edgepredict import cfg_edge_counts, predict_from_edges, summarize
from pathprof.analysis.pathcoverage import (
    CoverageTotals,
    Excluded,
    FileCoverage,
    FunctionCoverage,
    PathCoverage,
)
from pathprof.data.profile import FunctionProfile, Path, numbering_of
from pathprof.graph import EdgeKind, regenerate, regenerate_prefix
from pathprof.report.cfg_picture import cfg_picture
from pathprof.report.formatting import (
    BASIS_NOTE,
    FEASIBILITY_NOTE,
    excluded_text,
    format_duration,
    format_percent,
    plural,
    scope_sentences,
)
from pathprof.report.htmlfiles import copy_static_files, json_for_script, template
from pathprof.report.terminal import printable_path
from pathprof.version import __version__

if TYPE_CHECKING:
    from typing import TypedDict, Unpack

    from pathprof.analysis.decisions import PathStep

    class _Options(TypedDict, total=False):
        """The keywords of :func:`write_html`."""

        title: str
        progress: Callable[[int, int], None] | None

__all__ = ["HTML_FORMAT_VERSION", "render", "write_html"]

#: Changes when the meaning of the embedded page data changes. 2: each path has a
#: ``kind`` (run, missed, next, impossible, edge-guess); figures leave out what is
#: excluded.
HTML_FORMAT_VERSION = 2
#: missed paths listed per function page
MISSED_SHOWN = 20
#: next paths to write listed per function page
NEXT_SHOWN = 20
#: functions the index's "where to test next" names
WHERE_NEXT_SHOWN = 10


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
    #: run, missed, next (a path to write a test for), impossible, edge-guess
    kind: str = "run"
    #: the decisions a test must take (:func:`path_steps`), for a next path
    steps: list[PathStep] = field(default_factory=list)
    story: str = ""  #: :func:`path_story`, for a next or impossible path
    #: why an impossible path cannot run; for a next path suggested last, the evidence
    reason: str = ""


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
    #: the first next path to write, told as decisions, and its index in the page's data
    first_next: str | None = None
    first_next_at: int | None = None


@dataclass
class FileRow:
    """A file's summary row: the sums of its functions' figures."""

    file: str
    totals: CoverageTotals
    basis: CoverageTotals
    executions: int
    imported: bool
    functions: list[IndexRow]


@dataclass
class FunctionPage:
    row: IndexRow
    source: list[tuple[int, str]] | None
    paths: list[PathView]
    missed_more: int
    picture_svg: str
    drawn_by: str
    prediction: str | None
    #: independent paths missing from the basis, and those no feasible path was found for
    needed: int = 0
    unfound: int = 0
    excluded: Excluded = field(default_factory=Excluded)
    imported: bool = True
    #: its decisions, where conditions were measured (``--conditions``)
    decisions: list[DecisionCoverage] = field(default_factory=list)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_")[:60] or "f"


def _page_name(fn: FunctionProfile, used: set[str]) -> str:
    """A function page's file name: readable (its file's base name, its qualified name
    and first line) and its own by a digest of the function's file (relative to the
    current directory, as the reports show it), qualified name and first line, as
    coverage.py's pages carry a digest of their directory. It depends on nothing
    else the report holds, so it stays the same between runs; two files of one base
    name (``a/util.py``, ``b/util.py``), or of names a case-insensitive file system
    takes for one, get pages of their own. Several versions of one function's source
    (data files combined across an edit) add the source's digest."""
    readable = f"{_slug(os.path.basename(fn.file))}_{_slug(fn.qualname)}_{fn.first_line}"
    try:
        file = os.path.relpath(fn.file)  # (as the reports show it: a moved checkout keeps it)
    except ValueError:  # (another drive)
        file = fn.file
    where = f"{file}\0{fn.qualname}\0{fn.first_line}".encode("utf-8", "surrogateescape")
    page = f"{readable}_{hashlib.sha256(where).hexdigest()[:12]}"
    if f"{page}.html" in used:
        page = f"{page}_{fn.source_hash[:12]}"
    name, more = f"{page}.html", 1
    while name in used:  # (the same function and source twice: not from one data file)
        more += 1
        name = f"{page}_{more}.html"
    return name


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
        contexts=sorted(fn.contexts.get(path.id, ())), missed=missed,
        predicted=path.key == predicted_key,
        kind="missed" if missed else "run",
        brief=" · ".join(f"{line} {label}" for line, label in taken.items()))


def _function_page(coverage: FunctionCoverage, page: str, imported: bool = True
                   ) -> FunctionPage:
    fn = coverage.profile
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
        if isinstance(path.id, int):
            return cfg_edges(regenerate(numbering, path.id).edges)
        return cfg_edges(regenerate_prefix(numbering, *path.id).edges)

    edge_counts = cfg_edge_counts(fn, numbering)
    all_lines = None if coverage.lines is None else list(coverage.lines)
    prediction = predict_from_edges(fn) if fn.counts else None
    predicted_key = prediction.predicted.key if prediction else None
    total = fn.total
    views = [_path_view(fn, p, total, cfg_edges_of, predicted_key) for p in fn.paths]
    for i, view in enumerate(views, 1):
        view.label = f"#{i}"
    missed = coverage.missed(MISSED_SHOWN)
    for j, p in enumerate(missed, 1):
        view = _path_view(fn, p, total, cfg_edges_of, predicted_key, missed=True)
        view.label = f"missed {j}"
        views.append(view)
    missed_more = max(0, coverage.totals.missed - len(missed))
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
                view.kind = "edge-guess"
                if all(v.key != view.key for v in views):
                    views.append(view)
        prediction_text += (f" {prediction.wrong_share:.0%} of path executions took another "
                            "path than the one edge counts predict from where they started.")
    row = IndexRow(fn.file, fn.qualname, fn.first_line, page, coverage.totals, fn.total,
                   fn.paths[0].count / fn.total if fn.paths and fn.total else None,
                   coverage.basis, stopped=fn.stopped)
    needed = unfound = 0
    if coverage.basis.missed:
        found = coverage.next_paths(NEXT_SHOWN)
        needed, unfound = found.needed, found.unfound
        for j, p in enumerate(found.paths, 1):
            view = _path_view(fn, p, total, cfg_edges_of, predicted_key, missed=True)
            view.label, view.kind = f"next {j}", "next"
            view.steps = path_steps(fn, p, all_lines)
            view.story = path_story(fn, p, all_lines)
            evidence = found.cut_short_of(p)
            if evidence is not None:
                view.reason = f"last resort: {evidence}"
            if row.first_next is None:
                row.first_next, row.first_next_at = view.story, len(views)
            views.append(view)
        for j, (p, why) in enumerate(found.impossible, 1):
            view = _path_view(fn, p, total, cfg_edges_of, predicted_key, missed=True)
            view.label, view.kind = f"impossible {j}", "impossible"
            view.story, view.reason = path_story(fn, p, all_lines), str(why)
            views.append(view)
    picture = cfg_picture(fn, edge_counts, all_lines)
    source = None
    if all_lines is not None:
        first, last = fn.meta.first_line, fn.meta.last_line
        source = [(n, all_lines[n - 1]) for n in range(first, min(last, len(all_lines)) + 1)]
    return FunctionPage(row, source, views, missed_more, picture.svg, picture.drawn_by,
                        prediction_text, needed, unfound, coverage.excluded, imported,
                        coverage.decisions)


STOPPED_NOTE = (" This function, or a loop of it, went back to its original code once the "
                "paths that ran told all its basis can (--stop-counting): its counts are "
                "lower bounds, and a path shown as missed may have run after that; its basis "
                "coverage is exact.")
NEVER_IMPORTED_NOTE = ("Its file is under the source but was never imported: nothing of it "
                       "ran, and its paths are those of the file as it is now.")


def _at_least(totals: CoverageTotals) -> str:
    """Paths run, marked ≥ where a function stopped counting (its later paths unknown)."""
    return f"{'≥' if totals.lower_bound else ''}{totals.run:,}"


def _path_percent(totals: CoverageTotals) -> str:
    """The share of paths run, marked ≥ as the terminal's table marks it (Cover)."""
    return f"{'≥' if totals.lower_bound else ''}{format_percent(totals)}"


def _executions(count: int, stopped: bool) -> str:
    """Path executions, marked ≥ where counting stopped (the later ones not counted)."""
    return f"{'≥' if stopped else ''}{count:,}"


def _times(count: int) -> str:
    return "once" if count == 1 else f"{count:,} times"




def _steps_html(steps: Sequence[PathStep]) -> str:
    esc = html.escape
    items = []
    for step in steps:
        if step["line"] is None:
            items.append(f'<li class="how">({esc(step["taken"])})</li>')
            continue
        code = (f' <code>{esc(step["code"])}</code>' if step["code"] else "")
        items.append(f'<li><span class="n">{step["line"]}</span>{code} '
                     f'→ <span class="take">{esc(step["taken"])}</span></li>')
    if not items:
        items.append('<li class="how">(straight through: no decision)</li>')
    return f'<ol class="steps">{"".join(items)}</ol>'


def _path_item(index: int, view: PathView, stopped: bool = False) -> str:
    """A path's item in a list; ``stopped``: its function stopped counting, so its
    count is a lower bound (≥)."""
    esc = html.escape
    classes = "path"
    if view.missed:
        classes += " missed"
    if view.kind in ("next", "impossible"):
        classes += f" {view.kind}"
    # ◆ marks the path edge counts predict in the list of paths, not among the next ones
    badge = " ◆" if view.predicted and view.kind not in ("next", "impossible") else ""
    head = f'<li class="{classes}" data-index="{index}" tabindex="0">' \
           f'<span class="label">{esc(view.label)}{badge}</span> '
    if view.kind == "next":
        note = f'<span class="reason">{esc(view.reason)}</span>' if view.reason else ""
        return f"{head}{_steps_html(view.steps)}{note}</li>"
    if view.kind == "impossible":
        return (f'{head}<span class="brief">{esc(view.story)}</span>'
                f'<span class="reason">cannot run: {esc(view.reason)}</span></li>')
    time = f'<span class="time">{esc(view.time)}</span>' if view.time else ""
    contexts = ""
    if view.contexts:
        shown = "".join(f"<li>{esc(c)}</li>" for c in view.contexts)
        tests = f"{len(view.contexts)} test" + ("s" if len(view.contexts) > 1 else "")
        contexts = (f'<details class="contexts"><summary>ran in {tests}'
                    f"</summary><ul>{shown}</ul></details>")
    if view.missed:  # (after counting stopped it may have run: not seen, then)
        count = "not seen run" if stopped else "never ran"
    else:
        count = f"{_executions(view.count, stopped)} · {view.share:.1%}"
    return (f'{head}<span class="count">{count}</span> {time}'
            f'<span class="ends">{esc(view.start)} → {esc(view.end)}</span>'
            f'<span class="brief">{esc(view.brief)}</span>{contexts}</li>')


def _next_section(page: FunctionPage) -> str:
    """The next tests to write: the paths, those proved impossible, what is unfound."""
    row = page.row
    basis = f"basis {row.basis.run:,} of {row.basis.possible:,}"
    if not row.basis.missed:
        return ('<h2>Next tests to write</h2><p class="help" id="next-none">None: the paths '
                f"that ran span every independent path ({basis}).</p>")
    items = [_path_item(i, v) for i, v in enumerate(page.paths) if v.kind == "next"]
    impossible = [_path_item(i, v) for i, v in enumerate(page.paths)
                  if v.kind == "impossible"]
    parts = ["<h2>Next tests to write</h2>",
             f'<p class="help">{plural(page.needed, "independent path")} missing '
             f"({basis}). A test that takes the branches listed adds one; select it to "
             "see it on the source and the graph.</p>"]
    if items:
        parts.append(f'<ol id="next-paths" class="paths">{"".join(items)}</ol>')
    more = page.needed - len(items) - page.unfound
    if more > 0:
        parts.append(f'<p class="more">… and {plural(more, "more path")} to write, once '
                     "these have run (not listed).</p>")
    if page.unfound:
        unfound = plural(page.unfound, "more independent path")
        parts.append(f'<p class="note" id="unfound">{unfound}: none found that the source '
                     "does not prove impossible.</p>")
    if impossible:
        parts.append('<h3>Proved impossible</h3><p class="help">Missed paths the source '
                     "shows cannot run: a test cannot take them.</p>"
                     f'<ol id="impossible-paths" class="paths">{"".join(impossible)}</ol>')
    return "\n".join(parts)


def _condition_class(entry: DecisionCoverage, condition: int) -> str:
    """shown (MC/DC, masking), seen (true and false, not shown), unseen."""
    verdict = entry.verdicts[condition]
    if verdict.masking is not None:
        return "shown"
    return "seen" if verdict.condition_covered else "unseen"


def _highlighted(entry: DecisionCoverage) -> str:
    """The decision's text with each condition marked by its status."""
    esc = html.escape
    text, at, parts = entry.info.text, 0, []
    for condition, condition_text in enumerate(entry.info.conditions):
        found = text.find(condition_text, at)
        if found < 0:  # (not as unparsed: leave the rest unmarked)
            break
        parts.append(esc(text[at:found]))
        parts.append(f'<mark class="cond {_condition_class(entry, condition)}" '
                     f'title="condition {condition}">{esc(condition_text)}</mark>')
        at = found + len(condition_text)
    parts.append(esc(text[at:]))
    return "".join(parts)


def _conditions_section(page: FunctionPage) -> str:
    """Each measured decision: its conditions marked by status, every way it can be
    evaluated with its runs, and per condition the pair that shows it or the test to
    write."""
    decisions = [d for d in page.decisions if d.measured]
    if not decisions:
        return ""
    esc = html.escape
    totals = totals_of(decisions)
    parts = ['<section class="conditions"><h2>Conditions</h2>',
             f'<p class="totals">MC/DC {totals.masking:,} of {totals.conditions:,} conditions '
             f"(unique-cause {totals.unique:,}); condition outcomes {totals.outcomes:,} of "
             f"{2 * totals.conditions:,}.</p>",
             '<p class="help">Green: shown to decide the outcome alone (MC/DC, masking); '
             "amber: seen true and false, not shown; red: not seen both ways.</p>"]
    for entry in decisions:
        info = entry.info
        names = entry.decision.conditions
        head = "".join(f"<th>{esc(name)}</th>" for name in names)
        rows = []
        for k, vector in enumerate(entry.vectors):
            runs = entry.counts.get(k, 0)
            cells = "".join(f"<td>{'-' if v is None else 'T' if v else 'F'}</td>"
                            for v in vector.values)
            rows.append(f'<tr class="{"ran" if runs else "never"}">{cells}'
                        f"<td>{'T' if vector.outcome else 'F'}</td><td>{runs:,}</td></tr>")
        verdicts = []
        for verdict in entry.verdicts:
            name = esc(names[verdict.condition])
            if verdict.masking is not None:
                first, second = verdict.masking
                verdicts.append(f"<li>✓ <code>{name}</code>: {esc(first.describe(names))} "
                                f"vs {esc(second.describe(names))}</li>")
            elif verdict.missing is not None:
                verdicts.append(f"<li>✗ <code>{name}</code>: add a test where "
                                f"{esc(suggestion(entry.decision, verdict.missing[1]))}</li>")
            else:
                verdicts.append(f"<li>✗ <code>{name}</code>: no pair of evaluations can "
                                "show it</li>")
        raised = "".join(f"<li>! <code>{esc(names[c])}</code> raised in {n:,} "
                         "evaluation(s)</li>" for c, n in sorted(entry.raised.items()))
        parts.append(
            f'<div class="decision" id="decision-{info.span.line}-{info.span.col}">'
            f'<p><a href="#line-{info.span.line}">line {info.span.line}</a> {esc(info.kind)} '
            f"<code>{_highlighted(entry)}</code></p>"
            f'<table class="vectors"><tr>{head}<th>outcome</th><th>runs</th></tr>'
            f'{"".join(rows)}</table><ul>{"".join(verdicts)}{raised}</ul></div>')
    parts.append("</section>")
    return "".join(parts)


def _render_function(page: FunctionPage, title: str) -> str:
    esc = html.escape
    row = page.row
    rows = [_path_item(i, v, row.stopped) for i, v in enumerate(page.paths)
            if v.kind in ("run", "missed", "edge-guess")]
    if page.missed_more:
        more = (f"at most {page.missed_more:,} more paths not seen run"
                if row.totals.lower_bound else f"{page.missed_more:,} more missed paths")
        rows.append(f'<li class="more">… and {more}</li>')
    if page.source is None:
        source = '<p class="warn">The source has changed since it was measured and was ' \
                 "not saved; paths are listed without it.</p>"
    else:
        source = "\n".join(
            f'<tr id="line-{n}"><td class="n">{n}</td><td class="code"><code>{esc(code)}'
            f'</code></td><td class="taken"></td></tr>' for n, code in page.source)
        source = f'<table class="source">{source}</table>'
    data = {"format": HTML_FORMAT_VERSION,
            "paths": [{"key": v.key, "kind": v.kind, "lines": v.lines,
                       "decisions": v.decisions, "blocks": v.blocks, "edges": v.edges,
                       "missed": v.missed}
                      for v in page.paths]}
    drawn_by = ("Laid out by Graphviz" if page.drawn_by == "graphviz" else
                "Laid out by pathprof (Graphviz's dot was not found)")
    notes = []
    if not page.imported:
        notes.append(NEVER_IMPORTED_NOTE)
    if page.excluded:
        own = dataclasses.replace(page.excluded, partly=0)  # no "other function" here
        notes.append(f"Excluded here: {excluded_text(own)} (--no-exclude counts them).")
    return template("function.html").substitute(
        title=esc(f"{row.qualname} — {title}"),
        qualname=esc(row.qualname),
        where=esc(f"{printable_path(row.file)}:{row.first_line}"),
        run=_at_least(row.totals), possible=f"{row.totals.possible:,}",
        percent=esc(_path_percent(row.totals)),
        executions=_executions(row.executions, row.stopped),
        basis_run=f"{row.basis.run:,}", basis_dimension=f"{row.basis.possible:,}",
        basis_percent=esc(format_percent(row.basis)),
        prediction=esc(page.prediction or ""),
        scope="".join(f'<p class="scope">{esc(n)}</p>' for n in notes),
        note=esc(FEASIBILITY_NOTE + (STOPPED_NOTE if row.stopped else "")),
        next=_next_section(page), conditions=_conditions_section(page),
        paths="\n".join(rows), source=source, picture=page.picture_svg,
        drawn_by=esc(drawn_by), data=json_for_script(data), version=esc(__version__))


def _figure_cells(totals: CoverageTotals, basis: CoverageTotals, hottest: float | None,
                  executions: int, stopped: bool = False) -> str:
    """The number cells of a row: paths run, possible, path %, basis, basis %,
    hottest path's share, executions; paths run and their share marked ≥ as the
    terminal's table marks them, and executions where counting ``stopped``."""
    esc = html.escape
    hot = "" if hottest is None else f"{hottest:.1%}"
    return (f'<td class="num" data-sort="{totals.run}">{_at_least(totals)}</td>'
            f'<td class="num" data-sort="{totals.possible}">{totals.possible:,}</td>'
            f'<td class="num" data-sort="{totals.percent:.6f}">'
            f"{esc(_path_percent(totals))}</td>"
            f'<td class="num" data-sort="{basis.possible}">'
            f"{basis.run:,}/{basis.possible:,}</td>"
            f'<td class="num" data-sort="{basis.percent:.6f}">'
            f"{esc(format_percent(basis))}</td>"
            f'<td class="num" data-sort="{hottest or 0:.6f}">{hot}</td>'
            f'<td class="num" data-sort="{executions}">{_executions(executions, stopped)}</td>')


def _file_group(file: FileRow) -> str:
    """A file's rows: its summary, then its functions' (hidden until it is opened)."""
    esc = html.escape
    name = printable_path(file.file)
    tag = "" if file.imported else ' <span class="tag never">never imported</span>'
    count = plural(len(file.functions), "function")
    stopped = any(row.stopped for row in file.functions)
    rows = [f'<tr class="file-row"><td data-sort="{esc(name)}">'
            f'<button type="button" class="toggle" aria-expanded="false">{esc(name)}</button>'
            f'{tag} <span class="count">{count}</span></td>'
            f"{_figure_cells(file.totals, file.basis, None, file.executions, stopped)}</tr>"]
    for row in file.functions:
        cells = _figure_cells(row.totals, row.basis, row.hottest_share, row.executions,
                              row.stopped)
        rows.append(
            f'<tr class="fn"><td data-sort="{esc(row.qualname)}"><a href="{esc(row.page)}">'
            f'{esc(row.qualname)}</a> <span class="where">:{row.first_line}</span></td>'
            f"{cells}</tr>")
    never = "" if file.imported else " never"
    return f'<tbody class="group{never}">\n' + "\n".join(rows) + "\n</tbody>"


def _where_next(rows: Sequence[IndexRow]) -> str:
    """The index's list of functions where tests would add the most basis paths."""
    esc = html.escape
    if not rows:
        return ('<section id="where-next"><h2>Where to test next</h2><p class="help">'
                "Nowhere: every function's independent paths have run.</p></section>")
    items = []
    for row in rows:
        where = f"{printable_path(row.file)}:{row.first_line}"
        first = ""
        if row.first_next is not None:
            first = (f'<span class="story">first: <a href="{esc(row.page)}#path-'
                     f'{row.first_next_at}">{esc(row.first_next)}</a></span>')
        else:
            first = ('<span class="story">no path found that the source does not prove '
                     "impossible</span>")
        items.append(
            f'<li><a class="fn" href="{esc(row.page)}">{esc(row.qualname)}</a> '
            f'<a class="where" href="{esc(row.page)}">{esc(where)}</a> · basis '
            f'<span class="basis">{row.basis.run:,}/{row.basis.possible:,}</span> · '
            f'<strong class="missing">{row.basis.missed:,}</strong> independent '
            f"path{'' if row.basis.missed == 1 else 's'} missing{first}</li>")
    return ('<section id="where-next"><h2>Where to test next</h2><p class="help">The '
            "functions where tests would add the most independent paths (most missing "
            "first, then the most called), each with the first path to write: the "
            "branches its test must take.</p>"
            f'<ol class="where-next">{"".join(items)}</ol></section>')


def _render_index(files: list[FileRow], coverage: PathCoverage, where_next: list[IndexRow],
                  title: str, summary_text: str) -> str:
    esc = html.escape
    totals, basis = coverage.totals, coverage.basis
    functions = sum(len(f.functions) for f in files)
    executions = sum(f.executions for f in files)
    stopped = any(row.stopped for f in files for row in f.functions)
    total_row = (f'<tr class="total"><td>TOTAL</td>'
                 f"{_figure_cells(totals, basis, None, executions, stopped)}</tr>")
    return template("index.html").substitute(
        title=esc(title), groups="\n".join(_file_group(f) for f in files),
        total=total_row, run=_at_least(totals),
        possible=f"{totals.possible:,}", percent=esc(_path_percent(totals)),
        basis_run=f"{basis.run:,}", basis_dimension=f"{basis.possible:,}",
        basis_percent=esc(format_percent(basis)), basis_note=esc(BASIS_NOTE),
        scope="".join(f'<p class="scope">{esc(s)}</p>' for s in scope_sentences(coverage)),
        note=esc(FEASIBILITY_NOTE), summary=esc(summary_text), version=esc(__version__),
        functions=plural(functions, "function"), files=plural(len(files), "file"),
        where_next=_where_next(where_next))


def _file_row(file: FileCoverage, rows: list[IndexRow]) -> FileRow:
    return FileRow(file.file, file.totals, file.basis, sum(r.executions for r in rows),
                   file.imported, rows)


def write_html(coverage: PathCoverage, directory: str, *, title: str = "pathprof report",
               progress: Callable[[int, int], None] | None = None) -> str:
    """Write the report of ``coverage`` into ``directory`` (created); returns the index
    file's path.

    ``progress(done, total)`` is called after each function page."""
    os.makedirs(directory, exist_ok=True)
    functions = coverage.functions()
    rows: dict[int, IndexRow] = {}  # id of a FunctionCoverage -> its row
    files = []
    used: set[str] = set()
    done = 0
    for file in coverage.files:
        file_rows = []
        for fn in file.functions:
            page = _page_name(fn.profile, used)
            used.add(page)
            data = _function_page(fn, page, file.imported)
            # (a file name that is not UTF-8 is shown with \udcXX escapes, as in JSON)
            with open(os.path.join(directory, page), "w", encoding="utf-8",
                      errors="backslashreplace") as f:
                f.write(_render_function(data, title))
            rows[id(fn)] = data.row
            file_rows.append(data.row)
            done += 1
            if progress is not None:
                progress(done, len(functions))
        if file_rows:  # a file all of whose functions are excluded has no row
            files.append(_file_row(file, file_rows))
    where_next = [rows[id(fn)] for fn in coverage.where_to_test_next(WHERE_NEXT_SHOWN)]
    summary_text = summarize([fn.profile for fn in functions if fn.profile.counts]).sentence()
    index = os.path.join(directory, "index.html")
    with open(index, "w", encoding="utf-8", errors="backslashreplace") as f:
        f.write(_render_index(files, coverage, where_next, title, summary_text))
    copy_static_files(directory)
    return index


def render(coverage: PathCoverage, out: str, **options: Unpack[_Options]) -> str:
    """The renderer (see :mod:`pathprof.report`): :func:`write_html` of a path coverage
    (:func:`pathprof.api.coverage`) into the directory ``out``; the index file's path."""
    return write_html(coverage, out, **options)
