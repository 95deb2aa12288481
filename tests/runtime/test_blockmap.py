"""pathprof.runtime.blockmap: which block (and which piece of it) an instruction of a
function's code belongs to, and how an exception there leaves it ("cut", "raise",
"return-value", "return-exit", "continue-exit"). Each case compiles a small function
with the running Python and reads the expected block from its contract by source line
or by the parts a ``for`` or ``with`` names (``Compound``), never from the map; the
instructions are picked by opcode and line, so the cases hold on every Python whose
compiler places a ``for``'s or ``with``'s bookkeeping differently."""

from __future__ import annotations

import dis
import gc
import itertools
import textwrap
from types import CodeType

import pytest

from pathprof.contract import FunctionInfo, Role
from pathprof.python.instrument import instrument_source
from pathprof.runtime.blockmap import BlockMap, code_positions

FILE = "/blockmap/example.py"
_keys = itertools.count()
#: python.nodes.PROBE_MARK_LINE: where a test build places pathprof's own code
PROBE_MARK_LINE = (1 << 30) - 1


def _mapped(source: str, *, instrumented: bool = False
            ) -> tuple[FunctionInfo, CodeType, BlockMap]:
    """The contract of the first function of ``source``, its code (the program's own,
    or with ``instrumented`` the test build's, probes on a marker line) and its map."""
    source = textwrap.dedent(source)
    module = instrument_source(source, FILE, module_key=f"blockmap:{next(_keys)}",
                               mark_probes=instrumented)
    function = module.metadata.functions[0]
    compiled = (module.compile(FILE) if instrumented
                else compile(source, FILE, "exec", dont_inherit=True))
    code = next(c for c in compiled.co_consts
                if isinstance(c, CodeType) and c.co_name == function.qualname)
    return function, code, BlockMap(function, code)


def _line(instruction: dis.Instruction) -> int | None:
    return instruction.positions.lineno if instruction.positions else None


def _at(code: CodeType, line: int) -> list[dis.Instruction]:
    return [i for i in dis.get_instructions(code) if _line(i) == line]


def _block_of(function: FunctionInfo, line: int, role: str | None = None
              ) -> tuple[int, int]:
    """(block, piece index) of the one piece that starts at ``line`` (with ``role``)."""
    found = [(b, p) for b, block in enumerate(function.blocks)
             for p, piece in enumerate(block.pieces)
             if piece.line == line and (role is None or piece.role == role)]
    assert len(found) == 1, found
    return found[0]


def _role_index(function: FunctionInfo, block: int, role: str) -> int:
    (index,) = [i for i, p in enumerate(function.blocks[block].pieces) if p.role == role]
    return index


IF_SOURCE = """\
    def f(x):
        y = 0
        if x:
            y = 1 // x
        return y
"""


def test_a_statement_instruction_belongs_to_its_statement_piece() -> None:
    function, code, blockmap = _mapped(IF_SOURCE)
    block, piece = _block_of(function, 4)  # y = 1 // x: the block of the if's body
    instructions = _at(code, 4)
    assert len(instructions) >= 3
    for instruction in instructions:
        assert blockmap.locate(instruction.offset) == (block, "cut"), instruction
        assert blockmap.locate_piece(instruction.offset) == (block, piece, "cut")


def test_an_if_test_and_its_jump_belong_to_the_tests_piece_not_the_statement_before() -> None:
    function, code, blockmap = _mapped(IF_SOURCE)
    statement = _block_of(function, 2)  # y = 0
    test = _block_of(function, 3, Role.TEST)
    assert statement[0] == test[0]
    assert (statement[1], test[1]) == (0, 1)
    jumps = [i for i in _at(code, 3) if "IF" in i.opname or i.opname.startswith("TO_BOOL")]
    assert jumps
    for instruction in _at(code, 3):
        assert blockmap.locate_piece(instruction.offset) == (test[0], test[1], "cut")
    for instruction in _at(code, 2):
        assert blockmap.locate_piece(instruction.offset) == (statement[0], 0, "cut")


def test_a_return_statement_is_where_a_return_value_is_computed() -> None:
    function, code, blockmap = _mapped(IF_SOURCE)
    block, piece = _block_of(function, 5)
    assert function.blocks[block].pieces[piece].flags == "return"
    for instruction in _at(code, 5):
        assert blockmap.locate_piece(instruction.offset) == (block, piece, "return-value")


def test_a_raise_statement_raises_on_its_own_and_its_argument_is_cut() -> None:
    function, code, blockmap = _mapped("""\
        def f(x):
            raise ValueError(x)
    """)
    block, piece = _block_of(function, 2)
    raises = [i for i in _at(code, 2) if i.opname == "RAISE_VARARGS"]
    others = [i for i in _at(code, 2) if i.opname != "RAISE_VARARGS"]
    assert len(raises) == 1
    assert others
    assert blockmap.locate_piece(raises[0].offset) == (block, piece, "raise")
    for instruction in others:  # the call ValueError(x) raising is a cut path
        assert blockmap.locate(instruction.offset) == (block, "cut")


def test_offsets_outside_the_code_and_code_of_no_piece_are_nowhere() -> None:
    _function, code, blockmap = _mapped(IF_SOURCE)
    assert blockmap.locate(-1) is None  # no traceback entry in the frame
    assert blockmap.locate_piece(len(code.co_code)) is None
    assert blockmap.locate(len(code.co_code) + 40) is None
    first = next(iter(dis.get_instructions(code)))
    assert first.opname == "RESUME"  # at the def line, which no piece holds
    assert blockmap.locate(first.offset) is None


FOR_SOURCE = """\
    def f(n, items):
        total = 0
        for i in range(n):
            total = total + sum(v for v in items)
        return total
"""


def test_a_loops_iterable_and_get_iter_belong_to_the_block_before_the_loop() -> None:
    function, code, blockmap = _mapped(FOR_SOURCE)
    (loop,) = [c for c in function.compounds if c.kind == "for"]
    assert loop.for_iter is not None
    expected = (loop.for_iter, _role_index(function, loop.for_iter, Role.FOR_ITER), "cut")
    assert loop.iter is not None
    get_iter = [i for i in dis.get_instructions(code)
                if i.opname == "GET_ITER" and _line(i) == 3]
    assert len(get_iter) == 1
    # the code of range(n), up to the GET_ITER (the loop's exhaustion after it may be
    # located at the iterable too, 3.13)
    iterable = [i for i in _at(code, 3)
                if i.offset < get_iter[0].offset and i.positions is not None
                and i.positions.col_offset is not None
                and i.positions.col_offset >= loop.iter.col
                and i.positions.end_col_offset is not None
                and i.positions.end_col_offset <= loop.iter.end_col]
    calls = [i for i in iterable if i.opname.startswith(("CALL", "PRECALL"))]
    assert calls  # range(n) is called there
    for instruction in [*iterable, *get_iter]:
        assert blockmap.locate_piece(instruction.offset) == expected, instruction


def test_a_loops_step_belongs_to_its_header() -> None:
    function, code, blockmap = _mapped(FOR_SOURCE)
    (loop,) = [c for c in function.compounds if c.kind == "for"]
    assert loop.for_next is not None
    expected = (loop.for_next, _role_index(function, loop.for_next, Role.FOR_NEXT), "cut")
    steps = [i for i in dis.get_instructions(code) if i.opname in ("FOR_ITER", "END_FOR")
             and _line(i) == 3]
    assert steps
    for instruction in steps:
        assert blockmap.locate_piece(instruction.offset) == expected


def test_a_generator_expressions_get_iter_in_the_body_belongs_to_its_statement() -> None:
    function, code, blockmap = _mapped(FOR_SOURCE)
    block, piece = _block_of(function, 4)
    get_iter = [i for i in _at(code, 4) if i.opname == "GET_ITER"]
    assert len(get_iter) == 1  # iter(items), handed to the generator expression
    assert blockmap.locate_piece(get_iter[0].offset) == (block, piece, "cut")


def test_an_extended_arg_is_located_as_the_instruction_it_prefixes() -> None:
    body = "".join(f"        y = y + {i}\n" for i in range(150))  # a jump over them all
    function, code, blockmap = _mapped(f"def f(items):\n    y = 0\n    for i in items:\n"
                                       f"{body}    return y\n")
    (loop,) = function.compounds
    ops = code.co_code
    prefixed = [offset for offset in range(0, len(ops) - 2, 2)
                if dis.opname[ops[offset]] == "EXTENDED_ARG"
                and dis.opname[ops[offset + 2]] == "FOR_ITER"]
    assert len(prefixed) == 1
    assert blockmap.locate(prefixed[0]) == (loop.for_next, "cut")


WITH_SOURCE = """\
    def f(cm):
        with cm as a:
            y = 1
        return y
"""


def test_a_with_entry_and_its_fall_through_exit_belong_to_their_blocks() -> None:
    function, code, blockmap = _mapped(WITH_SOURCE)
    (with_,) = function.compounds
    assert with_.with_enter is not None
    assert with_.with_exit is not None
    enter = (with_.with_enter, _role_index(function, with_.with_enter, Role.WITH_ENTER))
    leave = (with_.with_exit, _role_index(function, with_.with_exit, Role.WITH_EXIT))
    body = [i.offset for i in _at(code, 3)]
    before = [i for i in _at(code, 2) if i.offset < min(body)]
    after = [i for i in _at(code, 2) if i.offset > max(body)]
    assert before
    assert after
    assert [i for i in before if blockmap.enters_with(i.offset)]
    for instruction in before:  # cm, its __enter__, the binding of a
        assert blockmap.locate_piece(instruction.offset) == (*enter, "cut"), instruction
    for instruction in after:  # its __exit__ on the way out, and the handler's code
        assert blockmap.locate_piece(instruction.offset) == (*leave, "cut"), instruction
    assert enter[0] != leave[0]


def test_a_withs_exit_after_a_return_is_the_returns_way_out() -> None:
    function, code, blockmap = _mapped("""\
        def f(cm):
            with cm:
                return 5
            return 6
    """)
    block, piece = _block_of(function, 3)
    returning = [i.offset for i in _at(code, 3)]
    exits = [i for i in dis.get_instructions(code)
             if _line(i) == 2 and max(returning) < i.offset
             and i.opname.startswith(("CALL", "PRECALL"))]
    first_exit = min(i.offset for i in exits)  # the __exit__(None, None, None) it runs
    for offset in returning:
        assert blockmap.locate_piece(offset) == (block, piece, "return-value")
    assert blockmap.locate_piece(first_exit) == (block, piece, "return-exit")


def test_a_withs_exit_after_continue_and_after_break_are_their_ways_out() -> None:
    function, code, blockmap = _mapped("""\
        def f(items, cm):
            for i in items:
                with cm:
                    if i:
                        continue
                    if i is None:
                        break
                    y = i
            return 0
    """)
    for line, how in ((5, "continue-exit"), (7, "cut")):
        block, piece = _block_of(function, line)
        own = [i.offset for i in _at(code, line)]  # the statement's own (a NOP)
        later = [i.offset for i in dis.get_instructions(code)
                 if i.offset > max(own) and _line(i) not in (None, 3)]
        calls = [i.offset for i in dis.get_instructions(code)
                 if max(own) < i.offset < min(later) and _line(i) == 3
                 and i.opname.startswith(("CALL", "PRECALL"))]
        assert calls, line  # the with's __exit__ on the way out
        for offset in calls:
            assert blockmap.locate_piece(offset) == (block, piece, how), line


def test_each_item_of_a_with_enters_it_and_belongs_to_its_entry_block() -> None:
    function, code, blockmap = _mapped("""\
        def f(a, b):
            with a as x, b as y:
                z = 1
            return z
    """)
    (with_,) = function.compounds
    entries = [offset for offset in range(0, len(code.co_code), 2)
               if blockmap.enters_with(offset)]
    assert len(entries) == 2
    for offset in entries:
        assert blockmap.locate(offset) == (with_.with_enter, "cut")


def test_an_async_withs_entry_belongs_to_its_entry_block() -> None:
    function, code, blockmap = _mapped("""\
        async def f(cm):
            async with cm:
                z = 1
            return z
    """)
    (with_,) = function.compounds
    assert with_.is_async
    entries = [offset for offset in range(0, len(code.co_code), 2)
               if blockmap.enters_with(offset)]
    assert len(entries) == 1
    assert blockmap.locate(entries[0]) == (with_.with_enter, "cut")


def test_the_innermost_with_is_the_compound_of_a_nested_span() -> None:
    function, _code, blockmap = _mapped("""\
        def f(a, b):
            with a:
                with b:
                    z = 1
            return z
    """)
    outer, inner = sorted((c for c in function.compounds if c.kind == "with"),
                          key=lambda c: c.span.line)
    assert blockmap.compound_at((4, 12, 4, 17), "with") is inner  # z = 1
    assert blockmap.compound_at((3, 8, 4, 17), "with") is inner
    assert blockmap.compound_at((2, 4, 4, 17), "with") is outer
    assert blockmap.compound_at((5, 4, 5, 12), "with") is None  # return z
    assert blockmap.compound_at((4, 12, 4, 17), "for") is None


def test_piece_index_finds_the_role_and_span_asked_for_else_the_first() -> None:
    function, _code, blockmap = _mapped(IF_SOURCE)
    block, piece = _block_of(function, 3, Role.TEST)
    span = function.blocks[block].pieces[piece].span
    assert piece == 1
    assert blockmap.piece_index(block, Role.TEST) == 1
    assert blockmap.piece_index(block, Role.TEST, span) == 1
    assert blockmap.piece_index(block, Role.TEST, (9, 9, 9, 9)) == 0  # no such span
    assert blockmap.piece_index(block, Role.FOR_NEXT) == 0  # no such role


def test_pathprofs_own_code_runs_on_the_edge_out_of_the_code_before_it() -> None:
    function, code, blockmap = _mapped("""\
        def g(x):
            if x:
                y = 1
            else:
                y = 2
            return y
    """, instrumented=True)
    block, piece = _block_of(function, 5)  # y = 2, then its probe
    instructions = list(dis.get_instructions(code))
    last = max(i for i, ins in enumerate(instructions) if _line(ins) == 5)
    probes = list(itertools.takewhile(lambda ins: _line(ins) == PROBE_MARK_LINE,
                                      instructions[last + 1:]))
    assert probes
    for instruction in probes:
        assert blockmap.locate_piece(instruction.offset) == (block, piece, "cut")


def test_a_map_is_of_the_code_it_was_made_for() -> None:
    function, code, blockmap = _mapped(IF_SOURCE)
    assert blockmap.code is code
    assert blockmap.blocks == function.blocks
    assert blockmap.positions == list(code.co_positions())
    assert blockmap.opname(0) == "RESUME"


@pytest.mark.parametrize("collecting", [True, False], ids=["collector-on", "collector-off"])
def test_code_positions_are_co_positions_and_leave_the_collector_as_it_was(
        collecting: bool) -> None:
    _function, code, _blockmap = _mapped(FOR_SOURCE)
    was = gc.isenabled()
    try:
        if not collecting:
            gc.disable()
        positions = code_positions(code)
        assert gc.isenabled() is collecting
    finally:
        if was:
            gc.enable()
    assert positions == list(code.co_positions())
    assert len(positions) == len(code.co_code) // 2
