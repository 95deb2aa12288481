"""The hottest subpaths as a terminal table (``pathprof hot``): each subpath's
estimated count, its error bound, and the source lines it runs, across functions."""

from __future__ import annotations

from collections.abc import Sequence
from typing import IO, TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from pathprof.report.console import console_for
from pathprof.report.terminal import printable_path
from pathprof.subpaths import NOTHING_SAMPLED, bound_text, period_text

if TYPE_CHECKING:
    from pathprof.subpaths import HotSubpath, SamplingSummary

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


def _blocks(hot: HotSubpath) -> Text:
    """The row's blocks; a cycle's as one turn, with the turns and the other
    repetitions its row stands for."""
    if hot.turns is None:
        return _where(hot.places)
    text = Text("(")
    text.append_text(_where(hot.places[:hot.turn_length]))
    turns = f"{hot.turns:g}" if hot.turns == int(hot.turns) else f"{hot.turns:.1f}"
    text.append(f") x {turns} turn{'' if hot.turns == 1 else 's'}", style="bold")
    if hot.folded:
        text.append(f", and {hot.folded} more of this cycle", style="dim")
    return text


def subpath_table(hottest: Sequence[HotSubpath], *, title: str | Text | None = None,
                  confidence: float = 0.95) -> Table:
    table = Table(title=title, title_justify="left", show_edge=False, pad_edge=False)
    table.add_column("#", justify="right")
    table.add_column("ran at least", justify="right")
    table.add_column("estimated", justify="right")
    table.add_column(f"± ({confidence:.0%})", justify="right")
    exact = any(h.exact is not None for h in hottest)
    if exact:
        table.add_column("exact", justify="right")
    table.add_column("len", justify="right")
    table.add_column("blocks (function:lines)")
    for h in hottest:
        row: list[str | Text] = [str(h.rank), f"{h.low:,.0f}", f"{h.estimate:,.0f}",
                                 bound_text(h.error)]
        if exact:
            row.append(f"{h.exact:,}")
        row += [str(len(h.blocks)), _blocks(h)]
        table.add_row(*row)
    return table


def render_hot(console: Console, hottest: Sequence[HotSubpath], summary: SamplingSummary, *,
               confidence: float = 0.95) -> None:
    files = sorted({place[0] for h in hottest for place in h.places})
    title = Text("Hottest subpaths" + (
        f" ({', '.join(printable_path(f) for f in files[:3])}{' …' if len(files) > 3 else ''})"
        if files else ""))
    bounded = [h for h in hottest if h.low > 0]
    if not hottest:
        console.print(NOTHING_SAMPLED)
    elif not bounded:
        console.print("No subpath was sampled often enough to say it ran at all at "
                      f"{confidence:.0%} confidence: run longer, or lower --period.")
    else:
        console.print(subpath_table(bounded, title=title, confidence=confidence))
    console.print(
        f"Ranked by the count each subpath ran at least, at {confidence:.0%} confidence "
        "(sampled once or twice, a subpath cannot top the table by luck); estimated = "
        "times sampled x period / P(length); ± is the thesis's relative error bound.",
        style="dim")
    held = len(hottest) - len(bounded)
    if held and bounded:
        console.print(f"{held} more subpath{'s' if held > 1 else ''} sampled too seldom to "
                      "bound (at least 0) left out: see --json.", style="dim")
    sampled, distinct = summary["sampled"], summary["distinct_sampled"]
    console.print(
        f"About {summary['positions']:,} blocks run; {sampled:,} "
        f"sample{'' if sampled == 1 else 's'} kept of {distinct:,} "
        f"subpath{'' if distinct == 1 else 's'} (budget {summary['budget']:,}); "
        f"{period_text(summary)}.", style="dim")


# options: summary= (a SamplingSummary, taken out here) and render_hot's keywords, of
# other types: one type for them all would not let them be passed on
def render(hottest: Sequence[HotSubpath], out: IO[str] | Console, **options: Any) -> None:
    """The renderer (see :mod:`pathprof.report`): :func:`render_hot` on ``out``
    (``summary=`` is the sampling's summary)."""
    summary = options.pop("summary")
    render_hot(console_for(out), hottest, summary, **options)
