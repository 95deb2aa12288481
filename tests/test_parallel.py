"""Parallel runs (``pathprof run --parallel K``, :mod:`pathprof.parallel`): K copies,
each profiling its share of the functions, add up to the sequential profile."""

from __future__ import annotations

import os
import shutil
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pathprof
from pathprof.graph import ball_larus_cost, to_dag
from pathprof.measure.partial import CopyPlan, from_environment
from pathprof.parallel.plan import plan_copies
from pathprof.parallel.run import compare_profiles
from pathprof.python.cfg import build_cfg, iter_functions

from .python.random_programs import functions
from .test_run import pathprof_cli

CORPUS = Path(__file__).parent / "corpus"
PROGRAMS = sorted(p for p in CORPUS.glob("*.py")
                  if p.stem != "py314" or sys.version_info >= (3, 14))

DRIVE = "import corpus_module\nprint(corpus_module.drive())\n"


def _profiles(data_file: Path) -> list[pathprof.data.profile.FunctionProfile]:  # type: ignore[name-defined]
    return pathprof.load(str(data_file)).functions


def _sequential_and_parallel(project: Path, copies: int, *program: str,
                             stdin: str | None = None) -> tuple[str, str, list, list]:
    """stdout and profile of a sequential run and of a parallel one of ``program``."""
    import subprocess

    results = []
    for extra, data in (([], "sequential"), (["--parallel", str(copies)], "parallel")):
        command = [sys.executable, "-m", "pathprof", "run", "--data-file", data, *extra,
                   *program]
        result = subprocess.run(command, cwd=project, input=stdin, capture_output=True,
                                text=True, timeout=300, check=False,
                                env={**os.environ, "PYTHONHASHSEED": "7"})
        assert result.returncode == 0, result.stderr
        results.append(result)
    sequential, parallel = results
    assert "not exact" not in parallel.stderr, parallel.stderr
    return (sequential.stdout, parallel.stdout, _profiles(project / "sequential"),
            _profiles(project / "parallel"))


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_the_copies_add_up_to_the_sequential_profile_on_the_corpus(
        tmp_path: Path, program: Path) -> None:
    """Exceptions, generators, coroutines, with, match, finally: each corpus module
    with a different K, so that K = 1 .. 8 are all run."""
    copies = PROGRAMS.index(program) % 8 + 1
    shutil.copy(program, tmp_path / "corpus_module.py")
    (tmp_path / "prog.py").write_text(DRIVE)
    plain, parallel, expected, merged = _sequential_and_parallel(tmp_path, copies, "prog.py")
    assert parallel == plain
    assert sum(fn.total for fn in expected) > 0
    assert compare_profiles(expected, merged) == []


def test_threads_forks_and_standard_input(tmp_path: Path) -> None:
    """Threads, a forked child, and standard input replayed to every copy."""
    (tmp_path / "prog.py").write_text(textwrap.dedent("""
        import os, sys, threading

        def classify(n):
            if n % 15 == 0:
                return "fizzbuzz"
            if n % 3 == 0:
                return "fizz"
            return str(n)

        def work(n, out):
            out.append(sum(len(classify(i)) for i in range(n)))

        numbers = [int(x) for x in sys.stdin.read().split()]
        out = []
        threads = [threading.Thread(target=work, args=(n, out)) for n in numbers]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        pid = os.fork()
        if pid == 0:
            work(7, out)
            os._exit(0)
        os.waitpid(pid, 0)
        print(sorted(out))
    """))
    plain, parallel, expected, merged = _sequential_and_parallel(
        tmp_path, 3, "prog.py", stdin="30 45 60\n")
    assert plain == parallel == "[82, 126, 170]\n"
    assert {fn.qualname: fn.total for fn in merged}["classify"] == 30 + 45 + 60 + 7
    assert compare_profiles(expected, merged) == []


@settings(max_examples=6, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(source=functions(), copies=st.integers(1, 8))
def test_the_copies_add_up_on_random_programs(tmp_path_factory: pytest.TempPathFactory,
                                               source: str, copies: int) -> None:
    project = tmp_path_factory.mktemp("parallel")
    (project / "generated.py").write_text(source)
    (project / "prog.py").write_text(textwrap.dedent("""
        import random, types
        from generated import f

        def tape(seed):
            rng = random.Random(seed)
            bits = iter([rng.random() < 0.5 for _ in range(30)])
            return lambda: next(bits, False)

        for seed in range(8):
            try:
                result = f(tape(seed), seed % 3)
                if isinstance(result, types.GeneratorType):
                    print(list(zip(range(seed % 4), result)))
                    result.close()
                else:
                    print(result)
            except Exception as err:
                print(type(err).__name__)
    """))
    plain, parallel, expected, merged = _sequential_and_parallel(project, copies, "prog.py")
    assert parallel == plain
    assert compare_profiles(expected, merged) == []


def test_a_plan_from_an_earlier_profile_splits_the_hot_function_and_stays_exact(
        tmp_path: Path) -> None:
    """``--plan-from``: the function that ran most probes is split among the copies
    although it has two call sites, and the merge still equals the sequential run."""
    from pathprof.parallel.plan import plan_copies

    (tmp_path / "prog.py").write_text(textwrap.dedent("""
        def grade(score):
            if score >= 90:
                return "A"
            if score >= 60:
                return "B"
            if score >= 30:
                return "C"
            return "D"

        def once(xs):
            return len(xs)

        scores = [(i * 37) % 101 for i in range(3000)]
        print("".join(grade(s) for s in scores)[:20], grade(100), once(scores))
    """))
    pathprof_cli(tmp_path, "run", "--data-file", "earlier", "prog.py")
    profile = _profiles(tmp_path / "earlier")
    plan = plan_copies([str(tmp_path / "prog.py")], 3, profile=profile)
    (owners,) = plan.owners.values()
    assert isinstance(owners[0], dict)  # grade: split, though called from two places
    assert plan_copies([str(tmp_path / "prog.py")], 3).split() == 0  # statically: whole
    result = pathprof_cli(tmp_path, "run", "--parallel", "3", "--plan-from", "earlier",
                          "--verify", "prog.py")
    assert "--verify: the merged profile equals the sequential one" in result.stderr
    assert compare_profiles(profile, _profiles(tmp_path / ".pathprof")) == []


def test_copies_that_run_differently_are_said_not_exact(tmp_path: Path) -> None:
    """Each copy has a temporary directory of its own: a program that depends on its
    name runs differently in each, and the run says the merge is not exact."""
    (tmp_path / "prog.py").write_text(textwrap.dedent("""
        import tempfile

        def step(i):
            return i + 1

        for i in range(int(tempfile.gettempdir()[-5]) + 2):
            step(i)
        print("done")
    """))
    result = pathprof_cli(tmp_path, "run", "--parallel", "3", "prog.py")
    assert result.stdout == "done\n"
    assert "did not run the same way (step: [2, 3, 4])" in result.stderr
    assert "not exact" in result.stderr


def test_verify_compares_with_the_sequential_profile(tmp_path: Path) -> None:
    (tmp_path / "prog.py").write_text("def f(x):\n    return x if x > 0 else -x\n\n"
                                      "print(sum(f(i) for i in range(-3, 4)))\n")
    result = pathprof_cli(tmp_path, "run", "--parallel", "2", "--verify", "prog.py")
    assert result.stdout == "12\n"
    assert "2 copies ran the same calls" in result.stderr
    assert "--verify: the merged profile equals the sequential one" in result.stderr
    assert {fn.qualname: fn.total for fn in _profiles(tmp_path / ".pathprof")} == {"f": 7}


def test_the_exit_status_and_output_are_the_programs(tmp_path: Path) -> None:
    (tmp_path / "prog.py").write_text("import sys\nprint('out')\n"
                                      "print('err', file=sys.stderr)\nsys.exit(3)\n")
    result = pathprof_cli(tmp_path, "run", "--parallel", "4", "prog.py", check=False)
    assert result.returncode == 3
    assert result.stdout == "out\n"  # one copy's output, not four
    assert result.stderr.startswith("err\n")


@pytest.mark.parametrize(("args", "message"), [
    (["--verify"], "go with --parallel K"),
    (["--parallel", "0"], "must be at least 1"),
    (["--parallel", "2", "--executor", "dask"], "needs --scheduler"),
])
def test_bad_parallel_options_are_one_line(tmp_path: Path, args: list[str], message: str
                                           ) -> None:
    (tmp_path / "prog.py").write_text("print(1)\n")
    result = pathprof_cli(tmp_path, "run", *args, "prog.py", check=False)
    assert result.returncode in (1, 2)
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def _dags(source: str) -> list[object]:
    import ast

    return [to_dag(build_cfg(node, name).to_graph())
            for node, name in iter_functions(ast.parse(source))]


@settings(max_examples=25, deadline=None)
@given(sources=st.lists(functions(generators=False), min_size=1, max_size=4),
       copies=st.integers(1, 8), partition=st.booleans())
def test_the_plan_gives_every_path_one_owner(tmp_path_factory: pytest.TempPathFactory,
                                             sources: list[str], copies: int,
                                             partition: bool) -> None:
    from pathprof.graph import iter_paths, number_paths
    from pathprof.graph.copyplan import CopyShare

    directory = tmp_path_factory.mktemp("plan")
    files = []
    for i, source in enumerate(sources):
        path = directory / f"m{i}.py"
        # one call site of f: a single-caller function, split where it pays
        path.write_text(f"# module {i}\n{source}\nf(None, 0)\n")
        files.append(str(path))
    plan = plan_copies(files, copies, partition=partition)
    assert plan_copies(files, copies, partition=partition) == plan  # every copy agrees
    whole_costs = []
    for path in files:
        digest = next(d for d, name in plan.files.items() if name == path)
        dags = _dags(Path(path).read_text())
        owners = plan.owners[digest]
        assert len(owners) == len(dags)
        for dag, owner in zip(dags, owners, strict=True):
            if isinstance(owner, int):
                assert 0 <= owner < copies
                whole_costs.append((ball_larus_cost(dag), owner))
                continue
            assert partition
            assert all(0 <= copy < copies for copy in owner["copies"])
            numbering = number_paths(dag)
            tasks = tuple(frozenset(t) for t in owner["tasks"])
            for acyclic in iter_paths(numbering):  # each path in exactly one task
                holding = [t for t in tasks if set(acyclic.edges) <= t]
                assert len(holding) == 1
                share = CopyShare(numbering, tasks, tuple(owner["copies"]), 0)
                assert share.owner(acyclic.edges) == owner["copies"][tasks.index(holding[0])]
    if not partition:
        assert plan.split() == 0
        assert sum(plan.loads) == sum(cost for cost, _ in whole_costs)
        for copy in range(copies):
            assert plan.loads[copy] == sum(cost for cost, owner in whole_costs if owner == copy)
        # largest-cost-first onto the least-loaded copy: no copy carries more than
        # the lightest one plus the largest task (Graham's bound for this rule)
        assert max(plan.loads) - min(plan.loads) <= max(cost for cost, _ in whole_costs)


def test_a_module_the_plan_does_not_know_is_profiled_by_copy_0() -> None:
    first = CopyPlan(0, 2, {"abc": (0, 1)}, "calls.json")
    second = CopyPlan(1, 2, {"abc": (0, 1)}, "calls.json")
    assert 1 in first.calls_only("abc")
    assert 0 not in first.calls_only("abc")
    assert 0 in second.calls_only("abc")
    assert 1 not in second.calls_only("abc")
    assert 5 not in first.calls_only("unknown")
    assert 5 in second.calls_only("unknown")


def test_a_plan_that_cannot_be_read_is_named(tmp_path: Path) -> None:
    assert from_environment({}) is None
    with pytest.raises(ValueError, match="PATHPROF_COPY: cannot read this copy's plan"):
        from_environment({"PATHPROF_COPY": '{"plan": "%s", "index": 0, "calls": "c"}'
                          % (tmp_path / "missing.json")})


def test_the_dask_executor_runs_the_copies_on_a_cluster(tmp_path: Path) -> None:
    """A real profile through a Dask ``LocalCluster`` (its workers in this process,
    reached over TCP as a remote cluster is): the same merged profile."""
    distributed = pytest.importorskip("distributed")
    (tmp_path / "prog.py").write_text(textwrap.dedent("""
        import sys

        def grade(score):
            if score >= 90:
                return "A"
            if score >= 60:
                return "B"
            return "C"

        def total(scores):
            return "".join(grade(s) for s in scores)

        print(total(int(x) for x in sys.stdin.read().split()))
    """))
    sequential = pathprof_cli(tmp_path, "run", "--data-file", "sequential", "prog.py",
                              input="95 70 10 60 90\n")
    with distributed.LocalCluster(n_workers=2, processes=False, protocol="tcp",
                                  dashboard_address=None) as cluster:
        result = pathprof_cli(tmp_path, "run", "--parallel", "3", "--executor", "dask",
                              "--scheduler", cluster.scheduler_address, "prog.py",
                              input="95 70 10 60 90\n")
    assert result.stdout == sequential.stdout == "ABCBA\n"
    assert "3 copies ran the same calls" in result.stderr
    merged = _profiles(tmp_path / ".pathprof")
    assert {fn.qualname: fn.total for fn in merged} == {"grade": 5, "total": 1}
    assert compare_profiles(_profiles(tmp_path / "sequential"), merged) == []


def test_the_dask_executor_says_when_the_scheduler_cannot_be_reached(tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    (tmp_path / "prog.py").write_text("print(1)\n")
    result = pathprof_cli(tmp_path, "run", "--parallel", "2", "--executor", "dask",
                          "--scheduler", "tcp://127.0.0.1:9", "prog.py", check=False)
    assert result.returncode == 1
    assert "cannot reach the Dask scheduler at tcp://127.0.0.1:9" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("copies", [1, 2, 3, 8])
@pytest.mark.parametrize("example", ["ball_larus_figure2.json", "loop_with_handler.json"])
def test_plan_parallel_shows_a_partition_of_every_path(example: str, copies: int) -> None:
    import json

    from pathprof.graph.serial import cfg_from_data
    from pathprof.report.partition_plan import summarize_partition

    path = Path(__file__).parent.parent / "examples" / example
    summary = summarize_partition(cfg_from_data(json.loads(path.read_text())), copies)
    numbers = [n for task_paths in summary.paths for n in task_paths]
    assert sorted(numbers) == list(range(summary.numbering.total))  # each path once
    assert len(summary.tasks) <= summary.delta
    assert summary.delta == max(copies, len(summary.numbering.dag.out_edges[
        summary.numbering.dag.entry]))
    assert all(0 <= owner < copies for owner in summary.owners)


def test_plan_parallel_on_the_command_line(tmp_path: Path) -> None:
    example = Path(__file__).parent.parent / "examples" / "ball_larus_figure2.json"
    result = pathprof_cli(tmp_path, "plan", "--parallel", "2", str(example))
    assert "Tasks (P3 §3.2): Δ = 2, 2 tasks" in result.stdout
    assert "Sequential Ball-Larus: 4 probes, 6 paths." in result.stdout
