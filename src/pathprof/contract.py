"""What the front end knows of a function: the one typed contract between the layers.

The layers (docs/architecture.md): the Python front end (:mod:`pathprof.python.instrument`) writes a
:class:`FunctionInfo` for every function it instruments — its blocks and their source
pieces, its edges with their decision labels, back edges, handler restarts, the
prefix increments a cut path is read back with (Ball 1994's query increments, §3.3
of Ball-Larus 1996), how each return counted its path, and the counter plans of edge
mode, of a P3 copy and of event counting — and everything after it reads that: the
runtime (exit notes, block maps, event queries), the data file, the analyses and the
reports. No layer reads a string key of it.

The serialization is one compact JSON array per module (:meth:`ModuleInfo.encode`:
an index of each function's outline, and each function's positional array as a JSON
text of its own, decoded when first asked for) or per function
(:meth:`FunctionInfo.encode`), led by :data:`FORMAT_VERSION`; decoding checks the version and raises
:class:`ContractError` for anything else. Invariant: ``decode(encode(x)) == x``.

Standard library only: the runtime reads this module inside the measured program.
Rows decoded by the thousand (blocks, pieces, edges) are :class:`~typing.NamedTuple`\\ s
— a tuple each, immutable, and as cheap to build as the list JSON gave; the rest are
frozen dataclasses. A decoded module decodes each function when it is first asked
for (the runtime reads one function's metadata when an exception cuts its path).
"""

from __future__ import annotations

import enum
import functools
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar, overload

__all__ = [
    "FORMAT_VERSION",
    "Block",
    "Compound",
    "ContractError",
    "CopyShareInfo",
    "DecisionInfo",
    "Edge",
    "EdgeCounters",
    "EventTables",
    "FunctionInfo",
    "ModuleInfo",
    "Piece",
    "Restart",
    "ReturnCount",
    "Role",
    "Span",
]

#: Version of the serialized contract, handed to the runtime and stored with the data.
#: 6: back edges declared from the loop structure (handler -> header edges too).
#: 7: the branch a "return" edge off the function's end takes (``fall_off``).
#: 8: this module: one positional array per function instead of a keyed object.
#: 9: a module's functions each a JSON text of its own, with an index of outlines
#: (format 8 modules are still read: data files keep them).
FORMAT_VERSION = 9

_T = TypeVar("_T")


class ContractError(ValueError):
    """Serialized metadata of another format version, or not metadata at all."""


class Span(NamedTuple):
    """A stretch of source: ``(line, col, end_line, end_col)``, columns as ``ast``'s."""

    line: int
    col: int
    end_line: int
    end_col: int


class Role(enum.StrEnum):
    """What part of a statement a piece of a block is (used to map instructions).

    A :class:`str` enum: a :class:`Piece` decoded from a contract holds the value, a
    plain string, which compares equal to its member (``piece.role == Role.TEST``)."""

    STMT = "stmt"  #: a whole simple statement
    TEST = "test"  #: the test of an ``if``, ``elif`` or ``while``
    FOR_ITER = "for-iter"  #: the iterable of a ``for`` (evaluated once, before the loop)
    FOR_NEXT = "for-next"  #: the step of a ``for``: next item, bound to the target
    WITH_ENTER = "with-enter"  #: the context managers of a ``with`` and their ``__enter__``
    WITH_EXIT = "with-exit"  #: the ``__exit__`` calls of a ``with`` on fall-through
    SUBJECT = "subject"  #: the subject of a ``match``
    PATTERN = "pattern"  #: one ``case`` pattern
    GUARD = "guard"  #: one ``case`` guard


class Piece(NamedTuple):
    """One statement, or one part of a compound statement, inside a block."""

    line: int
    col: int
    end_line: int
    end_col: int
    #: what part of a statement it is: a :class:`Role`'s value
    role: str
    #: for a whole statement: "raise", "reraise" (a bare ``raise``), "return",
    #: "break", "continue"; else ""
    flags: str

    @property
    def span(self) -> Span:
        return Span(self.line, self.col, self.end_line, self.end_col)


class Edge(NamedTuple):
    """A CFG edge and the decision label it stands for ("true", "false", "return",
    "raise", "except ValueError", ...)."""

    src: int
    dst: int
    label: str


class Restart(NamedTuple):
    """A block a path can start at after an exception: a handler, a ``finally``."""

    block: int
    kind: str


class ReturnCount(NamedTuple):
    """How a return statement counted its path, so that the runtime can take the count
    back if a ``with``'s ``__exit__`` raises after it: a probe's operation and value
    (path mode) or ``("SLOT", chord slot)`` (edge mode)."""

    op: str
    value: int


class Block(NamedTuple):
    """A basic block: its kind and label (as the CFG builder named them) and pieces."""

    kind: str
    label: str
    pieces: tuple[Piece, ...]

    def lines(self) -> tuple[int, int] | None:
        """The first and last source line of the block, or None for a block with no code."""
        if not self.pieces:
            return None
        return min(p.line for p in self.pieces), max(p.end_line for p in self.pieces)


@dataclass(frozen=True, slots=True)
class Compound:
    """A ``for`` or ``with`` statement: its whole span and the blocks of its parts,
    so that instructions located at the statement can be told apart by opcode."""

    kind: str  #: "for" or "with"
    is_async: bool
    span: Span
    #: a with's header (up to its last context manager); a for's iterable
    header: Span | None = None
    iter: Span | None = None
    #: the block of each part ("for-iter", "for-next"; "with-enter", "with-exit")
    for_iter: int | None = None
    for_next: int | None = None
    with_enter: int | None = None
    with_exit: int | None = None

    def block_of(self, role: str) -> int | None:
        """The block of the part whose :class:`Piece` role is ``role``."""
        blocks: dict[str, int | None] = {
            Role.FOR_ITER: self.for_iter, Role.FOR_NEXT: self.for_next,
            Role.WITH_ENTER: self.with_enter, Role.WITH_EXIT: self.with_exit}
        return blocks.get(role)


@dataclass(frozen=True, slots=True)
class CopyShareInfo:
    """P3: the function's paths split between copies (:mod:`pathprof.graph.copyplan`):
    each task's edge set, the copy each task runs in, and this copy."""

    tasks: tuple[tuple[int, ...], ...]
    copies: tuple[int, ...]
    index: int

    @property
    def holder(self) -> int:
        """The copy that counts the function's calls and cut paths."""
        return self.copies[0]


@dataclass(frozen=True, slots=True)
class EdgeCounters:
    """Edge mode's counter plan (:class:`pathprof.graph.EdgeCounterPlan`): the blocks
    that can raise, the endpoints of the extra edges they stand for, and the chord
    edges that carry counters (by slot)."""

    raising: tuple[int, ...]
    endpoints: tuple[tuple[int, int], ...]
    chords: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class EventTables:
    """Event counting (Ball 1994): each piece's events by block, the query increment
    of each block, the increment a return or continue already added when it left a
    block, and how many chord edges carry adds."""

    kind: str  #: "statements" or "instructions"
    pieces: tuple[tuple[int, ...], ...]
    query: tuple[int, ...]
    leave: Mapping[int, int]
    chords: int


class DecisionInfo(NamedTuple):
    """A decision of the function measured with its conditions (issue 39,
    :mod:`pathprof.python.conditioncode`): what kind, where its test lies, its text and
    its conditions' texts and spans (left to right), its boolean tree in the compact
    form of :func:`pathprof.analysis.conditions.parse_tree`, and the module's vector
    counters it owns: ``vectors`` slots from ``slot`` on, vector ``k`` (numbered as
    :func:`~pathprof.analysis.conditions.evaluation_vectors` numbers them) at ``slot +
    k``. ``vectors`` is 0 for a decision left unmeasured (too many ways to evaluate it
    to write each one out, or a place Python allows no assignment expression in);
    ``slot`` is -1 for a test of one condition whose block's true and false edges
    count its two vectors (:data:`pathprof.python.conditioncode.FROM_BRANCHES`)."""

    kind: str
    span: Span
    text: str
    conditions: tuple[str, ...]
    condition_spans: tuple[Span, ...]
    tree: str
    slot: int
    vectors: int


@dataclass(frozen=True)
class FunctionInfo:
    """Everything the front end knows of one function that later layers need.

    Invariants: blocks are numbered by position; every edge's ends, ``entry``,
    ``exit``, restarts, ``query``'s length and ``unreachable`` name blocks of
    ``blocks``; ``backedges`` and the keys of ``fall_off`` name edges of ``edges``;
    ``num_paths`` is Ball-Larus NumPaths(ENTRY) of the DAG those edges make.
    Values derived from it (the path numbering) are computed once, by their owner,
    through :meth:`derived`.
    """

    qualname: str
    #: the ``def`` line and the function's last line
    first_line: int
    last_line: int
    #: the code object's first line (the first decorator's, if any)
    code_line: int
    is_async: bool
    entry: int
    exit: int
    blocks: tuple[Block, ...]
    edges: tuple[Edge, ...]
    #: the branch a "return" edge off the function's end takes, by edge id
    fall_off: Mapping[int, str]
    restarts: tuple[Restart, ...]
    backedges: tuple[int, ...]
    num_paths: int
    #: the counter kind of the path table ("array", "dict", ...)
    counter: str
    #: Ball 1994's query increment per block: register + query[block] is the prefix value
    query: tuple[int, ...]
    #: block of a return statement -> how it counted its path
    returns: Mapping[int, ReturnCount]
    #: blocks whose return leaves before the path is counted (in a ``with`` or ``try``)
    early_returns: frozenset[int]
    compounds: tuple[Compound, ...]
    unreachable: tuple[int, ...]
    #: "path", "edge" or "events"
    mode: str
    #: a P3 copy counts this function's calls only (another copy profiles it)
    calls_only: bool = False
    share: CopyShareInfo | None = None
    edge_counters: EdgeCounters | None = None
    events: EventTables | None = None
    #: with conditions measured: the function's decisions, in source order
    decisions: tuple[DecisionInfo, ...] = ()
    # each name's value is of the type its ``compute`` gives: no one type for them all
    _derived: dict[str, Any] = field(default_factory=dict, init=False, repr=False,
                                     compare=False)

    def derived(self, name: str, compute: Callable[[FunctionInfo], _T]) -> _T:
        """``compute(self)``, computed the first time ``name`` is asked for and kept."""
        try:
            return self._derived[name]  # type: ignore[no-any-return]
        except KeyError:
            value = self._derived[name] = compute(self)
            return value

    @property
    def outline(self) -> tuple[str, int, int, int, int]:
        """What names the function and bounds what can be recorded of it, without its
        blocks: qualname, code line, number of paths, blocks and edges (the data file
        keeps it beside every function, to check recorded paths without decoding
        this)."""
        return (self.qualname, self.code_line, self.num_paths, len(self.blocks),
                len(self.edges))

    # -- serialization -------------------------------------------------------

    def _row(self) -> list[object]:
        return [
            self.qualname, self.first_line, self.last_line, self.code_line,
            int(self.is_async), self.entry, self.exit,
            [[b.kind, b.label, [list(p) for p in b.pieces]] for b in self.blocks],
            [list(e) for e in self.edges],
            sorted([e, label] for e, label in self.fall_off.items()),
            [list(r) for r in self.restarts], list(self.backedges), self.num_paths,
            self.counter, list(self.query),
            sorted([b, r.op, r.value] for b, r in self.returns.items()),
            sorted(self.early_returns),
            [_compound_row(c) for c in self.compounds],
            list(self.unreachable), self.mode, int(self.calls_only),
            None if self.share is None else [
                [list(t) for t in self.share.tasks], list(self.share.copies),
                self.share.index],
            None if self.edge_counters is None else [
                list(self.edge_counters.raising),
                [list(e) for e in self.edge_counters.endpoints],
                list(self.edge_counters.chords)],
            None if self.events is None else [
                self.events.kind, [list(p) for p in self.events.pieces],
                list(self.events.query), sorted(self.events.leave.items()),
                self.events.chords],
        ] + ([[[d.kind, list(d.span), d.text, list(d.conditions),
                 [list(s) for s in d.condition_spans], d.tree, d.slot, d.vectors]
                for d in self.decisions]] if self.decisions else [])

    @classmethod
    def _from_row(cls, row: Sequence[Any]) -> FunctionInfo:
        # ``row`` is decoded JSON, unpacked into the fields as it is: what is not of
        # their types raises the TypeError or ValueError :func:`_checked` turns into
        # a ContractError (or is caught by :meth:`check`)
        (qualname, first_line, last_line, code_line, is_async, entry, exit_, blocks, edges,
         fall_off, restarts, backedges, num_paths, counter, query, returns, early_returns,
         compounds, unreachable, mode, calls_only, share, edge_counters, events,
         *rest) = row
        if len(rest) > 1:
            raise ValueError(f"a row of {len(row)} fields")
        decisions = tuple(
            DecisionInfo(kind, Span(*span), text, tuple(conditions),
                         tuple(Span(*s) for s in spans), tree, slot, vectors)
            for kind, span, text, conditions, spans, tree, slot, vectors
            in (rest[0] if rest else ()))
        return cls(
            qualname, first_line, last_line, code_line, bool(is_async), entry, exit_,
            tuple([Block(kind, label, tuple(map(_piece, pieces)))
                   for kind, label, pieces in blocks]),
            tuple(map(_edge, edges)),
            {e: label for e, label in fall_off},
            tuple(Restart(*r) for r in restarts), tuple(backedges), num_paths, counter,
            tuple(query), {b: ReturnCount(op, value) for b, op, value in returns},
            frozenset(early_returns), tuple(_compound(c) for c in compounds),
            tuple(unreachable), mode, bool(calls_only),
            None if share is None else CopyShareInfo(
                tuple(tuple(t) for t in share[0]), tuple(share[1]), share[2]),
            None if edge_counters is None else EdgeCounters(
                tuple(edge_counters[0]), tuple((a, b) for a, b in edge_counters[1]),
                tuple(edge_counters[2])),
            None if events is None else EventTables(
                events[0], tuple(tuple(p) for p in events[1]), tuple(events[2]),
                {b: add for b, add in events[3]}, events[4]),
            decisions,
        )

    def encode(self) -> str:
        """This function alone, as the data file stores it."""
        return json.dumps([FORMAT_VERSION, self._row()], separators=(",", ":"))

    @classmethod
    def decode(cls, text: str | bytes) -> FunctionInfo:
        """The function :meth:`encode` wrote; :class:`ContractError` for anything else."""
        data = _loads(text)
        if not (isinstance(data, list) and len(data) == 2):
            raise ContractError("not a function's metadata")
        _check_version(data[0])
        return _checked(cls._from_row, data[1])

    def check(self) -> None:
        """Raise :class:`ContractError` unless the invariants above hold (for metadata
        read back from a file that may have been edited or damaged)."""
        nblocks, nedges = len(self.blocks), len(self.edges)
        if (any(len(p) != len(Piece._fields) for b in self.blocks for p in b.pieces)
                or any(len(e) != len(Edge._fields) for e in self.edges)):
            raise ContractError(f"{self.qualname}: a piece or edge of the wrong length")
        named = [self.entry, self.exit, *(b for e in self.edges for b in e[:2]),
                 *(r.block for r in self.restarts), *self.unreachable]
        if any(not isinstance(b, int) or not 0 <= b < nblocks for b in named):
            raise ContractError(f"{self.qualname}: a block number out of range")
        if any(not isinstance(e, int) or not 0 <= e < nedges
               for e in (*self.backedges, *self.fall_off)):
            raise ContractError(f"{self.qualname}: an edge number out of range")
        if len(self.query) != nblocks:
            raise ContractError(f"{self.qualname}: {len(self.query)} query increments for "
                                f"{nblocks} blocks")
        if not isinstance(self.num_paths, int) or self.num_paths < 1:
            raise ContractError(f"{self.qualname}: {self.num_paths!r} paths")


# Rows built by tuple.__new__ itself (a C call): NamedTuple._make is a function of
# ``collections``, and a program that measures ``collections`` would count the
# runtime's decoding as its own calls.
_piece = functools.partial(tuple.__new__, Piece)
_edge = functools.partial(tuple.__new__, Edge)


def _compound_row(c: Compound) -> list[object]:
    return [c.kind, int(c.is_async), list(c.span),
            None if c.header is None else list(c.header),
            None if c.iter is None else list(c.iter),
            c.for_iter, c.for_next, c.with_enter, c.with_exit]


def _compound(row: Sequence[Any]) -> Compound:
    # decoded JSON unpacked as it is (see FunctionInfo._from_row)
    kind, is_async, span, header, iter_, for_iter, for_next, with_enter, with_exit = row
    return Compound(kind, bool(is_async), Span(*span),
                    None if header is None else Span(*header),
                    None if iter_ is None else Span(*iter_),
                    for_iter, for_next, with_enter, with_exit)


@dataclass(frozen=True)
class ModuleInfo:
    """A module's instrumented functions, in :func:`pathprof.python.cfg.iter_functions`
    order (a function's index is its position here), and what the runtime needs of
    the module as a whole."""

    file: str
    #: the module's identity in the data: ``file:source hash`` unless given
    key: str
    source_hash: str
    functions: Sequence[FunctionInfo]
    #: event counting: the kind of event ("statements", "instructions"), else None
    events: str | None = None
    #: event counting: each call hands its count to the thread's total alone
    totals_only: bool = False

    def encode(self) -> str:
        """The compact text the generated code hands the runtime: each function's
        row as a JSON text of its own, beside its outline and ``calls_only`` (see
        :class:`_Functions`)."""
        rows = [json.dumps(f._row(), separators=(",", ":")) for f in self.functions]
        index = [[*f.outline, int(f.calls_only)] for f in self.functions]
        return json.dumps([FORMAT_VERSION, self.file, self.key, self.source_hash,
                           self.events, int(self.totals_only), index, rows],
                          separators=(",", ":"))

    @classmethod
    def decode(cls, text: str | bytes, guard: AbstractContextManager[object] | None = None
               ) -> ModuleInfo:
        """The module :meth:`encode` wrote (or format 8 wrote: the rows inline, no
        index); :class:`ContractError` for anything else. ``guard`` is entered around
        each function's later decoding (the runtime's ``own_work``: ``json`` may be a
        module the program measures)."""
        data = _loads(text)
        if not (isinstance(data, list) and data and type(data[0]) is int
                and data[0] in _MODULE_LENGTHS
                and len(data) == _MODULE_LENGTHS[data[0]]):
            if isinstance(data, list) and data:
                _check_version(data[0])
            raise ContractError("not a module's metadata")
        if data[0] == FORMAT_VERSION:
            _, file, key, digest, events, totals_only, index, functions = data
        else:
            (_, file, key, digest, events, totals_only, functions), index = data, None
        if not isinstance(functions, list) or not (
                index is None or (isinstance(index, list) and len(index) == len(functions))):
            raise ContractError("not a module's metadata")
        return cls(file, key, digest, _Functions(functions, index, guard), events,
                   bool(totals_only))

    def outline(self, index: int) -> tuple[str, int, int, int, int]:
        """The :attr:`FunctionInfo.outline` of the function at ``index``, without
        decoding the function where it is still a row (a big program's run saves
        the outline of every function it measured, and most never ran)."""
        functions = self.functions
        if isinstance(functions, _Functions):
            return functions.outline(index)
        return functions[index].outline

    def calls_only(self, index: int) -> bool:
        """:attr:`FunctionInfo.calls_only` of the function at ``index``, as
        :meth:`outline` reads it."""
        functions = self.functions
        if isinstance(functions, _Functions):
            return functions.calls_only(index)
        return functions[index].calls_only


#: The fields of a function's row (:meth:`FunctionInfo._row`); a function measured
#: with its conditions has one more, its decisions.
_ROW_FIELDS = 24
#: The length of a module's array, by format version (8: no index, rows inline).
_MODULE_LENGTHS = {8: 7, 9: 8}


class _Functions(Sequence[FunctionInfo]):
    """A decoded module's functions, each decoded from its row when first asked for.

    A module's text holds each function's row as a JSON text of its own, and an index
    of ``[*outline, calls_only]``: decoding a module makes a short list per function,
    not the thousands of lists of its blocks and edges, and a run's save reads the
    outline of every function it measured, most of which never ran, without decoding
    one (lists are what the garbage collector walks, at every collection and as the
    interpreter exits). A format 8 text's rows are lists, and it has no index."""

    __slots__ = ("_decoded", "_guard", "_index", "_rows")

    def __init__(self, rows: list[object], index: list[object] | None = None,
                 guard: AbstractContextManager[object] | None = None) -> None:
        self._rows = rows
        self._index = index
        self._guard = guard
        self._decoded: list[FunctionInfo | None] = [None] * len(rows)

    def __len__(self) -> int:
        return len(self._rows)

    def __iter__(self) -> Iterator[FunctionInfo]:
        # Not Sequence's mixin: a function of ``_collections_abc``, which a program
        # may measure (the runtime iterates to find a code object's function).
        for index in range(len(self._rows)):
            yield self[index]

    if TYPE_CHECKING:
        @overload
        def __getitem__(self, index: int) -> FunctionInfo: ...
        @overload
        def __getitem__(self, index: slice) -> list[FunctionInfo]: ...

    def __getitem__(self, index: int | slice) -> FunctionInfo | list[FunctionInfo]:
        if isinstance(index, slice):
            return [self[i] for i in range(len(self))[index]]
        found = self._decoded[index]
        if found is None:
            row = self._rows[index]
            if isinstance(row, str):
                if self._guard is None:
                    row = _loads(row)
                else:
                    with self._guard:
                        row = _loads(row)
            found = self._decoded[index] = _checked(FunctionInfo._from_row, row)
            self._rows[index] = None  # decoded: its row is garbage
        return found

    def _entry(self, index: int) -> list[Any] | None:
        """The index entry of the function at ``index`` when it is well formed."""
        # ``[str, int, int, int, int, int]``, checked here: no type says so of a list
        if self._index is None or self._decoded[index] is not None:
            return None
        entry = self._index[index]
        if (type(entry) is list and len(entry) == 6 and type(entry[0]) is str
                and type(entry[1]) is int and type(entry[2]) is int
                and type(entry[3]) is int and type(entry[4]) is int
                and type(entry[5]) is int):
            return entry
        raise ContractError(f"malformed metadata (index entry {entry!r})")

    def outline(self, index: int) -> tuple[str, int, int, int, int]:
        """The outline of the function at ``index``, read from the module's index
        (else from its decoded metadata)."""
        entry = self._entry(index)
        if entry is not None:
            return (entry[0], entry[1], entry[2], entry[3], entry[4])
        decoded: FunctionInfo = self[index]
        return decoded.outline

    def calls_only(self, index: int) -> bool:
        """Whether the function at ``index`` counts calls only (as :meth:`outline`)."""
        entry = self._entry(index)
        if entry is not None:
            return bool(entry[5])
        decoded: FunctionInfo = self[index]
        return decoded.calls_only

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]


def _loads(text: str | bytes) -> object:
    try:
        return json.loads(text)
    except (TypeError, ValueError) as err:
        raise ContractError(f"metadata is not JSON ({err})") from None


def _check_version(version: object) -> None:
    if version != FORMAT_VERSION and version not in _MODULE_LENGTHS:
        raise ContractError(f"metadata of format {version!r}; this pathprof reads formats "
                            f"{min(_MODULE_LENGTHS)} to {FORMAT_VERSION}")


def _checked(build: Callable[[Any], _T], row: object) -> _T:
    # ``build`` unpacks the decoded JSON as it is; what is not of its fields' types
    # raises here
    try:
        return build(row)
    except (TypeError, ValueError) as err:
        raise ContractError(f"malformed metadata ({err})") from None
