"""The import hook: selected modules are instrumented as they are imported.

A finder at the front of :data:`sys.meta_path` asks the other finders for the
module's spec; when the module is a source file the :class:`Selection` wants, it
swaps in :class:`InstrumentingLoader`, a :class:`~importlib.machinery.SourceFileLoader`
whose ``get_code`` returns instrumented code. Everything else about importing
(packages, ``__file__``, ``__spec__``, namespace packages, zip imports) stays the
standard machinery's.

Instrumented code is cached, keyed on the source's SHA-256, the file's path, the
interpreter's cache tag, pathprof's version and the instrumentation options, so a
second run does no analysis: in ``__pycache__`` beside the normal ``.pyc`` where
Python writes bytecode and no cache directory is configured, else in pathprof's own
cache directory (:mod:`pathprof.measure.codecache` has the rule, the entries and
their atomic writes).

Source that does not parse is handed to the standard loader, so the import fails
exactly as it would without pathprof. Should pathprof itself fail on a module,
the module runs uninstrumented and a warning says so: the program is never broken
by its profiler.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import marshal
import os
import sys
import types
import warnings
from collections.abc import Callable, Container, Sequence
from dataclasses import dataclass, field
from types import CodeType
from typing import TYPE_CHECKING, TypedDict, TypeGuard

from pathprof import config, runtime
from pathprof.measure import codecache, goback
from pathprof.messages import warn
from pathprof.python.selection import Selection
from pathprof.runtime import holder
from pathprof.runtime.passthrough import must_pass

if TYPE_CHECKING:
    import ast

    # (the class typeshed declares SourceFileLoader.get_code on, which _get_code replaces)
    from importlib._bootstrap_external import SourceLoader as _SourceLoader
    from importlib.machinery import ModuleSpec

    from _typeshed import StrOrBytesPath

    from pathprof.measure.partial import CopyPlan

    #: What the cache keeps of a module (:func:`_compile_instrumented`): its code, with
    #: its functions' originals marshalled, or (in place) its code and its prologue's.
    Unbound = CodeType | tuple[CodeType, bytes] | tuple[CodeType, CodeType]
    #: What runs: a module's code, or (in place) its code and its prologue's.
    Bound = CodeType | tuple[CodeType, ...]

    class _Wrapped(TypedDict, total=False):
        """What :func:`_wrap_direct_loads` wrapped: ``SourceFileLoader.get_code``
        (True), and ``runpy._get_code_from_file``'s original."""

        loader: bool
        runpy: Callable[..., CodeType | tuple[CodeType, StrOrBytesPath]]

__all__ = ["ImportHook", "InstrumentOptions", "InstrumentingLoader", "WarmResult",
           "compile_instrumented", "warm_cache"]


@dataclass(frozen=True)
class InstrumentOptions:
    """What kind of instrumentation to apply."""

    mode: str = "path"  #: "path" (Ball-Larus) or "edge" (chord counters, branch counts)
    metric: str | None = None  #: None or "time" (wall time per path)
    cache: bool = True
    #: mode "events": what an event is ("statements" or "instructions")
    events: str = "statements"
    #: mode "events": "tree" (chords of a spanning tree), or a baseline the benchmarks
    #: compare with: "blocks" (an add on every edge), "statements" (one per statement)
    placement: str = "tree"
    #: in one copy of a parallel run: which functions it profiles (the others count
    #: calls only); such a run does not use the cache
    copy_plan: CopyPlan | None = None
    #: path mode with OSP's countdown and block observation (``pathprof hot``)
    subpaths: bool = False
    #: path mode: functions carry their original code too, for coverage that stops
    #: paying (:mod:`pathprof.measure.stopping`)
    switches: bool = False
    #: mode "events": hand counts to the thread's total only, no per-function counts
    totals_only: bool = False
    #: path mode: count each decision's evaluation vectors too (condition coverage
    #: and MC/DC, :mod:`pathprof.python.conditioncode`)
    conditions: bool = False
    #: pathprof's own cache directory (:func:`pathprof.config.cache_dir`; by default
    #: ``PATHPROF_CACHE_DIR``, else ``.pathprof_cache`` beside the configuration file or
    #: in the current directory, found when the options are made)
    cache_dir: config.CacheDir = field(default_factory=config.cache_dir)

    def tag(self) -> str:
        from pathprof.contract import FORMAT_VERSION
        from pathprof.python.names import CODE_VERSION
        from pathprof.version import __version__

        text = (f"{__version__}|{FORMAT_VERSION}|{CODE_VERSION}|{self.mode}|{self.metric}"
                f"|{self.events}|{self.placement}" + ("|subpaths" if self.subpaths else "")
                + ("|switches" if self.switches else "")
                + ("|totals" if self.totals_only else "")
                + ("|conditions" if self.conditions else ""))
        return hashlib.sha256(text.encode()).hexdigest()[:12]


@dataclass(frozen=True)
class Rewriter:
    """Another tool's rewriting of the modules its loader imports, composed with
    pathprof's: pytest's assertion rewriting of test modules (:mod:`pathprof.pytest.plugin`
    registers it). A module such a loader would import, and that the selection wants,
    is imported by pathprof's loader instead: its source instrumented, then ``rewrite``
    applied to the instrumented tree (the program's ``assert`` statements are still
    there, so the other tool rewrites them as it would have), then compiled and cached
    under ``tag`` too."""

    #: part of the cache key: the tool and whatever changes what it writes
    tag: str
    #: whether ``loader`` (a spec's) is this tool's
    owns: Callable[[object], bool]
    #: ``rewrite(tree, source, path)``: rewrites the instrumented module's tree in place
    rewrite: Callable[[ast.Module, bytes, str], None]
    #: ``loaded(name, path)``: what the tool's own loader notes of a module it imports
    loaded: Callable[[str, str], None]
    #: ``fallback(name, path)``: the code the tool's own loader would run, for a module
    #: pathprof cannot instrument
    fallback: Callable[[str, str], CodeType | None]


def compile_instrumented(source: bytes, filename: str, options: InstrumentOptions,
                         *, show_warnings: bool = True) -> CodeType:
    """Instrument and compile ``source``, ready to run (bound to a holder of its own:
    :mod:`pathprof.runtime.holder`); raises what :func:`compile` raises for bad source.
    """
    code = _unbound(source, filename, options, False, show_warnings)
    return _module_code(bind_code(_noting_original(code, source, filename), options))


def _module_code(code: Bound) -> CodeType:
    """``code`` made for a module imported by pathprof's loader: one code object."""
    if not isinstance(code, CodeType):
        raise TypeError("instrumented in place, not for an import")
    return code


def bind_code(code: Bound, options: InstrumentOptions) -> Bound:
    """Instrumented code as compiled or cached (a code object, or the tuple of
    :func:`compile_instrumented`'s ``in_place``) bound to a new holder, whose runtime
    is the one ``options``' mode counts with."""
    counting = runtime
    if options.mode == "events":
        counting = sys.modules.get("pathprof.runtime.events") or importlib.import_module(
            "pathprof.runtime.events")
    found = holder.new_holder(counting)
    if isinstance(code, CodeType):  # (one call per kind: bind keeps the kind it is given)
        return holder.bind(code, found)
    return holder.bind(code, found)


def _unbound(source: bytes, filename: str, options: InstrumentOptions, in_place: bool,
             show_warnings: bool, rewriter: Rewriter | None = None,
             compile_as: str | None = None) -> Unbound:
    """What :func:`compile_instrumented` binds, as the cache keeps it.

    Compile-time warnings (an ``is`` with a literal, an invalid escape sequence)
    are the program's, shown once each as Python shows them: the instrumented tree
    holds some of the program's expressions more than once (a function's and a
    loop's original bodies beside the measured ones), so its own compile is
    silenced and, if it warned, the source is compiled as written to show them, with
    the warning filters in force (``-W error`` fails as it would). Without
    ``show_warnings`` (the caller compiled the source itself, or Python did when the
    module was first imported) nothing is shown. The warning filters are global:
    a warning another thread issues meanwhile is caught too, and issued again
    here, under the filters in force."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = _compile_instrumented(source, filename, options, in_place, rewriter,
                                       compile_as)
    name = compile_as or filename
    own = [w for w in caught if w.filename == name]
    for other in caught:
        if other.filename != filename:
            warnings.warn_explicit(other.message, other.category, other.filename,
                                   other.lineno, source=other.source)
    if own and show_warnings:
        compile(source, name, "exec", dont_inherit=True)
    return result


def _compile_instrumented(source: bytes, filename: str, options: InstrumentOptions,
                          in_place: bool, rewriter: Rewriter | None = None,
                          compile_as: str | None = None) -> Unbound:
    from pathprof.hashing import source_hash
    from pathprof.python.instrument import instrument_source

    calls_only: Container[int] = ()
    shares = None
    if options.copy_plan is not None:
        digest = source_hash(source)
        calls_only = options.copy_plan.calls_only(digest)
        shares = options.copy_plan.shares(digest)
    instrumented = instrument_source(source, filename, mode=options.mode,
                                     metric=options.metric, events=options.events,
                                     placement=options.placement, calls_only=calls_only,
                                     shares=shares, subpaths=options.subpaths,
                                     switches=options.switches and calls_only == ()
                                     and not shares,
                                     # (another tool's code is not Python's compile
                                     # of the source: pathprof.measure.goback)
                                     swaps=rewriter is None,
                                     totals_only=options.totals_only,
                                     # (a test's assertion messages show its own code)
                                     conditions=(options.conditions and not shares
                                                 and rewriter is None))
    if rewriter is not None:
        rewriter.rewrite(instrumented.tree, source, filename)
    if in_place:
        return (instrumented.compile_unbound(compile_as or filename),
                instrumented.compile_prologue(compile_as or filename))
    code = instrumented.compile_unbound(compile_as or filename)
    if instrumented.swaps:
        # What its functions go back to (pathprof.measure.goback), as Python compiles
        # it, kept marshalled beside the instrumented code: a warm run does not
        # compile it again.
        return (code, marshal.dumps(compile(source, compile_as or filename, "exec",
                                            dont_inherit=True)))
    return code


def instrumented_code(source: bytes, filename: str, options: InstrumentOptions,
                      stats: dict[str, int] | None = None, *, show_warnings: bool = True,
                      rewriter: Rewriter | None = None, compile_as: str | None = None
                      ) -> CodeType:
    """Instrumented code for ``source``, from the cache when it is there."""
    return _module_code(_cached(source, filename, options, stats, False, show_warnings,
                                rewriter, compile_as))


def instrumented_in_place(source: bytes, filename: str, options: InstrumentOptions,
                          stats: dict[str, int] | None = None, *, show_warnings: bool = True
                          ) -> tuple[CodeType, CodeType]:
    """``(module code, prologue code)`` for ``source``, from the cache when it is there
    (cached apart from :func:`instrumented_code`'s): what
    :mod:`pathprof.measure.inplace` needs for a module imported before measuring."""
    code = _cached(source, filename, options, stats, True, show_warnings, None, None)
    if isinstance(code, CodeType):
        raise TypeError("instrumented for an import, not in place")
    module, prologue = code
    return module, prologue


def _cached(source: bytes, filename: str, options: InstrumentOptions,
            stats: dict[str, int] | None, in_place: bool, show_warnings: bool,
            rewriter: Rewriter | None, compile_as: str | None) -> Bound:
    """Instrumented code for ``source``, from the cache when it is there (``in_place``:
    the module's and its prologue's, cached apart).

    Where the cache is read and written: :mod:`pathprof.measure.codecache`. ``stats``
    counts ``cache_hits`` and ``instrumented``, and where what was instrumented was
    cached: ``cached_in_pycache``, ``cached_in_cache_dir``."""
    digest = hashlib.sha256(source).digest()
    tag = options.tag() if rewriter is None else f"{options.tag()}-{rewriter.tag}"
    if compile_as is not None and compile_as != filename:  # (its code objects say it)
        tag += "-as-" + hashlib.sha256(compile_as.encode("utf-8", "surrogateescape")
                                       ).hexdigest()[:8]
    where = (codecache.places(filename, tag, options.cache_dir, in_place)
             if options.cache else None)
    if where is not None:
        code = codecache.read(where, digest, filename)
        if code is not None and _well_formed(code, in_place):
            if stats is not None:
                stats["cache_hits"] = stats.get("cache_hits", 0) + 1
            return bind_code(_noting_original(code, source, filename), options)
    code = _unbound(source, filename, options, in_place, show_warnings, rewriter, compile_as)
    if stats is not None:
        stats["instrumented"] = stats.get("instrumented", 0) + 1
    if where is not None:
        written = codecache.write(where, digest, filename, code)
        if stats is not None and written is not None:
            key = "cached_in_pycache" if written == codecache.PYCACHE else "cached_in_cache_dir"
            stats[key] = stats.get(key, 0) + 1
    return bind_code(_noting_original(code, source, filename), options)


def _well_formed(code: object, in_place: bool) -> TypeGuard[Unbound]:
    """Whether a cache entry holds what a module's code is kept as: a code object, a
    code object and its functions' originals marshalled (:func:`_compile_instrumented`),
    or, in place, the module's and the prologue's code objects."""
    if type(code) is tuple:
        return len(code) == 2 and isinstance(code[0], types.CodeType) and (
            isinstance(code[1], types.CodeType) if in_place else type(code[1]) is bytes)
    return isinstance(code, types.CodeType) and not in_place


def _noting_original(code: Unbound, source: bytes, filename: str) -> Bound:
    """The instrumented code of what :func:`_compile_instrumented` made, its
    originals noted for :mod:`pathprof.measure.goback`."""
    if isinstance(code, CodeType):
        return code
    instrumented, other = code
    if isinstance(other, CodeType):  # in place: the prologue's code
        return instrumented, other
    from pathprof.hashing import source_hash

    goback.register_original(filename, source_hash(source), other)
    return instrumented


@dataclass
class WarmResult:
    """What :func:`warm_cache` did."""

    instrumented: int = 0
    cached: int = 0  #: already in the cache
    failed: list[tuple[str, str]] = field(default_factory=list)  #: (path, why)
    in_pycache: int = 0  #: of those instrumented, cached in ``__pycache__``
    in_cache_dir: int = 0  #: of those instrumented, cached in the cache directory
    cache_dir: str = ""  #: the cache directory


def warm_cache(paths: Sequence[str], options: InstrumentOptions,
               progress: Callable[[int, int], None] | None = None) -> WarmResult:
    """Instrument ``paths`` ahead of a run and write the cache (``pathprof instrument``),
    where a run with the same options, under the same bytecode setting and cache
    directory, reads it (or under another: an entry is read from either place).

    A file that does not parse, or that pathprof cannot instrument, is listed in
    ``failed`` with the reason; it would run unmeasured (or fail to import, as
    without pathprof) in a run."""
    result = WarmResult(cache_dir=options.cache_dir.path)
    for done, path in enumerate(paths, 1):
        stats: dict[str, int] = {}
        try:
            with open(path, "rb") as f:
                source = f.read()
            instrumented_code(source, path, options, stats)
        except (OSError, SyntaxError, ValueError, UnicodeDecodeError, RecursionError) as err:
            result.failed.append((path, f"{type(err).__name__}: {err}"))
        else:
            result.cached += stats.get("cache_hits", 0)
            result.instrumented += stats.get("instrumented", 0)
            result.in_pycache += stats.get("cached_in_pycache", 0)
            result.in_cache_dir += stats.get("cached_in_cache_dir", 0)
        if progress is not None:
            progress(done, len(paths))
    return result


class InstrumentingLoader(importlib.machinery.SourceFileLoader):
    """A source loader whose code is instrumented; otherwise the standard one.

    Only ``get_code`` is its own: the module's body runs from the standard
    ``exec_module``, so the frames between the importer and the body are the ones
    plain Python has (``warnings.warn(..., stacklevel=2)`` at import names the
    importing line, ``sys._getframe(n)`` and ``inspect.stack()`` see what they see
    without pathprof, and a traceback of an exception raised at import leaves
    importlib's frames out as Python does)."""

    def __init__(self, fullname: str, path: str, hook: ImportHook,
                 rewriter: Rewriter | None = None) -> None:
        super().__init__(fullname, path)
        self._hook = hook
        self._rewriter = rewriter

    def _uninstrumented(self, fullname: str) -> CodeType | None:
        """The code the module runs unmeasured: what its own loader would run."""
        if self._rewriter is not None:
            return self._rewriter.fallback(fullname, self.get_filename(fullname))
        return _SOURCE_GET_CODE(self, fullname)

    def get_code(self, fullname: str) -> CodeType | None:
        given = self.get_filename(fullname)
        path = os.path.abspath(given)  # (the data names files whole; the code as given)
        try:
            source = self.get_data(given)
        except OSError as err:
            if must_pass(err):  # (a signal handler's TimeoutError: the program's)
                raise
            return self._uninstrumented(fullname)
        if self._rewriter is not None:
            self._rewriter.loaded(fullname, path)
        if runtime.own_work.active:
            # A module pathprof itself imports (on 3.13 installing the hook imports
            # importlib.metadata): its body counts nothing, and one of the standard
            # library or site-packages is shared with own_work from then on, as
            # pathprof.measure.inplace shares those imported before the start.
            runtime.own_work.importing(path, self._hook.selection.is_third_party(path))
        try:
            with runtime.own_work:
                return instrumented_code(source, path, self._hook.options, self._hook.stats,
                                         rewriter=self._rewriter,
                                         compile_as=given if given != path else None)
        except (SyntaxError, ValueError, UnicodeDecodeError) as err:
            if must_pass(err):  # a signal handler's: the program's (here and below)
                raise
            try:
                compile(source, given, "exec", dont_inherit=True)
            except (SyntaxError, ValueError, UnicodeDecodeError):
                # Bad source: let the module's loader fail the way it always does.
                return self._uninstrumented(fullname)
            warn(f"could not instrument {path} ({type(err).__name__}: "
                 f"{err}); it runs unmeasured")
            return self._uninstrumented(fullname)
        except RecursionError as err:
            if must_pass(err):
                raise
            warn(f"{path} is nested too deeply to instrument; "
                 "it runs unmeasured")
            return self._uninstrumented(fullname)
        except Exception as err:  # a pathprof bug must not break the program
            if must_pass(err):
                raise
            warn(f"could not instrument {path} ({type(err).__name__}: "
                 f"{err}); it runs unmeasured")
            return self._uninstrumented(fullname)

class ImportHook(importlib.abc.MetaPathFinder):
    """Finder that routes selected source modules to :class:`InstrumentingLoader`.

    Installed, it also measures the selected source files a program loads without the
    finders of :data:`sys.meta_path`: with a :class:`~importlib.machinery.SourceFileLoader`
    of its own (``importlib.util.spec_from_file_location`` and ``exec_module``, or
    ``load_module``), and with :func:`runpy.run_path`. Both are reached through the
    one function each calls for the module's code, which pathprof wraps while the hook
    is installed (``SourceFileLoader.get_code``, for that class itself, not for the
    subclasses a program may make to change what is loaded; ``runpy``'s
    ``_get_code_from_file``). Code compiled by the program itself (``exec(compile(...))``)
    is not seen: docs/guarantees.md."""

    def __init__(self, selection: Selection, options: InstrumentOptions) -> None:
        self.selection = selection
        self.options = options
        self.stats: dict[str, int] = {}
        self._busy = False
        #: other tools' rewriting to compose with (:class:`Rewriter`)
        self.rewriters: list[Rewriter] = []

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: types.ModuleType | None = None) -> ModuleSpec | None:
        if self._busy:
            return None
        self._busy = True
        try:
            spec = self._find_other(fullname, path, target)
        finally:
            self._busy = False
        if spec is None:
            return spec
        rewriter = None
        if not isinstance(spec.loader, importlib.machinery.SourceFileLoader):
            rewriter = next((r for r in self.rewriters if r.owns(spec.loader)), None)
            if rewriter is None or not isinstance(spec.origin, str):
                return spec
        # The finders asked above are what the import would have asked anyway (the
        # program's calls); choosing is pathprof's own work.
        with runtime.own_work:
            if not self.selection.wants(fullname, spec.origin):
                return spec
            # (wants() is False for a None origin, which mypy cannot know)
            spec.loader = InstrumentingLoader(fullname, spec.origin, self,  # type: ignore[arg-type]
                                              rewriter)
        return spec

    def _find_other(self, fullname: str, path: Sequence[str] | None,
                    target: types.ModuleType | None) -> ModuleSpec | None:
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                return spec
        return None

    def install(self) -> None:
        if self not in sys.meta_path:
            sys.meta_path.insert(0, self)
        if self not in _installed:
            _installed.append(self)
        _wrap_direct_loads()
        importlib.invalidate_caches()

    def uninstall(self) -> None:
        while self in sys.meta_path:
            sys.meta_path.remove(self)
        while self in _installed:
            _installed.remove(self)
        if not _installed:
            _unwrap_direct_loads()

    def code_for_loader(self, loader: importlib.machinery.SourceFileLoader, fullname: str
                        ) -> CodeType | None:
        """The code a program's own ``SourceFileLoader`` gets: instrumented if the
        selection wants the file."""
        path = loader.get_filename(fullname)
        with runtime.own_work:
            wanted = not self._busy and self.selection.wants(fullname, path)
        if not wanted:
            return _SOURCE_GET_CODE(loader, fullname)
        return InstrumentingLoader(fullname, path, self).get_code(fullname)

    def code_for_path(self, fname: StrOrBytesPath) -> CodeType | None:
        """What :func:`runpy.run_path` runs of the source file ``fname``: its
        instrumented code if the selection wants it, else None (the run compiles it
        as it would, and a compiled file, never instrumented, is read as ever)."""
        path = os.path.abspath(os.fsdecode(fname))
        with runtime.own_work:
            if not (path.endswith(".py") and os.path.isfile(path)
                    and self.selection.wants(None, path)):
                return None
        try:
            with open(path, "rb") as f:
                source = f.read()
        except OSError:
            return None
        if source.startswith(importlib.util.MAGIC_NUMBER):
            return None
        try:
            with runtime.own_work:  # (compiled as run_path names it: tracebacks say so)
                return instrumented_code(source, path, self.options, self.stats,
                                         compile_as=os.fsdecode(fname))
        except Exception as err:  # the run compiles it (and fails) as it would
            if must_pass(err):
                raise
            return None

    def already_imported(self) -> list[tuple[str, types.ModuleType]]:
        """Selected modules imported before the hook, ``(name, module)`` sorted by
        name: :mod:`pathprof.measure.inplace` measures them."""
        found = []
        measured = runtime.measured_namespaces()
        for name, module in list(sys.modules.items()):
            filename = getattr(module, "__file__", None)
            if (isinstance(filename, str) and name != "__main__"
                    and id(getattr(module, "__dict__", None)) not in measured
                    and self.selection.wants(name, filename)):
                found.append((name, module))
        return sorted(found, key=lambda item: item[0])


#: The hooks installed, the last one answering a program's own loads of source files.
_installed: list[ImportHook] = []
#: What ``SourceFileLoader`` inherits, and ``runpy``'s reading of a file's code.
_SOURCE_GET_CODE = importlib.machinery.SourceFileLoader.get_code
_wrapped: _Wrapped = {}


def _get_code(self: _SourceLoader, fullname: str) -> CodeType | None:
    """``SourceFileLoader.get_code`` while a hook is installed (see :class:`ImportHook`)."""
    if _installed and type(self) is importlib.machinery.SourceFileLoader:
        return _installed[-1].code_for_loader(self, fullname)
    return _SOURCE_GET_CODE(self, fullname)


functools.update_wrapper(_get_code, _SOURCE_GET_CODE)  # (its names, as the program sees it)


def _get_code_from_file(*args: StrOrBytesPath) -> CodeType | tuple[CodeType, StrOrBytesPath]:
    """``runpy._get_code_from_file`` while a hook is installed: ``(run_name, fname)``
    before 3.12, ``(fname)`` from it, returning what the original returns then."""
    original = _wrapped["runpy"]
    if _installed:
        code = _installed[-1].code_for_path(args[-1])
        if code is not None:
            return (code, args[-1]) if len(args) == 2 else code
    return original(*args)


def _wrap_direct_loads() -> None:
    if "loader" not in _wrapped:
        _wrapped["loader"] = True
        importlib.machinery.SourceFileLoader.get_code = _get_code  # type: ignore[method-assign]
    import runpy  # (as the hook is installed: pathprof's own work, before the program)

    if "runpy" not in _wrapped and hasattr(runpy, "_get_code_from_file"):
        _wrapped["runpy"] = runpy._get_code_from_file
        functools.update_wrapper(_get_code_from_file, _wrapped["runpy"])
        setattr(runpy, "_get_code_from_file", _get_code_from_file)  # noqa: B010


def _unwrap_direct_loads() -> None:
    if _wrapped.pop("loader", None):
        with contextlib.suppress(AttributeError):
            del importlib.machinery.SourceFileLoader.get_code
    original = _wrapped.pop("runpy", None)
    runpy = sys.modules.get("runpy")
    if original is not None and runpy is not None:
        setattr(runpy, "_get_code_from_file", original)  # noqa: B010
