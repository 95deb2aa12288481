"""P3 planning: split procedures' paths into tasks and deal the tasks to K copies.

Implements Algorithm 2 of Afraz, Saha and Kanade, "P3: Partitioned Path
Profiling", ESEC/FSE 2015, §3.2, with the threshold of §4.1. Pure planning over
:class:`~pathprof.graph.cfg.Dag`; running the copies and merging their profiles is
someone else's job, and this module gives it the rule it needs (:func:`owner`).

The contract: for every procedure, every ENTRY -> EXIT path of its DAG lies in
exactly one task, that task's copy profiles the path exactly (its interesting
edge set contains the path's edges, and PSPP or Ball-Larus gives a valid
labeling), and :func:`owner` names that copy. A copy whose edge set is the union
of several tasks may count paths of another copy's task too; the merge keeps a
copy's count of a path only where the copy owns it, and the sum is exact.

Deviations from the paper's text, each needed for that contract:

* **Stopping at the threshold** (Algorithm 2, line 38). The paper stops the
  moment its count of open path prefixes equals ``Δ``, which can be halfway
  through extending the prefixes of a block ``v`` along an edge ``(v, w)``: that
  edge is already in ``S``, so the prefixes not yet extended along it belong to
  no task (neither ``v``'s tasks, which take only edges outside ``S``, nor
  ``w``'s, which never saw them). Its count also drops ``v``'s own prefixes
  while ``v`` still has edges left, so it can end with more than ``Δ`` tasks.
  Here the decision is made per edge, before extending: an edge that is not
  ``v``'s last is taken only if the number of tasks would stay within ``Δ``
  (the last one never adds a task: ``v``'s prefixes move on); the first edge
  refused stops the walk, as the paper's ``goto`` does. So there are at most
  ``Δ`` tasks and no path falls between two tasks.
* **Frontier blocks** (line 42). A block whose prefixes become tasks is one that
  was reached (has prefixes) and still has an out-edge outside ``S``, or EXIT
  once reached. The paper's test ``∃(u, v) ∈ S`` leaves out ENTRY when the stop
  comes while ENTRY's own edges are being extended (its remaining paths would
  belong to no task), and the formula leaves out EXIT, which its prose includes.
* **Owners** (lines 17-21). A copy profiles every path inside the union of its
  tasks' edges, which can hold paths of tasks dealt to other copies (a copy with
  tasks ``(a, c)`` and ``(b, d)`` of ``0 => 1 => 2`` profiles ``(a, d)`` too).
  Adding the partial profiles, as §1 and §3.2 say, would count such paths twice;
  :func:`owner` says whose count to keep.
* **Dummies in a task** (``get_original_edges``). A task takes the inner edges of
  every reduced vertex its paths pass through, so a dummy holding ENTRY or EXIT
  (or the whole procedure) is expanded even when no task edge touches it.

What a diamond or triangle is (``reduced_graph``) is decided in its docstring.
"""

from __future__ import annotations

from dataclasses import dataclass

from pathprof.graph.cfg import Dag
from pathprof.graph.numbering import number_paths
from pathprof.graph.placement import place
from pathprof.graph.pspp import pspp
from pathprof.graph.reduction import ReducedDag, reduced_graph
from pathprof.types import DagEdgeId

__all__ = ["Task", "ball_larus_cost", "find_partition", "is_profitable", "whole_task"]


@dataclass(frozen=True)
class Task:
    """A set of paths of one procedure, profiled together (§3.2, ``T``).

    Attributes
    ----------
    edges : frozenset of int
        ``T.E``: the dag edges of its paths. Its paths are exactly the
        ENTRY -> EXIT paths all of whose edges are in ``edges``.
    cost : int
        ``T.Cost``: probes needed to profile them -- non-zero PSPP labels, or the
        Ball-Larus probe count (:func:`ball_larus_cost`) when ``whole``.
    whole : bool
        True when the task is every path of the procedure (``T.E = G.E``).
    """

    edges: frozenset[DagEdgeId]
    cost: int
    whole: bool


def ball_larus_cost(dag: Dag) -> int:
    """Probes of Ball-Larus profiling: the chords of the spanning-tree placement
    (Ball-Larus 1996, §3.2) whose increment is not zero.

    This counts what the paper counts for PSPP -- edges that carry a non-zero
    value -- on the placement pathprof instruments with, so the two costs compare.
    The count at EXIT and the register reset are left out of both.
    """
    placement = place(number_paths(dag))
    return sum(1 for value in placement.increment.values() if value != 0)


def whole_task(dag: Dag) -> Task:
    """The task of all paths of a procedure, costed as Ball-Larus (§3.2, lines 7-9)."""
    return Task(edges=frozenset(range(len(dag.edges))), cost=ball_larus_cost(dag), whole=True)


def find_partition(dag: Dag, delta: int) -> tuple[Task, ...]:
    """Split the paths of ``dag`` into at most ``delta`` tasks (§3.2, Algorithm 2,
    ``find_partition``, lines 24-52, with the deviations in the module docstring).

    On the reduced DAG, path prefixes from ENTRY are extended block by block in
    topological order; each block's prefixes are pushed along its out-edges, as
    long as the number of tasks that stopping would give stays within ``delta``.
    When it stops (or every prefix reached EXIT), each prefix at a frontier block
    becomes a task: the prefix, the block's out-edges not yet taken, and all that
    is reachable after them; its dag edges are those reduced edges plus the inner
    edges of the dummies it passes (``get_original_edges``).

    Parameters
    ----------
    dag : Dag
    delta : int
        The threshold ``Δ`` on the number of tasks (at least 1); see
        :func:`threshold` for the paper's choice.

    Returns
    -------
    tuple of Task
        In topological order of their frontier blocks. Invariants: between 1 and
        ``delta`` tasks (never more than the reduced DAG has paths); every
        ENTRY -> EXIT path of ``dag`` lies in exactly one task's edges; a task's
        edges are exactly the union of its paths' edges; a single task is
        ``whole``. More than one task makes the procedure *profitable*.

    Raises
    ------
    ValueError
        If ``delta`` is below 1.
    """
    if delta < 1:
        raise ValueError(f"the threshold must be at least 1, not {delta}")
    reduced = reduced_graph(dag)
    all_edges = frozenset(range(len(dag.edges)))
    tasks = []
    for reduced_edges, vertices in _frontier_groups(reduced, delta):
        edges = reduced.original_edges(reduced_edges, vertices)
        if edges == all_edges:
            tasks.append(whole_task(dag))
        else:
            tasks.append(Task(edges=edges, cost=pspp(dag, edges).cost, whole=False))
    return tuple(tasks)


def is_profitable(dag: Dag, delta: int) -> bool:
    """True when :func:`find_partition` splits the procedure (§3.2, last paragraph
    of "Lines 24-52")."""
    return len(find_partition(dag, delta)) > 1


def _frontier_groups(
    reduced: ReducedDag, delta: int
) -> list[tuple[frozenset[DagEdgeId], frozenset[int]]]:
    """Lines 28-46 of Algorithm 2: (reduced edges, reduced vertices) per task.

    ``open_count`` is the number of tasks stopping now would give: one per prefix
    at each block that was reached and is not finished. Extending a block's ``c``
    prefixes along an edge that is not its last adds ``c``; along its last edge it
    adds ``c`` at the target and removes ``c`` at the block. Invariant:
    ``open_count <= delta``.
    """
    prefixes: dict[int, list[tuple[DagEdgeId, ...]]] = {reduced.entry: [()]}
    taken: set[DagEdgeId] = set()
    finished: set[int] = set()
    open_count = 1
    stopped = False
    for vertex in reduced.topo_order:
        out = reduced.out_edges[vertex]
        mine = prefixes.get(vertex, [])
        for i, eid in enumerate(out):
            last = i == len(out) - 1
            if not last and open_count + len(mine) > delta:
                stopped = True
                break
            taken.add(eid)
            prefixes.setdefault(reduced.dst(eid), []).extend((*p, eid) for p in mine)
            if last:
                finished.add(vertex)
            else:
                open_count += len(mine)
        if stopped:
            break
    groups = []
    for vertex in reduced.topo_order:
        if vertex in finished or not prefixes.get(vertex):
            continue
        rest = [e for e in reduced.out_edges[vertex] if e not in taken]
        tail_edges, tail_vertices = reduced.reachable(rest)
        for prefix in prefixes[vertex]:
            on_path = {reduced.entry, *(reduced.dst(e) for e in prefix)}
            groups.append((tail_edges | frozenset(prefix), frozenset(on_path | tail_vertices)))
    return groups
