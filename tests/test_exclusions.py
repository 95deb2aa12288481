"""Exclusions as coverage.py users write them (pathprof.analysis.exclusions), what
they take out of path coverage (pathprof.analysis.pathcoverage), and where their
settings come from (pathprof.config)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from pathprof import api
from pathprof.analysis.exclusions import DEFAULT_PATTERN, ExclusionRules, exclusions_of
from pathprof.analysis.pathcoverage import path_coverage
from pathprof.config import coverage_py_exclusions, read_config
from pathprof.data.measurement import Measurement
from pathprof.data.profile import FunctionProfile
from pathprof.exceptions import ConfigError

from .loading import load_instrumented
from .test_basis import write
from .test_exports import _profiles

STUBS = '''\
    import abc
    from typing import TYPE_CHECKING, Protocol, overload
    import typing

    if TYPE_CHECKING:
        import os

    class Readable(Protocol):
        def read(self) -> bytes: ...

    class Base(abc.ABC):
        @abc.abstractmethod
        def run(self):
            """Run it."""

        @abc.abstractmethod
        def real(self):
            return 1

        def todo(self):
            raise NotImplementedError("subclasses do this")

    @overload
    def parse(x: int) -> int: ...
    @typing.overload
    def parse(x: str) -> str: ...
    def parse(x):
        return x
    '''


def _excluded_functions(source: str, rules: ExclusionRules) -> dict[int, str]:
    return exclusions_of(textwrap.dedent(source), rules).functions


def test_default_kinds() -> None:
    """@overload stubs, abstract and protocol stubs; an abstract method with a real
    body, a concrete one that raises NotImplementedError (it runs: tests check it
    raises) and the implementation stay."""
    assert _excluded_functions(STUBS, ExclusionRules()) == {
        9: "protocol stub", 13: "abstract stub", 24: "@overload", 26: "@overload"}
    found = exclusions_of(textwrap.dedent(STUBS), ExclusionRules())
    assert found.spans[0][:3] == (6, 4, 6)  # the TYPE_CHECKING import


def test_default_kinds_can_be_turned_off() -> None:
    assert _excluded_functions(STUBS, ExclusionRules.of(kinds=["overload"])) == {
        24: "@overload", 26: "@overload"}
    assert _excluded_functions(STUBS, ExclusionRules.of(kinds=[])) == {}
    assert exclusions_of(textwrap.dedent(STUBS), ExclusionRules.none()).spans == []


PRAGMAS = """\
    def f(x, y):
        if x:  # pragma: no cover
            a = 1
        else:
            a = 2
        try:
            b = 1
        except KeyError:  # pragma: no cover
            b = 2
        else:  # PRAGMA: NO COVER
            b = 3
        if y == 1:
            c = 1
        elif y == 2:  # pragma: no cover
            c = 2
        else:
            c = 3
        d = 1  # pragma: no cover
        return a + b + c + d

    def g():  # pragma: no cover
        def inner():
            pass

    @decorate  # pragma: no cover
    def h():
        pass

    class C:  # pragma: no cover
        def m(self):
            pass
    """


def test_a_pragma_excludes_the_clause_it_heads_or_its_statement() -> None:
    found = exclusions_of(textwrap.dedent(PRAGMAS), ExclusionRules())
    assert [span.line for span in found.spans] == [3, 9, 11, 15, 18, 21, 26, 29]
    # the def lines of g, its inner function, h and C.m
    assert sorted(found.functions) == [21, 22, 26, 30]


DECORATED_FIRST = """\
    import abc

    class Shape(abc.ABC):
        @abc.abstractmethod  # pragma: no cover
        def area(self):
            return 0

        def describe(self):
            return "shape"

    def outer(x):
        @decorate  # pragma: no cover
        def helper():
            pass
        return x

    class Spec(abc.ABC):
        @property
        @abc.abstractmethod
        def level(self):
            \"\"\"The level.\"\"\"

        @level.setter
        def level(self, value):
            \"\"\"Set it.\"\"\"

        @level.setter
        def other(self, value):
            self.x = value
    """


def test_a_matched_decorator_of_a_first_statement_excludes_that_statement_only() -> None:
    """A class's or function's header ends before its first statement's decorators
    (it took them in: a pragma on the first method's decorator excluded the class);
    an abstract property's stub setter goes with it, a real one stays."""
    found = exclusions_of(textwrap.dedent(DECORATED_FIRST), ExclusionRules())
    assert found.functions == {5: "excluded line", 13: "excluded line",
                               20: "abstract stub", 24: "abstract stub"}


def test_exclude_lines_replaces_and_exclude_also_adds() -> None:
    source = "def f(x):\n    if x:  # pragma: no cover\n        a = 1\n    raise AssertionError\n"
    replaced = exclusions_of(source, ExclusionRules.of(["raise AssertionError"]))
    assert [s.line for s in replaced.spans] == [4]
    added = exclusions_of(source, ExclusionRules.of(None, ["raise AssertionError"]))
    assert [s.line for s in added.spans] == [3, 4]
    assert ExclusionRules.of(None, ["x"]).patterns == (DEFAULT_PATTERN, "x")


def test_a_bad_pattern_or_kind_is_named() -> None:
    with pytest.raises(ValueError, match="exclusion pattern '\\('"):
        ExclusionRules.of(["("])
    with pytest.raises(ValueError, match="unknown exclusion kind 'stubs'"):
        ExclusionRules.of(kinds=["stubs"])


COVERED = """\
    from typing import overload

    @overload
    def pick(x: int) -> int: ...
    def pick(x, strict=False):
        if x is None:  # pragma: no cover
            raise ValueError("no")
        if strict:
            x = abs(x)
        return x

    def sequence(a):
        for item in a:
            if item:  # pragma: no cover
                return item
        return None
    """


def _measure(path: Path, run) -> list[FunctionProfile]:
    """Every function's profile (two of one name included, as an overload's)."""
    loaded = load_instrumented(path, mark_probes=False)
    loaded.execute()
    loaded.snapshot()
    run(loaded.module)
    return _profiles(loaded)


def _coverage(tmp_path: Path, rules: ExclusionRules):
    path = write(tmp_path, COVERED)
    fns = _measure(path, lambda m: [m.pick(3), m.sequence([])])
    return path_coverage(Measurement(functions=fns), rules), fns


def test_an_excluded_branch_takes_its_paths_and_dimensions(tmp_path: Path) -> None:
    """pick has 3 paths and dimension 3; excluding the raise leaves 2 paths,
    dimension 2, of which one ran. sequence's excluded ``if`` inside the loop: the
    loop's paths through it go."""
    raw, _fns = _coverage(tmp_path, ExclusionRules.none())
    excluded, _fns = _coverage(tmp_path, ExclusionRules())
    def figures(coverage):
        return [(fn.profile.first_line, fn.totals.run, fn.totals.possible, fn.basis.run,
                 fn.basis.possible) for fn in coverage.functions()]

    # the stub (line 3), pick: x is None raises / strict / not; sequence: 6 paths of
    # a loop whose body returns or goes round, dimension 4
    assert figures(raw) == [(3, 0, 1, 0, 1), (5, 1, 3, 1, 3), (12, 1, 6, 1, 4)]
    # the excluded raise and return: 2 paths of pick, 4 of sequence (those through
    # ``return item`` gone, from the entry and from the loop's header)
    assert figures(excluded) == [(5, 1, 2, 1, 2), (12, 1, 4, 1, 3)]
    # the overload stub is gone from the table, and counted as excluded
    assert [fn.qualname for fn in excluded.functions()] == ["pick", "sequence"]
    assert excluded.excluded.functions == {"@overload": 1}
    total_raw = raw.basis.possible
    assert excluded.basis.possible + excluded.excluded.dimensions == total_raw
    assert excluded.totals.possible + excluded.excluded.paths == raw.totals.possible


def test_exclusions_need_the_source_and_leave_it_alone_when_it_changed(tmp_path: Path
                                                                       ) -> None:
    """With no source in the data file and the file edited since, nothing can be
    excluded: the figures are the raw ones, not a guess."""
    path = write(tmp_path, COVERED)
    fns = _measure(path, lambda m: m.pick(3))
    path.write_text("# edited\n" + path.read_text())
    coverage = path_coverage(Measurement(functions=fns), ExclusionRules())
    assert not coverage.excluded
    assert len(coverage.functions()) == 3


def test_unimported_files_count_at_zero(tmp_path: Path) -> None:
    path = write(tmp_path, COVERED)
    fns = _measure(path, lambda m: m.pick(3))
    other = tmp_path / "other.py"
    other.write_text("def never(a):\n    if a:\n        return 1\n    return 2\n")
    broken = tmp_path / "broken.py"
    broken.write_text("def (:\n")
    empty = tmp_path / "empty.py"
    empty.write_text("X = 1\n")
    coverage = api.coverage(Measurement(functions=fns), ExclusionRules(),
                            [str(path), str(other), str(broken), str(empty)])
    assert [f.file for f in coverage.unimported] == [str(other)]
    never = coverage.unimported[0]
    assert (never.totals.run, never.totals.possible, never.basis.run,
            never.basis.possible) == (0, 2, 0, 2)
    assert [file for file, _why in coverage.unparsed] == [str(broken)]
    assert "does not parse" in coverage.unparsed[0][1]
    measured = [f for f in coverage.files if f.imported]
    assert coverage.basis.possible == sum(f.basis.possible for f in measured) + 2
    assert not coverage.notes


def test_a_source_elsewhere_than_the_code_measured_is_not_counted(tmp_path: Path) -> None:
    """``--source NAME`` can find a directory of that name here while the tests ran
    the installed copy: then no file of the source was measured, and counting them
    all at 0% would halve the figure for nothing. The report says so instead."""
    path = write(tmp_path, COVERED)
    fns = _measure(path, lambda m: m.pick(3))
    elsewhere = tmp_path / "copy"
    elsewhere.mkdir()
    (elsewhere / "subject.py").write_text(path.read_text())
    coverage = api.coverage(Measurement(functions=fns), ExclusionRules(),
                            [str(elsewhere / "subject.py")])
    assert not coverage.unimported
    assert coverage.notes == [
        "No file under the source (1) was measured (the code measured is elsewhere: "
        "is the source the installed copy?), so none is counted at 0%."]


def test_configuration_keys(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(textwrap.dedent("""\
        [tool.pathprof]
        exclude_also = ["if DEBUG:"]
        exclude_kinds = ["overload"]
        coverage_exclusions = true

        [tool.coverage.report]
        exclude_lines = ["pragma: no cover", "raise AssertionError"]
        """))
    config = read_config(str(tmp_path))
    assert config.exclusion_settings() == (["pragma: no cover", "raise AssertionError"],
                                           ["if DEBUG:"], ["overload"])
    (tmp_path / "pyproject.toml").write_text("[tool.pathprof]\ncoverage_exclusions = 1\n")
    with pytest.raises(ConfigError, match="coverage_exclusions must be true or false"):
        read_config(str(tmp_path))


def test_coverage_py_settings_files(tmp_path: Path) -> None:
    (tmp_path / "setup.cfg").write_text(
        "[coverage:report]\nexclude_also =\n    def __repr__\n    if 0:\n")
    assert coverage_py_exclusions(str(tmp_path)) == (None, ["def __repr__", "if 0:"])
    (tmp_path / ".coveragerc").write_text("[report]\nexclude_lines =\n    nocov\n")
    assert coverage_py_exclusions(str(tmp_path)) == (["nocov"], [])
    assert coverage_py_exclusions(str(tmp_path / "nowhere")) == (None, [])


WHOLLY = """\
    class Base:
        def area(self):
            '''The area.'''
            raise NotImplementedError

        @property
        def level(self):  # pragma: no cover
            return 1

        @level.setter
        def level(self, value):
            '''Set it.'''

        def real(self, x):
            if x:
                return 1
            return 2
    """


def test_a_function_with_every_statement_excluded_is_excluded(tmp_path: Path) -> None:
    """``exclude_also = ["raise NotImplementedError"]`` on a method whose only statement
    raises leaves it no line (coverage.py: 100%), so it is left out whole; the stub
    setter of a property a pattern excluded goes with it."""
    path = write(tmp_path, WHOLLY)
    fns = _measure(path, lambda m: m.Base().real(1))
    rules = ExclusionRules.of(None, ["raise NotImplementedError"])
    coverage = path_coverage(Measurement(functions=fns), rules)
    assert [fn.qualname for fn in coverage.functions()] == ["Base.real"]
    assert coverage.excluded.functions == {"excluded line": 2, "abstract stub": 1}
    kept = path_coverage(Measurement(functions=fns), ExclusionRules())
    assert [fn.qualname for fn in kept.functions()] == ["Base.area", "Base.real"]


@pytest.mark.parametrize("pattern", [r"\breturn\b", r"\belse\b", r"\braise\b", r":\s*$",
                                     r"\bfinally\b"])
def test_reading_keywords_only_where_a_line_matches_changes_nothing(
        pattern: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A compound statement none of whose lines a pattern matches reads no token for its
    clauses' headers: on standard library modules, with patterns that match headers,
    bodies and clause keywords, what is excluded is what reading every header gives."""
    import inspect

    from pathprof.analysis import exclusions

    rules = ExclusionRules.of(exclude_lines=[pattern])
    modules = ["argparse", "ast", "tarfile", "inspect", "shutil", "tokenize", "zipfile"]
    excluded = 0
    for name in modules:
        source = inspect.getsource(__import__(name))
        fast = exclusions_of(source, rules)
        with monkeypatch.context() as patched:
            keywords = exclusions._Keywords(source)
            patched.setattr(exclusions, "_Unmatched", keywords)  # every header from tokens
            patched.setattr(exclusions._Finder, "matched",
                            lambda self, first, last: any(
                                line in self.lines for line in range(first, last + 1)))
            slow = exclusions_of(source, rules)
        assert (fast.spans, fast.functions) == (slow.spans, slow.functions), name
        excluded += len(fast.spans)
    assert excluded > 10  # (each pattern excludes something)
