"""Which copy of a parallel run profiles which paths (P3, Afraz et al. 2015, §3.2).

The program is what the run's selection names (``--source``, ``--include``,
``--omit``): every such source file is read before the copies start and each of
its functions numbered as the instrumentation numbers it. Python has no exact
static call graph; ``caller_count`` is the number of call sites, in the planned
files, that call the function's name (``f(...)`` or ``x.f(...)``). As in the
paper, a function with at most one such site has its paths split into tasks by
:func:`~pathprof.graph.find_partition` (P3's profitable procedures, instrumented
by PSPP in the copies that hold some of its tasks); every other function is one
task, profiled whole by Ball-Larus in one copy. The count is a heuristic of cost
only (a function called through a variable may run often): any split is exact.
A split whose probes would need a place the code does not have (an edge with no
site, :class:`~pathprof.python.cfg.SiteKind`) is not made. Tasks are dealt to the
copies largest probe count first onto the least-loaded copy
(:func:`pathprof.graph.p3.plan_program`).

Invariant: every path of every planned function has exactly one owner copy; the
plan depends only on the files' contents and ``copies``, so every copy that reads
it agrees.
"""

from __future__ import annotations

import ast
import json
import os
import warnings
from collections import Counter
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypedDict, cast

from pathprof.data.profile import FunctionProfile
from pathprof.graph import (
    Dag,
    EdgeKind,
    Plan,
    ProbeOp,
    ProbePlan,
    Task,
    number_paths,
    plan_probes,
    plan_program,
    regenerate,
    to_dag,
)
from pathprof.graph.copyplan import CopyShare
from pathprof.graph.partition import whole_task
from pathprof.hashing import source_hash
from pathprof.measure.partial import PLAN_FORMAT
from pathprof.python.cfg import build_cfg, iter_functions
from pathprof.python.plan import plan_function, share_feasible, writable_path_count

if TYPE_CHECKING:
    from pathprof.python.cfgtypes import FunctionCfg

__all__ = ["CopiesPlan", "plan_copies"]


class _Split(TypedDict):
    """The owner of a function split among copies: its tasks' DAG edges, and each
    task's copy."""

    tasks: list[list[int]]
    copies: list[int]


@dataclass(frozen=True)
class CopiesPlan:
    """The owner of every planned function, and what each copy carries."""

    copies: int
    #: source hash -> per function (by index): the copy that profiles it whole, or
    #: ``{"tasks": [[dag edge, ...], ...], "copies": [...]}`` for one split among copies
    owners: dict[str, tuple[int | _Split, ...]]
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

    def split(self) -> int:
        """Functions whose paths the copies split."""
        return sum(isinstance(o, dict) for owners in self.owners.values() for o in owners)


def _functions(source: bytes, filename: str
               ) -> tuple[ast.Module, list[tuple[FunctionCfg, Dag]]] | None:
    """A file's tree and its functions' CFGs and DAGs in instrumentation order, or
    None when the file does not parse (it is then not planned: copy 0 profiles it,
    if it runs)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarnings are the program's to show
            tree = ast.parse(source, filename)
        functions = []
        for node, qualname in iter_functions(tree):
            cfg = build_cfg(node, qualname)
            dag = to_dag(cfg.to_graph())
            if writable_path_count(number_paths(dag).total):  # (else left unmeasured,
                functions.append((cfg, dag))                 # as the instrumenter does)
        return tree, functions
    except (SyntaxError, ValueError, RecursionError):
        return None


def call_sites(trees: Iterable[ast.Module]) -> Counter[str]:
    """Calls by the name they call (``f(...)``, ``x.f(...)``), over all planned files:
    the static ``caller_count`` this plan uses (see the module docstring)."""
    sites: Counter[str] = Counter()
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                if isinstance(node.func, ast.Name):
                    sites[node.func.id] += 1
                elif isinstance(node.func, ast.Attribute):
                    sites[node.func.attr] += 1
    return sites


def plan_copies(files: Iterable[str], copies: int, *, partition: bool = True,
                profile: Iterable[FunctionProfile] | None = None) -> CopiesPlan:
    """Plan a parallel run of ``copies`` copies over the source ``files``. With
    ``partition``, a function called from at most one place has its paths split
    among the copies where that pays (P3's profitable procedures); every other
    function is profiled whole by one copy.

    With ``profile`` (the functions of an earlier run's data file on the same
    input), the plan goes beyond the paper: a task costs the probes its paths ran
    in that run, not its static probe count, and the functions split are the ones
    whose measured probes exceed a copy's fair share (``1/copies`` of the total),
    whatever their call sites."""
    if copies < 1:
        raise ValueError(f"copies must be at least 1, not {copies}")
    dags: dict[tuple[str, int], Dag] = {}
    cfgs: dict[tuple[str, int], FunctionCfg] = {}
    names: dict[str, str] = {}
    counts: dict[str, int] = {}
    trees = []
    qualnames: dict[tuple[str, int], str] = {}
    for path in files:
        try:
            with open(path, "rb") as f:
                source = f.read()
        except OSError:
            continue
        digest = source_hash(source)
        parsed = None if digest in counts else _functions(source, path)
        if parsed is None:
            continue
        tree, functions = parsed
        trees.append(tree)
        counts[digest] = len(functions)
        names[digest] = os.path.abspath(path)
        for index, (cfg, dag) in enumerate(functions):
            dags[(digest, index)] = dag
            cfgs[(digest, index)] = cfg
            qualnames[(digest, index)] = cfg.qualname
    sites = call_sites(trees)
    callers = {p: (sites[qualnames[p].rsplit(".", 1)[-1]] if partition else 2) for p in dags}
    cost = None
    if profile is not None:
        runs = _measured_paths(profile, names, dags, cfgs)
        cost = _measured_cost(runs, cfgs)
        total = sum(cost(p, whole_task(dags[p])) for p in dags)
        for p in dags:  # split what would outweigh a copy's share, keep the rest whole
            hot = cost(p, whole_task(dags[p])) * copies > total
            callers[p] = 1 if (partition and hot) else 2
    while True:
        plan = plan_program(cast("dict[Hashable, Dag]", dags),
                            cast("dict[Hashable, int]", callers), copies, cost=cost)
        infeasible = [p for p in dags if len(plan.tasks_of(p)) > 1
                      and not _feasible(plan, p, cfgs[p])]
        if not infeasible:
            break
        for procedure in infeasible:  # a probe would need a place the code lacks
            callers[procedure] = 2
    owners: dict[str, list[int | _Split]] = {digest: [0] * n for digest, n in counts.items()}
    for (digest, index) in dags:
        planned = plan.tasks_of((digest, index))
        if len(planned) == 1:
            owners[digest][index] = planned[0].copy
        else:
            owners[digest][index] = {"tasks": [sorted(t.task.edges) for t in planned],
                                     "copies": [t.copy for t in planned]}
    return CopiesPlan(copies, {d: tuple(o) for d, o in owners.items()}, names,
                      tuple(plan.loads))


def _ops(plan: ProbePlan, edges: Iterable[int]) -> int:
    """Probe operations along ``edges`` (a SET 0 on a normal edge emits nothing)."""
    ops = 0
    for eid in edges:
        probe = plan.probes.get(eid)
        if probe is None:
            continue
        if (probe.op is ProbeOp.SET and probe.value == 0
                and plan.dag.edges[eid].kind is EdgeKind.NORMAL):
            continue
        ops += 1
    return ops


def _measured_paths(profile: Iterable[FunctionProfile], names: dict[str, str],
                    dags: dict[tuple[str, int], Dag], cfgs: dict[tuple[str, int], FunctionCfg]
                    ) -> dict[tuple[str, int], list[tuple[frozenset[int], int]]]:
    """Per planned function: the edge sets of the paths an earlier run ran, with
    their counts (functions matched by source hash, name and line)."""
    by_name: dict[tuple[str, str, int], tuple[str, int]] = {}
    for (digest, index), cfg in cfgs.items():
        by_name[(digest, cfg.qualname, cfg.node.lineno)] = (digest, index)
        decorated = getattr(cfg.node, "decorator_list", None)
        if decorated:
            by_name[(digest, cfg.qualname, decorated[0].lineno)] = (digest, index)
    runs: dict[tuple[str, int], list[tuple[frozenset[int], int]]] = {}
    for fn in profile:
        procedure = by_name.get((fn.source_hash, fn.qualname, fn.first_line))
        if procedure is None or procedure[0] not in names:
            continue
        numbering = number_paths(dags[procedure])
        runs[procedure] = [(frozenset(regenerate(numbering, number).edges), count)
                           for number, count in fn.counts.items()]
    return runs


def _measured_cost(runs: dict[tuple[str, int], list[tuple[frozenset[int], int]]],
                   cfgs: dict[tuple[str, int], FunctionCfg]
                   ) -> Callable[[Hashable, Task], int]:
    """``cost(procedure, task)``: Ball-Larus probes the task's paths ran."""
    plans: dict[tuple[str, int], ProbePlan] = {}

    def cost(procedure: Hashable, task: Task) -> int:
        key = cast("tuple[str, int]", procedure)  # (digest, index)
        if key not in plans:
            plans[key] = plan_function(cfgs[key], key[1]).plan
        plan = plans[key]
        return sum(count * _ops(plan, edges) for edges, count in runs.get(key, ())
                   if edges <= task.edges)

    return cost


def _feasible(plan: Plan, procedure: Hashable, cfg: FunctionCfg) -> bool:
    """Whether every copy's share of a split function can be instrumented."""
    planned = plan.tasks_of(procedure)
    numbering = number_paths(plan.dags[procedure])
    tasks = tuple(t.task.edges for t in planned)
    holders = tuple(t.copy for t in planned)
    for copy in set(holders):
        share = CopyShare(numbering, tasks, holders, copy)
        if not share.whole and not share_feasible(cfg, plan_probes(share.placement())):
            return False
    return True
