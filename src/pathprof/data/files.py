"""The names of the files pathprof's processes write beside a data file, and the
finding of them: one scheme names them (:func:`parallel_name`), one finder finds
them (:func:`combinable_files` for ``pathprof combine`` and ``erase``,
:func:`files_of` for a run collecting what its own processes wrote), as
coverage.py's ``filename_suffix`` and ``combinable_files`` do for ``.coverage``.
Standard library only: it runs inside the measured program.

The scheme. A process that cannot write the data file ``D`` itself writes, in the
same directory::

    D.<writer>.<host>.<pid>.<random>

``writer`` says what wrote it and for whom:

- ``child-<run>``: a child process of run ``<run>`` (``fork``, ``multiprocessing``,
  a ``subprocess`` running Python); the run's parent adds it into ``D`` when it
  saves, or the child itself once the parent has saved (the marks below;
  :mod:`pathprof.measure.children` says who takes which file).
- ``xdist-<run>-<worker>``: pytest-xdist worker ``<worker>`` (``gw0``...) of the
  session ``<run>``; the controller adds it into ``D`` as the session ends.
- ``copy-<k>of<K>``: copy ``k`` of a parallel run of ``K`` copies (beside the
  copy's calls file: the calls each of its processes counted, which the run adds up).
- ``saved``: a save that ``D`` would not take (locked, corrupt, another schema, a
  full disk); the warning names the file (beside ``D`` or in the temporary
  directory) and ``pathprof combine`` adds it in.

``<run>`` is the run's (or session's) token. ``<host>`` is this machine's name with
every character but ASCII letters, digits, ``_`` and ``-`` made ``_`` (so a name
has exactly these five dot-separated parts); ``<pid>`` the writing process's id;
``<random>`` eight hex digits drawn once per process (again in a forked child, whose
pid differs), so that a pid the system reuses, or the same pid on two machines
writing to one shared directory, still names a new file. Within one process the
name of a writer is the same at every save (a child, a worker, a copy's calls add
to or replace their own file), except ``saved``, which draws anew for every name
(``fresh``): a second failed save never replaces the first one's file, and a child's
second save (a file built whole, as the first) never replaces a first one not yet
added. Names never collide: two processes alive at once on one host differ in pid,
two hosts in host, two writers in writer, and a reused pid (almost surely) in random.

A file written beside such a file has its own part after that file's name: a child
of an xdist worker writes ``D.xdist-<run>-gw0.<host>.<pid>.<random>.child-<run2>...``.

The finder. :func:`combinable_files` takes what ``pathprof combine`` adds into ``D``
and ``pathprof erase`` removes: every regular file in ``D``'s directory named ``D.``
followed by anything, of this scheme or not (the names below that pathprof wrote
before it; files the user named ``D.one`` on other machines, as ``.coverage.*``),
except names ending in one of :data:`NOT_DATA`. It never takes ``D`` itself, nor
the files of another data file whose name starts as ``D``'s does (``D2``,
``D-old``, ``D2.child-...``: the dot after ``D`` is required). :func:`files_of`
takes, of those, the ones one writer of one run wrote directly beside ``D``, by
the scheme only: what a run collects from its own processes.

Marks. The processes of one run tell each other where its children stand by empty
files beside ``D`` (:func:`mark_name`, found by :func:`marks`)::

    D.child-<run>.<host>.<pid>.running      child <pid> runs the program
    D.child-<run>.<host>.<pid>.saving       it is saving, as it ends
    D.child-<run>.<host>.<pid>.<random>.forking
                                            process <pid> is forking a child (the
                                            child renames it to its ``running``)
    D.child-<run>.<host>.<pid>.pending      the run's parent <pid> has not yet saved
                                            into ``D``: a child leaves its file to it

A mark is named by its process's pid alone (no random part), so that the parent of a
``multiprocessing`` spawn child and the child itself name the same mark; a mark of
a process that no longer runs is stale (:func:`mark_alive`) and removed by the next
save of a run into ``D``. Marks end in one of :data:`MARKS`, all of them in
:data:`NOT_DATA`: no finder takes one as a data file.

Claims. ``pathprof combine`` renames each file it takes to :func:`claim_name`'s
``<file>.<target>.<host>.<pid>.<random>.claim`` before reading it (only one process
can rename a file away), adds it, then removes it; :func:`claims` finds them, and
:func:`running` tells a claim of a combine still running from one a killed combine
left (of this host, its process gone), which the next combine into the same data
file finishes. A claim ends in ``.claim``, one of :data:`NOT_DATA`.

Names before this scheme (pathprof 0.1.0), which :func:`combinable_files` still
finds (as it finds any ``D.*``) and :func:`files_of` does not (a run's own
processes write the new names): children ``D.<run>.<host>.<pid>`` (``<run>`` 12 hex
digits, the host as the system spells it, dots and all), xdist workers
``D.xdist.<run>.<worker>``, saves set aside ``D.saved-<pid>-<8 hex digits>``. The
copies' calls files were ``<calls file>.<pid>-<8 hex digits>``, in a parallel
run's scratch directory, which the run removes as it ends: none is left to find.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import socket
import stat
from dataclasses import dataclass

__all__ = ["CLAIM", "KINDS", "MARKS", "NOT_DATA", "Claim", "Mark", "Part", "claim_name",
           "claims", "combinable_files", "files_of", "host", "mark_alive", "mark_name",
           "marks", "parallel_name", "parse", "pid_runs", "running"]

#: What writes a file beside a data file (see the module docstring).
KINDS = ("child", "xdist", "copy", "saved")

#: Endings of names beside a data file that are never data files to combine or
#: erase: SQLite's side files of a database being written (the rollback journal,
#: the write-ahead log and its shared-memory index), files being written (built as
#: ``<name>.tmp`` and renamed once whole), and lock files (``<name>.lock``, as
#: SQLite's ``unix-dotfile`` locking makes), claims and marks.
NOT_DATA = ("-journal", "-wal", "-shm", ".tmp", ".lock", ".claim",
            ".forking", ".running", ".saving", ".pending")

#: The states a mark names, as its name ends (see "Marks" in the module docstring).
MARKS = ("forking", "running", "saving", "pending")

#: The ending of a file a ``pathprof combine`` claimed (:func:`claim_name`).
CLAIM = ".claim"

_WORD = re.compile(r"[^A-Za-z0-9_]")
_HOST = re.compile(r"[^A-Za-z0-9_-]")
_PART = re.compile(
    r"(?:child-(?P<child_run>\w+)|xdist-(?P<xdist_run>\w+?)-(?P<worker>\w+)"
    r"|copy-(?P<index>\d+)of(?P<copies>\d+)|(?P<saved>saved))"
    r"\.(?P<host>[\w-]+)\.(?P<pid>\d+)\.(?P<random>[0-9a-f]{8})", re.ASCII)

#: what :func:`parallel_name` needs for each kind
_NEEDS = {"child": ("run",), "xdist": ("run", "worker"), "copy": ("copy",), "saved": ()}
#: (pid, random) of this process: drawn again when the pid changes (a fork)
_drawn: tuple[int, str] | None = None


@dataclass(frozen=True)
class Part:
    """What one part of a name says (see the module docstring)."""

    kind: str
    host: str
    pid: int
    random: str
    run: str | None = None  #: child, xdist
    worker: str | None = None  #: xdist
    copy: tuple[int, int] | None = None  #: copy: (k, K)


def host() -> str:
    """This machine's name as names carry it (see the module docstring)."""
    return _HOST.sub("_", socket.gethostname()) or "host"


def _random(fresh: bool) -> str:
    global _drawn
    if fresh:
        return os.urandom(4).hex()
    if _drawn is None or _drawn[0] != os.getpid():
        _drawn = (os.getpid(), os.urandom(4).hex())
    return _drawn[1]


def _word(what: str, text: object) -> str:
    """``text`` as one word of a name: letters, digits, ``_``; others made ``_``."""
    word = _WORD.sub("_", str(text))
    if not word:
        raise ValueError(f"{what} must not be empty")
    return word


def parallel_name(data_file: str, kind: str, *, run: str | None = None,
                  worker: str | None = None, copy: tuple[int, int] | None = None,
                  fresh: bool = False) -> str:
    """The file a process of this ``kind`` writes beside ``data_file`` (a path, as
    given: the name is ``data_file`` with a part added). ``child`` needs ``run``;
    ``xdist`` needs ``run`` and ``worker``; ``copy`` needs ``copy=(k, K)``; ``saved``
    draws its random part anew for every name, the others once per process unless
    ``fresh``. Raises ValueError for a kind without what it needs."""
    given = {"run": run, "worker": worker, "copy": copy}
    if kind not in _NEEDS:
        raise ValueError(f"unknown kind of parallel data file {kind!r}; one of {KINDS}")
    missing = [what for what in _NEEDS[kind] if given[what] is None]
    if missing:
        raise ValueError(f"the name of a {kind} file needs {' and '.join(missing)}")
    if kind == "child":
        writer = f"child-{_word('run', run)}"
    elif kind == "xdist":
        writer = f"xdist-{_word('run', run)}-{_word('worker', worker)}"
    elif kind == "copy":
        assert copy is not None
        writer = f"copy-{int(copy[0])}of{int(copy[1])}"
    else:
        writer, fresh = "saved", True
    return f"{data_file}.{writer}.{host()}.{os.getpid()}.{_random(fresh)}"


def parse(name: str, data_file: str) -> list[Part] | None:
    """The parts of ``name`` (a file name or path) after ``data_file``'s, outermost
    first: one for a file written beside ``data_file``, more for a file written
    beside such a file; None for a name not of the scheme (or not beside it)."""
    base = os.path.basename(data_file) + "."
    name = os.path.basename(name)
    if not name.startswith(base):
        return None
    rest, parts, pos = name[len(base):], [], 0
    while True:
        match = _PART.match(rest, pos)
        if match is None:
            return None
        parts.append(_part(match))
        pos = match.end()
        if pos == len(rest):
            return parts
        if rest[pos] != ".":
            return None
        pos += 1


def _part(match: re.Match[str]) -> Part:
    host, pid, random = match["host"], int(match["pid"]), match["random"]
    if match["child_run"] is not None:
        return Part("child", host, pid, random, run=match["child_run"])
    if match["xdist_run"] is not None:
        return Part("xdist", host, pid, random, run=match["xdist_run"], worker=match["worker"])
    if match["index"] is not None:
        return Part("copy", host, pid, random, copy=(int(match["index"]), int(match["copies"])))
    return Part("saved", host, pid, random)


def _beside(data_file: str) -> list[str]:
    """The regular files named ``<data_file>.<something>`` in its directory, less
    names ending in :data:`NOT_DATA`, sorted; paths as ``data_file`` is given
    (relative stays relative). Nothing when the directory cannot be read."""
    directory, base = os.path.split(data_file)
    prefix = base + "."
    try:
        names = os.listdir(directory or os.curdir)
    except OSError:
        return []
    found = []
    for name in names:
        if not name.startswith(prefix) or name == prefix or name.endswith(NOT_DATA):
            continue
        path = os.path.join(directory, name)
        try:
            if not stat.S_ISREG(os.stat(path).st_mode):
                continue
        except OSError:  # removed meanwhile, or a dangling link
            continue
        found.append(path)
    return sorted(found)


@dataclass(frozen=True)
class Claim:
    """A file a ``pathprof combine`` took to add into a data file (see :func:`claim_name`)."""

    path: str  #: the claimed file, as found
    original: str  #: the name it had, beside it
    target: str  #: :func:`target_tag` of the data file it goes into
    host: str
    pid: int


_CLAIM = re.compile(r"(?P<original>.+)\.(?P<target>[0-9a-f]{8})\.(?P<host>[\w-]+)"
                    r"\.(?P<pid>\d+)\.[0-9a-f]{8}" + re.escape(CLAIM), re.ASCII)


def target_tag(data_file: str) -> str:
    """Eight hex digits naming the data file ``data_file`` (its real path) in a claim."""
    real = os.fsencode(os.path.realpath(data_file))
    return hashlib.sha256(real).hexdigest()[:8]


def claim_name(path: str, data_file: str) -> str:
    """The name ``pathprof combine`` gives ``path`` (renaming it: an atomic step, which
    only one process can take) while it adds it into ``data_file``, then removes it::

        <path>.<target>.<host>.<pid>.<random>.claim

    ``<target>`` names the data file (:func:`target_tag`): a claim left by a combine
    that was killed is finished by a later combine into the same data file only. A
    claim ends in :data:`CLAIM`, one of :data:`NOT_DATA`: no finder takes it as a file
    to combine or erase but :func:`claims`."""
    return (f"{path}.{target_tag(data_file)}.{host()}.{os.getpid()}.{os.urandom(4).hex()}"
            f"{CLAIM}")


def claims(directory: str) -> list[Claim]:
    """The claimed files in ``directory`` (:func:`claim_name`), sorted by path; paths
    are ``directory`` joined with the name (nothing when it cannot be read)."""
    try:
        names = os.listdir(directory or os.curdir)
    except OSError:
        return []
    found = []
    for name in sorted(names):
        match = _CLAIM.fullmatch(name)
        if match is None:
            continue
        path = os.path.join(directory, name)
        with contextlib.suppress(OSError):
            if stat.S_ISREG(os.stat(path).st_mode):
                found.append(Claim(path, os.path.join(directory, match["original"]),
                                   match["target"], match["host"], int(match["pid"])))
    return found


def running(claim_host: str, pid: int) -> bool | None:
    """Whether process ``pid`` of host ``claim_host`` (as :func:`host` names hosts) still
    runs: None when it is another host's, which cannot be asked."""
    if claim_host != host():
        return None
    return pid_runs(pid)


#: The largest process id there can be (``pid_t`` is a 32-bit signed int).
_PID_MAX = 2**31 - 1


def pid_runs(pid: int) -> bool:
    """Whether process ``pid`` of this host runs. ``pid`` is read from a file's name,
    input: a number no process has (0 and below name process groups to ``os.kill``,
    and past ``pid_t``'s range it raises ``OverflowError``) runs none. Another
    user's process, or one that cannot be asked, is taken to run."""
    if not 0 < pid <= _PID_MAX:
        return False
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process, or cannot tell: running
        return True
    return True


@dataclass(frozen=True)
class Mark:
    """A mark a process of run ``run`` left beside a data file (see "Marks" in the
    module docstring)."""

    path: str
    run: str
    host: str
    pid: int
    state: str  #: one of :data:`MARKS`


_MARK = re.compile(r"child-(?P<run>\w+)\.(?P<host>[\w-]+)\.(?P<pid>\d+)"
                   r"(?:\.(?P<random>[0-9a-f]{8}))?\.(?P<state>" + "|".join(MARKS) + ")",
                   re.ASCII)


def mark_name(data_file: str, run: str, state: str, *, pid: int | None = None) -> str:
    """The mark of process ``pid`` (this one by default) of run ``run`` in ``state``
    beside ``data_file`` (a path, as given); a ``forking`` mark draws its random part
    anew for every name. Raises ValueError for a state not in :data:`MARKS`."""
    if state not in MARKS:
        raise ValueError(f"unknown state of a mark {state!r}; one of {MARKS}")
    middle = f".{os.urandom(4).hex()}" if state == "forking" else ""
    pid = os.getpid() if pid is None else int(pid)
    return f"{data_file}.child-{_word('run', run)}.{host()}.{pid}{middle}.{state}"


def marks(data_file: str, run: str | None = None) -> list[Mark]:
    """The marks directly beside ``data_file`` (of run ``run``, when given), sorted by
    path; paths as ``data_file`` is given. Nothing when the directory cannot be read."""
    directory, base = os.path.split(data_file)
    prefix = base + "."
    try:
        names = os.listdir(directory or os.curdir)
    except OSError:
        return []
    wanted = None if run is None else _word("run", run)
    found = []
    for name in sorted(names):
        if not name.startswith(prefix):
            continue
        match = _MARK.fullmatch(name, len(prefix))
        if match is None or (match["random"] is None) == (match["state"] == "forking"):
            continue
        if wanted is not None and match["run"] != wanted:
            continue
        found.append(Mark(os.path.join(directory, name), match["run"], match["host"],
                          int(match["pid"]), match["state"]))
    return found


def mark_alive(mark: Mark) -> bool:
    """Whether the process of ``mark`` still runs. One of another host is taken to run
    (it cannot be asked); one that has ended and that its parent has not yet waited
    for (a zombie, as Linux's ``/proc`` tells) does not."""
    state = running(mark.host, mark.pid)
    if state is None:
        return True
    return state and not _zombie(mark.pid)


def _zombie(pid: int) -> bool:
    """Whether process ``pid`` has ended and is not yet waited for (where ``/proc``
    says so; elsewhere it cannot be told: False)."""
    try:
        with open(f"/proc/{int(pid)}/stat", "rb") as f:
            line = f.read()
    except OSError:
        return False
    end = line.rfind(b")")  # "<pid> (<name>) <state> ...": the name may hold anything
    return end >= 0 and line[end + 2:end + 3] in (b"Z", b"X")


def combinable_files(data_file: str) -> list[str]:
    """The files ``pathprof combine`` adds into ``data_file`` and ``pathprof erase``
    removes with it: every regular file ``<data_file>.*`` beside it, of any
    naming, less :data:`NOT_DATA` (see the module docstring)."""
    return _beside(data_file)


def files_of(data_file: str, kind: str, *, run: str | None = None) -> list[str]:
    """The files that writers of ``kind`` (of run ``run``, when given) wrote directly
    beside ``data_file`` under this scheme, sorted: what a run collects from its
    own child processes (``child``), a pytest session from its xdist workers
    (``xdist``), a parallel run from a copy's processes (``copy``)."""
    if kind not in KINDS:
        raise ValueError(f"unknown kind of parallel data file {kind!r}; one of {KINDS}")
    if run is not None:
        run = _word("run", run)
    found = []
    for path in _beside(data_file):
        parts = parse(path, data_file)
        if (parts is not None and len(parts) == 1 and parts[0].kind == kind
                and (run is None or parts[0].run == run)):
            found.append(path)
    return found
