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
the code generator's versions, the options); an entry's header holds the interpreter's
magic number, the source's SHA-256 and its path, and an entry that does not match
them exactly (another source, another file, a truncated or corrupt entry) is not
used, and is overwritten. Writes are atomic (a temporary file renamed into place).

When pathprof creates the cache directory it puts a ``.gitignore`` (``*``) and a
``CACHEDIR.TAG`` in it, as pytest and mypy do. When an entry can be written nowhere,
one line says so, once per process, and the run goes on without the cache.

Standard library only: this runs inside the measured program.
"""

from __future__ import annotations

import _thread
import contextlib
import hashlib
import importlib.util
import marshal
import os
import sys
from typing import Any

from pathprof.config import CACHE_DIR_VARIABLE, CacheDir
from pathprof.messages import warn

__all__ = ["PYCACHE", "Places", "places", "read", "write"]

_MAGIC = b"PPRF"
#: What :func:`write` returns for an entry written to ``__pycache__``.
PYCACHE = "__pycache__"
GITIGNORE = "# Created by pathprof: its cache of instrumented code.\n*\n"
CACHEDIR_TAG = ("Signature: 8a477f597d28d172789f06886806bc55\n"
                "# This file is a cache directory tag created by pathprof.\n"
                "# For information about cache directory tags, see:\n"
                "#\thttps://bford.info/cachedir/spec.html\n")

_ready: set[str] = set()  #: cache directories that exist (this process made sure)
_said = False  #: the line that no cache can be written was said


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


def _header(digest: bytes, filename: str) -> bytes:
    name = filename.encode("utf-8", "surrogatepass")
    return (_MAGIC + importlib.util.MAGIC_NUMBER + digest + len(name).to_bytes(4, "little")
            + name)


def read(where: Places, digest: bytes, filename: str) -> Any | None:
    """The code cached for this source (``digest``, its SHA-256) in either place, or
    None."""
    prefix = _header(digest, filename)
    for path in where.read:
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError:
            continue
        if not data.startswith(prefix):
            continue
        try:
            return marshal.loads(data[len(prefix):])
        except (EOFError, ValueError, TypeError):
            continue
    return None


def write(where: Places, digest: bytes, filename: str, code: Any) -> str | None:
    """Cache ``code`` in the first place that takes it: :data:`PYCACHE` or the cache
    directory, whichever it was; None (and one line, once) where none did."""
    data = _header(digest, filename) + marshal.dumps(code)
    failed: tuple[str, OSError] | None = None
    for path in where.write:
        own = path.startswith(where.directory + os.sep)
        try:
            if own:
                _make_directory(where.directory)
            _write_atomically(path, data)
        except OSError as err:
            if own or failed is None:
                failed = (where.directory if own else os.path.dirname(path), err)
            continue
        return where.directory if own else PYCACHE
    if failed is not None:
        _say_uncached(*failed)
    return None


def _write_atomically(path: str, data: bytes) -> None:
    temp = f"{path}.{os.getpid()}.{_thread.get_ident()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(temp, "wb") as f:
            f.write(data)
        os.replace(temp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def _make_directory(directory: str) -> None:
    """Make sure the cache directory exists; one pathprof creates gets its
    ``.gitignore`` and ``CACHEDIR.TAG``, whole (made aside, then renamed into place)."""
    if directory in _ready:
        return
    if not os.path.isdir(directory):
        os.makedirs(os.path.dirname(directory), exist_ok=True)
        temp = f"{directory}.{os.getpid()}.{_thread.get_ident()}.tmp"
        os.mkdir(temp)
        try:
            for name, text in ((".gitignore", GITIGNORE), ("CACHEDIR.TAG", CACHEDIR_TAG)):
                with open(os.path.join(temp, name), "w", encoding="utf-8") as f:
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
    _ready.add(directory)


def _say_uncached(where: str, err: OSError) -> None:
    global _said
    if _said:
        return
    _said = True
    warn(f"no cache of instrumented code can be written ({where}: {err.strerror or err}), "
         f"so every run instruments from scratch: set {CACHE_DIR_VARIABLE} or cache_dir "
         "in [tool.pathprof] to a writable directory")
