"""What a function's contract read back from a data file must hold before anything
uses it: every field of the type and in the range the analyses and reports take it
to be (:class:`~pathprof.contract.FunctionInfo` documents them).

A data file may come from someone else, another version, or a hand that edited it:
``FunctionInfo.check`` holds the graph's own invariants (block and edge numbers in
range, a query increment per block); :func:`check_function` holds the rest — a line
that is text, a block number that is ``true``, an edge label that is a list, a
decision's boolean tree that is not one — which a report would otherwise meet as a
``TypeError`` many frames down, or as a loop over 10**30 lines. It raises
:class:`~pathprof.contract.ContractError`, which the store reports as one line
naming the file and the row.

Bounds, none of which real code comes near: a function spans at most
:data:`MAX_SPAN` lines (the longest of the 23,154 functions of the standard library
spans 407), every piece of its source lies within its lines (true of all of them);
a measured decision has at most :data:`MAX_VECTORS` vectors (the front end measures
one only while its unfolding is at most ``MAX_NODES`` = 2,000 nodes, 4 per vector),
and exactly as many as its tree allows; its tree nests at most :data:`MAX_DEPTH`
levels. Standard library only.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable
from typing import Any

from pathprof.contract import ContractError, FunctionInfo

__all__ = ["MAX_DEPTH", "MAX_SPAN", "MAX_VECTORS", "check_function"]

MAX_SPAN = 1 << 20
MAX_VECTORS = 500
#: The deepest a decision's boolean tree may nest (``not``, and ``and``/``or`` in
#: parentheses): the analyses walk it recursively.
MAX_DEPTH = 100


def _whole(value: object, low: int = 0, high: int | None = None) -> bool:
    """An int (not a bool) in ``[low, high)``."""
    return type(value) is int and value >= low and (high is None or value < high)


def _all_whole(values: Iterable[object], low: int = 0, high: int | None = None) -> bool:
    return all(_whole(v, low, high) for v in values)


def _text(value: object) -> bool:
    return type(value) is str


_INT, _STR, _TUPLE = frozenset({int}), frozenset({str}), frozenset({tuple})


def _types(values: Iterable[object], types: frozenset[type]) -> bool:
    """Whether every one of ``values`` is of one of ``types`` (exactly: a bool is not
    an int)."""
    return set(map(type, values)) <= types


def _span(span: object, low: int, high: int) -> bool:
    """A ``(line, col, end_line, end_col)`` within lines ``low`` to ``high``."""
    return (isinstance(span, tuple) and len(span) >= 4 and _whole(span[1])
            and _whole(span[3]) and _whole(span[0], low) and _whole(span[2], span[0])
            and span[2] <= high)


def check_function(meta: FunctionInfo) -> None:
    """Raise :class:`ContractError` unless every field of ``meta`` (decoded from a
    data file, its :meth:`~pathprof.contract.FunctionInfo.check` passed) has its
    type and range."""
    problem = _problem(meta)
    if problem is not None:
        raise ContractError(f"{meta.qualname if _text(meta.qualname) else '?'}: {problem}")


def _problem(meta: FunctionInfo) -> str | None:
    nblocks, nedges = len(meta.blocks), len(meta.edges)
    low, first, high = meta.code_line, meta.first_line, meta.last_line
    if not (_text(meta.qualname) and _whole(low, 1) and _whole(first, low)
            and _whole(high, first) and high - low <= MAX_SPAN):
        return f"lines {low!r}, {first!r}, {high!r} are not a function's"
    # (Blocks, pieces and edges by the thousand: checked a column at a time, in C.)
    blocks = meta.blocks
    if not (_types([b[0] for b in blocks], _STR) and _types([b[1] for b in blocks], _STR)
            and _types([b[2] for b in blocks], _TUPLE)):
        return "a block is not one (its kind, label or pieces)"
    pieces = [piece for block in blocks for piece in block[2]]
    if pieces:  # (each of six fields: FunctionInfo.check)
        line, col, end, end_col, role, flags = zip(*pieces, strict=True)
        if not (_types(line + col + end + end_col, _INT) and _types(role + flags, _STR)
                and min(line) >= low and max(end) <= high and min(col) >= 0
                and min(end_col) >= 0 and all(map(operator.le, line, end))):
            return f"a piece is not one of its lines {low} to {high}"
    if meta.edges:  # (their ends in range: FunctionInfo.check)
        src, dst, label = zip(*meta.edges, strict=True)
        if not (_types(src + dst, _INT) and _types(label, _STR)):
            return "an edge is not one"
    if not (_mapping(meta.fall_off, nedges, _text)
            and all(_whole(r[0], 0, nblocks) and _text(r[1]) for r in meta.restarts)
            and _all_whole(meta.backedges, 0, nedges) and _whole(meta.num_paths, 1)
            and _text(meta.counter) and all(type(q) is int for q in meta.query)
            and _text(meta.mode) and _all_whole(meta.early_returns, 0, nblocks)
            and _all_whole(meta.unreachable, 0, nblocks)
            and _mapping(meta.returns, nblocks,
                         lambda r: _text(r[0]) and type(r[1]) is int)):
        return "its edges, restarts, returns or counters are not of their types"
    for compound in meta.compounds:
        parts = (compound.for_iter, compound.for_next, compound.with_enter,
                 compound.with_exit)
        if not (_text(compound.kind) and _span(compound.span, low, high)
                and all(s is None or _span(s, low, high)
                        for s in (compound.header, compound.iter))
                and all(b is None or _whole(b, 0, nblocks) for b in parts)):
            return f"a compound statement {compound!r} is not one of its lines"
    for part, malformed in (("share", _share(meta)),
                            ("edge counters", _edge_counters(meta, nblocks)),
                            ("events", _events(meta, nblocks))):
        if malformed:
            return f"its {part} are not of their types"
    for decision in meta.decisions:
        problem = _decision(decision, low, high)
        if problem is not None:
            return f"decision {decision.text!r}: {problem}"
    return None


def _mapping(found: object, size: int, value: Any) -> bool:
    return type(found) is dict and all(  # (as decoded; an ABC's isinstance is slow)
        _whole(key, 0, size) and value(item) for key, item in found.items())


def _share(meta: FunctionInfo) -> bool:
    """Whether the P3 share is malformed (its tasks are sets of edges of the DAG, whose
    numbers go past the CFG's)."""
    share = meta.share
    if share is None:
        return False
    return not (all(isinstance(task, tuple) and _all_whole(task) for task in share.tasks)
                and len(share.copies) == len(share.tasks) >= 1
                and _all_whole(share.copies) and _whole(share.index))


def _edge_counters(meta: FunctionInfo, nblocks: int) -> bool:
    """Whether edge mode's plan is malformed (its chords number its endpoints: the
    edges and the virtual ones of blocks that can raise)."""
    counters = meta.edge_counters
    if counters is None:
        return False
    return not (_all_whole(counters.raising, 0, nblocks)
                and all(isinstance(e, tuple) and len(e) == 2 and _all_whole(e, 0, nblocks)
                        for e in counters.endpoints)
                and _all_whole(counters.chords, 0, len(counters.endpoints)))


def _events(meta: FunctionInfo, nblocks: int) -> bool:
    events = meta.events
    if events is None:
        return False
    return not (_text(events.kind) and all(isinstance(p, tuple) and _all_whole(p)
                                           for p in events.pieces)
                and all(type(q) is int for q in events.query)
                and _mapping(events.leave, nblocks, lambda add: type(add) is int)
                and _whole(events.chords))


def _decision(decision: Any, low: int, high: int) -> str | None:
    """What is wrong with a decision the contract declares, if anything: its types,
    its spans, and a tree whose conditions and vectors are what it says."""
    conditions, spans = decision.conditions, decision.condition_spans
    if not (_text(decision.kind) and _text(decision.text) and _text(decision.tree)
            and _span(decision.span, low, high) and all(map(_text, conditions))
            and len(spans) == len(conditions)
            and all(_span(s, low, high) for s in spans)
            and (_whole(decision.slot) or decision.slot == -1)
            and _whole(decision.vectors, 0, MAX_VECTORS + 1)):
        return "not of its types"
    if len(decision.tree) > 16 * (len(conditions) + 1) + 16:
        return "its tree is longer than its conditions make one"
    from pathprof.graph.shortcircuit import parse_tree

    leaves: list[int] = []
    try:
        counted = _vectors(parse_tree(decision.tree), leaves, 0)
    except (ValueError, RecursionError):
        return f"{decision.tree!r} is not a boolean tree of at most {MAX_DEPTH} levels"
    if sorted(leaves) != list(range(len(conditions))):
        return f"its tree {decision.tree!r} does not name its {len(conditions)} conditions"
    if decision.vectors and sum(counted) != decision.vectors:
        return (f"its tree allows {sum(counted)} ways to evaluate it, not "
                f"{decision.vectors}")
    return None


def _vectors(tree: Any, leaves: list[int], depth: int) -> tuple[int, int]:
    """The evaluations of ``tree`` that end false and true (the vectors
    :func:`pathprof.graph.shortcircuit.evaluation_vectors` would list, counted in
    linear time), its leaves appended to ``leaves``; ValueError for a tree deeper
    than :data:`MAX_DEPTH` (the analyses walk it recursively)."""
    if depth > MAX_DEPTH:
        raise ValueError("too deep")
    kind = tree[0]
    if kind == "leaf":
        leaves.append(tree[1])
        return 1, 1
    if kind == "not":
        false, true = _vectors(tree[1], leaves, depth + 1)
        return true, false
    stop_true = kind == "or"  # ``or`` stops at a true operand, ``and`` at a false one
    stopped, going = 0, 1
    for child in tree[1]:
        false, true = _vectors(child, leaves, depth + 1)
        stop, go = (true, false) if stop_true else (false, true)
        stopped += going * stop
        going *= go
    return (going, stopped) if stop_true else (stopped, going)
