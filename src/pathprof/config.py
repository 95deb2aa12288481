"""Configuration from ``.pathprofrc`` or ``[tool.pathprof]`` in ``pyproject.toml``, as
coverage.py reads ``.coveragerc`` or ``[tool.coverage.run]``. Flags override it.

The nearest directory at or above the current one that has either file is used (of
those the rule of *Whose files are read*, below, lets pathprof look at); a
``.pathprofrc`` there wins over its ``pyproject.toml``. ``.pathprofrc`` is TOML with
the same keys at the top level (or under ``[tool.pathprof]``).

Keys, named as the flags are (``-`` or ``_``): ``source``, ``include``, ``omit``,
``report`` (lists of strings), ``data_file``, ``mode`` (``"path"`` or ``"edge"``),
``metric`` (``"time"``), ``context`` (``"test"``), ``stop_counting`` (``"never"``,
``"basis"`` or ``"paths"``), ``fail_under`` (a number), ``cache_dir`` (a directory);
what coverage leaves out, as coverage.py's ``[report]`` names it: ``exclude_lines``
(regular expressions, replacing the default ``# pragma: no cover``), ``exclude_also``
(added to it), ``exclude_kinds`` (the kinds excluded by default: ``"overload"``,
``"type-checking"``, ``"abstract"``; ``[]`` turns them off) and
``coverage_exclusions`` (true: also take ``exclude_lines`` and ``exclude_also`` from
coverage.py's configuration, :func:`coverage_py_exclusions`).
Relative paths in ``source``, ``data_file`` and ``cache_dir`` are relative to the file's
directory.

Where instrumented code is cached is :func:`cache_dir`'s answer: ``--cache-dir``, else
:data:`CACHE_DIR_VARIABLE`, else ``cache_dir``, else :data:`CACHE_DIR_NAME` in the
directory of the configuration file (or the current one).

**Whose files are read.** A configuration file names the cache of instrumented code
that pathprof executes, so the search upwards takes nothing someone else could have put
there (POSIX; where there is no ``os.geteuid``, as on Windows, no check is made):

- The *starting* directory is looked at when no one but its owner can write it,
  whoever the owner is: working in a directory is trusting its owner, as running the
  code it holds is, so a checkout owned by another uid (a container's bind mount, an
  image's root-owned copy) keeps working. One that others can write (``/tmp``, sticky or
  not, a group-shared directory) is not looked at, and the search ends there.
- A directory above it is looked at only when it is on the same file system as the one
  below it (no ``st_dev`` change), no one but its owner can write it, and its owner is the
  user (the effective uid), root (who can change any file anyway) or the starting
  directory's owner (already trusted). The search ends at the first that is not.
- A configuration file is read only when it is a regular file of one of those owners that
  no one else can write, checked again on the open file (``fstat``), so a file swapped in
  between the search and the read is not taken.
- "No one but its owner can write" means no world-write bit, and no group-write bit
  unless the group is its owner's private group: the owner's primary group, named as the
  owner, with no other member listed and no ACL on the file (the "user private group"
  that a umask of 002 relies on). Another account given that group as its primary one is
  outside what this can see.

Where the search ends at a directory or file it does not trust that holds (or is) a
configuration file, one line says which and why (:func:`pathprof.messages.warn`) and no
configuration is read; ending at a file system boundary says nothing. Whatever directory
is chosen for the cache is checked again by :mod:`pathprof.measure.codecache`.
"""

from __future__ import annotations

import functools
import os
import stat
from dataclasses import dataclass, field
from typing import Any

from pathprof.exceptions import ConfigError
from pathprof.messages import warn

__all__ = ["CACHE_DIR_NAME", "CACHE_DIR_VARIABLE", "CacheDir", "Config", "Threshold",
           "cache_dir", "configured_cache_dir", "effective_uid", "owner_name", "read_config",
           "writable_by_others"]

_LISTS = ("source", "include", "omit", "report", "exclude_lines", "exclude_also",
          "exclude_kinds")
_BOOLEANS = ("coverage_exclusions", "conditions")
_STRINGS = ("data_file", "mode", "metric", "context", "stop_counting", "cache_dir")
#: Settings that are paths: relative to the configuration file's directory.
_PATHS = ("data_file", "cache_dir")
_NUMBERS = ("fail_under", "fail_under_mcdc")
RC_FILE = ".pathprofrc"


@dataclass
class Config:
    source: list[str] = field(default_factory=list)
    include: list[str] = field(default_factory=list)
    omit: list[str] = field(default_factory=list)
    data_file: str | None = None
    mode: str | None = None
    metric: str | None = None
    report: list[str] = field(default_factory=list)
    context: str | None = None
    stop_counting: str | None = None
    fail_under: float | None = None
    #: the least total MC/DC (masking), in percent, of a run with conditions measured
    fail_under_mcdc: float | None = None
    cache_dir: str | None = None
    #: None: coverage.py's default pattern (``# pragma: no cover``)
    exclude_lines: list[str] | None = None
    exclude_also: list[str] = field(default_factory=list)
    #: None: every default kind
    exclude_kinds: list[str] | None = None
    coverage_exclusions: bool = False
    #: measure each decision's evaluation vectors too: condition coverage and MC/DC
    conditions: bool = False
    path: str | None = None  #: the file read, if any

    def exclusion_settings(self) -> tuple[list[str] | None, list[str], list[str] | None]:
        """``(exclude_lines, exclude_also, exclude_kinds)``, with coverage.py's own
        patterns added when ``coverage_exclusions`` asks for them."""
        lines, also = self.exclude_lines, list(self.exclude_also)
        if self.coverage_exclusions:
            start = os.path.dirname(self.path) if self.path else "."
            theirs_lines, theirs_also = coverage_py_exclusions(start)
            if theirs_lines is not None:
                lines = (lines or []) + theirs_lines
            also += theirs_also
        return lines, also, self.exclude_kinds


@dataclass(frozen=True)
class Threshold:
    """A ``fail_under`` percentage and the setting it came from, as messages name it:
    ``--fail-under 80`` or ``fail_under = 80 in pyproject.toml``."""

    percent: float
    setting: str

    @classmethod
    def from_flag(cls, flag: str, percent: float) -> Threshold:
        return cls(percent, f"{flag} {percent:g}")

    @classmethod
    def from_config(cls, config: Config, key: str = "fail_under") -> Threshold | None:
        """The configuration file's ``fail_under`` (or ``key``), if it sets one."""
        value = getattr(config, key)
        if value is None:
            return None
        where = os.path.relpath(config.path) if config.path else "the configuration"
        return cls(value, f"{key} = {value:g} in {where}")

    @classmethod
    def choose(cls, flag: str, value: float | None, config: Config,
               key: str = "fail_under") -> Threshold | None:
        """The flag's value if given, else the configuration's ``key``."""
        return (cls.from_flag(flag, value) if value is not None
                else cls.from_config(config, key))


#: The environment variable naming pathprof's cache directory (over ``cache_dir``).
CACHE_DIR_VARIABLE = "PATHPROF_CACHE_DIR"
#: The default cache directory's name, in the configuration file's directory.
CACHE_DIR_NAME = ".pathprof_cache"


@dataclass(frozen=True)
class CacheDir:
    """pathprof's own directory of instrumented code (beside ``__pycache__``, which
    Python's bytecode setting governs): see :mod:`pathprof.measure.codecache`."""

    path: str  #: absolute
    #: set by ``--cache-dir``, :data:`CACHE_DIR_VARIABLE` or ``cache_dir``: always used
    #: (else only where Python writes no bytecode, or ``__pycache__`` cannot be written)
    configured: bool


def configured_cache_dir(config: Config, flag: str | None = None) -> str | None:
    """The cache directory the user set, if any: the flag, else
    :data:`CACHE_DIR_VARIABLE`, else the configuration's ``cache_dir``."""
    return flag or os.environ.get(CACHE_DIR_VARIABLE) or config.cache_dir


def cache_dir(given: str | None = None, start: str = ".") -> CacheDir:
    """Where pathprof keeps instrumented code of its own: ``given`` (a flag, or what
    :func:`configured_cache_dir` found), else :data:`CACHE_DIR_VARIABLE`, else the
    default, :data:`CACHE_DIR_NAME` in the directory of the configuration file nearest
    ``start`` (or ``start`` itself when there is none), as pytest, mypy and ruff keep
    theirs. The file is found (by the rule of the module's docstring), not read; the
    directory is checked before use by :mod:`pathprof.measure.codecache`."""
    chosen = given or os.environ.get(CACHE_DIR_VARIABLE)
    if chosen:
        return CacheDir(os.path.abspath(chosen), True)
    found = _find(start)
    base = os.path.dirname(found) if found is not None else os.path.abspath(start)
    return CacheDir(os.path.join(base, CACHE_DIR_NAME), False)


def effective_uid() -> int | None:
    """The effective uid of this process; None where there is none (Windows)."""
    geteuid = getattr(os, "geteuid", None)
    return None if geteuid is None else int(geteuid())


def owner_name(uid: int) -> str:
    """``uid 65534 (nobody)``, as messages name an owner."""
    try:
        import pwd

        return f"uid {uid} ({pwd.getpwuid(uid).pw_name})"
    except (ImportError, KeyError):
        return f"uid {uid}"


def writable_by_others(status: os.stat_result, target: str | int | None = None,
                       subject: str = "it") -> str | None:
    """Why someone besides the owner of what ``status`` describes can write it, or None
    when no one can: its world-write bit, or its group-write bit unless the group is the
    owner's private group (see the module's docstring; ``target``, its path or an open
    descriptor, is where an ACL is looked for: without it a group-writable one is
    refused). The reason names it ``subject`` and ends with its mode: ``everyone can
    write it (mode 1777)``."""
    mode = status.st_mode
    shown = f"(mode {stat.S_IMODE(mode):04o})"
    if mode & stat.S_IWOTH:
        return f"everyone can write {subject} {shown}"
    if mode & stat.S_IWGRP and not (target is not None
                                    and _private_group(status.st_gid, status.st_uid)
                                    and not _has_acl(target)):
        return f"the group {_group_name(status.st_gid)} can write {subject} {shown}"
    return None


@functools.lru_cache(maxsize=16)
def _private_group(gid: int, uid: int) -> bool:
    """Whether ``gid`` is the private group of ``uid``: its primary group, of its name,
    with no other member listed."""
    try:
        import grp
        import pwd

        user, group = pwd.getpwuid(uid), grp.getgrgid(gid)
    except (ImportError, KeyError):
        return False
    return (user.pw_gid == gid and group.gr_name == user.pw_name
            and all(member == user.pw_name for member in group.gr_mem))


def _has_acl(target: str | int) -> bool:
    """Whether a POSIX access ACL is set on ``target`` (one can let others write under
    the group bits, which then show its mask); True where that cannot be told."""
    listxattr = getattr(os, "listxattr", None)
    if listxattr is None:
        return False  # no extended attributes to read (other systems' ACLs are not seen)
    try:
        return "system.posix_acl_access" in listxattr(target)
    except OSError as err:
        import errno

        return err.errno not in (errno.ENOTSUP, errno.EOPNOTSUPP)


def _group_name(gid: int) -> str:
    try:
        import grp

        return f"{grp.getgrgid(gid).gr_name} (gid {gid})"
    except (ImportError, KeyError):
        return f"gid {gid}"


def _distrust(status: os.stat_result, owners: frozenset[int], target: str | int,
              subject: str) -> str | None:
    """Why a directory or file is not one to take settings from (None: it is): its owner
    is none of ``owners``, or someone besides its owner can write it."""
    if status.st_uid not in owners:
        return f"{subject} belongs to {owner_name(status.st_uid)}"
    return writable_by_others(status, target, subject)


class _Found:
    """A configuration file the search took, and whose files it trusts."""

    __slots__ = ("owners", "path")

    def __init__(self, path: str, owners: frozenset[int] | None) -> None:
        self.path = path
        self.owners = owners  #: None: no ownership is checked (no uids here)


def _search(start: str) -> _Found | None:
    """The nearest configuration file at or above ``start`` that the rule of the module's
    docstring lets pathprof read, or None (and one line where the search ended at one it
    does not trust)."""
    directory = os.path.abspath(start)
    try:
        status = os.stat(directory)
    except OSError:
        return None
    euid = effective_uid()
    owners: frozenset[int] | None = None
    if euid is not None:
        why = writable_by_others(status, directory, directory)
        if why is not None:
            _say_not_reading(directory, why, f"move the project out of {directory}")
            return None
        owners = frozenset((euid, 0, status.st_uid))
    while True:
        for name in (RC_FILE, "pyproject.toml"):
            candidate = os.path.join(directory, name)
            try:
                found = os.stat(candidate)
            except OSError:
                continue
            if not stat.S_ISREG(found.st_mode):
                continue
            if owners is not None:
                why = _distrust(found, owners, candidate, "it")
                if why is not None:
                    _say_not_reading(candidate, why, "make it yours alone", is_file=True)
                    return None
            return _Found(candidate, owners)
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        try:
            above = os.stat(parent)
        except OSError:
            return None
        if above.st_dev != status.st_dev:
            return None  # a file system boundary, where git stops too
        if owners is not None:
            why = _distrust(above, owners, parent, parent)
            if why is not None:
                _say_not_reading(parent, why, "give the project a pyproject.toml of its own")
                return None
        directory, status = parent, above


#: The configuration files :func:`_say_not_reading` spoke of: once per process each.
_said_not_reading: set[str] = set()


def _say_not_reading(where: str, why: str, remedy: str, is_file: bool = False) -> None:
    """One line, when the search ends at ``where``, a configuration file (``is_file``) or
    a directory that holds one (else nothing: there was nothing to take)."""
    if is_file:
        path = where
    else:
        names = [os.path.join(where, name) for name in (RC_FILE, "pyproject.toml")]
        path = next((name for name in names if os.path.isfile(name)), "")
        if not path:
            return
    if path in _said_not_reading:  # (the configuration is read more than once)
        return
    _said_not_reading.add(path)
    warn(f"not reading {path}: {why}, so someone else may have put it there; pathprof "
         f"takes settings only from directories and files no one else can write "
         f"({remedy}, or see 'Whose files are read' in docs/configuration.md)")


def _find(start: str) -> str | None:
    """The path of the configuration file :func:`read_config` would read, or None."""
    found = _search(start)
    return None if found is None else found.path


def _open_trusted(found: _Found) -> Any:
    """The configuration file open for reading, checked again on the open file
    (``fstat``: it may have been swapped since the search looked at it); None (and one
    line) when it fails the check."""
    nonblocking = getattr(os, "O_NONBLOCK", 0)
    # (non-blocking: a FIFO swapped in cannot hang the program)
    fd = os.open(found.path, os.O_RDONLY | nonblocking | getattr(os, "O_CLOEXEC", 0))
    try:
        status = os.fstat(fd)
        why = None if stat.S_ISREG(status.st_mode) else "it is not a regular file"
        if why is None and found.owners is not None:
            why = _distrust(status, found.owners, fd, "it")
        if why is None:
            if nonblocking:
                os.set_blocking(fd, True)
            return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    os.close(fd)
    _say_not_reading(found.path, why, "make it yours alone", is_file=True)
    return None


def read_config(start: str = ".") -> Config:
    """The settings of the nearest ``.pathprofrc`` or ``pyproject.toml`` at or above
    ``start`` that the rule of the module's docstring lets pathprof read (an empty
    :class:`Config` when there is none)."""
    import tomllib

    found = _search(start)
    if found is None:
        return Config()
    path = found.path
    try:
        f = _open_trusted(found)
        if f is None:
            return Config()
        with f:
            data = tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError) as err:
        raise ConfigError(f"cannot read {path}: {err}") from err
    table: Any = data.get("tool", {}).get("pathprof", {})
    if os.path.basename(path) == RC_FILE and "tool" not in data:
        table = data
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.pathprof] must be a table")
    config = Config(path=path)
    base = os.path.dirname(path)
    for key, value in table.items():
        name = key.replace("-", "_")
        if name in _LISTS:
            if isinstance(value, str):
                value = [value]
            if not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
                raise ConfigError(f"{path}: tool.pathprof.{key} must be a list of strings")
            if name == "source":
                value = [os.path.join(base, v) if os.path.exists(os.path.join(base, v))
                         else v for v in value]
            setattr(config, name, value)
        elif name in _STRINGS:
            if not isinstance(value, str):
                raise ConfigError(f"{path}: tool.pathprof.{key} must be a string")
            if name in _PATHS and not value.strip():
                raise ConfigError(f"{path}: tool.pathprof.{key} is empty")
            setattr(config, name, os.path.join(base, value) if name in _PATHS else value)
        elif name in _BOOLEANS:
            if not isinstance(value, bool):
                raise ConfigError(f"{path}: tool.pathprof.{key} must be true or false")
            setattr(config, name, value)
        elif name in _NUMBERS:
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ConfigError(f"{path}: tool.pathprof.{key} must be a number")
            setattr(config, name, float(value))
        else:
            raise ConfigError(f"{path}: unknown setting tool.pathprof.{key}")
    return config


#: Where coverage.py reads its settings, in its order, with the section of each.
_COVERAGE_FILES = ((".coveragerc", "report"), ("setup.cfg", "coverage:report"),
                   ("tox.ini", "coverage:report"), ("pyproject.toml", None))


def coverage_py_exclusions(directory: str = ".") -> tuple[list[str] | None, list[str]]:
    """coverage.py's ``exclude_lines`` (None when it sets none) and ``exclude_also``,
    from the first of its configuration files in ``directory`` that sets either
    (``.coveragerc``'s ``[report]``, ``setup.cfg``'s and ``tox.ini``'s
    ``[coverage:report]``, ``pyproject.toml``'s ``[tool.coverage.report]``)."""
    import configparser
    import tomllib

    for name, section in _COVERAGE_FILES:
        path = os.path.join(directory, name)
        if not os.path.isfile(path):
            continue
        try:
            if section is None:
                with open(path, "rb") as f:
                    table = tomllib.load(f).get("tool", {}).get("coverage", {}).get(
                        "report", {})
                values = {k: v for k, v in table.items()
                          if k in ("exclude_lines", "exclude_also")}
            else:
                parser = configparser.RawConfigParser()
                parser.read(path, encoding="utf-8")
                values = {k: [line.strip() for line in parser.get(section, k).splitlines()
                              if line.strip()]
                          for k in ("exclude_lines", "exclude_also")
                          if parser.has_option(section, k)}
        except (OSError, ValueError, configparser.Error, tomllib.TOMLDecodeError) as err:
            raise ConfigError(f"cannot read coverage.py's settings in {path}: {err}") from err
        for key, value in values.items():
            if not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
                raise ConfigError(f"{path}: coverage.py's {key} must be a list of strings")
        if values:
            return values.get("exclude_lines"), values.get("exclude_also", [])
    return None, []
