"""The pure decoder of OSP's stream (:mod:`pathprof.measure.subpaths`): which
function an instrumented frame runs, the blocks of a path from its number (Ball-Larus
regeneration), the blocks a frame has run of its current path from its register
(the prefix a cut path decodes to), where a call or exception stands in a function's
blocks, and the stream's id of each block.

Nothing here keeps a stream or a track: every answer is a function of the contract,
the code and the frame asked about, worked out once and kept (the same paths and
prefixes come again and again). Decoding runs as pathprof's own work
(:data:`pathprof.runtime.own_work`): the graph code may be measured code.
"""

from __future__ import annotations

import contextlib
import sys
from dataclasses import dataclass
from types import CodeType, FrameType
from typing import TYPE_CHECKING

from pathprof import runtime
from pathprof.contract import Compound, FunctionInfo, Role
from pathprof.data.profile import end_kind, numbering_of
from pathprof.graph.numbering import Numbering, regenerate, regenerate_prefix
from pathprof.runtime import holder as module_holder
from pathprof.runtime.passthrough import must_pass
from pathprof.runtime.subpaths import SubpathSampler
from pathprof.runtime.tracks import Track

if TYPE_CHECKING:
    from pathprof.runtime import ModuleState
    from pathprof.runtime.blockmap import BlockMap

__all__ = ["BlockInfo", "PathDecoder", "call_site", "inside", "jumps_out", "register_of",
           "track_of"]


@dataclass(frozen=True)
class BlockInfo:
    """What a block id in the stream stands for."""

    file: str
    qualname: str
    function_line: int
    block: int
    lines: tuple[int, int] | None  #: first and last source line, None for none



class PathDecoder:
    """Decodes frames, paths and prefixes of the functions instrumented for subpaths,
    and numbers the blocks of the stream (:attr:`blocks`: what each id stands for).

    Invariant: a block gets one id for the run (per module state, function and
    block), in the order the stream first meets it; :attr:`blocks` is indexed by it."""

    _passes = staticmethod(must_pass)

    def __init__(self, sampler: SubpathSampler) -> None:
        self.sampler = sampler
        self.blocks: list[BlockInfo] = []
        self._block_ids: dict[tuple[int, int, int], int] = {}
        self._ident_runs: dict[tuple[int, int, tuple[int, ...]], list[int]] = {}
        self._numberings: dict[tuple[int, int], Numbering] = {}
        self._paths: dict[tuple[int, int, int], tuple[tuple[int, ...], bool]] = {}
        self._prefixes: dict[tuple[int, int, int, int], tuple[int, ...]] = {}
        self._functions: dict[CodeType, tuple[ModuleState, int] | None] = {}
        #: (code, offset of a call, register) -> the caller's blocks through the call
        #: (:meth:`call_prefix`; None: it cannot be told)
        self.call_prefixes: dict[tuple[CodeType, int, int],
                                 tuple[int, list[int], tuple[int, ...]] | None] = {}

    def function(self, frame: FrameType) -> tuple[ModuleState, int] | None:
        """The module state and function index of an instrumented frame, or None."""
        code = frame.f_code
        if code in self._functions:
            return self._functions[code]
        found = None
        names = module_holder.names_of(code)
        state = names.get("_@pp_m") if names is not None else None
        if isinstance(state, runtime.ModuleState):
            qualname = getattr(code, "co_qualname", code.co_name)
            for index, function in enumerate(state.meta.functions):
                if (function.qualname == qualname
                        and function.code_line == code.co_firstlineno):
                    found = (state, index)
                    break
        self._functions[code] = found
        return found

    def numbering(self, state: ModuleState, index: int) -> Numbering:
        key = (id(state), index)
        numbering = self._numberings.get(key)
        if numbering is None:
            numbering = self._numberings[key] = numbering_of(state.meta.functions[index])
        return numbering

    def path(self, state: ModuleState, index: int, number: int) -> tuple[tuple[int, ...], bool]:
        """The blocks of path ``number`` (without ENTRY and EXIT), and whether it ends
        the call (a return)."""
        key = (id(state), index, number)
        found = self._paths.get(key)
        if found is None:
            with runtime.own_work:  # the graph code decoding it may be measured code
                return self._decode_path(state, index, number, key)
        return found

    def _decode_path(self, state: ModuleState, index: int, number: int, key: tuple[int, int, int]
                     ) -> tuple[tuple[int, ...], bool]:
        function = state.meta.functions[index]
        ends = (function.entry, function.exit)
        numbering = self.numbering(state, index)
        path = regenerate(numbering, number)
        # A return ends the call; a raise or re-raise may still run a finally.
        returns = bool(path.edges) and end_kind(function, numbering, path.edges,
                                                 path.end) == "return"
        found = self._paths[key] = (tuple(b for b in path.blocks if b not in ends), returns)
        return found

    def prefix(self, state: ModuleState, index: int, block: int, register: int) -> tuple[int, ...]:
        key = (id(state), index, block, register)
        found = self._prefixes.get(key)
        if found is None:
            with runtime.own_work:  # the graph code decoding it may be measured code
                function = state.meta.functions[index]
                ends = (function.entry, function.exit)
                path = regenerate_prefix(self.numbering(state, index), block,
                                         register + function.query[block])
                found = self._prefixes[key] = tuple(b for b in path.blocks if b not in ends)
        return found

    def path_counted(self, frame: FrameType, state: ModuleState, index: int) -> bool:
        """Whether ``frame`` stands in the value of a return that counted its path
        before the value (a call there): the path's blocks were counted already."""
        try:
            located = call_site(state._blockmap(index, frame.f_code), frame.f_lasti)
        except Exception as err:  # a frame pathprof cannot read: as if not
            if self._passes(err):  # a signal handler's: the program's
                raise
            return False
        return (located is not None and located[2] == "return-value"
                and located[0] in state.meta.functions[index].early_returns)

    def frame_prefix(self, frame: FrameType, state: ModuleState, index: int
                      ) -> tuple[int, ...] | None:
        """The blocks ``frame`` has run of its current path, through the block of the
        instruction it stands at (a call); None if that cannot be told."""
        try:
            located = call_site(state._blockmap(index, frame.f_code), frame.f_lasti)
            if located is None:
                return None
            register = register_of(frame)
            if register is None:
                return None
            return self.prefix(state, index, located[0], register)
        except Exception as err:  # a frame pathprof cannot read: it joins at its next event
            if self._passes(err):  # a signal handler's: the program's
                raise
            return None

    def idents(self, state: ModuleState, index: int, blocks: tuple[int, ...]) -> list[int]:
        """The stream's ids of ``blocks`` of a function (worked out once per run of
        blocks: the same paths and prefixes come again and again)."""
        key = (id(state), index, blocks)
        idents = self._ident_runs.get(key)
        if idents is None:
            idents = self._ident_runs[key] = [
                self.block_id(state, index, block, id(state)) for block in blocks]
        return idents

    def block_id(self, state: ModuleState, index: int, block: int, key: int) -> int:
        ident = self._block_ids.get((key, index, block))
        if ident is None:
            function = state.meta.functions[index]
            pieces = function.blocks[block].pieces
            ident = self._block_ids[(key, index, block)] = len(self.blocks)
            self.blocks.append(BlockInfo(state.filename, function.qualname, function.code_line,
                                         block, function.blocks[block].lines()))
            costs = self.sampler.costs
            if costs is not None:  # a-priori cost: the statements and tests it runs
                costs[ident] = min(max(len(pieces), 1), self.sampler.highest_cost)
        return ident

    def call_prefix(self, track: Track, offset: int, register: int
                     ) -> tuple[int, list[int], tuple[int, ...]] | None:
        """The blocks the frame of ``track`` ran of its current path through the
        call at ``offset`` with ``register`` (as :meth:`frame_prefix`): how many,
        their stream ids and the blocks; None if that cannot be told."""
        found = None
        try:
            state, index = track.state, track.index
            located = call_site(state._blockmap(index, track.code), offset)
            if located is not None:
                prefix = self.prefix(state, index, located[0], register)
                found = (len(prefix), self.idents(state, index, prefix), prefix)
        except Exception as err:  # a frame pathprof cannot read: it joins at its next event
            if self._passes(err):  # a signal handler's: the program's
                raise
            return None
        self.call_prefixes[(track.code, offset, register)] = found
        return found

    def exit_prefix(self, caller: FrameType, state: ModuleState, index: int, blockmap: BlockMap,
                     compound: Compound) -> tuple[int, ...] | None:
        """The blocks ``caller`` ran of its path before a with's ``__exit__`` it is
        calling, as far as the call tells: a return's exit follows a path already
        out, or one counted later in a finally (through the return's block); the
        normal exit follows the with's body (the path reaches the block after the
        with, less that block); a break's, its block."""
        register = register_of(caller)
        if register is None:  # a return counted the path and ended the call's flow
            return None
        located = blockmap.locate(caller.f_lasti)
        if located is not None and located[1] == "return-exit":
            # A return whose path is counted later (in a finally around the with):
            # the register is still its path's, through the return's block.
            with contextlib.suppress(ValueError):
                return self.prefix(state, index, located[0], register)
        with contextlib.suppress(ValueError):
            # The normal exit: the edge into the block after the with has added to the
            # register already.
            assert compound.with_exit is not None
            return self.prefix(state, index, compound.with_exit, register)[:-1]
        with contextlib.suppress(ValueError):
            if located is not None and located[1] == "cut":  # a break leaving the with
                return self.prefix(state, index, located[0], register)
        return self.jump_prefix(state, index, compound, register)

    def jump_prefix(self, state: ModuleState, index: int, compound: Compound, register: int
                     ) -> tuple[int, ...] | None:
        """The blocks before a with's exit that a jump out of it calls (a break
        through a finally, a return into a finally: the block map places the call
        at the with's own exit), when the register tells: the exit's call stands on
        an edge from a block in the with to one outside, whose increment the register
        has added already, as at the normal exit. The one such edge whose target decodes to a prefix
        through its source; None if none does, or more than one."""
        function = state.meta.functions[index]
        first, last = compound.span.line, compound.span.end_line
        found = set()
        for edge in function.edges:
            if (edge.dst in (function.entry, function.exit)
                    or not function.blocks[edge.src].pieces  # no code: not in the with
                    or not inside(function, edge.src, first, last)
                    or inside(function, edge.dst, first, last)):
                continue
            try:
                prefix = self.prefix(state, index, edge.dst, register)
            except ValueError:
                continue
            if len(prefix) >= 2 and prefix[-2] == edge.src:
                found.add(prefix[:-1])
        return found.pop() if len(found) == 1 else None


def call_site(blockmap: BlockMap, offset: int) -> tuple[int, int, str] | None:
    """Where a frame standing at ``offset`` (a call) is: ``(block, piece, how)``,
    or None; a function of the code alone, so worked out once per offset."""
    try:
        known: tuple[int, int, str] | None = blockmap.call_sites[offset]
        return known
    except KeyError:
        found = blockmap.call_sites[offset] = (_entering_with(blockmap, offset)
                                               or blockmap.locate_piece(offset))
        return found


def _entering_with(blockmap: BlockMap, offset: int) -> tuple[int, int, str] | None:
    """``(with-enter block, piece, "cut")`` when the call at ``offset`` evaluates a
    with statement's context manager: the instructions after it, up to the with's
    ``__enter__``, stand at the same place. (3.13 and 3.14 write a finally's code
    twice, and the block map can take the second copy's context manager for
    bookkeeping after the first copy's ``__enter__``.)"""
    span = blockmap.position(offset)
    if span is None:
        return None
    for later in range(offset + 2, len(blockmap.ops), 2):
        if blockmap.enters_with(later):
            compound = blockmap.compound_at(span, "with")
            if compound is None or compound.with_enter is None:
                return None
            block = compound.with_enter
            return block, blockmap.piece_index(block, Role.WITH_ENTER, compound.header), "cut"
        if blockmap.position(later) not in (None, span):
            return None
    return None


def inside(function: FunctionInfo, block: int, first: int, last: int) -> bool:
    """Whether ``block``'s source lies within lines ``first..last`` (a with's body). A
    block with no source of its own (where branches join, the end of a finally)
    runs no code: it is taken as inside."""
    return all(first <= p.line and p.end_line <= last for p in function.blocks[block].pieces)


def jumps_out(function: FunctionInfo, block: int, first: int, last: int) -> bool:
    """Whether a path that ended at ``block`` left lines ``first..last`` (a with's
    body) by a back edge: ``block`` is inside and every back edge from it leads out."""
    if not inside(function, block, first, last):
        return False
    targets = [function.edges[e].dst for e in function.backedges
               if function.edges[e].src == block]
    return bool(targets) and not any(inside(function, t, first, last) for t in targets)


def track_of(frame: FrameType) -> object:
    """The track an instrumented frame holds (``@pp_track``, kept where its
    register is), or None."""
    return _frame_local(frame, "@pp_track", None)


def register_of(frame: FrameType) -> int | None:
    """The Ball-Larus register of an instrumented frame, or 0 for a function that
    keeps none (all its paths are counted by constants)."""
    value = _frame_local(frame, "@pp_r", 0)
    return value if isinstance(value, int) else None


def _frame_local(frame: FrameType, name: str, default: object) -> object:
    """One of pathprof's names (``@pp_*``) in an instrumented frame: a local, or kept
    outside the frame for a function whose code can reach its own frame (its code
    then calls ``registers``); ``default`` for a function that keeps none. The
    outside table is read for such functions only: it keeps the entries of frames
    that are gone, under ids new frames may have."""
    code = frame.f_code
    kept = _REGISTER_KEPT.get(code)
    if kept is None:
        kept = _REGISTER_KEPT[code] = ("local" if "@pp_r" in code.co_varnames
                                       or "@pp_track" in code.co_varnames else
                                       "outside" if "registers" in code.co_names
                                       or "assign" in code.co_names else "none")
    if kept == "local":
        if _LOCALS_SNAPSHOT:
            # The snapshot would keep the frame's values alive after the program
            # let go of them; its code cannot reach its frame, so nothing of the
            # program holds it (see pathprof.python.probecode.note_call).
            snapshot = frame.f_locals
            value = snapshot.get(name, default)
            snapshot.clear()
            return value
        return frame.f_locals.get(name, default)
    if kept == "outside":
        return runtime.instrumented.outside_registers.get(id(frame), {}).get(name, default)
    return default


#: Whether ``frame.f_locals`` is a snapshot the frame keeps (before 3.13, PEP 667).
_LOCALS_SNAPSHOT = sys.version_info < (3, 13)

#: code object -> where its frames keep pathprof's names: "local", "outside" or "none"
#: (worked out once per code: instrumented code, which the module states keep anyway)
_REGISTER_KEPT: dict[CodeType, str] = {}
