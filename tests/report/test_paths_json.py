"""pathprof.report.paths_json, ``pathprof report --format json`` (docs/json-format.md,
version 1): the document's head and runs, each function's figures (paths possible as a
string, paths run, executions, raised, closed, unattributed, stopped counting), its
paths hottest first with count, share, start, end, blocks and decisions (time and
contexts where recorded), the edge profile's prediction, and edge mode's edges. The
output is parsed and checked against tiny programs measured in memory, counted by hand."""

from __future__ import annotations

import contextlib
import io
import json
import types
from collections.abc import Callable
from typing import Any

import pytest

from pathprof import runtime
from pathprof.data.measurement import Measurement, RunInfo
from pathprof.data.modules import Sources
from pathprof.data.profile import FunctionProfile
from pathprof.python.instrument import instrument_source
from pathprof.report.paths_json import JSON_VERSION, function_json, render, to_json
from pathprof.version import __version__

#: total: a for loop (4 paths: from the entry or the loop's header, round again or
#: out); parse: an if whose true arm may raise
SOURCE = """\
def total(xs):
    n = 0
    for x in xs:
        n += x
    return n


def parse(s):
    if s:
        return int(s)
    return 0
"""


def _measure(source: str, run: Callable[[Any], object], file: str = "/p/m.py") -> Measurement:
    """``source`` instrumented in memory as ``file``, executed, and ``run(module)``'s
    paths (the runtime's registry is put back as it was)."""
    instrumented = instrument_source(source, file, module_key=f"{file}:test-paths-json")
    module = types.ModuleType("paths_json_subject")
    module.__file__ = file
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(runtime, "_modules", [])
        exec(instrumented.compile(file), module.__dict__)
        runtime.take_snapshot()
        run(module)
        ((_state, paths, cuts, raised, unattributed, _times, closed, _vectors),) = (
            runtime.take_snapshot())
    meta = instrumented.metadata
    functions = []
    for i, info in enumerate(meta.functions):
        fn = FunctionProfile(file, info.qualname, info.code_line, meta.source_hash, info)
        fn.counts, fn.cuts = dict(paths[i]), dict(cuts[i])
        fn.raised, fn.unattributed, fn.closed = raised[i], unattributed[i], closed[i]
        functions.append(fn)
    return Measurement(functions=functions, sources=Sources({(file, meta.source_hash): source}))


def _run(module: Any) -> None:
    module.total([1, 2])
    for text in ("1", "2", "", "x"):  # "x": int() raises inside the true arm
        with contextlib.suppress(ValueError):
            module.parse(text)


@pytest.fixture(scope="module")
def measured() -> Measurement:
    return _measure(SOURCE, _run)


def _document(measurement: Measurement, **options: Any) -> dict[str, Any]:
    out = io.StringIO()
    render(measurement, out, **options)
    return json.loads(out.getvalue())


def _function(document: dict[str, Any], qualname: str) -> dict[str, Any]:
    return next(f for f in document["functions"] if f["qualname"] == qualname)


def _block(fn: FunctionProfile, line: int) -> int:
    """The block whose first statement starts on ``line``."""
    return next(b for b, block in enumerate(fn.meta.blocks)
                if block.pieces and block.pieces[0].line == line)


def test_the_head_of_the_document(measured: Measurement) -> None:
    document = _document(measured)
    assert (document["format"], document["version"], document["pathprof_version"]) == (
        "pathprof", 1, __version__)
    assert JSON_VERSION == 1
    assert document["runs"] == []


def test_runs_are_listed_and_give_the_mode() -> None:
    runs = [RunInfo(1.5, ["app.py", "-x"], "3.11.7", "path", None, 42, "host"),
            RunInfo(2.5, ["app.py"], "3.12.1", "path", "time", 43, "other")]
    document = _document(Measurement(runs=runs))
    assert document["mode"] == "path"
    assert document["runs"] == [
        {"started": 1.5, "argv": ["app.py", "-x"], "python": "3.11.7", "mode": "path",
         "metric": None, "pid": 42},
        {"started": 2.5, "argv": ["app.py"], "python": "3.12.1", "mode": "path",
         "metric": "time", "pid": 43}]  # no host name
    runs[1].mode = "edge"
    assert _document(Measurement(runs=runs))["mode"] == "mixed"


def test_functions_are_in_file_then_line_order(measured: Measurement) -> None:
    parse, total = measured.functions[1], measured.functions[0]
    other = Measurement(functions=[parse, total])
    assert [f["qualname"] for f in _document(other)["functions"]] == ["total", "parse"]


def test_a_functions_figures(measured: Measurement) -> None:
    parse = _function(_document(measured), "parse")
    # 4 calls: "1" and "2" returned int(s), "" returned 0, "x" raised in int(s)
    assert {key: parse[key] for key in (
        "file", "qualname", "first_line", "last_line", "source_hash", "paths_possible",
        "paths_run", "executions", "raised", "closed", "unattributed",
        "stopped_counting")} == {
        "file": "/p/m.py", "qualname": "parse", "first_line": 8, "last_line": 11,
        "source_hash": measured.functions[1].source_hash, "paths_possible": "2",
        "paths_run": 2, "executions": 4, "raised": 1, "closed": 0, "unattributed": 0,
        "stopped_counting": False}


def test_paths_are_hottest_first_with_their_share_blocks_and_decisions(
        measured: Measurement) -> None:
    fn = measured.functions[1]
    test, true_arm, false_arm = _block(fn, 9), _block(fn, 10), _block(fn, 11)
    paths = _function(_document(measured), "parse")["paths"]
    assert [(p["count"], p["share"], p["start"], p["end"]) for p in paths] == [
        (2, 0.5, "entry", "return"),       # "1", "2"
        (1, 0.25, "entry", "return"),      # ""
        (1, 0.25, "entry", "exception"),   # "x", cut short in int(s)
    ]
    assert [[b["block"] for b in p["blocks"]] for p in paths] == [
        [test, true_arm], [test, false_arm], [test, true_arm]]
    assert [[b["lines"] for b in p["blocks"]] for p in paths] == [
        [[9, 9], [10, 10]], [[9, 9], [11, 11]], [[9, 9], [10, 10]]]
    assert [p["decisions"] for p in paths] == [
        [{"block": test, "line": 9, "taken": "true"}],
        [{"block": test, "line": 9, "taken": "false"}],
        [{"block": test, "line": 9, "taken": "true"}]]


def test_a_cut_path_is_named_by_its_block_and_prefix(measured: Measurement) -> None:
    fn = measured.functions[1]
    ((block, prefix),) = fn.cuts
    paths = _function(_document(measured), "parse")["paths"]
    assert block == _block(fn, 10)
    assert paths[2]["id"] == f"cut:{block}:{prefix}"
    assert {p["id"] for p in paths[:2]} == {str(n) for n in fn.counts}


def test_a_loops_paths_start_at_its_header_and_end_by_going_round(
        measured: Measurement) -> None:
    # total([1, 2]): entry -> 1st item -> round; header -> 2nd item -> round;
    # header -> exhausted -> return; each once, a third of the executions
    paths = _function(_document(measured), "total")["paths"]
    assert sorted((p["start"], p["end"], p["count"], round(p["share"], 4)) for p in paths) == [
        ("entry", "loop-back", 1, 0.3333), ("loop-header", "loop-back", 1, 0.3333),
        ("loop-header", "return", 1, 0.3333)]
    entry = next(p for p in paths if p["start"] == "entry")
    # n = 0 and the iterable on lines 2-3, the next item on 3, the body on 4
    assert [b["lines"] for b in entry["blocks"]] == [[2, 3], [3, 3], [4, 4]]
    assert [d["taken"] for d in entry["decisions"]] == ["next"]
    out = next(p for p in paths if p["end"] == "return")
    assert [d["taken"] for d in out["decisions"]] == ["exhausted"]
    total = _function(_document(measured), "total")
    assert (total["paths_possible"], total["paths_run"], total["executions"]) == ("4", 3, 3)


def test_top_keeps_the_hottest_paths_only(measured: Measurement) -> None:
    parse = _function(_document(measured, top=1), "parse")
    assert [p["count"] for p in parse["paths"]] == [2]
    assert (parse["paths_run"], parse["executions"]) == (2, 4)  # figures of them all


def test_the_edge_profiles_guess_where_it_is_right(measured: Measurement) -> None:
    # the true arm ran 3 times of 4 (once cut): following the most frequent edges
    # guesses the hottest path; of the 3 complete executions, 2 followed it
    fn = measured.functions[1]
    hottest = next(str(n) for n, count in fn.counts.items() if count == 2)
    assert _function(_document(measured), "parse")["edge_prediction"] == {
        "predicted": hottest, "predicted_count": 2, "hottest": hottest, "right": True,
        "executions": 3, "correct": 2}


def test_a_function_that_never_ran_has_no_paths_and_no_guess() -> None:
    measured = _measure(SOURCE, lambda m: m.total([]))
    parse = _function(_document(measured), "parse")
    assert (parse["paths_run"], parse["executions"], parse["paths"]) == (0, 0, [])
    assert "edge_prediction" not in parse
    assert "edges" not in parse


def test_a_path_counted_zero_times_has_a_share_of_zero(measured: Measurement) -> None:
    fn = measured.functions[1]
    empty = FunctionProfile(fn.file, fn.qualname, fn.first_line, fn.source_hash, fn.meta)
    empty.counts = {0: 0}
    data = function_json(empty)
    assert (data["paths_run"], data["executions"]) == (0, 0)
    assert [(p["id"], p["count"], p["share"]) for p in data["paths"]] == [("0", 0, 0.0)]


def test_time_and_contexts_are_given_where_recorded(measured: Measurement) -> None:
    fn = measured.functions[1]
    timed = FunctionProfile(fn.file, fn.qualname, fn.first_line, fn.source_hash, fn.meta)
    timed.counts, timed.cuts = dict(fn.counts), dict(fn.cuts)
    hottest = next(n for n, count in fn.counts.items() if count == 2)
    timed.times = {hottest: 1500}
    timed.contexts = {hottest: {"test_b", "test_a"}}
    paths = function_json(timed)["paths"]
    assert (paths[0]["time_ns"], paths[0]["contexts"]) == (1500, ["test_a", "test_b"])
    assert "time_ns" not in paths[1]
    assert "contexts" not in paths[1]


def test_a_stopped_function_says_its_counts_are_lower_bounds(measured: Measurement) -> None:
    fn = measured.functions[0]
    stopped = FunctionProfile(fn.file, fn.qualname, fn.first_line, fn.source_hash, fn.meta,
                              stopped=True)
    assert function_json(stopped)["stopped_counting"] is True


def test_edge_mode_lists_every_edge_with_its_count_and_line() -> None:
    source = "def f(x):\n    if x:\n        return 1\n"
    meta = instrument_source(source, "/p/e.py").metadata
    (info,) = meta.functions
    fn = FunctionProfile("/p/e.py", "f", 1, meta.source_hash, info)
    true_edge = next(i for i, e in enumerate(info.edges) if e.label == "true")
    fn.edges = {0: 3, true_edge: 2}
    edges = function_json(fn)["edges"]
    assert len(edges) == len(info.edges)
    by_label = {e["label"]: e for e in edges}
    # the branch that falls off the end is named as the branch it is, not "return"
    assert sorted(by_label) == ["call", "false", "return", "true"]
    assert by_label["call"] == {"src": info.entry, "dst": info.edges[0].dst, "label": "call",
                                "count": 3, "line": None}  # ENTRY has no line
    assert (by_label["true"]["count"], by_label["true"]["line"]) == (2, 2)
    assert (by_label["false"]["count"], by_label["false"]["line"]) == (0, 2)


def test_a_path_count_beyond_two_to_the_53_is_a_string_that_keeps_every_digit() -> None:
    # 60 ifs one after another: 2**60 paths
    source = "def many(x):\n" + "".join(f"    if x == {i}:\n        x += 1\n"
                                          for i in range(60)) + "    return x\n"
    measured = _measure(source, lambda m: m.many(-1))
    many = _function(_document(measured), "many")
    assert many["paths_possible"] == str(2**60) == "1152921504606846976"
    assert (many["paths_run"], many["executions"]) == (1, 1)


def test_render_writes_the_document_indented_on_one_line_each_field(
        measured: Measurement) -> None:
    out = io.StringIO()
    render(measured, out)
    assert out.getvalue().startswith('{\n  "format": "pathprof",\n  "version": 1,\n')
    assert out.getvalue().endswith("}\n")


def test_to_json_gives_the_document_as_data(measured: Measurement) -> None:
    document = to_json(measured, top=1)
    functions = document["functions"]
    assert isinstance(functions, list)
    assert [(f["qualname"], len(f["paths"])) for f in functions] == [("total", 1), ("parse", 1)]
