"""Unit tests of :mod:`pathprof.measure.unmeasured`: the files under the source that no
run imported get an empty profile per function, with the paths possible a measured run
would have found, and the files that cannot be read or parsed come back with why. Files
named as measured are skipped (compared as absolute paths), a file with no function
gives nothing, and the invariant -- no counts, the metadata of measuring the file as it
is now -- is checked against the instrumenter's own metadata."""

from __future__ import annotations

import hashlib
import os
import textwrap
from pathlib import Path

import pytest

from pathprof.measure.unmeasured import unmeasured_profiles
from pathprof.python.instrument import instrument_source

# f: one if without else, then a return: 2 paths. g: if/elif/else: 3 paths.
# C.m: straight line: 1 path. (Hand-counted Ball-Larus paths from ENTRY to EXIT.)
SOURCE = textwrap.dedent('''\
    def f(x):
        if x:
            x += 1
        return x


    def g(x):
        if x > 0:
            return 1
        elif x < 0:
            return -1
        else:
            return 0


    class C:
        def m(self):
            return 1
''')


def _write(directory: Path, name: str, text: str | bytes) -> str:
    path = directory / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return str(path)


def test_every_function_of_an_unmeasured_file_gets_an_empty_profile(tmp_path: Path) -> None:
    file = _write(tmp_path, "mod.py", SOURCE)
    profiles, problems = unmeasured_profiles([file], [])
    assert problems == []
    assert [(p.qualname, p.first_line, p.paths_possible) for p in profiles] == [
        ("f", 1, 2), ("g", 7, 3), ("C.m", 17, 1)]
    digest = hashlib.sha256(SOURCE.encode("utf-8")).hexdigest()[:32]
    for profile in profiles:
        assert profile.file == file
        assert profile.source_hash == digest
        assert profile.counts == {}
        assert profile.cuts == {}
        assert profile.times == {}
        assert profile.edges == {}
        assert profile.vectors == {}
        assert (profile.raised, profile.unattributed, profile.closed) == (0, 0, 0)
        assert profile.total == 0
        assert profile.paths_run == 0
        assert not profile.stopped


def test_the_metadata_is_what_instrumenting_the_file_records_less_early_returns(
        tmp_path: Path) -> None:
    file = _write(tmp_path, "mod.py", SOURCE)
    profiles, _problems = unmeasured_profiles([file], [])
    measured = instrument_source(SOURCE, file).metadata
    assert measured.source_hash == profiles[0].source_hash
    assert len(profiles) == len(measured.functions)
    for profile, meta in zip(profiles, measured.functions, strict=True):
        planned = profile.meta
        assert planned.qualname == meta.qualname
        assert planned.code_line == meta.code_line
        assert planned.num_paths == meta.num_paths
        assert len(planned.blocks) == len(meta.blocks)
        assert [(e.src, e.dst) for e in planned.edges] == [(e.src, e.dst) for e in meta.edges]
        assert not planned.early_returns


def test_files_named_as_measured_are_skipped_compared_as_absolute_paths(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    measured = _write(tmp_path, "measured.py", SOURCE)
    other = _write(tmp_path, "other.py", "def h():\n    pass\n")
    monkeypatch.chdir(tmp_path)
    # given relative, measured absolute: the same file
    profiles, problems = unmeasured_profiles(["measured.py", "other.py"], [measured])
    assert problems == []
    assert [(p.qualname, p.file) for p in profiles] == [("h", "other.py")]
    # given absolute, measured relative (with a detour): the same file again
    profiles, _ = unmeasured_profiles([measured, other],
                                      [os.path.join("..", tmp_path.name, "measured.py")])
    assert [p.file for p in profiles] == [other]


def test_a_file_with_no_function_gives_no_profile_and_no_problem(tmp_path: Path) -> None:
    file = _write(tmp_path, "constants.py", "X = 1\nif X:\n    Y = 2\n")
    empty = _write(tmp_path, "empty.py", "")
    assert unmeasured_profiles([file, empty], []) == ([], [])


def test_no_files_give_nothing() -> None:
    assert unmeasured_profiles([], ["/any/measured.py"]) == ([], [])


def test_a_file_that_cannot_be_read_is_a_problem_and_the_others_go_on(tmp_path: Path) -> None:
    missing = str(tmp_path / "gone.py")
    good = _write(tmp_path, "good.py", "def k():\n    return 0\n")
    profiles, problems = unmeasured_profiles([missing, str(tmp_path), good], [])
    assert [p.qualname for p in profiles] == ["k"]
    assert problems == [(missing, "cannot read it: No such file or directory"),
                        (str(tmp_path), "cannot read it: Is a directory")]


def test_a_file_that_does_not_parse_is_a_problem_saying_why(tmp_path: Path) -> None:
    broken = _write(tmp_path, "broken.py", "def broken(:\n    pass\n")
    nulls = _write(tmp_path, "nulls.py", b"def f():\n    return '\x00'\x00\n")
    profiles, problems = unmeasured_profiles([broken, nulls], [])
    assert profiles == []
    assert [file for file, _why in problems] == [broken, nulls]
    assert all(why.startswith("does not parse: ") for _file, why in problems)
    assert "invalid syntax" in problems[0][1]
    assert "null bytes" in problems[1][1]


def test_a_file_too_deep_for_the_parser_is_a_problem(tmp_path: Path) -> None:
    # ``x + x + ... + x``: a left-deep tree of 100,000 additions, which Python itself
    # cannot compile (RecursionError during compilation, on 3.11 to 3.14)
    deep = _write(tmp_path, "deep.py", "def f(x):\n    if x" + " + x" * 100_000
                  + ":\n        return 1\n    return 2\n")
    good = _write(tmp_path, "good.py", "def k():\n    return 0\n")
    profiles, problems = unmeasured_profiles([deep, good], [])
    assert [p.qualname for p in profiles] == ["k"]
    assert [file for file, _why in problems] == [deep]
    assert problems[0][1].startswith("does not parse: ")


def test_nested_functions_and_lambdas_each_get_a_profile(tmp_path: Path) -> None:
    text = "def outer(x):\n    def inner():\n        return x\n    return lambda: inner()\n"
    file = _write(tmp_path, "nested.py", text)
    profiles, problems = unmeasured_profiles([file], [])
    assert problems == []
    qualnames = {p.qualname for p in profiles}
    assert {"outer", "outer.<locals>.inner"} <= qualnames
    assert all(p.paths_possible == 1 for p in profiles)
