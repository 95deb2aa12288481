"""Random programs (nested loops, try, with, match, raise, break, continue, return)
run on random inputs: pathprof's profile equals the oracles', and the instrumented
program returns and raises exactly what the plain one does, with the same lines in
the frames an exception left."""

from __future__ import annotations

import ast
import hashlib
import itertools
import sys
import types
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ..loading import load_instrumented, program_examples
from ..oracles import BlockTraceOracle
from ..source_oracle import SourceOracle
from .random_programs import PRELUDE, functions, tape

_runs = itertools.count()

#: Inputs per program: (tape seed, n).
INPUTS = [(seed, seed % 3) for seed in range(8)]


def _outcome(f: Any, seed: int, n: int, frames: bool = False) -> tuple[Any, ...]:
    """Call ``f``; a generator is consumed for ``seed % 4`` items (all of them when
    that is 3), then closed. With ``frames``, an exception's outcome holds the lines
    of the frames it left (production builds only: a test build locates probe code
    at a marker line, which a frame can stand at)."""
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
        if frames:
            return "raised", type(err).__name__, _frame_lines(err.__traceback__)
        return "raised", type(err).__name__


def _finally_lines(source: str) -> set[int]:
    """Lines of the source inside a ``finally`` clause."""
    lines: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Try | ast.TryStar) and node.finalbody:
            lines.update(range(node.finalbody[0].lineno, node.finalbody[-1].end_lineno + 1))
    return lines


def _finally_ending_in_a_loop_lines(source: str) -> set[int]:
    """Lines of the ``finally`` clauses whose last statement is a loop or a ``match``."""
    lines: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Try | ast.TryStar) and node.finalbody
                and isinstance(node.finalbody[-1], ast.While | ast.For | ast.Match)):
            lines.update(range(node.finalbody[0].lineno, node.finalbody[-1].end_lineno + 1))
    return lines


def _known_difference(outcomes: list[Any], expected: list[Any], source: str) -> list[Any]:
    """``outcomes`` with the documented differences (docs/guarantees.md) taken out: a
    frame that an exception left after passing a ``finally`` clause stands at the
    clause's last line run, where 3.11 gives the clause's last line in the source; from
    3.12, where the clause ends in a loop or a ``match``, a frame stands at the clause's
    last line before pathprof's code, where plain Python gives the line of the way out
    taken. Both lines must be lines of the clause."""
    in_finally = (_finally_lines(source) if sys.version_info < (3, 12)
                  else _finally_ending_in_a_loop_lines(source))
    kept = []
    for got, want in zip(outcomes, expected, strict=True):
        if got[0] == want[0] == "raised" and len(got[2]) == len(want[2]):
            frames = [
                w if (g[:2] == w[:2] and g[2] in in_finally and w[2] in in_finally) else g
                for g, w in zip(got[2], want[2], strict=True)]
            got = (*got[:2], frames)
        kept.append(got)
    return kept


def _frame_lines(tb: Any) -> list[tuple[str, int | None, int | None]]:
    """Each frame the exception left: its traceback line and the line the frame
    stands at now (``f_lineno``, what pdb and tracers read after the frame ended)."""
    lines = []
    while tb is not None:
        if tb.tb_frame.f_code.co_filename != __file__:
            lines.append((tb.tb_frame.f_code.co_name, tb.tb_lineno, tb.tb_frame.f_lineno))
        tb = tb.tb_next
    return lines


def _write(tmp: Path, source: str) -> Path:
    path = tmp / f"random_{hashlib.sha256(source.encode()).hexdigest()[:12]}.py"
    path.write_text(source, encoding="utf-8")
    return path


def _plain(path: Path) -> types.ModuleType:
    module = types.ModuleType(f"plain_{path.stem}")
    exec(compile(path.read_text(encoding="utf-8"), str(path), "exec", dont_inherit=True),
         module.__dict__)
    return module


@pytest.mark.parametrize("outside", [False, True], ids=["registers-in-frame",
                                                        "registers-outside"])
@settings(max_examples=program_examples(150), deadline=None)
@given(source=functions(), data=st.data())
def test_random_program_profile_equals_block_trace_oracle(
        tmp_path_factory: Any, outside: bool, source: str, data: st.DataObject) -> None:
    """``outside``: every function keeps its registers outside its frame, as those
    whose source can reach their frame do (:mod:`pathprof.python.outside`)."""
    inputs = data.draw(st.lists(st.sampled_from(INPUTS), min_size=1, max_size=4))
    _check_block_trace(tmp_path_factory, outside, source, inputs)


BREAK_ALONE_IN_A_FINALLY_LOOP = PRELUDE + """
def f(c, n):
    x = 0
    while c():
        try:
            if c():
                x += 1
            while c():
                return x
        finally:
            while c():
                break
    return x
"""


@pytest.mark.parametrize("outside", [False, True], ids=["registers-in-frame",
                                                        "registers-outside"])
def test_a_break_alone_in_a_finally_loop(tmp_path_factory: Any, outside: bool) -> None:
    """Found by the property test on 3.12 (registers outside): the ``break`` and the
    loop's false test both lead to the end of the ``finally``; the oracle tells them
    apart by the break's jump, which it used to ignore as bookkeeping."""
    _check_block_trace(tmp_path_factory, outside, BREAK_ALONE_IN_A_FINALLY_LOOP, [(1, 1)])


def _check_block_trace(tmp_path_factory: Any, outside: bool, source: str,
                       inputs: list[tuple[int, int]]) -> None:
    path = _write(tmp_path_factory.mktemp("random"), source)
    plain = _plain(path)
    # A module name of its own per example: hypothesis runs one source again while
    # shrinking, and the runtime tells modules apart by their key.
    loaded = load_instrumented(path, f"pathprof_random_{path.stem}_{next(_runs)}",
                               registers_outside=outside)
    infos = loaded.function_infos()
    loaded.execute()
    loaded.snapshot()  # module execution is not compared
    oracle = BlockTraceOracle(infos)
    outcomes = oracle.run(lambda: [_outcome(loaded.module.f, s, n) for s, n in inputs])
    assert outcomes == [_outcome(plain.f, s, n) for s, n in inputs]
    assert not oracle.errors, (oracle.errors, source)
    recorded = loaded.recorded(infos)
    for info in infos:
        name = info.meta.qualname
        assert recorded[name] == oracle.paths[name], (name, source)
    sys.modules.pop(loaded.module.__name__, None)


@pytest.mark.parametrize("conditions", [False, True], ids=["paths", "with-conditions"])
@settings(max_examples=program_examples(150), deadline=None)
@given(source=functions(), data=st.data())
def test_random_program_profile_equals_source_oracle(
        tmp_path_factory: Any, conditions: bool, source: str, data: st.DataObject) -> None:
    """The oracle that knows no CFG traces the plain program; the production build
    runs untraced: the same executions, and the same sorted path counts wherever
    line events tell the paths apart. ``conditions``: each decision's vectors counted
    too (issue 39), which must change neither what the program does (its tracebacks
    and ``f_lineno`` included) nor its paths."""
    path = _write(tmp_path_factory.mktemp("random"), source)
    plain = _plain(path)
    loaded = load_instrumented(path, f"pathprof_random_src_{path.stem}_{next(_runs)}",
                               mark_probes=False, conditions=conditions)
    loaded.execute()
    loaded.snapshot()  # module execution is not compared
    inputs = data.draw(st.lists(st.sampled_from(INPUTS), min_size=1, max_size=4))
    oracle = SourceOracle([str(path)])
    expected = oracle.run(lambda: [_outcome(plain.f, s, n, True) for s, n in inputs])
    outcomes = [_outcome(loaded.module.f, s, n, True) for s, n in inputs]
    assert _known_difference(outcomes, expected, source) == expected
    paths, cuts, _raised, _unattributed = loaded.snapshot()
    (key,) = [k for k in oracle.functions if k[1] == "f"]
    index = next(i for i, meta in enumerate(loaded.metadata.functions)
                 if meta.qualname == "f")
    recorded = sorted([*paths[index].values(), *cuts[index].values()])
    if key not in oracle.not_compared and None not in oracle.not_compared:
        assert sum(recorded) == oracle.executions(key), source
        if oracle.distinguishable(key):
            assert recorded == oracle.counts(key), source
    sys.modules.pop(loaded.module.__name__, None)


def _positions(directory: Path, name: str, inputs: list[tuple[int, int]], *,
               exact: bool) -> tuple[int, list[Any]]:
    """Run ``f`` of module ``name`` in ``directory`` on ``inputs`` under subpath
    sampling (every block observed with ``exact``; otherwise counted down by path
    ends alone, with a period no run reaches): the stream's length and the outcomes."""
    from pathprof.subpaths import SubpathSampling

    sampling = SubpathSampling(source=[str(directory)], period=1.0 if exact else 1e12,
                               seed=0, exact=exact, cache=False)
    sys.modules.pop(name, None)
    sys.path.insert(0, str(directory))
    sampling.start()
    try:
        module = __import__(name)
        outcomes = [_outcome(module.f, s, n) for s, n in inputs]
    finally:
        sampling.stop()
        sys.path.remove(str(directory))
        sys.modules.pop(name, None)
    assert sampling.profiler.failures == 0
    return int(sampling.summary()["positions"]), outcomes


@settings(max_examples=program_examples(40), deadline=None)
@given(source=functions(), data=st.data())
def test_random_program_countdown_is_the_stream_exact_observation_sees(
        tmp_path_factory: Any, source: str, data: st.DataObject) -> None:
    """``pathprof hot``'s path ends count their blocks down, a looked-up length or one
    folded into the code where every path ending there has it
    (:attr:`~pathprof.python.plan.FunctionPlan.end_lengths`): over a random program's
    run, the blocks counted down are the blocks the observer saw, path by path, and
    the program does what it does without pathprof."""
    directory = tmp_path_factory.mktemp("random_osp")
    path = _write(directory, source)
    plain = _plain(path)
    inputs = data.draw(st.lists(st.sampled_from(INPUTS), min_size=1, max_size=4))
    expected = [_outcome(plain.f, s, n) for s, n in inputs]
    seen, observed = _positions(directory, path.stem, inputs, exact=True)
    counted, skipped = _positions(directory, path.stem, inputs, exact=False)
    assert observed == skipped == expected
    ended = all(outcome[0] == "returned" or (outcome[0] == "yielded" and s % 4 == 3)
                for outcome, (s, _n) in zip(expected, inputs, strict=True))
    if ended:
        assert counted == seen, source
    else:
        # A path an exception carries out of its frame, or a generator's closed at a
        # yield, is in the stream as far as observation had sent it out (before a
        # with's exit, or a generator's call), and never counted down
        # (docs/commands/hot.md, "Limits").
        assert counted <= seen, source
