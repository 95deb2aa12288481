"""Where a measured module keeps pathprof's names: one object its code holds as a
constant, not its globals (standard library only).

Instrumented code reads pathprof's names (the module's state ``_@pp_m``, the counter
tables ``_@pp_c<i>``, the switches ``_@pp_i<i>``...) as attributes of one *holder*, a
module object of pathprof's own that no ``sys.modules`` entry names. The front end
(:func:`pathprof.python.nodes.load`) compiles every read as ``<placeholder>.name``, the
placeholder being the string constant :data:`PLACEHOLDER`; :func:`bind` replaces that
constant in every code object of a compiled module by a fresh holder, so each read
is a ``LOAD_CONST`` and a ``LOAD_ATTR`` CPython specializes for a module, as fast as
the global load it replaces. The runtime sets and swaps the names in the holder's
``__dict__``, as it did in the module's globals.

So the program's globals hold nothing of pathprof's (``globals()``, ``dir()``,
``vars(module)`` and a loop deleting a module's private names see the program's
names only), a function's code run with other globals
(``types.FunctionType(f.__code__, {...})``) still finds its tables, and as the
interpreter shuts down and sets every module's globals to None the holder keeps its
names: code that runs then (a ``__del__``, a generator closed as it is collected)
counts into tables nobody reads any more, and behaves as written.

A cached module (:mod:`pathprof.measure.codecache`) keeps the placeholder, which
``marshal`` writes; each execution of a module binds a holder of its own.

Invariant: a bound code object, and every code object among its constants at any
depth, holds the same holder wherever the unbound one held :data:`PLACEHOLDER`, and
nothing else differs.
"""

from __future__ import annotations

import types
from typing import Any, TypeVar

__all__ = ["HOLDER_NAME", "PLACEHOLDER", "bind", "names_of", "new_holder"]

#: The constant instrumented code holds where :func:`bind` puts the holder. (Spelled
#: out in :mod:`pathprof.python.names` too: the runtime imports nothing of the front
#: end.) A program's own string constant could only equal it by holding a NUL and
#: this very text.
PLACEHOLDER = "\x00@pathprof: the module's names"
#: The name of every holder (``repr`` shows it).
HOLDER_NAME = "pathprof's names of a measured module"

_CodeType = types.CodeType
#: A module's code, or a tuple of code objects (a module's and its prologue's)
_Code = TypeVar("_Code", types.CodeType, tuple[types.CodeType, ...])
_ModuleType = types.ModuleType


def new_holder(runtime: types.ModuleType) -> types.ModuleType:
    """A holder whose ``_@pp_rt`` is ``runtime`` (this package, or its events runtime):
    what a module's prologue reaches the runtime through."""
    holder = types.ModuleType(HOLDER_NAME)
    holder.__dict__["_@pp_rt"] = runtime
    return holder


def bind(code: _Code, holder: types.ModuleType) -> _Code:
    """``code`` with :data:`PLACEHOLDER` replaced by ``holder`` in it and in every
    code object among its constants (a tuple of code objects: each of them)."""
    if isinstance(code, tuple):
        done: dict[int, types.CodeType] = {}
        return tuple(_bind(part, holder, done) for part in code)
    return _bind(code, holder, {})


def _bind(code: types.CodeType, holder: types.ModuleType, done: dict[int, types.CodeType]
          ) -> types.CodeType:
    known = done.get(id(code))
    if known is not None:
        return known
    consts = code.co_consts
    replaced: list[object] | None = None
    for i, const in enumerate(consts):
        kind = type(const)
        bound: object
        if kind is _CodeType:
            bound = _bind(const, holder, done)
            if bound is const:
                continue
        elif kind is str and const == PLACEHOLDER:
            bound = holder
        else:
            continue
        if replaced is None:
            replaced = list(consts)
        replaced[i] = bound
    result = code if replaced is None else code.replace(co_consts=tuple(replaced))
    done[id(code)] = result
    return result


def names_of(code: object) -> dict[str, Any] | None:
    """The names of the holder ``code`` (a bound code object) holds, or None for code
    that holds none (not instrumented, or not bound)."""
    # (Any: a namespace of mixed values -- the state, tables, switches -- read by name
    # by callers that know what each name holds: measure/inplace.py takes ``_@pp_m``
    # as the ModuleState it is; with object there, it would have to check)
    for const in getattr(code, "co_consts", ()):
        if type(const) is _ModuleType and const.__name__ == HOLDER_NAME:
            names: dict[str, Any] = const.__dict__
            return names
    return None
