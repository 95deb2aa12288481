"""How far the spanning tree can cut event counting's overhead: the per-call floor.

Run: ``python benchmarks/event_floor.py [--workloads a,b]``.

Ball 1994's tree saves adds *inside* a call; every placement pays the same hand-over
per call (thread total, self count, inclusive count: :mod:`pathprof.python.eventcode`).
With ``C`` that hand-over's cost, ``a`` the cost of one add and ``N`` the statements a
call runs, the naive placement (one add per statement) costs about ``C + N a`` per
call and the tree at least ``C``; so no tree reaches an overhead ratio below
``C / (C + N a)``.

1. Timed, in this process, on code pathprof instruments (interleaved rounds, the
   fastest of each): ``C`` from a one-line function instrumented with the tree (one
   statement, no add left) against the same function plain; ``a`` from a function of
   nine statements, one-add-per-statement against tree, per add.
2. Deterministic, per workload of :mod:`workloads` (one loop): statements from
   ``pathprof count``, calls of the benchmark's functions from ``cProfile`` (each
   resumption of a generator or coroutine is a call to both), and the bound above.
3. What each part of the hand-over costs (``--parts``): the same one-line function
   with parts of pathprof's generated hand-over taken out of its syntax tree (what
   is left would count wrong; it is only timed), and the bound each would give.
   ``total only`` keeps the thread's total (what :func:`pathprof.events.read`
   needs); ``+ self`` adds the per-function self count; ``+ inclusive`` is
   pathprof's code.
"""

from __future__ import annotations

import argparse
import ast
import json
import pstats
import statistics
import sys
import tempfile
import time
import types
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from overhead import RunFailed, run_once  # noqa: E402
from workloads import WORKLOADS, measured_files  # noqa: E402

FUNCTIONS = '''
def one(x):
    return x + 1


def nine(x):
    a = x
    b = a
    c = b
    d = c
    e = d
    f = e
    g = f
    h = g
    return h
'''
ROUNDS = 30
CALLS = 40_000


#: Hand-over variants for ``--parts``: the generated statements each one drops,
#: recognised by their source text (:func:`ast.unparse`). "total only" keeps the
#: local ``@pp_u`` the inclusive count would use (one store more than it needs).
PARTS = {
    "total only": ("@pp_a = ", "@pp_T[_@pp_g", "_@pp_S["),
    "total + self": ("@pp_a = ", "@pp_T[_@pp_g"),
    "total + self + inclusive (pathprof)": (),
}


def load(placement: str | None, drop: tuple[str, ...] = ()) -> types.ModuleType:
    """FUNCTIONS plain (None) or instrumented to count statements with ``placement``,
    without the generated statements whose source starts with one of ``drop``."""
    from pathprof.python.instrument import instrument_source

    module = types.ModuleType(f"event_floor_{placement}")
    if placement is None:
        code = compile(FUNCTIONS, "<event_floor>", "exec")
    else:
        instrumented = instrument_source(FUNCTIONS, f"<event_floor_{placement}>",
                                         mode="events", placement=placement)
        if drop:
            _Dropper(drop).visit(instrumented.tree)
        code = instrumented.compile(f"<event_floor_{placement}>")
    exec(code, module.__dict__)
    return module


class _Dropper(ast.NodeTransformer):
    def __init__(self, drop: tuple[str, ...]) -> None:
        self.drop = drop

    def generic_visit(self, node: ast.AST) -> ast.AST:
        super().generic_visit(node)
        for field in ("body", "orelse", "finalbody"):
            stmts = getattr(node, field, None)
            if isinstance(stmts, list) and stmts and isinstance(stmts[0], ast.stmt):
                kept = [s for s in stmts if not ast.unparse(s).startswith(self.drop)]
                setattr(node, field, kept or [ast.Pass()])
        return node


def per_call_ns(fn: types.FunctionType) -> float:
    start = time.perf_counter()
    for _ in range(CALLS // 4):
        fn(1)
        fn(1)
        fn(1)
        fn(1)
    return (time.perf_counter() - start) / CALLS * 1e9


def costs() -> tuple[float, float]:
    """(C, a) in nanoseconds on this Python, fastest of ROUNDS interleaved rounds."""
    variants = {name: load(name) for name in (None, "tree", "statements")}
    best: dict[tuple[str | None, str], float] = {}
    for _ in range(ROUNDS):
        for placement, module in variants.items():
            for fn_name in ("one", "nine"):
                ns = per_call_ns(getattr(module, fn_name))
                key = (placement, fn_name)
                best[key] = min(best.get(key, ns), ns)
    hand_over = best[("tree", "one")] - best[(None, "one")]
    # nine statements: the tree starts the register at 9 (no add); one add per
    # statement starts it at 1 and adds 8 times.
    add = (best[("statements", "nine")] - best[("tree", "nine")]) / 8
    return hand_over, add


def part_costs() -> dict[str, float]:
    """Per-call cost in nanoseconds of each variant of :data:`PARTS` over the plain
    function, fastest of ROUNDS interleaved rounds."""
    variants = {name: load("tree", drop).one for name, drop in PARTS.items()}
    variants["plain"] = load(None).one
    best: dict[str, float] = {}
    for _ in range(ROUNDS):
        for name, fn in variants.items():
            best[name] = min(best.get(name, float("inf")), per_call_ns(fn))
    return {name: best[name] - best["plain"] for name in PARTS}


def statements_and_calls(name: str, tmp: Path) -> tuple[int, int]:
    run_once("events", name, 1, tmp)
    counts = json.loads((tmp / "events.json").read_text(encoding="utf-8"))
    files = set(measured_files(name))
    statements = sum(f["self"] for f in counts["functions"] if f["file"] in files)
    run_once("cprofile", name, 1, tmp)
    stats = pstats.Stats(str(tmp / "cprofile.out")).stats  # type: ignore[attr-defined]
    # Calls of functions: not of comprehensions, lambdas or module bodies (``<...>``),
    # which pathprof counts as part of their statement.
    calls = sum(entry[1] for key, entry in stats.items()
                if key[0] in files and not key[2].startswith("<"))
    return statements, calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", default=",".join(WORKLOADS))
    parser.add_argument("--parts", action="store_true",
                        help="also time parts of the hand-over and give each one's bound")
    args = parser.parse_args()
    hand_over, add = costs()
    print(f"Python {sys.version.split()[0]}: hand-over per call C = {hand_over:.1f} ns, "
          f"one add a = {add:.1f} ns (C / a = {hand_over / add:.1f})\n")
    parts = part_costs() if args.parts else {}
    for name, cost in parts.items():
        print(f"hand-over keeping {name}: {cost:.1f} ns per call")
    header = "".join(f" bound with {name} |" for name in parts)
    print(f"\n| workload | statements | calls | N = statements per call | bound C / (C + N a) |"
          f"{header}")
    print("| --- | ---: | ---: | ---: | ---: |" + " ---: |" * len(parts))
    bounds = []
    part_bounds: dict[str, list[float]] = {name: [] for name in parts}
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.workloads.split(","):
            try:
                statements, calls = statements_and_calls(name, Path(tmp))
            except RunFailed as error:
                print(f"| {name} | failed: {str(error).splitlines()[0]} | | | |")
                continue
            n = statements / calls
            bound = hand_over / (hand_over + n * add)
            bounds.append(bound)
            cells = ""
            for part, cost in parts.items():
                part_bounds[part].append(cost / (cost + n * add))
                cells += f" {part_bounds[part][-1]:.2f} |"
            print(f"| {name} | {statements:,} | {calls:,} | {n:.1f} | {bound:.2f} |{cells}")
    if bounds:
        medians = "".join(f" **{statistics.median(b):.2f}** |" for b in part_bounds.values())
        print(f"| **median** | | | | **{statistics.median(bounds):.2f}** |{medians}")


if __name__ == "__main__":
    main()
