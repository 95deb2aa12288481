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
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pathprof.analysis.basis import basis_coverage
from pathprof.data.measurement import Measurement
from pathprof.data.profile import FunctionProfile, Path, decode_paths, numbering_of
from pathprof.exceptions import PathprofError
from pathprof.graph import paths_shortest_first

__all__ = ["CoverageTotals", "FileCoverage", "FunctionCoverage", "PathCoverage",
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
class FunctionCoverage:
    """One function's path coverage: ``totals`` counts paths run out of possible,
    ``basis`` basis paths covered out of the dimension; ``missed`` lists the
    shortest missed paths."""

    profile: FunctionProfile
    totals: CoverageTotals
    basis: CoverageTotals = field(default_factory=CoverageTotals)

    @property
    def qualname(self) -> str:
        return self.profile.qualname

    @property
    def contexts(self) -> dict[str, list[str]]:
        """Path key -> the contexts (tests) that ran it, sorted; empty without contexts."""
        return {key: sorted(names) for key, names in sorted(self.profile.contexts.items())}

    def missed(self, limit: int | None = 10) -> list[Path]:
        return missed_paths(self.profile, limit)


@dataclass
class FileCoverage:
    file: str
    functions: list[FunctionCoverage]
    totals: CoverageTotals
    basis: CoverageTotals = field(default_factory=CoverageTotals)


@dataclass
class PathCoverage:
    """Path coverage of a measurement: files in name order, functions in line order.
    ``basis`` is the headline (basis path coverage), ``totals`` paths run of possible."""

    files: list[FileCoverage]
    totals: CoverageTotals
    basis: CoverageTotals = field(default_factory=CoverageTotals)

    def functions(self) -> list[FunctionCoverage]:
        return [fn for f in self.files for fn in f.functions]


def path_coverage(measurement: Measurement) -> PathCoverage:
    """Path coverage of every function in ``measurement`` (path mode data only).

    A function measured in several versions of its source (different source
    hashes, e.g. data files combined across an edit) appears once per version.
    """
    if measurement.functions and all(fn.edges and not fn.counts
                                      for fn in measurement.functions):
        raise PathprofError("path coverage needs a path profile; this data file holds "
                            "an edge profile (run without --mode edge)")
    by_file: dict[str, list[FunctionProfile]] = {}
    for fn in measurement.functions:
        if fn.meta.mode == "path":
            by_file.setdefault(fn.file, []).append(fn)
    files = []
    totals, basis = CoverageTotals(), CoverageTotals()
    for file in sorted(by_file):
        functions = []
        file_totals, file_basis = CoverageTotals(), CoverageTotals()
        for fn in sorted(by_file[file], key=lambda f: (f.first_line, f.qualname)):
            fn_totals = CoverageTotals(fn.paths_run, fn.paths_possible,
                                       fn.stopped and fn.paths_run < fn.paths_possible)
            fn_basis = CoverageTotals(*basis_coverage(fn))
            functions.append(FunctionCoverage(fn, fn_totals, fn_basis))
            file_totals.add(fn_totals.run, fn_totals.possible, fn_totals.lower_bound)
            file_basis.add(fn_basis.run, fn_basis.possible)
        files.append(FileCoverage(file, functions, file_totals, file_basis))
        totals.add(file_totals.run, file_totals.possible, file_totals.lower_bound)
        basis.add(file_basis.run, file_basis.possible)
    return PathCoverage(files, totals, basis)


def missed_paths(fn: FunctionProfile, limit: int | None = 10) -> list[Path]:
    """The complete paths of ``fn`` that never ran, shortest first (then by
    number), at most ``limit`` of them; each comes with ``count == 0``."""
    numbering = numbering_of(fn.meta)
    ran = {int(key) for key, count in fn.counts.items() if count}
    result = []
    for number in paths_shortest_first(numbering, ran, limit):
        result += decode_paths(fn.meta, {str(number): 0}, {}, numbering=numbering)
    return result
