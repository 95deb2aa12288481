"""Analyses kept for the next report (:mod:`pathprof.analysis.memo`, issue 51): a
report from kept analyses says exactly what one derived from scratch says, on
standard-library modules measured as a program runs them; what is kept is used (the
work is not done again); and a kept file is input: damaged, foreign, oversized or
for other rules or another source, it is not used."""

from __future__ import annotations

import importlib
import json
import os
import random
import shutil
import sys
import sysconfig
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pathprof import api
from pathprof.analysis import pathcoverage
from pathprof.analysis.exclusions import ExclusionRules
from pathprof.analysis.memo import RANKS_KEPT, AnalysisMemo, paths_key, rules_key
from pathprof.measure.profiler import Profiler

#: standard-library modules, copied under names of their own and measured as they run
MODULES = ("textwrap", "shlex", "colorsys", "fnmatch", "difflib")


def _workload(modules: dict[str, Any], seed: int) -> None:
    rng = random.Random(seed)
    words = ["alpha", "beta", "gamma", "delta", "a-b", "x" * 30, "", "tab\there"]
    for _ in range(30):
        text = " ".join(rng.choice(words) for _ in range(rng.randrange(1, 20)))
        modules["textwrap"].fill(text, width=rng.randrange(5, 40))
        modules["textwrap"].dedent("  " + text.replace(" ", "\n  "))
        modules["shlex"].split(text.replace("tab", "'t b'"))
        modules["shlex"].quote(text)
        modules["colorsys"].rgb_to_hsv(rng.random(), rng.random(), rng.random())
        modules["colorsys"].hls_to_rgb(rng.random(), rng.random(), rng.random())
        modules["fnmatch"].fnmatch(rng.choice(words), rng.choice(["a*", "?e*", "[gd]*"]))
        modules["difflib"].SequenceMatcher(None, text, text[::-1]).ratio()


@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data file of the five modules, measured on a random workload."""
    root = tmp_path_factory.mktemp("memo")
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    names = {}
    for module in MODULES:
        name = f"memo_{module}_{uuid.uuid4().hex[:8]}"
        shutil.copy(stdlib / f"{module}.py", root / f"{name}.py")
        names[module] = name
    data = root / ".pathprof"
    sys.path.insert(0, str(root))
    try:
        with Profiler(data_file=str(data), include=[str(root / "*.py")], cache=False,
                      warn_unmatched=False):
            loaded = {module: importlib.import_module(name) for module, name in names.items()}
            _workload(loaded, 1)
    finally:
        sys.path.remove(str(root))
        for name in names.values():
            sys.modules.pop(name, None)
    return data


def _figures(coverage: Any) -> list[Any]:
    """Everything a report prints of the figures, per function, file and total."""
    rows = [(fn.profile.file, fn.qualname, fn.profile.first_line, fn.totals.run,
             fn.totals.possible, fn.totals.lower_bound, fn.basis.run, fn.basis.possible,
             fn.excluded.paths, fn.excluded.dimensions, fn.excluded.partly)
            for fn in coverage.functions()]
    files = [(f.file, f.totals.run, f.totals.possible, f.basis.run, f.basis.possible,
              f.excluded.function_count, f.excluded.paths) for f in coverage.files]
    total = (coverage.totals.run, coverage.totals.possible, coverage.basis.run,
             coverage.basis.possible, dict(coverage.excluded.functions))
    return [rows, files, total]


@pytest.mark.parametrize("rules", [ExclusionRules(), ExclusionRules.none(),
                                   ExclusionRules.of(exclude_also=[r"\braise\b", "return"])],
                         ids=["default", "none", "raise-and-return"])
def test_kept_analyses_report_what_deriving_them_reports(measured: Path, tmp_path: Path,
                                                         rules: ExclusionRules) -> None:
    measurement = api.load(str(measured))
    fresh = api.coverage(measurement, rules)
    cache = str(tmp_path / "cache")
    first = api.coverage(api.load(str(measured)), rules, cache_dir=cache)
    kept = api.coverage(api.load(str(measured)), rules, cache_dir=cache)
    assert _figures(first) == _figures(fresh) == _figures(kept)
    assert len(fresh.functions()) > 80  # (not vacuous: the five modules' functions)
    # the next paths and missed paths come out the same from a space made on demand
    for a, b in zip(fresh.functions(), kept.functions(), strict=True):
        assert [p.key for p in a.missed(3)] == [p.key for p in b.missed(3)], a.qualname
        if a.basis.missed:
            assert ([p.key for p in a.next_paths(2).paths]
                    == [p.key for p in b.next_paths(2).paths]), a.qualname


def test_what_is_kept_is_not_derived_again(measured: Path, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    cache = str(tmp_path / "cache")
    expected = _figures(api.coverage(api.load(str(measured)), ExclusionRules(),
                                     cache_dir=cache))

    def derived(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("derived again")

    for name in ("exclusions_of", "basis_rank", "numbering_of", "path_space"):
        monkeypatch.setattr(pathcoverage, name, derived)
    kept = api.coverage(api.load(str(measured)), ExclusionRules(), cache_dir=cache)
    assert _figures(kept) == expected


def test_another_run_adds_its_ranks_and_keeps_the_figures_right(
        measured: Path, tmp_path: Path) -> None:
    """A second data file of the same modules, run on other inputs: the kept spaces
    serve it, its ranks are derived and kept beside the first run's."""
    cache = str(tmp_path / "cache")
    first = api.load(str(measured))
    api.coverage(first, ExclusionRules(), cache_dir=cache)
    fewer = api.load(str(measured))
    for fn in fewer.functions:  # (another run: some paths did not run)
        for key in list(fn.counts)[::2]:
            fn.counts[key] = 0
    assert (_figures(api.coverage(fewer, ExclusionRules(), cache_dir=cache))
            == _figures(api.coverage(fewer, ExclusionRules())))
    assert (_figures(api.coverage(api.load(str(measured)), ExclusionRules(), cache_dir=cache))
            == _figures(api.coverage(api.load(str(measured)), ExclusionRules())))


def _kept_files(cache: str) -> list[Path]:
    return sorted((Path(cache) / "analyses").glob("*.json"))


@pytest.mark.parametrize("damage", ["garbage", "truncated", "wrong-figure", "group-writable",
                                    "oversized", "other-version"])
def test_a_damaged_or_foreign_file_is_not_used_and_is_replaced(
        measured: Path, tmp_path: Path, damage: str) -> None:
    cache = str(tmp_path / "cache")
    expected = _figures(api.coverage(api.load(str(measured)), ExclusionRules()))
    api.coverage(api.load(str(measured)), ExclusionRules(), cache_dir=cache)
    files = _kept_files(cache)
    assert len(files) == len(MODULES)
    for path in files:
        text = path.read_text()
        document = json.loads(text)
        if damage == "garbage":
            path.write_bytes(b"\x00\xff" * 100)
        elif damage == "truncated":
            path.write_text(text[: len(text) // 2])
        elif damage == "wrong-figure":  # a rank above the dimension
            for entry in document["functions"].values():
                entry[2] = [["0" * 32, entry[1] + 1]]
            path.write_text(json.dumps(document))
        elif damage == "group-writable":  # (not pathprof's: someone else could write it)
            for entry in document["functions"].values():
                entry[0] += 1  # what another could have made it say
            path.write_text(json.dumps(document))
            os.chmod(path, 0o664)
        elif damage == "oversized":
            document["padding"] = "x" * (9 << 20)
            path.write_text(json.dumps(document))
        else:
            document["version"] = 0
            path.write_text(json.dumps(document))
    assert _figures(api.coverage(api.load(str(measured)), ExclusionRules(),
                                 cache_dir=cache)) == expected
    if damage != "group-writable":  # (written anew: a good one next time)
        for path in _kept_files(cache):
            assert AnalysisMemo.from_document(json.loads(path.read_text()),
                                              *_identity(path)) is not None


def _identity(path: Path) -> tuple[str, str, str]:
    document = json.loads(path.read_text())
    return document["file"], document["source_hash"], document["rules"]


def test_rules_and_sources_have_memos_of_their_own(measured: Path, tmp_path: Path) -> None:
    cache = str(tmp_path / "cache")
    api.coverage(api.load(str(measured)), ExclusionRules(), cache_dir=cache)
    api.coverage(api.load(str(measured)), ExclusionRules.none(), cache_dir=cache)
    files = _kept_files(cache)
    assert len(files) == 2 * len(MODULES)
    assert {_identity(path)[2] for path in files} == {rules_key(ExclusionRules()),
                                                      rules_key(ExclusionRules.none())}
    memo = AnalysisMemo("a.py", "0" * 32, rules_key(ExclusionRules()))
    memo.keep_space("f", 3, 2)
    document = memo.document()
    assert AnalysisMemo.from_document(document, "a.py", "1" * 32, memo.rules) is None
    assert AnalysisMemo.from_document(document, "b.py", "0" * 32, memo.rules) is None
    assert AnalysisMemo.from_document(document, "a.py", "0" * 32,
                                      rules_key(ExclusionRules.none())) is None
    assert AnalysisMemo.from_document(document, "a.py", "0" * 32, memo.rules) is not None


def test_a_functions_latest_ranks_are_kept() -> None:
    memo = AnalysisMemo("a.py", "0" * 32, "r")
    memo.keep_space("f", 10, 5)
    keys = [paths_key(range(n)) for n in range(RANKS_KEPT + 2)]
    for n, key in enumerate(keys):
        memo.keep_rank("f", key, min(n, 5))
    assert memo.rank("f", keys[-1]) == 5
    assert memo.rank("f", keys[0]) is None  # (the oldest went)
    assert paths_key([3, 1, 2]) == paths_key([1, 2, 3]) != paths_key([1, 2])
    memo.keep_space("f", 11, 5)  # another space: its ranks go with it
    assert memo.rank("f", keys[-1]) is None


_json = st.recursive(st.none() | st.booleans() | st.integers(-3, 2**70) | st.text(max_size=8),
                     lambda inner: st.lists(inner, max_size=4)
                     | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                     max_leaves=30)


@settings(max_examples=200, deadline=None)
@given(document=_json, mutate=st.sampled_from(["none", "excluded", "functions", "entry"]),
       value=_json)
def test_any_document_is_read_or_refused_never_raises(document: Any, mutate: str,
                                                     value: Any) -> None:
    """Random documents, and a good one with one field replaced by anything: read as
    a memo only when every field is well formed."""
    good = AnalysisMemo("a.py", "0" * 32, "r")
    good.keep_space("f", 4, 3)
    good.keep_rank("f", paths_key([0, 1, 2]), 3)
    base = good.document()
    if mutate == "excluded":
        base["excluded"] = value
    elif mutate == "functions":
        base["functions"] = value
    elif mutate == "entry":
        base["functions"]["f"] = value
    for candidate in (document, base):
        memo = AnalysisMemo.from_document(candidate, "a.py", "0" * 32, "r")
        if memo is not None:
            assert memo.document() == AnalysisMemo.from_document(
                memo.document(), "a.py", "0" * 32, "r").document()
            space = memo.space("f")
            if space is not None:
                possible, dimension = space
                assert 0 <= dimension <= possible
