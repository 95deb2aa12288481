"""Run CPython's own test suite for a stdlib module against an instrumented copy.

The modules under test are instrumented in memory from their real source files
and served under their real names by a meta path finder, so that every import of
them -- the test module's ``import json``, and the fresh copies that
``test.support.import_helper.import_fresh_module`` makes (test_json and
test_statistics build a pure-Python and a C-accelerated variant that way) --
executes the one instrumented code object. The first import gets the very module
object ``load_instrumented`` made; later (fresh) imports get new module objects
that run the same code, so the oracle, which maps frames to functions by code
object, sees them all, and their counts (one runtime state per execution, all with
the same key) are summed by :func:`tests.loading.recorded_all`.

Everything is undone afterwards: ``sys.modules`` entries under the isolated
prefixes, and the attribute a submodule import sets on its parent package.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import importlib.abc
import importlib.machinery
import io
import sys
import unittest
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pathprof import runtime

from ..loading import Loaded, load_instrumented, recorded_all
from ..oracles import BlockTraceOracle, FunctionInfo

_MISSING = object()


@contextlib.contextmanager
def isolated_modules(prefixes: Sequence[str]) -> Iterator[None]:
    """Remove the modules named ``p`` or ``p.*`` for each prefix from
    ``sys.modules`` (so they are imported afresh), and put everything back after:
    the saved entries, and the attribute each prefix's module has on its parent."""

    def isolated(name: str) -> bool:
        return any(name == p or name.startswith(p + ".") for p in prefixes)

    saved = {name: module for name, module in sys.modules.items() if isolated(name)}
    parent_attrs = []
    for prefix in prefixes:
        parent_name, _, child = prefix.rpartition(".")
        parent = sys.modules.get(parent_name) if parent_name else None
        if parent is not None and not isolated(parent_name):
            parent_attrs.append((parent, child, parent.__dict__.get(child, _MISSING)))
    for name in saved:
        del sys.modules[name]
    try:
        yield
    finally:
        for name in [n for n in sys.modules if isolated(n)]:
            del sys.modules[name]
        sys.modules.update(saved)
        for parent, child, value in parent_attrs:
            if value is _MISSING:
                parent.__dict__.pop(child, None)
            else:
                setattr(parent, child, value)


class _InstrumentedLoader(importlib.machinery.SourceFileLoader):
    """Executes the instrumented code object instead of compiling the file; the
    rest (``get_source`` for doctest and linecache, ``is_package``) is the file's."""

    def __init__(self, name: str, path: str, loaded: Loaded, finder: InstrumentingFinder
                 ) -> None:
        super().__init__(name, path)
        self.loaded = loaded
        self.finder = finder

    def create_module(self, spec: Any) -> Any:
        if spec.name not in self.finder.created:
            self.finder.created.add(spec.name)
            return self.loaded.module  # the first import: load_instrumented's module
        return None  # a fresh import: a new module running the same code

    def exec_module(self, module: Any) -> None:
        self.finder.executions[module.__name__] += 1
        exec(self.loaded.code, module.__dict__)


class InstrumentingFinder(importlib.abc.MetaPathFinder):
    """Serves the instrumented code of ``loaded`` modules (by name) on import."""

    def __init__(self, loaded: dict[str, Loaded]) -> None:
        self.loaded = loaded
        self.created: set[str] = set()
        self.executions: Counter[str] = Counter()

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        loaded = self.loaded.get(name)
        if loaded is None:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.origin != loaded.module.__file__:
            return None
        spec.loader = _InstrumentedLoader(name, spec.origin, loaded, self)
        return spec

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        sys.meta_path.insert(0, self)
        try:
            yield
        finally:
            sys.meta_path.remove(self)


# ---------------------------------------------------------------------------
# Running a unittest module


@dataclass(frozen=True)
class Outcome:
    """What a unittest run reports, in a comparable form."""

    tests_run: int
    failures: tuple[str, ...]
    errors: tuple[str, ...]
    skipped: int
    expected_failures: int
    unexpected_successes: int
    details: str = field(compare=False, repr=False)


def _flatten(suite: unittest.TestSuite) -> Iterator[unittest.TestCase]:
    for test in suite:
        if isinstance(test, unittest.TestSuite):
            yield from _flatten(test)
        else:
            yield test


def run_test_module(name: str, select: Callable[[unittest.TestCase], bool] | None) -> Outcome:
    """Import test module ``name`` (afresh: the caller isolates it), load its tests
    as ``python -m unittest`` would (``load_tests`` included), keep those ``select``
    accepts, and run them."""
    module = importlib.import_module(name)
    suite = unittest.defaultTestLoader.loadTestsFromModule(module)
    tests = [t for t in _flatten(suite) if select is None or select(t)]
    stream = io.StringIO()
    result = unittest.TextTestRunner(stream=stream, verbosity=0).run(unittest.TestSuite(tests))
    return Outcome(
        tests_run=result.testsRun,
        failures=tuple(sorted(t.id() for t, _ in result.failures)),
        errors=tuple(sorted(t.id() for t, _ in result.errors)),
        skipped=len(result.skipped),
        expected_failures=len(result.expectedFailures),
        unexpected_successes=len(result.unexpectedSuccesses),
        details=stream.getvalue(),
    )


def warm_up(test_module: str, isolate: Sequence[str],
            select: Callable[[unittest.TestCase], bool] | None = None) -> None:
    """Run the tests once, unobserved, so that one-time work they trigger in code
    outside the isolated modules is done before the runs that are compared (3.14's
    ``test.support.check_sanitizer`` is cached, and calls ``shlex.split`` once)."""
    with isolated_modules(isolate):
        run_test_module(test_module, select)


def excluding(*names: str) -> Callable[[unittest.TestCase], bool]:
    """Select every test but those of the named TestCase classes ("Class") and
    the named tests ("Class.test_method")."""
    unwanted = set(names)

    def select(test: unittest.TestCase) -> bool:
        cls = type(test).__name__
        method = getattr(test, "_testMethodName", "")
        return cls not in unwanted and f"{cls}.{method}" not in unwanted

    return select


# ---------------------------------------------------------------------------
# The differential run


@dataclass
class Target:
    """One stdlib module and CPython's tests of it."""

    #: modules to instrument, by their real names
    modules: tuple[str, ...]
    #: the unittest module (or package) of CPython's test suite
    test_module: str
    #: module name prefixes to import afresh for each run (the instrumented
    #: modules' packages, and the test module with its submodules)
    isolate: tuple[str, ...]
    #: the tests run under the oracle (None: all of them)
    oracle_select: Callable[[unittest.TestCase], bool] | None = None
    #: the tests of the semantic comparison, untraced (None: all of them)
    select: Callable[[unittest.TestCase], bool] | None = None


@dataclass
class Report:
    #: the whole test module, plain and instrumented, neither traced
    plain: Outcome
    instrumented: Outcome
    #: the oracle's tests: plain under an idle tracer, instrumented under the oracle
    plain_traced: Outcome
    oracle_run: Outcome
    oracle_errors: list[str]
    #: per function ("module:qualname@line"): (recorded, oracle) path counts
    functions: dict[str, tuple[Counter[Any], Counter[Any]]]
    #: how many times each instrumented module was executed in the oracle run
    executions: Counter[str]
    #: exceptions the runtime could not place, per function, in the untraced run
    untraced_unattributed: dict[str, int]

    @property
    def mismatched(self) -> list[str]:
        return [name for name, (rec, ora) in self.functions.items() if rec != ora]

    @property
    def functions_with_paths(self) -> int:
        return sum(1 for rec, _ in self.functions.values() if +rec)


def source_file(name: str) -> Path:
    module = importlib.import_module(name)
    file = module.__file__
    assert file is not None, module
    assert file.endswith(".py"), file
    return Path(file)


class _IdleTracer:
    """A global trace function that traces no frame: what the oracle costs every
    call outside instrumented code, and what ``sys.gettrace()`` shows."""

    def run(self, fn: Callable[[], Any]) -> Any:
        old = sys.gettrace()
        sys.settrace(lambda frame, event, arg: None)
        try:
            return fn()
        finally:
            sys.settrace(old)


def instrument_modules(paths: dict[str, Path], *, mark_probes: bool = True) -> dict[str, Loaded]:
    """Instrument each module (by name, from its file), ready for the finder."""
    loadeds = {}
    for name, path in paths.items():
        loaded = load_instrumented(path, name, mark_probes=mark_probes)
        del sys.modules[name]  # the finder puts it there when it is imported
        loadeds[name] = loaded
    return loadeds


def run_differential(target: Target) -> Report:
    """Run the target's tests against the plain and the instrumented modules, and
    the oracle's share of them against the instrumented modules under the oracle."""
    paths = {name: source_file(name) for name in target.modules}
    importlib.import_module(target.test_module)  # fail here if it cannot import at all

    def run(select: Callable[[unittest.TestCase], bool] | None) -> Outcome:
        return run_test_module(target.test_module, select)

    # Semantic preservation, on the whole module, with no tracer (a tracer costs
    # stack depth, and CPython's recursion-limit tests measure what is left).
    # Every run imports all isolated modules afresh from their files.
    with isolated_modules(target.isolate):
        plain = run(target.select)
    with isolated_modules(target.isolate):
        semantic_loads = instrument_modules(paths)
        since = len(runtime.modules())
        with InstrumentingFinder(semantic_loads).installed():
            instrumented = run(target.select)
        untraced_unattributed = _unattributed(semantic_loads, since)
    with isolated_modules(target.isolate):
        plain_traced = _IdleTracer().run(lambda: run(target.oracle_select))

    with isolated_modules(target.isolate):
        loadeds = instrument_modules(paths)
        # One oracle watches every module; its functions get names unique across
        # them (module, qualname and line: a qualname can repeat within a module).
        infos = {name: loaded.function_infos() for name, loaded in loadeds.items()}
        renamed = {
            name: [FunctionInfo(dataclasses.replace(i.meta, qualname=_unique(name, i.meta)),
                                i.code)
                   for i in module_infos]
            for name, module_infos in infos.items()}
        finder = InstrumentingFinder(loadeds)
        oracle = BlockTraceOracle([i for module_infos in renamed.values() for i in module_infos])
        since = len(runtime.modules())
        runtime.take_snapshot()  # nothing counted before this run is read
        with finder.installed():
            # Module execution (at import, inside the run) is recorded and traced
            # like the rest: functions called by module code are compared too.
            oracle_run = oracle.run(lambda: run(target.oracle_select))
        recorded = recorded_all(list(loadeds.values()), list(infos.values()), since)

    functions = {}
    for module_infos, module_recorded in zip(renamed.values(), recorded, strict=True):
        for info, counts in zip(module_infos, module_recorded, strict=True):
            name = info.meta.qualname
            functions[name] = (counts, oracle.paths[name])
    return Report(plain, instrumented, plain_traced, oracle_run, oracle.errors, functions,
                  finder.executions, untraced_unattributed)


def _unattributed(loadeds: dict[str, Loaded], since: int) -> dict[str, int]:
    keys = {loaded.metadata.key: name for name, loaded in loadeds.items()}
    found: Counter[str] = Counter()
    for entry in runtime.take_snapshot()[since:]:
        name = keys.get(entry[0].key)
        if name is None:
            continue
        for meta, count in zip(loadeds[name].metadata.functions, entry[4], strict=True):
            if count:
                found[_unique(name, meta)] += count
    return dict(found)


def _unique(module: str, meta: Any) -> str:
    return f"{module}:{meta.qualname}@{meta.code_line}"
