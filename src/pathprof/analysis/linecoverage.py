"""Line, branch and function coverage implied by a path profile (for LCOV and Cobertura).

A path profile says which blocks each path ran, so it determines what a line or
branch coverage tool would have measured (Ball-Larus 1996, §2: an edge profile
is a projection of the path profile; a block profile is one of the edge
profile):

- a line's hits are the executions of the blocks that hold a statement starting
  on it (a block counts once per execution, however many statements of it start
  on the line). A block an exception cut short counts its first line only:
  pathprof knows the block the exception left, not the statement;
- a *decision* is a block whose last piece chooses where to go (an ``if`` or
  ``while`` test, a ``for`` loop's next item, a ``match`` pattern or guard) and
  that has two or more successors; its *arms* are its out-edges, each counted as
  often as the paths through it ran;
- a function's calls are the paths that started at its entry.

Only what pathprof measures is here: the lines of functions (module and class
bodies run once at import and are not profiled), and paths, which no line or
branch format has: :mod:`pathprof.report.lcov` and
:mod:`pathprof.report.cobertura` carry them where their consumers ignore them.

What the configuration excludes (:mod:`pathprof.analysis.exclusions`) is left out as
coverage.py leaves it out of its XML: an excluded function entirely, an excluded
statement's line, a branch arm into excluded code (a decision left with one arm is no
decision); paths and basis dimensions as path coverage counts them
(:mod:`pathprof.analysis.pathspace`).

Invariant: for every function, a line's hit count is at most the sum, over the paths
that ran, of the path's count times the number of times a block holding a statement
that starts on the line occurs on it (equal when no exception cut a path short). A
line is hit more than once by one run of a path where it starts statements of two of
its blocks: a ``for`` line is in the iterable's block and the next item's, so the path
that enters the loop hits it twice, and a loop over n items hits it n + 2 times (once
for ``iter``, once per ``next``; Python's line events, which see ``iter`` and the first
``next`` as one, count n + 1). ``0 <= covered <= valid`` for lines, branches and
functions, and a file's and the total's figures are sums over their functions.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Callable, Iterable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

from pathprof.analysis.basis import basis_coverage, basis_rank
from pathprof.analysis.edgepredict import cfg_edge_counts
from pathprof.analysis.exclusions import ExcludedSource, ExclusionRules, exclusions_of
from pathprof.analysis.pathcoverage import CoverageTotals
from pathprof.analysis.pathspace import PathSpace, path_space
from pathprof.contract import Role
from pathprof.data.measurement import Measurement
from pathprof.data.profile import FunctionProfile, numbering_of
from pathprof.exceptions import PathprofError
from pathprof.hashing import source_hash

__all__ = ["Arm", "Decision", "FileLines", "FunctionLines", "LineCoverage", "line_coverage"]

def _total(rates: Iterable[CoverageTotals]) -> CoverageTotals:
    total = CoverageTotals()
    for rate in rates:
        total.add(rate.run, rate.possible)
    return total


#: The kinds of a block's last piece that choose between successors.
DECIDING = (Role.TEST, Role.FOR_NEXT, Role.PATTERN, Role.GUARD)


@dataclass(frozen=True)
class Arm:
    label: str  #: the CFG edge's label: true, false, next, exhausted, case 1, ...
    count: int


@dataclass(frozen=True)
class Decision:
    line: int  #: where the deciding statement starts
    block: int
    executed: int  #: how often the deciding block ran
    arms: tuple[Arm, ...]

    @property
    def covered(self) -> int:
        return sum(1 for arm in self.arms if arm.count)


@dataclass
class FunctionLines:
    profile: FunctionProfile
    calls: int
    lines: dict[int, int]  #: line -> hits
    decisions: list[Decision]
    #: the paths that count, once exclusions are applied (None: all of them)
    space: PathSpace | None = None
    #: what the exclusion rules take out of its module
    found: ExcludedSource | None = None

    @property
    def name(self) -> str:
        return self.profile.qualname

    @property
    def first_line(self) -> int:
        return self.profile.meta.first_line

    @property
    def last_line(self) -> int:
        return self.profile.meta.last_line

    @property
    def line_rate(self) -> CoverageTotals:
        return CoverageTotals(sum(1 for hits in self.lines.values() if hits), len(self.lines))

    @property
    def branch_rate(self) -> CoverageTotals:
        return CoverageTotals(sum(d.covered for d in self.decisions),
                    sum(len(d.arms) for d in self.decisions))

    @property
    def path_rate(self) -> CoverageTotals:
        if self.space is None:
            return CoverageTotals(self.profile.paths_run, self.profile.paths_possible)
        return CoverageTotals(len(self._counted), self.space.possible)

    @property
    def basis_rate(self) -> CoverageTotals:
        """Basis paths covered of the dimension (:mod:`pathprof.analysis.basis`)."""
        if self.space is None:
            return CoverageTotals(*basis_coverage(self.profile))
        return CoverageTotals(basis_rank(self.space.numbering, self._counted,
                                         self.space.dimension), self.space.dimension)

    @property
    def _counted(self) -> list[int]:
        assert self.space is not None
        return sorted(number for number, count in self.profile.counts.items()
                      if count and self.space.counts(number))


@dataclass
class FileLines:
    file: str
    functions: list[FunctionLines]  #: in line order
    lines: dict[int, int] = field(default_factory=dict)  #: line -> hits, in line order

    @property
    def decisions(self) -> list[Decision]:
        return sorted((d for fn in self.functions for d in fn.decisions),
                      key=lambda d: (d.line, d.block))

    @property
    def line_rate(self) -> CoverageTotals:
        return CoverageTotals(sum(1 for hits in self.lines.values() if hits), len(self.lines))

    @property
    def branch_rate(self) -> CoverageTotals:
        return _total(fn.branch_rate for fn in self.functions)

    @property
    def function_rate(self) -> CoverageTotals:
        return CoverageTotals(sum(1 for fn in self.functions if fn.calls), len(self.functions))

    @property
    def path_rate(self) -> CoverageTotals:
        return _total(fn.path_rate for fn in self.functions)

    @property
    def basis_rate(self) -> CoverageTotals:
        return _total(fn.basis_rate for fn in self.functions)


@dataclass
class LineCoverage:
    files: list[FileLines]  #: in name order
    #: files measured in several versions of their source: (file, versions left out)
    older_versions: list[tuple[str, int]] = field(default_factory=list)

    @property
    def line_rate(self) -> CoverageTotals:
        return _total(file.line_rate for file in self.files)

    @property
    def branch_rate(self) -> CoverageTotals:
        return _total(file.branch_rate for file in self.files)

    @property
    def function_rate(self) -> CoverageTotals:
        return _total(file.function_rate for file in self.files)

    @property
    def path_rate(self) -> CoverageTotals:
        return _total(file.path_rate for file in self.files)

    @property
    def basis_rate(self) -> CoverageTotals:
        """Basis path coverage, the headline ``--fail-under`` checks."""
        return _total(file.basis_rate for file in self.files)

    def summary(self) -> str:
        return (f"lines {self.line_rate}, branches {self.branch_rate}, "
                f"functions {self.function_rate}, paths {self.path_rate}")


def codeless_lines(source: str) -> set[int]:
    """Lines where only statements that compile to no code start (``global``,
    ``nonlocal``, a constant expression such as ``...`` or a docstring): Python never
    runs them, so coverage tools do not list them."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # (too deep: no parse)
        return set()
    codeless: set[int] = set()
    with_code: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt):
            empty = (isinstance(node, ast.Global | ast.Nonlocal)
                     or (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)))
            (codeless if empty else with_code).add(node.lineno)
    return codeless - with_code


def function_lines(fn: FunctionProfile, codeless: AbstractSet[int] = frozenset(),
                   excluded: ExcludedSource | None = None) -> FunctionLines:
    """What a line and branch coverage tool would have seen of ``fn`` (``codeless``:
    see :func:`codeless_lines`), less what ``excluded`` leaves out."""
    meta = fn.meta
    blocks = meta.blocks
    left_out: set[int] = set()  # excluded blocks
    space = None
    if excluded is not None and excluded.spans:
        left_out = {b for b, block in enumerate(blocks)
                    if excluded.block_excluded(block.pieces)}
        dropped = {piece.line for block in blocks for piece in block.pieces
                   if excluded.covers(piece)}
        kept = {piece.line for block in blocks for piece in block.pieces
                if not excluded.covers(piece)}
        codeless = set(codeless) | (dropped - kept)
        space = path_space(numbering_of(meta), left_out)
    starts = [sorted({piece.line for piece in block.pieces} - codeless) for block in blocks]
    lines = {line: 0 for block_lines in starts for line in block_lines}
    executed = [0] * len(blocks)
    calls = 0
    for path in fn.paths:
        if path.start == "entry":
            calls += path.count
        for i, block in enumerate(path.blocks):
            executed[block] += path.count
            cut_here = path.end == "exception" and i == len(path.blocks) - 1
            for line in starts[block][:1] if cut_here else starts[block]:
                lines[line] += path.count
    edge_counts = cfg_edge_counts(fn, numbering_of(meta)) if fn.paths else {}
    out_edges: dict[int, list[int]] = {}
    for eid, edge in enumerate(meta.edges):
        out_edges.setdefault(edge.src, []).append(eid)
    decisions = []
    for block, eids in sorted(out_edges.items()):
        pieces = blocks[block].pieces
        if (not pieces or pieces[-1].role not in DECIDING
                or len({meta.edges[e].dst for e in eids}) < 2):
            continue
        if block in left_out:
            continue
        eids = [e for e in eids if meta.edges[e].dst not in left_out]
        if len({meta.edges[e].dst for e in eids}) < 2:
            continue
        arms = tuple(Arm(meta.edges[e].label, edge_counts.get(e, 0)) for e in eids)
        decisions.append(Decision(pieces[-1].line, block, executed[block], arms))
    return FunctionLines(fn, calls, dict(sorted(lines.items())), decisions, space, excluded)


def _all_excluded(fn: FunctionProfile, found: ExcludedSource) -> bool:
    """Every statement of ``fn`` is excluded: it has no line left (coverage.py)."""
    return bool(found.spans) and all(found.block_excluded(block.pieces)
                                     for block in fn.meta.blocks if block.pieces)


def _read(file: str) -> str | None:
    try:
        with open(file, encoding="utf-8") as f:
            return f.read()
    except (OSError, UnicodeDecodeError):
        return None


def _current_digest(file: str) -> str | None:
    try:
        with open(file, "rb") as f:
            return source_hash(f.read())
    except OSError:
        return None


def line_coverage(measurement: Measurement,
                  progress: Callable[[int, int], None] | None = None,
                  rules: ExclusionRules | None = None) -> LineCoverage:
    """Line, branch, function and path coverage of every function measured, less what
    ``rules`` exclude (default: none).

    A file measured in several versions of its source (data files combined
    across an edit) is reported in one: the version the file holds now, or else
    the one whose paths ran most; ``older_versions`` names the files where
    versions were left out. ``progress(done, total)`` is called after each file."""
    functions = [fn for fn in measurement.functions if fn.meta.mode == "path"]
    if measurement.functions and not functions:
        raise PathprofError("line and branch coverage need a path profile; this data "
                            "file holds an edge profile (run without --mode edge)")
    by_file: dict[str, dict[str, list[FunctionProfile]]] = {}
    for fn in functions:
        by_file.setdefault(fn.file, {}).setdefault(fn.source_hash, []).append(fn)
    result = LineCoverage([])
    for done, file in enumerate(sorted(by_file), 1):
        versions = by_file[file]
        digest = _current_digest(file)
        if digest not in versions:
            digest = max(versions, key=lambda d: (sum(f.total for f in versions[d]), d))
        if len(versions) > 1:
            result.older_versions.append((file, len(versions) - 1))
        text = measurement.sources.get((file, digest))
        if text is None and digest == _current_digest(file):
            text = _read(file)
        codeless = codeless_lines(text) if text is not None else set()
        found = (exclusions_of(text, rules, file) if text is not None and rules is not None
                 else ExcludedSource())
        measured = [function_lines(fn, codeless, found) for fn in
                    sorted(versions[digest], key=lambda f: (f.first_line, f.qualname))
                    if found.function_reason(fn.meta.first_line) is None
                    and not _all_excluded(fn, found)]
        hits: dict[int, int] = {}
        for fn_lines in measured:
            for line, count in fn_lines.lines.items():
                hits[line] = hits.get(line, 0) + count
        result.files.append(FileLines(file, measured, dict(sorted(hits.items()))))
        if progress is not None:
            progress(done, len(by_file))
    return result


def relative_name(file: str, root: str) -> str:
    """``file`` relative to ``root`` when it lies under it, else as it is."""
    try:
        relative = os.path.relpath(file, root)
    except ValueError:  # another drive
        return file
    return file if relative.startswith(os.pardir) else relative
