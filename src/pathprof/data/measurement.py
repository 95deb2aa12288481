"""What a data file holds, in memory: the runs that measured it and the merged
profile of every function, with the source each was built from.

The data model the analyses and renderers take; :mod:`pathprof.data.store` reads
and writes it, so that a module which only looks at a measurement need not load
the SQLite file's code. Standard library only."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from pathprof.data.modules import Sources
from pathprof.data.profile import FunctionProfile

__all__ = ["Measurement", "RunInfo", "Selection", "source_conflicts"]


@dataclass
class RunInfo:
    """One measured run: when, what command line, which Python, which mode."""

    started: float
    argv: list[str]
    python: str
    mode: str
    metric: str | None
    pid: int
    hostname: str


@dataclass(frozen=True)
class Selection:
    """What a run measured, where it named it (``--source``, ``pytest --pathprof=...``,
    ``source`` in the configuration): its source entries (directories made whole,
    module names as given), and its include and omit patterns. A report of the data
    file counts the files under it that were never imported at 0%, as the run's own
    report did (:func:`pathprof.api.unmeasured_candidates`)."""

    source: tuple[str, ...]
    include: tuple[str, ...] = ()
    omit: tuple[str, ...] = ()

    def to_json(self) -> dict[str, list[str]]:
        return {"source": list(self.source), "include": list(self.include),
                "omit": list(self.omit)}

    @classmethod
    def from_json(cls, value: object) -> Selection:
        """The selection :meth:`to_json` wrote; ValueError for anything else (a data
        file is input: every entry a string, and not too many of them)."""
        if not isinstance(value, dict) or set(value) - {"source", "include", "omit"}:
            raise ValueError("not a selection")
        parts = []
        for key in ("source", "include", "omit"):
            entries = value.get(key, [])
            if not (isinstance(entries, list) and len(entries) <= 10_000
                    and all(isinstance(e, str) and 0 < len(e) <= 4096 for e in entries)):
                raise ValueError(f"a selection's {key} is not a list of names")
            parts.append(tuple(entries))
        if not parts[0]:
            raise ValueError("a selection names no source")
        return cls(*parts)


@dataclass
class Measurement:
    """What a data file holds, with measurements of one function merged."""

    runs: list[RunInfo] = field(default_factory=list)
    functions: list[FunctionProfile] = field(default_factory=list)
    #: the source text of each (file, source hash) measured, where the file held it
    sources: Sources = field(default_factory=Sources)
    #: what the runs measured, where they named it (in the order first recorded)
    selections: list[Selection] = field(default_factory=list)

    @property
    def mode(self) -> str:
        modes = {run.mode for run in self.runs}
        return modes.pop() if len(modes) == 1 else "mixed"


def source_conflicts(measurements: Iterable[Measurement]) -> list[tuple[str, str, int]]:
    """Functions measured from more than one version of their source:
    ``(file, qualname, number of versions)``. Their counts are kept apart, one
    entry per source hash, since path numbers of different CFGs do not add up."""
    hashes: dict[tuple[str, str], set[str]] = {}
    for measurement in measurements:
        for fn in measurement.functions:
            hashes.setdefault((fn.file, fn.qualname), set()).add(fn.source_hash)
    return [(file, qualname, len(h)) for (file, qualname), h in sorted(hashes.items())
            if len(h) > 1]
