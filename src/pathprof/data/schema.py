"""The data file's schema, written once: the SQL below, whose comments are the
documentation of every table and column (``docs/data-file.md`` shows them as
:func:`markdown` renders them, which ``tests/test_schema.py`` checks), with what every
reader and writer of a data file shares: opening one, checking its version, the names it
keeps, and the additions that refuse counts past what SQLite holds exactly.

A data file is an SQLite database, like coverage.py's ``.coverage``. Never pickle:
every value is text, a number, or zlib-compressed UTF-8 text, so a file can be read by
any SQLite client and cannot run code when loaded.
"""

from __future__ import annotations

import operator
import os
import re
import sqlite3
from typing import Any

from pathprof.exceptions import DataError

__all__ = ["LOCK_TIMEOUT", "MAX_COUNT", "SCHEMA", "SCHEMA_VERSION", "OtherSchemaError",
           "TooBig", "add_rows", "check", "connect", "markdown", "name_read", "stored_name",
           "tables"]

#: Versions: 1 first; 2 contexts and call stats; 3 the metadata in ``function.cfg``
#: declares its backedges (every edge from a loop's body to its header), which changes
#: the numbering of functions whose loops catch exceptions: numbers of a version 2
#: file would decode to the wrong paths; 4 ``function.cfg`` holds the typed contract's
#: compact form (:meth:`pathprof.contract.FunctionInfo.encode`); 5 the contracts and
#: sources kept once per module and source hash, compressed (tables ``module`` and
#: ``source``), a function row naming its position in its module's contract, and
#: call stats only of functions some call of which raised.
SCHEMA_VERSION = 5

#: The tables, each with a comment saying what a row is and a comment per column. What
#: a data file holds is this text without its comments (:data:`SCHEMA`).
DOCUMENTED_SCHEMA = """
CREATE TABLE meta (  -- the file's versions and what its runs measured
    key TEXT PRIMARY KEY,  -- schema_version, pathprof_version, selections, or a combine's marker
    value TEXT NOT NULL);  -- the version; selections: a JSON list of {"source", "include", "omit"}
CREATE TABLE run (  -- one row per run (--append and combine add runs)
    id INTEGER PRIMARY KEY,
    started REAL NOT NULL,  -- when it started, seconds since the epoch
    argv TEXT NOT NULL,  -- its command line, a JSON list
    python TEXT NOT NULL,  -- the version of the Python it ran on (3.14.0)
    mode TEXT NOT NULL,  -- what it measured (path, edge): a file holds runs of one mode
    metric TEXT,  -- time where --metric time measured each path's time, else NULL
    pid INTEGER NOT NULL,  -- its process
    hostname TEXT NOT NULL);  -- its host (a blob where the name is not UTF-8)
CREATE TABLE module (  -- one row per measured file and version of its source
    id INTEGER PRIMARY KEY,
    file TEXT NOT NULL,  -- the file's whole path (a blob of its bytes where not UTF-8)
    source_hash TEXT NOT NULL,  -- the hash of the source the contract was built from
    contract BLOB NOT NULL,  -- the contract of its functions (ModuleInfo.encode), zlib-compressed
    crc INTEGER NOT NULL);  -- the CRC-32 of the contract's compressed bytes
CREATE TABLE source (  -- one row per version of a source, so reports work after it changed
    source_hash TEXT PRIMARY KEY,
    text BLOB NOT NULL,  -- the source, UTF-8, zlib-compressed
    crc INTEGER NOT NULL);  -- the CRC-32 of the compressed bytes
CREATE TABLE function (  -- every measured function, run or not
    id INTEGER PRIMARY KEY,
    module_id INTEGER NOT NULL REFERENCES module (id),
    position INTEGER NOT NULL,  -- its position in its module's contract
    qualname TEXT NOT NULL,  -- its qualified name
    first_line INTEGER NOT NULL,  -- its def line
    paths TEXT NOT NULL,  -- how many paths it has, in decimal (it may pass 64 bits)
    blocks INTEGER NOT NULL,  -- its blocks
    edges INTEGER NOT NULL);  -- its edges
CREATE TABLE path (  -- the paths a function ran, and cuts (a path an exception ended)
    function_id INTEGER NOT NULL REFERENCES function (id),
    kind TEXT NOT NULL CHECK (kind IN ('path', 'cut')),  -- path or cut
    path TEXT NOT NULL,  -- path: the Ball-Larus number, in decimal; cut: block:prefix value
    count INTEGER NOT NULL,  -- its runs
    time_ns INTEGER,  -- with --metric time, the nanoseconds its runs took
    PRIMARY KEY (function_id, kind, path));
CREATE TABLE edge (  -- edge mode: the count of every CFG edge
    function_id INTEGER NOT NULL REFERENCES function (id),
    edge INTEGER NOT NULL,  -- the edge's index in the function's contract
    count INTEGER NOT NULL,  -- its runs
    PRIMARY KEY (function_id, edge));
CREATE TABLE call_stats (  -- only functions some call of which raised
    function_id INTEGER PRIMARY KEY REFERENCES function (id),
    raised INTEGER NOT NULL,  -- calls that ended by raising
    unattributed INTEGER NOT NULL);  -- paths an exception cut that could not be placed
CREATE TABLE closed_calls (  -- of the functions that raised, generators closed early
    function_id INTEGER PRIMARY KEY REFERENCES function (id),
    closed INTEGER NOT NULL);  -- generators closed before they ended
CREATE TABLE stopped_counting (  -- functions that, or a loop of which, stopped counting
    function_id INTEGER PRIMARY KEY REFERENCES function (id));  -- its counts: lower bounds
CREATE TABLE vector (  -- with --conditions: the runs of each evaluation vector of a decision
    function_id INTEGER NOT NULL REFERENCES function (id),
    decision INTEGER NOT NULL,  -- the decision's index in the function's contract
    vector INTEGER NOT NULL,  -- the vector; -1 - c: evaluations condition c ended by raising
    count INTEGER NOT NULL,  -- its runs
    PRIMARY KEY (function_id, decision, vector));
CREATE TABLE context (  -- which contexts (tests, with --pathprof-context=test) ran a path
    function_id INTEGER NOT NULL REFERENCES function (id),
    kind TEXT NOT NULL CHECK (kind IN ('path', 'cut')),  -- as in path
    path TEXT NOT NULL,  -- as in path
    context TEXT NOT NULL,  -- the context (a test's id; a blob where not UTF-8)
    PRIMARY KEY (function_id, kind, path, context));
"""

#: The schema a data file is created with: :data:`DOCUMENTED_SCHEMA` without its
#: comments (no ``--`` appears in the SQL itself).
SCHEMA = re.sub(r"[ \t]*--[^\n]*", "", DOCUMENTED_SCHEMA)

#: Pages of 1 KiB: a compressed contract or source that outgrows a page leaves on
#: average half of its last page unused; at SQLite's default of 4 KiB that was 16 %
#: of the file measured on ``import networkx`` (2.03 MB; 1.76 MB with 1 KiB pages).
PAGE_SIZE = "PRAGMA page_size = 1024"

#: Seconds to wait for another writer before reporting the file as locked.
LOCK_TIMEOUT = 5.0

#: ``vector`` made where a file of this version was written before it existed.
VECTOR_TABLE = SCHEMA[SCHEMA.index("CREATE TABLE vector"):].split(";")[0].replace(
    "CREATE TABLE", "CREATE TABLE IF NOT EXISTS")


class OtherSchemaError(DataError):
    """A pathprof data file of another schema version: read it with the pathprof that
    wrote it; a new run (without ``append``) may replace it."""


def check(db: sqlite3.Connection, path: str) -> None:
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


def connect(path: str, shown: str | None = None) -> sqlite3.Connection:
    """``path`` opened, waiting :data:`LOCK_TIMEOUT` for a writer; DataError naming it
    ``shown`` if it cannot be."""
    try:
        return sqlite3.connect(path, timeout=LOCK_TIMEOUT, isolation_level=None)
    except sqlite3.Error as err:
        raise DataError(f"cannot open {shown or path}: {err}") from err


def stored_name(name: str) -> str | bytes:
    """A file name (or a test's id) as the data file keeps it: as text, or, where it
    is not UTF-8, as a blob of its bytes. A POSIX path is bytes, and a directory's
    name need not be UTF-8: Python holds the bytes it cannot decode as lone
    surrogates (``os.fsdecode``), which SQLite's text cannot take; ``os.fsencode``
    gives the path's own bytes back, and :func:`name_read` the same text."""
    try:
        name.encode()
    except UnicodeEncodeError:
        try:
            return os.fsencode(name)
        except UnicodeEncodeError:  # not a name the file system gave (no bytes of it)
            return name.encode("utf-8", "surrogatepass")
    return name


def name_read(value: object) -> str | None:
    """A name :func:`stored_name` stored, as Python holds it; None if ``value`` is
    not one."""
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        try:
            return os.fsdecode(value)
        except UnicodeDecodeError:
            return None
    return None


#: The largest count SQLite keeps exactly: a sum past it would become a REAL (which
#: reads back as damaged), and a value past it does not bind. A count or time that
#: would pass it is refused (:class:`TooBig`) and nothing of the run is added.
MAX_COUNT = 2**63 - 1


def _fits(column: str) -> str:
    """SQL: adding ``excluded.<column>`` to ``<column>`` stays within MAX_COUNT (a
    row that is not an integer, damaged, is added to as before; a report names it)."""
    return (f"(excluded.{column} IS NULL OR {column} IS NULL OR typeof({column}) != "
            f"'integer' OR {column} <= {MAX_COUNT} - excluded.{column})")


# Each addition updates a row only when its sums fit: a row left as it was is one
# fewer change than rows given (:func:`add_rows`), and the transaction is refused.
ADD_PATH = ("INSERT INTO path VALUES (?, ?, ?, ?, ?) ON CONFLICT (function_id, kind, path) "
            "DO UPDATE SET count = count + excluded.count, "
            "time_ns = CASE WHEN excluded.time_ns IS NULL THEN time_ns "
            "ELSE coalesce(time_ns, 0) + excluded.time_ns END "
            f"WHERE {_fits('count')} AND {_fits('time_ns')}")
ADD_VECTOR = ("INSERT INTO vector VALUES (?, ?, ?, ?) ON CONFLICT (function_id, decision, "
              f"vector) DO UPDATE SET count = count + excluded.count WHERE {_fits('count')}")
ADD_EDGE = ("INSERT INTO edge VALUES (?, ?, ?) ON CONFLICT (function_id, edge) "
            f"DO UPDATE SET count = count + excluded.count WHERE {_fits('count')}")
ADD_STATS = ("INSERT INTO call_stats VALUES (?, ?, ?) ON CONFLICT (function_id) DO "
             "UPDATE SET raised = raised + excluded.raised, "
             "unattributed = unattributed + excluded.unattributed "
             f"WHERE {_fits('raised')} AND {_fits('unattributed')}")
ADD_CLOSED = ("INSERT INTO closed_calls VALUES (?, ?) ON CONFLICT (function_id) DO "
              f"UPDATE SET closed = closed + excluded.closed WHERE {_fits('closed')}")


class TooBig(Exception):
    """A count or time too big for the data file (past :data:`MAX_COUNT`)."""


def add_rows(db: sqlite3.Connection, statement: str, rows: list[tuple[Any, ...]], what: str,
             counts: tuple[int, ...]) -> None:
    """``statement`` (an addition above) for every row: :class:`TooBig` if a value
    at one of the positions ``counts`` or a sum with what the file holds would pass
    :data:`MAX_COUNT` (the caller's transaction is then to be rolled back)."""
    for index in counts:
        values = list(filter(None, map(operator.itemgetter(index), rows)))  # (C loops)
        for value in (max(values, default=0), min(values, default=0)):
            if not -MAX_COUNT <= value <= MAX_COUNT:
                raise TooBig(f"a {what} of {value:,}")
    if rows and db.executemany(statement, rows).rowcount != len(rows):
        raise TooBig(f"a {what} added to the file's")


# -- The documentation, from the SQL's comments ---------------------------------------

_TABLE = re.compile(r"CREATE TABLE (\w+) \(\s*(?:--\s*(.*))?")
_COLUMN = re.compile(r"\s+(\w+) ([A-Z]+)\b[^-\n]*?(?:--\s*(.*))?$")


def tables() -> dict[str, tuple[str, list[tuple[str, str, str]]]]:
    """Each table of :data:`DOCUMENTED_SCHEMA` -> (what a row is, its columns as
    (name, type, what it holds)); the columns are the ones SQLite reads from
    :data:`SCHEMA` (ValueError if the comments and the SQL disagree)."""
    found: dict[str, tuple[str, list[tuple[str, str, str]]]] = {}
    table = ""
    for line in DOCUMENTED_SCHEMA.splitlines():
        start = _TABLE.match(line)
        if start:
            table = start[1]
            found[table] = (start[2] or "", [])
            continue
        column = _COLUMN.match(line)
        if table and column and column[1] != "PRIMARY":
            found[table][1].append((column[1], column[2], column[3] or ""))
    db = sqlite3.connect(":memory:")
    try:
        db.executescript(SCHEMA)
        for name, (_, columns) in found.items():
            held = [(row[1], row[2]) for row in db.execute(f"PRAGMA table_info({name})")]
            if held != [(c[0], c[1]) for c in columns]:
                raise ValueError(f"table {name}: comments parse as {columns}, "
                                     f"SQLite reads {held}")
        names = {row[0] for row in db.execute("SELECT name FROM sqlite_master "
                                              "WHERE type = 'table'")}
    finally:
        db.close()
    if names != set(found):
        raise ValueError(f"tables {sorted(names)}, comments of {sorted(found)}")
    return found


def markdown() -> str:
    """The tables as ``docs/data-file.md`` shows them: a list of tables, each with its
    columns."""
    lines = []
    for name, (what, columns) in tables().items():
        lines.append(f"- `{name}`: {what}")
        for column, kind, holds in columns:
            lines.append(f"  - `{column}` {kind}" + (f": {holds}" if holds else ""))
    return "\n".join(lines) + "\n"
