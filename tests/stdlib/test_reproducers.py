"""Minimal reproducers of the pathprof bugs the stdlib differential tests found.

All were fixed while these tests were written and stay as regression tests: a
generator expression's GET_ITER in a loop body and 3.11's if-statement jump
(commit f7c073c); cut paths lost at the recursion limit (commit 0e8a11f); and two
regressions of those fixes, the if-statement rule applied to every instruction
located at a whole statement, and exit notes that no longer followed
``__context__`` (commit 69975d8).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from ..loading import load_instrumented
from ..oracles import BlockTraceOracle, profile_paths


def _run(tmp_path: Path, name: str, source: str, call: str, *args: Any) -> tuple[Any, ...]:
    """Instrument ``source`` (test build) and call ``call(*args)``, which must
    raise, under the oracle; return the oracle, the functions, and what pathprof
    recorded: paths, cuts, calls ended by an exception, unattributed exceptions."""
    path = tmp_path / f"{name}.py"
    path.write_text(source, encoding="utf-8")
    loaded = load_instrumented(path, f"pathprof_repro_{name}")
    infos = loaded.function_infos()
    loaded.execute()
    loaded.snapshot()

    def run() -> None:
        with pytest.raises(Exception):  # noqa: B017, PT011 -- whatever it raises
            getattr(loaded.module, call)(*args)

    oracle = BlockTraceOracle(infos)
    oracle.run(run)
    assert not oracle.errors, oracle.errors
    paths, cuts, raised, unattributed = loaded.snapshot()[:4]
    return oracle, infos, paths, cuts, raised, unattributed


GENEXPR_IN_LOOP = """\
def sums(rows):
    out = []
    for row in rows:
        out.append(sum(v for v in row))
    return out
"""


def test_genexpr_iterable_raising_in_loop_body(tmp_path: Path) -> None:
    # BlockMap.locate gave every GET_ITER inside a for statement's span to the
    # loop's for-iter block, also that of a generator expression (or, 3.12+, an
    # inlined comprehension) in the loop's body. Where it raised, the runtime
    # recorded the cut at the block before the loop, cut (2, 2) instead of one in
    # block 4: a prefix that does not exist ("no path prefix ends at block 2 with
    # value 2"), on 3.11, 3.12 and 3.13. Found by calendar's
    # TextCalendar.formatyear (generator expressions in a for body; nothing raises
    # there, but the oracle, which maps instructions with the same BlockMap,
    # reported moves 4 -> 2 -> 4 that the CFG does not have).
    oracle, infos, paths, cuts, _raised, unattributed = _run(
        tmp_path, "genexpr_in_loop", GENEXPR_IN_LOOP, "sums", [[1], 5])
    meta = infos[0].meta
    body = next(b for b, block in enumerate(meta.blocks)
                if block.pieces and block.pieces[0].line == 4)
    # The oracle: the first iteration's path, then the second's, cut in the body.
    assert oracle.paths["sums"] == {((2, 3, body), "entry", "backedge"): 1,
                                    ((3, body), "loop-header", "cut"): 1}
    assert not any(unattributed)
    assert [block for block, _value in cuts[0]] == [body]
    recorded = profile_paths(meta, paths[0], cuts[0], infos[0].visible)
    assert recorded == oracle.paths["sums"]


FINALLY_LOOP = """\
def finally_loop(flag, n):
    x = 0
    try:
        if flag:
            return x
    finally:
        for i in range(n):
            x += 1
    return x
"""


@pytest.mark.parametrize("flag", [True, False])
def test_iterable_of_a_loop_in_a_copied_finally(tmp_path: Path, flag: bool) -> None:
    # The compiler copies a finally's body (one copy per way in). BlockMap took
    # every instruction located at a loop's iterable after the loop's *first*
    # GET_ITER to be the loop's step: in the later copies the iterable's own CALL
    # went to the loop header's block. An exception from `range(n)` there was
    # recorded as cut in the header, a path through a header that never ran; the
    # block trace oracle, mapping with the same BlockMap, saw the first copy's
    # header fall back to the finally's start. Found by the random programs of
    # tests/python/test_random_programs.py.
    oracle, infos, paths, cuts, _raised, unattributed = _run(
        tmp_path, f"finally_loop_{flag}", FINALLY_LOOP, "finally_loop", flag, "bad")
    meta = infos[0].meta
    finally_start = next(b for b, block in enumerate(meta.blocks)
                         if block.kind == "finally")
    assert not any(unattributed)
    # Cut where range(n) raised, in the finally's first block, in either copy.
    assert [block for block, _value in cuts[0]] == [finally_start]
    recorded = profile_paths(meta, paths[0], cuts[0], infos[0].visible)
    assert recorded == oracle.paths["finally_loop"]


class BadBool:
    def __bool__(self) -> bool:
        raise ZeroDivisionError


BOOL_RAISES = """\
def choose(flag):
    if flag:
        y = 1
    else:
        y = 2
    return y
"""


def test_if_test_whose_bool_raises(tmp_path: Path) -> None:
    # 3.11 locates POP_JUMP_FORWARD_IF_FALSE at the whole if statement, not at
    # its test: when the test's __bool__ raised there, BlockMap.locate found no
    # piece, the exception was unattributed and the cut path (the test's block,
    # from entry) was not recorded. Found on 3.11 by test_json's
    # TestEncode.test_bad_bool_args (`if self.check_circular:` and `if
    # self.ensure_ascii:` in JSONEncoder.iterencode).
    oracle, infos, paths, cuts, _raised, unattributed = _run(
        tmp_path, "bool_raises", BOOL_RAISES, "choose", BadBool())
    meta = infos[0].meta
    test_block = next(b for b, block in enumerate(meta.blocks)
                      if block.pieces and block.pieces[0].role == "test")
    assert oracle.paths["choose"] == {((test_block,), "entry", "cut"): 1}
    assert unattributed[0] == 0
    recorded = profile_paths(meta, paths[0], cuts[0], infos[0].visible)
    assert recorded == oracle.paths["choose"]


TRY_WITH_TEST_IN_HANDLER = """\
NOT_A_CLASS = 5


def parse(text, fallback):
    try:
        value = int(text)
    except ValueError:
        if fallback:
            value = 0
        else:
            raise
    return value


def bad_handler(text, flag):
    try:
        value = int(text)
    except NOT_A_CLASS:
        if flag:
            value = 0
        else:
            value = 1
    return value
"""

def test_try_whose_handler_starts_with_a_test(tmp_path: Path) -> None:
    # f7c073c's BlockMap._test_of_statement gave any instruction located in no
    # piece to the first test piece inside its location, not only the
    # conditional jump of an if/while on 3.11: the NOP of `try:` (located at the
    # whole try statement) went to the `if` test that starts the handler's body,
    # on 3.11, 3.12 and 3.13. The oracle reported "parse: no CFG edge from block
    # 3 to block 2" (the try's NOP, then the try body) and paths (3, 2, 6) and
    # (3, 2) where pathprof recorded (2, 6) and (2,). Found by the stdlib tests:
    # json.encoder's py_encode_basestring_ascii.<locals>.replace,
    # statistics._convert, tomllib._parser.skip_until.
    path = tmp_path / "try_test_handler.py"
    path.write_text(TRY_WITH_TEST_IN_HANDLER, encoding="utf-8")
    loaded = load_instrumented(path, "pathprof_repro_try_test_handler")
    infos = loaded.function_infos()
    loaded.execute()
    loaded.snapshot()
    oracle = BlockTraceOracle(infos)
    oracle.run(lambda: (loaded.module.parse("1", True), loaded.module.parse("x", True)))
    assert not oracle.errors, oracle.errors
    recorded = loaded.recorded(infos)
    assert recorded["parse"] == oracle.paths["parse"]


def test_except_clause_match_raising(tmp_path: Path) -> None:
    # Matching the except clause raises (TypeError: the clause names no exception
    # class). With f7c073c's rule the instruction (CHECK_EXC_MATCH, located at the
    # whole handler) went to the handler's `if` test: cut (3, 0), a prefix that
    # does not exist ("no path prefix ends at block 3 with value 0"), instead of
    # cut (2, 0) at the statement that raised. And the exit notes of 0e8a11f kept
    # only the exception's tb_lasti, without ModuleState.locate's step to
    # __context__: with the rule narrowed, the exception was unattributed.
    path = tmp_path / "bad_handler.py"
    path.write_text(TRY_WITH_TEST_IN_HANDLER, encoding="utf-8")
    loaded = load_instrumented(path, "pathprof_repro_bad_handler", mark_probes=False)
    loaded.execute()
    loaded.snapshot()
    with pytest.raises(TypeError, match="do not inherit from BaseException"):
        loaded.module.bad_handler("x", True)
    index = next(i for i, meta in enumerate(loaded.metadata.functions)
                 if meta.qualname == "bad_handler")
    meta = loaded.metadata.functions[index]
    line = meta.first_line + 2  # value = int(text)
    body = next(b for b, block in enumerate(meta.blocks)
                if block.pieces and block.pieces[0].line == line)
    paths, cuts, _raised, unattributed = loaded.snapshot()[:4]
    assert unattributed[index] == 0
    assert [block for block, _value in cuts[index]] == [body]
    every_block = frozenset(range(len(meta.blocks)))
    assert profile_paths(meta, paths[index], cuts[index], every_block) == {
        ((0, body), "entry", "cut"): 1}


RECURSION = """\
def down(n):
    if n == 0:
        return 0
    return down(n - 1) + 1
"""


def test_cut_paths_at_the_recursion_limit(tmp_path: Path) -> None:
    # Near the recursion limit the runtime's own exception bookkeeping (leave ->
    # _record -> locate) raised RecursionError, which it swallowed and counted as
    # unattributed: the cut paths of the deepest frames were lost (13 of 998 frames
    # on 3.11, 5 of 998 on 3.12 and 3.13); the program's exception was unchanged.
    # Found by test_json's test_recursion, untraced (unattributed in JSONObject,
    # JSONArray, _scan_once, _iterencode_list, _iterencode_dict, _iterencode).
    # No oracle here: a trace function cannot run at the limit either.
    path = tmp_path / "recursion.py"
    path.write_text(RECURSION, encoding="utf-8")
    loaded = load_instrumented(path, "pathprof_repro_recursion", mark_probes=False)
    loaded.execute()
    loaded.snapshot()
    with pytest.raises(RecursionError):
        loaded.module.down(10**6)
    paths, cuts, raised, unattributed = loaded.snapshot()[:4]
    if sys.version_info >= (3, 12):
        assert paths == [{}]  # no call returned
    else:
        # 3.11: the frame at the limit cannot note its exit (C calls count against the
        # limit there), so its early-counted return stays (docs/python.md).
        assert paths == [{1: 1}]
    assert raised[0] > 0
    assert unattributed == [0]
    assert sum(cuts[0].values()) == raised[0]  # every noted frame's path was cut
