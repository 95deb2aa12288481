"""Configuration from ``.pathprofrc`` or ``[tool.pathprof]`` in ``pyproject.toml``, as
coverage.py reads ``.coveragerc`` or ``[tool.coverage.run]``. Flags override it.

The nearest directory at or above the current one that has either file is used; a
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
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from pathprof.exceptions import ConfigError

__all__ = ["CACHE_DIR_NAME", "CACHE_DIR_VARIABLE", "CacheDir", "Config", "Threshold",
           "cache_dir", "configured_cache_dir", "read_config"]

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
    theirs. The file is found, not read."""
    chosen = given or os.environ.get(CACHE_DIR_VARIABLE)
    if chosen:
        return CacheDir(os.path.abspath(chosen), True)
    found = _find(start)
    base = os.path.dirname(found) if found is not None else os.path.abspath(start)
    return CacheDir(os.path.join(base, CACHE_DIR_NAME), False)


def _find(start: str) -> str | None:
    directory = os.path.abspath(start)
    while True:
        for name in (RC_FILE, "pyproject.toml"):
            candidate = os.path.join(directory, name)
            if os.path.isfile(candidate):
                return candidate
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def read_config(start: str = ".") -> Config:
    """The settings of the nearest ``.pathprofrc`` or ``pyproject.toml`` at or above
    ``start`` (an empty :class:`Config` when there is none)."""
    import tomllib

    path = _find(start)
    if path is None:
        return Config()
    try:
        with open(path, "rb") as f:
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
