"""The terminal table of ``pathprof count``: total events and each function's counts."""

from __future__ import annotations

from typing import IO, TYPE_CHECKING

from rich.console import Console
from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:
    from typing import TypedDict, Unpack

    class _Options(TypedDict, total=False):
        """The keywords of :func:`render_counts`."""

        sort: str
        top: int

from pathprof.events import EventCounts, FunctionEvents
from pathprof.report.console import console_for
from pathprof.report.terminal import plural, printable, printable_path

__all__ = ["render", "render_counts", "sort_functions"]


def sort_functions(functions: list[FunctionEvents], sort: str) -> list[FunctionEvents]:
    if sort == "name":
        return sorted(functions, key=lambda f: (f.file, f.first_line, f.qualname))
    key = (lambda f: (-f.self, -f.inclusive)) if sort == "self" else (
        lambda f: (-f.inclusive, -f.self))
    return sorted(functions, key=lambda f: (*key(f), f.file, f.first_line))


def render_counts(console: Console, counts: EventCounts, *, sort: str = "inclusive",
                  top: int = 20) -> None:
    """Total, then a table: function, self, inclusive, share of the total."""
    total = counts.total
    kind = counts.kind.removesuffix("s") if total == 1 else counts.kind  # (1 statement)
    if not counts.functions and total:  # pathprof count --total-only
        console.print(f"[bold]{total:,}[/bold] {kind} counted (totals only)")
        return
    console.print(f"[bold]{total:,}[/bold] {kind} counted in "
                  f"{plural(len(counts.functions), 'function')}")
    if not counts.functions:
        console.print("No counted code ran: check --source (module and class bodies "
                      "are not counted, only functions).")
        return
    ordered = sort_functions(counts.functions, sort)
    shown = ordered if top <= 0 else ordered[:top]
    table = Table(box=None, header_style="bold")
    table.add_column("function", overflow="fold")
    table.add_column("self", justify="right")
    table.add_column("inclusive", justify="right")
    table.add_column("self %", justify="right")
    for fn in shown:
        share = f"{100 * fn.self / total:.1f}" if total else "-"
        where = f"{printable_path(fn.file)}:{fn.first_line}"
        table.add_row(Text.assemble(printable(fn.qualname), " ", (where, "dim")), f"{fn.self:,}",
                      f"{fn.inclusive:,}", share)
    console.print(table)
    if len(shown) < len(ordered):
        console.print(f"[dim]{plural(len(ordered) - len(shown), 'more function')} (--top 0 "
                      "shows all)[/dim]")
    lost = sum(f.unattributed for f in counts.functions)
    if lost:
        console.print(f"[yellow]{plural(lost, 'exception')} could not be placed in their "
                      "function; those calls' counts may be short.[/yellow]")


def render(counts: EventCounts, out: IO[str] | Console, **options: Unpack[_Options]) -> None:
    """The renderer (see :mod:`pathprof.report`): :func:`render_counts` on ``out``."""
    render_counts(console_for(out), counts, **options)
