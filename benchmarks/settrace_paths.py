"""The obvious path profiler a user might write: ``sys.settrace`` on every line.

``python settrace_paths.py --source FILE[,FILE] --out OUT.json SCRIPT [ARGS]`` runs
SCRIPT with a tracer that records, for each call of a function in the given files,
the sequence of lines it runs, split into paths where the line number goes back (a
loop going round) and at the return; it counts each distinct (function, lines) path
and writes the counts' summary to OUT.json. ``overhead.py`` runs it as the
"settrace" mode: what pathprof's instrumentation is measured against.
"""

from __future__ import annotations

import argparse
import json
import os
import runpy
import sys
import threading
from collections import Counter
from typing import Any


def tracer(files: set[str], counts: Counter[tuple[Any, ...]]) -> Any:
    def on_call(frame: Any, event: str, arg: Any) -> Any:
        code = frame.f_code
        if code.co_filename not in files:
            return None
        lines: list[int] = []

        def on_event(frame: Any, event: str, arg: Any) -> Any:
            if event == "line":
                line = frame.f_lineno
                if lines and line <= lines[-1]:
                    counts[(code, *lines)] += 1
                    lines.clear()
                lines.append(line)
            elif event == "return" and lines:
                counts[(code, *lines)] += 1
                lines.clear()
            return on_event

        return on_event

    return on_call


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("script")
    parser.add_argument("args", nargs=argparse.REMAINDER)
    options = parser.parse_args()
    files = {os.path.realpath(f) for f in options.source.split(",")}
    files |= {os.path.abspath(f) for f in options.source.split(",")}
    counts: Counter[tuple[Any, ...]] = Counter()
    trace = tracer(files, counts)
    sys.argv = [options.script, *options.args]
    sys.path[0] = os.path.dirname(os.path.abspath(options.script))
    threading.settrace(trace)
    sys.settrace(trace)
    try:
        runpy.run_path(options.script, run_name="__main__")
    finally:
        sys.settrace(None)
        threading.settrace(None)  # type: ignore[arg-type]
        with open(options.out, "w", encoding="utf-8") as out:
            json.dump({"paths": len(counts), "executions": sum(counts.values()),
                       "functions": len({key[0] for key in counts})}, out)


if __name__ == "__main__":
    main()
