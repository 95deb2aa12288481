"""Which copy of a parallel run profiles which function (P3, Afraz et al. 2015, §3.2).

The program is what the run's selection names (``--source``, ``--include``,
``--omit``): every such source file is read before the copies start, each of its
functions numbered as the instrumentation numbers it, and the tasks of
:func:`pathprof.graph.p3.plan_program` dealt to the copies largest-cost-first (the
cost of a task is its probe count, :func:`pathprof.graph.partition.ball_larus_cost`).
Python has no static call graph to
ask for ``caller_count``; this plan gives every function a task of its own,
profiled whole by one copy with Ball-Larus (the paper's "parallel Ball-Larus"
baseline); splitting one function's paths between copies with PSPP is not yet
instrumented.

Invariant: every function of every planned file has exactly one owner, a copy
index in ``0 .. copies - 1``; the plan depends only on the files' contents and
``copies``, so every copy that reads it agrees.
"""

from __future__ import annotations

import ast
import json
import os
import warnings
from collections.abc import Iterable
from dataclasses import dataclass

from pathprof.graph import plan_program, to_dag
from pathprof.graph.p3 import Kind
from pathprof.measure.partial import PLAN_FORMAT
from pathprof.python.cfg import build_cfg, iter_functions
from pathprof.python.instrument import source_hash

__all__ = ["CopiesPlan", "plan_copies"]


@dataclass(frozen=True)
class CopiesPlan:
    """The owner of every planned function, and what each copy carries."""

    copies: int
    #: source hash -> the copy that profiles each function, by function index
    owners: dict[str, tuple[int, ...]]
    #: source hash -> the file it was read from (for ``pathprof plan`` and messages)
    files: dict[str, str]
    #: per copy, the probes of the functions it profiles (the paper's load)
    loads: tuple[int, ...]

    def to_json(self) -> dict[str, object]:
        return {"format": PLAN_FORMAT, "copies": self.copies,
                "owners": {digest: list(owners) for digest, owners in self.owners.items()},
                "files": self.files, "loads": list(self.loads)}

    def write(self, path: str) -> None:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(self.to_json(), f)

    def functions_of(self, copy: int) -> int:
        return sum(owner == copy for owners in self.owners.values() for owner in owners)


def _functions(source: bytes, filename: str) -> list[object] | None:
    """The DAGs of a file's functions in instrumentation order, or None when the
    file does not parse (it is then not planned: copy 0 profiles it, if it runs)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarnings are the program's to show
            tree = ast.parse(source, filename)
        return [to_dag(build_cfg(node, qualname).to_graph())
                for node, qualname in iter_functions(tree)]
    except (SyntaxError, ValueError, RecursionError):
        return None


def plan_copies(files: Iterable[str], copies: int) -> CopiesPlan:
    """Plan a parallel run of ``copies`` copies over the source ``files``."""
    if copies < 1:
        raise ValueError(f"copies must be at least 1, not {copies}")
    dags: dict[tuple[str, int], object] = {}
    counts: dict[str, int] = {}
    names: dict[str, str] = {}
    for path in files:
        try:
            with open(path, "rb") as f:
                source = f.read()
        except OSError:
            continue
        digest = source_hash(source)
        functions = _functions(source, path)
        if functions is None or digest in counts:
            continue
        counts[digest] = len(functions)
        names[digest] = os.path.abspath(path)
        for index, dag in enumerate(functions):
            dags[(digest, index)] = dag
    # Every function its own whole task (see the module docstring): a caller count
    # above one keeps plan_program from splitting a function's paths.
    plan = plan_program(dags, {procedure: 2 for procedure in dags}, copies)  # type: ignore[arg-type]
    owners: dict[str, list[int]] = {digest: [0] * n for digest, n in counts.items()}
    for copy, procedures in enumerate(plan.instrumentation):
        for (digest, index), instrumentation in procedures.items():
            if instrumentation.kind is Kind.ALL:
                owners[digest][index] = copy
    return CopiesPlan(copies, {d: tuple(o) for d, o in owners.items()}, names,
                      tuple(plan.loads))
