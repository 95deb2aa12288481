"""The backedge rule of DESIGN §4, checked on random programs.

Every edge from a block inside a loop's body to that loop's header ends a path,
however the body was left (fall-through, ``continue``, the end of a handler, a
``finally`` or a ``with`` that swallowed an exception). Loops and their bodies are
found here from the source lines alone -- a loop's header is the block holding its
``while`` test or ``for`` step, its body the lines of its ``body`` list -- never from
the CFG's own idea of its loops.
"""

from __future__ import annotations

import ast
import random

from hypothesis import given, settings

from pathprof.contract import Role
from pathprof.graph import number_paths, regenerate, to_dag
from pathprof.python.cfg import build_cfg
from pathprof.python.cfgtypes import FunctionCfg

from .random_programs import functions

#: Paths checked per function: all of them, or this many drawn at random.
SAMPLE = 400


def _loops(tree: ast.Module) -> list[ast.While | ast.For]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.While | ast.For | ast.AsyncFor)]


def _header_and_body_lines(cfg: FunctionCfg, loop: ast.While | ast.For
                           ) -> tuple[int, range] | None:
    """The loop's header block and the lines of its body (None: the loop is dead
    code, which the CFG leaves out, e.g. in the ``else`` of a try whose body always
    returns)."""
    for block in cfg.blocks:
        for piece in block.pieces:
            if (isinstance(loop, ast.While) and piece.role is Role.TEST
                    and piece.node is loop.test) or (
                    piece.role is Role.FOR_NEXT and piece.owner is loop):
                lines = range(loop.body[0].lineno, loop.body[-1].end_lineno + 1)
                return block.id, lines
    return None


def _last_line(cfg: FunctionCfg, block: int) -> int | None:
    spans = [p.span() for p in cfg.blocks[block].pieces]
    return max(s[0] for s in spans) if spans else None


@settings(max_examples=300, deadline=None)
@given(functions())
def test_a_loop_header_is_entered_from_inside_its_body_only_at_a_path_start(
        source: str) -> None:
    tree = ast.parse(source)
    node = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "f")
    cfg = build_cfg(node, "f")
    numbering = number_paths(to_dag(cfg.to_graph()))
    found = [_header_and_body_lines(cfg, loop) for loop in _loops(ast.Module(node.body, []))]
    loops = [loop for loop in found if loop is not None]
    total = numbering.total
    rng = random.Random(total)
    numbers = range(total) if total <= SAMPLE else rng.sample(range(total), SAMPLE)
    for number in numbers:
        blocks = regenerate(numbering, number).blocks
        for header, body_lines in loops:
            places = [i for i, b in enumerate(blocks) if b == header]
            assert len(places) <= 1, (source, blocks)
            if not places or places[0] == 0:
                continue
            before = [_last_line(cfg, b) for b in blocks[:places[0]]]
            previous = next((line for line in reversed(before) if line is not None), None)
            assert previous not in body_lines, (
                f"path {number} runs from line {previous} inside the loop into its header "
                f"block {header} without a cut:\n{source}")


def test_a_probe_with_no_place_for_its_code_is_refused_not_dropped() -> None:
    """A path-ending edge whose site cannot hold code would lose its count silently
    (a match no case of which matched, at a function's end, did): the rewrite
    refuses it, so the function runs unmeasured instead of inexact."""
    import ast

    import pytest

    from pathprof.exceptions import CfgError
    from pathprof.python.cfgtypes import NO_SITE
    from pathprof.python.plan import plan_function
    from pathprof.python.rewrite import rewrite_function

    node = ast.parse("def tail_if(x):\n    if x:\n        y = 1\n").body[0]
    cfg = build_cfg(node, "tail_if")  # type: ignore[arg-type]
    (eid,) = cfg.fall_off  # the if's false branch, off the end: it ends the path
    cfg.edges[eid].site = NO_SITE
    with pytest.raises(CfgError, match="the 'return' edge out of block"):
        rewrite_function(plan_function(cfg))
