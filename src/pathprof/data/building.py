"""A data file made in one step: built beside its target under a name of its own and
renamed over it (or, for a file that must appear once, linked there), so no reader
ever sees half a file; what writers killed mid-way left is removed by the next save.

The temporary names say which process of which host builds them
(``.pathprof-<pid>-<host>-<token>.tmp``), so a save removes only what a process of
this host that no longer runs left.
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
import sqlite3
import time
from collections.abc import Callable

from pathprof.data import schema
from pathprof.data.files import pid_runs
from pathprof.exceptions import DataError
from pathprof.version import __version__

__all__ = ["HOST", "OLD_TEMP_AGE", "TEMP", "build_and_rename", "create_empty",
           "create_in_place", "remove_stale_temps"]


def build_and_rename(path: str, fill: Callable[[sqlite3.Connection], None], *,
                      exclusive: bool = False) -> None:
    """Build a data file beside ``path`` and move it there in one step: replacing
    what is there, or (``exclusive``) only if nothing is, by a hard link, which
    fails when another process created ``path`` first."""
    directory = os.path.dirname(os.path.abspath(path))
    temp = _new_temp(directory)
    try:
        db = sqlite3.connect(temp, isolation_level=None)
        try:
            # One transaction from the first table on, and no rollback journal: a
            # file nobody reads until it is renamed, removed if building it fails.
            db.execute("PRAGMA journal_mode = OFF")
            db.execute(schema.PAGE_SIZE)
            db.executescript("BEGIN;" + schema.SCHEMA)
            _write_meta(db)
            fill(db)
            db.execute("COMMIT")
        finally:
            db.close()
        if exclusive:
            with contextlib.suppress(FileExistsError):
                os.link(temp, path)
            os.unlink(temp)
        else:
            os.replace(temp, path)
    except BaseException:
        if os.path.exists(temp):
            os.unlink(temp)
        raise


HOST = re.sub(r"[^A-Za-z0-9.]", "_", socket.gethostname()) or "host"


#: ``.pathprof-<pid>-<host>-<token>.tmp``: a data file being built (and its journal)
TEMP = re.compile(r"\.pathprof-(\d+)-(.+)-[0-9a-f]{8}\.tmp(?:-journal)?")


#: the names of pathprof before 0.1 (``tempfile.mkstemp``'s): no process to ask
OLD_TEMP = re.compile(r"\.pathprof-[a-z0-9_]{8}\.tmp(?:-journal)?")


OLD_TEMP_AGE = 3600.0


def _new_temp(directory: str) -> str:
    """Create an empty file to build a data file in, named for this process. It is
    created as any file the user creates (``0o666`` less the umask), so the data
    file renamed from it is too."""
    while True:
        temp = os.path.join(directory, f".pathprof-{os.getpid()}-{HOST}-"
                                       f"{os.urandom(4).hex()}.tmp")
        try:
            os.close(os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        except FileExistsError:
            continue
        return temp


def remove_stale_temps(directory: str) -> None:
    """Remove what a writer killed mid-way (``kill -9``) left: files being built by a
    process of this host that no longer runs, and files of the old naming over an
    hour old. A file some process is still building is left alone."""
    try:
        names = os.listdir(directory)
    except OSError:
        return
    now = time.time()
    for name in names:
        match = TEMP.fullmatch(name)
        full = os.path.join(directory, name)
        stale = False
        if match is not None:
            stale = match[2] == HOST and not pid_runs(int(match[1]))
        elif OLD_TEMP.fullmatch(name):
            with contextlib.suppress(OSError):
                stale = now - os.path.getmtime(full) > OLD_TEMP_AGE
        else:
            continue
        if stale:
            with contextlib.suppress(OSError):
                os.unlink(full)


def create_empty(path: str) -> None:
    """Create ``path`` as a data file with no runs, unless it exists by then.

    Writers that append to a file that does not exist yet must not each build
    their own and rename it over the others' (all but the last run would be
    lost): the empty file appears at most once, and every writer then adds its
    run to it in a transaction of its own. Where the file system has no hard
    links, the file is created in place under SQLite's own lock instead."""
    try:
        build_and_rename(path, lambda db: None, exclusive=True)
    except OSError as err:
        if isinstance(err, FileExistsError) or os.path.exists(path):
            return
        create_in_place(path)


def _write_meta(db: sqlite3.Connection) -> None:
    """The versions a new data file records (in the caller's transaction)."""
    db.executemany("INSERT INTO meta VALUES (?, ?)",
                   [("schema_version", str(schema.SCHEMA_VERSION)),
                    ("pathprof_version", __version__)])


def create_in_place(path: str) -> None:
    db = schema.connect(path)
    try:
        db.execute("BEGIN IMMEDIATE")
        tables = db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
        if tables == 0:
            db.execute(schema.PAGE_SIZE)
            for statement in schema.SCHEMA.split(";"):
                if statement.strip():
                    db.execute(statement)
            _write_meta(db)
        db.execute("COMMIT")
    except sqlite3.Error as err:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise DataError(f"cannot create {path}: {err}") from err
    finally:
        db.close()
