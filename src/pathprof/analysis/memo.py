"""What earlier reports derived, kept by what it was derived from, so that a report
derives nothing twice (issue 51: reports that cost what they print).

Path coverage (:mod:`pathprof.analysis.pathcoverage`) spends most of its time on
three things per function version, each a pure function of data a report can name
exactly:

- what the exclusion rules take out of a module's source
  (:func:`~pathprof.analysis.exclusions.exclusions_of`, which parses it): a function
  of the source (its hash) and the rules;
- a function's path space -- paths possible and the dimension of the space they span
  (:func:`~pathprof.analysis.pathspace.path_space`, which rebuilds its Ball-Larus
  numbering): a function of its contract alone when nothing of it is excluded;
- the rank of the paths that ran (:func:`~pathprof.analysis.basis.basis_rank`): a
  function of the contract and of the set of path numbers.

An :class:`AnalysisMemo` holds those results for one module version under one set
of rules, as plain data (:meth:`AnalysisMemo.document`), so that a report can keep
it and hand it to the next one (:class:`pathprof.api.Reporting` keeps it in the
cache directory). A document read back is input: :meth:`AnalysisMemo.from_document`
checks every field's type and range and refuses the whole document otherwise.

Invariant: a value found in a memo is the value the computation it stands for gives
for the same key: keys name everything the value depends on (the contract by its
digest, the paths by the digest of their sorted numbers), and a memo is only
filled by :mod:`pathprof.analysis.pathcoverage` from what it computed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

from pathprof.analysis.exclusions import ExcludedSource, ExclusionRules
from pathprof.contract import Span

__all__ = ["ANALYSES_VERSION", "AnalysisMemo", "paths_key", "rules_key"]

#: The layout of a memo's document; a document of another version is not read.
ANALYSES_VERSION = 1
#: How many sets of paths run a function's ranks are kept for (the latest first): a
#: suite's runs mostly repeat one set, and a changed test changes a few functions'.
RANKS_KEPT = 4
#: The most functions, spans and excluded functions one document may hold.
MOST = 100_000


def rules_key(rules: ExclusionRules) -> str:
    """What names the exclusion rules in a memo's key."""
    text = "\x00".join((*rules.patterns, "\x01", *rules.kinds))
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:32]


def paths_key(numbers: Iterable[int]) -> str:
    """What names a set of path numbers (sorted: the set, not the order)."""
    text = ",".join(str(number) for number in sorted(numbers))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


class AnalysisMemo:
    """The analyses of one module version (``file``, ``source_hash``) under one set of
    rules: its exclusions, and per function (by its contract's digest) its paths
    possible, dimension and the ranks of the sets of paths that ran."""

    __slots__ = ("_excluded", "_functions", "changed", "file", "rules", "source_hash")

    def __init__(self, file: str, source_hash: str, rules: str) -> None:
        self.file = file
        self.source_hash = source_hash
        self.rules = rules
        self._excluded: ExcludedSource | None = None
        #: function key -> [possible, dimension, [[paths key, rank], ...]]
        self._functions: dict[str, list[Any]] = {}
        #: something was kept since the memo was made or read
        self.changed = False

    # -- exclusions ---------------------------------------------------------------

    def excluded(self) -> ExcludedSource | None:
        """What the rules exclude from the source (a copy), if kept."""
        found = self._excluded
        if found is None:
            return None
        return ExcludedSource(list(found.spans), dict(found.functions))

    def keep_excluded(self, found: ExcludedSource) -> None:
        self._excluded = ExcludedSource(list(found.spans), dict(found.functions))
        self.changed = True

    # -- path spaces and ranks ------------------------------------------------------

    def space(self, function: str) -> tuple[int, int] | None:
        """``(paths possible, dimension)`` of the function with nothing excluded."""
        entry = self._functions.get(function)
        return None if entry is None else (entry[0], entry[1])

    def keep_space(self, function: str, possible: int, dimension: int) -> None:
        entry = self._functions.get(function)
        if entry is None or (entry[0], entry[1]) != (possible, dimension):
            self._functions[function] = [possible, dimension, []]
            self.changed = True

    def rank(self, function: str, paths: str) -> int | None:
        """The rank of the set of paths named ``paths`` (:func:`paths_key`)."""
        entry = self._functions.get(function)
        if entry is None:
            return None
        return next((rank for key, rank in entry[2] if key == paths), None)

    def keep_rank(self, function: str, paths: str, rank: int) -> None:
        entry = self._functions.get(function)
        if entry is None:  # (a rank is kept after its space)
            return
        ranks = [pair for pair in entry[2] if pair[0] != paths]
        entry[2] = [[paths, rank], *ranks][:RANKS_KEPT]
        self.changed = True

    # -- as plain data --------------------------------------------------------------

    def document(self) -> dict[str, Any]:
        """The memo as JSON-ready data."""
        found = self._excluded
        return {
            "version": ANALYSES_VERSION,
            "file": self.file,
            "source_hash": self.source_hash,
            "rules": self.rules,
            "excluded": None if found is None else {
                "spans": [list(span) for span in found.spans],
                "functions": [[line, reason] for line, reason in found.functions.items()]},
            "functions": {key: [possible, dimension, [list(pair) for pair in ranks]]
                          for key, (possible, dimension, ranks) in self._functions.items()},
        }

    @classmethod
    def from_document(cls, document: Any, file: str, source_hash: str, rules: str
                      ) -> AnalysisMemo | None:
        """The memo ``document`` holds, if it is one of this version for ``file``,
        ``source_hash`` and ``rules`` and every field is well formed; else None."""
        if not (type(document) is dict and document.get("version") == ANALYSES_VERSION
                and document.get("file") == file
                and document.get("source_hash") == source_hash
                and document.get("rules") == rules):
            return None
        memo = cls(file, source_hash, rules)
        excluded = document.get("excluded")
        if excluded is not None:
            found = _excluded_of(excluded)
            if found is None:
                return None
            memo._excluded = found
        functions = document.get("functions")
        if type(functions) is not dict or len(functions) > MOST:
            return None
        for key, entry in functions.items():
            checked = _function_entry(entry)
            if type(key) is not str or len(key) > 200 or checked is None:
                return None
            memo._functions[key] = checked
        return memo


def _is_count(value: Any) -> bool:
    return type(value) is int and value >= 0


def _excluded_of(data: Any) -> ExcludedSource | None:
    if type(data) is not dict:
        return None
    spans, functions = data.get("spans"), data.get("functions")
    if (type(spans) is not list or type(functions) is not list
            or len(spans) > MOST or len(functions) > MOST):
        return None
    found = ExcludedSource()
    for span in spans:
        if not (type(span) is list and len(span) == 4 and all(_is_count(v) for v in span)):
            return None
        found.spans.append(Span(*span))
    if found.spans != sorted(found.spans):
        return None
    for pair in functions:
        if not (type(pair) is list and len(pair) == 2 and _is_count(pair[0])
                and type(pair[1]) is str and len(pair[1]) <= 200):
            return None
        found.functions[pair[0]] = pair[1]
    return found


def _function_entry(entry: Any) -> list[Any] | None:
    if not (type(entry) is list and len(entry) == 3 and _is_count(entry[0])
            and _is_count(entry[1]) and type(entry[2]) is list
            and len(entry[2]) <= RANKS_KEPT):
        return None
    possible, dimension, ranks = entry
    if dimension > possible:  # (N paths span a space of N dimensions at most)
        return None
    for pair in ranks:
        if not (type(pair) is list and len(pair) == 2 and type(pair[0]) is str
                and len(pair[0]) <= 64 and _is_count(pair[1]) and pair[1] <= dimension):
            return None
    return [possible, dimension, [list(pair) for pair in ranks]]
