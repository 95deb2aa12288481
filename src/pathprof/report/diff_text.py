"""``pathprof diff``: the paths that appeared, vanished or changed, as text and JSON."""

from __future__ import annotations

import json
from typing import IO, TextIO

from rich.console import Console
from rich.text import Text

from pathprof.analysis.decisions import path_brief
from pathprof.analysis.pathdiff import FunctionDiff, PathChange, ProfileDiff
from pathprof.report.console import console_for
from pathprof.report.terminal import plural, printable_path

__all__ = ["diff_json", "render", "render_diff", "render_json"]


def _change_text(kind: str, diff: FunctionDiff, change: PathChange) -> Text:
    style = {"+": "green", "-": "red", "~": "yellow"}[kind]
    line = Text(f"  {kind} ", style=style)
    if kind == "~":
        line.append(f"{change.old:,} → {change.new:,} ({change.relative:+.0%})")
    else:
        line.append(f"{change.new if kind == '+' else change.old:,}")
    line.append("  " + path_brief(diff.profile, change.path), style="dim")
    return line


def render_diff(diff: ProfileDiff, console: Console, *, limit: int = 10) -> None:
    shown = [f for f in diff.functions if f.differs]
    if not diff.differs:
        console.print(f"No paths appeared, vanished or changed by more than "
                      f"{diff.threshold:.0%}.")
        return
    for fn in shown:
        head = Text(fn.qualname, style="bold")
        head.append(f"  {printable_path(fn.file)}:{fn.first_line}", style="dim")
        head.append(f"  +{len(fn.appeared)} appeared, -{len(fn.vanished)} vanished, "
                    f"~{len(fn.changed)} changed, {fn.unchanged} unchanged")
        if fn.source_changed:
            head.append("  (source changed: paths matched by shape)", style="italic")
        console.print(head)
        rows = ([("+", c) for c in fn.appeared] + [("-", c) for c in fn.vanished]
                + [("~", c) for c in fn.changed])
        for kind, change in rows[:limit]:
            console.print(_change_text(kind, fn, change))
        if len(rows) > limit:
            console.print(Text(f"  … and {len(rows) - limit} more", style="dim"))
    for label, functions in (("newly measured", diff.new_functions),
                             ("no longer run", diff.gone_functions)):
        if functions:
            console.print(Text(f"Functions {label}: ", style="bold")
                          + Text(", ".join(f"{f.qualname} ({printable_path(f.file)})"
                                           for f in functions)))
    totals = [sum(len(getattr(f, kind)) for f in diff.functions)
              for kind in ("appeared", "vanished", "changed")]
    console.print(f"{plural(totals[0], 'path')} appeared, {totals[1]:,} vanished, "
                  f"{totals[2]:,} changed by more than {diff.threshold:.0%} in "
                  f"{plural(len(shown), 'function')}.")


def _change_json(change: PathChange) -> dict[str, object]:
    return {"id": change.path.key, "start": change.path.start, "end": change.path.end,
            "old": change.old, "new": change.new}


def diff_json(diff: ProfileDiff) -> dict[str, object]:
    return {
        "format": "pathprof-diff", "version": 1, "threshold": diff.threshold,
        "functions": [
            {"file": f.file, "qualname": f.qualname, "first_line": f.first_line,
             "source_changed": f.source_changed,
             "appeared": [_change_json(c) for c in f.appeared],
             "vanished": [_change_json(c) for c in f.vanished],
             "changed": [_change_json(c) for c in f.changed], "unchanged": f.unchanged}
            for f in diff.functions if f.differs],
        "new_functions": [{"file": f.file, "qualname": f.qualname} for f in diff.new_functions],
        "gone_functions": [{"file": f.file, "qualname": f.qualname}
                           for f in diff.gone_functions],
    }


def render(diff: ProfileDiff, out: IO[str] | Console, **options: int) -> None:
    """The renderer (see :mod:`pathprof.report`): :func:`render_diff` on ``out``."""
    render_diff(diff, console_for(out), **options)


def render_json(diff: ProfileDiff, out: TextIO, **options: object) -> None:
    """The JSON renderer: :func:`diff_json`, indented, on ``out``."""
    print(json.dumps(diff_json(diff, **options), indent=2), file=out)
