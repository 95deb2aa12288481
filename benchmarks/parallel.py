"""P3's evaluation redone on the benchmark workloads (Afraz et al. 2015, §4).

``python benchmarks/parallel.py [--workloads a,b] [--copies 2,4,8] [--wall 2]`` runs
each workload once under ``pathprof run`` (path mode) and, from the paths it
executed, counts the probe operations each copy of a parallel run executes:

- sequential Ball-Larus: every function profiled whole (pathprof's probes, as
  ``benchmarks/probes.py`` counts them);
- parallel Ball-Larus (PBL): every function profiled whole by one copy; a copy
  pays one counter increment per call of each function it does not profile;
- P3: functions with one call site split among the copies (PSPP on a copy's
  share); a copy pays its share's probes on *every* path it runs, owned or not;
- beyond the paper, ``p3m`` and ``pblm``: the same, planned from the measured
  profile (task costs are the probes their paths ran; the functions split are
  those heavier than a copy's share) -- here the profile of the very same run,
  the best a profile from an earlier run of the same input can do.

The figure of merit is the slowest copy: ``1 - max over copies / sequential`` is
the reduction. Exact and machine-independent (paths executed times probes per
path); paths an exception cut short are left out, as in ``probes.py``. With
``--wall K``, the wall time of ``pathprof run --parallel K`` (the slowest copy,
plus the merge), of the sequential profile and of the plain program, best of 3,
as ratios to plain.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from pathprof.data.store import read
from pathprof.graph import regenerate
from pathprof.graph.copyplan import CopyShare
from pathprof.parallel.plan import plan_copies
from pathprof.python.instrument import function_metadata, instrument_source, source_hash
from pathprof.python.plan import plan_share_function
from probes import _ops
from workloads import WORKLOADS, measured_files

HERE = Path(__file__).parent


def _run(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


SCALE = 1  #: --scale: loops of each workload multiplied, for the wall-clock runs


def _loops(name: str) -> str:
    return str(WORKLOADS[name].loops * SCALE)


def _commands(name: str, tmp: Path, copies: int | None) -> list[str]:
    driver = [str(HERE / "workloads.py"), name, _loops(name)]
    sources = [arg for f in measured_files(name) for arg in ("--source", f)]
    data = ["--data-file", str(tmp / f"p{copies}.pathprof")]
    parallel = [] if copies is None else ["--parallel", str(copies)]
    return [sys.executable, "-m", "pathprof", "run", *sources, *data, *parallel, *driver]


def _functions(files: list[str]) -> dict[str, dict[str, Any]]:
    """Per file: its source hash and its function plans by (qualname, line)."""
    result = {}
    for file in files:
        source = Path(file).read_bytes()
        module = instrument_source(source, file)
        result[file] = {"digest": source_hash(source), "plans": {
            (meta.qualname, meta.code_line): fp
            for fp in module.functions for meta in [function_metadata(fp)]}}
    return result


def copy_costs(data_file: str, files: list[str], copies: int, partition: bool,
               measured: bool = False) -> list[int]:
    """Probe operations each copy executes on the paths of ``data_file`` (with
    ``measured``, planned from that very profile: its best case)."""
    profile = read(data_file).functions if measured else None
    plan = plan_copies(files, copies, partition=partition, profile=profile)
    known = _functions(files)
    costs = [0] * copies
    for function in read(data_file).functions:
        module = known.get(function.file)
        if module is None:
            continue
        fp = module["plans"][(function.qualname, function.first_line)]
        owner = plan.owners[module["digest"]][fp.index]
        paths = [(regenerate(fp.numbering, n), c) for n, c in function.counts.items()]
        calls = sum(c for p, c in paths if p.start.value == "entry")
        if isinstance(owner, int):
            whole = sum(c * _ops(fp.plan, p.edges) for p, c in paths)
            for k in range(copies):
                costs[k] += whole if k == owner else calls
            continue
        tasks = tuple(frozenset(t) for t in owner["tasks"])
        for k in range(copies):
            if k not in owner["copies"]:
                costs[k] += calls
                continue
            share = CopyShare(fp.numbering, tasks, tuple(owner["copies"]), k)
            share_plan = plan_share_function(fp.cfg, fp.index, share).plan
            costs[k] += sum(c * _ops(share_plan, p.edges) for p, c in paths)
    return costs


def sequential_cost(data_file: str, files: list[str]) -> int:
    known = _functions(files)
    total = 0
    for function in read(data_file).functions:
        module = known.get(function.file)
        if module is None:
            continue
        fp = module["plans"][(function.qualname, function.first_line)]
        total += sum(c * _ops(fp.plan, regenerate(fp.numbering, n).edges)
                     for n, c in function.counts.items())
    return total


def measure(name: str, copies: list[int], wall: list[int]) -> dict[str, Any]:
    files = measured_files(name)
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        subprocess.run(_commands(name, tmp, None), check=True, stdout=subprocess.DEVNULL)
        data = str(tmp / "pNone.pathprof")
        sequential = sequential_cost(data, files)
        result: dict[str, Any] = {"workload": name, "sequential_probes": sequential}
        for k in copies:
            for label, partition, measured in (("p3", True, False), ("pbl", False, False),
                                               ("p3m", True, True), ("pblm", False, True)):
                costs = copy_costs(data, files, k, partition, measured)
                result[f"{label}_{k}"] = {"costs": costs,
                                          "reduction": 1 - max(costs) / sequential}
            result[f"split_{k}"] = plan_copies(files, k).split()
        driver = [sys.executable, str(HERE / "workloads.py"), name, _loops(name)]
        for k in wall:
            plain = min(_run(driver) for _ in range(3))
            seq = min(_run(_commands(name, tmp, None)) for _ in range(3))
            par = min(_run(_commands(name, tmp, k)) for _ in range(3))
            result[f"wall_{k}"] = {"plain_s": plain, "sequential": seq / plain,
                                   "parallel": par / plain}
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", default=",".join(WORKLOADS))
    parser.add_argument("--copies", default="2,4,8")
    parser.add_argument("--wall", default="")
    parser.add_argument("--scale", type=int, default=1,
                        help="multiply each workload's loops (longer runs for --wall)")
    args = parser.parse_args()
    global SCALE
    SCALE = args.scale
    copies = [int(k) for k in args.copies.split(",")]
    wall = [int(k) for k in args.wall.split(",") if k]
    for name in args.workloads.split(","):
        print(json.dumps(measure(name, copies, wall)), flush=True)


if __name__ == "__main__":
    main()
