"""The hash that names a version of a source file.

A function's counts belong to the CFG built from one version of its file: the
instrumenter keys the metadata by this hash, the data file keeps it beside every
function and source, and the line-coverage analysis checks a file on disk against
it. A leaf module (standard library only), so each of those layers can import it
without importing the others."""

from __future__ import annotations

import hashlib

__all__ = ["source_hash"]


def source_hash(source: str | bytes) -> str:
    """The first 32 hex digits of the SHA-256 of ``source`` (text is hashed as UTF-8)."""
    data = source.encode("utf-8") if isinstance(source, str) else source
    return hashlib.sha256(data).hexdigest()[:32]
