"""What every kind of instrumented module keeps (:class:`InstrumentedModule`: its
contract, decoded on first use, and a block map per function's code), and what the
program sees of the names pathprof gives its functions: registers kept outside a
frame (:func:`registers`, :func:`assign`), and ``locals()``, ``vars()`` and ``dir()``
without pathprof's names (:func:`program_names`).

Invariant: nothing here raises into the program but what a signal handler raised
(:func:`pathprof.runtime.passthrough.must_pass`).
"""

from __future__ import annotations

import builtins
import sys
import weakref
from types import CodeType, ModuleType
from typing import Any, ClassVar, TypeVar

from pathprof.contract import ModuleInfo
from pathprof.runtime.blockmap import BlockMap
from pathprof.runtime.ownwork import own_work
from pathprof.runtime.passthrough import must_pass

__all__ = ["InstrumentedModule", "NamespaceRef", "assign", "outside_registers",
           "program_names", "registers"]

getframe = sys._getframe

_T = TypeVar("_T")


#: The prefix of the locals pathprof gives measured functions (as pytest's
#: assertion rewriting names its own ``@py_*``, which ``pytest -l`` leaves out).
LOCAL_PREFIX = "@pp_"


_namespace_views = (builtins.locals, builtins.vars)


def program_names(view: object, result: _T) -> _T:
    """See :meth:`InstrumentedModule.program_names`."""
    return InstrumentedModule.program_names(view, result)


#: (instrumented code calls these through its module's state; see InstrumentedModule)
outside_registers: dict[int, dict[str, object]] = {}


def registers() -> dict[str, object]:
    """The calling frame's registers (see :meth:`InstrumentedModule.registers`)."""
    key = id(getframe(1))
    table = outside_registers.get(key)
    if table is None:
        table = outside_registers[key] = {}
    return table


def assign(name: str, value: _T) -> _T:
    """``(name := value)`` for a register of the calling frame kept outside it."""
    registers_of = outside_registers
    key = id(getframe(1))
    table = registers_of.get(key)
    if table is None:
        table = registers_of[key] = {}
    table[name] = value
    return value


class _Sink(dict[Any, int]):  # (Any: a runtime expression, left as it is)
    """Counts that go nowhere: what the runtime hands instrumented code that runs
    while the interpreter shuts down, when it can no longer do its work."""

    def __missing__(self, key: object) -> int:
        return 0

    # (Any: a precise override of dict.pop's overloads would need @overload)
    def pop(self, key: object, default: Any = 0) -> Any:
        return dict.pop(self, key, default)


class NamespaceRef:
    """A module's globals, held no longer than the module is: a state that held them
    would keep ``__main__``'s alive after the interpreter has let go of the module
    as it shuts down, and objects in them would then never be finalized (a suspended
    generator never closed, a buffered file never flushed). Where no module in
    :data:`sys.modules` has these globals (code executed in a namespace of its own),
    the dict itself is held."""

    __slots__ = ("_dict", "_module")

    def __init__(self, name: object, namespace: dict[str, object]) -> None:
        module = sys.modules.get(name) if type(name) is str else None
        if module is not None and getattr(module, "__dict__", None) is namespace:
            self._module: weakref.ref[ModuleType] | None = weakref.ref(module)
            self._dict: dict[str, object] | None = None
        else:
            self._module = None
            self._dict = namespace

    def __call__(self) -> dict[str, object] | None:
        if self._module is None:
            return self._dict
        module = self._module()
        return None if module is None else module.__dict__


class InstrumentedModule:
    """What every kind of instrumented module keeps: its metadata (parsed on first
    use) and a :class:`~pathprof.runtime.blockmap.BlockMap` per function code object.

    Instrumented code reaches the runtime through its module's state alone (never
    through this module's globals, which the interpreter sets to None as it shuts
    down): the C functions it calls as an exception leaves are class attributes, and
    the methods it calls never raise into the program (at shutdown they do nothing).
    """

    __slots__ = ("_maps", "_meta", "filename", "key", "meta_json", "name")
    #: What instrumented code calls as an exception leaves a function: C functions only.
    exception = staticmethod(sys.exception)
    getframe = staticmethod(sys._getframe)
    getattr = staticmethod(builtins.getattr)
    #: What a generator's ``close()`` throws in: a generator's exit key says whether
    #: it was that (the generator's consumer stopped early), compared by identity.
    closed_type = GeneratorExit
    _sink = _Sink
    #: Per-frame registers of the functions whose source can reach their own frame
    #: (:mod:`pathprof.python.outside`), by ``id`` of the frame. A frame's entry is
    #: left for the next frame at that address: every register is written before it
    #: is read.
    _outside: ClassVar[dict[int, dict[str, object]]] = {}
    _namespace_views = (builtins.locals, builtins.vars)
    _dir = builtins.dir
    #: Whether an exception caught here is the program's (a signal handler's), to be
    #: raised on (:func:`pathprof.runtime.passthrough.must_pass`); a class attribute,
    #: there even as the interpreter shuts down.
    _passes = staticmethod(must_pass)

    @classmethod
    def program_names(cls, view: object, result: _T) -> _T:
        """``result`` of a call ``view()`` without arguments in a measured function,
        without pathprof's locals if ``view`` is the builtin ``locals``, ``vars`` or
        ``dir``. Instrumented code wraps every such call in this one, so the program
        sees its own names only (``Point(**locals())``, ``dir()``). A namespace is
        cleaned in place: ``locals()`` gives the frame's own dict on 3.11 and 3.12."""
        found: object = result
        try:
            if view in cls._namespace_views:
                if type(found) is dict:
                    for name in [n for n in found
                                 if type(n) is str and n.startswith("@pp_")]:
                        del found[name]
            elif view is cls._dir and type(found) is list:
                found[:] = [n for n in found
                            if not (type(n) is str and n.startswith("@pp_"))]
        except Exception as err:  # never into the program, but what is the program's
            if cls._passes(err):
                raise
        return result

    @classmethod
    def registers(cls) -> dict[str, object] | _Sink:
        """The calling frame's registers, kept outside it so that its ``f_locals``
        shows the program's names only."""
        try:
            key = id(cls.getframe(1))
            table = cls._outside.get(key)
            if table is None:
                table = cls._outside[key] = {}
            return table
        except Exception as err:  # never into the program, but what is the program's
            if cls._passes(err):
                raise
            return cls._sink()

    @classmethod
    def assign(cls, name: str, value: _T) -> _T:
        """``(name := value)`` for a register of the calling frame kept outside it."""
        try:
            key = id(cls.getframe(1))
            table = cls._outside.get(key)
            if table is None:
                table = cls._outside[key] = {}
            table[name] = value
        except Exception as err:  # never into the program, but what is the program's
            if cls._passes(err):
                raise
        return value
    name: str
    filename: str
    key: str
    meta_json: str
    _meta: ModuleInfo | None
    _maps: dict[int, BlockMap]

    def __init__(self, name: str, filename: str, key: str, meta_json: str) -> None:
        self.name = name
        self.filename = filename
        self.key = key
        self.meta_json = meta_json
        self._meta = None
        self._maps = {}

    @property
    def meta(self) -> ModuleInfo:
        """The module's contract (:mod:`pathprof.contract`), decoded when first asked for."""
        if self._meta is None:
            with own_work:  # json may be a measured module
                self._meta = ModuleInfo.decode(self.meta_json, guard=own_work)
        return self._meta

    def _blockmap(self, index: int, code: CodeType) -> BlockMap:
        blockmap = self._maps.get(index)
        if blockmap is None or blockmap.code is not code:
            blockmap = self._maps[index] = BlockMap(self.meta.functions[index], code)
        return blockmap


InstrumentedModule._outside = outside_registers
