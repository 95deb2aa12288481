"""The measurement API: :class:`Profiler` starts, stops and saves a measurement.

    import pathprof
    with pathprof.Profiler(source=["myapp"]):
        import myapp.main
        myapp.main.run()
    data = pathprof.load()

A profiler installs the import hook (:mod:`pathprof.measure.importhook`): modules
imported while it runs, and selected, are instrumented; their counters live in
:mod:`pathprof.runtime`. :meth:`Profiler.save` moves what was counted since the
last save into the data file, so saving is also the on-demand flush.

Processes: a child made by ``fork`` starts from zero (the parent keeps and saves
its own counts) and saves its counts when it exits — even through ``os._exit``,
as ``multiprocessing`` children do — into a file of its own beside the data file
(``D.child-<run>...``, :mod:`pathprof.data.files`); the parent adds the files of its
run's children into the data file when it saves.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import functools
import importlib.util
import os
import signal
import socket
import sqlite3
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from pathprof import config, runtime
from pathprof.config import CacheDir
from pathprof.contract import CopyShareInfo, FunctionInfo
from pathprof.data import files, store
from pathprof.data.modules import ModuleContract, Packed, Sources
from pathprof.data.profile import FunctionProfile, decision_vectors, edge_counts, numbering_of
from pathprof.exceptions import ConfigError, DataError
from pathprof.graph.copyplan import CopyShare
from pathprof.hashing import source_hash
from pathprof.measure import inplace, partial, stopping
from pathprof.measure.importhook import ImportHook, InstrumentOptions
from pathprof.measure.interpreter import require_gil
from pathprof.messages import warn
from pathprof.python.selection import Selection

__all__ = ["Profiler", "load", "save_on_sigterm"]

F = TypeVar("F", bound=Callable[..., Any])

DEFAULT_DATA_FILE = ".pathprof"
MODES = ("path", "edge")
METRICS = (None, "time")

_active: Profiler | None = None


class Profiler:
    """Measure path profiles of the selected code while started.

    Parameters mirror the command line: ``source``, ``include`` and ``omit`` select
    what is instrumented (see :class:`~pathprof.python.selection.Selection`; by
    default the current directory, never the standard library or site-packages);
    ``mode`` is ``"path"`` or ``"edge"``; ``metric="time"`` adds wall time per
    path; ``append`` adds to an existing data file instead of replacing it;
    ``stop_counting`` (``"never"``, ``"basis"`` or ``"paths"``) sends each function back
    to its original code once what ran spans its basis, or is all its paths
    (:mod:`pathprof.measure.stopping`; path mode without a metric, no contexts),
    and, with ``conditions``, once each of its decisions is done too;
    ``conditions`` (path mode, no metric) also counts each decision's evaluation
    vectors, for condition coverage and MC/DC (:mod:`pathprof.python.conditioncode`);
    ``cache_dir`` is where instrumented code is cached outside ``__pycache__``
    (:func:`pathprof.config.cache_dir`: by default ``PATHPROF_CACHE_DIR``, else
    ``.pathprof_cache`` beside the configuration file; a directory given, or that
    variable, is always used). A ``source`` entry that matched nothing imported is
    named on stderr when the profiler stops, unless ``warn_unmatched`` is false (the
    pytest plugin names it in its summary instead: :meth:`unmatched`).
    """

    def __init__(self, *, data_file: str = DEFAULT_DATA_FILE, source: Sequence[str] = (),
                 include: Sequence[str] = (), omit: Sequence[str] = (),
                 default_dirs: Sequence[str] | None = None, mode: str = "path",
                 metric: str | None = None, append: bool = False, cache: bool = True,
                 argv: Sequence[str] | None = None, stop_counting: str = "never",
                 cache_dir: str | CacheDir | None = None, warn_unmatched: bool = True,
                 conditions: bool = False) -> None:
        require_gil()
        if mode not in MODES:
            raise ConfigError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
        if metric not in METRICS:
            raise ConfigError(f"metric must be 'time' or None, not {metric!r}")
        if metric is not None and mode != "path":
            raise ConfigError("--metric time needs path mode")
        if stop_counting not in stopping.WHEN:
            raise ConfigError(f"stop counting must be one of {', '.join(stopping.WHEN)}, "
                              f"not {stop_counting!r}")
        if conditions and (mode != "path" or metric is not None):
            raise ConfigError("conditions are measured with path coverage: they need path "
                              "mode and no metric")
        if stop_counting != "never" and (mode != "path" or metric is not None):
            raise ConfigError("stopping counting is for path coverage: it needs path mode "
                              "and no metric")
        self.data_file = os.path.abspath(data_file)
        try:
            #: in one copy of a parallel run: which functions this copy profiles
            self.copy = partial.from_environment()
        except ValueError as err:
            raise ConfigError(str(err)) from err
        #: coverage that stops paying: when a function goes back to its original code
        self.stop_counting = stop_counting if self.copy is None else "never"
        self.options = InstrumentOptions(mode=mode, metric=metric,
                                         cache=cache and self.copy is None, copy_plan=self.copy,
                                         switches=self.stop_counting != "never",
                                         conditions=conditions,
                                         cache_dir=(cache_dir if isinstance(cache_dir, CacheDir)
                                                    else config.cache_dir(cache_dir)))
        self._stopping = (stopping.StopCounting(self.stop_counting)
                          if self.stop_counting != "never" else None)
        #: calls counted of the functions another copy profiles, by
        #: ``file|qualname|line|source hash``
        self.calls: dict[str, int] = {}
        self.selection = Selection(source, include, omit,
                                   [os.getcwd()] if default_dirs is None else default_dirs)
        self.warn_unmatched = warn_unmatched
        self.hook = ImportHook(self.selection, self.options)
        self.append = append
        self.argv = list(sys.argv if argv is None else argv)
        self.started_at = time.time()
        self._token = uuid.uuid4().hex[:12]
        self._saved_once = False
        self._started = False
        self._in_child = False
        self._context: str | None = None
        self._held: dict[tuple[str, str, int, str], FunctionProfile] = {}
        #: the contract of each instrumented module's functions, by id of its state
        #: (which the runtime keeps for good)
        self._contracts: dict[int, ModuleContract] = {}

    # -- start and stop -------------------------------------------------------

    def start(self) -> Profiler:
        with runtime.own_work:
            return self._start()

    def _start(self) -> Profiler:
        global _active
        if _active is not None and _active is not self:
            raise ConfigError("another pathprof Profiler is already running")
        _active = self
        self._started = True
        # Instrumented code counts whether or not a profiler runs: what it counted
        # while none ran (after an earlier profiler stopped) belongs to no run.
        runtime.take_snapshot()
        if self._stopping is not None:
            self._stopping.start()
        if not hasattr(self, "_known_before"):
            # Modules instrumented by an earlier profiler in this process: reported
            # only for what they count now, not as "measured, never run".
            self._known_before = {id(state) for state in runtime.modules()}
        runtime.set_hooks(after_fork_in_child=self._after_fork_in_child,
                          after_fork_in_parent=_patch_fork_popen)
        self.hook.install()
        # Selected modules imported before now: measured from now on, in place.
        report = inplace.instrument_imported(self.hook.already_imported(), self.options,
                                             shared=self.selection.is_third_party,
                                             stats=self.hook.stats)
        for message in report.messages():
            warn(message)
        return self

    def stop(self) -> None:
        with runtime.own_work:
            self._stop()

    def _stop(self) -> None:
        global _active
        self.hook.uninstall()
        if self._stopping is not None:
            self._stopping.stop()
        if self._started:
            self._hold(self._take(include_unrun=False))  # counted while running: ours
            for entry in self.unmatched() if self.warn_unmatched else ():
                warn(f"source {entry!r} matched no module or file imported while "
                     "measuring: nothing of it was measured")
        self._started = False
        if _active is self:
            _active = None
            runtime.set_hooks(after_fork_in_child=None)

    def unmatched(self) -> list[str]:
        """The ``source`` entries, as given, that no module or file imported while
        measuring fell under: nothing of them was measured."""
        return self.selection.unmatched()

    def __enter__(self) -> Profiler:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
        self.save()

    def __call__(self, func: F) -> F:
        """Use as a decorator: profile the modules imported while ``func`` runs."""

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self:
                return func(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    # -- saving ---------------------------------------------------------------

    def collect(self) -> tuple[list[FunctionProfile], Sources]:
        """Take (and reset) what the runtime counted; decode into function profiles.

        Includes what earlier :meth:`switch_context` calls set aside, so nothing
        counted is lost or counted twice; the source text of every function's file
        comes along, read when first asked for, if the file still holds what was
        instrumented (a source the data file holds already is not read at all)."""
        with runtime.own_work:
            self._hold(self._take(include_unrun=True))
            functions = list(self._held.values())
            self._held = {}
            sources = Sources()
            for file, digest in {(fn.file, fn.source_hash) for fn in functions}:
                sources.add(file, digest, Packed(load=functools.partial(
                    _read_source, file, digest)))
        return functions, sources

    def switch_context(self, context: str | None) -> None:
        """Attribute paths counted from now on to ``context`` (``None``: to none).

        What was counted since the last switch is set aside with the context it
        ran in; the data file then says which contexts ran each path (pytest's
        ``--pathprof-context=test`` switches at every test). Like coverage.py's
        dynamic contexts; the cost is one snapshot of the counters per switch.
        Contexts need every run of every path: not with ``stop_counting``."""
        if self.stop_counting != "never":
            raise ConfigError("contexts need every run of every path: a profiler that "
                              f"stops counting ({self.stop_counting!r}) cannot switch them")
        with runtime.own_work:
            self._hold(self._take(include_unrun=False))
        self._context = context

    def _hold(self, functions: list[FunctionProfile]) -> None:
        for fn in functions:
            if self._context is not None:
                fn.mark_context(self._context)
            key = (fn.file, fn.qualname, fn.first_line, fn.source_hash)
            if key in self._held:
                self._held[key].add(fn)
            else:
                self._held[key] = fn

    def _take(self, include_unrun: bool) -> list[FunctionProfile]:
        functions: list[FunctionProfile] = []
        known_before: set[int] = getattr(self, "_known_before", set())
        for (state, paths, cuts, raised, unattributed, times, closed,
             vectors) in runtime.take_snapshot():
            meta = state.meta
            digest = meta.source_hash
            contract = self._contract(state, digest)
            for i in range(len(meta.functions)):
                ran = (paths[i] or cuts[i] or raised[i] or unattributed[i]
                       or (i < len(vectors) and vectors[i]))
                if not ran:  # (most functions of a big program): its row stays a row
                    if meta.calls_only(i):
                        qualname, code_line = meta.outline(i)[:2]
                        key = f"{state.filename}|{qualname}|{code_line}|{digest}"
                        self.calls.setdefault(key, 0)
                    elif include_unrun and not self._in_child and id(state) not in \
                            known_before and i not in state.unmeasured:
                        # measured but never called: 0 of N paths
                        qualname, code_line = meta.outline(i)[:2]
                        functions.append(FunctionProfile(
                            state.filename, qualname, code_line, digest, None,
                            module=contract, position=i, stopped=state.stopped(i)))
                    continue
                fmeta = meta.functions[i]
                if fmeta.calls_only:
                    key = f"{state.filename}|{fmeta.qualname}|{fmeta.code_line}|{digest}"
                    self.calls[key] = self.calls.get(key, 0) + sum(paths[i].values())
                    continue
                fn = FunctionProfile(state.filename, fmeta.qualname, fmeta.code_line,
                                     digest, fmeta, module=contract, position=i)
                fn.counts = {str(k): v for k, v in paths[i].items()}
                fn.cuts = {f"{b}:{v}": c for (b, v), c in cuts[i].items()}
                if fmeta.share is not None:  # this copy's share of a split function
                    fn.counts, fn.cuts = _owned(fmeta, fmeta.share, paths[i], cuts[i])
                fn.times = {str(k): v for k, v in times[i].items()}
                if fmeta.mode == "edge":
                    fn.edges = edge_counts(fmeta, paths[i], cuts[i])
                    fn.counts, fn.cuts = {}, {}
                fn.raised, fn.unattributed, fn.closed = raised[i], unattributed[i], closed[i]
                fn.stopped = state.stopped(i)
                if i < len(vectors) and vectors[i]:
                    fn.vectors = decision_vectors(fmeta, vectors[i])
                if fmeta.share is not None and fmeta.share.index != fmeta.share.holder:
                    fn.raised = fn.unattributed = fn.closed = 0  # per call: one holder keeps
                if (fn.counts or fn.cuts or fn.edges or fn.raised or fn.unattributed
                        or fn.vectors):
                    functions.append(fn)
                elif (not self._in_child and id(state) not in known_before
                      and i not in state.unmeasured):
                    functions.append(fn)  # measured but never called: 0 of N paths
        return functions

    def _contract(self, state: Any, digest: str) -> ModuleContract:
        """The contract of ``state``'s module as the generated code handed it to the
        runtime: the data file keeps that text, compressed, encoding nothing again."""
        contract = self._contracts.get(id(state))
        if contract is None:
            contract = self._contracts[id(state)] = ModuleContract(
                state.filename, digest, Packed(state.meta_json), state.meta)
        return contract

    def child_settings(self) -> dict[str, Any]:
        """What a child process that starts a new interpreter needs to measure as part
        of this run (:mod:`pathprof.measure.children`)."""
        return {"data_file": self.data_file, "token": self._token,
                "source": list(self.selection.source), "include": list(self.selection.include),
                "omit": list(self.selection.omit),
                "default_dirs": list(self.selection.default_dirs), "mode": self.options.mode,
                "metric": self.options.metric, "cache": self.options.cache,
                "cache_dir": [self.options.cache_dir.path, self.options.cache_dir.configured],
                "stop_counting": self.stop_counting,
                "conditions": self.options.conditions}

    def run_info(self) -> store.RunInfo:
        version = ".".join(map(str, sys.version_info[:3]))
        return store.RunInfo(self.started_at, self.argv, version, self.options.mode,
                             self.options.metric, os.getpid(), socket.gethostname())

    def save(self) -> str:
        """Write what was counted since the last save; returns the file written.

        The first save of a run replaces the data file (or adds to it with
        ``append``); later saves add. If the data file cannot be written (locked,
        corrupt, damaged, another schema), the counts go to a new file beside it (or
        in the temporary directory) and a warning names it: nothing is overwritten,
        and nothing measured is lost unless no file can be written anywhere, which
        the warning then says.
        """
        with runtime.own_work:
            return self._save()

    def save_at_end(self) -> str:
        """The last save of a run (``pathprof run``): a SIGTERM that arrives meanwhile
        lets it finish, then ends the process as the signal would have."""
        self._saving = True
        try:
            return self.save()
        finally:
            self._saving = False
            if getattr(self, "_terminated_while_saving", False):
                _die_of_sigterm()

    def _save(self) -> str:
        functions, sources = self.collect()
        if self.copy is not None:  # a copy of a parallel run: the calls it counted
            self.copy.write_calls(self.calls)
        target = self.data_file
        append = self.append or self._saved_once
        if self._in_child:
            if not functions:  # nothing ran here: no file for the parent to add
                return target
            target = files.parallel_name(self.data_file, "child", run=self._token)
            append = True
        else:
            children, from_children = self._children()
            if children:
                functions += children
                sources.update(from_children)
        try:
            store.write(target, self.run_info(), functions, sources, append=append)
        except (DataError, OSError, sqlite3.Error) as err:
            target = self._save_elsewhere(functions, sources, err)
        else:
            if not self._in_child:
                self._remove_children()
        self._saved_once = True
        return target

    def _save_elsewhere(self, functions: list[FunctionProfile],
                        sources: Mapping[tuple[str, str], str], err: Exception) -> str:
        """The data file cannot be written (locked, corrupt, damaged, another schema,
        a read-only directory, a full disk, a file size limit): save the run beside
        it, or else in the temporary directory, and say where in one line; or, if
        nowhere takes it, say in one line that the run's data is lost, and why. Never
        raises for want of a place (``tempfile.gettempdir()`` raises when no directory
        takes a file, as under ``ulimit -f 0``). Returns where the run went (the data
        file itself if nowhere would take it)."""
        why = str(err) if isinstance(err, DataError) else f"cannot write {self.data_file}: {err}"
        why += _file_size_limit(err)
        name = os.path.basename(files.parallel_name(self.data_file, "saved"))
        directories = [os.path.dirname(self.data_file)]
        with contextlib.suppress(OSError):  # no usable temporary directory
            directories.append(tempfile.gettempdir())
        for directory in dict.fromkeys(directories):
            fallback = os.path.join(directory, name)
            try:
                store.write(fallback, self.run_info(), functions, sources)
            except (DataError, OSError, sqlite3.Error):
                continue
            warn(f"{why}; this run's data was saved to {fallback}")
            return fallback
        warn(f"{why}; nowhere else could take this run's data either: it is lost")
        return self.data_file

    # -- processes -------------------------------------------------------------

    def _child_files(self) -> list[str]:
        return files.files_of(self.data_file, "child", run=self._token)

    def _children(self) -> tuple[list[FunctionProfile], Sources]:
        """What the run's children saved in files of their own: their profiles, and
        the sources of what they measured."""
        self._child_paths = []
        found: list[FunctionProfile] = []
        sources = Sources()
        for path in self._child_files():
            try:
                measurement = store.read(path)
            except DataError as err:  # a child still writing, or killed mid-way
                warn(f"{err}; left for `pathprof combine`")
                continue
            found += measurement.functions
            sources.update(measurement.sources)
            self._child_paths.append(path)
        return found, sources

    def _remove_children(self) -> None:
        for path in getattr(self, "_child_paths", []):
            with contextlib.suppress(OSError):
                os.unlink(path)

    def _after_fork_in_child(self) -> None:
        self._in_child = True
        self._saved_once = False
        self._held = {}  # the parent's, set aside before the fork: the parent saves them
        self.calls = {}
        _patch_os_exit(self)
        # (last registered, first run: the child's save, then the freeze of its code)
        atexit.unregister(runtime.freeze_at_exit)
        atexit.register(runtime.freeze_at_exit)
        atexit.register(self._save_at_exit)
        _save_on_sigterm(self)

    def _save_at_exit(self) -> None:
        """Save a forked child's counts once, as it exits or is terminated.

        SIGTERM is ignored while saving: ``multiprocessing`` terminates workers
        that are already exiting, which would otherwise cut the save short. A
        SIGTERM whose Python handler runs during the save (the signal came just
        before it was ignored) is remembered and acted on once the save is done."""
        if not self._in_child or os.getpid() == getattr(self, "_saved_pid", None):
            return
        self._saving = True  # first: from here on, the SIGTERM handler only takes note
        previous = None
        with contextlib.suppress(ValueError, AttributeError):  # not the main thread
            previous = signal.signal(signal.SIGTERM, signal.SIG_IGN)
        self._saved_pid = os.getpid()
        try:
            self.save()
        finally:
            self._saving = False
            if previous is not None:
                with contextlib.suppress(ValueError):
                    signal.signal(signal.SIGTERM, previous)
            if getattr(self, "_terminated_while_saving", False):
                self._terminated_while_saving = False
                _die_of_sigterm()


def _file_size_limit(err: Exception) -> str:
    """`` (files cannot grow past N bytes here: ulimit -f)`` when ``err`` is a failed
    write and the process has a file size limit (SQLite says "disk I/O error" for
    the EFBIG a write past it gets); else nothing."""
    if getattr(err, "errno", None) != errno.EFBIG and "disk I/O error" not in str(err):
        return ""
    try:
        import resource

        limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    except (ImportError, OSError, ValueError, AttributeError):  # no such limit here
        return ""
    if limit == resource.RLIM_INFINITY:
        return ""
    return f" (files cannot grow past {limit:,} bytes here: ulimit -f)"


#: A forked child that ``multiprocessing`` terminated and that is still alive after
#: this many seconds is sent SIGTERM again (see :func:`_patch_fork_popen`).
RESEND_SIGTERM_AFTER = 1.0


def _patch_fork_popen() -> None:
    """Make ``terminate()`` of ``multiprocessing``'s forked children robust to a race
    in CPython's signal handling that pathprof's SIGTERM handler in the child exposes.

    A Python signal handler runs only when the main thread next executes bytecode.
    A SIGTERM that arrives just before the child's main thread blocks in a call
    that the signal then cannot interrupt (a ``Pool`` worker waiting for its queue's
    lock) is never handled: the child waits forever, and so does the parent's
    ``join()``. Sent again, SIGTERM interrupts the blocked call, the handler runs
    and the child saves its counts and dies. So a child terminated through
    ``Popen.terminate`` that is still alive after :data:`RESEND_SIGTERM_AFTER`
    seconds is sent SIGTERM again, every as many seconds, while the parent waits
    for it. Called in the parent after each fork, and before the first child that
    spawn or forkserver starts (:mod:`pathprof.measure.children`); patches ``popen_fork``
    (whose ``Popen`` the other two extend) once.
    """
    popen_fork = sys.modules.get("multiprocessing.popen_fork")
    if popen_fork is None or getattr(popen_fork.Popen.wait, "_pathprof", False):
        return
    popen = popen_fork.Popen
    original_wait, original_terminate = popen.wait, popen.terminate

    def forked_by_us(process: Any) -> bool:
        # the children pathprof measures: forked, or new interpreters started by
        # spawn and forkserver (pathprof.measure.children), with the same handler
        return type(process).__module__ in ("multiprocessing.popen_fork",
                                            "multiprocessing.popen_forkserver",
                                            "multiprocessing.popen_spawn_posix")

    def terminate(self: Any) -> None:
        if forked_by_us(self):
            self._pathprof_terminated = True
        original_terminate(self)

    def wait(self: Any, timeout: float | None = None) -> Any:
        if timeout is not None or not getattr(self, "_pathprof_terminated", False):
            return original_wait(self, timeout)
        while True:
            code = original_wait(self, RESEND_SIGTERM_AFTER)
            if code is not None:
                return code
            with contextlib.suppress(OSError):
                os.kill(self.pid, signal.SIGTERM)

    wait._pathprof = True  # type: ignore[attr-defined]
    popen.wait, popen.terminate = wait, terminate


def _die_of_sigterm() -> None:
    """End the process as an unhandled SIGTERM would have."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGTERM)


def _patch_os_exit(profiler: Profiler) -> None:
    """Make ``os._exit`` in a forked child save the child's counts first."""
    original = getattr(os._exit, "__wrapped__", os._exit)

    @functools.wraps(original)
    def _exit(status: int) -> None:
        with contextlib.suppress(Exception):  # never keep a child from exiting
            profiler._save_at_exit()
        original(status)

    os._exit = _exit  # type: ignore[assignment]


def _owned(meta: FunctionInfo, share: CopyShareInfo, paths: dict[int, int],
           cuts: dict[tuple[int, int], int]) -> tuple[dict[str, int], dict[str, int]]:
    """What one copy of a parallel run recorded for a function whose paths the
    copies split, as Ball-Larus numbers and prefix values, kept where the copy owns
    the path (:class:`~pathprof.graph.copyplan.CopyShare`)."""
    copy = CopyShare(numbering_of(meta), tuple(frozenset(t) for t in share.tasks),
                     share.copies, share.index)
    counts: dict[str, int] = {}
    for value, count in paths.items():
        number = copy.path(value)
        if number is not None:
            counts[str(number)] = counts.get(str(number), 0) + count
    owned_cuts: dict[str, int] = {}
    for (block, value), count in cuts.items():
        prefix = copy.cut(block, value)
        if prefix is not None:
            key = f"{block}:{prefix}"
            owned_cuts[key] = owned_cuts.get(key, 0) + count
    return counts, owned_cuts


def _save_on_sigterm(profiler: Profiler, save: Callable[[], Any] | None = None) -> None:
    """Killed by SIGTERM, save first, then die of the signal as the process would
    have (``multiprocessing.Pool.terminate`` in a forked child; ``kill``, a CI
    timeout or a container stop for ``pathprof run``; coverage.py's ``sigterm =
    true``). ``save`` is what saves (default: a forked child's save). Only when the
    program has not installed a SIGTERM handler of its own."""
    if not hasattr(signal, "SIGTERM"):  # pragma: no cover - Windows
        return
    save = save or profiler._save_at_exit
    try:
        if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
            return

        def on_sigterm(signum: int, frame: Any) -> None:
            if getattr(profiler, "_saving", False):  # a save is under way: finish it first
                profiler._terminated_while_saving = True
                return
            with contextlib.suppress(Exception):
                save()
            with contextlib.suppress(Exception):
                sys.stdout.flush()
                sys.stderr.flush()
            _die_of_sigterm()

        signal.signal(signal.SIGTERM, on_sigterm)
        _hide_handler(signal.SIGTERM, on_sigterm, signal.SIG_DFL)
    except ValueError:  # not the main thread: leave signals alone
        pass


def _hide_handler(signum: int, handler: Any, previous: Any) -> None:
    """The program sees the disposition of ``signum`` as it was before pathprof put
    ``handler`` there (``previous``): :func:`signal.getsignal` says so, and so does
    :func:`signal.signal` as it returns what it replaced -- a program or a library
    that installs its own handler only where none is set still does. Functions of
    :mod:`signal` bound before this (``from signal import getsignal``) see the
    handler."""
    getsignal, set_handler = signal.getsignal, signal.signal
    if getattr(getsignal, "_pathprof_hides", None) is not None:
        getsignal, set_handler = getsignal.__wrapped__, set_handler.__wrapped__  # type: ignore[attr-defined]

    @functools.wraps(getsignal)
    def hiding_getsignal(number: int) -> Any:
        current = getsignal(number)
        return previous if number == signum and current is handler else current

    @functools.wraps(set_handler)
    def hiding_signal(number: int, new: Any) -> Any:
        replaced = set_handler(number, new)
        return previous if number == signum and replaced is handler else replaced

    hiding_getsignal._pathprof_hides = handler  # type: ignore[attr-defined]
    signal.getsignal, signal.signal = hiding_getsignal, hiding_signal  # type: ignore[assignment]


def save_on_sigterm(profiler: Profiler) -> None:
    """``pathprof run``: a SIGTERM stops the profiler and saves the run's data, then
    the process dies of the signal (docs/guarantees.md)."""

    def save() -> None:
        profiler.stop()
        profiler.save_at_end()

    _save_on_sigterm(profiler, save)


def _read_source(filename: str, digest: str) -> str | None:
    """The source text, if the file still holds what was instrumented."""
    try:
        with open(filename, "rb") as f:
            data = f.read()
    except OSError:
        return None
    if source_hash(data) != digest:
        return None
    try:
        return importlib.util.decode_source(data)
    except (SyntaxError, UnicodeDecodeError):
        return None


def load(data_file: str = DEFAULT_DATA_FILE) -> store.Measurement:
    """Read a data file written by :class:`Profiler` or ``pathprof run``."""
    return store.read(data_file)
