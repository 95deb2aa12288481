"""Sending a function back to the code Python compiles (standard library only).

Coverage that stops paying (:mod:`pathprof.measure.stopping`) sends a function back
once its paths have told all. A function instrumented with no copy of its body
(:func:`pathprof.python.switches.can_swap`) goes back by getting, as its
``__code__``, the code Python compiles from the source: compiled beside the
instrumented code and kept marshalled with it in pathprof's cache
(:func:`register_original`), else compiled when the first function of its module goes
back. Its calls from then on run exactly what they run without pathprof, at no cost;
no second body is instrumented.
(A module another tool rewrites, as pytest does test modules, runs code that is not
Python's compile of its source: its functions carry their original body instead.)

The function objects are found from the module's globals by qualified name: a
module-level function or a method of a class (a private one by its mangled name),
through ``staticmethod``, ``classmethod``, ``property`` (and its subclasses),
``functools.cached_property`` and the ``__wrapped__`` of a ``functools.wraps`` or
``lru_cache`` wrapper. Attributes are read from ``__dict__`` or as ``property``
keeps them, so no code of the program runs. A function not found so (a closure a
decorator keeps without ``functools.wraps``) is looked for among the function
objects of its module (those that refer to its globals), in a search made now and
then, at most one fiftieth of the program's time (:func:`_search_now_and_then`).

A function is swapped only when all of these hold: its code is the instrumented
code of this module state's function (qualified name, first line, file, globals, and
a name of pathprof's among the names it reads), no later execution of the module's
code has registered another state in the same globals, the code Python compiles is
at hand for the measured source (kept with the instrumented code, or compiled from
the file if it still has the measured source's hash), and it has a function of the
same qualified name and first line, alone there, with the same free variables (so
the closure cells fit).

Invariant: a function object's ``__code__`` changes only from this state's
instrumented code to Python's code of the same function compiled from the
measured source, and back when a new measurement starts
(:meth:`pathprof.runtime.switching.Switching.rearm`); a state counts as sent back
(``state.switching.sent_back``) only when at least one of its function objects was swapped.
A function that cannot be found or checked keeps counting: its counts stay exact.
"""

from __future__ import annotations

import functools
import gc
import itertools
import marshal
import time
import types
import warnings
import weakref
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from pathprof import runtime
from pathprof.hashing import source_hash
from pathprof.runtime.passthrough import must_pass

if TYPE_CHECKING:
    from pathprof.runtime import ModuleState
    from pathprof.runtime.switching import Switching

__all__ = ["register_original", "send_back"]

#: (file, source hash) -> its module's code as Python compiles it, marshalled: made
#: (or read from pathprof's cache) when it was instrumented, unmarshalled at its
#: first swap (:func:`register_original`)
_originals: dict[tuple[str, str], bytes] = {}
#: (file, source hash) -> its module's code once unmarshalled or compiled, until its
#: functions are found (:func:`_module_code`)
_module_codes: dict[tuple[str, str], list[types.CodeType]] = {}
#: how deep a chain of ``__wrapped__`` is followed
_WRAPPED_DEPTH = 8
_LRU_WRAPPER = ("functools", "_lru_cache_wrapper")
#: a property's accessors, read as ``property`` itself keeps them (a subclass's own
#: attributes are not looked up: no code of the program runs)
_FGET: Callable[[property], object] = property.__dict__["fget"].__get__
_FSET: Callable[[property], object] = property.__dict__["fset"].__get__
_FDEL: Callable[[property], object] = property.__dict__["fdel"].__get__


def register_original(filename: str, digest: str, marshalled: bytes) -> None:
    """``marshalled`` is the module at ``filename`` whose source has the hash
    ``digest`` as Python compiles it, marshalled by pathprof (the import hook, from the
    source it instrumented; or its cache, checked as an entry is): what its functions
    go back to, without reading or compiling the file again."""
    _originals[(filename, digest)] = marshalled


def send_back(state: ModuleState, index: int) -> bool:
    """Give function ``index`` of ``state``'s module the code Python compiles;
    whether any function object got it (``state.switching.sent_back`` then holds
    ``index``).
    One not found by name waits for the next search of all objects
    (:func:`_search_now_and_then`)."""
    meta = state.meta.functions[index]
    namespace = state.namespace
    if namespace is None:
        return False
    swapped = False
    for function in _functions_named(namespace, meta.qualname):
        swapped = _swap(state, index, function, namespace) or swapped
    if swapped:
        _switching(state).sent_back.add(index)
    else:
        _pending[(id(namespace), meta.qualname, meta.code_line)] = (state, index)
    _search_now_and_then()
    return swapped


def _switching(state: ModuleState) -> Switching:
    """The module's stop-counting switches: only a module that has them sends a
    function back."""
    switching = state.switching
    assert switching is not None, f"{state.filename}: no function can stop counting"
    return switching


def _swap(state: ModuleState, index: int, function: types.FunctionType,
          namespace: dict[str, object]) -> bool:
    """Give ``function`` Python's code if it is function ``index`` of ``state`` as
    instrumented (see the module's docstring for the checks)."""
    meta = state.meta.functions[index]
    code = function.__code__
    if (code.co_qualname != meta.qualname or code.co_firstlineno != meta.code_line
            or function.__globals__ is not namespace or not _measured(code)
            or not _latest(state, namespace)):
        return False
    original = _original(state, code)
    if original is None or original.co_freevars != code.co_freevars:
        return False
    function.__code__ = original
    _switching(state).swapped.append((weakref.ref(function), code, original))
    return True


#: functions whose objects their module's globals do not hold by name (a closure a
#: decorator keeps, a property subclass's getter): (id of the globals, qualified
#: name, first line) -> (state, index), for the next search of all objects
_pending: dict[tuple[int, str, int], tuple[ModuleState, int]] = {}
#: a search runs once the time since the last one is this many times what that cost,
#: so searching takes at most 1/SEARCH_SPACING of the program's time
SEARCH_SPACING = 50
_searched = {"at": -float("inf"), "cost": 0.0}


def _search_now_and_then() -> None:
    """Search the function objects of the modules whose functions are pending (every
    function refers to its globals: :func:`gc.get_referrers` finds them in one pass
    over what the collector tracks, in C), unless the last search was too recent for
    its cost; each pending function is searched for once (a function made later
    keeps counting, exactly)."""
    now = time.perf_counter()
    if not _pending or now - _searched["at"] < SEARCH_SPACING * _searched["cost"]:
        return
    pending = dict(_pending)
    _pending.clear()
    namespaces = {id(state.namespace): state.namespace for state, _ in pending.values()
                  if state.namespace is not None}
    function_type = types.FunctionType
    for obj in gc.get_referrers(*namespaces.values()):
        if type(obj) is not function_type:
            continue
        code = obj.__code__
        entry = pending.get((id(obj.__globals__), code.co_qualname, code.co_firstlineno))
        if entry is not None:
            state, index = entry
            namespace = state.namespace
            if namespace is not None and _swap(state, index, obj, namespace):
                _switching(state).sent_back.add(index)
    end = time.perf_counter()
    _searched["at"], _searched["cost"] = end, end - now


def _latest(state: ModuleState, namespace: dict[str, object]) -> bool:
    """Whether ``state`` is the last state registered in ``namespace``: code executed
    again in the same globals made functions another state counts for."""
    for other in reversed(runtime.modules()):
        if other is state:
            return True
        if other.namespace is namespace:
            return False
    return False


def _measured(code: types.CodeType) -> bool:
    """Whether ``code`` reads a name of pathprof's (its counter table, its holder):
    instrumented code does; no code the program compiles can (``@`` is no
    identifier's)."""
    return any("@pp" in name for name in code.co_names)


def _functions_named(namespace: dict[str, object], qualname: str
                     ) -> Iterator[types.FunctionType]:
    """The function objects the module's globals hold under ``qualname``."""
    parts = qualname.split(".")
    if "<locals>" in parts:
        return
    found = namespace.get(parts[0])
    for owner, part in itertools.pairwise(parts):
        if not isinstance(found, type):
            return
        found = type.__dict__["__dict__"].__get__(found).get(_mangled(owner, part))
    yield from _functions_in(found, _WRAPPED_DEPTH)


def _mangled(owner: str, name: str) -> str:
    """The key a class body's ``name`` has in the class's namespace: a private name
    (``__x``, not ``__x__``) is stored as ``_Owner__x`` (the class's name without
    its leading underscores; none if it is all underscores)."""
    stripped = owner.lstrip("_")
    if name.startswith("__") and not name.endswith("__") and stripped:
        return f"_{stripped}{name}"
    return name


def _functions_in(found: Any, depth: int) -> Iterator[types.FunctionType]:
    # (Any: whatever a namespace holds, told apart by its type kept in ``kind``, which
    # mypy does not narrow ``found`` on)
    kind = type(found)
    if kind is types.FunctionType:
        yield found
        wrapped = found.__dict__.get("__wrapped__")
    elif kind is staticmethod or kind is classmethod:
        wrapped = found.__func__
    elif isinstance(found, property):  # (a subclass too: werkzeug's cached_property)
        for accessor in (_FGET(found), _FSET(found), _FDEL(found)):
            yield from _functions_in(accessor, depth)
        return
    elif kind is functools.cached_property:
        wrapped = object.__getattribute__(found, "__dict__").get("func")
    elif (kind.__module__, kind.__qualname__) == _LRU_WRAPPER:
        wrapped = found.__dict__.get("__wrapped__")
    else:
        return
    if wrapped is not None and depth > 0:
        yield from _functions_in(wrapped, depth - 1)


def _original(state: ModuleState, code: types.CodeType) -> types.CodeType | None:
    """Python's code of the function whose instrumented code is ``code``: compiled
    once per module state, from the source on disk if its hash is the measured one."""
    switching = _switching(state)
    originals = switching.originals
    if originals is None:
        originals = switching.originals = _compile_originals(state, code.co_filename)
    return originals.get((code.co_qualname, code.co_firstlineno))


def _compile_originals(state: ModuleState, name: str) -> dict[tuple[str, int], types.CodeType]:
    """(qualified name, first line) -> code, for each function of the module as
    Python compiles it, those two alike left out; empty where the source on disk is not
    the one measured or does not compile. Compile-time warnings were shown at import:
    none is shown again."""
    key = (state.filename, state.meta.source_hash)
    try:
        module = _module_code(key, name)
    except Exception as err:
        if must_pass(err):  # (a signal handler's: the program's)
            raise
        module = None
    _originals.pop(key, None)
    _module_codes.pop(key, None)
    if not isinstance(module, types.CodeType) or module.co_filename != name:
        return {}
    found: dict[tuple[str, int], types.CodeType] = {}
    twice: set[tuple[str, int]] = set()
    pending = [module]
    while pending:
        for const in pending.pop().co_consts:
            if isinstance(const, types.CodeType):
                location = (const.co_qualname, const.co_firstlineno)
                if location in found:
                    twice.add(location)
                found[location] = const
                pending.append(const)
    for location in twice:
        del found[location]
    return found


def _module_code(key: tuple[str, str], name: str) -> object:
    """The module's code as Python compiles it (None where the source on disk is not
    the one measured), unmarshalled from what :func:`register_original` was given or
    compiled from the file. A signal handler may raise (a ``Timeout`` the program's
    alarm raises) whenever bytecode runs, as soon as the C call that made the code
    returns, and a compile of a large module takes longer than a busy alarm's
    period: so the code is stored, by C (``list.extend`` of a ``map``), before any
    bytecode runs, and the next try starts from it (before, each try compiled the
    module again and lost it again: a program with a 0.5 ms alarm spent 99% of its
    time there, measured)."""
    kept = _module_codes.setdefault(key, [])
    if not kept:
        marshalled = _originals.get(key)
        if marshalled is not None:
            kept.extend(map(marshal.loads, (marshalled,)))
        else:
            with open(key[0], "rb") as f:
                source = f.read()
            if source_hash(source) != key[1]:
                return None
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                kept.extend(map(compile, (source,), (name,), ("exec",), (0,), (True,)))
    return kept[0]
