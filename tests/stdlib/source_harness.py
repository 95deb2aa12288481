"""CPython's test suites against pathprof, judged by the oracle that knows no CFG.

:class:`tests.source_oracle.SourceOracle` derives every call's paths from the source
text and ``sys.settrace`` line events alone. Here it traces the run of a module's
CPython tests against the *uninstrumented* module; then the same tests run, untraced,
against the module instrumented as in production (no probe marks), and pathprof's
counts are compared with the oracle's. Both runs seed ``random`` alike, and the
suite is run once, unobserved, before both (one-time work such as caches filled by
the first test is not counted by one side only). A target whose tests do not
repeat exactly (they time things, or draw from their own random generators) sets
``shared_run``: the oracle then traces the instrumented run, one execution seen by
both sides.

Per function (file, qualified name, first line of its code object) the comparison
takes the number of path executions, and, where the oracle says line sequences
tell the function's paths apart, the multiset of path counts. Nothing here maps
pathprof's paths to lines: pathprof's side is its raw counters (one entry per path
number or per cut prefix), the oracle's side its own line paths.
"""

from __future__ import annotations

import gc
import importlib
import random
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pathprof import runtime

from ..loading import Loaded
from ..source_oracle import SourceOracle
from .harness import (
    InstrumentingFinder,
    Outcome,
    instrument_modules,
    isolated_modules,
    run_test_module,
    source_file,
    warm_up,
)

FunctionKey = tuple[str, str, int]

#: Both runs start the ``random`` module from this seed: tests that draw their data
#: from it (heapq's, bisect's) then run the same calls twice.
RANDOM_SEED = 1729


@dataclass(frozen=True)
class SourceTarget:
    """One stdlib module (or a few) and CPython's tests of it."""

    modules: tuple[str, ...]
    test_module: str
    #: module name prefixes imported afresh for the run (default: modules and tests)
    isolate: tuple[str, ...] = ()
    #: the tests to run (None: all of them)
    select: Callable[[Any], bool] | None = None
    #: trace the instrumented run instead of a plain one (tests that do not repeat)
    shared_run: bool = False
    #: (first Python version, why): from that version on, the target is not run
    skip_from: tuple[tuple[int, int], str] | None = None

    @property
    def prefixes(self) -> tuple[str, ...]:
        return self.isolate or (*self.modules, self.test_module)


@dataclass
class FunctionResult:
    key: FunctionKey
    recorded: list[int]  # pathprof: sorted path counts
    oracle: list[int]  # the oracle: sorted path counts
    distinguishable: bool
    unattributed: int = 0

    @property
    def executions(self) -> tuple[int, int]:
        return sum(self.recorded), sum(self.oracle)

    @property
    def agrees(self) -> bool:
        if self.unattributed:
            return False
        if self.distinguishable:
            return self.recorded == self.oracle
        return sum(self.recorded) == sum(self.oracle)


@dataclass
class SourceReport:
    target: SourceTarget
    plain: Outcome
    instrumented: Outcome
    functions: dict[FunctionKey, FunctionResult]
    #: what the oracle could not see: function (or None: the whole run) -> why
    not_compared: dict[FunctionKey | None, str] = field(default_factory=dict)

    @property
    def compared(self) -> list[FunctionResult]:
        return [r for key, r in self.functions.items() if key not in self.not_compared]

    @property
    def disagreements(self) -> list[FunctionResult]:
        if None in self.not_compared:
            return []
        return [r for r in self.compared if not r.agrees]

    def summary(self) -> str:
        ran = [r for r in self.compared if r.recorded or r.oracle]
        executions = sum(sum(r.oracle) for r in ran)
        whole = f"; NOT COMPARED: {self.not_compared[None]}" if None in self.not_compared else ""
        skipped = sum(1 for k in self.not_compared if k is not None)
        return (f"{self.target.test_module}: {len(ran)} functions ran, {executions:,} path "
                f"executions compared ({sum(1 for r in ran if r.distinguishable)} by path "
                f"counts), {len(self.disagreements)} disagree, {skipped} not compared"
                f"{whole}")


def run_against_oracle(target: SourceTarget) -> SourceReport:
    """Run the target's tests plain under the oracle, then instrumented; compare."""
    paths = {name: source_file(name) for name in target.modules}
    importlib.import_module(target.test_module)  # fail here if it cannot import at all
    oracle = SourceOracle([str(p) for p in paths.values()])
    warm_up(target.test_module, target.prefixes, target.select)
    recorded: dict[FunctionKey, tuple[Counter[Any], int]] = {}

    def run_tests(loadeds: dict[str, Loaded] | None = None, since: int = 0) -> Outcome:
        random.seed(RANDOM_SEED)
        outcome = run_test_module(target.test_module, target.select)
        gc.collect()  # finalizers (a __del__ that closes a file) run inside the run
        if loadeds is not None:
            # pathprof's counts are read at the same moment the oracle stops watching.
            recorded.update(_recorded(list(loadeds.values()), since))
        return outcome

    # The copies of the modules imported before the run, which other modules still
    # use: pathprof measures the copies the tests import afresh, and so does the oracle.
    oracle.ignore(importlib.import_module(name) for name in target.modules)
    with isolated_modules(target.prefixes):
        plain = run_tests() if target.shared_run else oracle.run(run_tests)
    with isolated_modules(target.prefixes):
        loadeds = instrument_modules(paths, mark_probes=False)
        since = len(runtime.modules())
        runtime.take_snapshot()  # nothing counted before this run is read
        with InstrumentingFinder(loadeds).installed():
            if target.shared_run:
                instrumented = oracle.run(lambda: run_tests(loadeds, since))
            else:
                instrumented = run_tests(loadeds, since)
    functions: dict[FunctionKey, FunctionResult] = {}
    for key, (counts, unattributed) in recorded.items():
        functions[key] = FunctionResult(key, sorted(counts.values()),
                                        sorted(oracle.paths.get(key, Counter()).values()),
                                        oracle.distinguishable(key), unattributed)
    for key, seen in oracle.paths.items():
        if key not in functions and +seen:
            # The oracle saw a function pathprof has no counters for.
            functions[key] = FunctionResult(key, [], sorted(seen.values()),
                                            oracle.distinguishable(key))
    return SourceReport(target, plain, instrumented, functions, dict(oracle.not_compared))


def _recorded(loadeds: list[Loaded], since: int) -> dict[FunctionKey, tuple[Counter[Any], int]]:
    """pathprof's counts per function: path number or cut prefix -> count, summed over
    every execution of each module (fresh imports run the same code again), and the
    exceptions the runtime could not place."""
    snapshot = runtime.take_snapshot()[since:]
    result: dict[FunctionKey, tuple[Counter[Any], int]] = {}
    for loaded in loadeds:
        file = loaded.module.__file__
        metas = loaded.metadata.functions
        for entry in snapshot:
            if entry[0].key != loaded.metadata.key:
                continue
            _state, paths, cuts, _raised, unattributed = entry[:5]
            for i, meta in enumerate(metas):
                key = (file, meta.qualname, meta.code_line)
                counts, lost = result.get(key, (Counter(), 0))
                counts.update({("path", k): v for k, v in paths[i].items() if v})
                counts.update({("cut", k): v for k, v in cuts[i].items() if v})
                result[key] = (counts, lost + unattributed[i])
    return result


def describe(report: SourceReport, limit: int = 20) -> str:
    """The disagreements, for an assertion message."""
    lines = [report.summary()]
    for r in report.disagreements[:limit]:
        lines.append(f"  {r.key[1]} (line {r.key[2]}): pathprof {r.executions[0]} executions "
                     f"{r.recorded[:12]}, oracle {r.executions[1]} {r.oracle[:12]}"
                     + (f", {r.unattributed} unattributed" if r.unattributed else ""))
    return "\n".join(lines)


def python_version() -> str:
    return f"{sys.version_info[0]}.{sys.version_info[1]}"
