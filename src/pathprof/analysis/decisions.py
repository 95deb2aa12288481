"""What a path decides: the branch it takes at each block with a choice, and the
path told in one line of source line numbers and branches.

Pure functions of a function's profile (its typed metadata and the path), shared
by every report that shows a path (the text, JSON and HTML reports, coverage's
missed paths, the diff) and by the diff's analysis, which matches paths by them."""

from __future__ import annotations

import itertools
from typing import Any

from pathprof.contract import FunctionInfo
from pathprof.data.profile import FunctionProfile, Path

__all__ = ["decisions", "edge_label", "path_brief"]


def edge_label(meta: FunctionInfo, eid: int) -> str:
    """What the report calls edge ``eid``: its label, or for a branch that falls off
    the function's end (labelled "return" in the CFG), the branch: ``false``,
    ``exhausted``..."""
    return meta.fall_off.get(eid, meta.edges[eid].label)


def decisions(fn: FunctionProfile, path: Path) -> list[dict[str, Any]]:
    """The branch taken at each block of the path that has a choice, the last one
    included: the branch out of the function, or back to a loop's header."""
    meta = fn.meta
    out_labels: dict[int, dict[int, list[str]]] = {}
    for eid, (src, dst, _label) in enumerate(meta.edges):
        out_labels.setdefault(src, {}).setdefault(dst, []).append(edge_label(meta, eid))
    result = []
    sequence = list(path.blocks)
    if path.end == "return" or path.end in ("raise", "reraise"):
        sequence.append(meta.exit)
    elif path.end == "loop-back" and sequence:
        headers = {meta.edges[eid].dst for eid in meta.backedges
                   if meta.edges[eid].src == sequence[-1]}
        if len(headers) == 1:  # the back edge the path ended on
            sequence.append(headers.pop())
    for src, dst in itertools.pairwise(sequence):
        outs = out_labels.get(src, {})
        if len(outs) > 1 or sum(len(v) for v in outs.values()) > 1:
            lines = fn.block_lines(src)
            result.append({"block": src, "line": lines[1] if lines else None,
                           "taken": "/".join(outs.get(dst, ["?"]))})
    return result


def path_brief(fn: FunctionProfile, path: Path) -> str:
    """A path on one line: the first line of each block it runs, with the branch
    taken where there was a choice, e.g. ``3 if → false · 6 · 7 return``."""
    taken = {d["block"]: d["taken"] for d in decisions(fn, path)}
    parts: list[str] = []
    if path.start != "entry":
        parts.append(f"({path.start})")
    previous = None
    for block in path.blocks:
        span = fn.block_lines(block)
        if span is None:
            continue
        line = span[0]
        branch = taken.get(block)
        text = str(line) if branch is None else f"{line} → {branch}"
        if line == previous and parts:
            parts[-1] = text if branch is not None else parts[-1]
        else:
            parts.append(text)
        previous = line
    if path.end not in ("return",):
        parts.append(f"({path.end})")
    return " · ".join(parts)
