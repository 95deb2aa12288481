"""The workloads of ``overhead.py``: pure-Python pyperformance benchmarks, run in-process.

Each benchmark is imported from the installed ``pyperformance`` package
(``data-files/benchmarks/bm_<name>/run_benchmark.py``), never copied. pyperf's Runner
is not used (it spawns its own worker processes); ``python workloads.py NAME LOOPS``
imports ``run_benchmark`` and calls its workload for a fixed amount of work, timing
only that call with ``time.perf_counter``, and prints the elapsed time and a digest
of the workload's result as JSON, so that every mode can be checked against the plain
run. Each workload function returns something that depends on the computation: an
image digest, an energy, a move, a checksum.

This file is the measured program's driver; it is never itself measured.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import importlib.util
import io
import json
import os
import sys
import tempfile
import time
import types
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any


class _Runner:
    """Stands in for ``pyperf.Runner`` where a benchmark's setup code needs one."""

    def __init__(self) -> None:
        self.metadata: dict[str, Any] = {}
        self.calls: list[tuple[Callable[..., Any], tuple[Any, ...]]] = []

    def bench_func(self, name: str, func: Callable[..., Any], *args: Any) -> None:
        self.calls.append((func, args))


def _file_digest(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def _richards(m: types.ModuleType, loops: int, tmp: str) -> object:
    return m.Richards().run(loops)  # False if a checksum inside the benchmark fails


def _nbody(m: types.ModuleType, loops: int, tmp: str) -> object:
    m.bench_nbody(loops, m.DEFAULT_REFERENCE, m.DEFAULT_ITERATIONS)
    return m.report_energy()


def _chaos(m: types.ModuleType, loops: int, tmp: str) -> object:
    # main() builds the splines and the Chaosgame, then hands the workload to the runner.
    runner = _Runner()
    image = os.path.join(tmp, "chaos.ppm")
    args = argparse.Namespace(thickness=m.DEFAULT_THICKNESS, width=m.DEFAULT_WIDTH,
                              height=m.DEFAULT_HEIGHT, iterations=m.DEFAULT_ITERATIONS,
                              rng_seed=m.DEFAULT_RNG_SEED, filename=None)
    m.main(runner, args)
    [(func, call_args)] = runner.calls
    for _ in range(loops - 1):
        func(*call_args)
    w, h, iterations, _, seed = call_args
    func(w, h, iterations, image, seed)  # the last image is kept for the result
    return _file_digest(image)


def _deltablue(m: types.ModuleType, loops: int, tmp: str) -> object:
    for _ in range(loops):
        m.delta_blue(100)
    return "checked"  # the benchmark prints "... failed" on a wrong answer


def _go(m: types.ModuleType, loops: int, tmp: str) -> object:
    return sorted({m.versus_cpu() for _ in range(loops)})


def _raytrace(m: types.ModuleType, loops: int, tmp: str) -> object:
    image = os.path.join(tmp, "raytrace.ppm")
    m.bench_raytrace(loops, m.DEFAULT_WIDTH, m.DEFAULT_HEIGHT, image)
    return _file_digest(image)


def _float(m: types.ModuleType, loops: int, tmp: str) -> object:
    return sorted({repr(m.benchmark(m.POINTS)) for _ in range(loops)})


def _nqueens(m: types.ModuleType, loops: int, tmp: str) -> object:
    solutions = set()
    for _ in range(loops):
        solutions.add(tuple(m.n_queens(8)))  # what bench_n_queens(8) computes
    return [len(s) for s in solutions]


def _fannkuch(m: types.ModuleType, loops: int, tmp: str) -> object:
    return sorted({m.fannkuch(m.DEFAULT_ARG) for _ in range(loops)})


def _spectral_norm(m: types.ModuleType, loops: int, tmp: str) -> object:
    m.bench_spectral_norm(loops)
    return m.eval_AtA_times_u([1] * 10)


def _hexiom(m: types.ModuleType, loops: int, tmp: str) -> object:
    m.main(loops, m.DEFAULT_LEVEL)  # raises AssertionError on a wrong answer
    return "checked"


def _pyflate(m: types.ModuleType, loops: int, tmp: str) -> object:
    # Decompresses a bzip2 file and compares the output's MD5 (raises on a mismatch).
    m.bench_pyflake(loops, os.path.join(os.path.dirname(m.__file__), "data",
                                        "interpreter.tar.bz2"))
    return "checked"


def _deepcopy(m: types.ModuleType, loops: int, tmp: str) -> object:
    # All three of the benchmark's variants; the work is in the stdlib's copy module.
    m.benchmark(loops)
    m.benchmark_reduce(loops * 30)
    m.benchmark_memo(loops)
    return repr(m.copy.deepcopy({"a": [1, (2, 3)], "dc": m.A("x", [1], True)}))


def _generators(m: types.ModuleType, loops: int, tmp: str) -> object:
    m.bench_generators(loops)
    return sum(m.tree(range(1000)))


def _coroutines(m: types.ModuleType, loops: int, tmp: str) -> object:
    m.bench_coroutines(loops)
    coro = m.fibonacci(20)
    try:
        while True:
            coro.send(None)
    except StopIteration as stop:
        return stop.value


def _unpack_sequence(m: types.ModuleType, loops: int, tmp: str) -> object:
    m.bench_all(loops)
    return "ran"  # the benchmark computes nothing to compare


@dataclass(frozen=True)
class Workload:
    run: Callable[[types.ModuleType, int, str], object]
    #: Loops for a plain run of about half a second (Python 3.11, this project's machine).
    loops: int
    #: Standard-library modules where the workload spends its time, measured too.
    stdlib: tuple[str, ...] = ()


WORKLOADS: dict[str, Workload] = {
    "richards": Workload(_richards, 5),
    "nbody": Workload(_nbody, 3),
    "chaos": Workload(_chaos, 2),
    "deltablue": Workload(_deltablue, 60),
    "go": Workload(_go, 2),
    "raytrace": Workload(_raytrace, 1),
    "float": Workload(_float, 4),
    "nqueens": Workload(_nqueens, 4),
    "fannkuch": Workload(_fannkuch, 1),
    "spectral_norm": Workload(_spectral_norm, 2),
    "hexiom": Workload(_hexiom, 35),
    "pyflate": Workload(_pyflate, 1),
    # Its time is in the standard library's copy module, which pathprof cannot measure
    # here: its command line imports copy (through dataclasses) before the program
    # starts. Every tool measures the benchmark module alone on it.
    "deepcopy": Workload(_deepcopy, 300),
    "generators": Workload(_generators, 2),
    "coroutines": Workload(_coroutines, 8),
    "unpack_sequence": Workload(_unpack_sequence, 3000),
}


def benchmarks_root() -> Path:
    """pyperformance's benchmark sources, found without importing pyperformance."""
    spec = importlib.util.find_spec("pyperformance")
    if spec is None or spec.origin is None:
        sys.exit("pyperformance is not installed: pip install -e '.[bench]'")
    root = Path(spec.origin).parent / "data-files" / "benchmarks"
    if not root.is_dir():
        sys.exit(f"no benchmark sources in {root}")
    return root


def measured_files(name: str) -> list[str]:
    """The files a mode measures for workload ``name``: its benchmark module and the
    standard-library modules the workload spends its time in."""
    files = [str(benchmarks_root() / f"bm_{name}" / "run_benchmark.py")]
    for module in WORKLOADS[name].stdlib:
        spec = importlib.util.find_spec(module)
        if spec is None or spec.origin is None:
            raise ImportError(f"no source for {module}")
        files.append(spec.origin)
    return files


def main(name: str, loops: int) -> None:
    workload = WORKLOADS[name]
    sys.path.insert(0, str(benchmarks_root() / f"bm_{name}"))
    import run_benchmark  # the benchmark chosen on the command line

    with tempfile.TemporaryDirectory() as tmp:
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            start, cpu_start = time.perf_counter(), time.process_time()
            result = workload.run(run_benchmark, loops, tmp)
            elapsed = time.perf_counter() - start
            cpu = time.process_time() - cpu_start
    text = repr((result, printed.getvalue()))
    print(json.dumps({"workload": name, "loops": loops, "seconds": elapsed, "cpu": cpu,
                      "module": run_benchmark.__file__, "result": text[:200],
                      "digest": hashlib.sha256(text.encode()).hexdigest()}))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
