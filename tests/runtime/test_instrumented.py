"""pathprof.runtime.instrumented: what the program sees of pathprof's names
(``program_names`` takes the ``@pp_`` locals out of what ``locals()``, ``vars()`` and
``dir()`` gave, in place, and nothing else), the registers kept outside a frame (one
table per frame, ``assign`` as a walrus), a module's globals held no longer than the
module (:class:`NamespaceRef`), and what :class:`InstrumentedModule` keeps: its
contract decoded once, on first use, and a block map per function code. Nothing here
raises into the program but what passes (a ``KeyboardInterrupt``)."""

from __future__ import annotations

import builtins
import sys
import types
from collections.abc import Iterator

import pytest

from pathprof.python.instrument import instrument_source
from pathprof.runtime import instrumented
from pathprof.runtime.instrumented import (
    InstrumentedModule,
    NamespaceRef,
    assign,
    outside_registers,
    program_names,
    registers,
)
from pathprof.runtime.ownwork import own_work

SOURCE = "def f(x):\n    if x:\n        return 1\n    return 2\n\n\ndef g():\n    return 3\n"


@pytest.fixture
def registers_kept() -> Iterator[None]:
    """The frames' registers as they were: the tables a test made are taken out."""
    before = set(outside_registers)
    yield
    for key in set(outside_registers) - before:
        del outside_registers[key]


def test_locals_and_vars_lose_pathprofs_names_in_place() -> None:
    for view in (builtins.locals, builtins.vars):
        namespace: dict[object, object] = {"x": 1, "@pp_r": 7, "@pp_s": 0, "pp_x": 2,
                                           "_@pp_c0": 3, 5: "five"}
        assert program_names(view, namespace) is namespace
        assert namespace == {"x": 1, "pp_x": 2, "_@pp_c0": 3, 5: "five"}


def test_dir_loses_pathprofs_names_in_place() -> None:
    names: list[object] = ["@pp_r", "a", "@pp_t0", "b", 3, "x@pp_"]
    assert InstrumentedModule.program_names(builtins.dir, names) is names
    assert names == ["a", "b", 3, "x@pp_"]


def test_other_calls_and_other_results_are_left_as_they_are() -> None:
    namespace = {"@pp_r": 1}
    assert program_names(builtins.globals, namespace) is namespace
    assert namespace == {"@pp_r": 1}
    names = ["@pp_r"]
    assert program_names(builtins.locals, names) is names  # locals() gave no dict
    assert program_names(builtins.vars, names) == ["@pp_r"]

    class Mapping(dict[str, int]):
        pass

    mapping = Mapping({"@pp_r": 1})  # not a dict the interpreter made
    assert program_names(builtins.locals, mapping) == {"@pp_r": 1}
    view = {"@pp_r": 1}.keys()
    assert program_names(builtins.dir, view) is view
    assert program_names(builtins.dir, ("@pp_r",)) == ("@pp_r",)


class _Uncomparable:
    """A callable whose comparison fails (``view in ...`` compares it), with ``error``."""

    def __init__(self, error: BaseException) -> None:
        self.error = error

    def __eq__(self, other: object) -> bool:
        raise self.error

    __hash__ = object.__hash__


def test_a_failure_of_pathprofs_own_is_kept_from_the_program() -> None:
    result = {"@pp_r": 1}
    assert program_names(_Uncomparable(ValueError("boom")), result) is result
    assert result == {"@pp_r": 1}


def test_what_a_signal_handler_raised_goes_on_to_the_program() -> None:
    with pytest.raises(KeyboardInterrupt):
        program_names(_Uncomparable(KeyboardInterrupt()), {})


def test_each_frame_has_one_table_of_registers(registers_kept: None) -> None:
    def frame() -> tuple[dict[str, object], dict[str, object], int]:
        first = registers()
        assert assign("@pp_r", 41) == 41
        second = InstrumentedModule.registers()
        assert InstrumentedModule.assign("@pp_s", "started") == "started"
        return first, second, id(sys._getframe())

    first, second, key = frame()
    assert first is second
    assert first == {"@pp_r": 41, "@pp_s": "started"}
    assert outside_registers[key] is first
    mine = registers()
    assert mine is not first
    assert mine == {}
    assert outside_registers[id(sys._getframe())] is mine
    assert InstrumentedModule._outside is outside_registers


def test_a_register_written_by_assign_first_makes_its_frames_table(
        registers_kept: None) -> None:
    def frame() -> dict[str, object]:
        assign("@pp_r", 3)
        return outside_registers[id(sys._getframe())]

    assert frame() == {"@pp_r": 3}


def test_registers_that_cannot_be_kept_go_to_a_sink_and_raise_nothing() -> None:
    def gone(depth: int) -> types.FrameType:
        raise RuntimeError("the interpreter is shutting down")

    class ShuttingDown(InstrumentedModule):
        __slots__ = ()
        getframe = staticmethod(gone)

    sink = ShuttingDown.registers()
    assert type(sink) is InstrumentedModule._sink
    sink["@pp_r"] += 5  # what instrumented code does with it
    assert sink["never written"] == 0
    assert sink.pop("@pp_r") == 5
    assert sink.pop("absent") == 0
    assert ShuttingDown.assign("@pp_r", 9) == 9


def test_a_signal_handlers_exception_in_registers_goes_on_to_the_program() -> None:
    def interrupted(depth: int) -> types.FrameType:
        raise KeyboardInterrupt

    class Interrupted(InstrumentedModule):
        __slots__ = ()
        getframe = staticmethod(interrupted)

    with pytest.raises(KeyboardInterrupt):
        Interrupted.registers()
    with pytest.raises(KeyboardInterrupt):
        Interrupted.assign("@pp_r", 1)


# (sys.modules by hand, not monkeypatch, which would hold the module to put it back)
def test_a_modules_globals_are_held_no_longer_than_the_module() -> None:
    name = "pathprof_test_namespace_ref"
    module = types.ModuleType(name)
    sys.modules[name] = module
    try:
        ref = NamespaceRef(name, module.__dict__)
        assert ref() is module.__dict__
    finally:
        del sys.modules[name]
    assert ref() is module.__dict__  # the program still holds the module
    del module
    assert ref() is None


def test_globals_no_module_holds_are_held_themselves() -> None:
    own: dict[str, object] = {"__name__": "__main__"}
    assert NamespaceRef("pathprof_test_not_imported", own)() is own
    assert NamespaceRef(None, own)() is own  # a name that is not a string
    name = "pathprof_test_other_globals"
    module = types.ModuleType(name)
    sys.modules[name] = module
    other: dict[str, object] = {}
    try:
        ref = NamespaceRef(name, other)  # the module has globals of its own
    finally:
        del sys.modules[name]
    del module
    assert ref() is other


def _module() -> tuple[InstrumentedModule, types.CodeType, types.CodeType]:
    built = instrument_source(SOURCE, "/instrumented/example.py", module_key="example:1")
    code = compile(SOURCE, "/instrumented/example.py", "exec")
    f, g = (c for c in code.co_consts if isinstance(c, types.CodeType))
    kept = InstrumentedModule("example", "/instrumented/example.py", "example:1",
                              built.metadata.encode())
    return kept, f, g


def test_the_contract_is_decoded_once_on_first_use() -> None:
    kept, _f, _g = _module()
    assert (kept.name, kept.filename, kept.key) == ("example", "/instrumented/example.py",
                                                    "example:1")
    assert kept._meta is None  # nothing decoded yet
    meta = kept.meta
    assert [f.qualname for f in meta.functions] == ["f", "g"]
    assert (meta.functions[0].first_line, meta.functions[1].first_line) == (1, 7)
    assert meta.file == "/instrumented/example.py"
    assert kept.meta is meta
    assert not own_work.active  # the decoding's own work is over


def test_a_block_map_is_made_once_per_function_code() -> None:
    kept, f, g = _module()
    first = kept._blockmap(0, f)
    assert first.code is f
    assert first.blocks == kept.meta.functions[0].blocks
    assert kept._blockmap(0, f) is first
    other = kept._blockmap(1, g)
    assert other.blocks == kept.meta.functions[1].blocks
    again = compile(SOURCE, "/instrumented/example.py", "exec").co_consts[0]
    assert isinstance(again, types.CodeType)
    assert again is not f
    renewed = kept._blockmap(0, again)  # the function was given other code
    assert renewed is not first
    assert renewed.code is again
    assert kept._blockmap(0, again) is renewed


def test_the_names_instrumented_code_calls_as_an_exception_leaves_are_c_functions() -> None:
    assert InstrumentedModule.exception is sys.exception
    assert InstrumentedModule.getframe is sys._getframe
    assert InstrumentedModule.getattr is builtins.getattr
    assert InstrumentedModule.closed_type is GeneratorExit
    assert instrumented.LOCAL_PREFIX == "@pp_"
