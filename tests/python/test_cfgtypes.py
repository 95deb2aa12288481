"""Unit tests of :mod:`pathprof.python.cfgtypes`, what a function's CFG is: the span a
piece of a block stands for (a ``with`` header without its body, a decorated ``def``
from its first decorator), a block's lines, sites (frozen, compared by identity), and
the graph a :class:`FunctionCfg` makes -- its backedges (every edge from a loop's
body or header to that loop's header, outer and inner loops alike), its edges out of
a block, and the plain :class:`~pathprof.graph.cfg.Cfg` it turns into."""

from __future__ import annotations

import ast
import dataclasses

import pytest

from pathprof.contract import Role
from pathprof.python.cfgtypes import (
    NO_SITE,
    Block,
    Edge,
    FinallyInfo,
    FunctionCfg,
    Loop,
    Piece,
    Restart,
    Site,
    SiteKind,
)


def _statement(source: str) -> ast.stmt:
    return ast.parse(source).body[-1]


# ---------------------------------------------------------------------------
# Pieces and blocks


def test_a_simple_statement_spans_its_source() -> None:
    stmt = _statement("x = 1\nyy = (1 +\n      2)\n")
    assert Piece(stmt, Role.STMT).span() == (2, 0, 3, 8)


def test_a_with_piece_stands_for_its_header_only() -> None:
    stmt = _statement("with open(p) as f, lock:\n    body()\n    more()\n")
    # up to the end of the last context manager (``lock``: columns 19 to 23)
    assert Piece(stmt, Role.WITH_ENTER).span() == (1, 0, 1, 23)
    assert Piece(stmt, Role.WITH_EXIT).span() == (1, 0, 1, 23)


def test_a_with_piece_ends_at_the_last_items_target() -> None:
    stmt = _statement("with a as (b,\n          c):\n    pass\n")
    assert Piece(stmt, Role.WITH_ENTER).span() == (1, 0, 2, 12)


def test_a_decorated_definition_starts_at_its_first_decorator() -> None:
    stmt = _statement("@first\n@second(1)\ndef f():\n    return 1\n")
    assert Piece(stmt, Role.STMT).span() == (1, 1, 4, 12)
    klass = _statement("@deco\nclass C:\n    pass\n")
    assert Piece(klass, Role.STMT).span() == (1, 1, 3, 8)


def test_an_undecorated_definition_starts_at_def() -> None:
    stmt = _statement("\ndef f():\n    return 1\n")
    assert Piece(stmt, Role.STMT).span() == (2, 0, 3, 12)


def test_a_piece_of_an_expression_spans_the_expression() -> None:
    test = _statement("if a and\\\n   b:\n    pass\n").test  # type: ignore[attr-defined]
    assert Piece(test, Role.TEST).span() == (1, 3, 2, 4)


def test_a_block_spans_from_its_first_to_its_last_line() -> None:
    module = ast.parse("a = 1\nb = (2,\n     3)\nc = 4\n")
    block = Block(2, "code", [Piece(module.body[1], Role.STMT),
                              Piece(module.body[0], Role.STMT)])
    assert block.lines() == (1, 3)
    block.pieces.append(Piece(module.body[2], Role.STMT))
    assert block.lines() == (1, 4)


def test_a_block_without_pieces_has_no_lines() -> None:
    assert Block(0, "entry", label="entry to f").lines() is None


def test_blocks_do_not_share_their_piece_lists() -> None:
    first, second = Block(0, "code"), Block(1, "code")
    first.pieces.append(Piece(ast.Pass(lineno=1, col_offset=0, end_lineno=1,
                                       end_col_offset=4), Role.STMT))
    assert second.pieces == []


# ---------------------------------------------------------------------------
# Sites


def test_no_site_is_nowhere() -> None:
    assert NO_SITE.kind is SiteKind.NONE
    assert NO_SITE.stmts is None
    assert (NO_SITE.index, NO_SITE.route) == (0, 0)


def test_sites_are_frozen_and_compared_by_identity() -> None:
    stmts: list[ast.stmt] = []
    first = Site(SiteKind.INSERT, stmts, 0)
    second = Site(SiteKind.INSERT, stmts, 0)
    assert first != second
    assert len({first, second}) == 2  # hashed by identity too
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.index = 1  # type: ignore[misc]


def test_site_kinds_are_the_documented_ones() -> None:
    assert {k.value for k in SiteKind} == {"insert", "return", "guard", "dispatch",
                                           "pending", "flow", "none"}


def test_a_finally_starts_with_no_exit_and_continuations_of_its_own() -> None:
    node = ast.parse("try:\n    pass\nfinally:\n    pass\n").body[0]
    assert isinstance(node, ast.Try)
    first, second = FinallyInfo(0, node, 3), FinallyInfo(1, node, 4)
    assert first.exit == -1
    first.continuations[1] = (5, "return")
    first.forwards[1] = 0
    assert second.continuations == {}
    assert second.forwards == {}


# ---------------------------------------------------------------------------
# The function's graph


def _cfg(n_blocks: int, edges: list[tuple[int, int]], loops: list[Loop],
         restarts: tuple[int, ...] = ()) -> FunctionCfg:
    node = ast.parse("def f():\n    pass\n").body[0]
    assert isinstance(node, ast.FunctionDef)
    return FunctionCfg(
        node=node, qualname="f",
        blocks=[Block(i, "code") for i in range(n_blocks)],
        edges=[Edge(a, b, "next", NO_SITE) for a, b in edges],
        entry=0, exit=1,
        restarts=[Restart(b, "handler", node) for b in restarts],
        finallies=[], route_flags=[], bare_raises=[], star_handler_ends=[], star_flows=[],
        body_start=0, loops=loops)


def test_an_edge_from_a_loops_body_to_its_header_is_a_backedge() -> None:
    # 0 -> 2 (header) -> 3 (body) -> 2; 2 -> 1 (exit)
    cfg = _cfg(4, [(0, 2), (2, 3), (3, 2), (2, 1)], [Loop(2, frozenset({3}))])
    assert cfg.backedges == (2,)


def test_a_header_that_jumps_to_itself_is_a_backedge() -> None:
    cfg = _cfg(3, [(0, 2), (2, 2), (2, 1)], [Loop(2, frozenset())])
    assert cfg.backedges == (1,)


def test_an_edge_into_a_header_from_outside_its_loop_is_not_a_backedge() -> None:
    # 0 -> 2 -> 3 (header) -> 4 (body) -> 3, and 2 -> 3 enters the loop.
    cfg = _cfg(5, [(0, 2), (2, 3), (3, 4), (4, 3), (3, 1)], [Loop(3, frozenset({4}))])
    assert cfg.backedges == (3,)


def test_nested_loops_have_the_backedges_of_each() -> None:
    # outer header 2, inner header 3 (in the outer body), inner body 4;
    # 4 -> 2 is a ``break``-like edge from the inner body to the outer header
    # (a backedge of the outer loop: 4 is in its body).
    edges = [(0, 2), (2, 3), (3, 4), (4, 3), (3, 2), (4, 2), (2, 1)]
    loops = [Loop(2, frozenset({3, 4})), Loop(3, frozenset({4}))]
    cfg = _cfg(5, edges, loops)
    assert cfg.backedges == (3, 4, 5)
    # Without the loops the syntax made, there are no backedges (never by search).
    assert _cfg(5, edges, []).backedges == ()


def test_two_loops_with_one_header_each_count() -> None:
    # Two Loop records may share a header (as the ones of one statement): an edge from
    # either body is a backedge.
    cfg = _cfg(5, [(0, 2), (2, 3), (3, 2), (2, 4), (4, 2), (2, 1)],
               [Loop(2, frozenset({3})), Loop(2, frozenset({4}))])
    assert cfg.backedges == (2, 4)


def test_out_edges_are_the_ids_of_a_blocks_edges() -> None:
    cfg = _cfg(4, [(0, 2), (2, 3), (3, 2), (2, 1)], [Loop(2, frozenset({3}))])
    assert cfg.out_edges(2) == [1, 3]
    assert cfg.out_edges(1) == []


def test_to_graph_keeps_blocks_edges_restarts_and_backedges() -> None:
    cfg = _cfg(5, [(0, 2), (2, 3), (3, 2), (2, 1), (4, 1)], [Loop(2, frozenset({3}))],
               restarts=(4,))
    graph = cfg.to_graph()
    assert graph.num_blocks == 5
    assert (graph.entry, graph.exit) == (0, 1)
    assert graph.edges == ((0, 2), (2, 3), (3, 2), (2, 1), (4, 1))
    assert graph.restarts == (4,)
    assert graph.backedges == (2,)


def test_a_built_while_loop_has_its_one_backedge() -> None:
    from pathprof.python.cfg import build_cfg

    node = _statement("def g(n):\n    while n:\n        n -= 1\n    return n\n")
    assert isinstance(node, ast.FunctionDef)
    cfg = build_cfg(node, "g")
    (backedge,) = cfg.backedges
    edge = cfg.edges[backedge]
    header = cfg.blocks[edge.dst]
    assert [p.role for p in header.pieces] == [Role.TEST]
    assert header.lines() == (2, 2)  # the while test
    assert cfg.blocks[edge.src].lines() == (3, 3)  # the body
