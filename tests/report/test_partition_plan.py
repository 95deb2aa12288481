"""pathprof.report.partition_plan, the ``pathprof plan --parallel K`` report: the tasks
of P3's partition of one CFG (with Δ), each task's Ball-Larus paths (at most
:data:`MAX_LISTED_PATHS` spelled out), its cost and copy, then what each copy
instruments (Ball-Larus for all paths, PSPP on some edges, or nothing), its probes and
the paths it owns. Worked on parallel chains of diamonds, whose numbering is known."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from pathprof.graph import pspp, to_dag
from pathprof.graph.serial import NamedCfg, cfg_from_data
from pathprof.report.partition_plan import (
    MAX_LISTED_PATHS,
    render,
    render_partition,
    summarize_partition,
)


def _chains(chains: int, diamonds: int = 1) -> NamedCfg:
    """E branches to ``chains`` sequences of ``diamonds`` diamonds, all joining X. The
    chains' paths are numbered one chain after another: E's i-th edge has Val
    i * 2**diamonds."""
    blocks, edges = ["E", "X"], []
    for c in range(chains):
        previous = f"b{c}"
        blocks.append(previous)
        edges.append(["E", previous])
        for d in range(diamonds):
            left, right, join = f"l{c}.{d}", f"r{c}.{d}", f"j{c}.{d}"
            blocks += [left, right, join]
            edges += [[previous, left], [previous, right], [left, join], [right, join]]
            previous = join
        edges.append([previous, "X"])
    return cfg_from_data({"blocks": blocks, "entry": "E", "exit": "X", "edges": edges})


def _text(named: NamedCfg, copies: int) -> str:
    out = io.StringIO()
    render(named, Console(file=out, width=150), copies=copies)
    return out.getvalue()


def _rows(text: str) -> list[list[str]]:
    return [[cell.strip() for cell in line.strip("│").split("│")]
            for line in text.splitlines() if line.startswith("│")]


def test_three_chains_on_three_copies_one_task_each() -> None:
    named = _chains(3)  # 18 edges: 6 per chain (E->b, b->l, b->r, l->j, r->j, j->X)
    summary = summarize_partition(named, 3)
    assert summary.delta == 3  # max(ENTRY's 3 edges, 3 copies)
    assert summary.paths == ((0, 1), (2, 3), (4, 5))
    assert summary.owners == (0, 1, 2)
    text = _text(named, 3)
    assert "Tasks (P3 §3.2): Δ = 3, 3 tasks" in text
    assert "Copies (K = 3)" in text
    rows = _rows(text)
    costs = [task.cost for task in summary.tasks]
    assert rows[:3] == [["0", "0, 1", str(costs[0]), "0"], ["1", "2, 3", str(costs[1]), "1"],
                        ["2", "4, 5", str(costs[2]), "2"]]
    dag = to_dag(named.cfg)
    for copy, task in enumerate(summary.tasks):
        assert rows[3 + copy] == [str(copy), "PSPP on 6 of 18 edges",
                                  str(pspp(dag, task.edges).cost), "2"]


def test_two_copies_take_three_equal_tasks_largest_first_onto_the_least_loaded() -> None:
    named = _chains(3)
    summary = summarize_partition(named, 2)
    # Δ = max(3 edges out of ENTRY, 2 copies) = 3: three tasks of equal cost; the
    # first to copy 0, the second to copy 1, the third to copy 0 (equal loads: the
    # lowest copy)
    assert summary.delta == 3
    assert summary.owners == (0, 1, 0)
    rows = _rows(_text(named, 2))
    dag = to_dag(named.cfg)
    union = summary.tasks[0].edges | summary.tasks[2].edges
    assert rows[3] == ["0", "PSPP on 12 of 18 edges", str(pspp(dag, union).cost), "4"]
    assert rows[4] == ["1", "PSPP on 6 of 18 edges",
                       str(pspp(dag, summary.tasks[1].edges).cost), "2"]


def test_a_diamond_is_one_whole_task_and_the_other_copy_instruments_nothing() -> None:
    named = cfg_from_data({"blocks": ["A", "B", "C", "D"], "entry": "A", "exit": "D",
                           "edges": [["A", "B"], ["A", "C"], ["B", "D"], ["C", "D"]]})
    summary = summarize_partition(named, 2)
    assert len(summary.tasks) == 1
    assert summary.tasks[0].whole
    text = _text(named, 2)
    assert "Δ = 2, 1 task" in text
    rows = _rows(text)
    assert rows[0] == ["0", "0, 1", str(summary.whole_cost), "0"]
    assert rows[1] == ["0", "Ball-Larus (all paths)", str(summary.whole_cost), "2"]
    assert rows[2] == ["1", "nothing", "0", "0"]


def test_the_note_gives_sequential_ball_larus() -> None:
    named = _chains(3)
    summary = summarize_partition(named, 3)
    text = _text(named, 3)
    probes = summary.whole_cost
    noun = "probe" if probes == 1 else "probes"
    assert f"Sequential Ball-Larus: {probes} {noun}, 6 paths." in text


def test_every_path_is_in_exactly_one_task() -> None:
    named = _chains(4, diamonds=2)  # 4 chains of 4 paths
    summary = summarize_partition(named, 3)
    numbers = sorted(n for task_paths in summary.paths for n in task_paths)
    assert numbers == list(range(16))
    # Δ = 4: one task per chain, each its four consecutive numbers
    assert summary.paths == ((0, 1, 2, 3), (4, 5, 6, 7), (8, 9, 10, 11), (12, 13, 14, 15))
    owned = [int(row[3]) for row in _rows(_text(named, 3))[4:]]
    assert sum(owned) == 16


def test_a_task_with_many_paths_lists_the_first_eight() -> None:
    named = _chains(1, diamonds=5)  # one chain, 32 paths: one whole task
    assert MAX_LISTED_PATHS == 8
    rows = _rows(_text(named, 1))
    assert rows[0][1] == "0, 1, 2, 3, 4, 5, 6, 7, … (32 paths)"
    assert rows[1][1:] == ["Ball-Larus (all paths)", rows[0][2], "32"]


def test_no_copy_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one copy"):
        summarize_partition(_chains(2), 0)


def test_render_partition_groups_the_two_tables_and_the_note() -> None:
    tasks, copies, note = render_partition(summarize_partition(_chains(2), 2)).renderables
    assert tasks.title == "Tasks (P3 §3.2): Δ = 2, 2 tasks"
    assert copies.title == "Copies (K = 2)"
    assert str(note).startswith("Sequential Ball-Larus: ")
    assert str(note).endswith(", 4 paths.")


def test_render_writes_on_a_plain_stream() -> None:
    out = io.StringIO()
    render(_chains(2), out, copies=2)
    assert "Copies (K = 2)" in out.getvalue()
