"""What an edge profile would have told you: the hot path it predicts, and how often
it is wrong (the experiment in Ball-Larus 1996, §6, comparing measured paths with
paths predicted from an edge profile).

An edge profile gives each edge's frequency but not which edges ran *together*.
The natural guess at a path from an edge profile is to start where paths start
and keep taking the most frequent outgoing edge. We compute the edge profile from
the exact path profile (every edge of every path, cut paths' prefixes included,
times the path's count — what edge mode would have measured) and guess on the
Ball-Larus DAG:

- the *predicted hot path*: from ENTRY, greedily, dummy edges included (so it may
  be a loop iteration, starting at a loop header), compared with the real hottest;
- the *predicted path from each start* (the function's entry, each loop header,
  each handler), as the paper does; a path execution is predicted correctly when
  it is the predicted path of its start. The share of executions predicted
  wrongly is how often the edge profile misleads.

Invariant: predicted paths are complete paths of the DAG (numbers in
``range(paths_possible)``) with their real counts, possibly 0 — an edge profile can
point at a path that never ran; ``0 <= correct <= executions``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from pathprof.data.profile import FunctionProfile, Path, decode_paths, numbering_of
from pathprof.graph import EdgeKind, Numbering, regenerate, regenerate_prefix

__all__ = ["EdgePrediction", "PredictionSummary", "cfg_edge_counts", "dag_edge_frequencies",
           "predict_from_edges", "summarize"]


@dataclass(frozen=True)
class EdgePrediction:
    predicted: Path  #: the path the greedy walk over edge counts takes, with its real count
    hottest: Path  #: the path that really ran most often
    executions: int  #: complete path executions of the function
    correct: int  #: of those, executions of the predicted path of their start

    @property
    def right(self) -> bool:
        return self.predicted.id == self.hottest.id

    @property
    def wrong_share(self) -> float:
        """Share of path executions that did not follow their start's predicted path."""
        return 1 - self.correct / self.executions if self.executions else 0.0


def predict_from_edges(fn: FunctionProfile) -> EdgePrediction | None:
    """The edge profile's guess at ``fn``'s hottest path (None if no complete path ran)."""
    complete = [p for p in fn.paths if p.complete and p.count]
    if not complete:
        return None
    numbering = numbering_of(fn.meta)
    dag = numbering.dag
    frequency = dag_edge_frequencies(fn, numbering)

    def walk(first: int | None) -> int:
        block, number = dag.entry, 0
        while block != dag.exit:
            if first is not None:
                eid, first = first, None
            else:  # the most frequent way out; ties go to the lowest dag edge id
                eid = max(dag.out_edges[block], key=lambda e: (frequency[e], -e))
            number += numbering.val[eid]
            block = dag.edges[eid].dst
        return number

    number = walk(None)
    (predicted,) = decode_paths(fn.meta, {number: fn.counts.get(number, 0)}, {},
                                numbering=numbering)
    # One prediction per start: ENTRY's own code, and each dummy edge (loop header,
    # handler). Out of ENTRY, only edges of one start compete with each other.
    normal = [e for e in dag.out_edges[dag.entry] if dag.edges[e].kind is EdgeKind.NORMAL]
    starts = [e for e in dag.out_edges[dag.entry] if dag.edges[e].kind is not EdgeKind.NORMAL]
    predictions = {walk(e) for e in starts}
    if normal:
        predictions.add(walk(max(normal, key=lambda e: (frequency[e], -e))))
    correct = sum(fn.counts.get(n, 0) for n in predictions)
    executions = sum(fn.counts.values())
    return EdgePrediction(predicted, complete[0], executions, correct)


def dag_edge_frequencies(fn: FunctionProfile, numbering: Numbering) -> list[int]:
    """How often each DAG edge ran, from the path profile: the edge profile edge mode
    would have measured (a backedge's count is that of its two dummy edges)."""
    frequency = [0] * len(numbering.dag.edges)
    for number, count in fn.counts.items():
        for eid in regenerate(numbering, number).edges:
            frequency[eid] += count
    for (block, value), count in fn.cuts.items():
        for eid in regenerate_prefix(numbering, block, value).edges:
            frequency[eid] += count
    return frequency


def cfg_edge_counts(fn: FunctionProfile, numbering: Numbering | None = None) -> dict[int, int]:
    """How often each edge of the function's CFG ran (CFG edge id -> count): measured,
    in edge mode; implied by the path profile, in path mode. A backedge counts the
    paths that ended at it (its DAG stand-in, the edge to EXIT)."""
    if fn.edges and not fn.counts:
        return dict(fn.edges)
    numbering = numbering or numbering_of(fn.meta)
    dag = numbering.dag
    backedge_of = {end: cfg for cfg, (end, _start) in dag.backedges.items()}
    counts: dict[int, int] = {}
    for eid, count in enumerate(dag_edge_frequencies(fn, numbering)):
        edge = dag.edges[eid]
        if edge.kind is EdgeKind.NORMAL and edge.cfg_edge is not None:
            counts[edge.cfg_edge] = count
        elif edge.kind is EdgeKind.LOOP_END:
            counts[backedge_of[eid]] = count
    return counts


@dataclass(frozen=True)
class PredictionSummary:
    functions: int  #: functions with at least one complete path
    wrong: int  #: of those, where the predicted hot path is not the hottest
    never_ran: int  #: of the wrong ones, where the predicted hot path never ran at all
    executions: int  #: complete path executions in those functions
    correct: int  #: executions that followed their start's predicted path

    @property
    def wrong_share(self) -> float:
        return 1 - self.correct / self.executions if self.executions else 0.0

    def sentence(self) -> str:
        """The summary as reports print it ("" when no function has a complete path)."""
        if not self.functions:
            return ""
        never = f" (in {self.never_ran}, a path that never ran)" if self.never_ran else ""
        return ("What an edge profile would have told you: following the most frequent "
                f"edges finds the hottest path in {self.functions - self.wrong} of "
                f"{self.functions} functions{never}; {self.wrong_share:.1%} of path "
                "executions took a path other than the one edge counts predict from where "
                "they started.")


def summarize(functions: Iterable[FunctionProfile]) -> PredictionSummary:
    counted = wrong = never = executions = correct = 0
    for fn in functions:
        prediction = predict_from_edges(fn)
        if prediction is None:
            continue
        counted += 1
        executions += prediction.executions
        correct += prediction.correct
        if not prediction.right:
            wrong += 1
            never += prediction.predicted.count == 0
    return PredictionSummary(counted, wrong, never, executions, correct)
