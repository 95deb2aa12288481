"""The path coverage report for the terminal: ``term`` and ``term-missing``.

A table in coverage.py's shape — one row per function, a subtotal per file and a
total — with paths possible, run, missed and the percentage run, and the basis
paths covered out of the dimension with their percentage
(:mod:`pathprof.analysis.basis`); the total's basis percentage is the headline,
said again under the table. ``term-missing``
then lists each incompletely covered function's missed paths, shortest first, as
the source lines they run with the branch taken at each decision (a path that
starts at a loop header or handler, or ends by looping back, says so).

What ``term-missing`` lists is what a developer can act on: the functions with an
independent path still to run (a basis dimension not covered), and those whose basis
is complete but whose missed paths the source does not prove impossible; the most
missing first, at most :data:`MISSING_SHOWN` of them, saying how many it left out and
how to see them all (``--missed-functions 0``, or the HTML report). A function that
stopped counting once its basis was complete is not among them: its missed paths may
have run after it stopped. ``--skip-covered`` leaves out the rows whose every path
ran and says how many, as coverage.py does.
"""

from __future__ import annotations

from typing import IO, TYPE_CHECKING

from rich.console import Console
from rich.table import Table
from rich.text import Text

from pathprof.analysis.decisions import path_story
from pathprof.analysis.pathcoverage import (
    CoverageTotals,
    FileCoverage,
    FunctionCoverage,
    PathCoverage,
)
from pathprof.report.console import console_for
from pathprof.report.formatting import (
    BASIS_NOTE,
    FEASIBILITY_NOTE,
    format_percent,
    plural,
    scope_sentences,
)
from pathprof.report.terminal import printable_path

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TypedDict, Unpack

    class _Options(TypedDict, total=False):
        """The keywords of :func:`render_coverage`."""

        show_missing: bool
        missed_per_function: int
        skip_covered: bool
        per_file: bool
        sort: str | None
        missing_functions: int | None

__all__ = ["MISSING_SHOWN", "headline", "render", "render_coverage"]

#: functions whose missed paths ``term-missing`` lists (``missing_functions``)
MISSING_SHOWN = 20

def headline(coverage: PathCoverage) -> str:
    """The suite's figures in one sentence, basis path coverage first."""
    basis, paths = coverage.basis, coverage.totals
    at_least = "at least " if paths.lower_bound else ""
    return (f"Basis path coverage {format_percent(basis)}: {basis.run:,} of "
            f"{basis.possible:,} independent paths; paths run {at_least}{paths.run:,} of "
            f"{paths.possible:,} ({format_percent(paths)}).")


def scope_note(coverage: PathCoverage) -> str | None:
    """What the figures leave out and take in, in sentences (:func:`scope_sentences`);
    None if nothing."""
    return " ".join(scope_sentences(coverage)) or None


def stopped_note(coverage: PathCoverage) -> str | None:
    """What the bounds (≥, ≤) in the table mean, when some function stopped counting."""
    stopped = [fn for fn in coverage.functions() if fn.totals.lower_bound]
    if not stopped:
        return None
    count = f"{len(stopped):,} function{'s' if len(stopped) != 1 else ''}"
    return (f"≥ ≤: {count} stopped counting (--stop-counting): each, or a loop of it, "
            "went back to its original code once the paths that ran told all its basis "
            "can, and the paths it ran after that are not known. Basis figures, lines and "
            "branches are exact.")


def _row(table: Table, name: str, totals: CoverageTotals, basis: CoverageTotals,
         style: str | None = None) -> None:
    at_least, at_most = ("≥", "≤") if totals.lower_bound else ("", "")
    table.add_row(Text(name), f"{totals.possible:,}", f"{at_least}{totals.run:,}",
                  f"{at_most}{totals.missed:,}", at_least + format_percent(totals),
                  f"{basis.run:,}/{basis.possible:,}", format_percent(basis), style=style)


#: ``--sort`` columns: what each orders the rows by
SORTS: dict[str, Callable[[str, CoverageTotals, CoverageTotals],
                          str | tuple[float, str]]] = {
    "name": lambda name, totals, basis: name,
    "paths": lambda name, totals, basis: (totals.possible, name),
    "run": lambda name, totals, basis: (totals.run, name),
    "missed": lambda name, totals, basis: (totals.missed, name),
    "cover": lambda name, totals, basis: (totals.percent, name),
    "basis": lambda name, totals, basis: (basis.percent, name),
}


def check_sort(sort: str) -> str:
    if sort.removeprefix("-") not in SORTS:
        raise ValueError(f"--sort {sort}: choose from {', '.join(SORTS)} (-COLUMN: highest "
                         "first)")
    return sort


def render_coverage(coverage: PathCoverage, console: Console, *, show_missing: bool = False,
                    missed_per_function: int = 5, skip_covered: bool = False,
                    per_file: bool = False, sort: str | None = None,
                    missing_functions: int | None = MISSING_SHOWN) -> None:
    """Print the coverage table (and, with ``show_missing``, the missed paths of at
    most ``missing_functions`` functions, None or 0 for all of them: see the module
    docstring): a row per function and per file, or with ``per_file`` a row per file
    only. ``skip_covered`` leaves out the rows whose every path ran, and says how
    many; ``sort`` (a column of :data:`SORTS`, ``-`` first for highest first) orders
    the rows across files, with no per-file rows among them."""
    if not coverage.files:
        console.print("No functions were measured.")
        return
    table = _coverage_table(per_file)
    if sort is not None or per_file:
        rows = _flat_rows(coverage, per_file, skip_covered)
        if sort is not None:
            column = SORTS[check_sort(sort).removeprefix("-")]
            rows.sort(key=lambda r: column(*r), reverse=sort.startswith("-"))
        for name, totals, basis in rows:
            _row(table, name, totals, basis)
        table.add_section()
    else:
        _add_grouped_rows(table, coverage, skip_covered)
    _row(table, "TOTAL", coverage.totals, coverage.basis, style="bold")
    console.print(table)
    if skip_covered:
        skipped = _covered_rows(coverage, per_file)
        if skipped:
            what = "file" if per_file else "function"
            console.print(Text(f"{plural(skipped, what)} skipped due to complete coverage "
                               "(every path ran)."))
    console.print(Text(headline(coverage), style="bold"))
    scope = scope_note(coverage)
    if scope:
        console.print(Text(scope))
    console.print(Text(BASIS_NOTE, style="dim"))
    console.print(Text(FEASIBILITY_NOTE, style="dim"))
    note = stopped_note(coverage)
    if note:
        console.print(Text(note, style="dim"))
    if show_missing:
        _render_missing(coverage, console, missed_per_function, missing_functions or None)


def _coverage_table(per_file: bool) -> Table:
    table = Table(box=None, pad_edge=False, header_style="bold", show_footer=False)
    table.add_column("File" if per_file else "Function", overflow="fold")
    for heading in ("Paths", "Run", "Missed", "Cover", "Basis", "Basis %"):
        table.add_column(heading, justify="right")
    return table


def _function_name(file: FileCoverage, fn: FunctionCoverage) -> str:
    return f"{printable_path(file.file)}:{fn.profile.first_line} {fn.qualname}"


def _file_name(file: FileCoverage) -> str:
    return printable_path(file.file) + ("" if file.imported else " (never imported)")


def _flat_rows(coverage: PathCoverage, per_file: bool, skip_covered: bool
               ) -> list[tuple[str, CoverageTotals, CoverageTotals]]:
    """A row per file, or per function (without the files' own rows)."""
    if per_file:
        rows = [(_file_name(file), file.totals, file.basis) for file in coverage.files]
    else:
        rows = [(_function_name(file, fn), fn.totals, fn.basis)
                for file in coverage.files for fn in file.functions]
    return [r for r in rows if not (skip_covered and r[1].run == r[1].possible)]


def _add_grouped_rows(table: Table, coverage: PathCoverage, skip_covered: bool) -> None:
    """A row per function, grouped by file, with the file's row after them."""
    for file in coverage.files:
        rows = [fn for fn in file.functions
                if not (skip_covered and fn.totals.run == fn.totals.possible)]
        if not rows:
            continue
        for fn in rows:
            _row(table, _function_name(file, fn), fn.totals, fn.basis)
        if len(file.functions) > 1 or not file.imported:
            _row(table, f"{_file_name(file)} (file)" if file.imported else _file_name(file),
                 file.totals, file.basis, style="bold")
        table.add_section()


def _covered_rows(coverage: PathCoverage, per_file: bool) -> int:
    """The rows ``skip_covered`` leaves out: those whose every path ran."""
    rows = coverage.files if per_file else coverage.functions()
    return sum(1 for row in rows if row.totals.run == row.totals.possible)


def _actionable(fn: FunctionCoverage, limit: int) -> bool:
    """Whether a test can add to what ``fn`` ran: an independent path is missing, or
    (its basis complete) one of its ``limit`` shortest missed paths is not proved
    impossible. Not where it stopped counting with its basis complete: its missed
    paths may have run after it stopped."""
    if fn.basis.missed:
        return True
    if not fn.totals.missed or fn.totals.lower_bound:
        return False
    return any(fn.impossible(path) is None for path in fn.missed(max(limit, 1)))


def _render_missing(coverage: PathCoverage, console: Console, limit: int,
                    functions: int | None = MISSING_SHOWN) -> None:
    """The missed paths of the functions a test can add to (:func:`_actionable`), the
    most missing first (independent paths, then paths), at most ``functions`` of
    them (None: all), and what was left out."""
    incomplete = [fn for fn in coverage.functions() if fn.totals.missed]
    if not incomplete:
        return
    _render_where_next(coverage, console)
    actionable = [fn for fn in incomplete if _actionable(fn, limit)]
    actionable.sort(key=lambda fn: (-fn.basis.missed, -fn.totals.missed, -fn.calls,
                                    fn.profile.file, fn.profile.first_line))
    shown = actionable if functions is None else actionable[:functions]
    if shown:
        console.print()
        console.print(Text("Missed paths, told as the decisions a test takes (→ the branch), "
                           "the functions with the most missing first: first the next tests "
                           "to write (+), each adding an independent path, then the other "
                           "missed paths, shortest first:", style="bold"))
    for fn in shown:
        _render_function_missing(fn, console, limit)
    left = []
    if len(shown) < len(actionable):
        left.append(f"{plural(len(actionable) - len(shown), 'more function')} with paths "
                    "still to test, fewer missing (pathprof coverage -m --missed-functions 0 lists "
                    "them all)")
    chosen = {id(fn) for fn in actionable}
    settled = [fn for fn in incomplete if id(fn) not in chosen]
    stopped = sum(1 for fn in settled if fn.totals.lower_bound)
    if len(settled) > stopped:
        left.append(f"{plural(len(settled) - stopped, 'function')} whose basis is complete "
                    "and whose missed paths the source proves impossible")
    if stopped:
        its = "its" if stopped == 1 else "their"
        left.append(f"{plural(stopped, 'function')} that stopped counting once {its} basis "
                    f"was complete ({its} missed paths may have run after)")
    if left:
        console.print()
        console.print(Text("Not listed: " + "; ".join(left) + ". The HTML report (pathprof "
                           "html) shows every function's missed paths.", style="dim"))


#: functions the "where to test next" list names
WHERE_NEXT_SHOWN = 10


def _render_where_next(coverage: PathCoverage, console: Console) -> None:
    """The suite's functions where tests would add the most basis dimensions."""
    ranked = coverage.where_to_test_next(WHERE_NEXT_SHOWN)
    if not ranked:
        return
    console.print()
    console.print(Text("Where to test next (most independent paths missing first):",
                       style="bold"))
    for number, fn in enumerate(ranked, 1):
        line = Text(f"{number:>3}. ")
        line.append(fn.qualname, style="bold")
        line.append(f"  {printable_path(fn.profile.file)}:{fn.profile.first_line}",
                    style="dim")
        line.append(f"  {fn.basis.missed:,} of {fn.basis.possible:,} missing")
        console.print(line)


def _hanging(console: Console, marker: str, text: str, style: str | None = None) -> None:
    """``marker text`` on a line; on a terminal, the lines ``text`` wraps to start
    under its first character, not at the margin, so a path stays readable. In a log
    (no wrapping at all) it is one line, whole, for grep."""
    if console.soft_wrap:
        console.print(Text(f"{marker} {text}", style=style or ""))
        return
    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True)
    grid.add_column(overflow="fold")
    grid.add_row(Text(marker, style=style or ""), Text(text, style=style or ""))
    console.print(grid)


def _render_function_missing(fn: FunctionCoverage, console: Console, limit: int) -> None:
    profile = fn.profile
    head = Text()
    head.append(fn.qualname, style="bold")
    head.append(f"  {printable_path(profile.file)}:{profile.first_line}", style="dim")
    if fn.totals.lower_bound:
        head.append(f"  at most {fn.totals.missed:,} of {fn.totals.possible:,} missed "
                    "(it stopped counting: later paths are not known)")
    else:
        head.append(f"  {fn.totals.missed:,} of {fn.totals.possible:,} missed")
    head.append(f"; basis {fn.basis.run:,} of {fn.basis.possible:,}")
    console.print(head)
    found = fn.next_paths(limit)  # (the search stops at the limit: a long one is slow)
    for number, path in enumerate(found.paths[:limit], 1):
        _hanging(console, f"  + {number}.", path_story(profile, path, fn.lines))
        if found.cut_short_of(path) is not None:
            console.print(Text(f"       (last resort: {found.cut_short_of(path)})",
                               style="dim"))
    if more := found.needed - len(found.paths) - found.unfound:
        console.print(Text(f"    … and {plural(more, 'more independent path')} to find",
                           style="dim"))
    if found.unfound:
        console.print(Text(f"    {plural(found.unfound, 'more independent path')}: none "
                           "found that the source does not prove impossible", style="dim"))
    for path, why in found.impossible[:limit]:
        _hanging(console, "  ✗", f"cannot run: {path_story(profile, path, fn.lines)} — {why}",
                 "dim")
    told = {p.key for p in found.paths[:limit]} | {p.key for p, _w in found.impossible[:limit]}
    shown = [p for p in fn.missed(limit + len(told)) if p.key not in told][:limit]
    for path in shown:
        contradiction = fn.impossible(path)
        story = path_story(profile, path, fn.lines)
        if contradiction is None:
            _hanging(console, "   ", story)
        else:
            _hanging(console, "  ✗", f"cannot run: {story} — {contradiction}", "dim")
    rest = fn.totals.missed - len(told) - len(shown)
    if rest > 0:
        console.print(Text(f"    … and {rest:,} more", style="dim"))


def render(coverage: PathCoverage, out: IO[str] | Console, **options: Unpack[_Options]
           ) -> None:
    """The renderer (see :mod:`pathprof.report`): :func:`render_coverage` on ``out``."""
    render_coverage(coverage, console_for(out), **options)
