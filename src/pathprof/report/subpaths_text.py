"""The hottest subpaths as a terminal table (``pathprof hot``): each subpath's
estimated count, its error bound, and the source lines it runs, across functions."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from rich.table import Table
from rich.text import Text

from pathprof.report.console import console_for
from pathprof.subpaths import NOTHING_SAMPLED, bound_text

__all__ = ["render", "render_hot", "subpath_table"]



def _where(places: Sequence[tuple[str, str, int | None, int | None, int]]) -> Text:
    """``fn:12-13 → fn:15 → callee:3``: the blocks' lines, a function named where it
    changes."""
    text = Text()
    previous = None
    for i, (file, qualname, first, last, _function_line) in enumerate(places):
        if i:
            text.append(" → ", style="dim")
        lines = "?" if first is None else (str(first) if first == last else f"{first}-{last}")
        if (file, qualname) != previous:
            text.append(f"{qualname}:", style="bold")
            previous = (file, qualname)
        text.append(lines)
    return text


def subpath_table(hottest: Sequence[Any], *, title: str | None = None,
                  confidence: float = 0.95) -> Table:
    table = Table(title=title, title_justify="left", show_edge=False, pad_edge=False)
    table.add_column("#", justify="right")
    table.add_column("estimated", justify="right")
    table.add_column(f"± ({confidence:.0%})", justify="right")
    exact = any(h.exact is not None for h in hottest)
    if exact:
        table.add_column("exact", justify="right")
    table.add_column("len", justify="right")
    table.add_column("blocks (function:lines)")
    for h in hottest:
        row: list[str | Text] = [str(h.rank), f"{h.estimate:,.0f}", bound_text(h.error)]
        if exact:
            row.append(f"{h.exact:,}")
        row += [str(len(h.blocks)), _where(h.places)]
        table.add_row(*row)
    return table


def render_hot(console: Any, hottest: Sequence[Any], summary: dict[str, Any], *,
               confidence: float = 0.95) -> None:
    files = sorted({place[0] for h in hottest for place in h.places})
    title = "Hottest subpaths" + (f" ({', '.join(os.path.relpath(f) for f in files[:3])}"
                                  f"{' …' if len(files) > 3 else ''})" if files else "")
    if not hottest:
        console.print(NOTHING_SAMPLED)
    else:
        console.print(subpath_table(hottest, title=title, confidence=confidence))
    console.print(
        f"About {summary['positions']:,} blocks run; {summary['sampled']:,} samples kept of "
        f"{summary['distinct_sampled']:,} subpaths (budget {summary['budget']:,}); one "
        f"start per {summary['period']:,.0f} blocks after {summary['resamplings']} "
        "resamplings. Estimated = times sampled x period / P(length); ± is the Chernoff "
        "bound on the relative error.", style="dim")


def render(hottest: Sequence[Any], out: Any, **options: Any) -> None:
    """The renderer (see :mod:`pathprof.report`): :func:`render_hot` on ``out``
    (``summary=`` is the sampling's summary)."""
    summary = options.pop("summary")
    render_hot(console_for(out), hottest, summary, **options)
