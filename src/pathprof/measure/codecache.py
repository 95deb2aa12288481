"""The cache of instrumented code: where an entry is kept, reading and writing it.

An entry is kept in one of two places:

- ``__pycache__``, as Python keeps bytecode: beside the source (or under
  ``sys.pycache_prefix`` when one is set), ``<module>.<cache tag>.pathprof-<key>.pyc``;
- pathprof's own cache directory (:class:`pathprof.config.CacheDir`; by default
  ``.pathprof_cache`` in the configuration file's directory), outside the source tree:
  ``<dir>/<cache tag>/<module>.<hash of the source's path>[.opt-N].pathprof-<key>.pyc``,
  the hash keeping apart files of the same name in different directories, and ``opt-N``
  code compiled under ``-O``/``-OO`` (as Python names its ``.pyc``).

The rule: an entry is written to ``__pycache__`` when Python writes bytecode (no
``-B``, no ``PYTHONDONTWRITEBYTECODE``) and no cache directory is configured; else to
the cache directory. Where ``__pycache__`` cannot be written (a read-only tree,
a read-only site-packages), the cache directory takes the entry. An entry is read
from either place, the one written to first.

``<key>`` is the instrumentation options' tag (pathprof's version, the contract's and
the code generator's versions, the options); an entry's header holds the format
(:data:`_MAGIC`, bumped whenever the layout changes, so an older entry is simply not
used), the interpreter's magic number, the source's SHA-256, its path, and the SHA-256 of
the marshalled body that follows. Writes are atomic (a temporary file renamed into
place).

**An entry is executed only if pathprof wrote it** (POSIX; where there is no
``os.geteuid``, as on Windows, the ownership and mode checks are not made and the
body's hash still is). Before any byte of an entry is unmarshalled (``marshal.loads`` of
bytes pathprof did not write can crash the interpreter):

- the entry is opened without following a symbolic link (``O_NOFOLLOW``) and without
  blocking (a FIFO planted in its place cannot hang the program), and checked on the
  open file (``fstat``, not a ``stat`` of the path, which another process could swap in
  between): a regular file, owned by the effective uid or by root (who can change any
  file anyway, and whose entries a ``sudo pathprof`` run leaves), with no group or
  world write bit (pathprof never writes one so);
- its header must match the source, the path and the interpreter exactly, and its body
  the hash in the header, so a truncated, damaged or stale entry is not used either.

An owner's file that no one else could ever write has only the owner's (or root's)
bytes in it, so the two checks together mean pathprof's own: the hash in the header
guards against damage, the ownership against anyone else (who could recompute the hash).
An entry that fails any check counts as absent, and the write that follows a miss
replaces it (``os.replace`` replaces a symbolic link itself, never its target).

**pathprof's cache directory is used only if it is the user's**: owned by the
effective uid and writable by no one else (no world-write bit, no group-write bit unless
the group is the user's private group, as :func:`pathprof.config.writable_by_others`
says), and so its per-interpreter subdirectory; the directory itself may be a symbolic
link only of the user's (or root's) making, to a directory that passes. Whichever way
it was chosen (``--cache-dir``, ``PATHPROF_CACHE_DIR``, ``cache_dir``, the default), one
that fails is not read from or written to: one line says which directory and why, once
per process, and the run goes on uncached (``__pycache__`` still serves where Python
writes bytecode). A directory is checked once per process; one swapped afterwards (its
parent being writable by someone) gives nothing away, as every entry is checked on its
own. The places in ``__pycache__`` get no directory check: there, as for Python's own
bytecode, each entry's check is what counts.

**What pathprof creates no one else can write, whatever the umask** (which can only
take bits away): directories mode ``0o755`` (intermediate ones too), entries the source
file's read bits and the owner's write, so ``0o644`` at most (a private source gets a
private entry, as Python gives a ``.pyc`` its source's mode), each created exclusively
(``O_CREAT | O_EXCL | O_NOFOLLOW``, under an unguessable temporary name), so a file or
symbolic link planted at that name makes the write fail instead of writing through it.

When pathprof creates the cache directory it puts a ``.gitignore`` (``*``) and a
``CACHEDIR.TAG`` in it, as pytest and mypy do. When an entry can be written nowhere,
one line says so, once per process, and the run goes on without the cache.

Standard library only: this runs inside the measured program.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import marshal
import os
import stat
import sys
from typing import TYPE_CHECKING

from pathprof.config import (
    CACHE_DIR_VARIABLE,
    CacheDir,
    effective_uid,
    owner_name,
    writable_by_others,
)
from pathprof.messages import warn

if TYPE_CHECKING:
    from pathprof.measure.importhook import Unbound

__all__ = ["PYCACHE", "Places", "places", "read", "read_own", "write", "write_own"]

#: The entry format: "PPRF" and its version (2: the body's SHA-256 in the header).
_MAGIC = b"PPRF\x00\x02"
_BODY_HASH = 32  #: bytes of the body's SHA-256
#: What :func:`write` returns for an entry written to ``__pycache__``.
PYCACHE = "__pycache__"
GITIGNORE = "# Created by pathprof: its cache of instrumented code.\n*\n"
CACHEDIR_TAG = ("Signature: 8a477f597d28d172789f06886806bc55\n"
                "# This file is a cache directory tag created by pathprof.\n"
                "# For information about cache directory tags, see:\n"
                "#\thttps://bford.info/cachedir/spec.html\n")
_DIRECTORY_MODE = 0o755
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_READ = (os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | _NONBLOCK
         | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))
_CREATE = (os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
           | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))

_ready: set[str] = set()  #: directories this process checked (and made): trusted
_refused: set[str] = set()  #: directories this process refused
_said = False  #: the line that the cache cannot be used or written was said


class Places:
    """Where one entry is read from and written to, in order."""

    __slots__ = ("directory", "read", "write")

    def __init__(self, read: list[str], write: list[str], directory: str) -> None:
        self.read = read
        self.write = write
        self.directory = directory  #: the cache directory


def _pycache_entry(filename: str, name: str) -> str | None:
    try:
        normal = importlib.util.cache_from_source(filename)
    except (NotImplementedError, ValueError):
        return None
    return normal[: -len(".pyc")] + name


def _own_entry(filename: str, directory: str, name: str) -> str | None:
    tag = sys.implementation.cache_tag
    if tag is None:
        return None
    base = os.path.basename(filename)
    stem = base.rpartition(".")[0] or base
    key = hashlib.sha256(filename.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    optimized = f".opt-{sys.flags.optimize}" if sys.flags.optimize else ""
    return os.path.join(directory, tag, f"{stem}.{key}{optimized}{name}")


def places(filename: str, tag: str, cache_dir: CacheDir, in_place: bool = False) -> Places:
    """Where the entry of ``filename`` for options tagged ``tag`` is (see the rule
    above; ``sys.dont_write_bytecode`` is read now)."""
    name = f".pathprof-{tag}{'-inplace' if in_place else ''}.pyc"
    pycache = _pycache_entry(filename, name)
    own = _own_entry(filename, cache_dir.path, name)
    if cache_dir.configured or sys.dont_write_bytecode:
        read, writes = [own, pycache], [own]
    else:
        read, writes = [pycache, own], [pycache, own]
    return Places([p for p in read if p is not None], [p for p in writes if p is not None],
                  cache_dir.path)


def _prefix(digest: bytes, filename: str) -> bytes:
    """The header up to the body's hash."""
    name = filename.encode("utf-8", "surrogatepass")
    return (_MAGIC + importlib.util.MAGIC_NUMBER + digest + len(name).to_bytes(4, "little")
            + name)


def read(where: Places, digest: bytes, filename: str) -> object:
    """The code cached for this source (``digest``, its SHA-256) in either place, or
    None: only from an entry that passes every check above (owner, mode, header, body
    hash; in the cache directory, the directory's too), and nothing else is unmarshalled."""
    prefix = _prefix(digest, filename)
    start = len(prefix) + _BODY_HASH
    for path in where.read:
        if _in(path, where.directory) and not _usable(where.directory, path):
            continue
        data = _read_entry(path)
        if data is None or len(data) <= start or not data.startswith(prefix):
            continue
        body = memoryview(data)[start:]
        if hashlib.sha256(body).digest() != data[len(prefix):start]:
            continue
        try:
            return marshal.loads(body)
        except (EOFError, ValueError, TypeError):
            continue
    return None


def _read_entry(path: str, most: int = -1) -> bytes | None:
    """The bytes of the entry at ``path`` if pathprof wrote it (checked on the open
    file), else None; with ``most``, no more than that many."""
    try:
        fd = os.open(path, _READ)
    except OSError:
        return None  # absent, or a symbolic link (O_NOFOLLOW: ELOOP)
    try:
        if not _written_by_us(os.fstat(fd)):
            return None
        if _NONBLOCK:
            os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read(most)
    except OSError:
        return None
    finally:
        os.close(fd)


def _written_by_us(status: os.stat_result) -> bool:
    """A regular file of the effective uid or root that no one else can write."""
    if not stat.S_ISREG(status.st_mode):
        return False
    euid = effective_uid()
    if euid is None:
        return True
    return status.st_uid in (euid, 0) and not status.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def _in(path: str, directory: str) -> bool:
    """Whether ``path`` names a file under ``directory``, read as the system reads it:
    a ``..`` that climbs out (``directory/../x``) does not."""
    return os.path.normpath(path).startswith(os.path.normpath(directory) + os.sep)


def _usable(directory: str, entry: str) -> bool:
    """Whether entries may be read from and written to the cache directory
    ``directory``, where ``entry`` is one (the directory and its per-interpreter
    subdirectory exist and are the user's, see above); says why not, once, when one of
    them exists and is not."""
    return _trusted(directory, (directory, os.path.dirname(entry)))


def _trusted(directory: str, paths: tuple[str, ...]) -> bool:
    """Whether each of ``paths`` (the cache directory ``directory``, then its
    subdirectories) is one to keep pathprof's code in, as :func:`_usable` says."""
    if directory in _refused:
        return False
    for path in paths:
        if path in _ready:
            continue
        why = _distrust(path)
        if why is None:
            _ready.add(path)
            continue
        if why:  # (empty: absent, or no directory: nothing to read, and writes fail)
            _refused.add(directory)
            _say_refused(directory, path, why)
        return False
    return True


def _distrust(path: str) -> str | None:
    """Why the directory at ``path`` is not one to keep pathprof's code in (None: it
    is one; empty: there is no directory there)."""
    try:
        status = os.lstat(path)
    except OSError:
        return ""
    euid = effective_uid()
    if stat.S_ISLNK(status.st_mode):
        if euid is not None and status.st_uid not in (euid, 0):
            return f"it is a symbolic link that belongs to {owner_name(status.st_uid)}"
        try:
            status = os.stat(path)
        except OSError:
            return ""
    if not stat.S_ISDIR(status.st_mode):
        return ""
    if euid is None:
        return None
    if status.st_uid != euid:
        return f"it belongs to {owner_name(status.st_uid)}, not to you"
    return writable_by_others(status, path)


def write(where: Places, digest: bytes, filename: str, code: Unbound) -> str | None:
    """Cache ``code`` in the first place that takes it: :data:`PYCACHE` or the cache
    directory, whichever it was; None (and one line, once) where none did. Only the
    code is written: a refused cache directory is left as it is."""
    body = marshal.dumps(code)
    data = _prefix(digest, filename) + hashlib.sha256(body).digest() + body
    mode = _entry_mode(filename)
    failed: tuple[str, OSError] | None = None
    for path in where.write:
        own = _in(path, where.directory)
        try:
            if own:
                if where.directory in _refused:
                    continue
                _make_directory(where.directory)
                if not _trusted(where.directory, (where.directory,)):
                    continue  # (refused: nothing made in it)
                _make_directories(os.path.dirname(path))
                if not _usable(where.directory, path):
                    continue
            _write_atomically(path, data, mode)
        except OSError as err:
            if own or failed is None:
                failed = (where.directory if own else os.path.dirname(path), err)
            continue
        return where.directory if own else PYCACHE
    if failed is not None:
        _say_uncached(*failed)
    return None


def read_own(directory: str, relative: str, most: int) -> bytes | None:
    """The bytes of pathprof's own file ``relative`` in the cache directory
    ``directory`` (not code: data pathprof keeps, :mod:`pathprof.analysis.memo`'s),
    under the same checks as an entry (the directory the user's, the file pathprof's),
    and at most ``most`` of them; None if any check fails or the file is larger."""
    path = os.path.join(directory, relative)
    if not _in(path, directory) or not _usable(directory, path):
        return None
    data = _read_entry(path, most + 1)
    return data if data is not None and len(data) <= most else None


def write_own(directory: str, relative: str, data: bytes) -> bool:
    """Write pathprof's own file ``relative`` in the cache directory as an entry is
    written (atomically, no one else able to write it; mode ``0o600``: what reports
    derived from the user's code); whether it was."""
    path = os.path.join(directory, relative)
    if not _in(path, directory) or directory in _refused:
        return False
    try:
        _make_directory(directory)
        if not _trusted(directory, (directory,)):
            return False  # (refused: nothing made in it)
        _make_directories(os.path.dirname(path))
        if not _usable(directory, path):
            return False
        _write_atomically(path, data, 0o600)
    except OSError:
        return False
    return True


def _entry_mode(filename: str) -> int:
    """The source's read bits, and the owner's read and write: ``0o644`` at most."""
    try:
        source = os.stat(filename).st_mode
    except OSError:
        return 0o600
    return (source & 0o444) | 0o600


def _temporary(path: str) -> str:
    """An unguessable name beside ``path`` (so no one can plant a file there first)."""
    return f"{path}.{os.getpid()}.{os.urandom(8).hex()}.tmp"


def _write_atomically(path: str, data: bytes, mode: int) -> None:
    _make_directories(os.path.dirname(path))
    temp = _temporary(path)
    try:
        fd = os.open(temp, _CREATE, mode)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(temp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def _make_directories(directory: str) -> None:
    """``os.makedirs(directory, exist_ok=True)``, with every directory it makes mode
    ``0o755`` (``os.makedirs`` gives intermediate ones the umask's)."""
    try:
        os.mkdir(directory, _DIRECTORY_MODE)
    except FileExistsError:
        return
    except FileNotFoundError:
        parent = os.path.dirname(directory)
        if parent == directory:
            raise
        _make_directories(parent)
        with contextlib.suppress(FileExistsError):
            os.mkdir(directory, _DIRECTORY_MODE)


def _make_directory(directory: str) -> None:
    """Make sure the cache directory exists; one pathprof creates gets its
    ``.gitignore`` and ``CACHEDIR.TAG``, whole (made aside, then renamed into place)."""
    if directory in _ready:
        return
    if not os.path.isdir(directory):
        _make_directories(os.path.dirname(directory))
        temp = _temporary(directory)
        os.mkdir(temp, _DIRECTORY_MODE)
        try:
            for name, text in ((".gitignore", GITIGNORE), ("CACHEDIR.TAG", CACHEDIR_TAG)):
                fd = os.open(os.path.join(temp, name), _CREATE, 0o644)
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    f.write(text)
            os.rename(temp, directory)
        except OSError:
            for name in (".gitignore", "CACHEDIR.TAG"):
                with contextlib.suppress(OSError):
                    os.unlink(os.path.join(temp, name))
            with contextlib.suppress(OSError):
                os.rmdir(temp)
            if not os.path.isdir(directory):  # (else another process made it meanwhile)
                raise


def _say_refused(directory: str, path: str, why: str) -> None:
    global _said
    if _said:
        return
    _said = True
    if path != directory:
        why = f"{os.path.basename(path)} in it: {why}"
    warn(f"not using the cache directory {directory}: {why}, so the code in it may not be "
         f"pathprof's; every run instruments from scratch: remove it (or make it yours "
         f"alone: chmod go-w), or set {CACHE_DIR_VARIABLE} or cache_dir in [tool.pathprof] "
         "to a directory of your own")


def _say_uncached(where: str, err: OSError) -> None:
    global _said
    if _said:
        return
    _said = True
    warn(f"no cache of instrumented code can be written ({where}: {err.strerror or err}), "
         f"so every run instruments from scratch: set {CACHE_DIR_VARIABLE} or cache_dir "
         "in [tool.pathprof] to a writable directory")
