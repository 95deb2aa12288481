"""``pathprof report --format json``: the measured paths in a documented, versioned schema.

The schema is described in ``docs/json-format.md``; :data:`JSON_VERSION` changes
whenever a field changes meaning or disappears (new fields may be added without
a version change). Path numbers are strings because they can exceed 2**53.
"""

from __future__ import annotations

import json
from typing import TextIO

from pathprof.analysis.decisions import decisions, edge_label
from pathprof.analysis.edgepredict import predict_from_edges
from pathprof.data.measurement import Measurement
from pathprof.data.profile import FunctionProfile, Path
from pathprof.version import __version__

__all__ = ["JSON_VERSION", "render", "to_json"]

JSON_VERSION = 1


def _path(fn: FunctionProfile, path: Path, total: int) -> dict[str, object]:
    blocks = []
    for block in path.blocks:
        lines = fn.block_lines(block)
        blocks.append({"block": block, "lines": list(lines) if lines else None})
    entry: dict[str, object] = {
        "id": path.key,
        "count": path.count,
        "share": path.count / total if total else 0.0,
        "start": path.start,
        "end": path.end,
        "blocks": blocks,
        "decisions": decisions(fn, path),
    }
    if path.time_ns is not None:
        entry["time_ns"] = path.time_ns
    contexts = fn.contexts.get(path.id)
    if contexts:
        entry["contexts"] = sorted(contexts)
    return entry


def function_json(fn: FunctionProfile, top: int | None = None) -> dict[str, object]:
    meta = fn.meta
    total = fn.total
    paths = fn.paths if top is None else fn.paths[:top]
    data: dict[str, object] = {
        "file": fn.file,
        "qualname": fn.qualname,
        "first_line": meta.first_line,
        "last_line": meta.last_line,
        "source_hash": fn.source_hash,
        "paths_possible": str(fn.paths_possible),
        "paths_run": fn.paths_run,
        "executions": total,
        "raised": fn.raised,
        "closed": fn.closed,
        "unattributed": fn.unattributed,
        # went back to its original code (--stop-counting): every count a lower bound
        "stopped_counting": fn.stopped,
        "paths": [_path(fn, p, total) for p in paths],
    }
    prediction = predict_from_edges(fn)
    if prediction is not None:
        data["edge_prediction"] = {
            "predicted": prediction.predicted.key,
            "predicted_count": prediction.predicted.count,
            "hottest": prediction.hottest.key, "right": prediction.right,
            "executions": prediction.executions, "correct": prediction.correct}
    if fn.edges:
        data["edges"] = [
            {"src": src, "dst": dst, "label": edge_label(meta, i), "count": fn.edges.get(i, 0),
             "line": (fn.block_lines(src) or (None, None))[1]}
            for i, (src, dst, _label) in enumerate(meta.edges)]
    return data


def to_json(measurement: Measurement, top: int | None = None) -> dict[str, object]:
    return {
        "format": "pathprof",
        "version": JSON_VERSION,
        "pathprof_version": __version__,
        "mode": measurement.mode,
        "runs": [{"started": r.started, "argv": r.argv, "python": r.python, "mode": r.mode,
                  "metric": r.metric, "pid": r.pid} for r in measurement.runs],
        "functions": [function_json(fn, top) for fn in
                      sorted(measurement.functions, key=lambda f: (f.file, f.first_line,
                                                                   f.qualname))],
    }


def render(measurement: Measurement, out: TextIO, **options: int | None) -> None:
    """The renderer (see :mod:`pathprof.report`): :func:`to_json`, indented, on ``out``."""
    print(json.dumps(to_json(measurement, **options), indent=2), file=out)
