"""The data file: an SQLite database of runs, functions and their path counts.

Like coverage.py's ``.coverage``, one file per measurement (``.pathprof`` by
default). Never pickle: every value is text or a number, so a file can be read by
any SQLite client and cannot run code when loaded.

Schema (version :data:`SCHEMA_VERSION`)::

    meta(key PRIMARY KEY, value)           schema_version, pathprof version
    run(id, started, argv, python, mode, metric, pid, hostname)
    function(id, file, qualname, first_line, source_hash, cfg)   cfg: metadata JSON
    source(file, source_hash, text)        the source the CFGs were built from
    path(function_id, kind, path, count, time_ns)
        kind 'path': path is the Ball-Larus number, in decimal (numbers can
        exceed SQLite's 64-bit integers); kind 'cut': "<block>:<prefix value>"
    edge(function_id, edge, count)         edge mode: count of every CFG edge
    call_stats(function_id, raised, unattributed)
    context(function_id, kind, path, context)   which contexts (tests) ran a path

Guarantees: a write is atomic (a new file is built beside the target and renamed
over it; ``append`` adds in one SQLite transaction). A file that is not a
pathprof data file, is corrupt, or locked is reported with
:class:`~pathprof.exceptions.DataError` and never overwritten; so is a file of
another schema version, except that a new run (not ``append``) replaces it.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import socket
import sqlite3
import time
from collections.abc import Callable, Iterable

from pathprof.contract import ContractError, FunctionInfo
from pathprof.data.files import combinable_files
from pathprof.data.measurement import Measurement, RunInfo, source_conflicts
from pathprof.data.profile import FunctionProfile, merge
from pathprof.exceptions import DataError, NoDataError
from pathprof.version import __version__

__all__ = ["SCHEMA_VERSION", "Measurement", "RunInfo", "combine", "erase", "read",
           "source_conflicts", "write"]

#: Versions: 1 first; 2 contexts and call stats; 3 the metadata in ``function.cfg``
#: declares its backedges (every edge from a loop's body to its header), which changes
#: the numbering of functions whose loops catch exceptions: numbers of a version 2
#: file would decode to the wrong paths; 4 ``function.cfg`` holds the typed contract's
#: compact form (:meth:`pathprof.contract.FunctionInfo.encode`).
SCHEMA_VERSION = 4

_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE run (
    id INTEGER PRIMARY KEY, started REAL NOT NULL, argv TEXT NOT NULL, python TEXT NOT NULL,
    mode TEXT NOT NULL, metric TEXT, pid INTEGER NOT NULL, hostname TEXT NOT NULL);
CREATE TABLE function (
    id INTEGER PRIMARY KEY, file TEXT NOT NULL, qualname TEXT NOT NULL,
    first_line INTEGER NOT NULL, source_hash TEXT NOT NULL, cfg TEXT NOT NULL,
    UNIQUE (file, qualname, first_line, source_hash));
CREATE TABLE source (
    file TEXT NOT NULL, source_hash TEXT NOT NULL, text TEXT NOT NULL,
    PRIMARY KEY (file, source_hash));
CREATE TABLE path (
    function_id INTEGER NOT NULL REFERENCES function (id),
    kind TEXT NOT NULL CHECK (kind IN ('path', 'cut')), path TEXT NOT NULL,
    count INTEGER NOT NULL, time_ns INTEGER, PRIMARY KEY (function_id, kind, path));
CREATE TABLE edge (
    function_id INTEGER NOT NULL REFERENCES function (id), edge INTEGER NOT NULL,
    count INTEGER NOT NULL, PRIMARY KEY (function_id, edge));
CREATE TABLE call_stats (
    function_id INTEGER PRIMARY KEY REFERENCES function (id),
    raised INTEGER NOT NULL, unattributed INTEGER NOT NULL);
CREATE TABLE closed_calls (
    function_id INTEGER PRIMARY KEY REFERENCES function (id), closed INTEGER NOT NULL);
CREATE TABLE stopped_counting (function_id INTEGER PRIMARY KEY REFERENCES function (id));
CREATE TABLE context (
    function_id INTEGER NOT NULL REFERENCES function (id),
    kind TEXT NOT NULL CHECK (kind IN ('path', 'cut')), path TEXT NOT NULL,
    context TEXT NOT NULL, PRIMARY KEY (function_id, kind, path, context));
"""

#: Generators closed early, per function (added within schema 3: a file without the
#: table has none; older readers ignore it, and count those calls as raised anyway).
_CLOSED_TABLE = ("CREATE TABLE IF NOT EXISTS closed_calls (function_id INTEGER PRIMARY KEY "
                 "REFERENCES function (id), closed INTEGER NOT NULL)")

#: Functions that went back to their original code in a coverage mode (added within
#: schema 3, as closed_calls was: older readers ignore it and take the counts as exact).
_STOPPED_TABLE = ("CREATE TABLE IF NOT EXISTS stopped_counting (function_id INTEGER PRIMARY "
                  "KEY REFERENCES function (id))")

#: Seconds to wait for another writer before reporting the file as locked.
LOCK_TIMEOUT = 5.0


class OtherSchemaError(DataError):
    """A pathprof data file of another schema version: read it with the pathprof that
    wrote it; a new run (without ``append``) may replace it."""


def _check(db: sqlite3.Connection, path: str) -> None:
    """Raise DataError unless ``db`` is a pathprof data file of our schema."""
    try:
        row = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    except sqlite3.OperationalError as err:
        if "locked" in str(err):
            raise DataError(f"{path} is locked by another process (still writing it after "
                            f"{LOCK_TIMEOUT:g} s); it was left untouched") from err
        if "unable to open" in str(err):
            raise DataError(f"cannot read {path} ({err}); it was left untouched") from err
        raise DataError(f"{path} is not a pathprof data file ({err}); "
                        "it was left untouched") from err
    except sqlite3.DatabaseError as err:
        raise DataError(f"{path} is not a pathprof data file ({err}); "
                        "it was left untouched") from err
    if row is None:
        raise DataError(f"{path} is not a pathprof data file (no schema version); "
                        "it was left untouched")
    if row[0] != str(SCHEMA_VERSION):
        raise OtherSchemaError(f"{path} has data schema {row[0]}; this pathprof reads schema "
                        f"{SCHEMA_VERSION}; it was left untouched")


def _connect(path: str) -> sqlite3.Connection:
    try:
        return sqlite3.connect(path, timeout=LOCK_TIMEOUT, isolation_level=None)
    except sqlite3.Error as err:
        raise DataError(f"cannot open {path}: {err}") from err


def _insert(db: sqlite3.Connection, runs: list[RunInfo], functions: Iterable[FunctionProfile],
            sources: dict[tuple[str, str], str]) -> None:
    for run in runs:
        db.execute(
            "INSERT INTO run (started, argv, python, mode, metric, pid, hostname) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (run.started, json.dumps(run.argv), run.python, run.mode, run.metric, run.pid,
             run.hostname))
    for (file, digest), text in sources.items():
        db.execute("INSERT OR IGNORE INTO source VALUES (?, ?, ?)", (file, digest, text))
    for fn in functions:
        db.execute("INSERT OR IGNORE INTO function (file, qualname, first_line, source_hash, "
                   "cfg) VALUES (?, ?, ?, ?, ?)",
                   (fn.file, fn.qualname, fn.first_line, fn.source_hash,
                    fn.meta.encode()))
        (fid,) = db.execute(
            "SELECT id FROM function WHERE file = ? AND qualname = ? AND first_line = ? "
            "AND source_hash = ?", (fn.file, fn.qualname, fn.first_line, fn.source_hash)
        ).fetchone()
        rows = [("path", key, count, fn.times.get(key)) for key, count in fn.counts.items()]
        rows += [("cut", key, count, None) for key, count in fn.cuts.items()]
        for kind, key, count, time_ns in rows:
            db.execute(
                "INSERT INTO path VALUES (?, ?, ?, ?, ?) ON CONFLICT (function_id, kind, path) "
                "DO UPDATE SET count = count + excluded.count, "
                "time_ns = CASE WHEN excluded.time_ns IS NULL THEN time_ns "
                "ELSE coalesce(time_ns, 0) + excluded.time_ns END",
                (fid, kind, key, count, time_ns))
        for edge, count in fn.edges.items():
            db.execute("INSERT INTO edge VALUES (?, ?, ?) ON CONFLICT (function_id, edge) "
                       "DO UPDATE SET count = count + excluded.count", (fid, edge, count))
        db.executemany("INSERT OR IGNORE INTO context VALUES (?, ?, ?, ?)",
                       [(fid, *_split_key(key), name) for key, names in fn.contexts.items()
                        for name in sorted(names)])
        db.execute("INSERT INTO call_stats VALUES (?, ?, ?) ON CONFLICT (function_id) DO "
                   "UPDATE SET raised = raised + excluded.raised, "
                   "unattributed = unattributed + excluded.unattributed",
                   (fid, fn.raised, fn.unattributed))
        if fn.closed:
            # Files written before the table existed (the same schema) get it here.
            db.execute(_CLOSED_TABLE)
            db.execute("INSERT INTO closed_calls VALUES (?, ?) ON CONFLICT (function_id) DO "
                       "UPDATE SET closed = closed + excluded.closed", (fid, fn.closed))
        if fn.stopped:
            db.execute(_STOPPED_TABLE)
            db.execute("INSERT OR IGNORE INTO stopped_counting VALUES (?)", (fid,))


def _split_key(key: str) -> tuple[str, str]:
    """("path", number) or ("cut", "<block>:<value>") for a path key of FunctionProfile."""
    return ("cut", key[4:]) if key.startswith("cut:") else ("path", key)


def write(path: str, run: RunInfo | list[RunInfo], functions: Iterable[FunctionProfile],
          sources: dict[tuple[str, str], str], *, append: bool = False) -> None:
    """Save one run. Without ``append`` the file is replaced atomically (but never
    when it exists and is not a pathprof data file, or is one whose rows are damaged:
    :class:`DataError`, as :func:`read` reports it); with ``append`` the run is added
    to the existing file in one transaction (created if missing)."""
    functions = list(functions)
    runs = run if isinstance(run, list) else [run]
    if append and not os.path.exists(path):
        _create_empty(path)
    if os.path.exists(path):
        db = _connect(path)
        try:
            try:
                _check(db, path)
            except OtherSchemaError:
                if append:
                    raise
            else:
                if not append:
                    _check_rows(db, path)  # what the run replaces: damaged, it stays
            if append:
                try:
                    db.execute("BEGIN IMMEDIATE")
                    _check_modes(db, path, runs)
                    _insert(db, runs, functions, sources)
                    db.execute("COMMIT")
                except sqlite3.OperationalError as err:
                    if db.in_transaction:
                        db.execute("ROLLBACK")
                    raise DataError(f"cannot add to {path}: {err}") from err
                return
        finally:
            db.close()
    _build_and_rename(path, lambda db: _insert(db, runs, functions, sources))


def _check_modes(db: sqlite3.Connection, path: str, runs: list[RunInfo]) -> None:
    """Refuse to add runs of one mode to a file of the other: path reports would
    drop an edge profile's counts, and edge reports a path profile's."""
    held = {row[0] for row in db.execute("SELECT DISTINCT mode FROM run")}
    added = {run.mode for run in runs}
    if held and added and held != added:
        db.execute("ROLLBACK")
        adding = "/".join(sorted(added))
        raise DataError(f"{path} holds {'/'.join(sorted(held))}-mode data: "
                        f"{'an' if adding.startswith('e') else 'a'} {adding}-mode run cannot "
                        "be added to it; use another data file")


def _build_and_rename(path: str, fill: Callable[[sqlite3.Connection], None], *,
                      exclusive: bool = False) -> None:
    """Build a data file beside ``path`` and move it there in one step: replacing
    what is there, or (``exclusive``) only if nothing is, by a hard link, which
    fails when another process created ``path`` first."""
    directory = os.path.dirname(os.path.abspath(path))
    _remove_stale_temps(directory)
    temp = _new_temp(directory)
    try:
        db = sqlite3.connect(temp, isolation_level=None)
        try:
            db.executescript(_SCHEMA)
            db.execute("BEGIN")
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


_HOST = re.sub(r"[^A-Za-z0-9.]", "_", socket.gethostname()) or "host"
#: ``.pathprof-<pid>-<host>-<token>.tmp``: a data file being built (and its journal)
_TEMP = re.compile(r"\.pathprof-(\d+)-(.+)-[0-9a-f]{8}\.tmp(?:-journal)?")
#: the names of pathprof before 0.1 (``tempfile.mkstemp``'s): no process to ask
_OLD_TEMP = re.compile(r"\.pathprof-[a-z0-9_]{8}\.tmp(?:-journal)?")
OLD_TEMP_AGE = 3600.0


def _new_temp(directory: str) -> str:
    """Create an empty file to build a data file in, named for this process. It is
    created as any file the user creates (``0o666`` less the umask), so the data
    file renamed from it is too."""
    while True:
        temp = os.path.join(directory, f".pathprof-{os.getpid()}-{_HOST}-"
                                       f"{os.urandom(4).hex()}.tmp")
        try:
            os.close(os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        except FileExistsError:
            continue
        return temp


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True  # another user's, or cannot tell: leave it
    return True


def _remove_stale_temps(directory: str) -> None:
    """Remove what a writer killed mid-way (``kill -9``) left: files being built by a
    process of this host that no longer runs, and files of the old naming over an
    hour old. A file some process is still building is left alone."""
    try:
        names = os.listdir(directory)
    except OSError:
        return
    now = time.time()
    for name in names:
        match = _TEMP.fullmatch(name)
        full = os.path.join(directory, name)
        stale = False
        if match is not None:
            stale = match[2] == _HOST and not _alive(int(match[1]))
        elif _OLD_TEMP.fullmatch(name):
            with contextlib.suppress(OSError):
                stale = now - os.path.getmtime(full) > OLD_TEMP_AGE
        else:
            continue
        if stale:
            with contextlib.suppress(OSError):
                os.unlink(full)


def _create_empty(path: str) -> None:
    """Create ``path`` as a data file with no runs, unless it exists by then.

    Writers that append to a file that does not exist yet must not each build
    their own and rename it over the others' (all but the last run would be
    lost): the empty file appears at most once, and every writer then adds its
    run to it in a transaction of its own. Where the file system has no hard
    links, the file is created in place under SQLite's own lock instead."""
    try:
        _build_and_rename(path, lambda db: None, exclusive=True)
    except OSError as err:
        if isinstance(err, FileExistsError) or os.path.exists(path):
            return
        _create_in_place(path)


def _write_meta(db: sqlite3.Connection) -> None:
    """The versions a new data file records (in the caller's transaction)."""
    db.executemany("INSERT INTO meta VALUES (?, ?)",
                   [("schema_version", str(SCHEMA_VERSION)), ("pathprof_version", __version__)])


def _create_in_place(path: str) -> None:
    db = _connect(path)
    try:
        db.execute("BEGIN IMMEDIATE")
        tables = db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
        if tables == 0:
            for statement in _SCHEMA.split(";"):
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


def read(path: str) -> Measurement:
    """Read a data file; functions measured in several runs come merged."""
    if not os.path.exists(path):
        raise NoDataError(f"no data file {path}: run `pathprof run` first")
    db = _connect(path)
    try:
        _check(db, path)
        return _check_rows(db, path)
    finally:
        db.close()


def _check_rows(db: sqlite3.Connection, path: str) -> Measurement:
    """What the data file ``path`` (open as ``db``, of this schema) holds, every row
    checked: :class:`DataError` naming the file and the row if one is damaged."""
    try:
        return _read(db)
    except _Damaged as err:
        raise DataError(f"{path} is damaged: {err}; it was left untouched") from None
    except sqlite3.OperationalError as err:
        if "locked" in str(err):
            raise DataError(f"{path} is locked by another process (still writing it after "
                            f"{LOCK_TIMEOUT:g} s); it was left untouched") from err
        raise DataError(f"{path} is damaged ({err}); it was left untouched") from err
    except (sqlite3.DatabaseError, ValueError, KeyError, TypeError) as err:
        raise DataError(f"{path} is damaged ({err}); it was left untouched") from err


class _Damaged(Exception):
    """A row of the data file that pathprof did not write: which, and what is wrong."""


def _function(fid: int, file: str, digest: str, cfg: str) -> FunctionProfile:
    try:
        meta = FunctionInfo.decode(cfg)
        meta.check()
    except ContractError as err:
        raise _Damaged(f"function row {fid} ({file}): its cfg is not a function's "
                       f"metadata ({err})") from None
    return FunctionProfile.of(file, digest, meta)


def _whole(value: object, what: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise _Damaged(f"{what} is {value!r}, not a count")
    return value


def _path_key(fn: FunctionProfile, kind: str, key: object, where: str) -> str:
    """``key`` checked against the function: a path number below its number of paths,
    or ``<block>:<prefix value>`` for a cut path."""
    possible = fn.meta.num_paths
    if kind == "path":
        if isinstance(key, str) and key.isdigit() and int(key) < possible:
            return key
        raise _Damaged(f"{where}: {key!r} is not a path of {fn.qualname} "
                       f"(0 to {possible - 1})")
    parts = key.split(":") if isinstance(key, str) else []
    if (len(parts) == 2 and all(p.isdigit() for p in parts)
            and int(parts[0]) < len(fn.meta.blocks) and int(parts[1]) < possible):
        return key  # type: ignore[return-value]
    raise _Damaged(f"{where}: {key!r} is not a cut path of {fn.qualname}")


def _owner(functions: dict[int, FunctionProfile], fid: object, where: str
           ) -> FunctionProfile:
    if fid not in functions:
        raise _Damaged(f"{where}: no function row {fid!r}")
    return functions[fid]


def _read(db: sqlite3.Connection) -> Measurement:
    """Everything in the file, each row checked: a row pathprof did not write (edited
    by hand, damaged) raises :class:`_Damaged` naming it, before any report sees it."""
    result = Measurement()
    for row in db.execute("SELECT started, argv, python, mode, metric, pid, hostname FROM run "
                          "ORDER BY id"):
        result.runs.append(RunInfo(row[0], json.loads(row[1]), *row[2:]))
    functions: dict[int, FunctionProfile] = {}
    for fid, file, digest, cfg in db.execute(
            "SELECT id, file, source_hash, cfg FROM function ORDER BY id"):
        functions[fid] = _function(fid, file, digest, cfg)
    for rowid, fid, kind, key, count, time_ns in db.execute(
            "SELECT rowid, function_id, kind, path, count, time_ns FROM path"):
        where = f"path row {rowid}"
        fn = _owner(functions, fid, where)
        key = _path_key(fn, kind, key, where)
        count = _whole(count, f"{where}: its count")
        if kind == "path":
            fn.counts[key] = count
            if time_ns is not None:
                fn.times[key] = _whole(time_ns, f"{where}: its time")
        else:
            fn.cuts[key] = count
    for rowid, fid, edge, count in db.execute("SELECT rowid, function_id, edge, count "
                                              "FROM edge"):
        where = f"edge row {rowid}"
        fn = _owner(functions, fid, where)
        if not isinstance(edge, int) or not 0 <= edge < len(fn.meta.edges):
            raise _Damaged(f"{where}: {edge!r} is not an edge of {fn.qualname}")
        fn.edges[edge] = _whole(count, f"{where}: its count")
    for fid, raised, unattributed in db.execute("SELECT * FROM call_stats"):
        fn = _owner(functions, fid, "call_stats row")
        fn.raised = _whole(raised, f"call_stats of {fn.qualname}: raised")
        fn.unattributed = _whole(unattributed, f"call_stats of {fn.qualname}: unattributed")
    if db.execute("SELECT 1 FROM sqlite_master WHERE name = 'closed_calls'").fetchone():
        for fid, closed in db.execute("SELECT function_id, closed FROM closed_calls"):
            fn = _owner(functions, fid, "closed_calls row")
            fn.closed = _whole(closed, f"closed_calls of {fn.qualname}")
    if db.execute("SELECT 1 FROM sqlite_master WHERE name = 'stopped_counting'").fetchone():
        for (fid,) in db.execute("SELECT function_id FROM stopped_counting"):
            _owner(functions, fid, "stopped_counting row").stopped = True
    for fid, kind, key, name in db.execute("SELECT function_id, kind, path, context "
                                           "FROM context"):
        full = key if kind == "path" else f"cut:{key}"
        _owner(functions, fid, "context row").contexts.setdefault(full, set()).add(name)
    for file, digest, text in db.execute("SELECT file, source_hash, text FROM source"):
        result.sources[(file, digest)] = text
    result.functions = merge(functions.values())
    return result


def erase(path: str) -> list[str]:
    """Remove the data file ``path`` and the data files other processes left beside
    it (:func:`~pathprof.data.files.combinable_files`: xdist workers', children's
    that outlived their parent, saves set aside), as ``coverage erase`` does;
    returns what was removed. A file there that is not a
    pathprof data file (of any schema) is left untouched: DataError for ``path``
    itself, skipped among the others; so is a directory named ``path``."""
    if os.path.isdir(path):
        raise DataError(f"{path} is a directory, not a data file; it was left untouched")
    removed = []
    candidates = [path, *combinable_files(path)]
    for candidate in candidates:
        if not os.path.isfile(candidate):
            continue
        db = _connect(candidate)
        try:
            try:
                _check(db, candidate)
            except OtherSchemaError:
                pass  # an older pathprof's: erasing it is what the user asks
            except DataError:
                if candidate == path:
                    raise
                continue
        finally:
            db.close()
        os.unlink(candidate)
        removed.append(candidate)
    return removed


def combine(target: str, paths: Iterable[str],
            progress: Callable[[int, int], None] | None = None) -> list[str]:
    """Add the data files ``paths`` into ``target`` (created if missing) and delete
    them. Returns the files combined; a file that cannot be read is reported with
    :class:`DataError` before anything is written or deleted. Functions measured
    from different versions of their source stay apart (see :func:`source_conflicts`).
    ``progress(done, total)`` is called after each step, two per file: read, then added."""
    paths = [p for p in paths if os.path.abspath(p) != os.path.abspath(target)]
    steps = 2 * len(paths)
    measurements = []
    for done, path in enumerate(paths, 1):
        measurements.append(read(path))
        if progress is not None:
            progress(done, steps)
    modes = {run.mode for m in measurements for run in m.runs}
    if os.path.exists(target):
        modes |= {run.mode for run in read(target).runs}
    if len(modes) > 1:
        raise DataError(f"cannot combine path-mode and edge-mode data ({', '.join(paths)} "
                        f"into {target}); nothing was combined")
    for done, (path, measurement) in enumerate(zip(paths, measurements, strict=True),
                                               len(paths) + 1):
        write(target, measurement.runs, measurement.functions, measurement.sources,
              append=True)
        os.unlink(path)
        if progress is not None:
            progress(done, steps)
    return paths
