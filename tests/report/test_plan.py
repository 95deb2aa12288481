"""pathprof.report.plan, the ``pathprof plan`` report of one CFG read from JSON: each
DAG edge's Ball-Larus value, whether it is on the spanning tree, its chord increment and
probe; each path (at most :data:`MAX_LISTED_PATHS`) with its blocks, start, end and the
probes it runs, with the spanning tree and with Val on every edge; and the totals.
Every figure is worked out by hand on a diamond, a loop and a chain of diamonds."""

from __future__ import annotations

import io

from rich.console import Console

from pathprof.graph.serial import NamedCfg, cfg_from_data
from pathprof.report.plan import MAX_LISTED_PATHS, render, render_plan, summarize_plan

#: A -> B -> D and A -> C -> D: paths 0 (A B D) and 1 (A C D); Val(A->C) = NumPaths(B) = 1
DIAMOND = cfg_from_data({"blocks": ["A", "B", "C", "D"], "entry": "A", "exit": "D",
                         "edges": [["A", "B"], ["A", "C"], ["B", "D"], ["C", "D"]]})
#: in -> h, h -> b, b -> h (the backedge), h -> out
LOOP = cfg_from_data({"blocks": ["in", "h", "b", "out"], "entry": "in", "exit": "out",
                      "edges": [["in", "h"], ["h", "b"], ["b", "h"], ["h", "out"]]})


def _chain(diamonds: int) -> NamedCfg:
    """``diamonds`` diamonds one after another: 2**diamonds paths."""
    blocks, edges, previous = ["s"], [], "s"
    for i in range(diamonds):
        left, right, join = f"l{i}", f"r{i}", f"j{i}"
        blocks += [left, right, join]
        edges += [[previous, left], [previous, right], [left, join], [right, join]]
        previous = join
    return cfg_from_data({"blocks": blocks, "entry": "s", "exit": previous, "edges": edges})


def _text(named: NamedCfg) -> str:
    out = io.StringIO()
    render(named, Console(file=out, width=150))
    return out.getvalue()


def _rows(text: str) -> list[list[str]]:
    """The cells of every table row."""
    return [[cell.strip() for cell in line.strip("│").split("│")]
            for line in text.splitlines() if line.startswith("│")]


def test_the_diamonds_edges_have_their_values_and_probes() -> None:
    rows = _rows(_text(DIAMOND))
    # the spanning tree holds A->B and A->C (with EXIT->ENTRY); the chords B->D and
    # C->D carry the increments 0 and 1, each counting the path: count[0], count[1]
    assert rows[:4] == [
        ["A -> B", "0", "tree", "", ""],
        ["A -> C", "1", "tree", "", ""],
        ["B -> D", "0", "", "0", "count[0] += 1"],
        ["C -> D", "0", "", "1", "count[1] += 1"],
    ]


def test_the_diamonds_paths_count_their_probes_both_ways() -> None:
    rows = _rows(_text(DIAMOND))
    # spanning tree: one count on each path; naive: r = 0 on entry, r += 1 on A->C,
    # a count at each edge into EXIT: 2 probes on path 0, 3 on path 1
    assert rows[4:] == [
        ["0", "A B D", "entry", "exit", "1", "2"],
        ["1", "A C D", "entry", "exit", "1", "3"],
    ]


def test_the_totals_say_static_and_dynamic_probes() -> None:
    text = _text(DIAMOND)
    assert "Paths (2 in all)" in text
    # naive in the code: r = 0, r += 1 on A->C, two counts = 4; run: 2 + 3 = 5
    assert "Probes in the code: 2 with the spanning tree, 4 with Val on every edge." in text
    assert "Probes run over the paths listed: 2 with the spanning tree, 5 with Val on " \
           "every edge." in text
    summary = summarize_plan(DIAMOND)
    assert (summary.optimized_dynamic, summary.naive_dynamic) == (2, 5)


def test_a_loops_dummy_edges_are_marked_with_their_kind() -> None:
    rows = _rows(_text(LOOP))
    edges = [row[0] for row in rows[:5]]
    # the backedge b -> h becomes b --> EXIT (loop-end) and ENTRY --> h (loop-start)
    assert edges == ["in -> h", "h -> b", "h -> out", "b --> out  (loop-end)",
                     "in --> h  (loop-start)"]
    # NumPaths(h) = 2 (h b, h out): Val(h->out) = 1, Val(loop-start) = 2
    assert [row[1] for row in rows[:5]] == ["0", "0", "1", "0", "2"]


def test_a_loops_paths_say_how_they_start_and_end() -> None:
    rows = _rows(_text(LOOP))
    assert [row[:4] for row in rows[5:]] == [
        ["0", "in h b", "entry", "backedge"],
        ["1", "in h out", "entry", "exit"],
        ["2", "h b", "loop-header", "backedge"],
        ["3", "h out", "loop-header", "exit"],
    ]
    assert "Paths (4 in all)" in _text(LOOP)


def test_the_summary_regenerates_every_path_in_number_order() -> None:
    summary = summarize_plan(DIAMOND)
    assert summary.numbering.total == 2
    assert [(p.number, p.blocks) for p in summary.paths] == [(0, (0, 1, 3)), (1, (0, 2, 3))]
    assert summary.named is DIAMOND


def test_at_most_64_paths_are_listed_and_the_caption_says_so() -> None:
    named = _chain(7)  # 2**7 = 128 paths
    summary = summarize_plan(named)
    assert MAX_LISTED_PATHS == 64
    assert [p.number for p in summary.paths] == list(range(64))
    text = _text(named)
    assert "Paths (128 in all)" in text
    assert "first 64 of 128 paths shown" in text


def test_exactly_64_paths_have_no_caption() -> None:
    text = _text(_chain(6))  # 2**6 = 64
    assert "Paths (64 in all)" in text
    assert "paths shown" not in text
    path_rows = [row for row in _rows(text) if len(row) == 6]
    assert len(path_rows) == 64


def test_a_single_path_cfg() -> None:
    named = cfg_from_data({"blocks": ["in", "out"], "entry": "in", "exit": "out",
                           "edges": [["in", "out"]]})
    rows = _rows(_text(named))
    assert rows[-1][:4] == ["0", "in out", "entry", "exit"]
    assert "Paths (1 in all)" in _text(named)


def test_render_writes_on_a_plain_stream_too() -> None:
    out = io.StringIO()
    render(LOOP, out)
    assert "Paths (4 in all)" in out.getvalue()
    assert "h -> out" in out.getvalue()


def test_render_plan_is_a_group_of_two_tables_and_the_totals() -> None:
    group = render_plan(summarize_plan(DIAMOND))
    edges, paths, totals = group.renderables
    assert edges.title.startswith("Edges: Ball-Larus values")
    assert paths.title == "Paths (2 in all)"
    assert str(totals).startswith("Probes in the code: 2 with the spanning tree")


def test_a_block_name_with_brackets_is_shown_as_it_is() -> None:
    named = cfg_from_data({"blocks": ["[x]", "B", "C", "D"], "entry": "[x]", "exit": "D",
                           "edges": [["[x]", "B"], ["[x]", "C"], ["B", "D"], ["C", "D"]]})
    assert _rows(_text(named))[0][0] == "[x] -> B"
