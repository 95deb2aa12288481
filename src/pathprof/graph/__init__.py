"""Language-independent graph algorithms of path profiling: pure functions over :class:`Cfg`.

Nothing here imports ``ast`` or knows about Python source; the Python front end
(:mod:`pathprof.python`) builds a :class:`Cfg` and consumes the plans made here.
"""

from pathprof.graph.cfg import Cfg, Dag, DagEdge, EdgeKind, find_backedges, loop_depths, to_dag
from pathprof.graph.counters import ARRAY_THRESHOLD, CounterKind, counter_kind
from pathprof.graph.edges import EdgeCounterPlan, plan_edge_counters, recover_edge_counts
from pathprof.graph.numbering import (
    AcyclicPath,
    Numbering,
    PathEnd,
    PathStart,
    iter_paths,
    number_paths,
    path_number,
    paths_shortest_first,
    regenerate,
    regenerate_prefix,
)
from pathprof.graph.p3 import Kind, Plan, assign, owner, plan_program, threshold
from pathprof.graph.partition import Task, ball_larus_cost, find_partition, is_profitable
from pathprof.graph.placement import (
    Counted,
    Cut,
    Placement,
    Probe,
    ProbeOp,
    ProbePlan,
    Restart,
    event_increments,
    maximum_spanning_tree,
    naive_plan,
    place,
    plan_probes,
    static_weights,
)
from pathprof.graph.pspp import PsppLabeling, decode, path_id, pspp, spp
from pathprof.graph.reduction import ReducedDag, reduced_graph

__all__ = [
    "ARRAY_THRESHOLD",
    "AcyclicPath",
    "Cfg",
    "Counted",
    "CounterKind",
    "Cut",
    "Dag",
    "DagEdge",
    "EdgeCounterPlan",
    "EdgeKind",
    "Kind",
    "Numbering",
    "PathEnd",
    "PathStart",
    "Placement",
    "Plan",
    "Probe",
    "ProbeOp",
    "ProbePlan",
    "PsppLabeling",
    "ReducedDag",
    "Restart",
    "Task",
    "assign",
    "ball_larus_cost",
    "counter_kind",
    "decode",
    "event_increments",
    "find_backedges",
    "find_partition",
    "is_profitable",
    "iter_paths",
    "loop_depths",
    "maximum_spanning_tree",
    "naive_plan",
    "number_paths",
    "owner",
    "path_id",
    "path_number",
    "paths_shortest_first",
    "place",
    "plan_edge_counters",
    "plan_probes",
    "plan_program",
    "pspp",
    "recover_edge_counts",
    "reduced_graph",
    "regenerate",
    "regenerate_prefix",
    "spp",
    "static_weights",
    "threshold",
    "to_dag",
]
