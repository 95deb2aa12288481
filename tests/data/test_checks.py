""":func:`pathprof.data.checks.check_function`, what a function's contract read back
from a data file must hold beyond ``FunctionInfo.check``: every field of its type
(exactly: a bool is not an int) and in its range, every piece of source within the
function's lines, a span of at most :data:`~pathprof.data.checks.MAX_SPAN` lines,
and every decision's boolean tree naming its conditions, nesting at most
:data:`~pathprof.data.checks.MAX_DEPTH` levels and allowing exactly the vectors it
declares (at most :data:`~pathprof.data.checks.MAX_VECTORS`). A hand-made contract
of a two-path function is corrupted one field at a time; the vectors a tree allows
are counted here by brute force over every assignment of its conditions."""

from __future__ import annotations

import dataclasses
import itertools
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pathprof.contract import (
    Block,
    Compound,
    ContractError,
    CopyShareInfo,
    DecisionInfo,
    Edge,
    EdgeCounters,
    EventTables,
    FunctionInfo,
    Piece,
    Restart,
    ReturnCount,
    Span,
)
from pathprof.data.checks import MAX_DEPTH, MAX_SPAN, MAX_VECTORS, check_function
from pathprof.python.instrument import instrument_source

#: A decision of two conditions, ``a and b`` on line 11: its vectors are a false;
#: a true, b false; a true, b true: 3.
AND = DecisionInfo("if", Span(11, 7, 11, 14), "a and b", ("a", "b"),
                   (Span(11, 7, 11, 8), Span(11, 13, 11, 14)), "&(0,1)", 0, 3)


def _function(**changes: Any) -> FunctionInfo:
    """``def f`` of lines 10 to 14 (a decorator on line 9): ``if a and b: return 1``
    (line 12), ``return 2`` (line 14). Blocks 0 entry, 1 exit, 2 the test, 3 and 4
    the returns; two paths."""
    meta = FunctionInfo(
        qualname="f", first_line=10, last_line=14, code_line=9, is_async=False,
        entry=0, exit=1,
        blocks=(Block("entry", "entry to f", ()), Block("exit", "exit from f", ()),
                Block("code", "", (Piece(11, 7, 11, 14, "test", ""),)),
                Block("code", "", (Piece(12, 8, 12, 16, "stmt", "return"),)),
                Block("code", "", (Piece(14, 4, 14, 12, "stmt", "return"),))),
        edges=(Edge(0, 2, "call"), Edge(2, 3, "true"), Edge(3, 1, "return"),
               Edge(2, 4, "false"), Edge(4, 1, "return")),
        fall_off={}, restarts=(), backedges=(), num_paths=2, counter="array",
        query=(0, 0, 0, 0, 1),
        returns={3: ReturnCount("ADD", 0), 4: ReturnCount("ADD", 1)},
        early_returns=frozenset(), compounds=(), unreachable=(), mode="path")
    return dataclasses.replace(meta, **changes)


def _problem(meta: FunctionInfo) -> str:
    with pytest.raises(ContractError) as raised:
        check_function(meta)
    return str(raised.value)


def test_a_sound_function_passes() -> None:
    meta = _function()
    meta.check()  # (the graph's invariants, which check_function takes as given)
    check_function(meta)


def test_every_optional_part_of_sound_types_passes() -> None:
    check_function(_function(
        fall_off={2: "true"}, restarts=(Restart(4, "handler"),), backedges=(1,),
        early_returns=frozenset({3}), unreachable=(4,),
        compounds=(Compound("for", False, Span(11, 4, 14, 12), header=Span(11, 13, 11, 14),
                            iter=Span(11, 13, 11, 14), for_iter=2, for_next=3),),
        share=CopyShareInfo(tasks=((0, 7), ()), copies=(1, 0), index=1),
        edge_counters=EdgeCounters(raising=(2, 3), endpoints=((0, 2), (2, 1), (3, 1)),
                                   chords=(2, 0)),
        events=EventTables("statements", ((0,), (1, 2)), (0, 0, 1, 0, 0), {3: 1}, 2),
        decisions=(AND,)))


@pytest.mark.parametrize("options", [
    {}, {"mode": "edge"}, {"conditions": True}, {"mode": "events"},
], ids=["path", "edge", "conditions", "events"])
def test_what_the_front_end_writes_passes(options: dict[str, Any]) -> None:
    source = ("import contextlib\n\n\n@contextlib.contextmanager\n"
              "def f(a, b, items):\n"
              "    try:\n"
              "        for item in items:\n"
              "            if a and (b or not item):\n"
              "                continue\n"
              "            with open(item) as handle:\n"
              "                yield handle\n"
              "    except OSError:\n"
              "        raise\n"
              "    finally:\n"
              "        a = b = None\n"
              "    return a\n")
    functions = instrument_source(source, "/nowhere/m.py", module_key="m",
                                  **options).metadata.functions
    assert [meta.qualname for meta in functions] == ["f"]
    for meta in functions:
        check_function(meta)


# -- the lines ---------------------------------------------------------------------------

@pytest.mark.parametrize("changes", [
    {"code_line": 0},
    {"code_line": True},  # a bool is not a line
    {"code_line": 9.0},
    {"first_line": 8},  # before the code's first line
    {"last_line": 9},  # before the def line
    {"last_line": "14"},
], ids=["line-0", "bool", "float", "def-before-code", "end-before-def", "text"])
def test_lines_that_are_not_a_functions_are_refused(changes: dict[str, Any]) -> None:
    problem = _problem(_function(**changes))
    assert problem.startswith("f: lines ")
    assert problem.endswith(" are not a function's")


def test_a_qualname_that_is_not_text_is_named_by_a_question_mark() -> None:
    assert _problem(_function(qualname=7)) == "?: lines 9, 10, 14 are not a function's"


def test_a_function_may_span_max_span_lines_and_not_one_more() -> None:
    check_function(_function(code_line=1, first_line=1, last_line=1 + MAX_SPAN))
    assert _problem(_function(code_line=1, first_line=1, last_line=2 + MAX_SPAN)) == (
        f"f: lines 1, 1, {2 + MAX_SPAN} are not a function's")


def test_a_function_of_one_line_passes() -> None:
    one = _function(code_line=11, first_line=11, last_line=11,
                    blocks=(*_function().blocks[:2],
                            Block("code", "", (Piece(11, 7, 11, 14, "test", ""),)),
                            Block("code", "", (Piece(11, 16, 11, 24, "stmt", "return"),)),
                            Block("code", "", (Piece(11, 30, 11, 38, "stmt", "return"),))))
    check_function(one)


# -- blocks and pieces -------------------------------------------------------------------

def _with_block(block: object) -> FunctionInfo:
    blocks = list(_function().blocks)
    blocks[3] = block  # type: ignore[call-overload]
    return _function(blocks=tuple(blocks))


@pytest.mark.parametrize("block", [
    Block(3, "", ()),  # type: ignore[arg-type]
    Block("code", None, ()),  # type: ignore[arg-type]
    Block("code", "", [Piece(12, 8, 12, 16, "stmt", "return")]),  # type: ignore[arg-type]
], ids=["kind", "label", "pieces-a-list"])
def test_a_block_not_of_its_types_is_refused(block: Block) -> None:
    assert _problem(_with_block(block)) == "f: a block is not one (its kind, label or pieces)"


@pytest.mark.parametrize("piece", [
    Piece(8, 0, 8, 4, "stmt", ""),  # before the code's first line
    Piece(14, 0, 15, 4, "stmt", ""),  # past the last line
    Piece(12, -1, 12, 4, "stmt", ""),
    Piece(12, 0, 12, -4, "stmt", ""),
    Piece(13, 0, 12, 4, "stmt", ""),  # ends before it starts
    Piece(True, 0, 12, 4, "stmt", ""),  # type: ignore[arg-type]
    Piece(12, 0.0, 12, 4, "stmt", ""),  # type: ignore[arg-type]
    Piece(12, 0, 12, 4, 1, ""),  # type: ignore[arg-type]
    Piece(12, 0, 12, 4, "stmt", None),  # type: ignore[arg-type]
], ids=["before", "after", "col", "end-col", "reversed", "bool-line", "float-col",
        "role", "flags"])
def test_a_piece_outside_the_functions_lines_or_of_wrong_types_is_refused(
        piece: Piece) -> None:
    assert _problem(_with_block(Block("code", "", (piece,)))) == (
        "f: a piece is not one of its lines 9 to 14")


def test_pieces_on_the_first_and_last_lines_and_at_column_0_pass() -> None:
    check_function(_with_block(Block("code", "", (Piece(9, 0, 9, 0, "stmt", ""),
                                                   Piece(14, 0, 14, 0, "stmt", "")))))


@pytest.mark.parametrize("edge", [
    Edge(0, 2, None),  # type: ignore[arg-type]
    Edge(True, 2, "call"),  # type: ignore[arg-type]  (FunctionInfo.check takes it)
    Edge(0, 2.0, "call"),  # type: ignore[arg-type]
], ids=["label", "bool-src", "float-dst"])
def test_an_edge_not_of_its_types_is_refused(edge: Edge) -> None:
    edges = (edge, *_function().edges[1:])
    assert _problem(_function(edges=edges)) == "f: an edge is not one"


# -- edges, restarts, returns, counters --------------------------------------------------

@pytest.mark.parametrize("changes", [
    {"fall_off": [(2, "true")]},
    {"fall_off": {2: 1}},
    {"fall_off": {5: "true"}},  # 5 edges: 0 to 4
    {"fall_off": {True: "true"}},
    {"restarts": (Restart(5, "handler"),)},
    {"restarts": (Restart(2, 0),)},  # type: ignore[arg-type]
    {"backedges": (5,)},
    {"backedges": (-1,)},
    {"num_paths": 0},
    {"num_paths": True},
    {"counter": None},
    {"query": (0, 0, 0, 0, 1.0)},
    {"query": (0, 0, 0, 0, False)},
    {"mode": b"path"},
    {"early_returns": frozenset({5})},
    {"unreachable": (5,)},
    {"returns": [(3, ReturnCount("ADD", 0))]},
    {"returns": {5: ReturnCount("ADD", 0)}},
    {"returns": {3: ReturnCount(1, 0)}},  # type: ignore[arg-type]
    {"returns": {3: ReturnCount("ADD", "0")}},  # type: ignore[arg-type]
], ids=lambda changes: f"{next(iter(changes))}={next(iter(changes.values()))!r}")
def test_edges_restarts_returns_and_counters_of_wrong_types_are_refused(
        changes: dict[str, Any]) -> None:
    assert _problem(_function(**changes)) == (
        "f: its edges, restarts, returns or counters are not of their types")


def test_query_increments_may_be_negative() -> None:
    check_function(_function(query=(0, 0, -3, 0, 1)))


# -- compound statements -----------------------------------------------------------------

FOR = Compound("for", False, Span(11, 4, 14, 12), iter=Span(11, 13, 11, 14),
               for_iter=2, for_next=3)


@pytest.mark.parametrize("compound", [
    dataclasses.replace(FOR, kind=None),
    dataclasses.replace(FOR, span=Span(8, 4, 14, 12)),
    dataclasses.replace(FOR, span=Span(11, 4, 15, 12)),
    dataclasses.replace(FOR, span=Span(11, 4, 10, 12)),  # ends before it starts
    dataclasses.replace(FOR, span=(11, 4, 14)),  # three fields
    dataclasses.replace(FOR, span=[11, 4, 14, 12]),
    dataclasses.replace(FOR, header=Span(20, 0, 20, 1)),
    dataclasses.replace(FOR, iter=Span(11, -1, 11, 1)),
    dataclasses.replace(FOR, for_iter=5),
    dataclasses.replace(FOR, with_exit=-1),
    dataclasses.replace(FOR, for_next=True),
], ids=["kind", "before", "after", "reversed", "short", "list", "header", "iter",
        "block", "negative", "bool"])
def test_a_compound_statement_outside_its_lines_or_blocks_is_refused(
        compound: Compound) -> None:
    problem = _problem(_function(compounds=(compound,)))
    assert problem == f"f: a compound statement {compound!r} is not one of its lines"


# -- the plans of P3 copies, edge mode and events ----------------------------------------

@pytest.mark.parametrize("share", [
    CopyShareInfo(tasks=(), copies=(), index=0),  # no task
    CopyShareInfo(tasks=((0,),), copies=(0, 1), index=0),  # a copy per task
    CopyShareInfo(tasks=((0, -1),), copies=(0,), index=0),
    CopyShareInfo(tasks=([0],), copies=(0,), index=0),  # type: ignore[arg-type]
    CopyShareInfo(tasks=((0,),), copies=(-1,), index=0),
    CopyShareInfo(tasks=((0,),), copies=(0,), index=-1),
], ids=["empty", "copies", "negative-edge", "list", "negative-copy", "index"])
def test_a_malformed_p3_share_is_refused(share: CopyShareInfo) -> None:
    assert _problem(_function(share=share)) == "f: its share are not of their types"


@pytest.mark.parametrize("counters", [
    EdgeCounters(raising=(5,), endpoints=((0, 2),), chords=(0,)),
    EdgeCounters(raising=(2,), endpoints=((0, 5),), chords=(0,)),
    EdgeCounters(raising=(2,), endpoints=((0, 2, 1),), chords=(0,)),
    EdgeCounters(raising=(2,), endpoints=([0, 2],), chords=(0,)),  # type: ignore[arg-type]
    EdgeCounters(raising=(2,), endpoints=((0, 2), (2, 1)), chords=(2,)),  # 2 endpoints
], ids=["raising", "endpoint", "three-ends", "list", "chord"])
def test_a_malformed_edge_counter_plan_is_refused(counters: EdgeCounters) -> None:
    assert _problem(_function(edge_counters=counters)) == (
        "f: its edge counters are not of their types")


EVENTS = EventTables("statements", ((0,), (1, 2)), (0, 0, 1, 0, 0), {3: 1}, 2)


@pytest.mark.parametrize("events", [
    dataclasses.replace(EVENTS, kind=None),
    dataclasses.replace(EVENTS, pieces=([0],)),
    dataclasses.replace(EVENTS, pieces=((0, -1),)),
    dataclasses.replace(EVENTS, query=(0, 0, 1.5)),
    dataclasses.replace(EVENTS, leave={5: 1}),
    dataclasses.replace(EVENTS, leave={3: "1"}),
    dataclasses.replace(EVENTS, leave=[(3, 1)]),
    dataclasses.replace(EVENTS, chords=-1),
], ids=["kind", "list", "negative", "query", "leave-block", "leave-add", "leave-list",
        "chords"])
def test_malformed_event_tables_are_refused(events: EventTables) -> None:
    assert _problem(_function(events=events)) == "f: its events are not of their types"


# -- decisions ---------------------------------------------------------------------------

def _decision(**changes: Any) -> FunctionInfo:
    return _function(decisions=(AND._replace(**changes),))


@pytest.mark.parametrize("changes", [
    {"kind": None}, {"text": 1}, {"tree": ("and",)},
    {"span": Span(15, 0, 15, 1)},
    {"conditions": ("a", 2)},
    {"condition_spans": (Span(11, 7, 11, 8),)},  # one span for two conditions
    {"condition_spans": (Span(11, 7, 11, 8), Span(3, 0, 3, 1))},
    {"slot": -2}, {"slot": True},
    {"vectors": -1}, {"vectors": MAX_VECTORS + 1},
], ids=lambda changes: next(iter(changes)))
def test_a_decision_not_of_its_types_is_refused(changes: dict[str, Any]) -> None:
    problem = _problem(_decision(**changes))
    decision = AND._replace(**changes)
    assert problem == f"f: decision {decision.text!r}: not of its types"


def test_a_decision_counted_by_its_branches_has_slot_minus_one() -> None:
    check_function(_decision(slot=-1))


def test_a_decision_left_unmeasured_declares_no_vectors() -> None:
    check_function(_decision(vectors=0))


def test_a_decision_declaring_more_vectors_than_its_tree_allows_is_refused() -> None:
    assert _problem(_decision(vectors=4)) == (
        "f: decision 'a and b': its tree allows 3 ways to evaluate it, not 4")
    assert _problem(_decision(vectors=2)) == (
        "f: decision 'a and b': its tree allows 3 ways to evaluate it, not 2")


@pytest.mark.parametrize("tree", ["&(0,2)", "&(0,0)", "0", "&(1,0,2)"])
def test_a_tree_that_does_not_name_each_condition_once_is_refused(tree: str) -> None:
    assert _problem(_decision(tree=tree, vectors=0)) == (
        f"f: decision 'a and b': its tree {tree!r} does not name its 2 conditions")


@pytest.mark.parametrize("tree", ["", "&(0", "&(0,1))", "&0,1", "&(0)", "x", "&(0,1),"])
def test_text_that_is_not_a_boolean_tree_is_refused(tree: str) -> None:
    assert _problem(_decision(tree=tree)) == (
        f"f: decision 'a and b': {tree!r} is not a boolean tree of at most "
        f"{MAX_DEPTH} levels")


def test_a_tree_longer_than_its_conditions_make_one_is_refused() -> None:
    # two conditions: at most 16 * (2 + 1) + 16 = 64 characters
    fits = "!" * 58 + "&(0,1)"
    assert len(fits) == 64
    check_function(_decision(tree=fits))  # (an even count of nots: 3 vectors still)
    assert _problem(_decision(tree="!" + fits)) == (
        "f: decision 'a and b': its tree is longer than its conditions make one")


def _many(count: int, tree: str, vectors: int) -> FunctionInfo:
    """A decision of ``count`` conditions ``c0``... on line 11."""
    return _decision(text="many", conditions=tuple(f"c{i}" for i in range(count)),
                     condition_spans=tuple(Span(11, i, 11, i + 1) for i in range(count)),
                     tree=tree, vectors=vectors)


def test_a_tree_may_nest_max_depth_levels_and_not_one_more() -> None:
    # and of six leaves under k nots: its leaves at depth k + 1; an and of six
    # conditions has 6 vectors that stop at a false and 1 that takes them all
    six = "&(0,1,2,3,4,5)"
    check_function(_many(6, "!" * (MAX_DEPTH - 1) + six, 7))
    assert _problem(_many(6, "!" * MAX_DEPTH + six, 7)) == (
        f"f: decision 'many': {'!' * MAX_DEPTH + six!r} is not a boolean tree of at most "
        f"{MAX_DEPTH} levels")


def test_a_tree_too_deep_to_parse_is_refused_not_a_recursion_error() -> None:
    count = 5000  # room for 16 * 5001 + 16 characters: nots far deeper than Python recurses
    leaves = "&(" + ",".join(map(str, range(count))) + ")"
    tree = "!" * (16 * (count + 1) + 16 - len(leaves)) + leaves
    problem = _problem(_many(count, tree, 0))
    assert problem.startswith("f: decision 'many': '!!!")
    assert problem.endswith(f"is not a boolean tree of at most {MAX_DEPTH} levels")


def test_a_decision_of_max_vectors_passes() -> None:
    # an or of k conditions stops at each one true (k vectors) or ends all false (1):
    # k + 1 vectors, MAX_VECTORS with k = MAX_VECTORS - 1
    count = MAX_VECTORS - 1
    tree = "|(" + ",".join(map(str, range(count))) + ")"
    check_function(_many(count, tree, MAX_VECTORS))


# -- the vectors a tree allows, against brute force --------------------------------------

def _tree_text(tree: Any) -> str:
    if tree[0] == "leaf":
        return str(tree[1])
    if tree[0] == "not":
        return "!" + _tree_text(tree[1])
    return ("&(" if tree[0] == "and" else "|(") + ",".join(map(_tree_text, tree[1])) + ")"


def _evaluated(tree: Any, values: tuple[bool, ...], seen: list[tuple[int, bool]]) -> bool:
    """Python's short-circuit evaluation of ``tree``, each condition it evaluates (and
    its value) appended to ``seen``."""
    if tree[0] == "leaf":
        seen.append((tree[1], values[tree[1]]))
        return values[tree[1]]
    if tree[0] == "not":
        return not _evaluated(tree[1], values, seen)
    for child in tree[1]:
        outcome = _evaluated(child, values, seen)
        if outcome is (tree[0] == "or"):
            return outcome
    return tree[0] == "and"


def _brute_force_vectors(tree: Any, count: int) -> int:
    """The distinct ways Python can evaluate ``tree``: which conditions it evaluates,
    with which values, over every assignment of the ``count`` conditions."""
    ways = set()
    for values in itertools.product((False, True), repeat=count):
        seen: list[tuple[int, bool]] = []
        _evaluated(tree, values, seen)
        ways.add(tuple(seen))
    return len(ways)


@st.composite
def _trees(draw: st.DrawFn) -> tuple[Any, int]:
    count = draw(st.integers(1, 6))
    order = draw(st.permutations(range(count)))
    leaves = iter(order)

    def build(size: int) -> Any:
        core = ("leaf", next(leaves)) if size == 1 else operator(size)
        return ("not", core) if draw(st.booleans()) else core

    def operator(size: int) -> Any:
        parts = draw(st.integers(2, size))
        cuts = sorted(draw(st.lists(st.integers(1, size - 1), min_size=parts - 1,
                                    max_size=parts - 1, unique=True)))
        sizes = [b - a for a, b in zip([0, *cuts], [*cuts, size], strict=True)]
        return (draw(st.sampled_from(["and", "or"])), tuple(build(s) for s in sizes))

    return build(count), count


@settings(max_examples=50, deadline=None)
@given(_trees())
def test_a_decision_passes_with_exactly_the_vectors_its_tree_allows(
        drawn: tuple[Any, int]) -> None:
    tree, count = drawn
    text = _tree_text(tree)
    vectors = _brute_force_vectors(tree, count)
    check_function(_many(count, text, vectors))
    assert _problem(_many(count, text, vectors + 1)) == (
        f"f: decision 'many': its tree allows {vectors} ways to evaluate it, not "
        f"{vectors + 1}")
