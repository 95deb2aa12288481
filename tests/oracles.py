"""Independent oracles for path profiles.

``BlockTraceOracle`` watches instrumented functions run with ``sys.settrace`` and
opcode events: every executed instruction is mapped to its block by its source
location (artificial probe instructions and ``with`` bookkeeping are ignored), and
the block sequence of each call is split into acyclic paths by the oracle itself:
at CFG backedges, at ``exception`` events (a new exception in the frame), and where
control reaches a restart block without a CFG edge (a re-raise that was caught).
It never reads pathprof's counters, registers or probes.

``profile_paths`` decodes what pathprof recorded into the same form, so tests can
compare the two as multisets: ``Counter[(blocks, start, end)]``.
"""

from __future__ import annotations

import dis
import sys
from collections import Counter, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from pathprof.data.profile import cfg_of, decode_paths
from pathprof.graph import (
    Cfg,
    find_backedges,
)
from pathprof.runtime.blockmap import BlockMap

PathKey = tuple[tuple[int, ...], str, str]  # (visible blocks, start, end)

_RETURN_OPS = {"RETURN_VALUE", "RETURN_CONST"}
#: Stack and jump bookkeeping: cannot raise, executes no statement, and CPython
#: sometimes locates it at a neighbouring construct (the subject clean-up after a
#: case guard is located at the pattern). Ignored.
_BOOKKEEPING_OPS = {"POP_TOP", "COPY", "SWAP", "JUMP_FORWARD", "JUMP_BACKWARD",
                    "JUMP_BACKWARD_NO_INTERRUPT", "JUMP", "JUMP_NO_INTERRUPT", "CACHE",
                    "EXTENDED_ARG", "POP_JUMP_FORWARD_IF_FALSE", "POP_JUMP_FORWARD_IF_TRUE",
                    "POP_JUMP_FORWARD_IF_NONE", "POP_JUMP_FORWARD_IF_NOT_NONE",
                    "POP_JUMP_BACKWARD_IF_FALSE", "POP_JUMP_BACKWARD_IF_TRUE",
                    "POP_JUMP_BACKWARD_IF_NONE", "POP_JUMP_BACKWARD_IF_NOT_NONE",
                    "POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE", "POP_JUMP_IF_NONE",
                    "POP_JUMP_IF_NOT_NONE", "TO_BOOL",
                    # CPython gives an exit of a finally's exceptional copy the line of
                    # the code before it (a break's, say): never a block's own work.
                    "RERAISE"}
_SUSPEND_OPS = {"YIELD_VALUE", "SEND"}
_ITERATION_OPS = {"SEND", "FOR_ITER", "END_ASYNC_FOR", "YIELD_VALUE", "GET_ANEXT",
                  "END_SEND", "CLEANUP_THROW"}


@dataclass
class FunctionInfo:
    """What the oracle knows about one instrumented function."""

    meta: dict[str, Any]
    code: Any
    blockmap: BlockMap = field(init=False)
    cfg: Cfg = field(init=False)
    visible: frozenset[int] = field(init=False)
    backedges: frozenset[tuple[int, int]] = field(init=False)
    succ: dict[int, set[int]] = field(init=False)
    restarts: frozenset[int] = field(init=False)

    def __post_init__(self) -> None:
        meta = self.meta
        self.blockmap = BlockMap(meta, self.code)
        self.cfg = cfg_of(meta)
        back = find_backedges(self.cfg)
        self.backedges = frozenset(self.cfg.edges[e] for e in back)
        self.succ = {}
        for src, dst in self.cfg.edges:
            self.succ.setdefault(src, set()).add(dst)
        self.restarts = frozenset(self.cfg.restarts)
        visible = set()
        not_nop = set()
        for offset in range(0, len(self.code.co_code), 2):
            block = self.block_of(offset)
            if block is not None:
                visible.add(block)
                if self.blockmap.opname(offset) != "NOP":
                    not_nop.add(block)
        self.visible = frozenset(visible)
        #: blocks whose only instructions are NOPs carrying a line number: a jump can
        #: skip them (3.12 and later jump past the NOP of a `while True:` header).
        #: blocks that are nothing but a ``break`` or ``continue``: their code is a
        #: jump (invisible to this oracle) in some copies and, in others (a finally
        #: body copied for the exception path), an instruction located there.
        jumps_only = {i for i, block in enumerate(meta.blocks)
                      if block.pieces and all(p.role == "stmt" and p.flags in ("break", "continue")
                                                 for p in block.pieces)}
        self.jumps_only = frozenset(jumps_only)
        self.breaks_only = frozenset(
            i for i in jumps_only
            if all(p.flags == "break" for p in meta.blocks[i].pieces))
        self.skippable = frozenset((visible - not_nop) | jumps_only)

    def block_of(self, offset: int) -> int | None:
        """The block an executed instruction belongs to, or None if it is a probe
        (no location) or bookkeeping of a with statement."""
        bm = self.blockmap
        while bm.opname(offset) == "EXTENDED_ARG":
            offset += 2
        span = bm.position(offset)
        if span is None:
            return None
        op = bm.opname(offset)
        if op in _BOOKKEEPING_OPS:
            return None
        if bm.with_code(offset, span) is not None and not bm.enters_with(offset):
            return None
        located = bm.locate(offset)
        return None if located is None else located[0]

    def jump_block(self, offset: int) -> int | None:
        """The block that is nothing but a ``break`` whose jump this instruction is,
        if it is one: where a copy keeps the jump, it ran. (A jump CPython threads
        or duplicates may carry the line elsewhere: the caller takes it only where
        the CFG allows. A ``continue``'s jump can run after the cleanup of a
        ``with`` it leaves, out of order: not taken.)"""
        while self.blockmap.opname(offset) == "EXTENDED_ARG":
            offset += 2
        if not self.blockmap.opname(offset).startswith("JUMP"):
            return None
        span = self.blockmap.position(offset)
        if span is None:
            return None
        located = self.blockmap.locate(offset)
        if located is None or located[0] not in self.breaks_only:
            return None
        # The break's own jump, on its line (not a with's exit code, which the block
        # map gives to the break that leads to it).
        pieces = self.meta.blocks[located[0]].pieces
        return located[0] if any(span[0] == piece.line for piece in pieces) else None

    def with_exit_of(self, offset: int) -> int | None:
        """The exit block (a restart) of the with whose ``__exit__`` code this is."""
        span = self.blockmap.position(offset)
        if span is None:
            return None
        compound = self.blockmap.with_code(offset, span)
        return None if compound is None else compound.with_exit

    def hidden_path(self, src: int, dst: int, cycle: bool = False
                    ) -> list[tuple[int, int]] | None:
        """CFG edges from ``src`` to ``dst`` through invisible or skippable blocks
        only (with ``cycle``, at least one such block in between)."""
        if dst in self.succ.get(src, ()) and not cycle:
            return [(src, dst)]
        # A block that is only a break or continue leaves no trace where CPython
        # drops its jump; a route through one is taken only if no other route is
        # there (a break's jump, where it is kept, is visited as the block's own).
        return (self._hidden_route(src, dst, avoid=self.jumps_only)
                or self._hidden_route(src, dst, avoid=frozenset()))

    def _hidden_route(self, src: int, dst: int, avoid: frozenset[int]
                      ) -> list[tuple[int, int]] | None:
        queue: deque[tuple[int, list[tuple[int, int]]]] = deque([(src, [])])
        seen = {src}
        while queue:
            block, path = queue.popleft()
            for nxt in sorted(self.succ.get(block, ())):
                edge_path = [*path, (block, nxt)]
                if nxt == dst:
                    return edge_path
                if ((nxt not in self.visible or nxt in self.skippable) and nxt not in seen
                        and nxt not in avoid):
                    seen.add(nxt)
                    queue.append((nxt, edge_path))
        return None


@dataclass
class _CallState:
    blocks: list[int] = field(default_factory=list)
    start: str = "entry"
    open: bool = True  # a path is in progress
    after_exception: bool = False
    #: the with whose __exit__ ran since the exception (its exit block restarts)
    with_exit: int | None = None
    #: whether any instruction of the call has run
    ran: bool = False
    visit_start: int = -1  # offset of the first instruction of the current block visit
    #: the instruction of the last opcode event (None after an exception event): a
    #: frame that an exception leaves stands at the instruction the exception came
    #: from, so ``f_lasti`` at a return event cannot tell a yield from an exit
    last_op: str | None = None


class BlockTraceOracle:
    """Record the acyclic paths of instrumented functions by tracing instructions."""

    def __init__(self, functions: Iterable[FunctionInfo]) -> None:
        self.by_code = {f.code: f for f in functions}
        self.paths: dict[str, Counter[PathKey]] = {
            f.meta.qualname: Counter() for f in self.by_code.values()}
        self.states: dict[int, _CallState] = {}
        self.errors: list[str] = []

    def run(self, fn: Callable[[], Any]) -> Any:
        old = sys.gettrace()
        # CPython 3.12 switches opcode events on for tracing only if some frame asked
        # for them when settrace is called: ask in this frame first.
        here = sys._getframe()
        here.f_trace_opcodes = True
        sys.settrace(self._global)
        try:
            return fn()
        finally:
            sys.settrace(old)
            here.f_trace_opcodes = False

    # -- tracing --------------------------------------------------------------

    def _global(self, frame: Any, event: str, arg: Any) -> Any:
        info = self.by_code.get(frame.f_code)
        if info is None:
            return None
        # Set the local trace function before asking for opcode events: from 3.12,
        # opcode events are only switched on for a frame that already has one.
        frame.f_trace = self._local
        frame.f_trace_opcodes = True
        self._event(info, frame, event, arg)
        return self._local

    def _local(self, frame: Any, event: str, arg: Any) -> Any:
        info = self.by_code.get(frame.f_code)
        if info is not None:
            self._event(info, frame, event, arg)
        return self._local

    def _event(self, info: FunctionInfo, frame: Any, event: str, arg: Any) -> None:
        key = id(frame)
        if event == "call":
            if key not in self.states:
                self.states[key] = _CallState()
            return
        state = self.states.get(key)
        if state is None:  # tracing started inside the call
            state = self.states[key] = _CallState(open=False)
        if event == "opcode":
            state.ran = True
            state.last_op = dis.opname[frame.f_code.co_code[frame.f_lasti]]
            if (state.open and state.blocks
                    and dis.opname[frame.f_code.co_code[frame.f_lasti]] == "RERAISE"):
                # The end of a finally (or except*) entered by an exception re-raises
                # it: no `exception` event, but the exception leaves the block here,
                # for an enclosing handler or finally (a transfer) or the caller.
                # CPython locates it where the code before it is: at a break that
                # left a loop of the finally, the break ran.
                located = info.blockmap.locate(frame.f_lasti)
                if (located is not None and located[0] in info.breaks_only
                        and state.blocks[-1] != located[0]
                        and info.hidden_path(state.blocks[-1], located[0]) is not None):
                    self._visit(info, state, located[0], frame.f_lasti)
                self._end(info, state, "propagate")
                state.after_exception = True
                return
            if not state.open and state.after_exception:
                exit_block = info.with_exit_of(frame.f_lasti)
                if exit_block is not None:
                    state.with_exit = exit_block
            block = info.block_of(frame.f_lasti)
            if block is None:
                jumped = info.jump_block(frame.f_lasti)
                if (jumped is not None and state.open and state.blocks
                        and state.blocks[-1] != jumped
                        and info.hidden_path(state.blocks[-1], jumped) is not None):
                    block = jumped
            if block is not None:
                self._visit(info, state, block, frame.f_lasti)
        elif event == "exception":
            state.last_op = None
            if not state.ran and issubclass(arg[0], GeneratorExit):
                # 3.11 closes a generator that never started by throwing into its
                # frame before its first instruction: no call of the function ran.
                del self.states[key]
                return
            op = dis.opname[frame.f_code.co_code[frame.f_lasti]]
            if issubclass(arg[0], StopIteration | StopAsyncIteration) and op in _ITERATION_OPS:
                return  # the iteration protocol ending a loop or a yield from: no transfer
            if state.open and state.blocks:
                # A raise statement ends its path by an edge of its own; an exception
                # raised anywhere else cuts the path (an assert is not a raise).
                located = info.blockmap.locate(frame.f_lasti)
                explicit = located is not None and located[1] == "raise"
                self._end(info, state, "raise" if explicit else "cut")
            state.after_exception = True
        elif event == "return":
            op = state.last_op
            if op in _SUSPEND_OPS:
                return  # a generator or coroutine suspends
            how = "exit" if op in _RETURN_OPS else "propagate"
            if state.open:
                self._end(info, state, how)
            elif state.after_exception and how == "exit":
                # A path through blocks with no instructions of their own (say an
                # empty block after a with that swallowed the exception) returned.
                state.start = "restart"
                self._end(info, state, how)
            del self.states[key]

    def _visit(self, info: FunctionInfo, state: _CallState, block: int, offset: int) -> None:
        if state.open and state.blocks and state.blocks[-1] == block:
            # The same block again: a new visit only if control jumped back to where
            # this visit began and a loop through unseen blocks leads back here (a
            # `while True:` header has no instructions of its own).
            if offset > state.visit_start or info.hidden_path(block, block, cycle=True) is None:
                return
            for src, dst in info.hidden_path(block, block, cycle=True) or []:
                if (src, dst) in info.backedges:
                    self._end(info, state, "backedge")
                    state.blocks, state.start, state.open = [dst], "loop-header", True
                elif dst in info.visible:
                    state.blocks.append(dst)
            state.visit_start = offset
            return
        state.visit_start = offset
        if not state.open or not state.blocks:
            restarted = state.after_exception or (state.blocks == [] and not state.open)
            if restarted:
                state.start = "restart"
            state.open = True
            state.after_exception = False
            # A restart block with no instructions of its own (the code after a with
            # that swallowed the exception) may lead through a backedge: that path
            # ends there and the next starts at the loop header.
            via = state.with_exit
            state.with_exit = None
            if block in info.restarts or not restarted or via is None or not info.hidden_path(
                    via, block):
                via = None
            if via is None:
                state.blocks = [block]
                return
            state.blocks = [via]
            block_route = info.hidden_path(via, block) or []
            for src, dst in block_route:
                if (src, dst) in info.backedges:
                    self._end(info, state, "backedge")
                    state.blocks, state.start, state.open = [dst], "loop-header", True
                else:
                    state.blocks.append(dst)
            return
        route = info.hidden_path(state.blocks[-1], block)
        if route is None:
            if block in info.restarts:
                self._end(info, state, "propagate")
                state.blocks, state.start, state.open = [block], "restart", True
                return
            self.errors.append(
                f"{info.meta.qualname}: no CFG edge from block {state.blocks[-1]} "
                f"to block {block}")
            state.blocks.append(block)
            return
        for src, dst in route:
            if (src, dst) in info.backedges:
                self._end(info, state, "backedge")
                state.blocks, state.start, state.open = [dst], "loop-header", True
            elif dst in info.visible:
                state.blocks.append(dst)

    def _end(self, info: FunctionInfo, state: _CallState, how: str) -> None:
        visible = tuple(b for b in state.blocks if b in info.visible)
        self.paths[info.meta.qualname][(visible, state.start, how)] += 1
        state.blocks = []
        state.open = False


# ---------------------------------------------------------------------------
# What pathprof recorded, in the oracle's terms


#: pathprof's names for how paths start and end, in the oracle's words.
_START = {"entry": "entry", "loop-header": "loop-header", "handler": "restart"}
_END = {"return": "exit", "loop-back": "backedge", "raise": "raise", "reraise": "propagate",
        "exception": "cut"}


def with_entry_exit(meta: dict[str, Any], path: Any) -> list[int]:
    """A decoded path's blocks with ENTRY first if it starts there and EXIT last if
    it ends there (decoded paths leave both out)."""
    blocks = list(path.blocks)
    if path.start == "entry":
        blocks.insert(0, meta.entry)
    if path.end in ("return", "raise", "reraise"):
        blocks.append(meta.exit)
    return blocks


def profile_paths(meta: dict[str, Any], counts: dict[int, int],
                  cuts: dict[tuple[int, int], int], visible: frozenset[int]
                  ) -> Counter[PathKey]:
    """Decode one function's recorded counts (with pathprof's own decoder) into the
    oracle's form: ENTRY and EXIT included where the path starts or ends there."""
    paths = decode_paths(meta, counts, cuts)
    result: Counter[PathKey] = Counter()
    for path in paths:
        kept = tuple(b for b in with_entry_exit(meta, path) if b in visible)
        result[(kept, _START[path.start], _END[path.end])] += path.count
    return result
