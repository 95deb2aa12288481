"""Tests for pathprof.graph.serial: a CFG with named blocks read from plain (JSON) data
-- block names become ids in the order listed, edges keep their order (an edge's id is
its index), restarts and declared backedges are carried over, and every kind of bad data
is refused with a :class:`~pathprof.exceptions.CfgError` that says what is wrong."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pathprof.exceptions import CfgError
from pathprof.graph.cfg import find_backedges
from pathprof.graph.serial import NamedCfg, cfg_from_data

#: a while loop with a handler: in -> head -> body -> head, head -> out, handler -> head
LOOP: dict[str, Any] = {
    "blocks": ["in", "head", "body", "handler", "out"],
    "entry": "in",
    "exit": "out",
    "edges": [["in", "head"], ["head", "body"], ["body", "head"], ["head", "out"],
              ["handler", "head"]],
    "restarts": ["handler"],
}


def test_blocks_are_numbered_in_the_order_listed_and_edges_keep_theirs() -> None:
    named = cfg_from_data(LOOP)
    cfg = named.cfg
    assert named.names == ("in", "head", "body", "handler", "out")
    assert (cfg.num_blocks, cfg.entry, cfg.exit) == (5, 0, 4)
    assert cfg.edges == ((0, 1), (1, 2), (2, 1), (1, 4), (3, 1))
    assert cfg.restarts == (3,)


def test_data_read_back_from_json_gives_the_same_graph() -> None:
    assert cfg_from_data(json.loads(json.dumps(LOOP))) == cfg_from_data(LOOP)


def test_without_declared_backedges_the_search_finds_them() -> None:
    cfg = cfg_from_data(LOOP).cfg
    assert cfg.backedges is None
    # the DFS from ENTRY meets head -> body -> head: edge 2 closes the loop; the
    # handler, explored last, reaches head when it is already finished (a cross edge)
    assert find_backedges(cfg) == frozenset({2})


def test_declared_backedges_are_the_ids_of_the_edges_they_name() -> None:
    data = dict(LOOP, backedges=[["body", "head"], ["handler", "head"]])
    cfg = cfg_from_data(data).cfg
    assert cfg.backedges == (2, 4)
    assert find_backedges(cfg) == frozenset({2, 4})


def test_a_declared_backedge_names_every_parallel_edge_of_its_pair() -> None:
    data = {"blocks": ["in", "a", "out"], "entry": "in", "exit": "out",
            "edges": [["in", "a"], ["a", "a"], ["a", "out"], ["a", "a"]],
            "backedges": [["a", "a"]]}
    assert cfg_from_data(data).cfg.backedges == (1, 3)


def test_an_empty_list_of_backedges_declares_that_there_are_none() -> None:
    cfg = cfg_from_data(dict(LOOP, backedges=[])).cfg
    assert cfg.backedges == ()
    assert find_backedges(cfg) == frozenset()


def test_names_that_are_not_strings_are_read_as_their_text() -> None:
    named = cfg_from_data({"blocks": [10, 20, 30], "entry": 10, "exit": "30",
                           "edges": [[10, "20"], ["20", 30]]})
    assert named.names == ("10", "20", "30")
    assert named.cfg.edges == ((0, 1), (1, 2))


def test_spell_names_the_blocks_of_a_path() -> None:
    named = cfg_from_data(LOOP)
    assert named.spell((0, 1, 2)) == "in head body"
    assert named.spell((1, 4), sep=" -> ") == "head -> out"
    assert named.spell(()) == ""


def test_a_named_cfg_is_built_from_its_parts() -> None:
    named = cfg_from_data(LOOP)
    assert NamedCfg(named.cfg, named.names) == named


@pytest.mark.parametrize(("data", "message"), [
    ({"blocks": ["a", "a", "b"], "entry": "a", "exit": "b", "edges": []},
     "block names must be unique"),
    ({"blocks": ["a", "b"], "entry": "a", "exit": "c", "edges": []}, "'c'"),
    ({"blocks": ["a", "b"], "entry": "a", "exit": "b", "edges": [["a", "z"]]}, "'z'"),
    ({"blocks": ["a", "b"], "entry": "a", "edges": []}, "lacks a key: 'exit'"),
    ({"blocks": ["a", "b"], "entry": "a", "exit": "b"}, "lacks a key: 'edges'"),
    ({"blocks": ["a", "b"], "entry": "a", "exit": "b", "edges": [["a", "b"]],
      "restarts": ["q"]}, "'q'"),
    ({"blocks": ["a", "b"], "entry": "a", "exit": "b", "edges": [["a", "b"]],
      "backedges": [["a", "q"]]}, "'q'"),
])
def test_an_unknown_block_or_a_missing_key_is_named(data: dict[str, Any], message: str
                                                    ) -> None:
    with pytest.raises(CfgError, match=message):
        cfg_from_data(data)


@pytest.mark.parametrize("data", [
    {"blocks": ["a", "b"], "entry": "a", "exit": "b", "edges": [["a"]]},
    {"blocks": ["a", "b"], "entry": "a", "exit": "b", "edges": [["a", "b", "a"]]},
    {"blocks": ["a", "b"], "entry": "a", "exit": "b", "edges": 5},
    {"blocks": 7, "entry": "a", "exit": "b", "edges": []},
    [],
    None,
])
def test_malformed_data_is_a_cfg_error(data: Any) -> None:
    with pytest.raises(CfgError, match="malformed"):
        cfg_from_data(data)


def test_a_declared_backedge_that_is_no_edge_is_refused() -> None:
    data = dict(LOOP, backedges=[["out", "in"]])
    with pytest.raises(CfgError, match=r"declared backedges are not edges: \[\(4, 0\)\]"):
        cfg_from_data(data)


def test_the_graphs_own_rules_still_apply() -> None:
    into_entry = {"blocks": ["a", "b"], "entry": "a", "exit": "b", "edges": [["b", "a"]]}
    with pytest.raises(CfgError, match="enters ENTRY"):
        cfg_from_data(into_entry)
    same = {"blocks": ["a", "b"], "entry": "a", "exit": "a", "edges": []}
    with pytest.raises(CfgError, match="same block"):
        cfg_from_data(same)
    restart_at_entry = dict(LOOP, restarts=["in"])
    with pytest.raises(CfgError, match="restart block 0"):
        cfg_from_data(restart_at_entry)
