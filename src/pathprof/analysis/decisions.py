"""What a path decides: the branch it takes at each block with a choice, and the
path told in one line of source line numbers and branches.

Pure functions of a function's profile (its typed metadata and the path), shared
by every report that shows a path (the text, JSON and HTML reports, coverage's
missed paths, the diff) and by the diff's analysis, which matches paths by them."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import TypedDict

from pathprof.contract import FunctionInfo
from pathprof.data.profile import FunctionProfile, Path

__all__ = ["decisions", "edge_label", "path_brief", "path_steps", "path_story"]


class TakenBranch(TypedDict):
    """A decision of a path (:func:`decisions`): its block, the line of the block's
    end, and the branch taken."""

    block: int
    line: int | None
    taken: str


class PathStep(TypedDict):
    """A step of :func:`path_steps`: a decision's line and code (None: none), and the
    branch to take."""

    line: int | None
    code: str | None
    taken: str


def edge_label(meta: FunctionInfo, eid: int) -> str:
    """What the report calls edge ``eid``: its label, or for a branch that falls off
    the function's end (labelled "return" in the CFG), the branch: ``false``,
    ``exhausted``..."""
    return meta.fall_off.get(eid, meta.edges[eid].label)


def decisions(fn: FunctionProfile, path: Path) -> list[TakenBranch]:
    """The branch taken at each block of the path that has a choice, the last one
    included: the branch out of the function, or back to a loop's header."""
    meta = fn.meta
    out_labels: dict[int, dict[int, list[str]]] = {}
    for eid, (src, dst, _label) in enumerate(meta.edges):
        out_labels.setdefault(src, {}).setdefault(dst, []).append(edge_label(meta, eid))
    result: list[TakenBranch] = []
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


#: how long a line of code a step quotes may be
CODE_WIDTH = 60


def _code(lines: Sequence[str] | None, line: int | None) -> str | None:
    if lines is None or line is None or not 0 < line <= len(lines):
        return None
    text = lines[line - 1].strip()
    return text if len(text) <= CODE_WIDTH else text[: CODE_WIDTH - 1] + "…"


def _decision_line(fn: FunctionProfile, block: int) -> int | None:
    """The line of the code that decides at ``block``: its last piece's first line."""
    pieces = fn.meta.blocks[block].pieces
    return pieces[-1].line if pieces else None


def path_steps(fn: FunctionProfile, path: Path, lines: Sequence[str] | None
               ) -> list[PathStep]:
    """The decisions a test must take to run ``path``, as a test writer reads them:
    each decision's line, its code (from ``lines``, the source, when at hand) and the
    branch to take; how the path starts (after an iteration, in a handler) and ends
    (round the loop again, raising) are steps too, with ``line`` None where it has
    none."""
    meta = fn.meta
    steps: list[PathStep] = []
    if path.start == "handler" and path.blocks:
        handler = meta.blocks[path.blocks[0]].label  # "except at line N"
        line = int(handler.rsplit(" ", 1)[-1]) if handler.rsplit(" ", 1)[-1].isdigit() \
            else _decision_line(fn, path.blocks[0])
        steps.append({"line": line, "code": _code(lines, line), "taken": "raised into"})
    for decision in decisions(fn, path):
        line = _decision_line(fn, decision["block"])
        steps.append({"line": line, "code": _code(lines, line), "taken": decision["taken"]})
    if path.end == "loop-back":
        steps.append({"line": None, "code": None, "taken": "round the loop again"})
    elif path.end in ("raise", "reraise"):
        steps.append({"line": None, "code": None, "taken": "raises"})
    if path.start == "loop-header":
        steps.insert(0, {"line": None, "code": None, "taken": "after an iteration"})
    return steps


def path_story(fn: FunctionProfile, path: Path, lines: Sequence[str] | None) -> str:
    """:func:`path_steps` on one line: ``if not items: → false · for x in xs: →
    next · (round the loop again)``; where the source is not at hand, line numbers."""
    parts = []
    for step in path_steps(fn, path, lines):
        if step["line"] is None:
            parts.append(f"({step['taken']})")
        else:
            where = step["code"] or f"line {step['line']}"
            if step["code"] and step["taken"] == "raised into":
                where += f" (line {step['line']})"  # handlers often read alike
            parts.append(f"{where} → {step['taken']}")
    return " · ".join(parts) or "(straight through)"
