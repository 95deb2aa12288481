"""``pathprof report``: the hottest paths of each function, shown on the source.

For each measured function, hottest first: how many of its possible paths ran,
and a table of its hottest paths with count, share of the function's path
executions, how the path started and ended, and the path itself as the source
lines it runs with the branch taken at each decision. Functions are ordered by
how many paths they executed.
"""

from __future__ import annotations

from typing import IO, TYPE_CHECKING

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from pathprof.analysis.decisions import decisions, path_brief
from pathprof.analysis.edgepredict import EdgePrediction, predict_from_edges, summarize
from pathprof.data.measurement import Measurement
from pathprof.data.profile import FunctionProfile, Path
from pathprof.report.console import console_for
from pathprof.report.formatting import format_duration
from pathprof.report.terminal import plural, printable, printable_path

if TYPE_CHECKING:
    from typing import TypedDict, Unpack

    class _Options(TypedDict, total=False):
        """The keywords of :func:`render_report`."""

        top: int
        functions: int | None
        show_unrun: bool

__all__ = ["render", "render_report"]


#: Columns of a path row other than its source code (count, share, from → to,
#: line number, branch taken): the code gets the rest of the console's width.
OTHER_COLUMNS = 50

#: Short names for the path table; the JSON report and the legend use the full ones.
_SHORT = {"loop-header": "loop", "loop-back": "loop", "exception": "exc"}


def _source_lines(measurement: Measurement, fn: FunctionProfile) -> list[str] | None:
    text = measurement.sources.get((fn.file, fn.source_hash))
    return [printable(line) for line in text.splitlines()] if text is not None else None


def _path_text(fn: FunctionProfile, path: Path, lines: list[str] | None,
               code_width: int = 30) -> Text:
    """The path as the source lines that start its statements, in order, with the
    branch taken after each block that has a choice."""
    taken = {d["block"]: d["taken"] for d in decisions(fn, path)}
    shown: list[tuple[int, str | None]] = []  # (line, branch taken there)
    for block in path.blocks:
        starts = sorted({piece.line for piece in fn.meta.blocks[block].pieces})
        for i, number in enumerate(starts):
            branch = taken.get(block) if i == len(starts) - 1 else None
            if shown and shown[-1][0] == number:
                shown[-1] = (number, branch or shown[-1][1])  # a for header: init, then step
            else:
                shown.append((number, branch))
    out = Text()
    for number, branch in shown:
        code = lines[number - 1].strip() if lines and number - 1 < len(lines) else ""
        if len(code) > code_width:
            code = code[:code_width - 1] + "…"
        if out:
            out.append("\n")
        out.append(f"{number:>5} ", style="dim")
        out.append(code)
        if branch is not None:
            out.append(f"  → {branch}", style="bold cyan")
    return out


def _edge_table(fn: FunctionProfile, lines: list[str] | None) -> Table:
    table = Table(box=None, pad_edge=False, show_edge=False)
    table.add_column("line", justify="right", style="dim")
    table.add_column("branch")
    table.add_column("taken", justify="right")
    table.add_column("share", justify="right")
    outs: dict[int, list[int]] = {}
    for i, (src, _dst, _label) in enumerate(fn.meta.edges):
        outs.setdefault(src, []).append(i)
    for src, eids in sorted(outs.items(), key=lambda kv: fn.block_lines(kv[0]) or (0, 0)):
        if len(eids) < 2:
            continue
        total = sum(fn.edges.get(e, 0) for e in eids)
        span = fn.block_lines(src)
        line = span[1] if span else None
        code = lines[line - 1].strip() if lines and line else ""
        for e in eids:
            count = fn.edges.get(e, 0)
            table.add_row(str(line or ""), Text(f"{printable(code[:40])}  → "
                                                   f"{fn.meta.edges[e].label}"),
                          f"{count:,}", f"{count / total:.1%}" if total else "-")
    return table


def render_function(measurement: Measurement, fn: FunctionProfile, top: int,
                    code_width: int = 30) -> Group:
    lines = _source_lines(measurement, fn)
    where = f"{printable_path(fn.file)}:{fn.first_line}"
    head = Text()
    head.append(fn.qualname, style="bold")
    head.append(f"  {where}  ", style="dim")
    if fn.edges and not fn.counts:
        head.append("edge profile (branch counts)")
        return Group(head, _edge_table(fn, lines), Text(""))
    head.append(f"{fn.paths_run} of {fn.paths_possible:,} paths run", style="green")
    cut = sum(1 for count in fn.cuts.values() if count)
    if cut:  # listed with the paths: the entries add up
        head.append(f" + {_count(cut, 'path')} cut short by an exception")
    head.append(f" · {_count(fn.total, 'path execution')}")
    if fn.raised > fn.closed:
        head.append(f" · {_count(fn.raised - fn.closed, 'call')} ended by an exception")
    if fn.closed:
        head.append(f" · {_count(fn.closed, 'call')} closed early (the generator's consumer "
                    "stopped)")
    if fn.unattributed:
        head.append(f" · {_count(fn.unattributed, 'path')} cut short where the block that "
                    "raised is unknown (not listed)", style="yellow")
    if fn.stopped:
        head.append(" · stopped counting (it or a loop of it went back to its original "
                    "code): counts are lower bounds", style="yellow")
    table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold")
    paths = fn.paths[:top]
    count_width = max(5, *(len(f"{p.count:,}") for p in paths)) if paths else 5
    table.add_column("#", justify="right", no_wrap=True, min_width=max(1, len(str(len(paths)))))
    table.add_column("count", justify="right", no_wrap=True, min_width=count_width)
    table.add_column("share", justify="right", no_wrap=True, min_width=6)
    timed = any(p.time_ns is not None for p in fn.paths)
    if timed:
        table.add_column("time", justify="right", no_wrap=True, min_width=9)
    table.add_column("from → to", no_wrap=True, min_width=14)
    table.add_column("path: line, code → branch taken", overflow="fold")
    total = fn.total
    for rank, path in enumerate(fn.paths[:top], 1):
        row: list[str | Text] = [str(rank), f"{path.count:,}", f"{path.count / total:.1%}"]
        if timed:
            row.append("" if path.time_ns is None else format_duration(path.time_ns))
        row += [f"{_SHORT.get(path.start, path.start)} → {_SHORT.get(path.end, path.end)}",
                _path_text(fn, path, lines, code_width)]
        table.add_row(*row)
    parts: list = [head, table]
    if len(fn.paths) > top:
        parts.append(Text(f"    … and {_count(len(fn.paths) - top, 'more path')}",
                          style="dim"))
    prediction = predict_from_edges(fn)
    if prediction is not None and fn.paths_possible > 1:
        parts.append(_prediction_text(fn, prediction))
    parts.append(Text(""))
    return Group(*parts)


def _count(number: int, noun: str) -> str:
    """``1 path``, ``2 paths``, ``1,000 calls``."""
    return f"{number:,} {noun}" + ("" if number == 1 else "s")


def _prediction_text(fn: FunctionProfile, prediction: EdgePrediction) -> Text:
    """One line: what following the most frequent edges would have called the hot path."""
    text = Text("    edge profile's guess: ", style="dim")
    if prediction.right:
        text.append("the hottest path ✓", style="green")
    else:
        ran = prediction.predicted.count
        text.append(path_brief(fn, prediction.predicted), style="yellow")
        text.append(" — never ran" if not ran else " — ran once" if ran == 1
                    else f" — ran {ran:,} times", style="yellow")
        text.append(", not the hottest", style="yellow")
    if prediction.executions:
        text.append(f" · executions off their start's predicted path: "
                    f"{prediction.wrong_share:.0%}", style="dim")
    return text


def render_report(measurement: Measurement, console: Console, *, top: int = 5,
                  functions: int | None = None, show_unrun: bool = False) -> None:
    measured = [f for f in measurement.functions if f.total or f.edges]
    measured.sort(key=lambda f: (-(f.total or sum(f.edges.values())), f.file, f.first_line))
    shown = measured if not functions else measured[:functions]  # (0, None: all)
    if not shown:
        console.print("No paths were measured.")
        return
    for fn in shown:
        console.print(render_function(measurement, fn, top,
                                      max(30, console.width - OTHER_COLUMNS)))
    if len(shown) < len(measured):
        console.print(Text(f"{_count(len(measured) - len(shown), 'more function')} ran "
                           "(--functions shows more); the summary below covers all of them.",
                           style="dim"))
    summary = summarize(measured).sentence()
    if summary:
        console.print(Text(summary, style="dim"))
    unrun = [f for f in measurement.functions if not (f.total or f.edges)]
    if unrun:
        console.print(Text(f"{plural(len(unrun), 'measured function')} never ran"
                           + (": " + ", ".join(f.qualname for f in unrun) if show_unrun
                              else " (--show-unrun lists them)."), style="dim"))


def render(measurement: Measurement, out: IO[str] | Console, **options: Unpack[_Options]
           ) -> None:
    """The renderer (see :mod:`pathprof.report`): :func:`render_report` on ``out``."""
    render_report(measurement, console_for(out), **options)
