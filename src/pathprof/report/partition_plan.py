"""The ``pathprof plan --parallel K`` report: P3's partition of one CFG's paths.

Shows the tasks :func:`~pathprof.graph.find_partition` makes (Afraz et al. 2015,
§3.2, with ``Δ`` of §4.1), their probe costs, which copy each goes to (largest
first onto the least-loaded copy), and what each copy instruments: Ball-Larus for
all paths, PSPP labels for the paths of its tasks (§3.1), or nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import IO

from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from pathprof.graph import (
    Task,
    assign,
    ball_larus_cost,
    find_partition,
    iter_paths,
    number_paths,
    pspp,
    threshold,
    to_dag,
)
from pathprof.graph.numbering import Numbering
from pathprof.graph.serial import NamedCfg
from pathprof.report.console import console_for
from pathprof.report.terminal import plural

__all__ = ["PartitionSummary", "render", "render_partition", "summarize_partition"]

#: Paths spelled out per task at most.
MAX_LISTED_PATHS = 8


@dataclass(frozen=True)
class PartitionSummary:
    named: NamedCfg
    numbering: Numbering
    copies: int
    delta: int
    tasks: tuple[Task, ...]
    #: per task, the copy it goes to
    owners: tuple[int, ...]
    #: per task, the Ball-Larus numbers of its paths
    paths: tuple[tuple[int, ...], ...]
    #: Ball-Larus probes for the whole CFG
    whole_cost: int


def summarize_partition(named: NamedCfg, copies: int) -> PartitionSummary:
    dag = to_dag(named.cfg)
    numbering = number_paths(dag)
    delta = threshold(dag, copies)
    tasks = find_partition(dag, delta)
    owners = assign([task.cost for task in tasks], copies)
    paths = tuple(tuple(p.number for p in iter_paths(numbering) if set(p.edges) <= task.edges)
                  for task in tasks)
    return PartitionSummary(named, numbering, copies, delta, tasks, owners, paths,
                            ball_larus_cost(dag))


def render_partition(summary: PartitionSummary) -> RenderableType:
    tasks = Table(title=f"Tasks (P3 §3.2): Δ = {summary.delta}, "
                  f"{plural(len(summary.tasks), 'task')}")
    tasks.add_column("task", justify="right")
    tasks.add_column("paths (Ball-Larus numbers)")
    tasks.add_column("cost (probes)", justify="right")
    tasks.add_column("copy", justify="right")
    for i, (task, owner, numbers) in enumerate(zip(summary.tasks, summary.owners,
                                                    summary.paths, strict=True)):
        shown = ", ".join(map(str, numbers[:MAX_LISTED_PATHS]))
        if len(numbers) > MAX_LISTED_PATHS:
            shown += f", … ({len(numbers)} paths)"
        tasks.add_row(str(i), shown, str(task.cost), str(owner))
    copies = Table(title=f"Copies (K = {summary.copies})")
    copies.add_column("copy", justify="right")
    copies.add_column("instruments")
    copies.add_column("probes", justify="right")
    copies.add_column("paths it owns", justify="right")
    dag = summary.numbering.dag
    for copy in range(summary.copies):
        mine = [t for t, owner in zip(summary.tasks, summary.owners, strict=True)
                if owner == copy]
        owned = sum(len(p) for p, owner in zip(summary.paths, summary.owners, strict=True)
                    if owner == copy)
        edges = frozenset().union(*(t.edges for t in mine)) if mine else frozenset()
        if not mine:
            kind, probes = "nothing", 0
        elif len(edges) == len(dag.edges):
            kind, probes = "Ball-Larus (all paths)", summary.whole_cost
        else:
            kind, probes = f"PSPP on {len(edges)} of {len(dag.edges)} edges", pspp(dag, edges).cost
        copies.add_row(str(copy), kind, str(probes), str(owned))
    note = Text.assemble(("Sequential Ball-Larus: ", "bold"),
                         f"{plural(summary.whole_cost, 'probe')}, "
                         f"{plural(summary.numbering.total, 'path')}.")
    return Group(tasks, copies, note)


def render(named: NamedCfg, out: IO[str] | Console, **options: int) -> None:
    """The renderer (see :mod:`pathprof.report`): how P3 splits the paths of a CFG
    among ``copies=K`` copies, on ``out``."""
    console_for(out).print(render_partition(summarize_partition(named, **options)))
