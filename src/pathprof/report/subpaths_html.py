"""``pathprof hot --html DIR``: the hottest subpaths as HTML, an index and a page per
subpath showing the lines it runs across functions and files.

It renders from the JSON document ``pathprof hot --json`` writes (plain data), in
the two steps of :mod:`pathprof.report.html`: views (:class:`SubpathView`,
:class:`Segment`) first, then the templates, every text escaped. A subpath's blocks
are split into *segments*, runs of consecutive blocks in one function; each segment
shows its source with a little context, the lines it runs highlighted and, beside
them, the steps (1-based positions in the subpath) that run them. The source is
read from disk now: a file that cannot be read is named, with the lines run, and
the report is written all the same.
"""

from __future__ import annotations

import html
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pathprof.exceptions import DataError
from pathprof.report.htmlfiles import copy_static_files, template
from pathprof.subpaths import NOTHING_SAMPLED, bound_text, period_text
from pathprof.version import __version__

if TYPE_CHECKING:
    from typing import NotRequired, TypedDict, Unpack

    from pathprof.subpaths import SubpathBlockJson, SubpathJson, SubpathsDocument

__all__ = ["render", "write_subpaths_html"]

#: The format of ``pathprof hot --json`` this reads.
DOCUMENT_FORMAT = 1
#: Source lines shown before a segment's first line and after its last.
CONTEXT = 3
DASH = "\u2013"  #: between the ends of a range


@dataclass
class SourceLine:
    number: int
    code: str
    steps: list[int]  #: the steps that run this line; none: context


@dataclass
class Segment:
    """Consecutive blocks of a subpath in one function."""

    file: str
    function: str
    function_line: int | None
    #: per block: (step, first line, last line); lines None for a block without
    steps: list[tuple[int, int | None, int | None]] = field(default_factory=list)
    source: list[SourceLine] | None = None
    problem: str | None = None  #: why the source is not shown

    @property
    def lines_run(self) -> list[tuple[int, int]]:
        return [(a, b) for _step, a, b in self.steps if a is not None and b is not None]


@dataclass
class SubpathView:
    rank: int
    page: str
    estimate: float
    error: float
    low: float
    high: float | None
    exact: int | None
    length: int
    sampled: int
    route: str  #: ``tally:13 → 14-15 → classify:2``
    cycle: str  #: for a row folded from a loop's subpaths: `` (2 turns of a 2-block cycle)``
    functions: str  #: ``tally → classify``
    segments: list[Segment]


def _segments(blocks: Sequence[SubpathBlockJson]) -> list[Segment]:
    segments: list[Segment] = []
    for step, block in enumerate(blocks, 1):
        function_line = block.get("function_line")
        if not segments or (segments[-1].file, segments[-1].function,
                            segments[-1].function_line) != (block["file"], block["function"],
                                                            function_line):
            segments.append(Segment(block["file"], block["function"], function_line))
        segments[-1].steps.append((step, block["first_line"], block["last_line"]))
    return segments


def _lines_text(first: int | None, last: int | None) -> str:
    if first is None or last is None:
        return "(no source line)"
    return str(first) if first == last else f"{first}-{last}"


def _route(segments: Sequence[Segment]) -> str:
    pieces = []
    for segment in segments:
        for i, (_step, first, last) in enumerate(segment.steps):
            lines = _lines_text(first, last)
            if i == 0:
                lines = (f"{segment.function} {lines}" if first is None
                         else f"{segment.function}:{lines}")
            pieces.append(lines)
    return " → ".join(pieces)


#: file -> its lines, or why they could not be read (:func:`pathprof.api.subpath_sources`)
_Sources = Mapping[str, "list[str] | str"]

if TYPE_CHECKING:
    class _Options(TypedDict):
        """The keywords of :func:`write_subpaths_html`."""

        sources: _Sources
        title: NotRequired[str]


def _show_source(segment: Segment, sources: _Sources) -> None:
    """Fill in the segment's source lines (with context), or the reason there are none."""
    ranges = segment.lines_run
    if not ranges:
        segment.problem = "These blocks have no source line of their own."
        return
    lines = sources.get(segment.file, "not given to the report")
    first = min(a for a, _b in ranges)
    last = max(b for _a, b in ranges)
    if isinstance(lines, str):
        segment.problem = f"The source cannot be read ({lines})."
        return
    if last > len(lines):
        segment.problem = (f"The source has {len(lines)} lines, fewer than were run: it "
                           "changed since the run.")
        return
    start = first - CONTEXT
    if segment.function_line is not None:
        start = max(start, min(segment.function_line, first))
    steps_of: dict[int, list[int]] = {}
    for step, a, b in segment.steps:
        if a is not None and b is not None:
            for n in range(a, b + 1):
                steps_of.setdefault(n, []).append(step)
    segment.source = [SourceLine(n, lines[n - 1], steps_of.get(n, []))
                      for n in range(max(start, 1), min(last + CONTEXT, len(lines)) + 1)]


def _cycle_text(subpath: SubpathJson) -> str:
    """What a row folded from a loop's subpaths says (``pathprof hot``'s table)."""
    cycle = subpath.get("cycle")
    if not cycle:
        return ""
    more = cycle["other_repetitions"]
    return (f" ({cycle['turns']:g} turn{'' if cycle['turns'] == 1 else 's'} of a "
            f"{cycle['turn_length']}-block cycle" + (f"; {more} more of it" if more else "")
            + ")")


def _view(subpath: SubpathJson, sources: _Sources) -> SubpathView:
    segments = _segments(subpath["blocks"])
    for segment in segments:
        _show_source(segment, sources)
    return SubpathView(
        rank=subpath["rank"], page=f"subpath-{subpath['rank']}.html",
        estimate=subpath["estimate"], error=subpath["relative_error"], low=subpath["low"],
        high=subpath["high"], exact=subpath.get("exact"), length=subpath["length"],
        sampled=subpath["sampled"], route=_route(segments), cycle=_cycle_text(subpath),
        functions=" → ".join(s.function for s in segments), segments=segments)


def _interval(view: SubpathView) -> str:
    high = "∞" if view.high is None else f"{view.high:,.0f}"
    return f"{view.low:,.0f}{DASH}{high}"


def _summary(document: SubpathsDocument) -> str:
    sided = " (one-sided)" if document.get("one_sided") else ""
    ranked = ", ranked by count x length" if document.get("rank") == "length" else ""
    failures = document.get("failures", 0)
    sampled, distinct = document["sampled"], document["distinct_sampled"]
    return (f"About {document['positions']:,} blocks run; {sampled:,} "
            f"sample{'' if sampled == 1 else 's'} kept of {distinct:,} distinct "
            f"subpath{'' if distinct == 1 else 's'} (budget {document['budget']:,}); "
            f"{period_text(document)}; bounds at "
            f"{document['confidence']:.0%} confidence{sided}{ranked}."
            + (f" {failures:,} event{'' if failures == 1 else 's'} could not be decoded."
               if failures else ""))


NOTE = ("Estimated = times sampled x period / P(length). ± is the Chernoff bound on the "
        "relative error; the interval inverts the Chernoff bounds, and holds for rare "
        "subpaths too.")


def _render_index(views: Sequence[SubpathView], document: SubpathsDocument, title: str) -> str:
    esc = html.escape
    if not views:
        table = f'<p class="empty">{esc(NOTHING_SAMPLED)}</p>'
    else:
        exact = any(v.exact is not None for v in views)
        heads = ['<th data-type="num" class="num">#</th>',
                 '<th data-type="num" class="num">Estimated</th>',
                 f'<th data-type="num" class="num">± ({document["confidence"]:.0%})</th>',
                 '<th data-type="num" class="num">Interval</th>']
        if exact:
            heads.append('<th data-type="num" class="num">Exact</th>')
        heads += ['<th data-type="num" class="num">Length</th>',
                  '<th data-type="text">Functions</th>', '<th data-type="text">Route</th>']
        rows = []
        for v in views:
            cells = [f'<td class="num" data-sort="{v.rank}">{v.rank}</td>',
                     f'<td class="num estimate" data-sort="{v.estimate!r}">'
                     f"{v.estimate:,.0f}</td>",
                     f'<td class="num" data-sort="{v.error!r}">{esc(bound_text(v.error))}</td>',
                     f'<td class="num" data-sort="{v.low!r}">{esc(_interval(v))}</td>']
            if exact:
                cells.append(f'<td class="num exact" data-sort="{v.exact or 0}">'
                             + ("" if v.exact is None else f"{v.exact:,}") + "</td>")
            cells += [f'<td class="num" data-sort="{v.length}">{v.length}</td>',
                      f'<td data-sort="{esc(v.functions)}">{esc(v.functions)}</td>',
                      f'<td data-sort="{esc(v.route)}"><a href="{esc(v.page)}">'
                      f"{esc(v.route)}</a>{esc(v.cycle)}</td>"]
            rows.append(f'<tr id="subpath-{v.rank}">{"".join(cells)}</tr>')
        table = (f'<table id="subpaths" class="sortable"><thead><tr>{"".join(heads)}'
                 f'</tr></thead>\n<tbody>\n{chr(10).join(rows)}\n</tbody></table>')
    files = sorted({s.file for v in views for s in v.segments})
    return template("subpaths_index.html").substitute(
        title=esc(title), summary=esc(_summary(document)), note=esc(NOTE),
        files=esc(", ".join(os.path.relpath(f) for f in files)), table=table,
        count=f"{len(views):,}", subpaths="subpath" if len(views) == 1 else "subpaths",
        version=esc(__version__))


def _render_segment(index: int, segment: Segment) -> str:
    esc = html.escape
    ranges = segment.lines_run
    first = min((a for a, _b in ranges), default=segment.function_line)
    where = os.path.relpath(segment.file) + ("" if first is None else f":{first}")
    steps = [step for step, _a, _b in segment.steps]
    step_text = (f"step {steps[0]}" if len(steps) == 1 else f"steps {steps[0]}{DASH}{steps[-1]}")
    head = (f'<h2><code>{esc(segment.function)}</code> <span class="where">{esc(where)}'
            f'</span> <span class="steps">{step_text}</span></h2>')
    if segment.source is None:
        lines = ", ".join(f"{_lines_text(a, b)} (step {step})" for step, a, b in segment.steps)
        body = (f'<p class="warn">{esc(segment.problem or "")}</p>'
                f'<p class="lines-run">Lines run: {esc(lines)}</p>')
    else:
        rows = []
        for line in segment.source:
            on = ' class="on"' if line.steps else ""
            rows.append(f'<tr id="s{index}-line-{line.number}"{on}><td class="n">{line.number}'
                        f'</td><td class="code"><code>{esc(line.code)}</code></td>'
                        f'<td class="taken">{", ".join(map(str, line.steps))}</td></tr>')
        body = f'<table class="source">{"".join(rows)}</table>'
    return f'<section class="segment" id="segment-{index}">{head}\n{body}</section>'


def _render_subpath(view: SubpathView, document: SubpathsDocument, title: str) -> str:
    esc = html.escape
    figures = [("estimate", "estimated", view.estimate, f"{view.estimate:,.0f}"),
               ("bound", f"± ({document['confidence']:.0%})", view.error,
                bound_text(view.error)),
               ("interval", "interval", view.low, _interval(view))]
    if view.exact is not None:
        figures.append(("exact", "exact", view.exact, f"{view.exact:,}"))
    figures += [("length", "length", view.length, f"{view.length} blocks"),
                ("sampled", "times sampled", view.sampled, f"{view.sampled:,}")]
    figure_html = "".join(f'<div><dt>{esc(label)}</dt><dd id="{key}" data-value="{value!r}">'
                          f"{esc(text)}</dd></div>" for key, label, value, text in figures)
    return template("subpath.html").substitute(
        title=esc(f"subpath #{view.rank} — {title}"), rank=view.rank,
        functions=esc(view.functions), figures=figure_html, route=esc(view.route),
        cycle=f'<p class="cycle">{esc(view.cycle.strip(" ()"))}</p>' if view.cycle else "",
        segments="\n".join(_render_segment(i, s) for i, s in enumerate(view.segments, 1)),
        version=esc(__version__))


def write_subpaths_html(document: SubpathsDocument, directory: str, *, sources: _Sources,
                        title: str = "pathprof hot") -> str:
    """Write the report of ``document`` (what ``pathprof hot --json`` writes) into
    ``directory`` (created), showing the lines of ``sources`` (each file the document
    names: its lines, or why they could not be read); returns the index file's path."""
    if document.get("format") != DOCUMENT_FORMAT:
        raise DataError(f"a subpath report of format {document.get('format')!r}; this "
                        f"pathprof reads format {DOCUMENT_FORMAT}")
    os.makedirs(directory, exist_ok=True)
    views = [_view(subpath, sources) for subpath in document["subpaths"]]
    for view in views:
        with open(os.path.join(directory, view.page), "w", encoding="utf-8") as f:
            f.write(_render_subpath(view, document, title))
    index = os.path.join(directory, "index.html")
    with open(index, "w", encoding="utf-8") as f:
        f.write(_render_index(views, document, title))
    copy_static_files(directory)
    return index


def render(document: SubpathsDocument, out: str, **options: Unpack[_Options]) -> str:
    """The renderer (see :mod:`pathprof.report`): :func:`write_subpaths_html` into the
    directory ``out``; the index file's path."""
    return write_subpaths_html(document, out, **options)
