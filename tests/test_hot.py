"""``pathprof hot`` and :mod:`pathprof.subpaths` on real programs: estimates of the
hottest subpaths, from bulk skipping and sampling, against the exact counts of the
same stream; the report, the JSON, the snapshot from inside the program."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import textwrap
from collections import defaultdict
from pathlib import Path

import pytest

from pathprof.subpaths import SubpathSampling

WORKLOAD = textwrap.dedent('''
    def classify(n):
        if n % 15 == 0:
            return "fizzbuzz"
        if n % 5 == 0:
            return "buzz"
        if n % 3 == 0:
            return "fizz"
        return str(n)


    def tally(limit):
        counts = {}
        for n in range(limit):
            word = classify(n)
            if word.isdigit():
                counts["number"] = counts.get("number", 0) + 1
            else:
                counts[word] = counts.get(word, 0) + 1
        return counts
''')


def _sample(directory: Path, seed: int, exact: bool, limit: int, costs: str | None = None,
            rank: str = "count", period: float | None = 200, budget: int = 300
            ) -> tuple[dict, SubpathSampling]:
    """Run ``tally(limit)`` under sampling; (subpath named by (function, block) ->
    estimate object, the sampling). ``period`` None: chosen from the run."""
    sampling = SubpathSampling(source=[str(directory)], period=period, budget=budget,
                               longest=3, seed=seed, exact=exact, cache=False, costs=costs)
    sys.modules.pop("osp_workload", None)
    sys.path.insert(0, str(directory))
    sampling.start()
    try:
        import osp_workload  # type: ignore[import-not-found]

        osp_workload.tally(limit)
    finally:
        sampling.stop()
        sys.path.remove(str(directory))
        sys.modules.pop("osp_workload", None)
    blocks = sampling.profiler.blocks
    named = {tuple((blocks[i].qualname, blocks[i].block) for i in h.blocks): h
             for h in sampling.hottest(top=None, rank=rank)}
    return named, sampling


def _exact_counts(directory: Path) -> dict[tuple, int]:
    """The workload's exact subpath counts for ``tally(30_000)``, subpaths named by
    (function, block): the reference the sampled runs are judged against."""
    (directory / "osp_workload.py").write_text(WORKLOAD)
    _named, reference = _sample(directory, 0, True, 30_000)
    blocks = reference.profiler.blocks
    return {tuple((blocks[i].qualname, blocks[i].block) for i in key): count
            for key, count in reference.profiler.exact.counts.items()}


def test_sampled_estimates_are_unbiased_and_within_their_bounds(tmp_path: Path) -> None:
    """Bulk skipping and observation near the starts, 25 seeds, against the exact
    counts of the same (deterministic) stream: every estimate within its 95 %
    bounds at least 95 % of the time, and the hottest subpaths' mean estimates
    within 4 standard errors of their counts."""
    exact = _exact_counts(tmp_path)
    within = checked = 0
    estimates: dict[tuple, list[float]] = defaultdict(list)
    seeds = range(1, 26)
    for seed in seeds:
        named, sampling = _sample(tmp_path, seed, False, 30_000)
        assert sampling.profiler.failures == 0
        # Positions, counted down or observed, are the stream's length.
        blocks_run = sum(count for key, count in exact.items() if len(key) == 2) + 1
        assert sampling.summary()["positions"] == blocks_run
        for key, found in named.items():
            within += found.low <= exact[key] <= found.high
            checked += 1
            estimates[key].append(found.estimate)
    assert within / checked >= 0.95
    for key in sorted(exact, key=lambda k: -exact[k])[:5]:
        runs = estimates[key] + [0.0] * (len(seeds) - len(estimates[key]))
        error = statistics.stdev(runs) / len(runs) ** 0.5
        assert abs(statistics.fmean(runs) - exact[key]) <= 4 * error, key


def test_a_period_chosen_from_the_run_keeps_estimates_within_their_bounds(
        tmp_path: Path) -> None:
    """The default period, chosen from the run: from one start per 200 blocks, grown
    by a quarter each time the run reaches 300 periods (the sample thinned to it), so
    that it follows the run's length; over 20 seeds every estimate lies within its
    95 % bounds at least 95 % of the time, against the exact counts of the same
    stream, and the hottest subpaths' mean estimates within 4 standard errors of their
    counts. The period is where the run's length put it, the same for every seed."""
    from pathprof.subpaths import FIRST_PERIOD, STARTS_KEPT

    exact = _exact_counts(tmp_path)
    blocks_run = sum(count for key, count in exact.items() if len(key) == 2) + 1
    within = checked = 0
    estimates: dict[tuple, list[float]] = defaultdict(list)
    periods = set()
    seeds = range(1, 21)
    for seed in seeds:
        named, sampling = _sample(tmp_path, seed, False, 30_000, period=None,
                                  budget=10_000)
        summary = sampling.summary()
        assert sampling.profiler.failures == 0
        assert summary["positions"] == blocks_run
        assert summary["period_from_run"]
        assert summary["resamplings"] == 0
        assert summary["period"] == FIRST_PERIOD * 1.25 ** summary["grown"]
        periods.add(summary["period"])
        for key, found in named.items():
            within += found.low <= exact[key] <= found.high
            checked += 1
            estimates[key].append(found.estimate)
    (period,) = periods  # positions alone decide where it grows
    assert STARTS_KEPT * period / 1.25 <= blocks_run < STARTS_KEPT * period * 1.25
    assert within / checked >= 0.95
    for key in sorted(exact, key=lambda k: -exact[k])[:5]:
        runs = estimates[key] + [0.0] * (len(seeds) - len(estimates[key]))
        error = statistics.stdev(runs) / len(runs) ** 0.5
        assert abs(statistics.fmean(runs) - exact[key]) <= 4 * error, key


def test_with_block_costs_estimates_stay_within_their_bounds_and_rank_by_cost(
        tmp_path: Path) -> None:
    """--costs statements (Oren 5.1.2): a subpath is kept with probability its mean
    block cost / 8, and estimates divide by it: over 20 seeds they stay within their
    95 % bounds at least 95 % of the time; --rank cost orders by count x mean cost."""
    exact = _exact_counts(tmp_path)
    within = checked = 0
    for seed in range(1, 21):
        named, sampling = _sample(tmp_path, seed, False, 30_000, costs="statements",
                                  rank="cost")
        assert sampling.profiler.failures == 0
        found = list(named.values())
        assert all(h.cost is not None and 1 <= h.cost <= 8 for h in found)
        weights = [h.estimate * h.cost for h in found]
        assert weights == sorted(weights, reverse=True)
        for key, h in named.items():
            within += h.low <= exact[key] <= h.high
            checked += 1
    assert checked > 200
    assert within / checked >= 0.95


def test_a_start_beyond_the_countdowns_reach_is_counted_down_to_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The countdown stops at FAR (so that it stays a small int); with FAR below the
    gaps between starts, the countdown is re-armed on the way, and positions and
    estimates come out as without it."""
    from pathprof import runtime

    exact = _exact_counts(tmp_path)
    blocks_run = sum(count for key, count in exact.items() if len(key) == 2) + 1
    monkeypatch.setattr(runtime, "FAR", 97)
    within = checked = 0
    for seed in range(1, 11):
        named, sampling = _sample(tmp_path, seed, False, 30_000)
        assert sampling.profiler.failures == 0
        assert sampling.summary()["positions"] == blocks_run
        for key, found in named.items():
            within += found.low <= exact[key] <= found.high
            checked += 1
    assert checked > 100
    assert within / checked >= 0.95


def _hot(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PATHPROF_")}
    env["COLUMNS"] = "140"
    return subprocess.run([sys.executable, "-m", "pathprof", "hot", *args], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=300)


def test_hot_reports_the_hottest_subpaths_and_writes_json(tmp_path: Path) -> None:
    (tmp_path / "work.py").write_text(WORKLOAD + textwrap.dedent('''
        import pathprof.subpaths

        print(tally(20_000)["fizz"])
        print(len(pathprof.subpaths.snapshot(top=3)))
    '''))
    done = _hot(tmp_path, "--period", "50", "--seed", "3", "--exact", "--top", "5",
                "--checkpoint-every", "30000", "--json", "hot.json", "work.py")
    assert done.returncode == 0, done.stderr
    # The program's output, and the snapshot it took from inside: standard output is
    # the program's alone; the report is on standard error.
    assert done.stdout.splitlines() == ["5333", "3"]
    report = json.loads((tmp_path / "hot.json").read_text())
    assert report["failures"] == 0
    assert report["overshot"] == 0
    # Every 30,000 blocks: the exact top 5 so far, each one's rank among the estimates.
    assert [m["positions"] for m in report["moments"]] == [
        30_000 * k for k in range(1, report["positions"] // 30_000 + 1)]
    assert all(len(m["ranks"]) == 5 for m in report["moments"])
    assert report["moments"][-1]["ranks"][0] is not None
    assert len(report["subpaths"]) == 5
    first = report["subpaths"][0]
    assert first["rank"] == 1
    assert first["exact"] > 0
    assert first["low"] <= first["exact"] <= first["high"]
    functions = {b["function"] for s in report["subpaths"] for b in s["blocks"]}
    assert functions <= {"classify", "tally"}
    assert all(b["first_line"] is not None for s in report["subpaths"] for b in s["blocks"])
    # Each block names its function's first line: classify's def on line 2, tally's on 12.
    assert {(b["function"], b["function_line"]) for s in report["subpaths"]
            for b in s["blocks"]} <= {("classify", 2), ("tally", 12)}
    assert "Hottest subpaths" in done.stderr
    assert "tally:" in done.stderr
    assert "classify:" in done.stderr
    assert "exact" in done.stderr


def test_hot_with_a_short_run_says_nothing_was_sampled(tmp_path: Path) -> None:
    (tmp_path / "tiny.py").write_text("def f():\n    return 1\n\nf()\n")
    done = _hot(tmp_path, "--period", "1e9", "tiny.py")
    assert done.returncode == 0, done.stderr
    assert "No subpath was sampled" in done.stderr
    assert done.stdout == ""


@pytest.mark.parametrize(("args", "message"), [
    (["--confidence", "1.5", "x.py"], "--confidence is a probability"),
    (["--period", "0", "x.py"], "period"),
    (["--rank", "cost", "x.py"], "--rank cost needs --costs statements"),
])
def test_bad_hot_options_are_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    (tmp_path / "x.py").write_text("pass\n")
    done = _hot(tmp_path, *args)
    assert done.returncode != 0
    assert message in done.stderr
    assert "Traceback" not in done.stderr


def test_the_live_view_in_a_real_terminal(tmp_path: Path) -> None:
    """In tmux: while the program runs, the pane shows the hottest subpaths so far;
    at its end, the final table."""
    import shutil
    import time

    if shutil.which("tmux") is None:
        pytest.skip("no tmux (Debian: apt-get install tmux)")
    (tmp_path / "work.py").write_text(WORKLOAD + textwrap.dedent('''
        import time

        for _ in range(60):
            tally(3_000)
            time.sleep(0.1)
        print("program done")
    '''))
    session = f"pathprof-live-{os.getpid()}"
    command = (f"cd {tmp_path} && {sys.executable} -m pathprof hot --period 100 --seed 2 "
               f"work.py; echo EXITED $?; sleep 30")
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "150", "-y", "45",
                    command], check=True)

    def pane() -> str:
        return subprocess.run(["tmux", "capture-pane", "-p", "-t", session],
                              capture_output=True, text=True).stdout

    try:
        seen_live = seen_final = ""
        for _ in range(600):  # until each screen shows up (or a minute went by)
            screen = pane()
            if "Hottest subpaths so far" in screen and not seen_live:
                seen_live = screen
            if "EXITED" in screen:
                seen_final = screen
                break
            time.sleep(0.1)
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
    assert seen_live, "the live view never showed"
    assert "classify:" in seen_live
    assert "program done" not in seen_live  # shown while the program ran
    assert "EXITED 0" in seen_final
    assert "Hottest subpaths (work.py)" in seen_final
    assert "Hottest subpaths so far" not in seen_final  # the live view went away


def test_threshold_reports_the_subpaths_estimated_at_least_that_often(tmp_path: Path
                                                                      ) -> None:
    (tmp_path / "work.py").write_text(WORKLOAD + "\ntally(20_000)\n")
    everything = _hot(tmp_path, "--period", "50", "--seed", "4", "--top", "1000",
                      "--json", "all.json", "work.py")
    assert everything.returncode == 0, everything.stderr
    estimates = sorted((s["estimate"] for s in json.loads(
        (tmp_path / "all.json").read_text())["subpaths"]), reverse=True)
    # Estimates are multiples of period / P(length): nothing lies a hundredth below one.
    cut = estimates[len(estimates) // 2] - 0.01
    done = _hot(tmp_path, "--period", "50", "--seed", "4", "--top", "1000",
                "--threshold", str(cut), "--json", "hot.json", "work.py")
    assert done.returncode == 0, done.stderr
    kept = [s["estimate"] for s in json.loads((tmp_path / "hot.json").read_text())["subpaths"]]
    assert kept == [e for e in estimates if e >= cut]  # the same run (same seed): the top
    assert 0 < len(kept) < len(estimates)


LOOP = textwrap.dedent('''
    def total(n):
        t = 0
        for i in range(n):
            t += i
        return t


    total(40_000)
''')


def test_positions_are_the_blocks_a_simple_loop_ran(tmp_path: Path) -> None:
    """``positions`` is the stream's length: for a loop of n = 40,000 iterations,
    2n + 3 blocks (the entry, n + 1 tests, n bodies, the return), as ``--exact``
    (every block observed) counts them -- whatever the period, including the
    default's, where the stretch counted down after the last sample is most of a
    period (it was left out: 65.7k to 68.9k of 80,003)."""
    (tmp_path / "loop.py").write_text(LOOP)

    def positions(*args: str) -> int:
        done = _hot(tmp_path, "--json", "-", *args, "loop.py")
        assert done.returncode == 0, done.stderr
        report = json.loads(done.stdout)
        assert report["failures"] == 0
        return int(report["positions"])

    blocks_run = 2 * 40_000 + 3
    assert positions("--exact", "--period", "1000") == blocks_run
    for period, seed in (("10000", "1"), ("10000", "5"), ("50", "2"), ("1e9", "1"),
                         ("auto", "1"), ("auto", "4")):
        assert positions("--period", period, "--seed", seed) == blocks_run, (period, seed)


RECURSION = textwrap.dedent('''
    def fib(n):
        if n < 2:
            return n
        return fib(n - 1) + fib(n - 2)


    def main(n):
        return [fib(k) for k in range(n)]
''')


def test_positions_count_each_block_once_across_calls(tmp_path: Path) -> None:
    """Where observing starts and stops among calls, no block is counted twice: not
    the callers' blocks observed before observing stops (their paths are counted
    down again in full where they end), nor those of a return counted before its
    value computes the calls (``return fib(n - 1) + fib(n - 2)``), whose blocks went
    out already. Every period and seed gives the length of the stream as ``exact``
    sees it."""
    from pathprof.subpaths import SubpathSampling

    (tmp_path / "osp_recursion.py").write_text(RECURSION)

    def positions(period: float, seed: int, exact: bool = False) -> int:
        sampling = SubpathSampling(source=[str(tmp_path)], period=period, seed=seed,
                                   exact=exact, cache=False)
        sys.modules.pop("osp_recursion", None)
        sys.path.insert(0, str(tmp_path))
        sampling.start()
        try:
            import osp_recursion  # type: ignore[import-not-found]

            osp_recursion.main(14)
        finally:
            sampling.stop()
            sys.path.remove(str(tmp_path))
        assert sampling.profiler.failures == 0
        return int(sampling.summary()["positions"])

    blocks_run = positions(1.0, 0, exact=True)
    assert blocks_run == positions(1e9, 0)  # counted down only
    wrong = [(period, seed) for period in (2.0, 5.0, 30.0, 300.0) for seed in range(8)
             if positions(period, seed) != blocks_run]
    assert wrong == []


def test_observing_begins_as_late_as_the_starts_need(tmp_path: Path) -> None:
    """The lead (blocks observed before a start) shrinks to twice what the latest
    starts needed, below the fixed horizon; a start in deep recursion that needs
    more is taken late at most now and then (``overshot``), and the lead grows to
    cover it. The estimates stay within their bounds (the exact counts of the same
    program, from ``exact``)."""
    from pathprof.measure.subpaths import horizon
    from pathprof.subpaths import SubpathSampling

    (tmp_path / "osp_lead.py").write_text(WORKLOAD + RECURSION)

    def run(exact: bool) -> SubpathSampling:
        sampling = SubpathSampling(source=[str(tmp_path)], period=300, seed=4, exact=exact,
                                   cache=False)
        sys.modules.pop("osp_lead", None)
        sys.path.insert(0, str(tmp_path))
        sampling.start()
        try:
            import osp_lead  # type: ignore[import-not-found]

            osp_lead.tally(20_000)
            osp_lead.main(17)  # recursion 16 deep: callers' prefixes pass starts by
        finally:
            sampling.stop()
            sys.path.remove(str(tmp_path))
            sys.modules.pop("osp_lead", None)
        assert sampling.profiler.failures == 0
        return sampling

    sampled, reference = run(False), run(True)
    profiler = sampled.profiler
    starts = len(profiler.sampler.counts) and sum(profiler.sampler.counts.values()) // 5
    assert profiler._lead < horizon()
    assert max(profiler._needs) * 2 >= profiler._lead or profiler._lead == 16
    assert profiler.overshot <= max(2, starts // 100)
    # Block ids are each run's own: subpaths are compared by (function, block).
    def named(sampling: SubpathSampling, key: tuple) -> tuple:
        blocks = sampling.profiler.blocks
        return tuple((blocks[i].qualname, blocks[i].block) for i in key)

    exact = {named(reference, key): count
             for key, count in reference.profiler.exact.counts.items()}
    listed = sampled.hottest(top=20, fold=False)
    truths = [exact.get(named(sampled, h.blocks), 0) for h in listed]
    assert all(truths)  # every subpath sampled ran
    within = sum(h.low <= truth <= h.high for h, truth in zip(listed, truths, strict=True))
    assert within >= 18, [(h.estimate, truth) for h, truth in zip(listed, truths, strict=True)]


BLANKS = textwrap.dedent('''
    def skip(text, i):
        while i < len(text) and text[i] == " ":
            i += 1
        return i


    def words(text):
        found, i = [], 0
        while i < len(text):
            i = skip(text, i)
            start = i
            while i < len(text) and text[i] != " ":
                i += 1
            found.append(text[start:i])
        return found


    line = ("a" + " " * 40 + "bc ") * 50
    print(sum(len(words(line)) for _ in range(40)))
''')


def _cycle_of(blocks: list[dict]) -> tuple | None:
    names = [(b["function"], b["first_line"]) for b in blocks]
    for period in range(1, len(names) // 2 + 1):
        if all(names[i] == names[i + period] for i in range(len(names) - period)):
            turn = names[:period]
            return min(tuple(turn[i:] + turn[:i]) for i in range(period))
    return None


def test_the_table_ranks_by_the_lower_bound_and_shows_a_loop_once(tmp_path: Path) -> None:
    """A two-block loop runs 40 times per word: listed by every repetition, it fills
    the table; folded (the default), it is one row that says how many it stands for,
    and the rows are in the order of what each subpath ran at least."""
    (tmp_path / "blanks.py").write_text(BLANKS)
    every = _hot(tmp_path, "--period", "200", "--seed", "2", "--top", "8",
                 "--every-repetition", "--json", "every.json", "blanks.py")
    assert every.returncode == 0, every.stderr
    listed = json.loads((tmp_path / "every.json").read_text())["subpaths"]
    repeats = [s for s in listed if _cycle_of(s["blocks"]) is not None]
    assert len(repeats) >= 4  # the loop, two to 32 blocks of it, crowds the table
    assert all("cycle" not in s for s in listed)

    folded = _hot(tmp_path, "--period", "200", "--seed", "2", "--top", "8",
                  "--json", "folded.json", "blanks.py")
    assert folded.returncode == 0, folded.stderr
    rows = json.loads((tmp_path / "folded.json").read_text())["subpaths"]
    assert rows[0]["cycle"]["other_repetitions"] >= 4
    loop_rows = [s for s in rows if "cycle" in s and s["blocks"][0]["function"] == "skip"]
    assert len(loop_rows) == 1
    assert loop_rows[0]["cycle"]["turn_length"] == 2
    lows = [s["low"] for s in rows]
    assert lows == sorted(lows, reverse=True)
    assert "more of this cycle" in folded.stderr
    assert "Ranked by the count each subpath ran at least" in folded.stderr
    # No other row is the loop: neither a repetition nor a single turn of it.
    turn = [(b["function"], b["first_line"]) for b in loop_rows[0]["blocks"][:2]]
    loop = min(tuple(turn[i:] + turn[:i]) for i in range(2))
    for row in rows:
        if row is not loop_rows[0]:
            names = [(b["function"], b["first_line"]) for b in row["blocks"]]
            assert _cycle_of(row["blocks"]) != loop
            assert not (len(names) == 2 and min(tuple(names), tuple(names[::-1])) == loop)


def test_rows_sampled_once_or_twice_come_last(tmp_path: Path) -> None:
    """Under Oren's lengths (P(32) = 1/32), a subpath sampled once estimates 32
    periods; ranked by what it ran at least, it comes after every subpath sampled
    more often whose lower bound is higher -- the order is that of the lower bounds,
    not of the estimates."""
    (tmp_path / "blanks.py").write_text(BLANKS)
    done = _hot(tmp_path, "--period", "500", "--seed", "1", "--top", "1000",
                "--lengths", "geometric", "--every-repetition", "--json", "all.json",
                "blanks.py")
    assert done.returncode == 0, done.stderr
    rows = json.loads((tmp_path / "all.json").read_text())["subpaths"]
    lows = [s["low"] for s in rows]
    assert lows == sorted(lows, reverse=True)
    estimates = [s["estimate"] for s in rows]
    assert estimates != sorted(estimates, reverse=True)  # the estimates would differ
    lucky = [s for s in rows if s["sampled"] == 1 and s["length"] == 32]
    assert lucky
    well = [s for s in rows if s["sampled"] >= 10]
    assert all(rows.index(s) > rows.index(w) for s in lucky for w in well)
    # ... and rows sampled less often come after ones they out-estimate
    assert any(later["estimate"] > earlier["estimate"] and later["sampled"] < earlier["sampled"]
               for i, earlier in enumerate(rows) for later in rows[i + 1:])


def test_rows_that_cannot_be_bounded_are_left_out_of_the_table(tmp_path: Path) -> None:
    (tmp_path / "blanks.py").write_text(BLANKS)
    done = _hot(tmp_path, "--period", "2000", "--seed", "1", "--top", "1000",
                "--json", "all.json", "blanks.py")
    assert done.returncode == 0, done.stderr
    rows = json.loads((tmp_path / "all.json").read_text())["subpaths"]
    unbounded = sum(s["low"] == 0 for s in rows)
    assert 0 < unbounded < len(rows)
    assert f"{unbounded} more subpath" in done.stderr
    table = done.stderr.split("Ranked by")[0]
    assert "│            0 │" not in table


TOKENS = textwrap.dedent('''
    def kind(ch):
        if ch.isdigit():
            return "num"
        if ch.isalpha():
            return "name"
        if ch in "+-*/=<>":
            return "op"
        if ch.isspace():
            return "space"
        return "other"


    def tokens(text):
        out = []
        i = 0
        while i < len(text):
            k = kind(text[i])
            j = i + 1
            while j < len(text) and kind(text[j]) == k and k != "op":
                j += 1
            if k != "space":
                out.append((k, text[i:j]))
            i = j
        return out


    source = "x1 = alpha + 42 * (beta - 7) / gamma_3 <= delta;\\n" * 360
    print(len(tokens(source)))
''')


def test_the_default_period_shows_a_table_on_a_short_script(tmp_path: Path) -> None:
    """A tokenizer of 193,000 blocks (0.03 s plain) at the defaults: one start per
    10,000 blocks showed at most four rows on these seeds, none on three of them ("No
    subpath was sampled often enough"); chosen from the run, each shows ten rows, and
    says which period it used. A budget that the sample fills holds it."""
    (tmp_path / "tokens.py").write_text(TOKENS)
    for seed in ("1", "2", "3", "4", "5"):
        done = _hot(tmp_path, "--seed", seed, "--json", "hot.json", "tokens.py")
        assert done.returncode == 0, done.stderr
        assert done.stdout == "7200\n"
        report = json.loads((tmp_path / "hot.json").read_text())
        assert report["positions"] > 190_000
        shown = [s for s in report["subpaths"] if s["low"] > 0]
        assert len(shown) == 10, (seed, len(shown))
        assert "Hottest subpaths (tokens.py)" in done.stderr
        assert report["period_from_run"]
        assert report["initial_period"] == 200
        said = " ".join(done.stderr.split())
        assert (f"one start per {report['period']:,.0f} blocks (chosen from the run: from "
                f"200, grown {report['grown']} times as it went on, and 0 resamplings for "
                "the budget)") in said
    fixed = _hot(tmp_path, "--seed", "1", "--period", "10000", "tokens.py")
    assert "one start per 10,000 blocks (--period 10,000; 0 resamplings" in (
        " ".join(fixed.stderr.split()))
    small = _hot(tmp_path, "--seed", "1", "--memory", "40", "--json", "-", "tokens.py")
    report = json.loads(small.stdout.split("\n", 1)[1])  # (after the program's line)
    assert report["distinct_sampled"] <= 40
    assert report["resamplings"] > 0
