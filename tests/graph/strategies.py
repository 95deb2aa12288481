"""Hypothesis strategies for control-flow graphs, and an oracle that walks them.

Two families of graphs:

* ``arbitrary_cfgs``: any digraph where every non-EXIT block has a successor --
  loops, nested and irreducible ones, self-loops, multi-way branches and
  multi-edges all occur, plus restart blocks;
* ``structured_cfgs``: graphs built from a statement grammar (sequence, if,
  while, multi-way switch with shared targets, break, early return), shaped like
  the CFGs of Python functions.

The walk oracle executes a graph step by step and splits the walk into acyclic
paths by itself, without using the numbering, so tests can compare.
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass, field

from hypothesis import strategies as st

from pathprof.graph import Cfg, Cut, Restart, find_backedges


def examples(full: int) -> int:
    """The example count of a property of this package that names one: ``make test``
    runs these on two Pythons (``outer_pythons``, tests/conftest.py), half of ``full``
    on each, drawn afresh each time (together, ``full`` a run); all of ``full`` on
    each under ``HYPOTHESIS_PROFILE=ci-full``."""
    return full if os.environ.get("HYPOTHESIS_PROFILE") == "ci-full" else full // 2


@st.composite
def arbitrary_cfgs(draw: st.DrawFn, max_blocks: int = 10, max_out: int = 4) -> Cfg:
    n = draw(st.integers(min_value=2, max_value=max_blocks))
    entry, exit_ = 0, n - 1
    edges: list[tuple[int, int]] = []
    for block in range(n - 1):
        targets = draw(
            st.lists(st.integers(min_value=1, max_value=n - 1), min_size=1, max_size=max_out)
        )
        edges.extend((block, t) for t in targets)
    middle = list(range(1, n - 1))
    restarts: list[int] = draw(
        st.lists(st.sampled_from(middle), unique=True, max_size=2) if middle else st.just([])
    )
    shuffled = draw(st.permutations(edges))
    return Cfg(n, entry, exit_, shuffled, restarts)


@dataclass
class _Builder:
    edges: list[tuple[int, int]] = field(default_factory=list)
    count: int = 2  # 0 = ENTRY, 1 = EXIT

    def block(self) -> int:
        self.count += 1
        return self.count - 1

    def edge(self, src: int, dst: int) -> None:
        self.edges.append((src, dst))


@st.composite
def structured_cfgs(draw: st.DrawFn, max_depth: int = 3) -> Cfg:
    """A reducible CFG built from nested statements; ENTRY=0, EXIT=1."""
    b = _Builder()

    def statement(current: int, depth: int, loop_exit: int | None) -> int | None:
        """Emit one statement after block ``current``; return the block control
        falls through to, or None if the statement never falls through."""
        choices = ["plain"]
        if depth < max_depth:
            choices += ["if", "while", "switch"]
        if loop_exit is not None:
            choices.append("break")
        choices.append("return")
        kind = draw(st.sampled_from(choices))
        if kind == "plain":
            nxt = b.block()
            b.edge(current, nxt)
            return nxt
        if kind == "return":
            b.edge(current, 1)
            return None
        if kind == "break":
            assert loop_exit is not None
            b.edge(current, loop_exit)
            return None
        if kind == "if":
            test, join = b.block(), b.block()
            b.edge(current, test)
            then_end = body(test, depth + 1, loop_exit)
            if draw(st.booleans()):
                else_end = body(test, depth + 1, loop_exit)
            else:
                else_end = test
            for end in (then_end, else_end):
                if end is not None:
                    b.edge(end, join)
            return join
        if kind == "switch":
            test, join = b.block(), b.block()
            b.edge(current, test)
            for _ in range(draw(st.integers(min_value=2, max_value=4))):
                if draw(st.booleans()):
                    b.edge(test, join)  # several cases straight to the join: multi-edges
                else:
                    end = body(test, depth + 1, loop_exit)
                    if end is not None:
                        b.edge(end, join)
            return join
        # while loop: header tests, body loops back, exit leaves
        header, after = b.block(), b.block()
        b.edge(current, header)
        end = body(header, depth + 1, after)
        if end is not None:
            b.edge(end, header)
        elif draw(st.booleans()):
            b.edge(header, header)  # a self-loop: a loop whose body is its header
        b.edge(header, after)
        return after

    def body(start: int, depth: int, loop_exit: int | None) -> int | None:
        current: int | None = b.block()
        b.edge(start, current)
        for _ in range(draw(st.integers(min_value=1, max_value=3))):
            assert current is not None
            current = statement(current, depth, loop_exit)
            if current is None:
                return None
        return current

    end = body(0, 0, None)
    if end is not None:
        b.edge(end, 1)
    return Cfg(b.count, 0, 1, b.edges)


def cfgs() -> st.SearchStrategy[Cfg]:
    """Both families."""
    return st.one_of(arbitrary_cfgs(), structured_cfgs())


# ---------------------------------------------------------------------------
# The walk oracle


@dataclass(frozen=True)
class Segment:
    """An acyclic path of a walk, found without the numbering."""

    blocks: tuple[int, ...]
    start: str  # "entry", "loop-header", "restart"
    end: str  # "exit", "backedge", "cut"


@dataclass
class Walk:
    steps: list[int | Cut | Restart]
    segments: list[Segment]
    edge_counts: dict[int, int]
    raises: dict[int, int]
    restarts: dict[int, int]


def random_walk(
    cfg: Cfg, rng: random.Random, max_steps: int = 60, cut_chance: float = 0.05
) -> Walk:
    """One call of ``cfg``: random out-edges, random exceptions.

    An exception cuts the current path at the current block; it is caught at a
    random restart block (if any) or ends the call. Past ``max_steps`` steps the
    walk heads for EXIT by shortest path, or ends by an exception where EXIT
    cannot be reached.
    """
    back = find_backedges(cfg)
    distance = _distance_to_exit(cfg)
    steps: list[int | Cut | Restart] = []
    segments: list[Segment] = []
    edge_counts: dict[int, int] = {}
    raises: dict[int, int] = {}
    restarts: dict[int, int] = {}
    block = cfg.entry
    blocks = [block]
    start = "entry"
    while True:
        stuck = block != cfg.exit and distance[block] is None and len(steps) > max_steps
        if block != cfg.exit and (rng.random() < cut_chance or stuck) and block != cfg.entry:
            steps.append(Cut(block))
            raises[block] = raises.get(block, 0) + 1
            segments.append(Segment(tuple(blocks), start, "cut"))
            if cfg.restarts and rng.random() < 0.7 and len(steps) < 4 * max_steps:
                block = rng.choice(cfg.restarts)
                steps.append(Restart(block))
                restarts[block] = restarts.get(block, 0) + 1
                blocks, start = [block], "restart"
                continue
            return Walk(steps, segments, edge_counts, raises, restarts)
        if block == cfg.exit:
            segments.append(Segment(tuple(blocks), start, "exit"))
            return Walk(steps, segments, edge_counts, raises, restarts)
        out = cfg.out_edges[block]
        if len(steps) > max_steps and distance[block] is not None:
            eid = min(out, key=lambda e: _key(distance[cfg.edges[e][1]]))
        else:
            eid = rng.choice(out)
        steps.append(eid)
        edge_counts[eid] = edge_counts.get(eid, 0) + 1
        target = cfg.edges[eid][1]
        if eid in back:
            segments.append(Segment(tuple(blocks), start, "backedge"))
            blocks, start = [target], "loop-header"
        else:
            blocks.append(target)
        block = target


def _key(distance: int | None) -> float:
    return float("inf") if distance is None else distance


def _distance_to_exit(cfg: Cfg) -> list[int | None]:
    distance: list[int | None] = [None] * cfg.num_blocks
    distance[cfg.exit] = 0
    frontier = [cfg.exit]
    while frontier:
        nxt = []
        for block in frontier:
            for eid in cfg.in_edges[block]:
                src = cfg.edges[eid][0]
                if distance[src] is None:
                    distance[src] = distance[block] + 1  # type: ignore[operator]
                    nxt.append(src)
        frontier = nxt
    return distance
