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
run's children into the data file when it saves, and a child that ends after the
parent's save adds its own, exactly once either way (:mod:`pathprof.measure.handover`).
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
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, TypedDict, TypeVar

from pathprof import config, runtime
from pathprof.config import CacheDir
from pathprof.contract import CopyShareInfo, FunctionInfo
from pathprof.data import combining, files, store
from pathprof.data.measurement import Selection as Recorded
from pathprof.data.modules import ModuleContract, Packed, Sources
from pathprof.data.profile import FunctionProfile, decision_vectors, edge_counts, numbering_of
from pathprof.exceptions import ConfigError, DataError, PathprofError
from pathprof.graph.copyplan import CopyShare
from pathprof.hashing import source_hash
from pathprof.measure import handover, inplace, partial, stopping
from pathprof.measure.childexit import (
    die_of_sigterm,
    patch_fork_popen,
    patch_os_exit,
    save_on_sigterm,
)
from pathprof.measure.importhook import InstrumentOptions
from pathprof.measure.measuring import Measuring
from pathprof.messages import warn
from pathprof.runtime.passthrough import must_pass
from pathprof.types import Cut, PathId

if TYPE_CHECKING:
    from types import FrameType

    from pathprof.measure.children import ChildSettings
    from pathprof.runtime import ModuleState

__all__ = ["Profiler", "ProfilerSettings", "RunSettings", "load"]

F = TypeVar("F", bound=Callable[..., object])

DEFAULT_DATA_FILE = ".pathprof"
MODES = ("path", "edge")
METRICS = (None, "time")

_active: Profiler | None = None


class RunSettings(TypedDict, total=False):
    """:class:`Profiler`'s keywords but those a program gives (``default_dirs``,
    ``argv``), for what passes them on (:func:`pathprof.api.measured_run`)."""

    data_file: str
    source: Sequence[str]
    include: Sequence[str]
    omit: Sequence[str]
    mode: str
    metric: str | None
    append: bool
    cache: bool
    stop_counting: str
    cache_dir: str | CacheDir | None
    warn_unmatched: bool
    conditions: bool


class ProfilerSettings(RunSettings, total=False):
    """:class:`Profiler`'s keywords (:func:`pathprof.api.profiler`)."""

    default_dirs: Sequence[str] | None
    argv: Sequence[str] | None


class Profiler(Measuring):
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
        super().__init__(
            InstrumentOptions(mode=mode, metric=metric, cache=cache and self.copy is None,
                              copy_plan=self.copy, switches=self.stop_counting != "never",
                              conditions=conditions,
                              cache_dir=(cache_dir if isinstance(cache_dir, CacheDir)
                                         else config.cache_dir(cache_dir))),
            source=source, include=include, omit=omit, default_dirs=default_dirs)
        self._stopping = (stopping.StopCounting(self.stop_counting)
                          if self.stop_counting != "never" else None)
        #: calls counted of the functions another copy profiles, by
        #: ``file|qualname|line|source hash``
        self.calls: dict[str, int] = {}
        self.warn_unmatched = warn_unmatched
        self.append = append
        self.argv = list(sys.argv if argv is None else argv)
        self.started_at = time.time()
        self._token = uuid.uuid4().hex[:12]
        self._saved_once = False
        self._started = False
        #: whether it ever started (a run terminated before that saves nothing)
        self.started = False
        self._in_child = False
        #: the data file holds this run (a save into it succeeded): from then on the
        #: run's children add their own files (:mod:`pathprof.measure.handover`)
        self._in_data_file = False
        #: the ``pending`` mark this run's parent made, until it saves into the data file
        self._pending: str | None = None
        #: in a child: it announced itself (it has a ``running`` mark)
        self._announced = False
        #: the child files this save claimed: (the name each had, its claim)
        self._claimed: list[tuple[str, str]] = []
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
        self._started = self.started = True
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
                          after_fork_in_parent=patch_fork_popen)
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

    def __exit__(self, *exc: object) -> None:
        self.stop()
        self.save()

    def __call__(self, func: F) -> F:
        """Use as a decorator: profile the modules imported while ``func`` runs."""

        @functools.wraps(func)
        def wrapper(*args: object, **kwargs: object) -> object:
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
                fn.counts, fn.cuts = dict(paths[i]), dict(cuts[i])
                if fmeta.share is not None:  # this copy's share of a split function
                    fn.counts, fn.cuts = _owned(fmeta, fmeta.share, paths[i], cuts[i])
                fn.times = dict(times[i])
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

    def _contract(self, state: ModuleState, digest: str) -> ModuleContract:
        """The contract of ``state``'s module as the generated code handed it to the
        runtime: the data file keeps that text, compressed, encoding nothing again."""
        contract = self._contracts.get(id(state))
        if contract is None:
            contract = self._contracts[id(state)] = ModuleContract(
                state.filename, digest, Packed(state.meta_json), state.meta)
        return contract

    def child_settings(self) -> ChildSettings:
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

    def selections(self) -> list[Recorded]:
        """What this run measured, where it was named (none for the default
        directories): kept in the data file, so a later report counts the files under
        it that no run imported, as this run's own does."""
        named = self.selection.named()
        if not named:
            return []
        return [Recorded(tuple(named), tuple(self.selection.include),
                         tuple(self.selection.omit))]

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

        The files of the run's child processes go into the data file with it (each
        once: :mod:`pathprof.measure.handover`); a save once the profiler has
        stopped waits a bounded time for the children that are saving, and names in
        one line those still running (each adds its own counts as it ends).
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
                die_of_sigterm()

    def _save(self) -> str:
        functions, sources = self.collect()
        if self.copy is not None:  # a copy of a parallel run: the calls it counted
            self.copy.write_calls(self.calls)
        target = self.data_file
        append = self.append or self._saved_once
        last = not self._started  # stopped: the run's last save
        # (it waits for children that are saving, this long in all)
        until = time.monotonic() + handover.wait_limit()
        if self._in_child:
            if not functions:  # nothing ran here: no file for the parent to add
                return target
            # A file built whole and renamed into place at every save: no one finds
            # one half-written, and a second save never replaces a first one not yet
            # added (pathprof.measure.handover).
            target = files.parallel_name(self.data_file, "child", run=self._token,
                                         fresh=self._saved_once)
            append = False
        else:
            if last:  # children that are saving, as they end: a bounded time for them
                handover.wait(self.data_file, run=self._token, states=("saving",),
                              exclude=os.getpid(), timeout=until - time.monotonic())
            children, from_children = self._children()
            if children:
                functions += children
                sources.update(from_children)
        written = False
        try:
            store.write(target, self.run_info(), functions, sources, append=append,
                        selections=self.selections())
            written = True
        except (DataError, OSError, sqlite3.Error) as err:
            if must_pass(err):  # a signal handler's TimeoutError: the program's, not a
                raise  # place that refuses the data
            target = self._save_elsewhere(functions, sources, err)
        finally:
            # the claimed child files went where the run went, or are given back
            self._settle_claims(added=written or target != self.data_file)
        if written and self._in_child:
            handover.hand_over(self.data_file, self._token, target, warn)
        elif written:
            self._saved_into_data_file()
        self._saved_once = True
        if last:
            # Stopped: the contracts kept for saving again are made again if it does;
            # held till the interpreter exits, the collector walks them at every
            # collection and as it shuts down (tomlkit's suite: 12,000 objects).
            self._contracts.clear()
        if last and not self._in_child:
            if written:  # those that began saving meanwhile add their own files: let them
                handover.wait(self.data_file, run=self._token, states=("saving",),
                              exclude=os.getpid(),
                              timeout=max(0.0, until - time.monotonic()))
            self._say_children_left()
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
                store.write(fallback, self.run_info(), functions, sources,
                            selections=self.selections())
            except (DataError, OSError, sqlite3.Error) as failed:
                if must_pass(failed):
                    raise
                continue
            warn(f"{why}; this run's data was saved to {fallback}")
            return fallback
        warn(f"{why}; nowhere else could take this run's data either: it is lost")
        return self.data_file

    # -- processes -------------------------------------------------------------

    def _child_files(self) -> list[str]:
        return files.files_of(self.data_file, "child", run=self._token)

    def _children(self) -> tuple[list[FunctionProfile], Sources]:
        """What the run's children saved in files of their own, each claimed first
        (renamed: a child that ends meanwhile cannot add it too,
        :mod:`pathprof.measure.handover`): their profiles, and the sources of what
        they measured. A file that cannot be read is given back, and named."""
        self._settle_claims(added=False)
        found: list[FunctionProfile] = []
        sources = Sources()
        try:
            for path in self._child_files():
                claim = files.claim_name(path, self.data_file)
                try:
                    os.rename(path, claim)
                except OSError:  # its child added it itself meanwhile
                    continue
                try:
                    measurement = store.read(claim)
                except (PathprofError, OSError, sqlite3.Error) as err:  # damaged
                    if must_pass(err):
                        raise
                    _give_back(path, claim)
                    warn(f"{str(err).replace(claim, path)}; left for `pathprof combine`")
                    continue
                self._claimed.append((path, claim))
                found += measurement.functions
                sources.update(measurement.sources)
        except BaseException:
            self._settle_claims(added=False)
            raise
        return found, sources

    def _settle_claims(self, added: bool) -> None:
        """The child files this save claimed: removed once ``added`` (what they hold
        is saved), else given back their names."""
        claimed, self._claimed = self._claimed, []
        for path, claim in claimed:
            if added:
                with contextlib.suppress(OSError):
                    os.unlink(claim)
            else:
                _give_back(path, claim)

    def _children_may_start(self) -> None:
        """A child of this run may start now (a fork, a new interpreter): until a save
        has put the run into the data file, a child leaves its file to this process
        (the ``pending`` mark, :mod:`pathprof.measure.handover`)."""
        if not self._in_child and not self._in_data_file and self._pending is None:
            self._pending = handover.pending(self.data_file, self._token)

    def _saved_into_data_file(self) -> None:
        """The data file holds the run now: children that end from now on add their
        own files; the files left meanwhile (seen after ``pending`` went) are added
        here, each once (claimed by :func:`pathprof.data.combining.combine`)."""
        self._in_data_file = True
        if self._pending is not None:
            with contextlib.suppress(OSError):
                os.unlink(self._pending)
            self._pending = None
        late = self._child_files()
        if not late:
            return
        try:
            combining.combine(self.data_file, late, listed=True)
        except (PathprofError, OSError, sqlite3.Error) as err:
            if must_pass(err):
                raise
            for path in late:  # one at a time: what cannot be added stays, and is named
                try:
                    combining.combine(self.data_file, [path], listed=True)
                except (PathprofError, OSError, sqlite3.Error) as failed:
                    if must_pass(failed):
                        raise
                    warn(f"{failed}; left for `pathprof combine`")

    def _say_children_left(self) -> None:
        """The run's last save is done: remove the marks of processes gone, and say
        in one line which children still run (each adds its own counts as it ends).
        A copy of a parallel run does not: the run says it."""
        handover.remove_stale(self.data_file, own_forks=True)
        running = handover.live_children(self.data_file, self._token)
        if not running or self.copy is not None:
            return
        many = len(running) > 1
        shown = ", ".join(map(str, running[:5])) + (", ..." if len(running) > 5 else "")
        warn(f"{len(running)} child process{'es' if many else ''} of this run still "
             f"run{'' if many else 's'} (pid {shown}): {'each' if many else 'it'} adds "
             f"its counts into {self.data_file} itself when it "
             "ends; if it cannot, it says so, and `pathprof combine` adds them")

    def _after_fork_in_child(self, announce: bool = True) -> None:
        """This process is a child of the run (forked, or a new interpreter started by
        :mod:`pathprof.measure.childstart`): it saves into a file of its own as it
        ends; with ``announce``, it marks itself as running
        (:func:`pathprof.measure.handover.announce`), unless it was forked to run a
        new program at once (``subprocess`` with a ``preexec_fn``)."""
        forked, for_exec = getattr(_forking, "mark", None), getattr(_forking, "for_exec", False)
        _forking.mark, _forking.for_exec = None, False
        self._in_child = True
        self._saved_once = False
        self._held = {}  # the parent's, set aside before the fork: the parent saves them
        self.calls = {}
        self._claimed = []
        self._announced = announce and not for_exec
        if self._announced:
            handover.announce(self.data_file, self._token, forked=forked)
        patch_os_exit(self)
        atexit.register(self._save_at_exit)
        save_on_sigterm(self)

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
        if self._announced:
            handover.saving(self.data_file, self._token)
        try:
            self.save()
        finally:
            if self._announced:  # its counts are handed over (or could not be saved)
                handover.unmark(self.data_file, self._token)
            self._saving = False
            if previous is not None:
                with contextlib.suppress(ValueError):
                    signal.signal(signal.SIGTERM, previous)
            if getattr(self, "_terminated_while_saving", False):
                self._terminated_while_saving = False
                die_of_sigterm()


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


def _give_back(path: str, claim: str) -> None:
    """Give a claimed child file its name back (``pathprof combine`` then takes it)."""
    with contextlib.suppress(OSError):
        os.rename(claim, path)


#: Of the fork under way in this thread: the ``forking`` mark made for the child, and
#: whether the child runs a new program at once (see :func:`_before_fork`)
_forking = threading.local()


def _before_fork() -> None:
    """Before every ``fork`` of this process, while a profiler runs: a child of the run
    is about to exist. Its parent's ``pending`` mark is made if it must be, and a
    ``forking`` mark that the child renames to its own ``running`` mark, so that the
    child is known from the instant it exists (:mod:`pathprof.measure.handover`).
    Nothing for ``subprocess``'s fork (with a ``preexec_fn``): that child runs a new
    program at once."""
    _forking.mark, _forking.for_exec = None, False
    profiler = _active
    if profiler is None or not profiler._started:
        return
    if _forks_to_exec():
        _forking.for_exec = True
        return
    profiler._children_may_start()
    _forking.mark = handover.forking(profiler.data_file, profiler._token)


def _after_fork_in_parent() -> None:
    _forking.mark, _forking.for_exec = None, False


def _forks_to_exec() -> bool:
    """Whether the fork under way is ``subprocess``'s: its child runs a new program."""
    frame: FrameType | None = sys._getframe(2)
    for _ in range(4):
        if frame is None:
            return False
        if (frame.f_code.co_name == "_execute_child"
                and frame.f_globals.get("__name__") == "subprocess"):
            return True
        frame = frame.f_back
    return False


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_in_parent)


def child_starts() -> None:
    """A child that starts a new interpreter is about to start
    (:mod:`pathprof.measure.children`): as before a fork, the running profiler's
    ``pending`` mark is made if it must be."""
    profiler = _active
    if profiler is not None and profiler._started:
        profiler._children_may_start()


def _owned(meta: FunctionInfo, share: CopyShareInfo, paths: dict[int, int],
           cuts: dict[Cut, int]) -> tuple[dict[PathId, int], dict[Cut, int]]:
    """What one copy of a parallel run recorded for a function whose paths the
    copies split, as Ball-Larus numbers and prefix values, kept where the copy owns
    the path (:class:`~pathprof.graph.copyplan.CopyShare`)."""
    copy = CopyShare(numbering_of(meta), tuple(frozenset(t) for t in share.tasks),
                     share.copies, share.index)
    counts: dict[PathId, int] = {}
    for value, count in paths.items():
        number = copy.path(value)
        if number is not None:
            counts[number] = counts.get(number, 0) + count
    owned_cuts: dict[Cut, int] = {}
    for (block, value), count in cuts.items():
        prefix = copy.cut(block, value)
        if prefix is not None:
            owned_cuts[(block, prefix)] = owned_cuts.get((block, prefix), 0) + count
    return counts, owned_cuts


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
