"""Instrumented code reads pathprof's module names from its holder, never from the
module's globals (pathprof.runtime.holder): in every mode, no code object of an
instrumented module loads or stores a ``_@pp_*`` global, and the holder is the one
constant that stands where the placeholder stood."""

from __future__ import annotations

import ast
import types
from pathlib import Path

import pytest

from pathprof.python.instrument import instrument_source
from pathprof.python.names import GLOBAL_PREFIX, PLACEHOLDER
from pathprof.runtime import holder

from ..loading import all_codes, corpus_programs

MODES = {
    "path": {},
    "switches": {"switches": True},
    "conditions": {"switches": True, "conditions": True},
    "edge": {"mode": "edge"},
    "time": {"metric": "time"},
    "subpaths": {"subpaths": True},
    "events": {"mode": "events"},
    "outside": {"registers_outside": True},
}


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("path", corpus_programs(), ids=lambda p: p.stem)
def test_no_pathprof_name_is_a_global(path: Path, mode: str) -> None:
    module = instrument_source(path.read_bytes(), str(path), **MODES[mode])
    unbound = module.compile_unbound(str(path))
    for code in all_codes(unbound):
        own = sorted(n for n in _global_names(code) if n.startswith(GLOBAL_PREFIX))
        assert not own, (code.co_qualname, own)
    bound = module.compile(str(path))
    for code in all_codes(bound):
        assert PLACEHOLDER not in code.co_consts
    assert holder.names_of(bound) is not None


def _global_names(code: types.CodeType) -> set[str]:
    """The names ``code`` loads or stores as globals."""
    import dis

    return {i.argval for i in dis.get_instructions(code)
            if i.opname in ("LOAD_GLOBAL", "STORE_GLOBAL", "DELETE_GLOBAL", "LOAD_NAME",
                            "STORE_NAME", "DELETE_NAME")}


def test_a_read_of_the_holder_is_an_attribute_to_every_visitor() -> None:
    """The holder's reads are visited as the attributes they compile to: ``ast.unparse``
    writes the whole module (it wrote 48 characters when they were visited as unknown
    nodes), and a visitor's ``visit_Attribute`` sees every one."""
    source = "def f(x):\n    while x > 0:\n        x -= 1\n    return x\n"
    tree = instrument_source(source, "f.py").tree
    text = ast.unparse(tree)
    assert "while x > 0:" in text
    assert "x -= 1" in text
    seen: list[str] = []

    class Attributes(ast.NodeVisitor):
        def visit_Attribute(self, node: ast.Attribute) -> None:
            if isinstance(node.value, ast.Constant) and node.value.value == PLACEHOLDER:
                seen.append(node.attr)
            self.generic_visit(node)

    Attributes().visit(tree)
    reads = [node for node in ast.walk(tree) if isinstance(node, ast.Attribute)
             and isinstance(node.value, ast.Constant) and node.value.value == PLACEHOLDER]
    assert len(seen) == len(reads) > 0
    assert all(name.startswith(GLOBAL_PREFIX) for name in seen)
