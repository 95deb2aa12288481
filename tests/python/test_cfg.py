"""Unit tests of :mod:`pathprof.python.cfg`, the builder of one function's CFG from
its AST: for each compound statement kind (``if``/``elif``/``else``, ``while`` and
``for`` with ``else``, ``try``/``except``/``else``/``finally``, ``try``/``except*``,
``with``, ``match``; ``break``, ``continue``, ``return`` and ``raise`` inside them;
the ``async`` variants) the blocks, the labelled edges between them, the edges' sites,
the restart blocks, loops and backedges of small functions whose CFG is worked out by
hand in a comment, and their number of acyclic (Ball-Larus) paths, counted by hand on
the DAG of ``graph.to_dag`` (backedge ``v -> h`` replaced by ``v -> EXIT`` and
``ENTRY -> h``, one each per distinct block; ``ENTRY -> r`` for each restart block
``r``). Also :func:`is_constant_true`, :func:`iter_functions`, the errors the builder
raises, and the invariant :func:`build_cfg` promises, on random functions. (The
graph layer's own ``Cfg`` is tested in tests/graph/test_cfg.py.)
"""

from __future__ import annotations

import ast
import textwrap
from collections import Counter

import pytest
from hypothesis import given, settings

from pathprof.contract import Role
from pathprof.graph import number_paths, to_dag
from pathprof.python.cfg import build_cfg, is_constant_true, iter_functions
from pathprof.python.cfgtypes import FunctionCfg, Piece, SiteKind

from .random_programs import functions

# -- describing a CFG by its source, so that expectations read as the code does ----


def _piece(piece: Piece) -> str:
    node = piece.node
    if piece.role in (Role.WITH_ENTER, Role.WITH_EXIT):
        assert isinstance(node, ast.With | ast.AsyncWith)
        items = ", ".join(ast.unparse(item) for item in node.items)
        return f"{'enter' if piece.role is Role.WITH_ENTER else 'exit'} {items}"
    text = ast.unparse(node).splitlines()[0]
    prefix = {Role.STMT: "", Role.TEST: "test ", Role.FOR_ITER: "iter ",
              Role.FOR_NEXT: "next ", Role.SUBJECT: "match ", Role.PATTERN: "case ",
              Role.GUARD: "guard "}[piece.role]
    return prefix + text


def _names(cfg: FunctionCfg) -> list[str]:
    """Each block's name: its pieces (``; `` between), or ``<kind: label>`` when it
    has none; ENTRY and EXIT. The names of one function's blocks are distinct."""
    names = []
    for block in cfg.blocks:
        if block.id == cfg.entry:
            names.append("ENTRY")
        elif block.id == cfg.exit:
            names.append("EXIT")
        elif block.pieces:
            names.append("; ".join(_piece(p) for p in block.pieces))
        else:
            names.append(f"<{block.kind}: {block.label}>" if block.label
                         else f"<{block.kind}>")
    assert len(set(names)) == len(names), names
    return names


def _blocks(cfg: FunctionCfg) -> Counter[tuple[str, str]]:
    """(kind, name) of every block but ENTRY and EXIT. Whether a run of statements is
    a "code" or a "test" block (one made for an ``if`` test) is not told apart here:
    only the kinds that say what enters a block (loop header, handler, ...) are."""
    names = _names(cfg)
    return Counter(("code" if b.kind == "test" else b.kind, names[b.id])
                   for b in cfg.blocks if b.id not in (cfg.entry, cfg.exit))


def _edges(cfg: FunctionCfg) -> Counter[tuple[str, str, str]]:
    names = _names(cfg)
    return Counter((names[e.src], e.label, names[e.dst]) for e in cfg.edges)


def _site(cfg: FunctionCfg, src: str, label: str) -> SiteKind:
    """The site kind of the one edge labelled ``label`` out of block ``src``."""
    names = _names(cfg)
    (kind,) = [e.site.kind for e in cfg.edges if names[e.src] == src and e.label == label]
    return kind


def _block(cfg: FunctionCfg, name: str) -> int:
    return _names(cfg).index(name)


def _restarts(cfg: FunctionCfg) -> Counter[tuple[str, str]]:
    names = _names(cfg)
    return Counter((r.kind, names[r.block]) for r in cfg.restarts)


def _backedges(cfg: FunctionCfg) -> Counter[tuple[str, str, str]]:
    names = _names(cfg)
    return Counter((names[cfg.edges[i].src], cfg.edges[i].label, names[cfg.edges[i].dst])
                   for i in cfg.backedges)


def _paths(cfg: FunctionCfg) -> int:
    return number_paths(to_dag(cfg.to_graph())).total


def _cfg(source: str, qualname: str | None = None, *, star_flows_on: bool = True
         ) -> FunctionCfg:
    tree = ast.parse(textwrap.dedent(source))
    node = tree.body[0]
    assert isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    return build_cfg(node, qualname or node.name, star_flows_on)


# -- straight-line code --------------------------------------------------------------


def test_straight_line_code_is_one_block_from_entry_to_exit() -> None:
    # ENTRY -call-> [a = 1; b = 2] -return-> EXIT: one path.
    cfg = _cfg("""
        def f():
            a = 1
            b = 2
    """)
    assert _blocks(cfg) == Counter({("code", "a = 1; b = 2"): 1})
    assert _edges(cfg) == Counter({("ENTRY", "call", "a = 1; b = 2"): 1,
                                   ("a = 1; b = 2", "return", "EXIT"): 1})
    call, ret = cfg.edges
    # the call's code goes before the first statement, the fall-off return's at the end
    assert (call.site.kind, call.site.index) == (SiteKind.INSERT, 0)
    assert (ret.site.kind, ret.site.index) == (SiteKind.INSERT, 2)
    assert cfg.qualname == "f"
    assert (cfg.restarts, cfg.loops, cfg.backedges, cfg.fall_off) == ([], [], (), {})
    assert cfg.body_start == 0
    assert _paths(cfg) == 1


def test_expressions_yield_and_await_do_not_split_blocks() -> None:
    # and/or, a conditional expression, a comprehension with a test, a lambda, a
    # yield, an assert: all pieces of one block, one path.
    generator = _cfg("""
        def g(xs, f, h):
            a = xs and f or h
            b = [i for i in xs if i] if a else (lambda: 0)
            c = yield a
            assert c, "no"
            return b
    """)
    assert [len(b.pieces) for b in generator.blocks] == [0, 0, 5]
    assert _paths(generator) == 1
    coroutine = _cfg("""
        async def co(x):
            y = await x
            return y
    """)
    assert _blocks(coroutine) == Counter({("code", "y = await x; return y"): 1})
    assert _paths(coroutine) == 1


def test_a_return_edge_has_its_site_in_the_return_statement() -> None:
    cfg = _cfg("""
        def f(x):
            y = x
            return y
    """)
    (ret,) = [e for e in cfg.edges if e.dst == cfg.exit]
    assert ret.label == "return"
    assert ret.site.kind is SiteKind.RETURN
    assert ret.site.node is cfg.node.body[1]
    assert ret.site.index == 1


def test_a_docstring_is_left_out_of_the_body() -> None:
    cfg = _cfg('''
        def f():
            "doc"
            return 1
    ''')
    assert cfg.body_start == 1
    assert _edges(cfg) == Counter({("ENTRY", "call", "return 1"): 1,
                                   ("return 1", "return", "EXIT"): 1})
    (call,) = [e for e in cfg.edges if e.src == cfg.entry]
    assert call.site.index == 1  # after the docstring


def test_a_function_with_only_a_docstring_has_one_empty_block_that_returns() -> None:
    # ENTRY -call-> [] -return-> EXIT
    cfg = _cfg('''
        def f():
            "only a docstring"
    ''')
    assert cfg.body_start == 1
    assert _edges(cfg) == Counter({("ENTRY", "call", "<code>"): 1,
                                   ("<code>", "return", "EXIT"): 1})
    assert _paths(cfg) == 1


def test_code_after_a_return_gets_a_block_with_no_way_in() -> None:
    # [return 1] -return-> EXIT; [a = 2] (unreachable) -return-> EXIT, with no edge
    # into it: the one path is ENTRY, [return 1], EXIT.
    cfg = _cfg("""
        def f():
            return 1
            a = 2
    """)
    dead = _block(cfg, "a = 2")
    assert cfg.blocks[dead].label == "unreachable"
    assert not [e for e in cfg.edges if e.dst == dead]
    assert _edges(cfg)[("a = 2", "return", "EXIT")] == 1
    assert _paths(cfg) == 1


def test_nested_definitions_are_simple_statements_of_the_enclosing_function() -> None:
    cfg = _cfg("""
        def outer():
            def g():
                if g:
                    return 1
            class C:
                pass
            return g
    """)
    assert _blocks(cfg) == Counter({("code", "def g():; class C:; return g"): 1})
    assert _paths(cfg) == 1


# -- if ----------------------------------------------------------------------------


def test_an_if_without_else_falls_off_the_end_by_its_false_edge() -> None:
    # [test x] -true-> [a = 1] -return-> EXIT
    #          -false-------------return-> EXIT   (a branch off the end: fall_off)
    cfg = _cfg("""
        def f(x):
            if x:
                a = 1
    """)
    assert _blocks(cfg) == Counter({("code", "test x"): 1, ("code", "a = 1"): 1})
    assert _edges(cfg) == Counter({
        ("ENTRY", "call", "test x"): 1, ("test x", "true", "a = 1"): 1,
        ("a = 1", "return", "EXIT"): 1, ("test x", "return", "EXIT"): 1})
    names = _names(cfg)
    ((eid, branch),) = cfg.fall_off.items()
    assert branch == "false"
    assert (names[cfg.edges[eid].src], names[cfg.edges[eid].dst]) == ("test x", "EXIT")
    assert _paths(cfg) == 2


def test_if_elif_else_has_one_test_per_condition_and_joins_after() -> None:
    # [a = 1; test x] -true-> [b = 2] ------------------------next-> [return a]
    #                 -false-> [test x > 1] -true-> [c = 3] --next-> [return a]
    #                                       -false-> [d = 4] -next-> [return a]
    # The first test joins the statement before it; 3 paths.
    cfg = _cfg("""
        def f(x):
            a = 1
            if x:
                b = 2
            elif x > 1:
                c = 3
            else:
                d = 4
            return a
    """)
    assert _blocks(cfg) == Counter({
        ("code", "a = 1; test x"): 1, ("code", "b = 2"): 1, ("code", "test x > 1"): 1,
        ("code", "c = 3"): 1, ("code", "d = 4"): 1, ("code", "return a"): 1})
    assert _edges(cfg) == Counter({
        ("ENTRY", "call", "a = 1; test x"): 1,
        ("a = 1; test x", "true", "b = 2"): 1,
        ("a = 1; test x", "false", "test x > 1"): 1,
        ("test x > 1", "true", "c = 3"): 1,
        ("test x > 1", "false", "d = 4"): 1,
        ("b = 2", "next", "return a"): 1,
        ("c = 3", "next", "return a"): 1,
        ("d = 4", "next", "return a"): 1,
        ("return a", "return", "EXIT"): 1})
    # every branch's code goes at the start of its statement list
    assert _site(cfg, "a = 1; test x", "true") is SiteKind.INSERT
    assert _site(cfg, "test x > 1", "false") is SiteKind.INSERT
    assert _paths(cfg) == 3


def test_a_return_in_one_branch_leaves_the_other_to_continue() -> None:
    # [test x] -true-> [return 1] -return-> EXIT
    #          -false-> [y = 2; return y] -return-> EXIT
    cfg = _cfg("""
        def f(x):
            if x:
                return 1
            y = 2
            return y
    """)
    assert _edges(cfg) == Counter({
        ("ENTRY", "call", "test x"): 1, ("test x", "true", "return 1"): 1,
        ("test x", "false", "y = 2; return y"): 1, ("return 1", "return", "EXIT"): 1,
        ("y = 2; return y", "return", "EXIT"): 1})
    assert _paths(cfg) == 2


# -- while -------------------------------------------------------------------------


def test_while_else_with_break_and_continue() -> None:
    # H = [test x]: -true-> [x -= 1; test x == 3] -true-> [break] -break-> R
    #                                              -false-> [test x == 5]
    # [test x == 5] -true-> [continue] -continue-> H          (backedge)
    #               -false-> [y = 1] -next-> H                 (backedge)
    # H -false-> [z = 2] -next-> R = [return 0] -return-> EXIT
    # The break skips the else. DAG: ENTRY -> H twice (the call, the loop start);
    # from H: break, continue, y = 1, the else: 4 paths; 2 * 4 = 8.
    cfg = _cfg("""
        def g(x):
            while x:
                x -= 1
                if x == 3:
                    break
                if x == 5:
                    continue
                y = 1
            else:
                z = 2
            return 0
    """)
    assert _blocks(cfg) == Counter({
        ("loop", "test x"): 1, ("code", "x -= 1; test x == 3"): 1, ("code", "break"): 1,
        ("code", "test x == 5"): 1, ("code", "continue"): 1, ("code", "y = 1"): 1,
        ("code", "z = 2"): 1, ("code", "return 0"): 1})
    assert _edges(cfg) == Counter({
        ("ENTRY", "call", "test x"): 1,
        ("test x", "true", "x -= 1; test x == 3"): 1,
        ("x -= 1; test x == 3", "true", "break"): 1,
        ("x -= 1; test x == 3", "false", "test x == 5"): 1,
        ("test x == 5", "true", "continue"): 1,
        ("continue", "continue", "test x"): 1,
        ("test x == 5", "false", "y = 1"): 1,
        ("y = 1", "next", "test x"): 1,
        ("test x", "false", "z = 2"): 1,
        ("z = 2", "next", "return 0"): 1,
        ("break", "break", "return 0"): 1,
        ("return 0", "return", "EXIT"): 1})
    assert _backedges(cfg) == Counter({("continue", "continue", "test x"): 1,
                                       ("y = 1", "next", "test x"): 1})
    (loop,) = cfg.loops
    names = _names(cfg)
    assert names[loop.header] == "test x"
    assert {names[b] for b in loop.body} == {"x -= 1; test x == 3", "break", "test x == 5",
                                             "continue", "y = 1"}
    assert _paths(cfg) == 8


def test_a_while_true_loop_has_no_false_edge_and_is_left_by_its_break() -> None:
    # H = [test True] -true-> [test x] -true-> [break] -return-> EXIT (fall_off "break")
    #                                  -false-> [x = 1] -next-> H (backedge)
    # From H: 2 paths; ENTRY -> H twice: 4.
    cfg = _cfg("""
        def f(x):
            while True:
                if x:
                    break
                x = 1
    """)
    assert _edges(cfg) == Counter({
        ("ENTRY", "call", "test True"): 1, ("test True", "true", "test x"): 1,
        ("test x", "true", "break"): 1, ("test x", "false", "x = 1"): 1,
        ("x = 1", "next", "test True"): 1, ("break", "return", "EXIT"): 1})
    names = _names(cfg)
    assert {names[cfg.edges[e].src]: b for e, b in cfg.fall_off.items()} == {"break": "break"}
    assert _paths(cfg) == 4


@pytest.mark.parametrize(("test", "expected"), [
    ("True", True), ("1", True), ("False", False), ("0", False), ("None", False),
    ("2", False), ("'yes'", False), ("x", False), ("not False", False)])
def test_is_constant_true_only_for_the_constants_true_and_one(test: str, expected: bool
                                                              ) -> None:
    assert is_constant_true(ast.parse(test, mode="eval").body) is expected


def test_a_while_1_loop_is_infinite_too_and_a_while_2_loop_is_not() -> None:
    infinite = _cfg("""
        def f():
            while 1:
                pass
    """)
    assert [e.label for e in infinite.edges if e.src == _block(infinite, "test 1")] == ["true"]
    finite = _cfg("""
        def f():
            while 2:
                pass
    """)
    assert sorted(e.label for e in finite.edges if e.src == _block(finite, "test 2")) == [
        "return", "true"]  # the false edge falls off the end


# -- for ---------------------------------------------------------------------------


def test_for_else_with_break() -> None:
    # [iter xs] -loop (no site)-> H = [next i]
    # H -next-> [test i] -true-> [break] -break-> R
    #                    -false-> [a = i] -next-> H       (backedge)
    # H -exhausted-> [b = 1] -next-> R = [return 2] -return-> EXIT
    # From H: break, a = i, the else: 3; ENTRY -> [iter xs] -> H and ENTRY -> H: 6.
    cfg = _cfg("""
        def f(xs):
            for i in xs:
                if i:
                    break
                a = i
            else:
                b = 1
            return 2
    """)
    assert _blocks(cfg) == Counter({
        ("code", "iter xs"): 1, ("for", "next i"): 1, ("code", "test i"): 1,
        ("code", "break"): 1, ("code", "a = i"): 1, ("code", "b = 1"): 1,
        ("code", "return 2"): 1})
    assert _edges(cfg) == Counter({
        ("ENTRY", "call", "iter xs"): 1, ("iter xs", "loop", "next i"): 1,
        ("next i", "next", "test i"): 1, ("test i", "true", "break"): 1,
        ("test i", "false", "a = i"): 1, ("a = i", "next", "next i"): 1,
        ("next i", "exhausted", "b = 1"): 1, ("b = 1", "next", "return 2"): 1,
        ("break", "break", "return 2"): 1, ("return 2", "return", "EXIT"): 1})
    # nothing can run between the iterable and the first step
    assert _site(cfg, "iter xs", "loop") is SiteKind.NONE
    assert _backedges(cfg) == Counter({("a = i", "next", "next i"): 1})
    (loop,) = cfg.loops
    assert {_names(cfg)[b] for b in loop.body} == {"test i", "break", "a = i"}
    assert _paths(cfg) == 6


def test_a_nested_loops_exit_is_a_backedge_of_the_outer_loop() -> None:
    # [iter xs] -loop-> F = [next x] -next-> W = [test x] -true-> [x -= 1] -next-> W
    # W -false-> F (the inner loop's exit: a backedge of the outer loop)
    # F -exhausted-> EXIT (off the end: fall_off)
    # From [x -= 1]: 1 (loop end); W: 2; F: 2 + 1 = 3. ENTRY -> [iter xs], ENTRY -> F,
    # ENTRY -> W: 3 + 3 + 2 = 8.
    cfg = _cfg("""
        def f(xs):
            for x in xs:
                while x:
                    x -= 1
    """)
    assert _edges(cfg) == Counter({
        ("ENTRY", "call", "iter xs"): 1, ("iter xs", "loop", "next x"): 1,
        ("next x", "next", "test x"): 1, ("test x", "true", "x -= 1"): 1,
        ("x -= 1", "next", "test x"): 1, ("test x", "false", "next x"): 1,
        ("next x", "return", "EXIT"): 1})
    assert _backedges(cfg) == Counter({("x -= 1", "next", "test x"): 1,
                                       ("test x", "false", "next x"): 1})
    names = _names(cfg)
    outer, inner = cfg.loops  # outer before inner
    assert (names[outer.header], {names[b] for b in outer.body}) == (
        "next x", {"test x", "x -= 1"})
    assert (names[inner.header], {names[b] for b in inner.body}) == ("test x", {"x -= 1"})
    assert list(cfg.fall_off.values()) == ["exhausted"]
    assert _paths(cfg) == 8


def test_a_loop_body_ending_in_a_failing_match_joins_before_its_backedge() -> None:
    # F = [next x] -next-> [match x] -match (no site)-> [case 1]
    # [case 1] -case 1-> [a = 1] -next-> J;  [case 1] -case 1 fails (no site)-> J
    # J (empty, end of the body) -next-> F: the backedge has a site, the end of the body.
    # From F: 2 + 1 (exhausted) = 3; ENTRY -> [iter xs] -> F, ENTRY -> F: 6.
    cfg = _cfg("""
        def f(xs):
            for x in xs:
                match x:
                    case 1:
                        a = 1
    """)
    join = "<code: end of loop body at line 6>"
    assert _edges(cfg) == Counter({
        ("ENTRY", "call", "iter xs"): 1, ("iter xs", "loop", "next x"): 1,
        ("next x", "next", "match x"): 1, ("match x", "match", "case 1"): 1,
        ("case 1", "case 1", "a = 1"): 1, ("a = 1", "next", join): 1,
        ("case 1", "case 1 fails", join): 1, (join, "next", "next x"): 1,
        ("next x", "return", "EXIT"): 1})
    assert _backedges(cfg) == Counter({(join, "next", "next x"): 1})
    assert _site(cfg, join, "next") is SiteKind.INSERT
    assert _paths(cfg) == 6


def test_break_and_continue_outside_a_loop_are_syntax_errors() -> None:
    for statement in ("break", "continue"):
        with pytest.raises(SyntaxError, match=f"'{statement}' outside loop"):
            _cfg(f"""
                def f():
                    {statement}
            """)


# -- try ---------------------------------------------------------------------------


def test_try_except_else_finally() -> None:
    # The try body continues the block; the else joins it: [a = 1; c = 3].
    # [a = 1; c = 3] -next-> FIN = [d = 4]      (FIN: a restart block)
    # [b = 2] (handler, restart) -next-> FIN
    # [raise] (handler, restart) -raise-> EXIT  (a bare raise)
    # FIN -re-raise-> EXIT;  FIN -next-> [return a] -return-> EXIT
    # FIN: 2 paths; ENTRY -> [a = 1; c = 3] (2), -> FIN (2), -> [b = 2] (2),
    # -> [raise] (1): 7.
    cfg = _cfg("""
        def t(x):
            try:
                a = 1
            except ValueError:
                b = 2
            except TypeError as e:
                raise
            else:
                c = 3
            finally:
                d = 4
            return a
    """)
    assert _blocks(cfg) == Counter({
        ("code", "a = 1; c = 3"): 1, ("finally", "d = 4"): 1, ("handler", "b = 2"): 1,
        ("handler", "raise"): 1, ("code", "return a"): 1})
    assert _edges(cfg) == Counter({
        ("ENTRY", "call", "a = 1; c = 3"): 1, ("a = 1; c = 3", "next", "d = 4"): 1,
        ("b = 2", "next", "d = 4"): 1, ("raise", "raise", "EXIT"): 1,
        ("d = 4", "re-raise", "EXIT"): 1, ("d = 4", "next", "return a"): 1,
        ("return a", "return", "EXIT"): 1})
    assert _restarts(cfg) == Counter({("finally", "d = 4"): 1, ("handler", "b = 2"): 1,
                                      ("handler", "raise"): 1})
    # the finally's end dispatches on how it was entered
    assert _site(cfg, "d = 4", "re-raise") is SiteKind.DISPATCH
    assert _site(cfg, "d = 4", "next") is SiteKind.DISPATCH
    # a bare raise keeps a place for code just before it
    assert _site(cfg, "raise", "raise") is SiteKind.INSERT
    ((stmts, index, block),) = cfg.bare_raises
    assert isinstance(stmts[index], ast.Raise)
    assert block == _block(cfg, "raise")
    (info,) = cfg.finallies
    assert (info.index, info.start, info.exit) == (0, _block(cfg, "d = 4"),
                                                   _block(cfg, "d = 4"))
    assert info.node is cfg.node.body[0]
    assert _paths(cfg) == 7


def test_a_raise_of_an_exception_ends_its_path_with_no_site() -> None:
    # [test x] -true-> [raise ValueError(x)] -raise (no site)-> EXIT
    #          -false-> [return x] -return-> EXIT
    cfg = _cfg("""
        def r(x):
            if x:
                raise ValueError(x)
            return x
    """)
    assert _edges(cfg)[("raise ValueError(x)", "raise", "EXIT")] == 1
    assert _site(cfg, "raise ValueError(x)", "raise") is SiteKind.NONE
    assert cfg.bare_raises == []
    assert _paths(cfg) == 2


def test_an_else_after_a_try_body_that_always_returns_is_left_out() -> None:
    # [return 1] -return-> EXIT;  handler [pass; return 3] -return-> EXIT.
    # No control reaches the else: it has no block. ENTRY -> [return 1], -> handler: 2.
    cfg = _cfg("""
        def f():
            try:
                return 1
            except ValueError:
                pass
            else:
                y = 2
            return 3
    """)
    assert _blocks(cfg) == Counter({("code", "return 1"): 1,
                                    ("handler", "pass; return 3"): 1})
    assert _restarts(cfg) == Counter({("handler", "pass; return 3"): 1})
    assert _paths(cfg) == 2


def test_return_and_continue_through_a_finally_inside_a_loop() -> None:
    # F = [next i] -next-> [test i] -true-> [continue] -continue-> FIN
    #                              -false-> [return i] -return (no site)-> FIN
    # FIN = [a = 1] dispatches: -re-raise-> EXIT, -return-> EXIT,
    #                           -continue-> F, -next-> F (both backedges)
    # F -exhausted-> [return 0] -return-> EXIT
    # FIN: 2 + 1 (loop end) = 3; [test i]: 6; F: 7. ENTRY -> [iter xs] -> F (7),
    # -> F (7), -> FIN (restart, 3): 17.
    cfg = _cfg("""
        def f(xs):
            for i in xs:
                try:
                    if i:
                        continue
                    return i
                finally:
                    a = 1
            return 0
    """)
    assert _edges(cfg) == Counter({
        ("ENTRY", "call", "iter xs"): 1, ("iter xs", "loop", "next i"): 1,
        ("next i", "next", "test i"): 1, ("test i", "true", "continue"): 1,
        ("continue", "continue", "a = 1"): 1, ("test i", "false", "return i"): 1,
        ("return i", "return", "a = 1"): 1, ("a = 1", "re-raise", "EXIT"): 1,
        ("a = 1", "return", "EXIT"): 1, ("a = 1", "continue", "next i"): 1,
        ("a = 1", "next", "next i"): 1, ("next i", "exhausted", "return 0"): 1,
        ("return 0", "return", "EXIT"): 1})
    # the finally runs between the return's value and the return: no place for code
    assert _site(cfg, "return i", "return") is SiteKind.NONE
    assert _site(cfg, "continue", "continue") is SiteKind.INSERT
    assert _backedges(cfg) == Counter({("a = 1", "continue", "next i"): 1,
                                       ("a = 1", "next", "next i"): 1})
    # a route flag before each statement leaving through the finally: return 1, continue 3
    flags = sorted((type(f.stmts[f.index]).__name__, f.code, f.finally_index)
                   for f in cfg.route_flags)
    assert flags == [("Continue", 3, 0), ("Return", 1, 0)]
    (info,) = cfg.finallies
    assert info.continuations == {1: (cfg.exit, "return"),
                                  3: (_block(cfg, "next i"), "continue")}
    assert _restarts(cfg) == Counter({("finally", "a = 1"): 1})
    assert _paths(cfg) == 17


def test_a_break_through_a_finally_leaves_the_loop_from_the_finallys_end() -> None:
    # H = [test xs] -true-> [break] -break-> FIN = [a = 1]
    # FIN -re-raise-> EXIT, -next-> H (backedge), -break-> off the end (fall_off "break")
    # H -false-> EXIT (fall_off "false")
    # FIN: 3; H: 3 + 1 = 4; ENTRY -> H twice (8) and -> FIN (3): 11.
    cfg = _cfg("""
        def f(xs):
            while xs:
                try:
                    break
                finally:
                    a = 1
    """)
    assert _edges(cfg) == Counter({
        ("ENTRY", "call", "test xs"): 1, ("test xs", "true", "break"): 1,
        ("break", "break", "a = 1"): 1, ("a = 1", "re-raise", "EXIT"): 1,
        ("a = 1", "next", "test xs"): 1, ("test xs", "return", "EXIT"): 1,
        ("a = 1", "return", "EXIT"): 1})
    names = _names(cfg)
    assert sorted((names[cfg.edges[e].src], b) for e, b in cfg.fall_off.items()) == [
        ("a = 1", "break"), ("test xs", "false")]
    (info,) = cfg.finallies
    assert info.continuations == {2: (-1, "break")}  # -1: out of the loop
    assert _paths(cfg) == 11


def test_a_return_through_two_finallies_is_forwarded_from_the_inner_to_the_outer() -> None:
    # [return 1] -return (no site)-> INNER = [a = 1]
    # INNER -re-raise-> EXIT, -return-> OUTER, -next-> OUTER
    # OUTER = [b = 2] -re-raise-> EXIT, -return-> EXIT (the return), -return-> EXIT
    # (its fall-through, off the end of the function)
    # OUTER: 3; INNER: 1 + 3 + 3 = 7. ENTRY -> [return 1] (7), -> INNER (7),
    # -> OUTER (3): 17.
    cfg = _cfg("""
        def f():
            try:
                try:
                    return 1
                finally:
                    a = 1
            finally:
                b = 2
    """)
    assert _edges(cfg) == Counter({
        ("ENTRY", "call", "return 1"): 1, ("return 1", "return", "a = 1"): 1,
        ("a = 1", "re-raise", "EXIT"): 1, ("a = 1", "return", "b = 2"): 1,
        ("a = 1", "next", "b = 2"): 1, ("b = 2", "re-raise", "EXIT"): 1,
        ("b = 2", "return", "EXIT"): 2})
    outer, inner = cfg.finallies  # numbered as their try statements start
    assert (_names(cfg)[outer.start], _names(cfg)[inner.start]) == ("b = 2", "a = 1")
    assert inner.forwards == {1: outer.index}
    assert inner.continuations == {1: (outer.start, "return")}
    assert outer.continuations == {1: (cfg.exit, "return")}
    assert _paths(cfg) == 17


# -- try / except* -----------------------------------------------------------------


_TRY_STAR = """
    def ts(x):
        try:
            a = 1
        except* ValueError:
            b = 2
        except* TypeError:
            c = 3
        d = 4
"""


def test_an_except_star_clause_end_hands_over_or_flows_on() -> None:
    # [a = 1] -next-> [d = 4] -return-> EXIT
    # each clause (restart) -except* done (PENDING)-> EXIT and -next (FLOW)-> [d = 4]
    # A clause: 2 paths. ENTRY -> [a = 1] (1), -> [b = 2] (2), -> [c = 3] (2): 5.
    cfg = _cfg(_TRY_STAR)
    assert _edges(cfg) == Counter({
        ("ENTRY", "call", "a = 1"): 1, ("a = 1", "next", "d = 4"): 1,
        ("b = 2", "except* done", "EXIT"): 1, ("c = 3", "except* done", "EXIT"): 1,
        ("b = 2", "next", "d = 4"): 1, ("c = 3", "next", "d = 4"): 1,
        ("d = 4", "return", "EXIT"): 1})
    assert _restarts(cfg) == Counter({("except*", "b = 2"): 1, ("except*", "c = 3"): 1})
    names = _names(cfg)
    # each clause's end is a route of its own, numbered from 1, in both its edges
    routes = sorted((names[e.src], e.label, e.site.kind.value, e.site.route)
                    for e in cfg.edges if names[e.src] in ("b = 2", "c = 3"))
    assert routes == [("b = 2", "except* done", "pending", 1), ("b = 2", "next", "flow", 1),
                      ("c = 3", "except* done", "pending", 2), ("c = 3", "next", "flow", 2)]
    assert cfg.star_flows == [cfg.node.body[0]]
    assert sorted(names[b] for _, b in cfg.star_handler_ends) == ["b = 2", "c = 3"]
    assert _paths(cfg) == 5


def test_without_flowing_on_every_except_star_clause_ends_its_path() -> None:
    # [a = 1] -next-> A = [after-try*: d = 4] (restart) -return-> EXIT
    # each clause (restart) -except* done (INSERT)-> EXIT
    # ENTRY -> [a = 1], -> [b = 2], -> [c = 3], -> A: 4.
    cfg = _cfg(_TRY_STAR, star_flows_on=False)
    assert _blocks(cfg) == Counter({
        ("code", "a = 1"): 1, ("handler", "b = 2"): 1, ("handler", "c = 3"): 1,
        ("after-try*", "d = 4"): 1})
    assert _edges(cfg) == Counter({
        ("ENTRY", "call", "a = 1"): 1, ("a = 1", "next", "d = 4"): 1,
        ("b = 2", "except* done", "EXIT"): 1, ("c = 3", "except* done", "EXIT"): 1,
        ("d = 4", "return", "EXIT"): 1})
    assert _restarts(cfg) == Counter({("except*", "b = 2"): 1, ("except*", "c = 3"): 1,
                                      ("except*", "d = 4"): 1})
    assert _site(cfg, "b = 2", "except* done") is SiteKind.INSERT
    assert cfg.star_flows == []
    assert _paths(cfg) == 4


# -- with --------------------------------------------------------------------------


def test_a_with_body_continues_its_block_and_the_code_after_it_restarts() -> None:
    # [enter m() as v, m(); a = 1] -next-> A = [exit m() as v, m(); b = 2] -return-> EXIT
    # A is a restart block (an __exit__ may swallow the exception): 2 paths.
    cfg = _cfg("""
        def w(m):
            with m() as v, m():
                a = 1
            b = 2
    """)
    entered, after = "enter m() as v, m(); a = 1", "exit m() as v, m(); b = 2"
    assert _blocks(cfg) == Counter({("code", entered): 1, ("with-after", after): 1})
    assert _edges(cfg) == Counter({("ENTRY", "call", entered): 1,
                                   (entered, "next", after): 1, (after, "return", "EXIT"): 1})
    assert _restarts(cfg) == Counter({("with", after): 1})
    assert _paths(cfg) == 2


def test_a_return_inside_a_with_keeps_its_return_site() -> None:
    # [enter m; return 1] -return (RETURN)-> EXIT;  [exit m] (restart) -return-> EXIT
    cfg = _cfg("""
        def w(m):
            with m:
                return 1
    """)
    assert _edges(cfg) == Counter({
        ("ENTRY", "call", "enter m; return 1"): 1, ("enter m; return 1", "return", "EXIT"): 1,
        ("exit m", "return", "EXIT"): 1})
    assert _site(cfg, "enter m; return 1", "return") is SiteKind.RETURN
    assert _paths(cfg) == 2


def test_a_break_out_of_a_with_has_no_site_and_joins_before_the_return() -> None:
    # F = [next i] -next-> [enter m; break] -break (no site)-> J
    # F -exhausted-> J;  J (empty) -return-> EXIT
    # [exit m] (restart) -next-> F (backedge)
    # F: 2; ENTRY -> [iter xs] -> F (2), -> F (2), -> [exit m] (1): 5.
    cfg = _cfg("""
        def f(xs, m):
            for i in xs:
                with m:
                    break
    """)
    assert _edges(cfg) == Counter({
        ("ENTRY", "call", "iter xs"): 1, ("iter xs", "loop", "next i"): 1,
        ("next i", "next", "enter m; break"): 1, ("enter m; break", "break", "<code>"): 1,
        ("next i", "exhausted", "<code>"): 1, ("<code>", "return", "EXIT"): 1,
        ("exit m", "next", "next i"): 1})
    assert _site(cfg, "enter m; break", "break") is SiteKind.NONE
    assert _site(cfg, "<code>", "return") is SiteKind.INSERT
    assert _backedges(cfg) == Counter({("exit m", "next", "next i"): 1})
    assert _paths(cfg) == 5


def test_a_continue_out_of_a_with_keeps_its_site() -> None:
    # F = [next x] -next-> [enter m; continue] -continue (INSERT)-> F   (backedge)
    # [exit m] (restart) -next-> F (backedge);  F -exhausted-> EXIT
    # F: 2; ENTRY -> [iter xs] -> F (2), -> F (2), -> [exit m] (1): 5.
    cfg = _cfg("""
        def f(xs, m):
            for x in xs:
                with m:
                    continue
    """)
    assert _site(cfg, "enter m; continue", "continue") is SiteKind.INSERT
    assert _backedges(cfg) == Counter({("enter m; continue", "continue", "next x"): 1,
                                       ("exit m", "next", "next x"): 1})
    assert _paths(cfg) == 5


# -- match -------------------------------------------------------------------------


def test_match_cases_guards_and_an_irrefutable_last_case() -> None:
    # [match x] -match-> [case 1] -case 1-> [a = 1] -return-> EXIT
    # [case 1] -case 1 fails-> [case [y]] -case 2 matches (GUARD)-> [guard y]
    # [guard y] -guard true-> [b = 2] -return-> EXIT;  -guard false-> [case _]
    # [case [y]] -case 2 fails-> [case _] -case 3-> [c = 3] -return-> EXIT
    # (no "case 3 fails": _ always matches). Matching steps have no site. 4 paths.
    cfg = _cfg("""
        def m(x):
            match x:
                case 1:
                    a = 1
                case [y] if y:
                    b = 2
                case _:
                    c = 3
    """)
    assert _blocks(cfg) == Counter({
        ("code", "match x"): 1, ("case", "case 1"): 1, ("case", "case [y]"): 1,
        ("case", "case _"): 1, ("guard", "guard y"): 1, ("code", "a = 1"): 1,
        ("code", "b = 2"): 1, ("code", "c = 3"): 1})
    assert _edges(cfg) == Counter({
        ("ENTRY", "call", "match x"): 1, ("match x", "match", "case 1"): 1,
        ("case 1", "case 1", "a = 1"): 1, ("case 1", "case 1 fails", "case [y]"): 1,
        ("case [y]", "case 2 matches", "guard y"): 1, ("guard y", "guard true", "b = 2"): 1,
        ("case [y]", "case 2 fails", "case _"): 1, ("guard y", "guard false", "case _"): 1,
        ("case _", "case 3", "c = 3"): 1, ("a = 1", "return", "EXIT"): 1,
        ("b = 2", "return", "EXIT"): 1, ("c = 3", "return", "EXIT"): 1})
    assert _site(cfg, "match x", "match") is SiteKind.NONE
    assert _site(cfg, "case 1", "case 1 fails") is SiteKind.NONE
    assert _site(cfg, "guard y", "guard false") is SiteKind.NONE
    assert _site(cfg, "case [y]", "case 2 matches") is SiteKind.GUARD
    assert _site(cfg, "case 1", "case 1") is SiteKind.INSERT
    assert _paths(cfg) == 4


@pytest.mark.parametrize(("pattern", "irrefutable"), [
    ("_", True), ("y", True), ("1 | _", True), ("(_ as w)", True),
    ("1 | 2", False), ("[y]", False), ("(1 as w)", False)])
def test_only_an_irrefutable_last_case_has_no_way_to_fail(pattern: str, irrefutable: bool
                                                          ) -> None:
    cfg = _cfg(f"""
        def m(x):
            match x:
                case {pattern}:
                    a = 1
    """)
    labels = sorted(e.label for e in cfg.edges if cfg.blocks[e.src].kind == "case")
    assert labels == (["case 1"] if irrefutable else ["case 1", "case 1 fails"])


def test_a_match_no_case_of_which_matched_joins_before_the_function_ends() -> None:
    # [case 1] -case 1-> [a = 1] -next-> J;  [case 1] -case 1 fails (no site)-> J
    # J (empty) -return (INSERT at the end)-> EXIT: 2 paths.
    cfg = _cfg("""
        def m(x):
            match x:
                case 1:
                    a = 1
    """)
    assert _edges(cfg) == Counter({
        ("ENTRY", "call", "match x"): 1, ("match x", "match", "case 1"): 1,
        ("case 1", "case 1", "a = 1"): 1, ("a = 1", "next", "<code>"): 1,
        ("case 1", "case 1 fails", "<code>"): 1, ("<code>", "return", "EXIT"): 1})
    (ret,) = [e for e in cfg.edges if e.dst == cfg.exit]
    assert (ret.site.kind, ret.site.index) == (SiteKind.INSERT, 1)
    assert _paths(cfg) == 2


# -- async ------------------------------------------------------------------------


def test_async_for_and_async_with_follow_the_rules_of_for_and_with() -> None:
    # [iter xs] -loop-> F = [next x] -next-> [await x] -next-> F (backedge)
    # F -exhausted-> [enter m as v; await v] -next-> A = [exit m as v] -return-> EXIT
    # A restarts. F: 2; ENTRY -> [iter xs] -> F (2), -> F (2), -> A (1): 5.
    cfg = _cfg("""
        async def co(xs, m):
            async for x in xs:
                await x
            async with m as v:
                await v
    """)
    assert _blocks(cfg) == Counter({
        ("code", "iter xs"): 1, ("for", "next x"): 1, ("code", "await x"): 1,
        ("code", "enter m as v; await v"): 1, ("with-after", "exit m as v"): 1})
    assert _edges(cfg) == Counter({
        ("ENTRY", "call", "iter xs"): 1, ("iter xs", "loop", "next x"): 1,
        ("next x", "next", "await x"): 1, ("await x", "next", "next x"): 1,
        ("next x", "exhausted", "enter m as v; await v"): 1,
        ("enter m as v; await v", "next", "exit m as v"): 1,
        ("exit m as v", "return", "EXIT"): 1})
    assert _restarts(cfg) == Counter({("with", "exit m as v"): 1})
    assert _backedges(cfg) == Counter({("await x", "next", "next x"): 1})
    assert _paths(cfg) == 5


# -- errors ------------------------------------------------------------------------


def test_a_statement_kind_with_no_rule_fails_loudly() -> None:
    class Novel(ast.stmt):
        _fields = ()

    function = ast.parse("def f():\n    pass\n").body[0]
    assert isinstance(function, ast.FunctionDef)
    function.body = [ast.copy_location(Novel(), function.body[0])]
    with pytest.raises(NotImplementedError, match="no CFG rule for Novel"):
        build_cfg(function, "f")


# -- iter_functions ----------------------------------------------------------------


def test_iter_functions_names_every_function_outer_before_inner() -> None:
    tree = ast.parse(textwrap.dedent("""
        def a():
            def b():
                class C:
                    def m(self):
                        pass
            k = lambda: 0

        class D:
            class E:
                async def n(self):
                    pass
            def o(self):
                pass

        if True:
            def p():
                pass
        try:
            pass
        except ValueError:
            def q():
                pass
        match 1:
            case 1:
                def r():
                    pass
        with open("x") as fh:
            def s():
                pass
    """))
    found = [(qualname, node.name) for node, qualname in iter_functions(tree)]
    assert found == [
        ("a", "a"), ("a.<locals>.b", "b"), ("a.<locals>.b.<locals>.C.m", "m"),
        ("D.E.n", "n"), ("D.o", "o"), ("p", "p"), ("q", "q"), ("r", "r"), ("s", "s")]


def test_iter_functions_of_a_module_without_functions_is_empty() -> None:
    assert list(iter_functions(ast.parse("x = 1\nclass C:\n    y = lambda: 2\n"))) == []
    assert list(iter_functions(ast.parse(""))) == []


# -- the invariant of build_cfg, on random functions --------------------------------


def _cycle(nodes: set[int], edges: list[tuple[int, int]]) -> bool:
    """Whether the graph of ``edges`` has a cycle (an iterative three-colour search)."""
    out: dict[int, list[int]] = {}
    for src, dst in edges:
        out.setdefault(src, []).append(dst)
    colour = dict.fromkeys(nodes, 0)
    for root in nodes:
        if colour[root]:
            continue
        stack = [(root, iter(out.get(root, ())))]
        colour[root] = 1
        while stack:
            node, successors = stack[-1]
            child = next(successors, None)
            if child is None:
                colour[node] = 2
                stack.pop()
            elif colour.get(child, 0) == 1:
                return True
            elif colour.get(child, 0) == 0:
                colour[child] = 1
                stack.append((child, iter(out.get(child, ()))))
    return False


def test_the_cycle_finder_of_these_tests_finds_cycles() -> None:
    assert _cycle({0, 1, 2}, [(0, 1), (1, 2), (2, 0)])
    assert _cycle({0}, [(0, 0)])
    assert not _cycle({0, 1, 2}, [(0, 1), (0, 2), (1, 2)])


@settings(max_examples=50, deadline=None)
@given(functions(max_depth=2))
def test_every_reachable_block_can_reach_exit_and_siteless_edges_form_no_cycle(
        source: str) -> None:
    tree = ast.parse(source)
    node = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "f")
    cfg = build_cfg(node, "f")
    back = set(cfg.backedges)
    # no backedge leaves the DAG with a cycle; edges without a site form none at all
    forward = [(e.src, e.dst) for i, e in enumerate(cfg.edges) if i not in back]
    blocks = {b.id for b in cfg.blocks}
    assert not _cycle(blocks, forward), source
    assert not _cycle(blocks, [(e.src, e.dst) for e in cfg.edges
                               if e.site.kind is SiteKind.NONE]), source
    # In the DAG, paths start at ENTRY, loop headers and restarts, and end at EXIT or
    # at a backedge's source: every block reached from a start reaches an end.
    starts = ({cfg.entry} | {cfg.edges[i].dst for i in back}
              | {r.block for r in cfg.restarts})
    ends = {cfg.exit} | {cfg.edges[i].src for i in back}
    out: dict[int, list[int]] = {}
    into: dict[int, list[int]] = {}
    for src, dst in forward:
        out.setdefault(src, []).append(dst)
        into.setdefault(dst, []).append(src)

    def closure(seeds: set[int], step: dict[int, list[int]]) -> set[int]:
        seen, todo = set(seeds), list(seeds)
        while todo:
            for nxt in step.get(todo.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen

    reached = closure(starts, out)
    assert reached <= closure(ends, into), source
    assert _paths(cfg) >= 1
