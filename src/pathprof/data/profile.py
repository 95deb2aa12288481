"""Path profiles as data: what was measured for each function, decoded into paths.

The runtime records path *numbers* (Ball-Larus 1996, §3.1) and, for paths an
exception cut short, a (block, prefix value) pair (Ball 1994's query increments
turn the register into the prefix value). This module turns both back into
paths — ordered blocks with their source lines, how each path started and how it
ended (BL §3.4, regeneration) — for reports, JSON and tests.

Invariant: decoding is a function of the function's metadata and the recorded
numbers only; no source file or running program is needed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property

from pathprof.contract import FunctionInfo
from pathprof.data.modules import ModuleContract
from pathprof.graph import (
    Cfg,
    EdgeCounterPlan,
    EdgeKind,
    Numbering,
    PathEnd,
    PathStart,
    number_paths,
    recover_edge_counts,
    regenerate,
    regenerate_prefix,
    to_dag,
)
from pathprof.types import Cut, PathId, PathOrCut

__all__ = ["END_KINDS", "START_KINDS", "FunctionProfile", "Path", "cfg_of", "decode_paths",
           "edge_counts", "end_kind", "numbering_of", "path_key"]

#: How a path can start, as reports and JSON name it.
START_KINDS = ("entry", "loop-header", "handler")
#: How a path can end: the function returned, a loop went round again, a raise
#: statement raised, an exception was re-raised on its way out (end of a
#: ``finally``, of ``except*``), or an exception cut the path inside a block.
END_KINDS = ("return", "loop-back", "raise", "reraise", "exception")

_START = {PathStart.ENTRY: "entry", PathStart.LOOP_HEADER: "loop-header",
          PathStart.RESTART: "handler"}


def path_key(path: PathOrCut) -> str:
    """The path as reports and JSON name it: its number in decimal, or
    ``"cut:<block>:<prefix value>"`` for a path an exception cut short."""
    if isinstance(path, int):
        return str(path)
    return f"cut:{path[0]}:{path[1]}"


@dataclass(frozen=True)
class Path:
    """One acyclic path of a function and how often it ran.

    ``id`` is the path's Ball-Larus number, or its :data:`~pathprof.types.Cut` for a path an
    exception cut short; :attr:`key` names it in text. ``blocks`` are CFG block ids
    in execution order (ENTRY and EXIT excluded).
    """

    id: PathOrCut
    blocks: tuple[int, ...]
    start: str
    end: str
    count: int
    time_ns: int | None = None

    @property
    def key(self) -> str:
        """:func:`path_key` of :attr:`id`: how reports and JSON name the path."""
        return path_key(self.id)

    @property
    def complete(self) -> bool:
        """Whether the path ran to its end (was not cut short by an exception)."""
        return isinstance(self.id, int)


def cfg_of(meta: FunctionInfo) -> Cfg:
    """The :class:`~pathprof.graph.Cfg` a function's metadata describes (built once
    per function)."""
    return meta.derived("cfg", _build_cfg)


def _build_cfg(meta: FunctionInfo) -> Cfg:
    return Cfg(len(meta.blocks), meta.entry, meta.exit,
               tuple((e.src, e.dst) for e in meta.edges),
               tuple(r.block for r in meta.restarts), backedges=meta.backedges)


def decision_vectors(meta: FunctionInfo, slots: Mapping[int | tuple[int, int], int]
                     ) -> dict[tuple[int, int], int]:
    """The runs of a function's vectors by (decision, vector), from the runs of the
    module's vector counters (by slot) its decisions own; the evaluations a condition
    ended by raising are already keyed ``(decision, -1 - condition)``."""
    found: dict[tuple[int, int], int] = {key: runs for key, runs in slots.items()
                                         if isinstance(key, tuple) and runs}
    for d, decision in enumerate(meta.decisions):
        if decision.slot < 0:  # counted by its branches' edges (the path profile)
            continue
        for k in range(decision.vectors):
            runs = slots.get(decision.slot + k)
            if runs:
                found[(d, k)] = runs
    return found


def edge_counts(meta: FunctionInfo, slots: dict[int, int], cuts: object = None
                ) -> dict[int, int]:
    """Edge mode: every CFG edge's count from the chord counters (by flow
    conservation, :func:`~pathprof.graph.recover_edge_counts`). ``slots`` maps
    counter slots to counts; the result maps CFG edge ids to counts."""
    counters = meta.edge_counters
    if counters is None:
        raise ValueError(f"{meta.qualname} was not measured in edge mode")
    plan = EdgeCounterPlan(cfg=cfg_of(meta), raising=counters.raising,
                           endpoints=counters.endpoints, chords=counters.chords)
    chord_counts = {plan.chords[slot]: count for slot, count in slots.items()}
    counts = recover_edge_counts(plan, chord_counts)
    return {eid: counts[eid] for eid in range(len(meta.edges)) if counts[eid]}


def numbering_of(meta: FunctionInfo) -> Numbering:
    """The function's Ball-Larus numbering (BL 1996 §3.1), computed once per function
    and kept with its metadata."""
    return meta.derived("numbering", lambda m: number_paths(to_dag(cfg_of(m))))


def end_kind(meta: FunctionInfo, numbering: Numbering, edges: tuple[int, ...],
             end: PathEnd) -> str:
    """How a path whose DAG edges are ``edges`` ends (one of :data:`END_KINDS`)."""
    if end is PathEnd.BACKEDGE:
        return "loop-back"
    last = numbering.dag.edges[edges[-1]]
    if last.kind is not EdgeKind.NORMAL or last.cfg_edge is None:
        return "loop-back"
    label = meta.edges[last.cfg_edge].label
    if label == "return":
        return "return"
    if label == "raise":
        pieces = meta.blocks[last.src].pieces
        if pieces and pieces[-1].flags == "raise":
            return "raise"
    return "reraise"


def decode_paths(meta: FunctionInfo, counts: Mapping[PathId, int], cuts: Mapping[Cut, int],
                 times: Mapping[PathId, int] | None = None,
                 numbering: Numbering | None = None) -> list[Path]:
    """Decode recorded counts into paths, hottest first (ties by :attr:`Path.key`, the
    order reports print them in).

    ``counts`` maps path numbers to counts; ``cuts`` maps :data:`~pathprof.types.Cut` points to
    counts; ``times`` maps path numbers to nanoseconds. Raises :class:`ValueError`
    for a number no path has.
    """
    numbering = numbering or numbering_of(meta)
    exit_block, entry_block = meta.exit, meta.entry
    paths = []
    for number, count in counts.items():
        path = regenerate(numbering, number)
        blocks = tuple(b for b in path.blocks if b not in (entry_block, exit_block))
        paths.append(Path(number, blocks, _START[path.start],
                          end_kind(meta, numbering, path.edges, path.end), count,
                          (times or {}).get(number)))
    for (block, value), count in cuts.items():
        path = regenerate_prefix(numbering, block, value)
        blocks = tuple(b for b in path.blocks if b not in (entry_block, exit_block))
        paths.append(Path((block, value), blocks, _START[path.start], "exception", count))
    paths.sort(key=lambda p: (-p.count, p.key))
    return paths


@dataclass
class FunctionProfile:
    """Everything measured for one function, with its CFG metadata."""

    file: str
    qualname: str
    first_line: int
    source_hash: str
    #: The function's contract; None for the function at ``position`` of ``module``,
    #: decoded when first asked for (:attr:`meta`): a big program's run saves every
    #: function it measured, and most of them never ran.
    info: FunctionInfo | None = field(compare=False, repr=False)
    #: Complete paths run: Ball-Larus number -> executions.
    counts: dict[PathId, int] = field(default_factory=dict)
    #: Paths an exception cut short: :data:`~pathprof.types.Cut` -> executions.
    cuts: dict[Cut, int] = field(default_factory=dict)
    #: With ``--metric time``: path number -> nanoseconds spent on the path.
    times: dict[PathId, int] = field(default_factory=dict)
    edges: dict[int, int] = field(default_factory=dict)
    raised: int = 0
    #: of the calls ``raised`` counts, generators their consumer closed early
    closed: int = 0
    unattributed: int = 0
    #: Conditions measured: (decision, vector) -> runs, decisions and vectors numbered
    #: as the contract's :attr:`~pathprof.contract.FunctionInfo.decisions` (a vector
    #: ``-1 - c`` counts evaluations that condition ``c`` ended by raising).
    vectors: dict[tuple[int, int], int] = field(default_factory=dict)
    #: Coverage that stops paying: the function, or a loop of it, went back to its
    #: original code in some run once its paths spanned its basis (or all ran, or,
    #: for a loop, the paths it hides), so its counts, its
    #: paths run and whatever else it counted are lower bounds; its basis
    #: coverage, lines and branches are exact (:mod:`pathprof.measure.stopping`).
    stopped: bool = False
    #: Which contexts (e.g. test ids, with ``--pathprof-context=test``) ran each path:
    #: path (a number of ``counts`` or a :data:`~pathprof.types.Cut` of ``cuts``) -> context names.
    contexts: dict[PathOrCut, set[str]] = field(default_factory=dict)
    #: The contract of the function's module as it was measured (or read from a data
    #: file), shared by the profiles of the module's functions, and the function's
    #: position in it: the data file keeps it once, as it is (None: the store makes
    #: a module's contract of the profiles' own metadata).
    module: ModuleContract | None = field(default=None, compare=False, repr=False)
    position: int = field(default=-1, compare=False, repr=False)

    @classmethod
    def of(cls, file: str, source_hash: str, meta: FunctionInfo) -> FunctionProfile:
        """An empty profile of the function ``meta`` describes."""
        return cls(file, meta.qualname, meta.code_line, source_hash, meta)

    @property
    def meta(self) -> FunctionInfo:
        """The function's contract (:class:`~pathprof.contract.FunctionInfo`)."""
        info = self.info
        if info is None:
            assert self.module is not None, "a profile with no contract and no module"
            info = self.info = self.module.info().functions[self.position]
        return info

    @meta.setter
    def meta(self, info: FunctionInfo) -> None:
        self.info = info

    @property
    def outline(self) -> tuple[str, int, int, int, int]:
        """:attr:`meta`'s :attr:`~pathprof.contract.FunctionInfo.outline`, read without
        decoding the contract while it is the module's row."""
        if self.info is None and self.module is not None:
            return self.module.info().outline(self.position)
        return self.meta.outline

    @cached_property
    def paths(self) -> list[Path]:
        return decode_paths(self.meta, self.counts, self.cuts, self.times)

    @property
    def total(self) -> int:
        """Paths executed, counting every execution."""
        return sum(self.counts.values()) + sum(self.cuts.values())

    @property
    def paths_possible(self) -> int:
        """Complete acyclic paths (Ball-Larus NumPaths(ENTRY))."""
        return self.meta.num_paths

    @property
    def paths_run(self) -> int:
        """Distinct complete paths that ran at least once (cut paths not included)."""
        return sum(1 for c in self.counts.values() if c)

    def block_lines(self, block: int) -> tuple[int, int] | None:
        """The first and last source line of a block, or None for a block with no code."""
        return self.meta.blocks[block].lines()

    def add(self, other: FunctionProfile) -> None:
        """Add another measurement of the same function (same source hash)."""
        for number, count in other.counts.items():
            self.counts[number] = self.counts.get(number, 0) + count
        for cut, count in other.cuts.items():
            self.cuts[cut] = self.cuts.get(cut, 0) + count
        for number, spent in other.times.items():
            self.times[number] = self.times.get(number, 0) + spent
        for edge, count in other.edges.items():
            self.edges[edge] = self.edges.get(edge, 0) + count
        for vector, count in other.vectors.items():
            self.vectors[vector] = self.vectors.get(vector, 0) + count
        self.raised += other.raised
        self.closed += other.closed
        self.unattributed += other.unattributed
        self.stopped = self.stopped or other.stopped
        for key, names in other.contexts.items():
            self.contexts.setdefault(key, set()).update(names)
        self.__dict__.pop("paths", None)

    def mark_context(self, context: str) -> None:
        """Record that every path counted here ran in ``context``."""
        ran: list[PathOrCut] = [number for number, count in self.counts.items() if count]
        ran += [cut for cut, count in self.cuts.items() if count]
        for path in ran:
            self.contexts.setdefault(path, set()).add(context)


def merge(profiles: Iterable[FunctionProfile]) -> list[FunctionProfile]:
    """Merge measurements of the same function (file, qualname, line, source hash)."""
    merged: dict[tuple[str, str, int, str], FunctionProfile] = {}
    for profile in profiles:
        key = (profile.file, profile.qualname, profile.first_line, profile.source_hash)
        if key in merged:
            merged[key].add(profile)
        else:
            merged[key] = profile
    return list(merged.values())
