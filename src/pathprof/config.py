"""Configuration from ``.pathprofrc`` or ``[tool.pathprof]`` in ``pyproject.toml``, as
coverage.py reads ``.coveragerc`` or ``[tool.coverage.run]``. Flags override it.

The nearest directory at or above the current one that has either file is used; a
``.pathprofrc`` there wins over its ``pyproject.toml``. ``.pathprofrc`` is TOML with
the same keys at the top level (or under ``[tool.pathprof]``).

Keys, named as the flags are (``-`` or ``_``): ``source``, ``include``, ``omit``,
``report`` (lists of strings), ``data_file``, ``mode`` (``"path"`` or ``"edge"``),
``metric`` (``"time"``), ``context`` (``"test"``), ``stop_counting`` (``"never"``,
``"basis"`` or ``"paths"``), ``fail_under`` (a number).
Relative paths in ``source`` and ``data_file`` are relative to the file's directory.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from typing import Any

from pathprof.exceptions import ConfigError

__all__ = ["Config", "Threshold", "read_config"]

_LISTS = ("source", "include", "omit", "report")
_STRINGS = ("data_file", "mode", "metric", "context", "stop_counting")
_NUMBERS = ("fail_under",)
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
    path: str | None = None  #: the file read, if any


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
    def from_config(cls, config: Config) -> Threshold | None:
        """The configuration file's ``fail_under``, if it sets one."""
        if config.fail_under is None:
            return None
        where = os.path.relpath(config.path) if config.path else "the configuration"
        return cls(config.fail_under, f"fail_under = {config.fail_under:g} in {where}")

    @classmethod
    def choose(cls, flag: str, value: float | None, config: Config) -> Threshold | None:
        """The flag's value if given, else the configuration's."""
        return cls.from_flag(flag, value) if value is not None else cls.from_config(config)


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
            setattr(config, name, os.path.join(base, value) if name == "data_file" else value)
        elif name in _NUMBERS:
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ConfigError(f"{path}: tool.pathprof.{key} must be a number")
            setattr(config, name, float(value))
        else:
            raise ConfigError(f"{path}: unknown setting tool.pathprof.{key}")
    return config
