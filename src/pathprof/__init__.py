"""pathprof: exact acyclic path profiles of Python programs (Ball-Larus 1996)."""

from pathprof.exceptions import (
    CfgError,
    ConfigError,
    DataError,
    NoDataError,
    PathprofError,
)

__version__ = "0.1.0"

__all__ = [
    "CfgError",
    "ConfigError",
    "DataError",
    "NoDataError",
    "PathprofError",
    "__version__",
]
