"""P3's plan of a program: the tasks of all procedures dealt to K copies, and who
owns each path when the copies' profiles are added.

Afraz, Saha and Kanade, "P3: Partitioned Path Profiling", ESEC/FSE 2015, §3.2
(Algorithm 2, lines 3-21) with the threshold of §4.1. Invariant: for every
procedure, every ENTRY -> EXIT path has exactly one owner, a copy whose
instrumentation profiles it exactly (:func:`owner`); a copy may count paths it
does not own (the union of its tasks' edges can hold other copies' paths), and
the merge keeps only the owner's count (see :mod:`pathprof.graph.partition`).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Collection, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

from pathprof.graph.cfg import Dag
from pathprof.graph.partition import Task, find_partition, whole_task
from pathprof.types import DagEdgeId

__all__ = ["Instrumentation", "Kind", "Plan", "PlannedTask", "assign", "owner", "plan_program",
           "threshold"]


def threshold(dag: Dag, copies: int) -> int:
    """``Δ`` for one procedure: the larger of ENTRY's out-degree and the number of
    copies (§4.1)."""
    return max(len(dag.out_edges[dag.entry]), copies)


def assign(costs: Sequence[int], copies: int) -> tuple[int, ...]:
    """Deal tasks to copies, largest cost first onto the least-loaded copy (§3.2,
    lines 12-16; Graham's LPT rule, ref. [15]).

    Equal costs keep their input order; equal loads go to the lowest copy index.

    Returns
    -------
    tuple of int
        The copy of each task, in input order. Invariant (Graham 1969): the
        largest load is at most ``4/3 - 1/(3 * copies)`` times the optimum.

    Examples
    --------
    The paper's Example 5: costs 1, 1, 3 and 7 on two copies.

    >>> assign([1, 1, 3, 7], 2)
    (1, 1, 1, 0)
    """
    if copies < 1:
        raise ValueError(f"at least one copy is needed, not {copies}")
    loads = [0] * copies
    result = [0] * len(costs)
    for index in sorted(range(len(costs)), key=lambda i: (-costs[i], i)):
        copy = min(range(copies), key=lambda c: (loads[c], c))
        result[index] = copy
        loads[copy] += costs[index]
    return tuple(result)


class Kind(enum.Enum):
    """How a copy instruments one procedure (§3.2, lines 17-21)."""

    ALL = "ball-larus"  #: every path: Ball-Larus profiling
    NONE = "none"  #: no path: no probes
    PSPP = "pspp"  #: the paths inside ``edges``: PSPP labeling


@dataclass(frozen=True)
class Instrumentation:
    """What one copy profiles of one procedure: a kind and its interesting edges.

    ``edges`` is ``E_P``, the union of the edges of the copy's tasks of the
    procedure (all dag edges for ALL, none for NONE). The copy counts exactly the
    paths inside ``edges``; with PSPP, ``pspp(dag, edges)`` labels them.
    """

    kind: Kind
    edges: frozenset[DagEdgeId]


@dataclass(frozen=True)
class PlannedTask:
    """A task of a procedure and the copy it was dealt to."""

    procedure: Hashable
    task: Task
    copy: int


@dataclass(frozen=True)
class Plan:
    """The output of :func:`plan_program`.

    Attributes
    ----------
    copies : int
        ``K``.
    dags : dict
        Procedure -> its DAG.
    tasks : tuple of PlannedTask
        All tasks, in creation order (procedures in the order given, each
        procedure's tasks in :func:`find_partition` order).
    loads : tuple of int
        Per copy, the sum of its tasks' costs.
    instrumentation : tuple of dict
        Per copy, procedure -> :class:`Instrumentation`.
    """

    copies: int
    dags: Mapping[Hashable, Dag]
    tasks: tuple[PlannedTask, ...]
    loads: tuple[int, ...]
    instrumentation: tuple[Mapping[Hashable, Instrumentation], ...]

    @cached_property
    def _by_procedure(self) -> Mapping[Hashable, tuple[PlannedTask, ...]]:
        grouped: dict[Hashable, list[PlannedTask]] = {p: [] for p in self.dags}
        for planned in self.tasks:
            grouped[planned.procedure].append(planned)
        return {p: tuple(ts) for p, ts in grouped.items()}

    def tasks_of(self, procedure: Hashable) -> tuple[PlannedTask, ...]:
        """The tasks of one procedure."""
        return self._by_procedure[procedure]

    @property
    def profitable(self) -> frozenset[Hashable]:
        """Procedures split into more than one task."""
        return frozenset(p for p, ts in self._by_procedure.items() if len(ts) > 1)


def plan_program(
    dags: Mapping[Hashable, Dag],
    caller_count: Mapping[Hashable, int],
    copies: int,
    *,
    delta: int | None = None,
    cost: Callable[[Hashable, Task], int] | None = None,
) -> Plan:
    """Plan P3 for a program (§3.2, Algorithm 2, lines 1-22).

    A procedure with more than one call site is one whole task, profiled by
    Ball-Larus (lines 7-9); any other is split by :func:`find_partition` with
    ``Δ = threshold(dag, copies)`` (§4.1) or the given ``delta``. Tasks are dealt
    by :func:`assign`. Each copy then profiles, per procedure, the paths inside the
    union ``E_P`` of its tasks' edges: Ball-Larus when ``E_P`` is every edge, nothing
    when it is empty, PSPP on ``E_P`` otherwise (lines 17-21). A copy's load is the
    sum of its tasks' costs (line 15; the paper's prose calls it the number of
    edges in ``C_i.E``, which the algorithm does not use).

    Parameters
    ----------
    dags : mapping
        Procedure -> its DAG.
    caller_count : mapping
        Procedure -> number of call sites; every procedure of ``dags`` must have one.
    copies : int
        ``K``, at least 1.
    delta : int, optional
        Overrides the threshold of every procedure.
    cost : callable, optional
        ``cost(procedure, task)`` replaces the static probe count as the task's cost
        in the dealing and the loads: for instance the probes the task's paths ran
        in a measured profile (beyond the paper, which deals static counts).

    Returns
    -------
    Plan
        Invariant: every path of every procedure has exactly one :func:`owner`,
        whose copy profiles it.

    Raises
    ------
    ValueError
        If ``copies`` or ``delta`` is below 1, or a procedure has no caller count.
    """
    if copies < 1:
        raise ValueError(f"at least one copy is needed, not {copies}")
    if delta is not None and delta < 1:  # (whether or not a procedure is split)
        raise ValueError(f"the threshold must be at least 1, not {delta}")
    missing = [p for p in dags if p not in caller_count]
    if missing:
        raise ValueError(f"no caller count for procedures {missing!r}")
    created: list[tuple[Hashable, Task]] = []
    for procedure, dag in dags.items():
        if caller_count[procedure] > 1:
            created.append((procedure, whole_task(dag)))
            continue
        limit = threshold(dag, copies) if delta is None else delta
        created.extend((procedure, task) for task in find_partition(dag, limit))
    costs = [task.cost if cost is None else cost(p, task) for p, task in created]
    copy_of = assign(costs, copies)
    planned = tuple(
        PlannedTask(procedure=p, task=t, copy=c) for (p, t), c in zip(created, copy_of, strict=True)
    )
    loads = [0] * copies
    for item, value in zip(planned, costs, strict=True):
        loads[item.copy] += value
    instrumentation = tuple(
        {p: _instrumentation(dag, planned, p, copy) for p, dag in dags.items()}
        for copy in range(copies)
    )
    return Plan(
        copies=copies,
        dags=dict(dags),
        tasks=planned,
        loads=tuple(loads),
        instrumentation=instrumentation,
    )


def _instrumentation(
    dag: Dag, planned: Iterable[PlannedTask], procedure: Hashable, copy: int
) -> Instrumentation:
    edges: frozenset[DagEdgeId] = frozenset().union(
        *(t.task.edges for t in planned if t.procedure == procedure and t.copy == copy)
    )
    if not edges:
        return Instrumentation(Kind.NONE, edges)
    if len(edges) == len(dag.edges):
        return Instrumentation(Kind.ALL, edges)
    return Instrumentation(Kind.PSPP, edges)


def owner(plan: Plan, procedure: Hashable, path_edges: Collection[DagEdgeId]) -> int:
    """The copy whose count of a path the merge keeps.

    It is the copy of the one task whose edges hold the path (tasks split the
    paths: :func:`find_partition`). So (i) the owner's interesting edges, a union
    that includes that task's, hold the path, and (ii) every path has one owner.
    Another copy may count the same path (its union of tasks can hold it); that
    count is exact too, and the merge drops it.

    Parameters
    ----------
    path_edges : collection of int
        The dag edges of an ENTRY -> EXIT path of ``procedure``'s DAG.

    Raises
    ------
    ValueError
        If no task holds these edges (they are not a path of the DAG).
    """
    edges = frozenset(path_edges)
    for planned in plan.tasks_of(procedure):
        if edges <= planned.task.edges:
            return planned.copy
    raise ValueError(f"edges {sorted(edges)} are not a path of procedure {procedure!r}")
