""":mod:`pathprof.data.measurement`, what a data file holds in memory: a
:class:`Selection` written as JSON and read back (anything else, as a file edited by
hand may hold, is a ValueError: every entry a non-empty string of at most 4,096
characters, at most 10,000 of them, and at least one source), a
:class:`Measurement`'s mode (its runs', or ``mixed``), and :func:`source_conflicts`,
the functions measured from more than one version of their source."""

from __future__ import annotations

from typing import Any

import pytest

from pathprof.data.measurement import Measurement, RunInfo, Selection, source_conflicts
from pathprof.data.modules import Sources
from pathprof.data.profile import FunctionProfile


def _run(mode: str = "path") -> RunInfo:
    return RunInfo(0.0, ["prog.py"], "3.11.7", mode, None, 1, "host")


# -- Selection ---------------------------------------------------------------------------

def test_a_selection_is_written_as_lists_of_its_three_parts() -> None:
    selection = Selection(("src", "pkg.mod"), ("*/a.py",), ("*/tests/*",))
    assert selection.to_json() == {"source": ["src", "pkg.mod"], "include": ["*/a.py"],
                                   "omit": ["*/tests/*"]}


def test_a_selection_read_back_is_the_one_written() -> None:
    selection = Selection(("/home/me/src",), (), ("*/vendored/*", "*/gen/*"))
    assert Selection.from_json(selection.to_json()) == selection


def test_parts_left_out_are_empty() -> None:
    assert Selection.from_json({"source": ["src"]}) == Selection(("src",), (), ())


def test_entries_at_the_bounds_are_read() -> None:
    longest = "x" * 4096
    many = ["s"] * 10_000
    assert Selection.from_json({"source": [longest]}).source == (longest,)
    assert len(Selection.from_json({"source": many}).source) == 10_000


@pytest.mark.parametrize("value", [
    None, [], "src", ["src"],  # not an object
    {"source": ["src"], "exclude": []},  # a key of no selection
], ids=["none", "list", "text", "list-of-names", "other-key"])
def test_what_is_not_a_selection_is_a_value_error(value: Any) -> None:
    with pytest.raises(ValueError, match="not a selection"):
        Selection.from_json(value)


@pytest.mark.parametrize(("value", "part"), [
    ({"source": "src"}, "source"),
    ({"source": [1]}, "source"),
    ({"source": [""]}, "source"),
    ({"source": ["x" * 4097]}, "source"),
    ({"source": ["s"] * 10_001}, "source"),
    ({"source": ["src"], "include": [None]}, "include"),
    ({"source": ["src"], "omit": {"a": 1}}, "omit"),
    ({"source": ["src"], "omit": [["nested"]]}, "omit"),
], ids=["text", "number", "empty-name", "long-name", "too-many", "include", "omit-object",
        "nested"])
def test_a_part_that_is_not_a_list_of_names_is_a_value_error(value: Any,
                                                             part: str) -> None:
    with pytest.raises(ValueError, match=f"a selection's {part} is not a list of names"):
        Selection.from_json(value)


@pytest.mark.parametrize("value", [{}, {"source": []}, {"include": ["a"]}])
def test_a_selection_naming_no_source_is_a_value_error(value: Any) -> None:
    with pytest.raises(ValueError, match="a selection names no source"):
        Selection.from_json(value)


# -- Measurement -------------------------------------------------------------------------

def test_an_empty_measurement_holds_nothing() -> None:
    measurement = Measurement()
    assert (measurement.runs, measurement.functions, measurement.selections) == ([], [], [])
    assert isinstance(measurement.sources, Sources)
    assert len(measurement.sources) == 0
    assert Measurement().runs is not measurement.runs  # each its own lists


@pytest.mark.parametrize(("modes", "mode"), [
    (["path"], "path"), (["edge", "edge"], "edge"), (["path", "edge"], "mixed"),
])
def test_the_mode_is_the_runs_or_mixed(modes: list[str], mode: str) -> None:
    assert Measurement(runs=[_run(m) for m in modes]).mode == mode


# -- source_conflicts --------------------------------------------------------------------

def _fn(file: str, qualname: str, digest: str, line: int = 1) -> FunctionProfile:
    return FunctionProfile(file, qualname, line, digest, None)


def test_functions_of_one_source_do_not_conflict() -> None:
    one = Measurement(functions=[_fn("a.py", "f", "h1"), _fn("a.py", "g", "h1")])
    other = Measurement(functions=[_fn("a.py", "f", "h1")])
    assert source_conflicts([one, other]) == []
    assert source_conflicts([]) == []


def test_a_function_measured_from_several_versions_is_named_with_their_number() -> None:
    first = Measurement(functions=[_fn("b.py", "f", "h1"), _fn("a.py", "g", "h1"),
                                   _fn("a.py", "f", "h1")])
    second = Measurement(functions=[_fn("b.py", "f", "h2"), _fn("a.py", "g", "h2")])
    third = Measurement(functions=[_fn("b.py", "f", "h3"), _fn("b.py", "f", "h1")])
    # sorted by file, then qualname; a.py's f has one version only
    assert source_conflicts([first, second, third]) == [("a.py", "g", 2), ("b.py", "f", 3)]


def test_versions_within_one_measurement_conflict_too() -> None:
    one = Measurement(functions=[_fn("a.py", "f", "h1"), _fn("a.py", "f", "h2", line=5)])
    assert source_conflicts([one]) == [("a.py", "f", 2)]


def test_the_same_qualname_in_two_files_does_not_conflict() -> None:
    one = Measurement(functions=[_fn("a.py", "f", "h1"), _fn("b.py", "f", "h2")])
    assert source_conflicts([one]) == []


def test_conflicts_accept_any_iterable_of_measurements() -> None:
    measurements = (Measurement(functions=[_fn("a.py", "f", h)]) for h in ("h1", "h2"))
    assert source_conflicts(measurements) == [("a.py", "f", 2)]
