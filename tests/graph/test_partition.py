"""Tests for pathprof.graph.partition: reduced DAGs, tasks, and the P3 plan (§3.2)."""

from __future__ import annotations

import itertools
from collections import Counter, defaultdict
from collections.abc import Callable
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pathprof.graph.cfg import Cfg, Dag, to_dag
from pathprof.graph.numbering import number_paths, regenerate
from pathprof.graph.p3 import Kind, assign, owner, plan_program, threshold
from pathprof.graph.partition import ball_larus_cost, find_partition, is_profitable
from pathprof.graph.placement import place
from pathprof.graph.pspp import decode, pspp
from pathprof.graph.reduction import ReducedDag, reduced_graph

from .strategies import cfgs
from .test_pspp import dag_paths, running_example

MAX_PATHS = 200


@st.composite
def conditional_dags(draw: st.DrawFn) -> Dag:
    """Sequences of diamonds, triangles and plain blocks, some if-else branches
    holding such sequences again (nested conditionals): the shapes reduction is for."""
    edges: list[tuple[int, int]] = []
    count = 2  # 0 = ENTRY, 1 = EXIT

    def new() -> int:
        nonlocal count
        count += 1
        return count - 1

    def sequence(current: int, depth: int) -> int:
        kinds = ["plain", "diamond", "triangle"] + (["nested"] if depth < 2 else [])
        for _ in range(draw(st.integers(1, 4))):
            kind = draw(st.sampled_from(kinds))
            if kind == "plain":
                block = new()
                edges.append((current, block))
            elif kind == "diamond":
                left, right, block = new(), new(), new()
                edges.extend([(current, left), (current, right), (left, block), (right, block)])
            elif kind == "triangle":
                middle, block = new(), new()
                edges.extend([(current, middle), (current, block), (middle, block)])
            else:
                left, right, block = new(), new(), new()
                edges.extend([(current, left), (current, right)])
                edges.append((sequence(left, depth + 1), block))
                edges.append((sequence(right, depth + 1), block))
            current = block
        return current

    edges.append((sequence(0, 0), 1))
    return to_dag(Cfg(count, 0, 1, edges))


def small_dags() -> st.SearchStrategy[Dag]:
    """Random CFGs of both families of ``strategies``, and conditional sequences."""
    return (
        st.one_of(cfgs().map(to_dag), conditional_dags())
        .filter(lambda dag: number_paths(dag).total <= MAX_PATHS)
    )


def reduced_paths(reduced: ReducedDag) -> list[tuple[int, ...]]:
    """Every ENTRY -> EXIT path of the reduced DAG, as reduced edge ids."""
    paths: list[tuple[int, ...]] = []
    stack: list[tuple[int, tuple[int, ...]]] = [(reduced.entry, ())]
    while stack:
        vertex, edges = stack.pop()
        if vertex == reduced.exit:
            paths.append(edges)
            continue
        for eid in reduced.edges:
            if reduced.src(eid) == vertex:
                stack.append((reduced.dst(eid), (*edges, eid)))
    return paths


def holders(tasks: list[frozenset[int]], path: tuple[int, ...]) -> int:
    return sum(1 for edges in tasks if set(path) <= edges)


def chords_with_values(dag: Dag) -> int:
    return sum(1 for value in place(number_paths(dag)).increment.values() if value)


# ---------------------------------------------------------------------------
# reduced_graph


def test_if_else_then_if_becomes_one_dummy() -> None:
    """A diamond followed by a triangle: a sequence of conditionals, one dummy."""
    g = Cfg(7, 0, 6, [(0, 1), (1, 2), (1, 3), (2, 4), (3, 4), (4, 5), (4, 6), (5, 6)])
    dag = to_dag(g)
    r = reduced_graph(dag)
    assert [(r.src(e), r.dst(e)) for e in r.edges] == [(0, r.exit)]
    assert r.is_dummy(r.exit)
    assert r.members[r.exit] == frozenset(range(1, 7))
    assert r.inner[r.exit] == frozenset(range(1, 8))


def test_branches_may_be_chains_of_straight_line_blocks() -> None:
    # 1 -> 2 -> 3 -> 5 and 1 -> 4 -> 5: straight-line code split in two blocks.
    dag = to_dag(Cfg(7, 0, 6, [(0, 1), (1, 2), (2, 3), (3, 5), (1, 4), (4, 5), (5, 6)]))
    r = reduced_graph(dag)
    assert len(r.edges) == 2
    (dummy,) = (v for v in r.topo_order if r.is_dummy(v))
    assert r.members[dummy] == {1, 2, 3, 4, 5}


def test_a_nested_conditional_is_not_straight_line_code() -> None:
    """if a: (if b: x else: y) else: z -- the inner diamond collapses, the outer does not."""
    g = Cfg(9, 0, 8, [(0, 1), (1, 2), (1, 5), (2, 3), (2, 4), (3, 6), (4, 6), (6, 7), (5, 7),
                      (7, 8)])
    r = reduced_graph(to_dag(g))
    dummies = [v for v in r.topo_order if r.is_dummy(v)]
    assert [r.members[d] for d in dummies] == [{2, 3, 4, 6}]
    assert len(reduced_paths(r)) == 2


def test_parallel_edges_and_extra_edges_are_no_diamond() -> None:
    parallel = to_dag(Cfg(4, 0, 3, [(0, 1), (1, 2), (1, 2), (2, 3)]))
    assert not any(reduced_graph(parallel).is_dummy(v) for v in reduced_graph(parallel).topo_order)
    # a has a third out-edge (to EXIT): the diamond {1, 2, 3, 4} is not single-exit at 1.
    third_out = to_dag(Cfg(6, 0, 5, [(0, 1), (1, 2), (1, 3), (1, 5), (2, 4), (3, 4), (4, 5)]))
    assert len(reduced_graph(third_out).edges) == len(third_out.edges)
    # d has a third in-edge: not single-entry at 4.
    third_in = to_dag(Cfg(6, 0, 5, [(0, 1), (0, 4), (1, 2), (1, 3), (2, 4), (3, 4), (4, 5)]))
    assert len(reduced_graph(third_in).edges) == len(third_in.edges)


def test_running_example_reduces_to_four_paths() -> None:
    """Example 4: five diamonds, collapsed into two dummies; four reduced paths."""
    ex = running_example()
    r = reduced_graph(ex.dag)
    named = {frozenset(ex.names[b] for b in r.members[v]) for v in r.topo_order if r.is_dummy(v)}
    assert named == {frozenset(f"v{i}" for i in range(4, 11)),
                     frozenset(f"v{i}" for i in range(12, 22))}
    assert len(reduced_paths(r)) == 4


@given(small_dags())
def test_reduction_keeps_paths(dag: Dag) -> None:
    """Every dag path, less the inner edges, is a reduced path, and dummies are
    single-entry single-exit regions that split blocks and edges."""
    r = reduced_graph(dag)
    inner = [e for v in r.topo_order for e in r.inner[v]]
    assert len(inner) == len(set(inner))
    assert sorted([*inner, *r.edges]) == list(range(len(dag.edges)))
    assert sorted(b for v in r.topo_order for b in r.members[v]) == sorted(dag.reachable)
    for vertex in r.topo_order:
        assert all(r.vertex_of[b] == vertex for b in r.members[vertex])
        for eid in r.inner[vertex]:
            edge = dag.edges[eid]
            assert {edge.src, edge.dst} <= r.members[vertex]
        if r.is_dummy(vertex):
            entered = {dag.edges[e].dst for e in r.edges if r.dst(e) == vertex}
            left = {dag.edges[e].src for e in r.edges if r.src(e) == vertex}
            assert len(entered) <= 1
            assert len(left) <= 1
    reduced = set(reduced_paths(r))
    projections = {tuple(e for e in path if e in set(r.edges)) for path in dag_paths(dag)}
    assert projections == reduced
    position = {v: i for i, v in enumerate(r.topo_order)}
    assert all(position[r.src(e)] < position[r.dst(e)] for e in r.edges)
    assert not any(is_conditional(r, v) for v in r.topo_order)  # a fixed point


def is_conditional(r: ReducedDag, begin: int) -> bool:
    """A diamond or triangle with straight-line branches begins at ``begin`` (§3.2)."""
    out = r.out_edges[begin]
    into = Counter(r.dst(e) for e in r.edges)
    if len(out) != 2 or r.dst(out[0]) == r.dst(out[1]):
        return False
    joins = []
    for eid in out:
        vertex = r.dst(eid)
        while not r.is_dummy(vertex) and into[vertex] == 1 and len(r.out_edges[vertex]) == 1:
            vertex = r.dst(r.out_edges[vertex][0])
        joins.append(vertex)
    return joins[0] == joins[1] and into[joins[0]] == 2


# ---------------------------------------------------------------------------
# find_partition


@given(small_dags(), st.integers(1, 8))
def test_tasks_partition_the_paths(dag: Dag, delta: int) -> None:
    """Every path lies in exactly one task; a task's edges are its paths' edges;
    at most delta tasks; one per reduced path when they are few enough; costs are
    the counted probes."""
    tasks = find_partition(dag, delta)
    paths = dag_paths(dag)
    edge_sets = [t.edges for t in tasks]
    assert 1 <= len(tasks) <= delta
    assert all(holders(edge_sets, p) == 1 for p in paths)
    for task in tasks:
        inside = [p for p in paths if set(p) <= task.edges]
        assert inside
        assert set().union(*map(set, inside)) == task.edges
        assert task.whole == (len(tasks) == 1)
        if task.whole:
            assert task.edges == frozenset(range(len(dag.edges)))
            assert task.cost == chords_with_values(dag)
        else:
            assert task.cost == sum(1 for value in pspp(dag, task.edges).labels if value)
    count = len(reduced_paths(reduced_graph(dag)))
    assert len(tasks) <= count
    if count <= delta:
        assert len(tasks) == count
    assert is_profitable(dag, delta) == (len(tasks) > 1)


def parallel_chains(chains: int, diamonds: int) -> Dag:
    """ENTRY branches to ``chains`` sequences of ``diamonds`` diamonds, all joining EXIT."""
    edges: list[tuple[int, int]] = []
    exit_ = 1
    block = 2
    for _ in range(chains):
        begin = block
        edges.append((0, begin))
        for _ in range(diamonds):
            left, right, join = block + 1, block + 2, block + 3
            edges += [(block, left), (block, right), (left, join), (right, join)]
            block = join
        edges.append((block, exit_))
        block += 1
    return to_dag(Cfg(block, 0, exit_, edges))


@pytest.mark.parametrize("chains", [1, 2, 3, 5])
@pytest.mark.parametrize("diamonds", [1, 3])
@pytest.mark.parametrize("delta", [1, 2, 3, 4, 8])
def test_chains_of_diamonds_give_one_task_per_chain(chains: int, diamonds: int,
                                                    delta: int) -> None:
    dag = parallel_chains(chains, diamonds)
    tasks = find_partition(dag, delta)
    assert len(tasks) == min(chains, delta)
    sizes = sorted(sum(1 for p in dag_paths(dag) if set(p) <= t.edges) for t in tasks)
    chain_paths = 2**diamonds
    if delta >= chains:
        assert sizes == [chain_paths] * chains
    else:  # the first delta - 1 chains alone, the rest together
        assert sizes == sorted([chain_paths] * (delta - 1) + [chain_paths * (chains - delta + 1)])


def test_running_example_tasks() -> None:
    """Examples 4 and 5 on the reconstructed Figure 3.

    Four tasks (1, 1, 4 and 8 paths: through v0, v3, v4 and v12) once delta allows
    four; Example 5 gives them costs 1, 1, 3 and 7, and PSPP counts 1, 1, 3 and 4
    here (the paper does not say how 8 paths through three chained diamonds need 7
    probes; overhead(P'_a) = 5, §2.2, is matched by the union of the first three).
    The four tasks share no probe: a path meets probes of its own task only. The
    threshold of §4.1 for two copies is 2 here (ENTRY has two edges): two tasks.
    """
    ex = running_example()
    dag = ex.dag
    tasks = find_partition(dag, 4)
    paths = dag_paths(dag)
    assert [sum(1 for p in paths if set(p) <= t.edges) for t in tasks] == [1, 1, 4, 8]
    marks = [("entry", "v0"), ("v2", "v3"), ("v2", "v4"), ("v1", "v12")]
    assert all(ex.edge[mark] in task.edges for mark, task in zip(marks, tasks, strict=True))
    assert [t.cost for t in tasks] == [1, 1, 3, 4]
    first_three = tasks[0].edges | tasks[1].edges | tasks[2].edges
    assert pspp(dag, first_three).cost == 5
    for task in tasks:
        probes = set(pspp(dag, task.edges).probes)
        for path in paths:
            if probes & set(path):
                assert set(path) <= task.edges
    assert find_partition(dag, 8) == tasks
    assert threshold(dag, 2) == 2
    assert [sum(1 for p in paths if set(p) <= t.edges) for t in find_partition(dag, 2)] == [13, 1]
    assert len(find_partition(dag, 1)) == 1


def paper_find_partition(dag: Dag, delta: int) -> list[frozenset[int]]:
    """Algorithm 2, lines 24-52, transcribed literally (with EXIT a frontier block, as
    the prose says), to show the gaps the implementation closes."""
    r = reduced_graph(dag)
    pathcount: Counter[int] = Counter({r.entry: 1})
    edge_sets: defaultdict[int, list[tuple[int, ...]]] = defaultdict(list)
    edge_sets[r.entry].append(())
    total = 1
    taken: set[int] = set()

    def extend() -> None:
        nonlocal total
        for v in r.topo_order:
            total -= pathcount[v]
            for e in r.out_edges[v]:
                taken.add(e)
                for es in list(edge_sets[v]):
                    edge_sets[r.dst(e)].append((*es, e))
                    pathcount[r.dst(e)] += 1
                    total += 1
                    if total == delta:
                        return

    extend()
    tasks = []
    for v in r.topo_order:
        entered = any(e in taken for e in r.edges if r.dst(e) == v)
        rest = [e for e in r.out_edges[v] if e not in taken]
        if entered and (rest or v == r.exit):
            tail, tail_vertices = r.reachable(rest)
            for es in edge_sets[v]:
                vertices = {r.entry, *(r.dst(e) for e in es)} | tail_vertices
                tasks.append(r.original_edges(tail | set(es), vertices))
    return tasks


def test_the_algorithm_as_written_loses_paths() -> None:
    """Two deviations, each shown on a DAG of parallel edges (no diamond to reduce).

    Stopping halfway through extending: 0 => 1 => 2, delta 3. The paper's count
    reaches 3 while block 1's second prefix waits to be extended along 1 -> 2 (the
    edge is already in S): that path is in no task. ENTRY as a frontier block:
    0 -> 1, 0 -> 2, 1 => 2, delta 1: the paper stops on ENTRY's first edge, and
    ENTRY, having no in-edge, makes no task for its other edge.
    """
    halfway = to_dag(Cfg(3, 0, 2, [(0, 1), (0, 1), (1, 2), (1, 2)]))
    literal = paper_find_partition(halfway, 3)
    assert sorted(holders(literal, p) for p in dag_paths(halfway)) == [0, 1, 1, 1]
    fixed = [t.edges for t in find_partition(halfway, 3)]
    assert [holders(fixed, p) for p in dag_paths(halfway)] == [1, 1, 1, 1]
    assert len(fixed) == 2

    at_entry = to_dag(Cfg(3, 0, 2, [(0, 1), (0, 2), (1, 2), (1, 2)]))
    literal = paper_find_partition(at_entry, 1)
    assert sorted(holders(literal, p) for p in dag_paths(at_entry)) == [0, 1, 1]
    fixed = [t.edges for t in find_partition(at_entry, 1)]
    assert [holders(fixed, p) for p in dag_paths(at_entry)] == [1, 1, 1]


def test_threshold_must_be_positive() -> None:
    dag = to_dag(Cfg(2, 0, 1, [(0, 1)]))
    with pytest.raises(ValueError, match="at least 1"):
        find_partition(dag, 0)


def test_everything_collapsed_is_one_whole_task() -> None:
    """if-else straight from ENTRY to EXIT: ENTRY and EXIT end up in one dummy."""
    dag = to_dag(Cfg(4, 0, 3, [(0, 1), (0, 2), (1, 3), (2, 3)]))
    r = reduced_graph(dag)
    assert r.entry == r.exit
    (task,) = find_partition(dag, 5)
    assert task.whole
    assert task.edges == {0, 1, 2, 3}
    assert task.cost == chords_with_values(dag) == ball_larus_cost(dag)


# ---------------------------------------------------------------------------
# assign (LPT)


def test_example_5_assignment() -> None:
    """Example 5: costs 1, 1, 3, 7 on two copies give {7} and {3, 1, 1}."""
    copies = assign([1, 1, 3, 7], 2)
    assert copies == (1, 1, 1, 0)


def test_ties_go_to_the_lowest_copy_in_input_order() -> None:
    assert assign([5, 5, 5], 2) == (0, 1, 0)
    assert assign([0, 0], 3) == (0, 0)  # a task of cost 0 leaves copy 0 the least loaded
    assert assign([], 2) == ()
    with pytest.raises(ValueError, match="at least one copy"):
        assign([1], 0)


@given(st.lists(st.integers(0, 20), max_size=7), st.integers(1, 3))
def test_lpt_is_within_four_thirds_of_optimal(costs: list[int], copies: int) -> None:
    """Graham's bound: max load <= (4/3 - 1/(3K)) * optimum, optimum by brute force."""
    chosen = assign(costs, copies)
    loads = [0] * copies
    for cost, copy in zip(costs, chosen, strict=True):
        loads[copy] += cost
    best = min(
        (max(sum(c for c, k in zip(costs, combo, strict=True) if k == i) for i in range(copies))
         for combo in itertools.product(range(copies), repeat=len(costs))),
        default=0,
    )
    assert max(loads) <= (Fraction(4, 3) - Fraction(1, 3 * copies)) * best
    ordered = sorted(range(len(costs)), key=lambda i: (-costs[i], i))
    # Replaying the rule: each task went to a least-loaded copy (lowest index on ties).
    replay = [0] * copies
    for index in ordered:
        least = min(range(copies), key=lambda c: (replay[c], c))
        assert chosen[index] == least
        replay[least] += costs[index]


# ---------------------------------------------------------------------------
# plan_program and owner


@st.composite
def programs(draw: st.DrawFn) -> tuple[dict[str, Dag], dict[str, int], int, int | None]:
    count = draw(st.integers(1, 3))
    dags = {f"p{i}": draw(small_dags()) for i in range(count)}
    callers = {name: draw(st.integers(0, 3)) for name in dags}
    copies = draw(st.integers(1, 8))
    delta = draw(st.none() | st.integers(1, 8))
    return dags, callers, copies, delta


def recorder(
    dag: Dag, kind: Kind, edges: frozenset[int]
) -> Callable[[tuple[int, ...]], tuple[int, ...] | None]:
    """What a copy records when a path runs, decoded back: the path, or None."""
    if kind is Kind.NONE:
        return lambda path: None
    if kind is Kind.ALL:
        numbering = number_paths(dag)
        return lambda path: regenerate(numbering, sum(numbering.val[e] for e in path)).edges
    labeling = pspp(dag, edges)
    return lambda path: decode(labeling, sum(labeling.labels[e] for e in path))


@given(programs())
def test_every_path_is_counted_once_by_its_owner(
    program: tuple[dict[str, Dag], dict[str, int], int, int | None],
) -> None:
    """Run every path once in every copy, decode what each copy recorded, keep it
    where the copy owns the path: each path is counted exactly once."""
    dags, callers, copies, delta = program
    plan = plan_program(dags, callers, copies, delta=delta)
    assert plan.copies == copies
    loads = [0] * copies
    for planned in plan.tasks:
        loads[planned.copy] += planned.task.cost
    assert list(plan.loads) == loads
    for name, dag in dags.items():
        tasks = plan.tasks_of(name)
        if callers[name] > 1:
            assert len(tasks) == 1
            assert tasks[0].task.whole
            assert tasks[0].task.cost == chords_with_values(dag)
        else:
            limit = threshold(dag, copies) if delta is None else delta
            assert threshold(dag, copies) == max(len(dag.out_edges[dag.entry]), copies)
            assert 1 <= len(tasks) <= limit
        assert (name in plan.profitable) == (len(tasks) > 1)
        for copy in range(copies):
            union = frozenset().union(*(t.task.edges for t in tasks if t.copy == copy))
            instrumentation = plan.instrumentation[copy][name]
            assert instrumentation.edges == union
            expected = (Kind.NONE if not union else
                        Kind.ALL if len(union) == len(dag.edges) else Kind.PSPP)
            assert instrumentation.kind is expected
        records = [recorder(dag, plan.instrumentation[c][name].kind,
                            plan.instrumentation[c][name].edges) for c in range(copies)]
        for path in dag_paths(dag):
            holding = [t for t in tasks if set(path) <= t.task.edges]
            assert len(holding) == 1
            assert owner(plan, name, path) == holding[0].copy
            kept = 0
            for copy in range(copies):
                seen = records[copy](path)
                counts_it = set(path) <= plan.instrumentation[copy][name].edges
                assert seen == (path if counts_it else None)
                if seen is not None and owner(plan, name, seen) == copy:
                    kept += 1
            assert kept == 1


def test_plan_of_two_procedures() -> None:
    """The running example called once is split; an if-else called twice is whole."""
    ex = running_example()
    small = to_dag(Cfg(4, 0, 3, [(0, 1), (0, 2), (1, 3), (2, 3)]))
    plan = plan_program({"main": ex.dag, "helper": small}, {"main": 0, "helper": 2}, 2,
                        delta=4)
    # Largest first: 4 -> copy 0; 3 -> copy 1; the first 1 -> copy 1 (3 < 4); the
    # second 1 -> copy 0 (4 = 4, lowest index); helper's 1 -> copy 1 (4 < 5).
    assert [(t.procedure, t.task.cost, t.copy) for t in plan.tasks] == [
        ("main", 1, 1), ("main", 1, 0), ("main", 3, 1), ("main", 4, 0), ("helper", 1, 1),
    ]
    assert plan.loads == (5, 5)
    assert plan.profitable == {"main"}
    assert plan.instrumentation[1]["helper"].kind is Kind.ALL
    assert plan.instrumentation[0]["helper"].kind is Kind.NONE
    assert plan.instrumentation[0]["main"].kind is Kind.PSPP
    p = ex.path("entry", "v1", "v2", "v4", "v6", "v7", "v8", "v10", "v11", "exit")
    assert owner(plan, "main", p) == 1
    with pytest.raises(ValueError, match="not a path"):
        owner(plan, "main", [len(ex.dag.edges)])


def test_a_union_of_tasks_counts_paths_of_other_copies() -> None:
    """Why the merge needs :func:`owner`: 0 => 1 => 2 (four paths), delta 4, three
    copies. Each path is a task; copy 0 gets (a, c) and (b, d), whose union is every
    edge, so it profiles all four paths by Ball-Larus -- adding the copies' profiles
    as the paper says would count (b, c) and (a, d) twice."""
    dag = to_dag(Cfg(3, 0, 2, [(0, 1), (0, 1), (1, 2), (1, 2)]))
    plan = plan_program({"f": dag}, {"f": 0}, 3, delta=4)
    assert [(set(t.task.edges), t.copy) for t in plan.tasks] == [
        ({0, 2}, 0), ({1, 2}, 1), ({0, 3}, 2), ({1, 3}, 0),
    ]
    assert plan.instrumentation[0]["f"].kind is Kind.ALL
    counting = {path: [c for c in range(3) if set(path) <= plan.instrumentation[c]["f"].edges]
                for path in dag_paths(dag)}
    assert counting == {(0, 2): [0], (1, 3): [0], (1, 2): [0, 1], (0, 3): [0, 2]}
    assert {path: owner(plan, "f", path) for path in counting} == {
        (0, 2): 0, (1, 3): 0, (1, 2): 1, (0, 3): 2,
    }


def test_plan_arguments_are_checked() -> None:
    dag = to_dag(Cfg(2, 0, 1, [(0, 1)]))
    with pytest.raises(ValueError, match="no caller count"):
        plan_program({"f": dag}, {}, 2)
    with pytest.raises(ValueError, match="at least one copy"):
        plan_program({"f": dag}, {"f": 0}, 0)
    with pytest.raises(ValueError, match="at least 1"):
        plan_program({"f": dag}, {"f": 0}, 2, delta=0)
