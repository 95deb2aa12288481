"""Differences between two path profiles: paths that appeared, vanished or changed.

A regression signal for CI (``pathprof diff OLD NEW``): a path that never ran
before and runs now, one that stopped running, or one whose count moved by more
than a threshold. Functions are matched by file and qualified name. When the
source is unchanged (same hash) paths are matched by their Ball-Larus number;
when it changed, path numbers mean nothing across versions, so paths are matched
by *shape*: how they start and end and, per block, the line offset from the
``def`` and the branch taken — an edit elsewhere in the file does not break it.

Invariant: every path with a non-zero count in OLD or NEW of a matched function
is in exactly one of ``appeared``, ``vanished``, ``changed`` or ``unchanged``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from pathprof.analysis.decisions import decisions
from pathprof.data.measurement import Measurement
from pathprof.data.profile import FunctionProfile, Path, merge

__all__ = ["FunctionDiff", "PathChange", "ProfileDiff", "diff_profiles"]


@dataclass(frozen=True)
class PathChange:
    """One path's counts in the old and the new profile (0 where it did not run)."""

    path: Path  #: as decoded from the new profile (the old one for a vanished path)
    old: int
    new: int

    @property
    def relative(self) -> float:
        """``(new - old) / old``; infinite for a path that appeared."""
        return (self.new - self.old) / self.old if self.old else float("inf")


@dataclass
class FunctionDiff:
    file: str
    qualname: str
    #: the ``def`` line (as in the JSON report; a decorated function's profile is
    #: keyed by its first decorator's line)
    first_line: int
    source_changed: bool
    profile: FunctionProfile  #: the new profile (the old one if the function vanished)
    appeared: list[PathChange] = field(default_factory=list)
    vanished: list[PathChange] = field(default_factory=list)
    changed: list[PathChange] = field(default_factory=list)
    unchanged: int = 0

    @property
    def differs(self) -> bool:
        return bool(self.appeared or self.vanished or self.changed)


@dataclass
class ProfileDiff:
    functions: list[FunctionDiff]
    new_functions: list[FunctionProfile]  #: measured only in NEW
    gone_functions: list[FunctionProfile]  #: measured only in OLD
    threshold: float

    @property
    def differs(self) -> bool:
        return (any(f.differs for f in self.functions) or bool(self.new_functions)
                or bool(self.gone_functions))


def _shape(fn: FunctionProfile, path: Path) -> tuple[object, ...]:
    taken = {d["block"]: d["taken"] for d in decisions(fn, path)}
    steps = tuple(((span[0] - fn.first_line) if (span := fn.block_lines(b)) else None,
                   taken.get(b)) for b in path.blocks)
    return (path.start, path.end, steps)


def _by_function(measurement: Measurement) -> dict[tuple[str, str], FunctionProfile]:
    """One profile per (file, qualname); versions of one function merged by hash first."""
    result: dict[tuple[str, str], FunctionProfile] = {}
    for fn in merge(measurement.functions):
        key = (os.path.normcase(fn.file), fn.qualname)
        if key not in result or fn.total > result[key].total:
            result[key] = fn  # of several source versions, the most executed one
    return result


def _diff_function(old: FunctionProfile, new: FunctionProfile, threshold: float,
                   min_count: int) -> FunctionDiff:
    same_source = old.source_hash == new.source_hash

    def keyed(fn: FunctionProfile) -> dict[object, Path]:
        return {(p.id if same_source else _shape(fn, p)): p for p in fn.paths if p.count}

    before, after = keyed(old), keyed(new)
    result = FunctionDiff(new.file, new.qualname, new.meta.first_line, not same_source, new)
    for key, path in after.items():
        if key not in before:
            if path.count >= min_count:
                result.appeared.append(PathChange(path, 0, path.count))
            else:
                result.unchanged += 1
            continue
        change = PathChange(path, before[key].count, path.count)
        if (abs(change.relative) > threshold
                and max(change.old, change.new) >= min_count):
            result.changed.append(change)
        else:
            result.unchanged += 1
    for key, path in before.items():
        if key not in after:
            if path.count >= min_count:
                result.vanished.append(PathChange(path, path.count, 0))
            else:
                result.unchanged += 1
    result.appeared.sort(key=lambda c: -c.new)
    result.vanished.sort(key=lambda c: -c.old)
    result.changed.sort(key=lambda c: -abs(c.new - c.old))
    return result


def diff_profiles(old: Measurement, new: Measurement, *, threshold: float = 0.1,
                  min_count: int = 1) -> ProfileDiff:
    """Compare two measurements. A path common to both is *changed* when its count
    moved by more than ``threshold`` (a fraction of the old count); paths whose
    counts stay below ``min_count`` in both are ignored."""
    if threshold < 0:
        raise ValueError("threshold must not be negative")
    before, after = _by_function(old), _by_function(new)
    functions = [_diff_function(before[key], after[key], threshold, min_count)
                 for key in sorted(after) if key in before]
    new_functions = [after[key] for key in sorted(after) if key not in before
                     and after[key].total]
    gone = [before[key] for key in sorted(before) if key not in after and before[key].total]
    return ProfileDiff(functions, new_functions, gone, threshold)
