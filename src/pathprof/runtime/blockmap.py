"""Which block of an instrumented function an instruction belongs to.

Used by :mod:`pathprof.runtime` when an exception cuts a path (the traceback tells
which instruction raised), and by the test suite's instruction-trace oracle.
Standard library only.

An instruction's source position usually falls inside exactly one piece of one
block. The exceptions are the parts of ``for`` and ``with`` statements that CPython
locates at the whole statement (3.11, 3.12) or at the iterable / context manager
(3.13, 3.14): there the opcode decides -- ``GET_ITER`` belongs to the block before
the loop, ``FOR_ITER`` to the loop's header, ``BEFORE_WITH`` (3.14: ``LOAD_SPECIAL
__enter__``) to the block that enters the ``with``, and the ``__exit__`` call after
it to the block that leaves: the ``return``/``break``/``continue`` whose code
precedes it, or else the block after the ``with``.
"""

from __future__ import annotations

import gc
import opcode
from types import CodeType

from pathprof.contract import Compound, FunctionInfo, Role

__all__ = ["BlockMap", "code_positions"]

Span = tuple[int, int, int, int]

#: Line of code inserted by pathprof in test builds (python.nodes.PROBE_MARK_LINE).
_PROBE_MARK_LINE = (1 << 30) - 1

_ITER_OPS = {"GET_ITER", "GET_AITER"}
_ENTER_OPS = {"BEFORE_WITH", "BEFORE_ASYNC_WITH"}
#: 3.14 has no BEFORE_WITH: ``LOAD_SPECIAL`` fetches ``__enter__`` (oparg 0) or
#: ``__aenter__`` (oparg 2) and a CALL follows (CPython's ``SPECIAL___ENTER__``...).
_LOAD_SPECIAL = opcode.opmap.get("LOAD_SPECIAL")
_ENTER_SPECIALS = {0, 2}
#: The opcodes of a for loop's step, never of its iterable's code.
#: Instructions after which the code does not run on into the next one: a with's
#: exit code just after one is not that statement's way out of the with.
_NO_FALL_THROUGH = {"RETURN_VALUE", "RETURN_CONST", "JUMP_FORWARD", "JUMP_BACKWARD",
                    "JUMP_BACKWARD_NO_INTERRUPT", "JUMP", "JUMP_NO_INTERRUPT", "RERAISE",
                    "RAISE_VARARGS"}
_STEP_OPS = {"FOR_ITER", "END_FOR", "POP_ITER", "GET_ANEXT", "END_ASYNC_FOR"}


def code_positions(code: CodeType) -> list[tuple[int | None, ...]]:
    """``list(code.co_positions())``, made with the garbage collector paused (if it
    runs): a big function's tens of thousands of tuples, made at once in a big
    program, set off collection after collection as they are made (on 3.14, in
    tomlkit's test suite, 1 µs a position; 60 ns alone). Nothing of the program runs
    meanwhile (one C call), and the collector runs again right after."""
    if not gc.isenabled():
        return list(code.co_positions())
    gc.disable()
    try:
        return list(code.co_positions())
    finally:
        gc.enable()


def _contains(outer: Span, inner: Span) -> bool:
    return (outer[0], outer[1]) <= (inner[0], inner[1]) and (inner[2], inner[3]) <= (
        outer[2], outer[3])


def _block(block: int | None) -> int:
    """A compound's part that the CFG builder always makes (a for's step, a with's
    entry and exit blocks)."""
    assert block is not None
    return block


def _size(span: Span) -> tuple[int, int]:
    return (span[2] - span[0], (span[3] - span[1]) if span[2] == span[0] else span[3])


class BlockMap:
    """Maps instruction offsets of one function's code object to its blocks."""

    def __init__(self, function: FunctionInfo, code: CodeType) -> None:
        pieces = []
        self.blocks = function.blocks
        for block_id, block in enumerate(self.blocks):
            for index, (line, col, end_line, end_col, role, flags) in enumerate(block.pieces):
                if role == Role.WITH_EXIT:
                    continue  # located by the with rules below
                span = (line, col, end_line, end_col)
                pieces.append((span, block_id, role, flags, index))
        pieces.sort(key=lambda p: _size(p[0]))
        self.pieces = pieces
        self.compounds = function.compounds
        self.code = code
        self.positions = code_positions(code)
        self.ops = code.co_code
        self._enter_offsets: dict[int, list[tuple[Span, int]]] = {}
        self._all_enters: list[tuple[Span, int]] | None = None
        #: for the subpath stream: offset of a call -> where the frame stands then
        #: (:func:`pathprof.measure.subpaths._call_site`), worked out once
        self.call_sites: dict[int, tuple[int, int, str] | None] = {}

    # -- helpers ------------------------------------------------------------

    def opname(self, offset: int) -> str:
        return opcode.opname[self.ops[offset]]

    def enters_with(self, offset: int) -> bool:
        """Whether the instruction at ``offset`` starts a with item's ``__enter__``
        (``BEFORE_WITH`` up to 3.13, ``LOAD_SPECIAL __enter__`` from 3.14)."""
        op = self.ops[offset]
        if op == _LOAD_SPECIAL:
            return self.ops[offset + 1] in _ENTER_SPECIALS
        return opcode.opname[op] in _ENTER_OPS

    def position(self, offset: int) -> Span | None:
        line, end_line, col, end_col = self.positions[offset // 2]
        if line is None or line < 0 or line == _PROBE_MARK_LINE:
            return None
        return (line, col if col is not None else 0, end_line if end_line is not None else line,
                end_col if end_col is not None else 1 << 30)

    def piece_at(self, span: Span) -> tuple[Span, int, str, str, int] | None:
        for piece in self.pieces:
            if _contains(piece[0], span):
                return piece
        return None

    def compound_at(self, span: Span, kind: str) -> Compound | None:
        """Innermost compound of ``kind`` whose whole span contains ``span``."""
        candidates = [c for c in self.compounds if c.kind == kind and _contains(c.span, span)]
        return min(candidates, key=lambda c: _size(c.span), default=None)

    # -- the mapping ----------------------------------------------------------

    def locate(self, offset: int) -> tuple[int, str] | None:
        """``(block, how)`` for the instruction at ``offset``, or None. ``how`` is
        "raise" for a raise statement's own raise, "return-exit" or "continue-exit"
        for a with's exit code on the way out of a return or continue, else "cut"."""
        located = self.locate_piece(offset)
        return None if located is None else (located[0], located[2])

    def locate_piece(self, offset: int) -> tuple[int, int, str] | None:
        """``(block, piece, how)``: as :meth:`locate`, and which piece of the block
        (its index in the block's pieces) the instruction belongs to. An offset
        outside the code (-1: the exception left no traceback entry in the frame)
        is None."""
        if not 0 <= offset < len(self.ops):
            return None
        while self.opname(offset) == "EXTENDED_ARG" and offset + 2 < len(self.ops):
            offset += 2  # a prefix of the next instruction: the two execute as one
        span = self.position(offset)
        if span is None:
            # An instruction pathprof inserted (no location): it runs on the edge
            # out of the code before it.
            for back in range(offset - 2, -1, -2):
                span = self.position(back)
                if span is not None:
                    offset = back
                    break
            else:
                return None
        op = self.opname(offset)
        if op in _ITER_OPS:
            # The loop's own GET_ITER is located exactly at the statement (3.11,
            # 3.12) or its iterable (3.13); any other (a generator expression or a
            # comprehension in the body) belongs to the statement around it.
            for loop in self.compounds:
                if loop.kind == "for" and span in (loop.span, loop.iter or ()):
                    block = _block(loop.for_iter)
                    return block, self.piece_index(block, Role.FOR_ITER, loop.iter), "cut"
        if self.enters_with(offset):
            with_ = self.compound_at(span, "with")
            if with_ is not None:
                block = _block(with_.with_enter)
                return block, self.piece_index(block, Role.WITH_ENTER, with_.header), "cut"
        at_with = self.with_code(offset, span)
        if at_with is not None:
            return self._with_side(offset, at_with)
        step = self._loop_step(offset, span, op)
        if step is not None:
            block = _block(step.for_next)
            return block, self.piece_index(block, Role.FOR_NEXT), "cut"
        piece = self.piece_at(span)
        if piece is None and ("_IF_" in op or op.startswith("TO_BOOL")):
            piece = self._test_of_statement(span)
        if piece is None:
            return None
        _span, block, _role, flags, index = piece
        if flags == "return":
            return block, index, "return-value"
        return block, index, ("raise" if op == "RAISE_VARARGS" and flags == "raise" else "cut")

    def piece_index(self, block: int, role: str, span: Span | None = None) -> int:
        """Index of the piece of ``block`` with ``role`` (and ``span``, if given)."""
        for index, piece in enumerate(self.blocks[block].pieces):
            if piece.role == role and (span is None or piece.span == tuple(span)):
                return index
        return 0

    def _test_of_statement(self, span: Span) -> tuple[Span, int, str, str, int] | None:
        """3.11 locates the conditional jump of an ``if``/``while`` at the whole
        statement, so an exception from the test's ``__bool__`` is there: it belongs
        to the statement's own test, the first test piece inside it."""
        tests = [p for p in self.pieces if p[2] == Role.TEST and _contains(span, p[0])]
        return min(tests, key=lambda p: (p[0][0], p[0][1]), default=None)

    def _loop_step(self, offset: int, span: Span, op: str) -> Compound | None:
        """The for loop whose step (next item, exhaustion) this instruction is: it is
        located at the loop (3.11, 3.12) or at its iterable (3.13), and it is not part
        of the iterable's own code, which that location also marks (3.13)."""
        for compound in self.compounds:
            if compound.kind != "for":
                continue
            spans = (compound.span, compound.iter or compound.span)
            if span in spans and not self._evaluates_iterable(offset, spans):
                return compound
        return None

    def _evaluates_iterable(self, offset: int, spans: tuple[Span, ...]) -> bool:
        """Whether the instruction at ``offset`` computes the loop's iterable: the code
        from it on stays inside the iterable's span until the loop's GET_ITER. (The
        compiler may copy a loop, a finally's body for one: each copy evaluates its
        iterable just before its own GET_ITER, so nothing earlier in the code object
        tells the copies apart.)"""
        whole, iterable = spans
        if self.opname(offset) in _STEP_OPS:
            return False
        for later in range(offset, len(self.ops), 2):
            later_span = self.position(later)
            if self.opname(later) in _ITER_OPS and later_span in spans:
                return True
            if later_span is None or not (later_span == whole or _contains(iterable, later_span)):
                return False
        return False

    def with_code(self, offset: int, span: Span) -> Compound | None:
        """The with statement this instruction is bookkeeping of (located at the
        statement itself, after one of its ``__enter__`` instructions)."""
        for compound in self.compounds:
            if compound.kind != "with":
                continue
            if compound.span == span:
                return compound  # 3.11, 3.12: located at the whole statement
            for item_span, enter_offset in self._enters(compound):
                if (item_span == span and offset > enter_offset
                        and not self._leads_to_enter(offset, span)):
                    return compound  # 3.13: located at the item, after its __enter__
        return None

    def _leads_to_enter(self, offset: int, span: Span) -> bool:
        """Whether the instructions located at ``span`` from ``offset`` on run into an
        ``__enter__``: the item's own code before it enters (its context manager's
        call; 3.14's lookup of ``__exit__``), not the bookkeeping after its body. A
        ``with`` whose code is there twice (a ``finally`` clause's, once for each way
        in) has an ``__enter__`` before the second copy's entry too."""
        for forward in range(offset, len(self.ops), 2):
            if self.enters_with(forward):
                return True
            if self.position(forward) != span:
                return False
        return False

    def _enters(self, compound: Compound) -> list[tuple[Span, int]]:
        """(span, offset) of the BEFORE_WITH instructions of one with statement (the
        code is read once for those of every with statement: a test of twenty
        ``with pytest.raises`` read it twenty times)."""
        key = id(compound)
        if key not in self._enter_offsets:
            if self._all_enters is None:
                self._all_enters = [(span, offset) for offset in range(0, len(self.ops), 2)
                                    if self.enters_with(offset)
                                    and (span := self.position(offset)) is not None]
            whole = compound.span
            header = compound.header or whole
            self._enter_offsets[key] = [(span, offset) for span, offset in self._all_enters
                                        if span == whole or _contains(header, span)]
        return self._enter_offsets[key]

    def _with_side(self, offset: int, compound: Compound) -> tuple[int, int, str]:
        """Bookkeeping of a with statement belongs to the block that enters it (what
        follows ``__enter__``, before the body) or to the block that leaves it: the
        ``return``/``break``/``continue`` whose code comes just before the ``__exit__``
        call and runs on into it, or else the block after the with (the code just
        before the with's normal exit can be a return ending the body, whose own
        exit came before its ``RETURN_VALUE``). The return may reach the exit through
        the copies of finally clauses inside the with: then the exit is placed at the
        last of them to run, the nearest piece of the body before the call."""
        whole = compound.span
        enters = {o for _span, o in self._enters(compound)}
        nearest = None  # the last piece of the with's body to run before the exit
        body = False  # whether any code of the body runs on into the exit
        for back in range(offset - 2, -1, -2):
            if back in enters:
                if body:
                    break  # the body ran on from the start into the exit
                block = _block(compound.with_enter)
                return block, self.piece_index(block, Role.WITH_ENTER, compound.header), "cut"
            span = self.position(back)
            if span is None:
                continue  # pathprof's own code (its jumps are not the program's)
            if self.opname(back) in _NO_FALL_THROUGH:
                break  # the program's code that does not run on into the exit (3.12
                # places a return's RETURN_VALUE at the with's line)
            if span == whole or any(span == item for item, _o in self._enters(compound)):
                continue
            piece = self.piece_at(span)
            if piece is None or not _contains(whole, piece[0]) or piece[2] == Role.WITH_ENTER:
                continue
            body = True
            if nearest is None and piece[2] != Role.WITH_EXIT:  # (an inner with's exit)
                nearest = piece
            if piece[3] in ("return", "break", "continue"):
                # Its code runs on into the exit, through the copies of the finally
                # clauses it leaves (the nearest piece): the exit is on its way out.
                how = "cut" if piece[3] == "break" else f"{piece[3]}-exit"
                nearest = nearest or piece
                return nearest[1], nearest[4], how
        block = _block(compound.with_exit)
        return block, self.piece_index(block, Role.WITH_EXIT, compound.header), "cut"
