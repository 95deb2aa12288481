"""An oracle for path profiles that knows no control-flow graph: the source and line events.

`SourceOracle` computes, for every function of some source files, the profile that pathprof
should report — how many times each distinct acyclic path ran — from two things only:

* the files' syntax trees (`ast`): which lines belong to which statement, which statements
  are loop headers and which lie in a loop's body, which lines are ``except`` clauses;
* the ``sys.settrace`` events of the uninstrumented (or instrumented: pathprof keeps every
  line number) program: ``call``, ``line``, ``exception`` and ``return``, plus the opcode at
  the frame's last instruction where line events alone are ambiguous (is a ``return`` event a
  ``yield``, a ``return`` or an exception leaving the frame; is a line the start of an
  exception handler).

It shares no code with pathprof (no import of it at all), so a bug in pathprof's CFG, its
numbering or its probes cannot hide itself by also being in the oracle.

Paths (DESIGN.md §4, docs/python.md)
------------------------------------
A path is a tuple ``(units, start, end)``:

``units``
    the statements executed, in order, each named by its *unit*: the first line of the
    statement (for a compound statement, of its header: the ``if``/``while`` test, the
    ``for`` target and iterable, the ``with`` items, an ``except`` clause, a ``case`` pattern
    and guard, a nested ``def``/``class`` with its decorators). Every line a line event
    reports is mapped to the innermost unit containing it, so it does not matter which line
    of a multi-line statement CPython reports, nor how often (consecutive repeats of one unit
    are collapsed: CPython re-reports lines after calls, inside comprehensions, at jump
    targets). A line that belongs to no unit (the ``def`` line reported by an implicit
    return) names itself. The header of a ``while`` whose test is a true constant has no
    code and no line event: it is recorded only as the first unit of a path that starts
    at it (telling that path from one that starts at a loop first in its body).
``start``
    ``"entry"`` (the call's first path), ``"header"`` (after a loop back edge) or
    ``"handler"`` (after an exception was received: by the ``except`` clause that matched —
    the clause's unit is the path's first unit —, by a ``finally`` entered by the exception —
    its first statement is the first unit —, or by a ``with`` whose ``__exit__`` swallowed it
    — the ``with`` unit is the first unit).
``end``
    ``"return"`` (the call returned), ``"backedge"`` (a transfer from a statement in a loop's
    body to that loop's header), ``"raise"`` (a ``raise`` statement raised its exception),
    ``"exception"`` (an exception raised inside a statement: the path ends in that
    statement's block, whether a handler in the function receives the exception or it
    leaves the call) or
    ``"reraise"`` (an exception the frame was already handling leaves the path without a new
    exception event: a bare ``raise``, or the implicit re-raise at the end of a ``finally``
    entered by an exception).

Comparing with a profiler: `executions` always; the sorted counts (`counts`) only when
`distinguishable`. A path cut by an exception is known by the basic block it was cut in
(DESIGN.md §4: "the path ends at the raising block"): the oracle ends it at the first
unit of that block it ran, so two statements of one block raising make one path. Blocks
come from the syntax alone (`_basic_blocks`: where branches, joins, loop headers and
handlers start them); a ``for`` loop's iterable is computed in the block before the loop,
its step in the header (the opcode that raised tells them apart).
``counts(key, cuts=False)`` leaves the ``"exception"`` paths out altogether.

Where paths are cut
-------------------
1. Back edges: a line event on a loop's header unit whose previous line event (in that
   frame) was on a unit in the loop's body (including ``except`` clauses, ``finally``
   bodies, ``with`` exits, nested loops). ``else`` clauses are not in the body. This makes a
   ``continue``, the end of a handler, a swallowing ``with`` and the exhaustion of a nested
   loop at the end of the body all back edges, and every iteration's path starts at the
   header; a ``for`` loop's exhaustion is its own path (``header`` to after the loop).
   A ``while True`` loop's header is its ``while`` line, which CPython 3.11 to 3.13 report at
   the jump back (and ``continue`` jumps to it).
2. Exceptions: an ``exception`` event ends the path at the current statement — once it is
   confirmed as a transfer: the next line event is an exception handler (an ``except``
   clause, the first instruction with a line after a ``PUSH_EXC_INFO`` — the start of a
   ``finally`` entered by an exception —, or a ``with`` exit, whose line event is *at* a
   ``PUSH_EXC_INFO``), or the frame is left by the exception. If instead the frame goes on
   normally in another statement, the exception was handled inside the statement and cuts
   nothing: ``StopIteration``/``StopAsyncIteration`` ending a ``for``, ``async for``,
   ``yield from`` or ``await`` (3.11: Python iterators; 3.12+: also generators returning a
   value, and ``CLEANUP_THROW``). Line events on the raising statement itself keep the
   question open (3.12+ inlined comprehensions re-report their line in their cleanup).
3. Dispatch adds no path: ``except`` clauses tested without matching, and ``with`` exits
   whose ``__exit__`` lets the exception through, are skipped. The new path starts at the
   clause that matched (the first line event after the clauses that is not a clause), at
   the first statement of a ``finally`` entered by the exception, or at the ``with`` whose
   exit was followed by normal execution. A new exception during dispatch (``__exit__`` or
   a clause's expression raising) just goes on dispatching.
   ``except*`` clauses run one after the other, and every later clause's line gets a line
   event when a clause ends, matched or not: the end of a clause is a hand-over (the path
   ends ``"reraise"`` there, and the clause tested last starts one) if the next statement
   is in the body of the clause tested last; the group's rest leaving the ``try`` (a
   handler or a ``finally`` entered, the frame left by it) ends it ``"reraise"`` as in 4;
   anything else is the group fully handled: the path flows on, no cut. A line event on
   a clause's own line right after its body is the ``try``'s end code (3.11 lends it the
   last clause's line): nothing runs there.
4. Re-raises: a handler entry reached without an ``exception`` event in the frame (a bare
   ``raise`` caught by an enclosing ``try`` or ``with`` in the same function; the
   ``RERAISE`` at the end of a ``finally`` entered by an exception), and a frame left by an
   exception while no exception event is pending (f_lasti is not a return or a yield),
   end the path ``"reraise"``.
5. Returns end the path ``"return"``. ``yield`` and ``await`` do not cut: a ``return``
   event whose last instruction is ``YIELD_VALUE`` (3.11, 3.12) or a ``RESUME`` after one
   (3.13), at the statement the frame last reported, suspends the call, and the next
   ``call`` event of that frame resumes the same path. With an exception event pending, or
   at another statement (a ``RERAISE`` restores f_lasti to the ``yield`` an exception was
   thrown in at), it is the exception leaving the frame (a generator closed or thrown into)
   — unless the pending exception is a ``StopIteration`` ending an earlier ``await`` or
   ``yield from`` of the same statement (``await a() + await b()``).
6. Calls: a call is one frame's life, from a ``call`` event at the code's start (a
   ``RESUME`` with oparg 0) to its last ``return`` event. A ``call`` event elsewhere is a
   frame first seen mid-call (a generator started before `run`): that function is put in
   `not_compared`. A ``call`` event at ``RETURN_GENERATOR`` is a generator closed or thrown
   into before it started: no call. 3.13 closes a generator suspended at a ``yield`` outside
   any ``try`` (``RESUME`` oparg bit 4) without running it, so without any event: when
   `run` ends, such a call whose generator is no longer alive and suspended was closed so,
   and its path ends ``"exception"`` at the ``yield``. Any other suspended generator that
   died silently was destroyed after ignoring ``GeneratorExit`` (its finaliser's close
   yielded): its path never ended, and the function is put in `not_compared`.

Line events that run no statement are dropped: those at the compiler's cleanup handlers
(restore the handled exception, clear ``except ... as name``, restore an inlined
comprehension's variable, then re-raise) and at the ``RERAISE`` ending a ``finally``, to
which 3.11 lends the line of the instruction before them — except a ``RERAISE`` on a
``break``/``continue`` line: 3.12 turns such a jump to a re-raise into a copy of it.

What cannot be judged is listed in `not_compared` (see there) rather than guessed.
"""

from __future__ import annotations

import ast
import dis
import gc
import sys
import threading
import types
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

Key = tuple[str, str, int]
"""(filename, co_qualname, co_firstlineno) of a function."""

Path = tuple[tuple[int, ...], str, str]
"""(units executed in order, start kind, end kind)."""

T = TypeVar("T")

_PUSH_EXC_INFO = dis.opmap["PUSH_EXC_INFO"]
_YIELD_VALUE = dis.opmap["YIELD_VALUE"]
_RESUME = dis.opmap["RESUME"]
_RETURN_GENERATOR = dis.opmap["RETURN_GENERATOR"]
_RETURNS = frozenset(
    dis.opmap[name] for name in ("RETURN_VALUE", "RETURN_CONST") if name in dis.opmap
)

# Instructions of the compiler's cleanup handlers: code that runs between an exception and
# a re-raise (restore the handled exception, clear ``except ... as name``, or restore an
# inlined comprehension's variable) and executes no statement. 3.11 gives some of them the
# line number of the instruction before them, so they report spurious line events.
_CLEANUP_OPS = frozenset(
    dis.opmap[name]
    for name in (
        "COPY",
        "POP_EXCEPT",
        "SWAP",
        "POP_TOP",
        "NOP",
        "LOAD_CONST",
        "STORE_FAST",
        "DELETE_FAST",
        "STORE_NAME",
        "DELETE_NAME",
        "STORE_DEREF",
        "DELETE_DEREF",
        "STORE_GLOBAL",
        "DELETE_GLOBAL",
    )
    if name in dis.opmap
)
_RERAISE = dis.opmap["RERAISE"]
_LEAVES = frozenset(
    dis.opmap[name]
    for name in ("RERAISE", "RETURN_VALUE", "RETURN_CONST", "RAISE_VARARGS", "CHECK_EXC_MATCH")
    if name in dis.opmap
)
_RAISE_VARARGS = dis.opmap["RAISE_VARARGS"]
# A for loop's step (next item): what raises there raises in the loop's header; what
# raises elsewhere on the for line (its iterable's code) raises before the loop.
_STEP_OPS = frozenset(
    dis.opmap[name]
    for name in ("FOR_ITER", "GET_ANEXT", "END_ASYNC_FOR", "SEND", "YIELD_VALUE", "RESUME",
                 "CLEANUP_THROW")
    if name in dis.opmap
)


def _handler_offsets(code: types.CodeType) -> tuple[frozenset[int], frozenset[int]]:
    """Two sets of instruction offsets found in the code's exception handlers.

    *Starts*: the first instruction with a line number after a ``PUSH_EXC_INFO`` that has
    none — where an ``except`` clause or a ``finally`` entered by an exception begins
    (instrumented code may put instructions without a location in between).

    *Cleanups*: instructions of handlers that only restore state (`_CLEANUP_OPS`) and
    re-raise. A handler that starts with ``PUSH_EXC_INFO`` (an ``except``, a ``finally`` or a
    ``with`` exit) is never one.
    """
    instructions = list(dis.get_instructions(code))
    index = {ins.offset: position for position, ins in enumerate(instructions)}
    starts: set[int] = set()
    for position, ins in enumerate(instructions):
        if ins.opcode != _PUSH_EXC_INFO or _line(ins) is not None:
            continue  # a PUSH_EXC_INFO with a line is a with exit: its own line event
        for following in instructions[position + 1 :]:
            if _line(following) is not None:
                starts.add(following.offset)
                break
            if following.opcode in _LEAVES or following.opcode in dis.hasjrel:
                break  # a handler without location (an instrumenter's): no statement starts
    cleanups: set[int] = set()
    for entry in dis.Bytecode(code).exception_entries:
        position = index.get(entry.target)
        run: list[int] = []
        while position is not None and position < len(instructions):
            ins = instructions[position]
            run.append(ins.offset)
            if ins.opcode == _RERAISE:
                cleanups.update(run)
                break
            if ins.opcode not in _CLEANUP_OPS:
                break
            position += 1
    return frozenset(starts), frozenset(cleanups)


def _line(ins: dis.Instruction) -> int | None:
    positions = ins.positions
    return None if positions is None else positions.lineno


# Pending exception states of a call.
_NONE, _EXC, _DISPATCH = 0, 1, 2


# --------------------------------------------------------------------------------------------
# Static part: the syntax tree of each function.


@dataclass(frozen=True)
class FunctionInfo:
    """What the oracle knows about one function from its syntax tree alone.

    ``unit_of_line`` maps each line of the function's own statements (not those of nested
    functions or classes, which run in other frames) to its unit. ``headers`` maps a loop
    header unit to the unit sets of the bodies of the loops it heads. ``transparent`` holds
    the headers of ``while`` loops with a constant true test, never recorded in paths;
    ``jumps`` the units of ``break`` and ``continue`` statements. ``ambiguities`` says why
    two different paths may give the same unit sequence (empty when they cannot);
    ``unjudgeable`` why the oracle cannot count the function's paths at all (None when it
    can). ``star_clauses`` maps the unit of each ``except*`` clause to the units of all
    the clauses of its ``try``, in order; ``clause_bodies`` each such clause's unit to the
    units of its body (nested statements included).
    """

    key: Key
    unit_of_line: dict[int, int]
    except_lines: frozenset[int]
    headers: dict[int, tuple[frozenset[int], ...]]
    transparent: frozenset[int]
    jumps: frozenset[int]
    ambiguities: tuple[str, ...]
    unjudgeable: str | None
    block_of: dict[int, int]
    for_headers: frozenset[int]
    star_clauses: dict[int, tuple[int, ...]]
    clause_bodies: dict[int, frozenset[int]]

    @property
    def distinguishable(self) -> bool:
        """Different paths of this function always give different unit sequences."""
        return not self.ambiguities and self.unjudgeable is None


def _codeless(stmt: ast.stmt) -> bool:
    """A statement that compiles to no instruction in a function body (so no line event)."""
    if isinstance(stmt, ast.Global | ast.Nonlocal):
        return True
    return (
        isinstance(stmt, ast.AnnAssign) and stmt.value is None and isinstance(stmt.target, ast.Name)
    )


def _constant_true(test: ast.expr) -> bool:
    """The compiler drops this ``while`` test: the loop is ``while True``."""
    if isinstance(test, ast.Constant):
        return bool(test.value)
    if isinstance(test, ast.Name) and test.id == "__debug__":
        return not sys.flags.optimize
    if (
        isinstance(test, ast.UnaryOp)
        and isinstance(test.op, ast.Not)
        and isinstance(test.operand, ast.Constant)
    ):
        return not test.operand.value
    return False


def _end(node: ast.AST) -> int:
    end = getattr(node, "end_lineno", None)
    return end if end is not None else node.lineno  # type: ignore[attr-defined]


class _Scanner:
    """Collects a function's units, loops and ``except`` lines from its body statements."""

    def __init__(self) -> None:
        self.registered: defaultdict[int, list[tuple[int, int]]] = defaultdict(list)
        self._count = 0  # statements registered so far: tells statements apart
        self.except_lines: set[int] = set()
        self.headers: defaultdict[int, list[frozenset[int]]] = defaultdict(list)
        self.transparent: set[int] = set()
        self.ambiguities: list[str] = []
        self.problems: list[str] = []
        self.jumps: set[int] = set()  # units of break and continue statements
        self.for_headers: set[int] = set()  # units of for and async for statements
        self.star_clauses: dict[int, tuple[int, ...]] = {}  # see FunctionInfo
        self.clause_bodies: dict[int, frozenset[int]] = {}
        self._bodies: list[set[int]] = []

    def unit(self, first: int, last: int) -> int:
        """Register a statement (or a compound statement's header) over its lines."""
        self._count += 1
        for line in range(first, max(first, last) + 1):
            self.registered[line].append((self._count, first))
        for body in self._bodies:
            body.add(first)
        return first

    def block(self, stmts: list[ast.stmt]) -> None:
        if stmts and all(_codeless(s) for s in stmts):
            self.ambiguities.append(
                f"the block at line {stmts[0].lineno} has no code (no line event tells"
                " whether it ran)"
            )
        for stmt in stmts:
            self.stmt(stmt)

    def loop(self, header: int, header_last: int, stmt: ast.stmt, body: list[ast.stmt]) -> None:
        collected: set[int] = set()
        self._bodies.append(collected)
        try:
            self.block(body)
        finally:
            self._bodies.pop()
        self.headers[header].append(frozenset(collected))
        if body and body[0].lineno <= header_last:
            self.problems.append(
                f"the loop at line {stmt.lineno} has its body on its header's line: line events"
                " cannot tell its iterations from re-reported lines"
            )

    def stmt(self, s: ast.stmt) -> None:
        if isinstance(s, ast.If):
            self.unit(s.lineno, _end(s.test))
            self.block(s.body)
            self.block(s.orelse)
        elif isinstance(s, ast.For | ast.AsyncFor):
            header = self.unit(s.lineno, _end(s.iter))
            self.for_headers.add(header)
            self.loop(header, _end(s.iter), s, s.body)
            self.block(s.orelse)
        elif isinstance(s, ast.While):
            header = self.unit(s.lineno, _end(s.test))
            if _constant_true(s.test):
                self.transparent.add(header)
            self.loop(header, _end(s.test), s, s.body)
            self.block(s.orelse)
        elif isinstance(s, ast.With | ast.AsyncWith):
            last = max(
                max(_end(item.context_expr), _end(item.optional_vars or item.context_expr))
                for item in s.items
            )
            self.unit(s.lineno, last)
            self.block(s.body)
        elif isinstance(s, ast.Try | ast.TryStar):
            self.unit(s.lineno, s.lineno)
            self.block(s.body)
            clauses: list[int] = []
            for handler in s.handlers:
                last = _end(handler.type) if handler.type is not None else handler.lineno
                clause = self.unit(handler.lineno, last)
                self.except_lines.update(range(handler.lineno, last + 1))
                body: set[int] = set()
                self._bodies.append(body)
                try:
                    self.block(handler.body)
                finally:
                    self._bodies.pop()
                if isinstance(s, ast.TryStar):
                    clauses.append(clause)
                    self.clause_bodies[clause] = frozenset(body)
            for clause in clauses:
                self.star_clauses[clause] = tuple(clauses)
            self.block(s.orelse)
            self.block(s.finalbody)
        elif isinstance(s, ast.Match):
            self.unit(s.lineno, _end(s.subject))
            for case in s.cases:
                last = _end(case.guard) if case.guard is not None else _end(case.pattern)
                self.unit(case.pattern.lineno, last)
                if case.guard is not None:
                    self.ambiguities.append(
                        f"the case at line {case.pattern.lineno} has a guard: its pattern and"
                        " guard are two decisions in one unit"
                    )
                self.block(case.body)
        elif isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            # Runs here: decorators, defaults, bases; the body belongs to another frame.
            first = min([d.lineno for d in s.decorator_list] + [s.lineno])
            last = max(s.lineno, s.body[0].lineno - 1)
            self.unit(first, last)
        else:
            unit = self.unit(s.lineno, _end(s))
            if isinstance(s, ast.Break | ast.Continue):
                self.jumps.add(unit)


def _scan_function(key: Key, node: ast.FunctionDef | ast.AsyncFunctionDef) -> FunctionInfo:
    scanner = _Scanner()
    scanner.block(node.body)
    unit_of_line = {line: units[-1][1] for line, units in scanner.registered.items()}
    shared = sorted(line for line, units in scanner.registered.items() if len(units) > 1)
    if shared:
        scanner.ambiguities.insert(
            0, f"lines holding more than one statement: {', '.join(map(str, shared))}"
        )
    return FunctionInfo(
        key=key,
        unit_of_line=unit_of_line,
        except_lines=frozenset(scanner.except_lines),
        headers={unit: tuple(bodies) for unit, bodies in scanner.headers.items()},
        transparent=frozenset(scanner.transparent),
        jumps=frozenset(scanner.jumps),
        ambiguities=tuple(scanner.ambiguities),
        unjudgeable="; ".join(scanner.problems) or None,
        block_of=_basic_blocks(node.body),
        for_headers=frozenset(scanner.for_headers),
        star_clauses=scanner.star_clauses,
        clause_bodies=scanner.clause_bodies,
    )


def _terminates(stmts: list[ast.stmt]) -> bool:
    """Whether control never falls off the end of ``stmts`` (as far as syntax shows)."""
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, ast.Return | ast.Raise | ast.Break | ast.Continue):
        return True
    if isinstance(last, ast.If):
        return _terminates(last.body) and _terminates(last.orelse)
    if isinstance(last, ast.Try):
        if _terminates(last.finalbody):
            return True
        return (_terminates(last.orelse or last.body)
                and all(_terminates(h.body) for h in last.handlers))
    return False


def _basic_blocks(body: list[ast.stmt]) -> dict[int, int]:
    """Each unit's basic block, named by the unit that starts it (DESIGN.md §4: blocks
    at statement granularity, ended by the decision points the syntax shows).

    A block starts at the first statement of the function, of a branch (``if``/``else``
    bodies, loop bodies and ``else`` clauses, ``case`` bodies), of a handler (an
    ``except`` clause, a ``finally``), at a loop header, at a ``case`` after the first,
    and at the statement after any compound statement (a join) -- except after a
    ``try`` without ``finally`` whose handlers all leave (return, raise, break,
    continue): only the body's end leads there. It goes on into a ``with`` body and
    a ``try`` body (neither decides anything on entry) and from a ``try`` body into
    its ``else``. ``return``, ``raise``, ``break`` and ``continue``
    end it.

    The profile names a path cut by an exception by the block it was cut in, so the
    oracle ends such a path at the first unit of that block it ran (`_Call.end`): two
    statements of one block raising are one path.
    """
    block_of: dict[int, int] = {}

    def suite(stmts: list[ast.stmt], block: int | None) -> int | None:
        for stmt in stmts:
            block = statement(stmt, block)
        return block

    def statement(s: ast.stmt, block: int | None) -> int | None:
        if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            unit = min([d.lineno for d in s.decorator_list] + [s.lineno])
        else:
            unit = s.lineno
        if isinstance(s, ast.For | ast.AsyncFor):
            # The iterable is computed in the block in progress (its own, if the loop
            # starts one); ``-unit`` names it, ``unit`` the header (the step).
            block_of[-unit] = -unit if block is None else block
        if block is None:
            block = unit
        block_of[unit] = block
        if isinstance(s, ast.If):
            suite(s.body, None)
            suite(s.orelse, None)
            return None
        if isinstance(s, ast.For | ast.AsyncFor | ast.While):
            block_of[unit] = unit  # the header (a for's iterable is evaluated before it)
            suite(s.body, None)
            suite(s.orelse, None)
            return None
        if isinstance(s, ast.With | ast.AsyncWith):
            suite(s.body, block)
            return None
        if isinstance(s, ast.Try | ast.TryStar):
            after_body = suite(s.body, block)
            for handler in s.handlers:
                block_of[handler.lineno] = handler.lineno
                suite(handler.body, None)
            after_else = suite(s.orelse, after_body)
            suite(s.finalbody, None)
            if s.finalbody or not all(_terminates(h.body) for h in s.handlers):
                return None  # a join (or the finally's dispatch) before what follows
            return after_else  # only the body's end leads on: the same block
        if isinstance(s, ast.Match):
            for index, case in enumerate(s.cases):
                line = case.pattern.lineno
                block_of[line] = block if index == 0 else line
                suite(case.body, None)
            return None
        if isinstance(s, ast.Return | ast.Raise | ast.Break | ast.Continue):
            return None
        return block

    suite(body, None)
    return block_of


def _scope_statements(stmts: list[ast.stmt]) -> Iterable[ast.stmt]:
    """Every statement of a scope, in nested blocks too, but not inside nested scopes."""
    for stmt in stmts:
        yield stmt
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        for field in ("body", "orelse", "finalbody"):
            yield from _scope_statements(getattr(stmt, field, None) or [])
        for handler in getattr(stmt, "handlers", None) or []:
            yield from _scope_statements(handler.body)
        for case in getattr(stmt, "cases", None) or []:
            yield from _scope_statements(case.body)


def _functions(filename: str, tree: ast.Module) -> dict[tuple[str, int], FunctionInfo]:
    """The file's functions by (co_qualname, co_firstlineno), named as the compiler names
    them: ``C.m`` in a class, ``f.<locals>.g`` in a function, just the name if the enclosing
    scope declares it ``global``; the first line is the first decorator's."""
    found: dict[tuple[str, int], FunctionInfo] = {}

    def visit(body: list[ast.stmt], qualname: str, kind: str) -> None:
        statements = list(_scope_statements(body))
        declared_global = {
            name for s in statements if isinstance(s, ast.Global) for name in s.names
        }
        for stmt in statements:
            if not isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                continue
            if kind == "module" or stmt.name in declared_global:
                name = stmt.name
            elif kind == "class":
                name = f"{qualname}.{stmt.name}"
            else:
                name = f"{qualname}.<locals>.{stmt.name}"
            if isinstance(stmt, ast.ClassDef):
                visit(stmt.body, name, "class")
                continue
            first = min([d.lineno for d in stmt.decorator_list] + [stmt.lineno])
            found[(name, first)] = _scan_function((filename, name, first), stmt)
            visit(stmt.body, name, "function")

    visit(tree.body, "", "module")
    return found


# --------------------------------------------------------------------------------------------
# Dynamic part: the trace events of each call.


class _Call:
    """One frame's life: the path being built and the exception dispatch in progress."""

    __slots__ = (
        "cleanup",
        "code",
        "dispatch",
        "exc_end",
        "exc_iterable",
        "exc_stop",
        "exc_unit",
        "info",
        "last",
        "open",
        "oracle",
        "path",
        "pending",
        "raw",
        "silent_close",
        "star",
        "start",
        "starts",
        "suspended",
        "tracer",
    )

    def __init__(self, oracle: SourceOracle, info: FunctionInfo, code: types.CodeType) -> None:
        self.oracle = oracle
        self.info = info
        self.code = code
        self.raw, self.starts, self.cleanup = oracle._bytecode(code)
        self.path: list[int] = []
        self.start = "entry"
        self.open = True
        self.last: int | None = None  # unit of the frame's last line event
        self.pending = _NONE
        self.dispatch: int | None = None  # the clause or with exit dispatch stands at
        self.exc_unit: int | None = None  # where the pending exception event happened
        self.exc_end = "exception"  # how it ends the path: "raise" for a raise statement
        self.exc_iterable = False  # raised by a for loop's iterable (not its step)
        self.exc_stop = 0  # 2: the pending exception ended an await; 1: maybe; 0: no
        self.suspended = False
        self.silent_close = False  # suspended where 3.13 closes without running the frame
        #: the except* clause tested last after the clause before it ended (its path
        #: still open: handed over or flowing on, what runs next tells)
        self.star: int | None = None
        self.tracer = self.event

    # Paths.

    def begin(self, start: str, unit: int) -> None:
        # A path that starts at a ``while True`` header names it although it has no
        # code: it tells that path from one that starts at the header of a loop that
        # is the first statement of the ``while`` body (the same units otherwise).
        self.path = [unit]
        self.start = start
        self.open = True
        self.last = unit

    def end(self, how: str) -> None:
        if self.open:
            units = self.path
            if how == "exception" and units:
                # Cut by an exception: the path is known by the block it was cut in, so
                # it ends at the first unit of that block it ran. A for loop's iterable
                # is computed in the block before the loop: raising there, the path has
                # not reached the loop's header.
                if self.exc_iterable and units[-1] in self.info.for_headers:
                    units = [*units[:-1], -units[-1]]  # the iterable's code (`_basic_blocks`)
                block_of = self.info.block_of
                block = block_of.get(units[-1])
                first = len(units) - 1
                while (block is not None and first > 0
                       and block_of.get(units[first - 1]) == block):
                    first -= 1
                units = units[: first + 1]
            self.oracle._records.append((self.info.key, (tuple(units), self.start, how)))
            self.open = False
            self.path = []

    def append(self, unit: int) -> None:
        if unit not in self.info.transparent and (not self.path or self.path[-1] != unit):
            self.path.append(unit)
        self.last = unit

    # Events.

    def event(self, frame: types.FrameType, event: str, arg: Any) -> Any:
        oracle = self.oracle
        if not oracle._active:
            return None
        try:
            if event == "line":
                self.on_line(frame)
            elif event == "exception":
                self.on_exception(frame, arg)
            elif event == "return":
                self.on_return(frame, arg)
        except Exception as error:  # never let the oracle break the program
            oracle._lose(self.info.key, f"oracle error on a {event} event: {error!r}")
            oracle._calls.pop(id(frame), None)
            return None
        return self.tracer

    def on_line(self, frame: types.FrameType) -> None:
        info = self.info
        i = frame.f_lasti
        if i in self.cleanup:
            return  # no statement runs there (3.11 lends these handlers a line)
        line = frame.f_lineno
        unit = info.unit_of_line.get(line, line)
        raw = self.raw
        if 0 <= i < len(raw) and raw[i] == _RERAISE and unit not in info.jumps:
            # The re-raise at the end of a finally: 3.11 lends it the line before it. (3.12
            # turns a break or continue that jumps to it into a copy of it: that one is the
            # break's own line event.)
            return
        at_exit = 0 <= i < len(raw) and raw[i] == _PUSH_EXC_INFO  # a with exit, by exception
        after_push = i in self.starts  # the start of an except clause or a finally
        is_except = line in info.except_lines

        if self.pending == _EXC:
            if at_exit or after_push or is_except:
                self.end(self.exc_end)  # confirmed: a handler receives the exception
                self.pending = _DISPATCH
                self.dispatch = None
            elif unit == self.exc_unit:
                self.last = unit  # still in the statement that raised: undecided
                return
            else:
                self.pending = _NONE  # handled inside the statement: no transfer
        if self.pending == _DISPATCH:
            if at_exit or is_except:
                self.dispatch = unit
                self.last = unit
                return
            if after_push:  # the first statement of a finally entered by the exception
                self.pending = _NONE
                self.begin("handler", unit)
                return
            if unit == self.dispatch:
                self.last = unit
                return
            self.pending = _NONE
            if self.dispatch is None:  # not expected: start where execution goes on
                self.begin("handler", unit)
                return
            # The clause that matched, or the with whose exit swallowed the exception.
            self.begin("handler", self.dispatch)
        clauses = info.star_clauses.get(unit) if self.pending == _NONE else None
        if clauses is not None:
            if self.last in info.clause_bodies[unit]:
                return  # after its own body: 3.11 lends the try's end code this line
            if any(self.last in info.clause_bodies[clause] for clause in clauses):
                # A clause ended and the later clauses are tested: whether it handed the
                # group's rest over or flows on is known from what runs next.
                self.star = unit
                return
        if self.star is not None:
            clause, self.star = self.star, None
            if unit in info.clause_bodies[clause]:
                # The clause tested last matched: the one before handed its rest over.
                self.end("reraise")
                self.begin("handler", clause)
            # Otherwise the group was fully handled (the clause flows on: no cut) or its
            # rest leaves the try (a handler or finally entered, below, or the frame).
        if at_exit:  # a with exit reached by a re-raise (no exception event)
            self.end("reraise")
            self.pending = _DISPATCH
            self.dispatch = unit
            self.last = unit
            return
        previous = self.last
        if previous != unit and previous is not None:
            bodies = info.headers.get(unit)
            if bodies is not None and any(previous in body for body in bodies):
                self.end("backedge")
                self.begin("header", unit)
                return
        if after_push or is_except:  # a handler reached by a re-raise (no exception event)
            self.end("reraise")
            self.pending = _DISPATCH
            self.dispatch = None
            if is_except:
                self.dispatch = unit
                self.last = unit
            else:
                self.pending = _NONE
                self.begin("handler", unit)
            return
        self.append(unit)

    def on_exception(self, frame: types.FrameType, arg: Any) -> None:
        # While an exception is pending or dispatched, a new one changes nothing: either a
        # handler receives it (a dispatch event follows), or it leaves the frame, or it was
        # handled inside the statement (the StopIteration of an awaited __aexit__).
        self.star = None  # (an except* clause's test raising: dispatch goes on)
        if self.pending == _NONE:
            self.pending = _EXC
            self.exc_unit = self.last
            i = frame.f_lasti
            raised = 0 <= i < len(self.raw) and self.raw[i] == _RAISE_VARARGS
            self.exc_end = "raise" if raised else "exception"
            self.exc_iterable = (self.last in self.info.for_headers
                                 and not (0 <= i < len(self.raw) and self.raw[i] in _STEP_OPS))
        if self.pending == _EXC:
            # The end of an awaited coroutine or a delegated generator: the statement may
            # go on, and even suspend again (``await a() + await b()``). Not so for one
            # thrown in at a yield (``gen.throw(StopIteration)``), unless the next return
            # event yields a value.
            i = frame.f_lasti
            raw = self.raw
            at_yield = 0 <= i < len(raw) and (
                raw[i] == _YIELD_VALUE or (raw[i] == _RESUME and raw[i + 1] & 3 != 0)
            )
            stop = isinstance(arg[1], StopIteration | StopAsyncIteration)
            self.exc_stop = 2 if stop and not at_yield else 1 if stop else 0

    def on_return(self, frame: types.FrameType, arg: Any) -> None:
        raw = self.raw
        i = frame.f_lasti
        op = raw[i] if 0 <= i < len(raw) else -1
        yielded = op == _YIELD_VALUE or (op == _RESUME and raw[i + 1] & 3 != 0)
        if yielded:
            # A suspension, or an exception leaving the frame where a RERAISE restored
            # f_lasti to the yield the exception was thrown in at (the cleanup of a handler
            # the exception left): then the frame stands at another statement than the one
            # it last reported, or an exception event is still pending.
            line = frame.f_lineno
            here = None if line is None else self.info.unit_of_line.get(line, line)
            internal = self.exc_stop == 2 or (self.exc_stop == 1 and arg is not None)
            if here == self.last and (self.pending != _EXC or internal):
                if self.pending == _EXC:
                    self.pending = _NONE  # the StopIteration was handled in the statement
                self.suspended = True
                # 3.13 marks a yield outside any try (RESUME oparg bit 4): closing the
                # generator there runs nothing.
                self.silent_close = op == _RESUME and raw[i + 1] & 4 != 0
                return
        if op in _RETURNS:
            if self.pending == _DISPATCH and self.dispatch is not None:
                # A swallowing with exit or a one-line handler, then the implicit return on
                # the same line: no line event in between.
                self.begin("handler", self.dispatch)
            self.end("return")
        elif self.pending == _EXC:
            self.end(self.exc_end)
        else:
            self.end("reraise")  # no-op when dispatch had already ended the path
        self.oracle._calls.pop(id(frame), None)


class SourceOracle:
    """Path profiles of the functions of ``files`` from source structure and line events.

    ``files`` are the filenames (as in ``code.co_filename``: absolute paths of the modules)
    whose functions are observed: every ``def`` and ``async def`` — methods and nested
    functions included; not lambdas, comprehensions, module or class bodies.

    After one or more `run` calls:

    * `paths` maps each function's key ``(filename, qualname, firstlineno)`` to a Counter of
      its paths ``(units, start, end)`` (see the module docstring);
    * `executions` gives the number of paths a function ran (comparable always);
    * `distinguishable` says whether different paths of that function always give different
      unit sequences (only then are the sorted path counts comparable);
    * `not_compared` lists the functions (or, under the key None, the whole run) that the
      oracle could not judge, with the reason.
    """

    def __init__(self, files: Iterable[str]) -> None:
        self.files = tuple(files)
        self._by_file: dict[str, dict[tuple[str, int], FunctionInfo]] = {}
        self.functions: dict[Key, FunctionInfo] = {}
        for filename in self.files:
            with open(filename, "rb") as source:
                tree = ast.parse(source.read(), filename)
            found = _functions(filename, tree)
            self._by_file[filename] = found
            for info in found.values():
                self.functions[info.key] = info
        self.paths: dict[Key, Counter[Path]] = {}
        self.not_compared: dict[Key | None, str] = {}
        self._records: list[tuple[Key, Path]] = []
        self._calls: dict[int, _Call] = {}
        self._codes: dict[int, tuple[types.CodeType, bytes, frozenset[int], frozenset[int]]] = {}
        self._active = False
        self._tracer = self._trace_call  # one bound method, so that `is` can recognise it
        self._replaced = False
        self._ignored: frozenset[int] = frozenset()

    def ignore(self, modules: Iterable[types.ModuleType]) -> None:
        """Do not observe the functions of these module objects (by their globals).

        A test that imports a module afresh leaves the copies that other modules
        imported earlier in use: their functions have the same file and names, but
        they are not the ones a profiler of the fresh module measures.
        """
        self._ignored = frozenset(id(vars(module)) for module in modules)

    # Results.

    def executions(self, key: Key) -> int:
        """The number of paths the function ran, over all calls."""
        return sum(self.paths.get(key, Counter()).values())

    def counts(self, key: Key, *, cuts: bool = True) -> list[int]:
        """The function's path counts, sorted (what a profile is compared on).

        With ``cuts=False``, paths cut inside a statement by an exception (end
        ``"exception"``) are left out. The oracle ends such a path at the statement that
        raised; a profiler that names a cut path by the block it was cut in (pathprof:
        ``cut:<block>:<prefix>``) counts cuts at two statements of one block as one path.
        Leaving them out (on both sides) compares everything else exactly.
        """
        counter = self.paths.get(key, Counter())
        return sorted(n for path, n in counter.items() if cuts or path[2] != "exception")

    def distinguishable(self, key: Key) -> bool:
        """Whether the function's distinct paths give distinct unit sequences.

        False when a line holds two statements (``if c: return``, one-line loops, handlers,
        ``;``), when a block has only statements without code, or when the function cannot
        be judged at all; and for functions the oracle does not know.
        """
        info = self.functions.get(key)
        return info is not None and info.distinguishable

    # Running.

    def run(self, fn: Callable[[], T]) -> T:
        """Call ``fn()`` with the oracle tracing (its threads too); return what it returns.

        The previous tracers (``sys.gettrace()``, ``threading.gettrace()``) are restored
        afterwards, and ``fn``'s exception, if any, propagates.
        """
        if self._active:
            raise RuntimeError("SourceOracle.run is not reentrant")
        previous = sys.gettrace()
        previous_threads = threading.gettrace()
        real_settrace = sys.settrace

        def watch_settrace(function: Any) -> None:
            if function is not self._tracer:
                self._replaced = True
            real_settrace(function)

        self._replaced = False
        self._active = True
        sys.settrace = watch_settrace
        # CPython traces nothing that runs inside a trace function, and the cyclic
        # garbage collector may run finalizers there (a ``__del__`` closing a file):
        # calls a profiler counts and this oracle would miss. So the collector runs
        # only when the program asks, and once more before the tracer goes.
        collecting = gc.isenabled()
        gc.disable()
        threading.settrace(self._tracer)
        real_settrace(self._tracer)
        try:
            result = fn()
            gc.collect()
            return result
        finally:
            if collecting:
                gc.enable()
            ours = sys.gettrace() is self._tracer and threading.gettrace() is self._tracer
            real_settrace(previous)
            threading.settrace(previous_threads)  # type: ignore[arg-type]
            if sys.settrace is watch_settrace:
                sys.settrace = real_settrace
            self._finish(ours)

    def _finish(self, tracer_kept: bool) -> None:
        if not tracer_kept or self._replaced:
            self.not_compared[None] = (
                "the program replaced or removed the tracer during run() (sys.settrace or"
                " threading.settrace): events may be missing"
            )
        leftovers = list(self._calls.items())
        self._calls.clear()
        suspended = [(frame_id, call) for frame_id, call in leftovers if call.suspended]
        for _, call in leftovers:
            if not call.suspended:
                self._lose(
                    call.info.key,
                    "a call had not returned when run() ended (a thread still running, or"
                    " the tracer switched off in its thread)",
                )
        if suspended:
            gc.collect()  # finalise unreachable generators while the oracle still listens
            self._settle_suspended(suspended)
        self._active = False
        for key, path in self._records:
            self.paths.setdefault(key, Counter())[path] += 1
        self._records.clear()

    def _settle_suspended(self, suspended: list[tuple[int, _Call]]) -> None:
        """Calls suspended when run() ends: still alive, or closed without running (3.13)."""
        live: dict[int, types.CodeType] = {}
        for obj in gc.get_objects():
            if isinstance(obj, types.GeneratorType):
                alive, frame = obj.gi_suspended, obj.gi_frame
            elif isinstance(obj, types.CoroutineType):
                alive, frame = obj.cr_suspended, obj.cr_frame
            elif isinstance(obj, types.AsyncGeneratorType):
                alive = getattr(obj, "ag_suspended", True)  # 3.11 has no ag_suspended
                frame = obj.ag_frame if alive else None
            else:
                continue
            if alive and frame is not None:
                live[id(frame)] = frame.f_code
        for frame_id, call in suspended:
            if live.get(frame_id) is call.code:
                self._lose(
                    call.info.key,
                    "a generator or coroutine was still suspended when run() ended: its last"
                    " path is unfinished",
                )
            else:
                self._gone(call)

    def _gone(self, call: _Call) -> None:
        """A suspended call whose generator finished without a resume event."""
        if call.silent_close:
            call.end("exception")  # closed at its yield without running (3.13)
        else:
            self._lose(
                call.info.key,
                "a generator was destroyed while suspended without running again (it had"
                " ignored GeneratorExit): its last path never ended",
            )

    def _lose(self, key: Key, reason: str) -> None:
        self.not_compared.setdefault(key, reason)

    def _bytecode(self, code: types.CodeType) -> tuple[bytes, frozenset[int], frozenset[int]]:
        """The code's bytecode (``co_code``: without 3.12's instrumentation or 3.11's
        specialisation) and its handler starts and cleanups (`_handler_offsets`), computed
        once per code object."""
        cached = self._codes.get(id(code))
        if cached is None or cached[0] is not code:
            cached = (code, code.co_code, *_handler_offsets(code))
            self._codes[id(code)] = cached
        return cached[1], cached[2], cached[3]

    def _trace_call(self, frame: types.FrameType, event: str, arg: Any) -> Any:
        if event != "call" or not self._active:
            return None
        code = frame.f_code
        functions = self._by_file.get(code.co_filename)
        if functions is None:
            return None
        info = functions.get((code.co_qualname, code.co_firstlineno))
        if info is None:
            return None
        if id(frame.f_globals) in self._ignored:
            return None
        try:
            return self._start_call(frame, code, info)
        except Exception as error:  # never let the oracle break the program
            self._lose(info.key, f"oracle error on a call event: {error!r}")
            return None

    def _start_call(self, frame: types.FrameType, code: types.CodeType, info: FunctionInfo) -> Any:
        raw = self._bytecode(code)[0]
        i = frame.f_lasti
        op = raw[i] if 0 <= i < len(raw) else -1
        fresh = op == _RESUME and raw[i + 1] & 3 == 0
        call = self._calls.get(id(frame))
        if call is not None:
            if call.suspended and not fresh and call.code is code:
                call.suspended = False  # a generator or coroutine resumed
                return call.tracer
            del self._calls[id(frame)]
            if call.suspended:  # the frame of a generator that finished silently, reused
                self._gone(call)
            else:
                self._lose(info.key, "a frame's return event was missed")
        if op == _RETURN_GENERATOR or (i >= 2 and raw[i - 2] == _RETURN_GENERATOR):
            return None  # a generator closed or thrown into before it started: no call
        if not fresh:
            self._lose(info.key, "a frame was first seen mid-call (started before run())")
            return None
        if info.unjudgeable is not None:
            self._lose(info.key, info.unjudgeable)
        call = _Call(self, info, code)
        self._calls[id(frame)] = call
        return call.tracer
