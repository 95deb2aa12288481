"""pathprof.report.diff_text, ``pathprof diff`` as text and JSON: per function that
differs, a head (appeared, vanished, changed, unchanged; source changed) and a row per
path (+ new count, - old count, ~ old → new with the relative change), at most
``limit`` of them; the functions newly measured and no longer run; the totals. The JSON
(docs/json-format.md, diff version 1) holds the same. Two runs of a tiny program
measured in memory are compared, their counts chosen by hand."""

from __future__ import annotations

import io
import json
import types
from collections.abc import Callable
from pathlib import Path as FilePath
from typing import Any

import pytest
from rich.console import Console

from pathprof import runtime
from pathprof.analysis.pathdiff import FunctionDiff, PathChange, ProfileDiff, diff_profiles
from pathprof.data.measurement import Measurement
from pathprof.data.modules import Sources
from pathprof.data.profile import FunctionProfile, Path, decode_paths
from pathprof.python.instrument import instrument_source
from pathprof.report.diff_text import diff_json, render, render_diff, render_json

SOURCE = """\
def sign(x):
    if x < 0:
        return -1
    return 1


def gone(x):
    return x


def new(x):
    return -x
"""


def _measure(source: str, run: Callable[[Any], object], file: str) -> Measurement:
    """``source`` instrumented in memory as ``file``, executed, and ``run(module)``'s
    paths (the runtime's registry is put back as it was)."""
    instrumented = instrument_source(source, file, module_key=f"{file}:test-diff-text")
    module = types.ModuleType("diff_text_subject")
    module.__file__ = file
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(runtime, "_modules", [])
        exec(instrumented.compile(file), module.__dict__)
        runtime.take_snapshot()
        run(module)
        ((_state, paths, cuts, *_rest),) = runtime.take_snapshot()
    meta = instrumented.metadata
    functions = []
    for i, info in enumerate(meta.functions):
        fn = FunctionProfile(file, info.qualname, info.code_line, meta.source_hash, info)
        fn.counts, fn.cuts = dict(paths[i]), dict(cuts[i])
        functions.append(fn)
    return Measurement(functions=functions, sources=Sources({(file, meta.source_hash): source}))


def _calls(signs: list[int], *others: str) -> Callable[[Any], None]:
    def run(module: Any) -> None:
        for x in signs:
            module.sign(x)
        for name in others:
            getattr(module, name)(1)
    return run


def _only(measurement: Measurement, *qualnames: str) -> Measurement:
    return Measurement(functions=[f for f in measurement.functions if f.qualname in qualnames])


@pytest.fixture
def here(tmp_path: FilePath, monkeypatch: pytest.MonkeyPatch) -> FilePath:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("COLUMNS", raising=False)
    return tmp_path


@pytest.fixture
def diff(here: FilePath) -> ProfileDiff:
    """Old: sign(2) ten times, gone(1). New: sign(2) twenty times, sign(-1) three
    times, new(1): the path through ``return 1`` went from 10 to 20 (+100%), the one
    through ``return -1`` appeared (3); gone is no longer run, new newly measured."""
    file = str(here / "m.py")
    old = _measure(SOURCE, _calls([2] * 10, "gone"), file)
    new = _measure(SOURCE, _calls([2] * 20 + [-1] * 3, "new"), file)
    return diff_profiles(_only(old, "sign", "gone"), _only(new, "sign", "new"))


def _text(diff: ProfileDiff, **options: Any) -> list[str]:
    out = io.StringIO()
    render(diff, out, **options)
    return out.getvalue().splitlines()


def test_a_function_that_differs_has_a_head_and_a_row_per_path(diff: ProfileDiff) -> None:
    assert _text(diff)[:3] == [
        "sign  m.py:1  +1 appeared, -0 vanished, ~1 changed, 0 unchanged",
        "  + 3  2 → true · 3",
        "  ~ 10 → 20 (+100%)  2 → false · 4",
    ]


def test_functions_newly_measured_and_no_longer_run_are_named(diff: ProfileDiff) -> None:
    lines = _text(diff)
    assert "Functions newly measured: new (m.py)" in lines
    assert "Functions no longer run: gone (m.py)" in lines


def test_the_last_line_sums_the_changes(diff: ProfileDiff) -> None:
    assert _text(diff)[-1] == (
        "1 path appeared, 0 vanished, 1 changed by more than 10% in 1 function.")


def test_a_path_that_vanished_has_its_old_count(here: FilePath) -> None:
    file = str(here / "m.py")
    old = _measure(SOURCE, _calls([2] * 4 + [-1] * 7), file)
    new = _measure(SOURCE, _calls([-1] * 7), file)
    lines = _text(diff_profiles(old, new))
    assert lines[:2] == ["sign  m.py:1  +0 appeared, -1 vanished, ~0 changed, 1 unchanged",
                         "  - 4  2 → false · 4"]
    assert lines[-1] == "0 paths appeared, 1 vanished, 0 changed by more than 10% in 1 function."


def test_a_fall_is_a_negative_change(here: FilePath) -> None:
    file = str(here / "m.py")
    old = _measure(SOURCE, _calls([2] * 8), file)
    new = _measure(SOURCE, _calls([2] * 2), file)
    assert _text(diff_profiles(old, new))[1] == "  ~ 8 → 2 (-75%)  2 → false · 4"


def test_nothing_that_differs_says_so_with_the_threshold(here: FilePath) -> None:
    file = str(here / "m.py")
    old = _measure(SOURCE, _calls([2] * 100), file)
    new = _measure(SOURCE, _calls([2] * 104), file)  # +4%: within 5%
    assert _text(diff_profiles(old, new, threshold=0.05)) == [
        "No paths appeared, vanished or changed by more than 5%."]


def test_a_changed_source_is_said(here: FilePath) -> None:
    file = str(here / "m.py")
    old = _measure(SOURCE, _calls([2]), file)
    new = _measure("# a comment moves every line down\n" + SOURCE, _calls([2, -1]), file)
    lines = _text(diff_profiles(_only(old, "sign"), _only(new, "sign")))
    # matched by shape: the path through return 1 is the same path, one line lower
    assert lines[:2] == [
        "sign  m.py:2  +1 appeared, -0 vanished, ~0 changed, 1 unchanged  (source changed: "
        "paths matched by shape)",
        "  + 1  3 → true · 4"]


def _profile(file: str) -> FunctionProfile:
    meta = instrument_source(SOURCE, file).metadata
    info = meta.functions[0]
    return FunctionProfile(file, info.qualname, info.code_line, meta.source_hash, info)


def _paths(profile: FunctionProfile) -> list[Path]:
    """sign's two paths, the one through ``return -1`` (block of line 3) first."""
    decoded = decode_paths(profile.meta, {0: 1, 1: 1}, {})
    line_three = next(b for b, block in enumerate(profile.meta.blocks)
                      if block.pieces and block.pieces[0].line == 3)
    return sorted(decoded, key=lambda p: line_three not in p.blocks)


def test_limit_keeps_the_first_rows_and_says_how_many_more(here: FilePath) -> None:
    profile = _profile(str(here / "m.py"))
    true_path, false_path = _paths(profile)
    changes = [PathChange(true_path, 0, 5), PathChange(false_path, 7, 0),
               PathChange(true_path, 1, 9)]
    fn = FunctionDiff(profile.file, "sign", 1, False, profile, appeared=changes[:1],
                      vanished=changes[1:2], changed=changes[2:], unchanged=4)
    lines = _text(ProfileDiff([fn], [], [], 0.1), limit=2)
    assert lines == [
        "sign  m.py:1  +1 appeared, -1 vanished, ~1 changed, 4 unchanged",
        "  + 5  2 → true · 3",
        "  - 7  2 → false · 4",
        "  … and 1 more",
        "1 path appeared, 1 vanished, 1 changed by more than 10% in 1 function.",
    ]


def test_only_new_functions_differ_too(here: FilePath) -> None:
    file = str(here / "m.py")
    new = _measure(SOURCE, _calls([], "new"), file)
    lines = _text(diff_profiles(Measurement(), _only(new, "new")))
    assert lines == ["Functions newly measured: new (m.py)",
                     "0 paths appeared, 0 vanished, 0 changed by more than 10% in 0 functions."]


def test_the_json_holds_each_change(diff: ProfileDiff, here: FilePath) -> None:
    out = io.StringIO()
    render_json(diff, out)
    document = json.loads(out.getvalue())
    file = str(here / "m.py")
    new_path = next(p for p in diff.functions[0].profile.paths if p.count == 3)
    old_path = next(p for p in diff.functions[0].profile.paths if p.count == 20)
    assert document == {
        "format": "pathprof-diff", "version": 1, "threshold": 0.1,
        "functions": [{
            "file": file, "qualname": "sign", "first_line": 1, "source_changed": False,
            "appeared": [{"id": new_path.key, "start": "entry", "end": "return", "old": 0,
                          "new": 3}],
            "vanished": [],
            "changed": [{"id": old_path.key, "start": "entry", "end": "return", "old": 10,
                         "new": 20}],
            "unchanged": 0}],
        "new_functions": [{"file": file, "qualname": "new"}],
        "gone_functions": [{"file": file, "qualname": "gone"}],
    }


def test_the_json_lists_only_the_functions_that_differ(here: FilePath) -> None:
    file = str(here / "m.py")
    old = _measure(SOURCE, _calls([2] * 10, "gone"), file)
    new = _measure(SOURCE, _calls([2] * 10, "gone"), file)
    document = diff_json(diff_profiles(old, new))
    assert (document["functions"], document["new_functions"], document["gone_functions"]) == (
        [], [], [])


def test_render_diff_prints_on_the_console_given(diff: ProfileDiff) -> None:
    out = io.StringIO()
    render_diff(diff, Console(file=out, width=200), limit=1)
    assert out.getvalue().splitlines()[1:3] == ["  + 3  2 → true · 3", "  … and 1 more"]
