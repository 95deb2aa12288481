"""Where a measured pytest session's time goes: run by :mod:`benchmarks.phases` as
``PYTHON benchmarks/phase_probe.py OUT.json -m pytest ARGS...`` in a suite's own
environment.

It wraps, from outside the product, the parts of pathprof a session runs --
instrumenting a module as it is imported (the import hook's ``get_code``, cache reads
included), instrumenting the modules imported before the start (``inplace``), the save
(``Profiler.save``), the end-of-session reports (``CoverageReports.produce`` and
``show``) -- and writes the CPU and wall seconds of each, the session's (``pytest.main``
returning), and the objects the garbage collector tracks then, to ``OUT.json``. What
the process takes after that (interpreter exit) is the caller's to measure: the wall
and CPU time of the whole process, minus these."""

from __future__ import annotations

import gc
import json
import os
import resource
import sys
import time
from typing import Any

_STARTED = (time.perf_counter(), time.process_time())
_phases: dict[str, list[float]] = {}


def _timed(name: str, function: Any) -> Any:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        wall, cpu = time.perf_counter(), time.process_time()
        try:
            return function(*args, **kwargs)
        finally:
            entry = _phases.setdefault(name, [0.0, 0.0, 0])
            entry[0] += time.perf_counter() - wall
            entry[1] += time.process_time() - cpu
            entry[2] += 1

    wrapper.__name__ = getattr(function, "__name__", name)
    wrapper.__qualname__ = getattr(function, "__qualname__", name)
    wrapper.__doc__ = getattr(function, "__doc__", None)
    return wrapper


def _install() -> None:
    try:
        from pathprof.measure import importhook, inplace, profiler
        from pathprof.report import session
    except ImportError:  # (a run without pathprof: plain, coverage.py)
        return
    loader = importhook.InstrumentingLoader
    loader.get_code = _timed("instrumenting", loader.get_code)  # type: ignore[method-assign]
    inplace.instrument_imported = _timed("in place", inplace.instrument_imported)
    profiler.Profiler.save = _timed("saving", profiler.Profiler.save)  # type: ignore[method-assign]
    reports = session.CoverageReports
    reports.produce = _timed("reports", reports.produce)  # type: ignore[method-assign]
    reports.show = _timed("reports", reports.show)  # type: ignore[method-assign]


def main() -> int:
    out = sys.argv[1]
    if sys.argv[2:4] != ["-m", "pytest"]:
        raise SystemExit("usage: phase_probe.py OUT.json -m pytest ARGS...")
    args = sys.argv[4:]
    sys.argv = ["pytest", *args]
    _install()
    import pytest

    status = pytest.main(args)
    wall = time.perf_counter() - _STARTED[0]
    cpu = time.process_time() - _STARTED[1]
    with open(out, "w", encoding="utf-8") as f:
        json.dump({"session_wall": wall, "session_cpu": cpu,
                   "phases": {name: {"wall": v[0], "cpu": v[1], "calls": v[2]}
                              for name, v in _phases.items()},
                   "gc_objects": len(gc.get_objects()),
                   "max_rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                   "pid": os.getpid()}, f)
    return int(status)


if __name__ == "__main__":
    sys.exit(main())
