"""The ``pathprof plan`` report: numbering, chords and probes of one CFG."""

from __future__ import annotations

from dataclasses import dataclass
from typing import IO

from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from pathprof.graph import (
    EdgeKind,
    naive_plan,
    number_paths,
    place,
    plan_probes,
    regenerate,
    to_dag,
)
from pathprof.graph.numbering import AcyclicPath, Numbering
from pathprof.graph.placement import ProbePlan
from pathprof.graph.serial import NamedCfg
from pathprof.report.console import console_for

__all__ = ["PlanSummary", "render", "render_plan", "summarize_plan"]

#: Paths listed in full at most; beyond this the table is cut.
MAX_LISTED_PATHS = 64


@dataclass(frozen=True)
class PlanSummary:
    """Everything the plan report shows, computed once."""

    named: NamedCfg
    numbering: Numbering
    plan: ProbePlan
    naive: ProbePlan
    paths: tuple[AcyclicPath, ...]

    @property
    def optimized_dynamic(self) -> int:
        return sum(self.plan.dynamic_count(p) for p in self.paths)

    @property
    def naive_dynamic(self) -> int:
        return sum(self.naive.dynamic_count(p) for p in self.paths)


def summarize_plan(named: NamedCfg) -> PlanSummary:
    numbering = number_paths(to_dag(named.cfg))
    plan = plan_probes(place(numbering))
    count = min(numbering.total, MAX_LISTED_PATHS)
    paths = tuple(regenerate(numbering, n) for n in range(count))
    return PlanSummary(named, numbering, plan, naive_plan(numbering), paths)


def _edge_label(summary: PlanSummary, eid: int) -> str:
    edge = summary.numbering.dag.edges[eid]
    names = summary.named.names
    arrow = "->" if edge.kind is EdgeKind.NORMAL else "-->"
    suffix = "" if edge.kind is EdgeKind.NORMAL else f"  ({edge.kind.value})"
    return f"{names[edge.src]} {arrow} {names[edge.dst]}{suffix}"


def render_plan(summary: PlanSummary) -> RenderableType:
    numbering = summary.numbering
    dag = numbering.dag
    placement = summary.plan.placement
    edges = Table(title="Edges: Ball-Larus values (§3.1) and probes (§3.2-3.3)")
    edges.add_column("edge", overflow="fold")
    edges.add_column("Val", justify="right")
    edges.add_column("tree?", justify="center")
    edges.add_column("chord inc", justify="right")
    edges.add_column("probe")
    for eid in range(len(dag.edges)):
        probe = summary.plan.probes.get(eid)
        edges.add_row(
            Text(_edge_label(summary, eid)),
            str(numbering.val[eid]),
            "tree" if eid in placement.tree else "",
            "" if eid in placement.tree else str(placement.increment[eid]),
            Text(str(probe)) if probe else "",
        )
    paths = Table(title=f"Paths ({numbering.total} in all)")
    paths.add_column("#", justify="right")
    paths.add_column("blocks")
    paths.add_column("starts at")
    paths.add_column("ends by")
    paths.add_column("probes run", justify="right")
    paths.add_column("naive", justify="right")
    for path in summary.paths:
        paths.add_row(
            str(path.number),
            Text(summary.named.spell(path.blocks)),
            path.start.value,
            path.end.value,
            str(summary.plan.dynamic_count(path)),
            str(summary.naive.dynamic_count(path)),
        )
    if numbering.total > len(summary.paths):
        paths.caption = f"first {len(summary.paths)} of {numbering.total} paths shown"
    totals = Text.assemble(
        ("Probes in the code: ", "bold"),
        f"{summary.plan.static_count()} with the spanning tree, "
        f"{summary.naive.static_count()} with Val on every edge.\n",
        ("Probes run over the paths listed: ", "bold"),
        f"{summary.optimized_dynamic} with the spanning tree, "
        f"{summary.naive_dynamic} with Val on every edge.",
    )
    return Group(edges, paths, totals)


def render(named: NamedCfg, out: IO[str] | Console, **options: object) -> None:
    """The renderer (see :mod:`pathprof.report`): the plan of a CFG read from JSON
    (:func:`pathprof.graph.serial.cfg_from_data`) on ``out``."""
    console_for(out).print(render_plan(summarize_plan(named, **options)))
