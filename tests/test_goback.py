"""Functions sent back by their ``__code__`` (:mod:`pathprof.measure.goback`): the code
they get is what Python (or pytest's assertion rewriting) compiles from the measured
source, found through every way a module holds a function, and nothing is swapped
that cannot be checked: the file changed, the program replaced the code, the module
executed again in the same globals. A new measurement measures them again."""

from __future__ import annotations

import dis
import functools
import gc
import json
import signal
import sys
import textwrap
import types
import uuid
import weakref
from pathlib import Path
from typing import Any

import pytest

from pathprof import runtime
from pathprof.measure import goback
from pathprof.measure.stopping import StopCounting

from .loading import load_instrumented
from .test_pytest_plugin import functions_of, pytest_in

MODULE = """
import functools


def plain(x):
    if x > 0:
        return "positive"
    return "not positive"


class Shape:
    def method(self, x):
        return x * 2 if x else 0

    @staticmethod
    def static(x):
        return -x if x < 0 else x

    @classmethod
    def klass(cls, x):
        return cls.__name__ if x else None

    @property
    def area(self):
        return 4 if self else 0

    class Inner:
        def deep(self, x):
            return x or 1

    def __private(self, x):
        return x if x else -x

    def calls_private(self, x):
        return self.__private(x)


def decorate(f):
    @functools.wraps(f)
    def wrapper(*args):
        return f(*args)
    return wrapper


def hide(f):  # (no functools.wraps: only the closure holds f)
    def hidden(*args):
        return f(*args)
    return hidden


class own_property(property):
    pass


class Lazy:
    @own_property
    def owned(self):
        return 1 if self else 0

    @functools.cached_property
    def cached(self):
        return 2 if self else 0


@hide
def concealed(x):
    return x * 3 if x else 0


@decorate
def decorated(x):
    return x + 1 if x else x


@functools.lru_cache(maxsize=None)
def cached(x):
    return x if x else -1


def outer(y):
    def inner(z):
        return z or 0
    return inner(y)


def fails(x):
    if x:
        raise ValueError(x)
    return x


def drive():
    out = []
    for x in (0, 1, 2, -1):
        out.append((plain(x), Shape().method(x), Shape.static(x), Shape.klass(x),
                    Shape().area, Shape.Inner().deep(x), decorated(x), outer(x),
                    Shape().calls_private(x), Lazy().owned, Lazy().cached, concealed(x)))
        cached.cache_clear()
        out.append(cached(x))
        try:
            fails(x)
        except ValueError as err:
            out.append(err.__traceback__.tb_next.tb_lineno)
    return out
"""

#: every function of MODULE that goes back by its code, by qualified name
SWAPPED = ("plain", "Shape.method", "Shape.static", "Shape.klass", "Shape.area",
           "Shape.Inner.deep", "Shape.__private", "decorated", "cached", "Lazy.owned",
           "Lazy.cached", "concealed")


def _load(tmp_path: Path, source: str = MODULE, name: str = "goback_module") -> Any:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    loaded = load_instrumented(path, f"{name}_{id(tmp_path)}", mark_probes=False,
                               switches=True)
    loaded.execute()
    (state,) = [s for s in runtime.modules() if s.key == loaded.metadata.key]
    return loaded, state, path


def _function(module: types.ModuleType, qualname: str) -> types.FunctionType:
    found: Any = module
    for part in qualname.split("."):
        found = vars(found)["_Shape__private" if part == "__private" else part]
    if isinstance(found, staticmethod | classmethod):
        found = found.__func__
    if isinstance(found, property):
        found = found.fget
    if isinstance(found, functools.cached_property):
        found = found.func
    if found.__name__ == "hidden":  # (the decorated function, in the closure)
        found = found.__closure__[0].cell_contents
    return getattr(found, "__wrapped__", found)


def _plain_codes(path: Path) -> dict[tuple[str, int], types.CodeType]:
    found = {}
    pending = [compile(path.read_bytes(), str(path), "exec", dont_inherit=True)]
    while pending:
        for const in pending.pop().co_consts:
            if isinstance(const, types.CodeType):
                found[(const.co_qualname, const.co_firstlineno)] = const
                pending.append(const)
    return found


def _index(state: Any, qualname: str) -> int:
    return next(i for i, meta in enumerate(state.meta.functions) if meta.qualname == qualname)


@pytest.fixture
def stopping(monkeypatch: pytest.MonkeyPatch) -> Any:
    # (searches of earlier tests do not hold this one's back: see the spacing test)
    monkeypatch.setattr(goback, "_searched", {"at": -float("inf"), "cost": 0.0})
    monkeypatch.setattr(goback, "_pending", {})
    watcher = StopCounting("paths")
    watcher.start()
    yield watcher
    watcher.stop()


def test_every_kind_of_function_gets_the_code_python_compiles(tmp_path: Path,
                                                              stopping: Any) -> None:
    loaded, state, path = _load(tmp_path)
    module = loaded.module
    first = module.drive()
    plain = _plain_codes(path)
    for qualname in SWAPPED:
        index = _index(state, qualname)
        code = _function(module, qualname).__code__
        assert index in state.switching.swaps, qualname
        assert index in state.switching.sent_back, qualname
        assert code is plain[(qualname, code.co_firstlineno)] or (
            code.co_code == plain[(qualname, code.co_firstlineno)].co_code), qualname
        assert not any("@pp" in name for name in code.co_names), qualname
    # the nested function carries its body instead, and goes back by its switch
    inner = _index(state, "outer.<locals>.inner")
    assert inner not in state.switching.swaps
    assert inner in state.switching.sent_back
    # the swapped code runs as the plain program does: results, traceback lines
    assert module.drive() == first
    dis.Bytecode(module.plain)  # (a real code object, as Python made it)


def test_a_new_measurement_measures_the_functions_sent_back_again(tmp_path: Path,
                                                                  stopping: Any) -> None:
    loaded, state, _ = _load(tmp_path)
    module = loaded.module
    module.drive()
    assert not any("@pp" in name for name in module.plain.__code__.co_names)
    loaded.snapshot()
    stopping.start()  # (rearms every state)
    assert any("@pp" in name for name in module.plain.__code__.co_names)
    assert state.switching.sent_back == set()
    assert state.switching.swapped == []
    module.plain(5)
    paths = loaded.snapshot()[0]
    assert sum(paths[_index(state, "plain")].values()) == 1


def test_a_file_changed_since_it_was_measured_keeps_its_functions_counting(
        tmp_path: Path, stopping: Any) -> None:
    loaded, state, path = _load(tmp_path)
    path.write_text(path.read_text().replace('"positive"', '"changed"'))
    module = loaded.module
    first = module.drive()
    assert first[0][0] == "not positive"
    assert first[2][0] == "positive"
    assert not state.switching.swapped
    assert not (state.switching.sent_back & state.switching.swaps)
    assert any("@pp" in name for name in module.plain.__code__.co_names)
    module.plain(1)
    module.plain(1)
    paths = loaded.snapshot()[0]
    assert sum(paths[_index(state, "plain")].values()) == 4 + 2  # every call counted


def test_code_the_program_replaced_is_left_alone(tmp_path: Path, stopping: Any) -> None:
    loaded, state, _ = _load(tmp_path)
    module = loaded.module

    def replacement(x: int) -> str:
        return "replaced"

    module.plain.__code__ = replacement.__code__
    module.drive()
    assert module.plain.__code__ is replacement.__code__
    assert _index(state, "plain") not in state.switching.sent_back
    assert _index(state, "Shape.method") in state.switching.sent_back  # (the others went back)


def test_a_module_executed_again_in_the_same_globals_is_the_later_states(
        tmp_path: Path, stopping: Any) -> None:
    """The earlier state's decision does not swap functions its successor counts."""
    loaded, first_state, _ = _load(tmp_path)
    module = loaded.module
    exec(loaded.code, module.__dict__)  # a second state, the same globals
    later = [s for s in runtime.modules() if s.key == loaded.metadata.key][-1]
    assert later is not first_state
    index = _index(first_state, "plain")
    assert goback.send_back(first_state, index) is False
    assert any("@pp" in name for name in module.plain.__code__.co_names)
    module.drive()
    assert index in later.switching.sent_back
    assert index not in first_state.switching.sent_back


def test_a_closure_whose_cells_differ_is_not_swapped(tmp_path: Path, stopping: Any) -> None:
    loaded, state, _ = _load(tmp_path)
    module = loaded.module
    index = _index(state, "plain")
    code = module.plain.__code__
    state.switching.originals = {(code.co_qualname, code.co_firstlineno):
                       (lambda: index).__code__}  # (one free variable; plain has none)
    assert goback.send_back(state, index) is False
    assert module.plain.__code__ is code


TEST_MODULE = """
import pytest


def check(value, strict):
    if strict:
        assert value * 10 == 31
    return value


@pytest.mark.parametrize("value, strict", [(1, False), (3.1, True), (3, True)])
def test_values(value, strict):
    assert check(value, strict) == value


def test_measured_names():
    print("names of pathprof's:", [n for n in check.__code__.co_names if "@pp" in n])
"""


def test_a_test_module_keeps_pytests_rewriting_when_its_functions_stop(
        tmp_path: Path) -> None:
    """``check`` stops once its two paths ran (the first two tests): the third fails
    in code that pytest's rewriting made, which explains the assert as without
    pathprof. (A test module's code is pytest's, not Python's compile of its source:
    its functions carry their original body, rewritten too, and are not swapped.)"""
    root = tmp_path / "project"
    root.mkdir()
    (root / "test_values.py").write_text(textwrap.dedent(TEST_MODULE))
    plain = pytest_in(root, "-s", "test_values.py")
    measured = pytest_in(root, "-s", "--pathprof=.", "--pathprof-stop-counting=paths",
                         "--pathprof-report=json:cov.json", "test_values.py")
    assert plain.returncode == measured.returncode == 1
    explained = "assert (3 * 10) == 31"
    assert explained in plain.stdout
    assert explained in measured.stdout, measured.stdout
    assert "names of pathprof's: []" not in measured.stdout, measured.stdout
    assert "names of pathprof's: []" in plain.stdout
    functions = functions_of(json.loads((root / "cov.json").read_text()))
    assert functions["check"]["paths_run"] == 2


if sys.version_info >= (3, 12):
    def test_monitoring_sees_the_plain_codes_lines_once_sent_back(tmp_path: Path,
                                                                  stopping: Any) -> None:
        loaded, _, _ = _load(tmp_path)
        module = loaded.module
        module.drive()
        lines: list[int] = []
        tool = sys.monitoring.PROFILER_ID + 1  # (an id nobody else uses here)
        sys.monitoring.use_tool_id(tool, "goback-test")
        try:
            sys.monitoring.register_callback(
                tool, sys.monitoring.events.LINE,
                lambda code, line: lines.append(line) if code is module.plain.__code__
                else None)
            sys.monitoring.set_local_events(tool, module.plain.__code__,
                                            sys.monitoring.events.LINE)
            module.plain(1)
            module.plain(0)
        finally:
            sys.monitoring.set_local_events(tool, module.plain.__code__, 0)
            sys.monitoring.free_tool_id(tool)
        first = module.plain.__code__.co_firstlineno
        assert [line - first for line in lines] == [1, 2, 1, 3]


@pytest.mark.parametrize("warm", [False, True], ids=["first-run", "cache-hit"])
def test_the_original_kept_with_the_instrumented_code_is_what_it_goes_back_to(
        tmp_path: Path, warm: bool) -> None:
    """Through the import hook, first run and from the cache: the module's code as
    Python compiles it is made beside the instrumented code (and kept in the cache
    entry), so a function goes back to the measured source's code even when the file
    changed since (read again, it would not be the measured source: no swap)."""
    import importlib

    from pathprof.measure.profiler import Profiler

    name = f"goback_hooked_{uuid.uuid4().hex[:8]}"
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(MODULE))
    cache = tmp_path / "cache"
    sys.path.insert(0, str(tmp_path))
    try:
        rounds = 2 if warm else 1
        for round_ in range(rounds):
            sys.modules.pop(name, None)
            with Profiler(data_file=str(tmp_path / f"data{round_}"), include=[str(path)],
                          cache_dir=str(cache), stop_counting="paths",
                          warn_unmatched=False) as profiler:
                module = importlib.import_module(name)
                path.write_text(textwrap.dedent(MODULE).replace('"positive"', '"changed"'))
                module.drive()
                assert profiler.hook.stats.get("cache_hits", 0) == round_, profiler.hook.stats
            assert not any("@pp" in n for n in module.plain.__code__.co_names)
            assert module.plain(1) == "positive"  # (the measured source's code)
            path.write_text(textwrap.dedent(MODULE))
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop(name, None)


def test_a_saved_session_lets_go_of_what_the_runtime_decoded(tmp_path: Path) -> None:
    """Once saved, the contracts decoded to count are let go of (the collector would
    walk them until the interpreter exits), and made again when asked for."""
    import gc
    import importlib

    from pathprof.contract import FunctionInfo
    from pathprof.measure.profiler import Profiler

    name = f"goback_saved_{uuid.uuid4().hex[:8]}"
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(MODULE))
    sys.path.insert(0, str(tmp_path))
    try:
        with Profiler(data_file=str(tmp_path / "data"), include=[str(path)], cache=False,
                      stop_counting="basis", warn_unmatched=False) as profiler:
            module = importlib.import_module(name)
            module.drive()
        profiler.save()
        (state,) = [s for s in runtime.modules() if s.filename == str(path)]
        assert state._meta is not None  # (decoded: first runs were reported)
        decoded = weakref.ref(state._meta.functions[_index(state, "Shape.static")])
        assert isinstance(decoded(), FunctionInfo)
        runtime.forget_decoded()
        gc.collect()
        assert state._meta is None
        assert decoded() is None  # (nothing else held it: not the profiler, not stopping)
        assert state.meta.functions[_index(state, "plain")].qualname == "plain"
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop(name, None)


def test_searches_of_all_objects_are_spaced_by_their_cost(tmp_path: Path, stopping: Any,
                                                         monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    """A search for functions not found by name waits until the time since the last
    one is SEARCH_SPACING times what that one cost; until then the function counts."""
    import time

    monkeypatch.setattr(goback, "_searched", {"at": time.perf_counter(), "cost": 3600.0})
    loaded, state, _ = _load(tmp_path)
    module = loaded.module
    module.drive()
    index = _index(state, "concealed")
    assert index not in state.switching.sent_back  # (pending: a search is not due)
    assert (id(module.__dict__), "concealed", state.meta.functions[index].code_line
            ) in goback._pending
    monkeypatch.setattr(goback, "_searched", {"at": -float("inf"), "cost": 0.0})
    goback._search_now_and_then()
    assert index in state.switching.sent_back
    assert goback._pending == {}
    assert goback._searched["cost"] > 0


class _Timeout(Exception):
    pass


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="POSIX signals")
def test_a_module_compiled_as_an_alarm_raises_is_kept_for_the_next_try(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A program's alarm handler that raises as the compile of the module's original
    code returns (its period shorter than the compile: a busy ``signal.setitimer``)
    does not cost the compile again at the next function that goes back: before, each
    try compiled the module and lost it, so such a program spent nearly all its time
    compiling. The alarm is set as the compile starts (its audit event) and comes
    during it; the handler raises at the first bytecode after it."""
    many = "".join(f"\ndef f{k}(x):\n" + "".join(f"    if x & {1 << b}:\n        x += {b}\n"
                                                 for b in range(12)) + "    return x\n"
                   for k in range(300))
    _loaded, state, path = _load(tmp_path, MODULE + many, "goback_alarmed")
    monkeypatch.setattr(goback, "_originals", {})  # (compiled from the file, not handed)
    name = str(path)
    compiles: list[str] = []
    armed = [True]

    def audit(event: str, args: tuple[object, ...]) -> None:
        if event == "compile" and args[1] == name:
            compiles.append(event)
            if armed[0]:
                armed[0] = False
                signal.setitimer(signal.ITIMER_REAL, 0.001)

    def on_alarm(signum: int, frame: object) -> None:
        raise _Timeout

    sys.addaudithook(audit)  # (cannot be removed: it does nothing once past this test)
    previous = signal.signal(signal.SIGALRM, on_alarm)
    gc.disable()  # (a collection's callbacks, Hypothesis's, would run the handler first)
    try:
        with pytest.raises(_Timeout):
            goback._compile_originals(state, name)
    finally:
        gc.enable()
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert compiles == ["compile"]
    key = (state.filename, state.meta.source_hash)
    (kept,) = goback._module_codes[key]
    assert kept.co_filename == name
    found = goback._compile_originals(state, name)
    assert compiles == ["compile"]  # not compiled again
    (f299,) = [code for (qualname, _line), code in found.items() if qualname == "f299"]
    assert not any("@pp" in used for used in f299.co_names)  # Python's code, not pathprof's
    assert key not in goback._module_codes  # (let go of once its functions are found)
    name = None  # (the hook stays installed: it matches nothing from here on)
