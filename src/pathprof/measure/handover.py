"""The hand-over of a run's children's counts: every child's file ends in the data
file exactly once, whichever of the run's parent and the child ends first, without
the user doing anything, and no exit waits for a child that still runs the program.

A child of a run (forked, or a new interpreter: :mod:`pathprof.measure.children`)
saves into a file of its own beside the data file ``D``, built whole and then
renamed into place (:func:`pathprof.data.store.write`), so a file that can be found
is complete. The processes of the run tell each other where they stand by marks
beside ``D`` (named by :mod:`pathprof.data.files`):

- ``pending`` — the run's parent has not yet saved into ``D`` (it will replace it).
  The parent makes it before its first child can exist (before each ``fork``, and
  before it starts a new interpreter: :func:`pending`) and removes it once a save
  has put the run into ``D``.
- ``running`` — a child announces itself as it starts (:func:`announce`: in the
  after-fork hook, by renaming the ``forking`` mark its parent made just before the
  fork, so that no instant passes between the fork and the mark; a spawned
  interpreter at start-up, and for ``multiprocessing`` spawn children the parent
  too, as soon as it knows the pid); ``saving`` as its save begins (:func:`saving`);
  the mark goes once its file is handed over (:func:`unmark`).

The parent's save: (at its last save — the profiler stopped — it first waits, at most
:func:`wait_limit` seconds, for the children that are *saving*, never for one
that still runs program code), claims each child file of the run by renaming it
(:func:`pathprof.data.files.claim_name`: a step only one process can take), writes
its own counts with the claimed files' into ``D``, removes ``pending``, and then
adds with :func:`pathprof.data.combining.combine` (which claims each file the same
way) the child files that appeared meanwhile; at its last save it then waits again,
within the same bound, for the children that began saving meanwhile (they add their
own files).
A child that has not begun its save when the parent looks counts as running: it
adds its counts itself, after the parent has ended. A child's save: it writes its file,
then looks for ``pending`` (:func:`parent`): there (its parent alive), it leaves
the file to the parent; gone, it adds the file into ``D`` itself
(:func:`hand_over`, the same claiming combine).

Invariant: a child file that is written is added into ``D`` once and only once. Once:
each taker renames the file away before reading it, and only one rename of a name
succeeds. Not zero times: a child that found ``pending`` looked after its file was
whole and before the parent removed ``pending``; the parent lists the files after
that removal, so it finds this one (unless the child took it, which it does not).
A child that found no ``pending`` adds the file itself, into a ``D`` that already
holds the run (``pending`` goes only after the parent's write), so the parent's
replacing write cannot undo it; a later save of the parent adds to ``D``.

Interleavings, and what each gives:

- The child saves before the parent's listing: the parent claims and adds its file.
  After the listing and before ``pending`` goes: the parent's second listing finds
  it. After: the child adds it. Both at once: one claim wins.
- Children of children share the run's token: they mark and save the same way, and
  the run's parent gathers them (a ``forking`` mark is made by whichever process
  forks).
- ``os._exit``, SIGTERM (a ``Pool``'s ``terminate()``) and the end of the
  interpreter all reach the child's one save (:mod:`pathprof.measure.profiler`).
- A child killed with SIGKILL saves nothing; its mark names a process that is gone
  (or a zombie, which ``/proc`` tells), so nothing waits for it, and the next save of
  a run into ``D`` removes it (:func:`remove_stale`). A child killed while it
  writes leaves only a temporary file, which the next write there removes.
- The parent killed before it saved: ``pending`` names a process that is gone; a
  child then leaves its file beside ``D`` and says, in one line, that ``pathprof
  combine`` adds it (``D`` does not hold the run, so adding into it would mix the
  child's counts with an older run's). The parent killed after claiming files and
  before writing: the claims name a process that is gone, and the next ``pathprof
  combine`` into ``D`` adds them (:func:`pathprof.data.combining.combine`); killed in the
  instant after its write and before it removed them, the next combine adds them
  again (a write that replaces ``D`` cannot mark them as added, as a combine does).
- The parent's save refused by ``D`` (saved elsewhere): the claimed files go into
  that other file with the parent's counts; ``pending`` stays, so later children
  leave their files for ``pathprof combine``, as the warning about the other file
  says.
- A child that still runs program code when the parent ends (a daemon) is not
  waited for: the parent says so in one line, naming how many, and the child adds
  its counts itself when it ends. A child whose hand-over fails (``D`` locked for
  longer than SQLite waits, a full disk) keeps its file and says so, in one line:
  ``pathprof combine`` adds it.
- A ``multiprocessing`` spawn child is announced by its parent as soon as it is
  started; a ``subprocess`` child running Python only when its interpreter starts
  (until then the parent cannot know it will measure): one that the parent
  outruns is still handed over (by itself), but not waited for or named.
  ``multiprocessing``'s helper processes (the forkserver, the resource tracker),
  which end only when the parent does, are not announced.

A parallel run (:mod:`pathprof.parallel`) waits, after each copy ends, at most
:func:`wait_limit` seconds for the children the copy's marks name (:func:`wait`),
so that a copy's profile includes its children before the copies are compared.
Standard library only: it runs inside the measured program.
"""

from __future__ import annotations

import contextlib
import math
import os
import sqlite3
import time
from collections.abc import Callable, Iterable

from pathprof.data import combining, files
from pathprof.exceptions import PathprofError
from pathprof.runtime.passthrough import must_pass

__all__ = ["WAIT", "WAIT_VARIABLE", "announce", "forking", "hand_over", "live_children",
           "parent", "pending", "remove_stale", "saving", "unmark", "wait", "wait_limit"]

#: Seconds a run's parent waits at its last save for children that are saving, and a
#: parallel run after a copy ends for the copy's children; :data:`WAIT_VARIABLE`
#: (seconds) sets another bound.
WAIT = 10.0
WAIT_VARIABLE = "PATHPROF_CHILDREN_WAIT"
#: Seconds between the first two looks at the marks while waiting; then twice as
#: long each time, up to :data:`MOST_POLL`.
POLL = 0.02
MOST_POLL = 0.25
#: What a child's mark says while the process is alive.
CHILD_STATES = ("forking", "running", "saving")


def wait_limit() -> float:
    """How long to wait for children: :data:`WAIT_VARIABLE` if it holds a number of
    seconds (0 or more), else :data:`WAIT`."""
    try:
        seconds = float(os.environ.get(WAIT_VARIABLE) or WAIT)
    except ValueError:
        return WAIT
    return seconds if math.isfinite(seconds) and seconds >= 0 else WAIT


def _touch(path: str) -> bool:
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o666))
    except OSError:
        return False
    return True


def pending(data_file: str, run: str) -> str | None:
    """The parent of run ``run`` has not yet saved into ``data_file``: make its
    ``pending`` mark; the mark's path (None if it could not be made)."""
    path = files.mark_name(data_file, run, "pending")
    return path if _touch(path) else None


def forking(data_file: str, run: str) -> str | None:
    """This process of run ``run`` is about to fork a child: a ``forking`` mark, which
    the child renames to its own (:func:`announce`); its path, or None."""
    path = files.mark_name(data_file, run, "forking")
    return path if _touch(path) else None


def announce(data_file: str, run: str, *, pid: int | None = None,
             forked: str | None = None) -> None:
    """Process ``pid`` (this one by default), a child of run ``run``, runs: its
    ``running`` mark, renamed from ``forked`` (the ``forking`` mark its parent made)
    when given, else made."""
    target = files.mark_name(data_file, run, "running", pid=pid)
    if forked is not None:
        try:
            os.rename(forked, target)
        except OSError:
            pass
        else:
            return
    _touch(target)


def saving(data_file: str, run: str) -> None:
    """This child of run ``run`` begins its last save: its mark says ``saving``."""
    target = files.mark_name(data_file, run, "saving")
    try:
        os.rename(files.mark_name(data_file, run, "running"), target)
    except OSError:
        _touch(target)


def unmark(data_file: str, run: str) -> None:
    """This child of run ``run`` has handed its counts over: remove its marks (and
    the ``forking`` marks of forks of its own that failed)."""
    me = os.getpid()
    for mark in files.marks(data_file, run):
        if mark.pid == me and mark.host == files.host() and mark.state in CHILD_STATES:
            with contextlib.suppress(OSError):
                os.unlink(mark.path)


def parent(data_file: str, run: str) -> str:
    """Where the parent of run ``run`` stands: ``"pending"`` (it has not yet saved
    into ``data_file``, and runs), ``"gone"`` (it ended, or was killed, before it
    did), ``"saved"`` (``data_file`` holds the run)."""
    marks = [mark for mark in files.marks(data_file, run) if mark.state == "pending"]
    if not marks:
        return "saved"
    return "pending" if any(files.mark_alive(mark) for mark in marks) else "gone"


def hand_over(data_file: str, run: str, path: str, tell: Callable[[str], None]) -> None:
    """A child of run ``run`` has written its counts to ``path``: leave the file to
    the run's parent, or add it into ``data_file`` now (see the module docstring);
    ``tell`` hears, in one line, why it is left for ``pathprof combine``."""
    where = parent(data_file, run)
    if where == "pending":
        return
    if where == "gone":
        tell(f"the parent process of this run ended before it saved into {data_file}: "
             f"this process's counts are in {path}, which `pathprof combine` adds")
        return
    try:
        combining.combine(data_file, [path], listed=True)
    except (PathprofError, OSError, sqlite3.Error) as err:
        if must_pass(err):
            raise
        if os.path.exists(path):
            tell(f"cannot add this process's counts into {data_file} ({err}); they are "
                 f"in {path}, which `pathprof combine` adds")


def _live(marks: Iterable[files.Mark], states: tuple[str, ...], exclude: int | None
          ) -> list[files.Mark]:
    return [mark for mark in marks
            if mark.state in states and not (mark.pid == exclude and mark.host == files.host())
            and files.mark_alive(mark)]


def wait(data_file: str, *, run: str | None = None,
         states: tuple[str, ...] = CHILD_STATES, timeout: float | None = None,
         exclude: int | None = None, give_up: Callable[[], bool] | None = None
         ) -> list[files.Mark]:
    """Wait until no process alive has a mark in one of ``states`` beside
    ``data_file`` (of run ``run``, when given; process ``exclude`` aside), at most
    ``timeout`` seconds (:func:`wait_limit` by default), or until ``give_up()``; the
    marks of those still alive then."""
    deadline = time.monotonic() + (wait_limit() if timeout is None else timeout)
    pause = POLL
    while True:
        live = _live(files.marks(data_file, run), states, exclude)
        left = deadline - time.monotonic()
        if not live or left <= 0 or (give_up is not None and give_up()):
            return live
        time.sleep(min(pause, left))
        pause = min(2 * pause, MOST_POLL)


def live_children(data_file: str, run: str) -> list[int]:
    """The pids of the children of run ``run`` that have announced themselves and
    still run (this process aside), sorted."""
    return sorted({mark.pid for mark in _live(files.marks(data_file, run),
                                              ("running", "saving"), os.getpid())})


def remove_stale(data_file: str, *, own_forks: bool = False) -> None:
    """Remove the marks beside ``data_file`` of processes of this host that no longer
    run (of any run): children killed with SIGKILL, forks that failed; a ``pending``
    mark of a parent that is gone once no child of its run runs. With ``own_forks``,
    this process's ``forking`` marks too (it measures no more children)."""
    marks = files.marks(data_file)
    here, me = files.host(), os.getpid()
    alive = {mark.path: files.mark_alive(mark) for mark in marks if mark.host == here}
    runs_alive = {mark.run for mark in marks if mark.state != "pending"
                  and alive.get(mark.path, True)}
    for mark in marks:
        if mark.host != here:
            continue
        stale = not alive[mark.path]
        if mark.state == "pending":
            stale = stale and mark.run not in runs_alive
        elif mark.state == "forking" and own_forks and mark.pid == me:
            stale = True
        if stale:
            with contextlib.suppress(OSError):
                os.unlink(mark.path)
