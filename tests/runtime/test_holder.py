"""pathprof.runtime.holder: a holder is a module object of pathprof's own whose
``_@pp_rt`` is the runtime it is given; :func:`bind` puts one holder wherever a code
object (or any code object among its constants, at any depth) held the placeholder,
and changes nothing else; :func:`names_of` finds the holder's names in bound code
and nothing in code that holds none."""

from __future__ import annotations

import sys
import types

from hypothesis import given, settings
from hypothesis import strategies as st

from pathprof.runtime import holder
from pathprof.runtime.holder import HOLDER_NAME, PLACEHOLDER, bind, names_of, new_holder

SOURCE = f"""\
def outer():
    def inner():
        value = {PLACEHOLDER!r}
        return value, "kept"
    return inner, {PLACEHOLDER!r}

def plain():
    return "the program's own string"

top = {PLACEHOLDER!r}
"""


def _codes(code: types.CodeType) -> dict[str, types.CodeType]:
    """Every code object in ``code`` by qualname (the module's as "<module>")."""
    found = {code.co_qualname: code}
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found.update(_codes(const))
    return found


def test_a_new_holder_is_a_module_no_import_names_that_reaches_the_runtime() -> None:
    runtime = types.ModuleType("some runtime")
    made = new_holder(runtime)
    assert type(made) is types.ModuleType
    assert made.__name__ == "pathprof's names of a measured module"
    assert made.__dict__["_@pp_rt"] is runtime
    assert all(module is not made for module in list(sys.modules.values()))
    assert new_holder(runtime) is not made  # each execution binds one of its own


def test_bound_code_reads_the_holder_where_the_placeholder_stood() -> None:
    made = new_holder(holder)
    module = bind(compile(SOURCE, "<holder-test>", "exec"), made)
    namespace: dict[str, object] = {}
    exec(module, namespace)
    assert namespace["top"] is made
    outer = namespace["outer"]
    assert callable(outer)
    inner, direct = outer()
    assert direct is made
    assert inner() == (made, "kept")
    assert namespace["plain"]() == "the program's own string"  # type: ignore[operator]


def test_bind_replaces_the_placeholder_alone_at_every_depth() -> None:
    made = new_holder(holder)
    unbound = compile(SOURCE, "<holder-test>", "exec")
    bound = bind(unbound, made)
    before, after = _codes(unbound), _codes(bound)
    assert sorted(before) == sorted(after) == ["<module>", "outer", "outer.<locals>.inner",
                                               "plain"]
    for name, code in before.items():
        for old, new in zip(code.co_consts, after[name].co_consts, strict=True):
            if isinstance(old, types.CodeType):
                assert new.co_qualname == old.co_qualname
            elif type(old) is str and old == PLACEHOLDER:
                assert new is made
            else:
                assert new == old
                assert type(new) is type(old)
        assert after[name].co_code == code.co_code
        assert after[name].co_names == code.co_names
    assert after["plain"] is before["plain"]  # nothing to replace: the same code


def test_code_without_the_placeholder_is_returned_as_it_is() -> None:
    code = compile("x = 'text'\ndef f():\n    return 'other'\n", "<plain>", "exec")
    assert bind(code, new_holder(holder)) is code


def test_a_tuple_of_codes_is_bound_part_by_part_with_one_holder() -> None:
    made = new_holder(holder)
    first = compile(f"a = {PLACEHOLDER!r}\n", "<one>", "exec")
    second = compile("b = 2\n", "<two>", "exec")
    bound = bind((first, second), made)
    assert isinstance(bound, tuple)
    assert len(bound) == 2
    assert bound[0].co_consts[0] is made
    assert bound[1] is second


def test_a_code_object_shared_by_two_parts_is_bound_once() -> None:
    made = new_holder(holder)
    shared = compile(f"v = {PLACEHOLDER!r}\n", "<shared>", "exec")
    outer = compile("w = 1\n", "<outer>", "exec").replace(co_consts=(shared, None))
    first, second = bind((outer, shared), made)
    assert first.co_consts[0] is second  # the part itself and the constant: one object
    assert second.co_consts[0] is made


def test_names_of_finds_a_bound_codes_holder_and_nothing_elsewhere() -> None:
    made = new_holder(holder)
    made.__dict__["_@pp_c0"] = [0, 0]
    code = compile(f"value = {PLACEHOLDER!r}\n", "<names>", "exec")
    names = names_of(bind(code, made))
    assert names is made.__dict__
    assert names["_@pp_c0"] == [0, 0]
    assert names_of(code) is None  # not bound
    assert names_of(compile("x = 1\n", "<plain>", "exec")) is None  # not instrumented
    assert names_of("not code") is None
    assert names_of(None) is None
    other = code.replace(co_consts=(types.ModuleType("some other module"), None))
    assert names_of(other) is None  # a module, but not a holder


def test_a_string_that_merely_resembles_the_placeholder_is_left_alone() -> None:
    near = [PLACEHOLDER[1:], PLACEHOLDER + " ", HOLDER_NAME, PLACEHOLDER.upper()]
    code = compile("\n".join(f"v{i} = {text!r}" for i, text in enumerate(near)) + "\n",
                   "<near>", "exec")
    assert bind(code, new_holder(holder)) is code


@settings(max_examples=50, deadline=None)
@given(st.recursive(st.lists(st.booleans(), max_size=4),
                    lambda inner: st.lists(st.one_of(st.booleans(), inner), max_size=4),
                    max_leaves=12))
def test_bound_nested_code_differs_only_where_the_placeholder_was(tree: list[object]
                                                                  ) -> None:
    """``tree``: a function's constants, True the placeholder, False another string, a
    list a nested function of its own."""
    counter = iter(range(1000))

    def source(items: list[object], indent: str) -> str:
        # (one assignment per constant: a tuple of constants would be one constant)
        lines = [f"{indent}def f{next(counter)}():", f"{indent}    pass"]
        for item in items:
            if isinstance(item, list):
                lines.append(source(item, indent + "    "))
            else:
                text = repr(PLACEHOLDER) if item else repr(f"s{next(counter)}")
                lines.append(f"{indent}    v{next(counter)} = {text}")
        return "\n".join(lines)

    unbound = compile(source(tree, "") + "\n", "<tree>", "exec")
    made = new_holder(holder)
    bound = bind(unbound, made)

    def compare(old: types.CodeType, new: types.CodeType) -> None:
        assert (new.co_code, new.co_names, new.co_varnames) == (
            old.co_code, old.co_names, old.co_varnames)
        assert len(new.co_consts) == len(old.co_consts)
        for a, b in zip(old.co_consts, new.co_consts, strict=True):
            if isinstance(a, types.CodeType):
                compare(a, b)
            elif type(a) is str and a == PLACEHOLDER:
                assert b is made
            else:
                assert b == a
                assert type(b) is type(a)

    compare(unbound, bound)

    def leaves(items: list[object]) -> int:
        """Functions holding the placeholder (a code object holds a constant once)."""
        return int(True in items) + sum(leaves(i) for i in items if isinstance(i, list))

    def holders(code: types.CodeType) -> int:
        return sum(holders(c) if isinstance(c, types.CodeType) else int(c is made)
                   for c in code.co_consts)

    assert holders(bound) == leaves([tree])
