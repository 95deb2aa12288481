"""Random programs (nested loops, try, with, match, raise, break, continue, return)
run on random inputs: pathprof's profile equals the oracles', and the instrumented
program returns and raises exactly what the plain one does."""

from __future__ import annotations

import hashlib
import itertools
import sys
import types
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ..loading import load_instrumented
from ..oracles import BlockTraceOracle
from ..source_oracle import SourceOracle
from .random_programs import functions, tape

_runs = itertools.count()

#: Inputs per program: (tape seed, n).
INPUTS = [(seed, seed % 3) for seed in range(8)]


def _outcome(f: Any, seed: int, n: int) -> tuple[str, Any]:
    """Call ``f``; a generator is consumed for ``seed % 4`` items (all of them when
    that is 3), then closed."""
    try:
        result = f(tape(seed), n)
        if isinstance(result, types.GeneratorType):
            wanted = seed % 4
            items = list(result) if wanted == 3 else [
                x for _, x in zip(range(wanted), result, strict=False)]
            result.close()
            return "yielded", items
        return "returned", result
    except Exception as err:  # the program's own Boom or Other escaping
        return "raised", type(err).__name__


def _write(tmp: Path, source: str) -> Path:
    path = tmp / f"random_{hashlib.sha256(source.encode()).hexdigest()[:12]}.py"
    path.write_text(source, encoding="utf-8")
    return path


def _plain(path: Path) -> types.ModuleType:
    module = types.ModuleType(f"plain_{path.stem}")
    exec(compile(path.read_text(encoding="utf-8"), str(path), "exec", dont_inherit=True),
         module.__dict__)
    return module


@settings(max_examples=150, deadline=None)
@given(source=functions(), data=st.data())
def test_random_program_profile_equals_block_trace_oracle(
        tmp_path_factory: Any, source: str, data: st.DataObject) -> None:
    path = _write(tmp_path_factory.mktemp("random"), source)
    plain = _plain(path)
    # A module name of its own per example: hypothesis runs one source again while
    # shrinking, and the runtime tells modules apart by their key.
    loaded = load_instrumented(path, f"pathprof_random_{path.stem}_{next(_runs)}")
    infos = loaded.function_infos()
    loaded.execute()
    loaded.snapshot()  # module execution is not compared
    oracle = BlockTraceOracle(infos)
    inputs = data.draw(st.lists(st.sampled_from(INPUTS), min_size=1, max_size=4))
    outcomes = oracle.run(lambda: [_outcome(loaded.module.f, s, n) for s, n in inputs])
    assert outcomes == [_outcome(plain.f, s, n) for s, n in inputs]
    assert not oracle.errors, (oracle.errors, source)
    recorded = loaded.recorded(infos)
    for info in infos:
        name = info.meta["qualname"]
        assert recorded[name] == oracle.paths[name], (name, source)
    sys.modules.pop(loaded.module.__name__, None)


@settings(max_examples=150, deadline=None)
@given(source=functions(), data=st.data())
def test_random_program_profile_equals_source_oracle(
        tmp_path_factory: Any, source: str, data: st.DataObject) -> None:
    """The oracle that knows no CFG traces the plain program; the production build
    runs untraced: the same executions, and the same sorted path counts wherever
    line events tell the paths apart."""
    path = _write(tmp_path_factory.mktemp("random"), source)
    plain = _plain(path)
    loaded = load_instrumented(path, f"pathprof_random_src_{path.stem}_{next(_runs)}",
                               mark_probes=False)
    loaded.execute()
    loaded.snapshot()  # module execution is not compared
    inputs = data.draw(st.lists(st.sampled_from(INPUTS), min_size=1, max_size=4))
    oracle = SourceOracle([str(path)])
    expected = oracle.run(lambda: [_outcome(plain.f, s, n) for s, n in inputs])
    assert [_outcome(loaded.module.f, s, n) for s, n in inputs] == expected
    paths, cuts, _raised, _unattributed = loaded.snapshot()
    (key,) = [k for k in oracle.functions if k[1] == "f"]
    index = next(i for i, meta in enumerate(loaded.metadata["functions"])
                 if meta["qualname"] == "f")
    recorded = sorted([*paths[index].values(), *cuts[index].values()])
    if key not in oracle.not_compared and None not in oracle.not_compared:
        assert sum(recorded) == oracle.executions(key), source
        if oracle.distinguishable(key):
            assert recorded == oracle.counts(key), source
    sys.modules.pop(loaded.module.__name__, None)
