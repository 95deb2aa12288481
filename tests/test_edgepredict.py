"""What an edge profile would have told you (pathprof.analysis.edgepredict), on correlated branches.

``pick`` runs with (a, b) = (True, False) 34 times, (False, True) 33 times and
(False, False) 33 times, never (True, True). Edge counts: a is false 66 of 100
times, b is false 67 of 100, so following the most frequent edges predicts the
path (False, False) — 33 runs — while the hottest is (True, False) with 34: the
edge profile is wrong, and 67 of 100 executions took another path.
"""

from __future__ import annotations

from pathlib import Path

from pathprof import load
from pathprof.analysis.edgepredict import predict_from_edges, summarize

from .test_run import pathprof_cli

PROGRAM = '''
def pick(a, b):
    x = 0
    if a:
        x += 1
    if b:
        x += 2
    return x

def loop(n):
    total = 0
    for i in range(n):
        if i % 4:
            total += i
    return total

for _ in range(34):
    pick(True, False)
for _ in range(33):
    pick(False, True)
for _ in range(33):
    pick(False, False)
loop(10)
'''


def measured(tmp_path: Path) -> dict:
    script = tmp_path / "corr.py"
    script.write_text(PROGRAM)
    pathprof_cli(tmp_path, "run", "--data-file", str(tmp_path / "d"), str(script))
    return {fn.qualname: fn for fn in load(str(tmp_path / "d")).functions}


def test_correlated_branches_fool_the_edge_profile(tmp_path: Path) -> None:
    functions = measured(tmp_path)
    pick = functions["pick"]
    prediction = predict_from_edges(pick)
    assert prediction is not None
    assert not prediction.right
    assert prediction.hottest.count == 34
    assert prediction.predicted.count == 33
    line_of = {pick.block_lines(b)[0] for b in prediction.predicted.blocks}
    assert line_of.isdisjoint({5, 7})  # neither x += 1 nor x += 2: (False, False)
    assert (prediction.executions, prediction.correct) == (100, 33)
    assert abs(prediction.wrong_share - 0.67) < 1e-9


def test_loops_are_predicted_per_start(tmp_path: Path) -> None:
    loop = measured(tmp_path)["loop"]
    prediction = predict_from_edges(loop)
    assert prediction is not None
    # i % 4 is true 7 times of 10 (i = 1,2,3,5,6,7,9): the iteration that adds is the
    # hottest path, and the edge profile finds it.
    assert prediction.right
    assert prediction.hottest.count == 7
    assert prediction.hottest.start == "loop-header"
    # Paths from the loop header: 7 add + 2 skip (i = 4, 8) + 1 exit; from entry, one
    # path that skips (i = 0). Predicted per start: header -> add (7 right); entry ->
    # the `if` taken true, as most iterations do, which the first iteration never does.
    assert (prediction.executions, prediction.correct) == (11, 7)


def test_summary_counts_functions_and_executions(tmp_path: Path) -> None:
    functions = measured(tmp_path)
    summary = summarize([functions["pick"], functions["loop"]])
    assert (summary.functions, summary.wrong, summary.never_ran) == (2, 1, 0)
    assert (summary.executions, summary.correct) == (111, 40)
