"""Exclusions: code a team has decided coverage should not count, found in the source.

Written as coverage.py users write them (coverage.py's "Excluding code" page is the
model): a regular expression matched against each physical line, ``# pragma: no
cover`` by default. A matched line excludes

* the whole function when it is a ``def`` line or one of its decorators' lines;
* the clause it heads when it is the header of a compound statement's clause (``if``,
  ``elif``, ``else``, ``for``, ``while``, ``with``, ``try``, ``except``, ``finally``,
  ``case``, ``class``): the clause's body, not its sibling clauses (an excluded ``if``
  keeps its ``else``, as coverage.py, which excludes what the header indents);
* otherwise the statement it is a line of.

Three kinds of code are excluded by default (:data:`DEFAULT_KINDS`, each can be
turned off): functions decorated ``@overload`` (typing stubs that never run),
``if TYPE_CHECKING:`` bodies, and abstract stubs (a function decorated
``@abstractmethod``, or a method of a ``Protocol`` class, whose body is only a
docstring, ``...``, ``pass`` or ``raise NotImplementedError``, and the stub setters and
deleters of such an abstract property). A concrete method whose body only raises
``NotImplementedError`` is left in (it runs, and tests check it raises); add the
pattern ``raise NotImplementedError`` to ``exclude_also`` to leave it out.

The result is a function of the source and the rules alone. How an excluded region
removes paths from a function is :mod:`pathprof.analysis.pathspace`'s business.

Invariant: every excluded span is a statement span of the module (``ast``'s
positions), and a function is excluded exactly when its ``def`` lies in an excluded
region or a rule names it.
"""

from __future__ import annotations

import ast
import bisect
import io
import re
import tokenize
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from pathprof.constructs import FUNCTIONS, SCOPES, TRIES, construct
from pathprof.contract import Piece, Span

__all__ = ["DEFAULT_KINDS", "DEFAULT_PATTERN", "ExcludedSource", "ExclusionRules",
           "exclusions_of"]

#: coverage.py's default exclusion pattern, which ``exclude_lines`` replaces and
#: ``exclude_also`` adds to
DEFAULT_PATTERN = r"#\s*(pragma|PRAGMA)[:\s]?\s*(no|NO)\s*(cover|COVER)"
#: the kinds of code excluded unless turned off (``exclude_kinds`` in the configuration)
DEFAULT_KINDS = ("overload", "type-checking", "abstract")

_ABSTRACT_DECORATORS = {"abstractmethod", "abstractproperty", "abstractclassmethod",
                        "abstractstaticmethod"}
_CLAUSE_KEYWORDS = {"else", "finally", "try"}


@dataclass(frozen=True)
class ExclusionRules:
    """What to exclude: line patterns (regular expressions, any of which excludes a
    line it matches) and the default kinds still on."""

    patterns: tuple[str, ...] = (DEFAULT_PATTERN,)
    kinds: tuple[str, ...] = DEFAULT_KINDS

    def __post_init__(self) -> None:
        unknown = sorted(set(self.kinds) - set(DEFAULT_KINDS))
        if unknown:
            raise ValueError(f"unknown exclusion kind {unknown[0]!r}: choose from "
                             f"{', '.join(DEFAULT_KINDS)}")
        for pattern in self.patterns:
            try:
                re.compile(pattern)
            except re.error as err:
                raise ValueError(f"exclusion pattern {pattern!r}: {err}") from err

    @classmethod
    def none(cls) -> ExclusionRules:
        """Rules that exclude nothing."""
        return cls((), ())

    @classmethod
    def of(cls, exclude_lines: Sequence[str] | None = None,
           exclude_also: Sequence[str] = (), kinds: Sequence[str] | None = None
           ) -> ExclusionRules:
        """coverage.py's settings: ``exclude_lines`` replaces the default pattern,
        ``exclude_also`` adds to it (or to ``exclude_lines``)."""
        base = (DEFAULT_PATTERN,) if exclude_lines is None else tuple(exclude_lines)
        return cls(base + tuple(exclude_also),
                   DEFAULT_KINDS if kinds is None else tuple(kinds))

    @property
    def empty(self) -> bool:
        return not self.patterns and not self.kinds

    def matching_lines(self, source: str) -> set[int]:
        """The line numbers (1-based) any pattern matches."""
        if not self.patterns:
            return set()
        regex = re.compile("|".join(f"(?:{p})" for p in self.patterns))
        return {number for number, line in enumerate(source.splitlines(), 1)
                if regex.search(line)}


@dataclass
class ExcludedSource:
    """What the rules exclude from one module's source: statement spans (sorted), the
    ``def`` lines of excluded functions, and why each was excluded."""

    spans: list[Span] = field(default_factory=list)
    functions: dict[int, str] = field(default_factory=dict)

    def function_reason(self, def_line: int) -> str | None:
        """Why the function whose ``def`` is on ``def_line`` is excluded, or None."""
        return self.functions.get(def_line)

    def covers(self, piece: Piece) -> bool:
        """Whether the piece lies inside an excluded statement."""
        # the spans do not overlap (nothing inside an excluded one is looked at), so
        # only the last one starting at or before the piece can hold it
        index = bisect.bisect_right(self.spans, Span(piece.line, piece.col, 1 << 30, 0))
        if not index:
            return False
        span = self.spans[index - 1]
        return (piece.end_line, piece.end_col) <= (span.end_line, span.end_col)

    def block_excluded(self, pieces: Sequence[Piece]) -> bool:
        """A block is excluded when it has code and all of it is excluded."""
        return bool(pieces) and all(self.covers(p) for p in pieces)


def _span(node: ast.AST) -> Span:
    return Span(node.lineno, node.col_offset,  # type: ignore[attr-defined]
                node.end_lineno or node.lineno,  # type: ignore[attr-defined]
                node.end_col_offset or 0)  # type: ignore[attr-defined]


class _Keywords:
    """Where the clause keywords without a node of their own (``else``, ``finally``,
    ``try``) are, from the token stream."""

    def __init__(self, source: str) -> None:
        self._source = source
        self._found: list[tuple[int, int, str]] | None = None

    @property
    def _positions(self) -> list[tuple[int, int, str]]:
        """The keywords' positions, read from the tokens the first time they are asked
        for (most modules' compound statements have no excluded line to look for)."""
        if self._found is None:
            self._found = []
            try:
                for token in tokenize.generate_tokens(io.StringIO(self._source).readline):
                    if token.type == tokenize.NAME and token.string in _CLAUSE_KEYWORDS:
                        self._found.append((*token.start, token.string))
            except (tokenize.TokenError, SyntaxError):  # pragma: no cover - source parsed
                pass
        return self._found

    def line_between(self, keyword: str, after: tuple[int, int],
                     before: tuple[int, int]) -> int | None:
        """The line of the first ``keyword`` token between two positions, or None (an
        ``elif``, which has no ``else`` token of its own)."""
        index = bisect.bisect_left(self._positions, (*after, ""))
        for line, col, word in self._positions[index:]:
            if (line, col) >= before:
                break
            if word == keyword:
                return line
        return None


class _Unmatched:
    """The clause keywords of a statement no line of which a pattern matches: any line
    of it serves as a header's, since none can be matched (no token is read)."""

    @staticmethod
    def line_between(keyword: str, after: tuple[int, int], before: tuple[int, int]) -> int:
        return after[0]


def _clauses(node: ast.stmt, keywords: _Keywords | type[_Unmatched]
             ) -> Iterator[tuple[int | None, list[ast.stmt]]]:
    """Each clause of a compound statement: the line its header starts on, and its
    body; an ``elif`` comes as ``(None, [the elif's if])``, a statement of its own."""
    row = construct(node)
    if row is not None and not row.clauses:  # if, for, while, with: a body, maybe an else
        body: list[ast.stmt] = getattr(node, row.bodies[0])
        yield node.lineno, body
        orelse: list[ast.stmt] = getattr(node, "orelse", [])
        if orelse:
            end = (body[-1].end_lineno or 0, body[-1].end_col_offset or 0)
            line = keywords.line_between("else", end, (orelse[0].lineno,
                                                       orelse[0].col_offset))
            yield line, orelse
    elif isinstance(node, TRIES):
        yield node.lineno, node.body
        last: ast.stmt | ast.excepthandler = node.body[-1]
        for handler in node.handlers:
            yield handler.lineno, handler.body
            last = handler
        for keyword, body in (("else", node.orelse),
                              ("finally", node.finalbody)):
            if body:
                end = (last.end_lineno or 0, last.end_col_offset or 0)
                yield (keywords.line_between(keyword, end, (body[0].lineno,
                                                            body[0].col_offset))
                       or body[0].lineno), body
                last = body[-1]
    elif isinstance(node, ast.Match):
        for case in node.cases:
            yield case.pattern.lineno, case.body


def _is_stub(body: Sequence[ast.stmt], allow_pass: bool = True) -> bool:
    """A body that is only a docstring, ``...``, ``pass`` or ``raise NotImplementedError``."""
    statements = list(body)
    if (statements and isinstance(statements[0], ast.Expr)
            and isinstance(statements[0].value, ast.Constant)
            and isinstance(statements[0].value.value, str)):
        statements = statements[1:]
    if not statements:
        return True
    if len(statements) != 1:
        return False
    only = statements[0]
    if isinstance(only, ast.Pass):
        return allow_pass
    if isinstance(only, ast.Expr) and isinstance(only.value, ast.Constant):
        return only.value.value is Ellipsis
    return _raises_not_implemented(only)


def _raises_not_implemented(node: ast.stmt) -> bool:
    if not isinstance(node, ast.Raise) or node.exc is None:
        return False
    exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
    return _name(exc) == "NotImplementedError"


def _name(node: ast.AST) -> str | None:
    """The last name of a dotted name: ``typing.overload`` -> ``overload``."""
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _default_reason(node: ast.FunctionDef | ast.AsyncFunctionDef, in_protocol: bool,
                    kinds: Iterable[str]) -> str | None:
    """Which default kind, if any, excludes the function."""
    decorators = {_name(d) for d in node.decorator_list}
    if "overload" in kinds and "overload" in decorators:
        return "@overload"
    if "abstract" in kinds:
        if decorators & _ABSTRACT_DECORATORS and _is_stub(node.body):
            return "abstract stub"
        if in_protocol and _is_stub(node.body, allow_pass=False):
            return "protocol stub"
    return None


def _accessor_of(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """The property a ``@NAME.setter`` (or ``.deleter``, ``.getter``) method belongs to."""
    for decorator in node.decorator_list:
        if (isinstance(decorator, ast.Attribute) and isinstance(decorator.value, ast.Name)
                and decorator.attr in ("setter", "deleter", "getter")):
            return decorator.value.id
    return None


def _first_line(node: ast.stmt) -> int:
    """A statement's first line: its first decorator's, if it has any."""
    decorators: list[ast.expr] = getattr(node, "decorator_list", [])
    return min([node.lineno] + [d.lineno for d in decorators])


def _docstring(body: Sequence[ast.stmt]) -> bool:
    return bool(body) and isinstance(body[0], ast.Expr) and isinstance(
        body[0].value, ast.Constant) and isinstance(body[0].value.value, str)


def _is_type_checking(test: ast.expr) -> bool:
    return _name(test) == "TYPE_CHECKING" and not isinstance(test, ast.Call)


def _is_protocol(node: ast.ClassDef) -> bool:
    return any(_name(base.value if isinstance(base, ast.Subscript) else base) == "Protocol"
               for base in node.bases)


class _Finder:
    """One walk of the module: the spans and functions the rules exclude."""

    def __init__(self, source: str, rules: ExclusionRules) -> None:
        self.rules = rules
        self.lines = rules.matching_lines(source)
        self._sorted_lines = sorted(self.lines)
        self.keywords = _Keywords(source)
        self.result = ExcludedSource()

    def exclude(self, nodes: Iterable[ast.stmt], reason: str) -> None:
        for node in nodes:
            self.result.spans.append(_span(node))
            for inner in ast.walk(node):
                if isinstance(inner, FUNCTIONS):
                    self.result.functions.setdefault(inner.lineno, reason)

    def matched(self, first: int, last: int) -> bool:
        """Whether a pattern matches a line from ``first`` to ``last``."""
        index = bisect.bisect_left(self._sorted_lines, first)
        return index < len(self._sorted_lines) and self._sorted_lines[index] <= last

    def walk(self, body: Sequence[ast.stmt], in_protocol: bool = False) -> None:
        abstract: set[str] = set()  # a class's abstract stub properties, by name
        for node in body:
            reason = self.visit(node, in_protocol, abstract)
            if reason is not None and isinstance(node, ast.FunctionDef
                                                 | ast.AsyncFunctionDef):
                abstract.add(node.name)  # an excluded property's stub accessors go too

    def visit(self, node: ast.stmt, in_protocol: bool, abstract: set[str]) -> str | None:
        """Look at one statement; the reason it was excluded for, if it was."""
        if isinstance(node, SCOPES):
            header_end = max(node.lineno, _first_line(node.body[0]) - 1)
            if self.matched(_first_line(node), header_end):
                self.exclude([node], "excluded line")
                return "excluded line"
            if isinstance(node, ast.ClassDef):
                self.walk(node.body, _is_protocol(node))
                return None
            reason = _default_reason(node, in_protocol, self.rules.kinds)
            if (reason is None and _accessor_of(node) in abstract
                    and _is_stub(node.body, allow_pass=False)):
                reason = "abstract stub"
            if reason is not None:
                self.exclude([node], reason)
                return reason
            self.walk(node.body)
            return None
        keywords = (self.keywords if self.matched(node.lineno, node.end_lineno or node.lineno)
                    else _Unmatched)
        clauses = list(_clauses(node, keywords))
        if not clauses:
            if self.matched(node.lineno, node.end_lineno or node.lineno):
                self.exclude([node], "excluded line")
                return "excluded line"
            return None
        for index, (header, clause_body) in enumerate(clauses):
            body_start = _first_line(clause_body[0])
            if header is None:
                self.walk(clause_body)
            elif self.matched(header, max(header, body_start - 1)):
                self.exclude(clause_body, "excluded line")
            elif (index == 0 and isinstance(node, ast.If) and "type-checking"
                  in self.rules.kinds and _is_type_checking(node.test)):
                self.exclude(clause_body, "if TYPE_CHECKING")
            else:
                self.walk(clause_body)
        return None


def exclusions_of(source: str, rules: ExclusionRules, filename: str = "<source>",
                  tree: ast.Module | None = None) -> ExcludedSource:
    """What ``rules`` exclude from ``source`` (which must parse; a module that does not
    is left to fail where it is run, not here: it excludes nothing); ``tree``, the
    source's, where the caller parsed it already."""
    if rules.empty:
        return ExcludedSource()
    if tree is None:
        try:
            tree = ast.parse(source, filename)
        except (SyntaxError, ValueError, RecursionError, MemoryError):  # (too deep: no parse)
            return ExcludedSource()
    finder = _Finder(source, rules)
    finder.walk(tree.body)
    finder.result.spans.sort()
    return finder.result
