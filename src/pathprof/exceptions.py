"""The exceptions pathprof raises: one base class, a few subclasses by cause."""

from __future__ import annotations


class PathprofError(Exception):
    """Base class of every error pathprof raises on purpose."""


class CfgError(PathprofError):
    """A control-flow graph breaks a rule the algorithms rely on.

    Examples: an edge into ENTRY, a block that cannot reach EXIT, a set of edges
    that must stay uninstrumented but form a cycle.
    """


class ConfigError(PathprofError):
    """A configuration value (flag, ``pyproject.toml``, environment) is invalid."""


class DataError(PathprofError):
    """A data file cannot be read or written: corrupt, locked, or of another version."""


class NoDataError(PathprofError):
    """A command needs measured data and there is none."""
