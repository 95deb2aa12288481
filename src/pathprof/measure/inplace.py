"""Measure modules that were imported before measuring started.

The interpreter imports ``fnmatch`` and ``os`` at start-up, pathprof's own
imports load ``json`` and ``ast``, and a program may import its
package before it calls :meth:`Profiler.start`: the import hook never sees
those modules. They are instrumented in place instead:

1. the module's source is instrumented and compiled as for an import, and the
   statements pathprof puts at the top of a module (its prologue: register the
   module with :mod:`pathprof.runtime`, bind the counter tables to names) run
   alone in the module's existing namespace — the module's own code does not run
   again;
2. every function object of the module (found through :func:`gc.get_objects`, so
   methods, static and class methods, properties, decorated functions and
   closures made before are all found) whose code is the code its source
   compiles to gets the instrumented code of the same qualified name and first
   line. The function keeps its globals, defaults and closure cells, so from
   that moment on it counts exactly as if it had been imported while measuring.

What cannot be switched is said by name, once: a call already in progress (a
running frame, a suspended generator or coroutine) goes on in the old code and
is not measured; a function whose code is not what its file compiles to (the
file changed since the import, or something replaced the code) is not measured
and not reported as "never run".

Modules of the standard library and of site-packages may be ones pathprof
itself uses: they are shared with :data:`pathprof.runtime.own_work`, so that
pathprof's own calls into them are not counted as the program's.
"""

from __future__ import annotations

import gc
import os
import sys
import types
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pathprof import runtime
from pathprof.measure.importhook import InstrumentOptions, instrumented_in_place
from pathprof.python.names import MODULE
from pathprof.runtime import holder
from pathprof.runtime.passthrough import must_pass

if TYPE_CHECKING:
    from pathprof.runtime import ModuleState

__all__ = ["InPlaceReport", "instrument_imported"]

_PATHPROF_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_SUSPENDED = {types.GeneratorType: "gi_frame", types.CoroutineType: "cr_frame",
              types.AsyncGeneratorType: "ag_frame"}


@dataclass
class InPlaceReport:
    """What :func:`instrument_imported` did."""

    modules: list[str] = field(default_factory=list)  #: measured from now on
    switched: int = 0  #: function objects given instrumented code
    #: calls in progress that go on unmeasured: "module.qualname"
    running: list[str] = field(default_factory=list)
    #: module -> its functions whose code is not what the file compiles to
    stale: dict[str, list[str]] = field(default_factory=dict)
    #: modules still being imported: what they define from now on is not measured
    importing: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)  #: (module, why)

    def messages(self) -> Iterator[str]:
        """One line each for the user (see :func:`pathprof.messages.warn`)."""
        if self.running:
            yield ("already running when measuring started, so these calls are not "
                   f"measured (later calls are): {_listing(self.running)}")
        for module, names in sorted(self.stale.items()):
            yield (f"{module} changed since it was imported (its code is not what its "
                   f"file compiles to), so these are not measured: {_listing(names)}")
        for module in dict.fromkeys(self.importing):
            yield (f"{module} was still being imported when measuring started: the "
                   "functions it defines from then on are not measured")
        for module, why in self.failed:
            yield f"could not measure {module}, imported before measuring started ({why})"


def _listing(names: Sequence[str], most: int = 5) -> str:
    names = sorted(dict.fromkeys(names))
    more = len(names) - most
    return ", ".join(names[:most]) + (f" and {more} more" if more > 0 else "")


@dataclass
class _Target:
    """One instrumented function of a module being switched."""

    module: str
    namespace: dict[str, object]
    plain: types.CodeType  #: what the source compiles to: the code to replace
    instrumented: types.CodeType
    state: ModuleState
    index: int


def _codes(code: types.CodeType) -> Iterator[types.CodeType]:
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield const
            yield from _codes(const)


def _by_location(code: types.CodeType) -> dict[tuple[str, int], types.CodeType]:
    return {(c.co_qualname, c.co_firstlineno): c for c in _codes(code)}


@dataclass
class _Module:
    name: str
    namespace: dict[str, object]
    targets: dict[tuple[str, int], _Target]  #: by (qualified name, first line)
    known: set[tuple[str, int]]  #: where the source has code (functions, lambdas, ...)
    switched: set[tuple[str, int]] = field(default_factory=set)


def _prepare(name: str, module: types.ModuleType, options: InstrumentOptions,
             shared: Callable[[str], bool], stats: dict[str, int] | None) -> _Module:
    """Register ``module`` with the runtime and pair each of its instrumented
    functions with the code it replaces; raises what reading or compiling raises."""
    filename = module.__file__
    assert filename is not None
    with open(filename, "rb") as f:
        source = f.read()
    # Python showed the module's compile-time warnings when it first imported it.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain = compile(source, filename, "exec", dont_inherit=True)
    module_code, prologue = instrumented_in_place(source, filename, options, stats,
                                                  show_warnings=False)
    namespace = module.__dict__
    exec(prologue, namespace)
    names = holder.names_of(prologue)
    assert names is not None
    state = names[MODULE]
    if shared(filename):
        runtime.share(state)
    plain_codes = _by_location(plain)
    new_codes = _by_location(module_code)
    targets = {}
    for index, meta in enumerate(state.meta.functions):
        location = (meta.qualname, meta.code_line)
        if location in plain_codes and location in new_codes:
            targets[location] = _Target(name, namespace, plain_codes[location],
                                        new_codes[location], state, index)
    return _Module(name, namespace, targets, set(plain_codes))


def instrument_imported(modules: Sequence[tuple[str, types.ModuleType]],
                        options: InstrumentOptions, shared: Callable[[str], bool],
                        stats: dict[str, int] | None = None) -> InPlaceReport:
    """Instrument ``modules`` (``(name, module)``, already imported) in place.

    ``shared(filename)`` says whether pathprof itself may use the module (see
    :data:`pathprof.runtime.own_work`). Modules of pathprof itself and modules
    without a ``.py`` source are left alone."""
    report = InPlaceReport()
    by_file: dict[str, _Module] = {}
    seen: set[int] = set(runtime.measured_namespaces())
    for name, module in modules:
        filename = getattr(module, "__file__", None)
        if (id(module) in seen or id(module.__dict__) in seen
                or not isinstance(filename, str) or not filename.endswith(".py")
                or os.path.abspath(filename).startswith(_PATHPROF_DIR + os.sep)):
            continue
        seen.add(id(module))
        try:
            prepared = _prepare(name, module, options, shared, stats)
        except Exception as err:  # bad source, or a pathprof bug: must not break the program
            if must_pass(err):  # (but a signal handler's exception is the program's)
                raise
            report.failed.append((name, f"{type(err).__name__}: {err}"))
            continue
        report.modules.append(name)
        by_file[filename] = prepared
        by_file[f"<frozen {module.__name__}>"] = prepared  # frozen at start-up
    if by_file:
        _switch(by_file, report)
    return report


def _switch(by_file: dict[str, _Module], report: InPlaceReport) -> None:
    """Give every function of the modules its instrumented code; note what cannot be."""
    suspended: list[types.FrameType] = []
    for obj in gc.get_objects():
        kind = type(obj)
        if kind is types.FunctionType:
            code = obj.__code__
            module = by_file.get(code.co_filename)
            if module is None or obj.__globals__ is not module.namespace:
                continue
            location = (code.co_qualname, code.co_firstlineno)
            target = module.targets.get(location)
            if target is not None and code is target.instrumented:
                continue
            if location not in module.known or (target is not None and (
                    not _same_code(code, target.plain)
                    or code.co_freevars != target.instrumented.co_freevars)):
                report.stale.setdefault(module.name, []).append(code.co_qualname)
            elif target is not None:
                obj.__code__ = target.instrumented
                module.switched.add(location)
                report.switched += 1
        elif kind in _SUSPENDED:
            frame = getattr(obj, _SUSPENDED[kind])
            if frame is not None:
                suspended.append(frame)
    for module in {id(m): m for m in by_file.values()}.values():
        if module.name in report.stale:
            # The file is not what was imported: what was not switched counts nothing.
            for location, target in module.targets.items():
                if location not in module.switched:
                    target.state.unmeasured.add(target.index)
    for frame in [*suspended, *_running_frames()]:
        code = frame.f_code
        module = by_file.get(code.co_filename)
        if module is None or frame.f_globals is not module.namespace:
            continue
        if code.co_name == "<module>":
            report.importing.append(module.name)
            continue
        target = module.targets.get((code.co_qualname, code.co_firstlineno))
        if target is not None and code is not target.instrumented:
            report.running.append(f"{module.name}.{code.co_qualname}")


def _same_code(running: types.CodeType, compiled: types.CodeType) -> bool:
    """Whether ``running`` is what ``compiled`` (compiled from the file now) is.

    Equal code objects are; so is code frozen into the interpreter from the same
    file, whose constant frozensets were frozen as tuples and whose filename is
    ``<frozen name>``. Line tables are not compared: the instrumented code takes
    its lines from the file as it is now."""
    if running == compiled:
        return True
    return (running.co_code == compiled.co_code and running.co_names == compiled.co_names
            and running.co_varnames == compiled.co_varnames
            and running.co_freevars == compiled.co_freevars
            and running.co_cellvars == compiled.co_cellvars
            and running.co_flags == compiled.co_flags
            and len(running.co_consts) == len(compiled.co_consts)
            and all(_same_constant(a, b)
                    for a, b in zip(running.co_consts, compiled.co_consts, strict=True)))


def _same_constant(running: object, compiled: object) -> bool:
    if isinstance(running, types.CodeType) and isinstance(compiled, types.CodeType):
        return _same_code(running, compiled)
    if isinstance(compiled, frozenset) and isinstance(running, tuple | frozenset):
        return frozenset(running) == compiled
    return type(running) is type(compiled) and running == compiled


def _running_frames() -> Iterator[types.FrameType]:
    for top in sys._current_frames().values():
        frame: types.FrameType | None = top
        while frame is not None:
            yield frame
            frame = frame.f_back
