"""Path coverage: paths run out of paths possible, and basis paths covered out of the
dimension of the path space, per function, file and total.

"Possible" is the number of acyclic paths the control-flow graph allows
(Ball-Larus 1996, §3.1: NumPaths(ENTRY) of the DAG, paths that start at a loop
header or an exception handler included). The CFG does not know which branch
conditions can hold together, so some possible paths may be infeasible: 100% is
an upper bound no test suite is obliged to reach, and a missed path is a
question for a human, not proof of a missing test.

Paths possible grow exponentially with a function's decisions, so their sum over
a suite is decided by its biggest function. The headline is therefore *basis path
coverage* (:mod:`pathprof.analysis.basis`, McCabe's structured testing): per
function, how many linearly independent paths ran out of the dimension of the
space its paths span, which grows linearly with its decisions; a file's and the
total's figures are sums over their functions.

Invariant: for every function, ``0 <= paths_run <= paths_possible`` and
``0 <= basis covered <= basis dimension``; a file's and the total's figures are
sums over their functions. Paths cut short by an exception are not complete paths
and count neither as run nor towards the basis.

A function that stopped counting (``--stop-counting``: it, or a loop of it, went back
to its original code)
keeps exact basis figures; its paths run are a lower bound, which
:attr:`CoverageTotals.lower_bound` carries up to its file's and the total's figures.

What a team excluded (:mod:`pathprof.analysis.exclusions`: ``# pragma: no cover``,
``exclude_lines``, ``@overload`` stubs...) is left out of every figure: an excluded
function entirely, an excluded branch with its paths and dimensions
(:mod:`pathprof.analysis.pathspace`); :class:`Excluded` says how much. Files under
the configured source that were never imported count too, at 0% with their paths
and dimensions from a parse (:mod:`pathprof.measure.unmeasured`), as coverage.py
reports them.
"""

from __future__ import annotations

import ast
from collections.abc import MutableMapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

from pathprof.analysis.basis import basis_rank
from pathprof.analysis.conditioncoverage import DecisionCoverage, decision_coverage
from pathprof.analysis.exclusions import ExcludedSource, ExclusionRules, exclusions_of
from pathprof.analysis.feasibility import (
    Contradiction,
    FunctionFacts,
    function_facts,
    infeasible,
)
from pathprof.analysis.memo import AnalysisMemo, paths_key, rules_key
from pathprof.analysis.nextpaths import NextPaths, next_paths
from pathprof.analysis.pathspace import PathSpace, path_space
from pathprof.data.measurement import Measurement
from pathprof.data.profile import FunctionProfile, Path, decode_paths, numbering_of, path_key
from pathprof.exceptions import PathprofError

__all__ = ["CoverageTotals", "Excluded", "FileCoverage", "FunctionCoverage", "PathCoverage",
           "missed_paths", "path_coverage"]


@dataclass
class CoverageTotals:
    """Paths run and possible, summed over some functions; also basis paths covered out
    of the dimension (:mod:`pathprof.analysis.basis`), and lines, branch arms and
    functions run (hit) out of those there are (:mod:`pathprof.analysis.linecoverage`)."""

    run: int = 0
    possible: int = 0
    #: ``run`` is a lower bound (and ``missed`` an upper one): some function among
    #: these stopped counting before all of its paths ran (:mod:`pathprof.measure.stopping`)
    lower_bound: bool = False

    @property
    def missed(self) -> int:
        return self.possible - self.run

    @property
    def percent(self) -> float:
        """Paths run as a percentage of paths possible (100 when nothing is possible)."""
        # int / int: exact for path counts far beyond a float's range (2**1024)
        return 100 * self.run / self.possible if self.possible else 100.0

    @property
    def fraction(self) -> float:
        """Run as a fraction of possible (1.0 when nothing is possible, as Cobertura has it)."""
        return self.run / self.possible if self.possible else 1.0

    def add(self, run: int, possible: int, lower_bound: bool = False) -> None:
        self.run += run
        self.possible += possible
        self.lower_bound = self.lower_bound or lower_bound

    def __str__(self) -> str:
        return f"{self.percent:.2f}% ({self.run} of {self.possible})"


@dataclass
class Excluded:
    """What exclusions took out of some functions' figures: whole functions (by
    reason), and the paths and basis dimensions of excluded branches and functions."""

    functions: dict[str, int] = field(default_factory=dict)
    paths: int = 0
    dimensions: int = 0
    #: functions that lost some of their paths (an excluded branch), not all
    partly: int = 0

    def add(self, other: Excluded) -> None:
        for reason, count in other.functions.items():
            self.functions[reason] = self.functions.get(reason, 0) + count
        self.paths += other.paths
        self.dimensions += other.dimensions
        self.partly += other.partly

    @property
    def function_count(self) -> int:
        return sum(self.functions.values())

    def __bool__(self) -> bool:
        return bool(self.functions or self.paths or self.dimensions)


@dataclass
class FunctionCoverage:
    """One function's path coverage: ``totals`` counts paths run out of possible,
    ``basis`` basis paths covered out of the dimension, both within ``space`` (what
    exclusions left of its paths); ``excluded`` is what they took."""

    profile: FunctionProfile
    totals: CoverageTotals
    basis: CoverageTotals = field(default_factory=CoverageTotals)
    #: what exclusions left of its paths; None when they took nothing (its whole path
    #: space, made when first asked for: :attr:`path_space`)
    space: PathSpace | None = None
    excluded: Excluded = field(default_factory=Excluded)
    #: its module's source, read and parsed when first asked for (:attr:`tree`,
    #: :attr:`lines`)
    source: SourceText | None = field(default=None, repr=False, compare=False)
    #: what the exclusion rules take out of its module
    found: ExcludedSource = field(default_factory=ExcludedSource, repr=False, compare=False)

    @property
    def qualname(self) -> str:
        return self.profile.qualname

    @property
    def tree(self) -> ast.Module | None:
        """The function's module, parsed (None when its source is not at hand)."""
        return None if self.source is None else self.source.tree

    @property
    def lines(self) -> Sequence[str] | None:
        """Its module's lines (None when its source is not at hand)."""
        return None if self.source is None else self.source.lines

    @property
    def path_space(self) -> PathSpace:
        """The paths that count (:mod:`pathprof.analysis.pathspace`)."""
        if self.space is None:
            self.space = path_space(numbering_of(self.profile.meta))
        return self.space

    @property
    def contexts(self) -> dict[str, list[str]]:
        """Path key (:func:`~pathprof.data.profile.path_key`) -> the contexts (tests)
        that ran it, sorted, in the order of the keys; empty without contexts."""
        named = {path_key(path): names for path, names in self.profile.contexts.items()}
        return {key: sorted(named[key]) for key in sorted(named)}

    @cached_property
    def calls(self) -> int:
        """The function's calls: the paths that started at its entry, those an
        exception cut short included (paths from loop headers and handlers are not
        calls)."""
        return sum(p.count for p in self.profile.paths if p.start == "entry")

    def missed(self, limit: int | None = 10) -> list[Path]:
        return missed_paths(self.profile, limit, self.path_space)

    def impossible(self, path: Path) -> Contradiction | None:
        """Why the source proves ``path`` cannot run, or None
        (:mod:`pathprof.analysis.feasibility`)."""
        facts = self.facts
        return None if facts is None else infeasible(self.profile, path, facts)

    @cached_property
    def facts(self) -> FunctionFacts | None:
        """What the source says of the function's tests (for paths that cannot run);
        None, nothing proved, where the source tells nothing: none kept, or a test
        nested too deeply to be read back (``ast.unparse`` recurses where the parser
        did not need to)."""
        if self.tree is None:
            return None
        try:
            return function_facts(self.profile, self.tree)
        except (RecursionError, MemoryError):
            return None

    def next_paths(self, limit: int | None = None) -> NextPaths:
        """The missed paths that would complete the basis (:mod:`pathprof.analysis.nextpaths`);
        with ``limit``, the first ``limit`` of them, found sooner (the search stops
        there): ``needed`` still counts every missing path, ``unfound`` only those the
        search ran out of before the limit."""
        cache: dict[int | None, NextPaths] = self.__dict__.setdefault("_next_paths", {})
        if limit not in cache:
            cache[limit] = next_paths(self.profile, self.path_space, self.facts, limit)
        return cache[limit]

    @cached_property
    def decisions(self) -> list[DecisionCoverage]:
        """Condition coverage and MC/DC of its decisions, where they were measured
        (``--conditions``), less the excluded ones (:mod:`pathprof.analysis.conditioncoverage`)."""
        return decision_coverage(self.profile, self.found)


@dataclass
class FileCoverage:
    file: str
    functions: list[FunctionCoverage]
    totals: CoverageTotals
    basis: CoverageTotals = field(default_factory=CoverageTotals)
    excluded: Excluded = field(default_factory=Excluded)
    #: no function of it was measured: it is under the source but was never imported
    imported: bool = True


@dataclass
class PathCoverage:
    """Path coverage of a measurement: files in name order, functions in line order.
    ``basis`` is the headline (basis path coverage), ``totals`` paths run of possible;
    ``excluded`` what exclusions took out of them; ``unparsed`` files under the source
    that were never imported and do not parse (left out, with why); ``notes`` what
    else a report should say of what it counts."""

    files: list[FileCoverage]
    totals: CoverageTotals
    basis: CoverageTotals = field(default_factory=CoverageTotals)
    excluded: Excluded = field(default_factory=Excluded)
    unparsed: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def functions(self) -> list[FunctionCoverage]:
        return [fn for f in self.files for fn in f.functions]

    @property
    def unimported(self) -> list[FileCoverage]:
        """Files under the source that were never imported (each counted at 0%)."""
        return [f for f in self.files if not f.imported]

    def where_to_test_next(self, limit: int | None = 10) -> list[FunctionCoverage]:
        """The functions where tests would add the most basis dimensions: most missing
        first, then the most called (a test reaches them most easily), then by name."""
        candidates = [fn for fn in self.functions() if fn.basis.missed]
        candidates.sort(key=lambda fn: (-fn.basis.missed, -fn.calls, fn.profile.file,
                                        fn.profile.first_line))
        return candidates if limit is None else candidates[:limit]


def _source_of(measurement: Measurement, fn: FunctionProfile) -> str | None:
    """The source ``fn`` was measured from: the data file's copy, or the file itself
    if it is unchanged."""
    try:
        return measurement.sources[(fn.file, fn.source_hash)]
    except KeyError:
        pass
    from pathprof.hashing import source_hash

    try:
        with open(fn.file, "rb") as f:
            data = f.read()
    except OSError:
        return None
    if source_hash(data) != fn.source_hash:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


class SourceText:
    """One version of a module's source (the data file's copy, or the file itself if
    unchanged), read, split and parsed each when first asked for: a report that
    prints figures only, from analyses kept (:mod:`pathprof.analysis.memo`), never
    reads it."""

    def __init__(self, measurement: Measurement, fn: FunctionProfile) -> None:
        self.file = fn.file
        #: where the text comes from, until it is read
        self._origin: tuple[Measurement, FunctionProfile] | None = (measurement, fn)

    @cached_property
    def text(self) -> str | None:
        assert self._origin is not None
        text = _source_of(*self._origin)
        self._origin = None
        return text

    @cached_property
    def tree(self) -> ast.Module | None:
        if self.text is None:
            return None
        try:
            return ast.parse(self.text, self.file)
        except (SyntaxError, ValueError, RecursionError, MemoryError):  # (too deep: no parse)
            return None

    @cached_property
    def lines(self) -> list[str] | None:
        return None if self.text is None else self.text.splitlines()


def _function_key(fn: FunctionProfile) -> str | None:
    """What names ``fn``'s contract in a memo: its module contract's digest and its
    position there (None: it came with no module's contract)."""
    if fn.module is None or fn.position < 0:
        return None
    return f"{fn.module.digest}:{fn.position}"


def _function_coverage(fn: FunctionProfile, found: ExcludedSource,
                       source: SourceText, memo: AnalysisMemo | None = None
                       ) -> FunctionCoverage | None:
    """One function's figures within what ``found`` excludes; None if it is excluded.
    With ``memo``, what it holds for the function is used, and what is computed is
    kept in it (for a function of which nothing is excluded)."""
    meta = fn.meta
    if found.function_reason(meta.first_line) is not None:
        return None
    blocks = ([b for b, block in enumerate(meta.blocks) if found.block_excluded(block.pieces)]
              if found.spans else [])
    key = _function_key(fn) if memo is not None and not blocks else None
    if key is not None and memo is not None:
        return _kept_coverage(fn, found, source, memo, key)
    numbering = numbering_of(meta)
    space = path_space(numbering, blocks)
    ran = sorted(number for number, count in fn.counts.items() if count)
    counted = [number for number in ran if space.counts(number)]
    whole = path_space(numbering) if space.excluded else space
    excluded = Excluded(paths=whole.possible - space.possible,
                        dimensions=whole.dimension - space.dimension,
                        partly=int(whole.possible != space.possible))
    totals = CoverageTotals(len(counted), space.possible,
                            fn.stopped and len(counted) < space.possible)
    basis = CoverageTotals(basis_rank(numbering, counted, space.dimension), space.dimension)
    return FunctionCoverage(fn, totals, basis, space, excluded, source, found)


def _kept_coverage(fn: FunctionProfile, found: ExcludedSource, source: SourceText,
                   memo: AnalysisMemo, key: str) -> FunctionCoverage:
    """:func:`_function_coverage` of a function of which nothing is excluded, from
    what ``memo`` keeps under ``key`` where it can (its numbering is not even made),
    else computed and kept. Every path that ran counts; two distinct paths are
    linearly independent, so up to two the rank is their number."""
    space = None
    shape = memo.space(key)
    if shape is None:
        space = path_space(numbering_of(fn.meta))
        possible, dimension = space.possible, space.dimension
        memo.keep_space(key, possible, dimension)
    else:
        possible, dimension = shape
    counted = sorted(number for number, count in fn.counts.items() if count)
    if len(counted) <= 2 or len(counted) >= possible:
        rank = min(len(counted), dimension)
    else:
        paths = paths_key(counted)
        found_rank = memo.rank(key, paths)
        if found_rank is None:
            found_rank = basis_rank(numbering_of(fn.meta), counted, dimension)
            memo.keep_rank(key, paths, found_rank)
        rank = found_rank
    totals = CoverageTotals(len(counted), possible, fn.stopped and len(counted) < possible)
    return FunctionCoverage(fn, totals, CoverageTotals(rank, dimension), space, Excluded(),
                            source, found)


def _excluded_function(fn: FunctionProfile, reason: str) -> Excluded:
    whole = path_space(numbering_of(fn.meta))
    return Excluded({reason: 1}, whole.possible, whole.dimension)


def path_coverage(measurement: Measurement, rules: ExclusionRules | None = None,
                  unmeasured: Sequence[FunctionProfile] = (),
                  unparsed: Sequence[tuple[str, str]] = (),
                  notes: Sequence[str] = (),
                  memos: MutableMapping[tuple[str, str], AnalysisMemo] | None = None
                  ) -> PathCoverage:
    """Path coverage of every function in ``measurement`` (path mode data only), less
    what ``rules`` exclude (default: :class:`ExclusionRules`'s defaults), with the
    ``unmeasured`` profiles (of files under the source never imported,
    :mod:`pathprof.measure.unmeasured`) counted at 0%; ``unparsed`` names the files
    of the source that could not be read, with why, and ``notes`` what else the
    report should say of what it counts.

    A function measured in several versions of its source (different source
    hashes, e.g. data files combined across an edit) appears once per version.

    ``memos`` holds what earlier reports derived, per ``(file, source hash)``
    (:mod:`pathprof.analysis.memo`): what it holds is used, not derived again, and a
    memo for each module version is put in it, with what was derived added (its
    ``changed`` says so), for the caller to keep for the next report.
    """
    # told by the mode each function was measured in: one that never ran has no edge
    # counts either, so the counts cannot tell an edge profile
    if measurement.functions and all(fn.meta.mode != "path" for fn in measurement.functions):
        raise PathprofError("path coverage needs a path profile; this data file holds an "
                            "edge profile (pathprof run --mode edge): measure again "
                            "without --mode edge")
    rules = ExclusionRules() if rules is None else rules
    by_file: dict[str, list[FunctionProfile]] = {}
    for fn in measurement.functions:
        if fn.meta.mode == "path":
            by_file.setdefault(fn.file, []).append(fn)
    for fn in unmeasured:
        by_file.setdefault(fn.file, []).append(fn)
    unimported = {fn.file for fn in unmeasured}  # files with no function left out
    result = PathCoverage([], CoverageTotals(), CoverageTotals(), Excluded(), list(unparsed),
                          list(notes))
    for file in sorted(set(by_file) | unimported):
        result.files.append(_file_coverage(measurement, file, by_file.get(file, []),
                                           rules, file not in unimported, memos))
        last = result.files[-1]
        result.totals.add(last.totals.run, last.totals.possible, last.totals.lower_bound)
        result.basis.add(last.basis.run, last.basis.possible)
        result.excluded.add(last.excluded)
    return result


def _file_coverage(measurement: Measurement, file: str, profiles: list[FunctionProfile],
                   rules: ExclusionRules, imported: bool,
                   memos: MutableMapping[tuple[str, str], AnalysisMemo] | None = None
                   ) -> FileCoverage:
    coverage = FileCoverage(file, [], CoverageTotals(), CoverageTotals(),
                            imported=imported)
    parsed: dict[str, tuple[SourceText, ExcludedSource, AnalysisMemo | None]] = {}
    for fn in sorted(profiles, key=lambda f: (f.first_line, f.qualname)):
        if fn.source_hash not in parsed:
            source = SourceText(measurement, fn)
            memo = None
            if memos is not None:
                memo = memos.get((file, fn.source_hash))
                if memo is None:
                    memo = memos[(file, fn.source_hash)] = AnalysisMemo(
                        file, fn.source_hash, rules_key(rules))
            found = memo.excluded() if memo is not None else None
            if found is None:
                found = ExcludedSource()
                if source.text is not None and source.tree is not None:
                    found = exclusions_of(source.text, rules, file, source.tree)
                    if memo is not None:
                        memo.keep_excluded(found)
            parsed[fn.source_hash] = (source, found, memo)
        source, found, memo = parsed[fn.source_hash]
        reason = found.function_reason(fn.meta.first_line)
        if reason is None and found.spans and all(
                found.block_excluded(block.pieces)
                for block in fn.meta.blocks if block.pieces):
            reason = "excluded line"  # every statement of it (coverage.py: no lines left)
        if reason is not None:
            coverage.excluded.add(_excluded_function(fn, reason))
            continue
        entry = _function_coverage(fn, found, source, memo)
        assert entry is not None
        coverage.functions.append(entry)
        coverage.totals.add(entry.totals.run, entry.totals.possible,
                            entry.totals.lower_bound)
        coverage.basis.add(entry.basis.run, entry.basis.possible)
        coverage.excluded.add(entry.excluded)
    return coverage


def missed_paths(fn: FunctionProfile, limit: int | None = 10,
                 space: PathSpace | None = None) -> list[Path]:
    """The complete paths of ``fn`` that never ran, shortest first (then by
    number), at most ``limit`` of them; each comes with ``count == 0``. With
    ``space``, only the paths it counts (what exclusions left)."""
    numbering = numbering_of(fn.meta)
    ran = {number for number, count in fn.counts.items() if count}
    space = space or path_space(numbering)
    result = []
    for number in space.missed(ran, limit):
        result += decode_paths(fn.meta, {number: 0}, {}, numbering=numbering)
    return result
