"""Every Python process of the program is measured: children that are not forks,
and how every child's counts reach the data file.

A forked child carries the parent's profiler with it (:mod:`pathprof.measure.profiler`).
A child that starts a new interpreter — ``multiprocessing`` with ``spawn`` (the
default on macOS) or ``forkserver`` (the default on Linux from 3.14), or
``subprocess`` running Python — starts with nothing. For those, as coverage.py's
``patch = subprocess`` does:

- the parent puts the run's settings in the environment (:data:`VARIABLE`:
  data file, the run's token, selection, mode), which children inherit (and
  ``subprocess`` children given an ``env`` of their own get it added);
- the first time the program starts such a child, a ``.pth`` file is written into
  the interpreter's site-packages; every interpreter of that environment runs it
  at start-up, and :mod:`pathprof.measure.childstart` starts a profiler where the
  variable is set (and does nothing where it is not);
- each child saves into a file of its own beside the data file, named with the
  run's token, as forked children do.

Every child's file, forked or not, ends in the data file exactly once, without the
user doing anything (:mod:`pathprof.measure.handover`, which states the invariant
and the interleavings): the parent adds the files of children that ended before it
saved into the data file (a ``pending`` mark tells them to leave their files to it,
made before the first child can start: before a fork, and in :meth:`before_child`
here), and a child that ends later adds its own file itself; both take a file by
renaming it, which only one of them can. A child announces itself as it starts (a
``running`` mark; a ``multiprocessing`` spawn child is announced by the parent as soon
as its pid is known, :meth:`ChildMeasurement.spawned`), so that the parent waits at
its last save, a bounded time, for the children that are saving, and names in one
line the ones still running program code, which it does not wait for. A parallel run
waits for a copy's children before it compares the copies.

The ``.pth`` file is removed when the run ends; one left by a run killed with
``kill -9`` is removed by the next run. Where it cannot be written (a read-only
site-packages), children run unmeasured and pathprof says so once, naming the
first child.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sysconfig
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, TypedDict

from pathprof import runtime
from pathprof.data.files import pid_runs
from pathprof.measure import handover
from pathprof.messages import warn

if TYPE_CHECKING:
    from _typeshed import ConvertibleToInt, StrOrBytesPath

    class ChildSettings(TypedDict):
        """The run's settings as :data:`VARIABLE` carries them (JSON), from
        :meth:`pathprof.measure.profiler.Profiler.child_settings`."""

        data_file: str
        token: str
        source: list[str]
        include: list[str]
        omit: list[str]
        default_dirs: list[str]
        mode: str
        metric: str | None
        cache: bool
        #: :class:`pathprof.config.CacheDir`'s ``[path, configured]``
        cache_dir: list[str | bool]
        stop_counting: str
        conditions: bool

__all__ = ["VARIABLE", "ChildMeasurement"]

#: The environment variable that carries the run's settings to its children.
VARIABLE = "PATHPROF_CHILD"
_PTH = re.compile(r"pathprof-children-(\d+)-[0-9a-f]+\.pth")
#: The ``.pth`` file's one line: nothing of pathprof is imported where the variable
#: is not set (other programs of the environment that start meanwhile).
STARTUP_LINE = (f"import os; os.environ.get({VARIABLE!r}) and "
                "__import__('pathprof.measure.childstart', fromlist=['start']).start()\n")


class ChildMeasurement:
    """While a run lasts: its children that start a new interpreter are measured."""

    def __init__(self, settings: ChildSettings) -> None:
        self.settings = settings
        self.value = json.dumps(settings, separators=(",", ":"))
        self.directory = sysconfig.get_paths()["purelib"]
        self.pth = os.path.join(self.directory,
                                f"pathprof-children-{os.getpid()}-{settings['token']}.pth")
        self._written = False
        self._failed = False
        self._restore: list[Callable[[], None]] = []

    def start(self) -> None:
        os.environ[VARIABLE] = self.value
        self._remove_stale()
        self._wrap_starters()

    def stop(self) -> None:
        for restore in reversed(self._restore):
            restore()
        self._restore = []
        if os.environ.get(VARIABLE) == self.value:
            del os.environ[VARIABLE]
        if self._written:
            with contextlib.suppress(OSError):
                os.unlink(self.pth)
            self._written = False

    # -- before each child starts ------------------------------------------------

    def before_child(self, what: str, env: dict[str, str] | None = None) -> None:
        """A child is about to start a new interpreter: make sure it will measure."""
        with runtime.own_work:
            self._before_child(what, env)

    def _before_child(self, what: str, env: dict[str, str] | None) -> None:
        from pathprof.measure.profiler import child_starts

        child_starts()  # the child may end before the parent saves: it must know
        if env is not None and VARIABLE not in env:
            env[VARIABLE] = self.value
        if self._written or self._failed:
            return
        try:
            temp = f"{self.pth}.{os.getpid()}.tmp"
            with open(temp, "w", encoding="utf-8") as f:
                f.write(STARTUP_LINE)
            os.replace(temp, self.pth)
        except OSError as err:
            self._failed = True
            warn(f"child processes are not measured ({what} and any after it): cannot "
                 f"write {self.pth} ({err.strerror})")
            return
        self._written = True

    def spawned(self, pid: int, args: Sequence[object] | str | bytes) -> None:
        """``multiprocessing`` started process ``pid`` with ``args``: a worker (not a
        helper, such as the forkserver, which ends only when the parent does) that
        measures is announced now, before it starts up
        (:func:`pathprof.measure.handover.announce`)."""
        if not self._written or isinstance(args, str | bytes):
            return
        if any(isinstance(arg, str) and "spawn_main" in arg for arg in args):
            with runtime.own_work:
                handover.announce(self.settings["data_file"], self.settings["token"],
                                  pid=pid)

    def _wrap_starters(self) -> None:
        """Wrap what starts new interpreters: ``subprocess`` (every Popen, run, call)
        and ``multiprocessing``'s spawn and forkserver (which start theirs with
        ``multiprocessing.util.spawnv_passfds``)."""
        import multiprocessing.popen_fork
        import multiprocessing.util
        import subprocess

        from pathprof.measure.childexit import patch_fork_popen

        # A Pool's terminate() must reach children whose SIGTERM handler saves.
        patch_fork_popen()
        measurement = self
        # (private, so not in typeshed's stubs: the signature is CPython's)
        execute_child: Callable[..., None]
        execute_child = subprocess.Popen._execute_child  # type: ignore[attr-defined]

        def _execute_child(popen: object, args: StrOrBytesPath | Sequence[StrOrBytesPath],
                           executable: object, preexec_fn: object, close_fds: object,
                           pass_fds: object, cwd: object, env: Mapping[str, str] | None,
                           *rest: object, **kwargs: object) -> None:
            if env is not None:
                env = dict(env)
            measurement.before_child(f"subprocess {_describe(args)}", env)
            return execute_child(popen, args, executable, preexec_fn, close_fds, pass_fds,
                                 cwd, env, *rest, **kwargs)

        subprocess.Popen._execute_child = _execute_child  # type: ignore[attr-defined]
        self._restore.append(lambda: setattr(subprocess.Popen, "_execute_child",
                                             execute_child))
        spawnv = multiprocessing.util.spawnv_passfds

        # (typeshed's signature, which it must keep: multiprocessing passes str too)
        def spawnv_passfds(path: bytes, args: Sequence[ConvertibleToInt],
                           passfds: Sequence[int]) -> int:
            measurement.before_child(f"multiprocessing {_describe(args)}")
            pid = spawnv(path, args, passfds)
            measurement.spawned(pid, args)
            return pid

        multiprocessing.util.spawnv_passfds = spawnv_passfds
        self._restore.append(lambda: setattr(multiprocessing.util, "spawnv_passfds", spawnv))

    def _remove_stale(self) -> None:
        """Remove ``.pth`` files of runs that were killed before they could."""
        try:
            names = os.listdir(self.directory)
        except OSError:
            return
        for name in names:
            match = _PTH.fullmatch(name)
            if match and not pid_runs(int(match[1])):
                with contextlib.suppress(OSError):
                    os.unlink(os.path.join(self.directory, name))


def _describe(args: object) -> str:
    """What a child runs, in a short line (for the messages of a child that cannot be
    measured). ``args`` is what the program gave ``subprocess``: a string, a path
    object or a sequence of them; never an error of pathprof's in the program's
    ``subprocess`` call, whatever it is (``subprocess`` says what it does not take)."""
    try:
        if isinstance(args, str | bytes | os.PathLike):
            return repr(os.fspath(args))[:80]
        if isinstance(args, Iterable):
            return repr(list(args))[:80]
        return repr(args)[:80]
    except Exception:  # (a repr of the program's that raises)
        return f"<{type(args).__name__}>"
