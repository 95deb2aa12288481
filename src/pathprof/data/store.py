"""The data file: an SQLite database of runs, functions and their path counts.

Like coverage.py's ``.coverage``, one file per measurement (``.pathprof`` by
default). Never pickle: every value is text, a number, or zlib-compressed UTF-8
text, so a file can be read by any SQLite client and cannot run code when loaded.

Schema (version :data:`SCHEMA_VERSION`)::

    meta(key PRIMARY KEY, value)           schema_version, pathprof version
    run(id, started, argv, python, mode, metric, pid, hostname)
    module(id, file, source_hash, contract, crc)
        contract: the contract of the module's functions as the generated code
        handed it to the runtime (ModuleInfo.encode), zlib-compressed; crc: the
        CRC-32 of those bytes. One row per file and source hash (another only for
        another contract of the same source, as copies of a parallel run have)
    source(source_hash PRIMARY KEY, text, crc)   the source the contracts were
                                           built from, zlib-compressed, once per hash
    function(id, module_id, position, qualname, first_line, paths, blocks, edges)
        a measured function (run or not): its position in its module's contract,
        and what bounds its rows without decoding the contract (paths possible, as
        decimal text, blocks, edges); one row per module row and position
    path(function_id, kind, path, count, time_ns)
        kind 'path': path is the Ball-Larus number, in decimal (numbers can
        exceed SQLite's 64-bit integers); kind 'cut': "<block>:<prefix value>"
    edge(function_id, edge, count)         edge mode: count of every CFG edge
    call_stats(function_id, raised, unattributed)   functions some call of which raised
    closed_calls(function_id, closed)      of those, generators closed early
    stopped_counting(function_id)          went back to their original code
    context(function_id, kind, path, context)   which contexts (tests) ran a path
    vector(function_id, decision, vector, count)  conditions measured: runs of each
                                           evaluation vector of a decision (vector
                                           -1 - c: evaluations condition c ended by
                                           raising); made when first needed in a file
                                           of this version written before it existed

What every run repeats, the contracts and the sources, is kept once
(:mod:`pathprof.data.modules`): a run that replaces a file holding the same code
takes that file's compressed contracts and sources, after checking them, instead of
compressing its own again; a run added to a file adds only what it lacks; so does
:func:`combine`, which copies them compressed.

Guarantees: a write is atomic (a new file is built beside the target and renamed
over it; ``append`` adds in one SQLite transaction). A file that is not a
pathprof data file, is corrupt, or locked is reported with
:class:`~pathprof.exceptions.DataError` and never overwritten; so is a file of
another schema version, except that a new run (not ``append``) replaces it.
"""

from __future__ import annotations

import codecs
import contextlib
import gc
import json
import math
import operator
import os
import re
import socket
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

from pathprof.contract import ContractError, FunctionInfo
from pathprof.data import files as beside
from pathprof.data.measurement import Measurement, RunInfo, Selection, source_conflicts
from pathprof.data.modules import ModuleContract, Packed, PackedError, Sources
from pathprof.data.profile import FunctionProfile, merge
from pathprof.exceptions import DataError, NoDataError, PathprofError
from pathprof.hashing import source_hash
from pathprof.version import __version__

__all__ = ["SCHEMA_VERSION", "Measurement", "RunInfo", "combine", "erase", "read",
           "source_conflicts", "write"]

#: Versions: 1 first; 2 contexts and call stats; 3 the metadata in ``function.cfg``
#: declares its backedges (every edge from a loop's body to its header), which changes
#: the numbering of functions whose loops catch exceptions: numbers of a version 2
#: file would decode to the wrong paths; 4 ``function.cfg`` holds the typed contract's
#: compact form (:meth:`pathprof.contract.FunctionInfo.encode`); 5 the contracts and
#: sources kept once per module and source hash, compressed (tables ``module`` and
#: ``source``), a function row naming its position in its module's contract, and
#: call stats only of functions some call of which raised.
SCHEMA_VERSION = 5

_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE run (
    id INTEGER PRIMARY KEY, started REAL NOT NULL, argv TEXT NOT NULL, python TEXT NOT NULL,
    mode TEXT NOT NULL, metric TEXT, pid INTEGER NOT NULL, hostname TEXT NOT NULL);
CREATE TABLE module (
    id INTEGER PRIMARY KEY, file TEXT NOT NULL, source_hash TEXT NOT NULL,
    contract BLOB NOT NULL, crc INTEGER NOT NULL);
CREATE TABLE source (
    source_hash TEXT PRIMARY KEY, text BLOB NOT NULL, crc INTEGER NOT NULL);
CREATE TABLE function (
    id INTEGER PRIMARY KEY, module_id INTEGER NOT NULL REFERENCES module (id),
    position INTEGER NOT NULL, qualname TEXT NOT NULL, first_line INTEGER NOT NULL,
    paths TEXT NOT NULL, blocks INTEGER NOT NULL, edges INTEGER NOT NULL);
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
CREATE TABLE vector (
    function_id INTEGER NOT NULL REFERENCES function (id), decision INTEGER NOT NULL,
    vector INTEGER NOT NULL, count INTEGER NOT NULL,
    PRIMARY KEY (function_id, decision, vector));
CREATE TABLE context (
    function_id INTEGER NOT NULL REFERENCES function (id),
    kind TEXT NOT NULL CHECK (kind IN ('path', 'cut')), path TEXT NOT NULL,
    context TEXT NOT NULL, PRIMARY KEY (function_id, kind, path, context));
"""

#: Pages of 1 KiB: a compressed contract or source that outgrows a page leaves on
#: average half of its last page unused; at SQLite's default of 4 KiB that was 16 %
#: of the file measured on ``import networkx`` (2.03 MB; 1.76 MB with 1 KiB pages).
_PAGE_SIZE = "PRAGMA page_size = 1024"

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


def _connect(path: str, shown: str | None = None) -> sqlite3.Connection:
    try:
        return sqlite3.connect(path, timeout=LOCK_TIMEOUT, isolation_level=None)
    except sqlite3.Error as err:
        raise DataError(f"cannot open {shown or path}: {err}") from err


def _stored_name(name: str) -> str | bytes:
    """A file name (or a test's id) as the data file keeps it: as text, or, where it
    is not UTF-8, as a blob of its bytes. A POSIX path is bytes, and a directory's
    name need not be UTF-8: Python holds the bytes it cannot decode as lone
    surrogates (``os.fsdecode``), which SQLite's text cannot take; ``os.fsencode``
    gives the path's own bytes back, and :func:`_name` the same text."""
    try:
        name.encode()
    except UnicodeEncodeError:
        try:
            return os.fsencode(name)
        except UnicodeEncodeError:  # not a name the file system gave (no bytes of it)
            return name.encode("utf-8", "surrogatepass")
    return name


def _name(value: object) -> str | None:
    """A name :func:`_stored_name` stored, as Python holds it; None if ``value`` is
    not one."""
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        try:
            return os.fsdecode(value)
        except UnicodeDecodeError:
            return None
    return None


#: A function's profile, the contract of its module and its position there.
_Placed = tuple[FunctionProfile, ModuleContract, int]

#: The largest count SQLite keeps exactly: a sum past it would become a REAL (which
#: reads back as damaged), and a value past it does not bind. A count or time that
#: would pass it is refused (:class:`_TooBig`) and nothing of the run is added.
MAX_COUNT = 2**63 - 1


def _fits(column: str) -> str:
    """SQL: adding ``excluded.<column>`` to ``<column>`` stays within MAX_COUNT (a
    row that is not an integer, damaged, is added to as before; a report names it)."""
    return (f"(excluded.{column} IS NULL OR {column} IS NULL OR typeof({column}) != "
            f"'integer' OR {column} <= {MAX_COUNT} - excluded.{column})")


# Each addition updates a row only when its sums fit: a row left as it was is one
# fewer change than rows given (:func:`_add`), and the transaction is refused.
_ADD_PATH = ("INSERT INTO path VALUES (?, ?, ?, ?, ?) ON CONFLICT (function_id, kind, path) "
             "DO UPDATE SET count = count + excluded.count, "
             "time_ns = CASE WHEN excluded.time_ns IS NULL THEN time_ns "
             "ELSE coalesce(time_ns, 0) + excluded.time_ns END "
             f"WHERE {_fits('count')} AND {_fits('time_ns')}")
_VECTOR_TABLE = _SCHEMA[_SCHEMA.index("CREATE TABLE vector"):].split(";")[0].replace(
    "CREATE TABLE", "CREATE TABLE IF NOT EXISTS")
_ADD_VECTOR = ("INSERT INTO vector VALUES (?, ?, ?, ?) ON CONFLICT (function_id, decision, "
               f"vector) DO UPDATE SET count = count + excluded.count WHERE {_fits('count')}")
_ADD_EDGE = ("INSERT INTO edge VALUES (?, ?, ?) ON CONFLICT (function_id, edge) "
             f"DO UPDATE SET count = count + excluded.count WHERE {_fits('count')}")
_ADD_STATS = ("INSERT INTO call_stats VALUES (?, ?, ?) ON CONFLICT (function_id) DO "
              "UPDATE SET raised = raised + excluded.raised, "
              "unattributed = unattributed + excluded.unattributed "
              f"WHERE {_fits('raised')} AND {_fits('unattributed')}")
_ADD_CLOSED = ("INSERT INTO closed_calls VALUES (?, ?) ON CONFLICT (function_id) DO "
               f"UPDATE SET closed = closed + excluded.closed WHERE {_fits('closed')}")


class _TooBig(Exception):
    """A count or time too big for the data file (past :data:`MAX_COUNT`)."""


def _add(db: sqlite3.Connection, statement: str, rows: list[tuple[Any, ...]], what: str,
         counts: tuple[int, ...]) -> None:
    """``statement`` (an addition above) for every row: :class:`_TooBig` if a value
    at one of the positions ``counts`` or a sum with what the file holds would pass
    :data:`MAX_COUNT` (the caller's transaction is then to be rolled back)."""
    for index in counts:
        values = list(filter(None, map(operator.itemgetter(index), rows)))  # (C loops)
        for value in (max(values, default=0), min(values, default=0)):
            if not -MAX_COUNT <= value <= MAX_COUNT:
                raise _TooBig(f"a {what} of {value:,}")
    if rows and db.executemany(statement, rows).rowcount != len(rows):
        raise _TooBig(f"a {what} added to the file's")


def _contracts(functions: list[FunctionProfile]) -> list[_Placed]:
    """Each profile, in order, with its module's contract and its position there: the
    contract it came with (the runtime's, or a data file's), or else one made of the
    metadata of the profiles of its file and source that came without."""
    placed: dict[int, tuple[ModuleContract, int]] = {}
    loose: dict[tuple[str, str], list[FunctionProfile]] = {}
    for fn in functions:
        record = fn.module
        if (record is not None and record.file == fn.file
                and record.source_hash == fn.source_hash
                and (fn.info is None or record.holds(fn.info, fn.position))):
            placed[id(fn)] = (record, fn.position)
        else:
            loose.setdefault((fn.file, fn.source_hash), []).append(fn)
    for (file, digest), group in loose.items():
        positions: dict[int, int] = {}
        metas: list[FunctionInfo] = []
        for fn in group:
            if id(fn.meta) not in positions:
                positions[id(fn.meta)] = len(metas)
                metas.append(fn.meta)
        made = ModuleContract.of_functions(file, digest, metas)
        for fn in group:
            placed[id(fn)] = (made, positions[id(fn.meta)])
    return [(fn, *placed[id(fn)]) for fn in functions]


class _ModuleRow:
    """A module row of a file being written: its id, its contract (read when first
    compared) and the position of each outline in it (when first asked for)."""

    __slots__ = ("id", "outlines", "packed")

    def __init__(self, mid: int, packed: Packed | None = None) -> None:
        self.id = mid
        self.packed = packed
        self.outlines: dict[tuple[str, int, int, int, int], int] | None = None


class _Modules:
    """The module rows of a data file being written, and which holds each function's
    contract: a row of the same file and source whose contract is the same text, or
    else one that has the function (the same outline) at some position, or else a
    new row of its own contract."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db
        self._rows: dict[tuple[str, str], list[_ModuleRow]] = {}
        last = 0
        for mid, file, digest in db.execute("SELECT id, file, source_hash FROM module"):
            self._rows.setdefault((_name(file) or "", digest), []).append(_ModuleRow(mid))
            last = max(last, mid) if isinstance(mid, int) else last
        self._next = last + 1
        #: id of a contract -> (the contract, its row)
        self._rows_of: dict[int, tuple[ModuleContract, int]] = {}
        #: the rows to insert
        self.new: list[tuple[int, str | bytes, str, bytes, int]] = []

    def place(self, fn: FunctionProfile, record: ModuleContract, position: int
              ) -> tuple[int, int]:
        """The module row and position of ``fn``, whose contract is ``record``."""
        known = self._rows_of.get(id(record))
        if known is not None and known[0] is record:
            return known[1], position
        rows = self._rows.setdefault((record.file, record.source_hash), [])
        for row in rows:
            if self._same(record, row):
                self._rows_of[id(record)] = (record, row.id)
                return row.id, position
        outline = fn.outline
        for row in rows:
            found = self._outlines(row).get(outline)
            if found is not None:
                return row.id, found
        mid = self._next
        self._next += 1
        self.new.append((mid, _stored_name(record.file), record.source_hash,
                         record.packed.data, record.packed.crc))
        rows.append(_ModuleRow(mid, record.packed))
        self._rows_of[id(record)] = (record, mid)
        return mid, position

    def _packed(self, row: _ModuleRow) -> Packed:
        if row.packed is None:
            (blob,) = self._db.execute("SELECT contract FROM module WHERE id = ?",
                                       (row.id,)).fetchone()
            row.packed = Packed(data=blob)
        return row.packed

    def _same(self, record: ModuleContract, row: _ModuleRow) -> bool:
        try:
            return record.packed.same(self._packed(row))
        except PackedError:  # a damaged row, left as it is (added to, not read)
            return False

    def _outlines(self, row: _ModuleRow) -> dict[tuple[str, int, int, int, int], int]:
        if row.outlines is None:
            try:
                outlines = ModuleContract("", "", self._packed(row)).outlines()
            except (PackedError, ContractError, RecursionError):  # damaged: not read
                outlines = []
            row.outlines = {}
            for index, outline in enumerate(outlines):
                row.outlines.setdefault(outline, index)
        return row.outlines


def _source_rows(sources: Sources, held: set[str]) -> Iterator[tuple[str, bytes, int]]:
    """The rows of the sources the file does not hold, compressed one at a time; a
    source read only now whose file changed since the run is left out, as one that
    changed before the run ended is (its reports say the source changed)."""
    for digest, packed in sources.digests():
        if digest not in held:
            try:
                data = packed.data
            except PackedError:
                continue
            if packed.readable:  # (else too compressible to be read back: not kept)
                yield digest, data, packed.crc


def _insert(db: sqlite3.Connection, runs: list[RunInfo], placed: list[_Placed],
            sources: Sources, selections: Sequence[Selection] = ()) -> None:
    """Add ``runs`` and the profiles to the file open as ``db`` (in the caller's
    transaction): what the file holds of their contracts and sources is not added
    again, and a profile of a function the file has adds to its counts."""
    if selections:
        _add_selections(db, selections)
    db.executemany(
        "INSERT INTO run (started, argv, python, mode, metric, pid, hostname) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        [(run.started, json.dumps(run.argv), run.python, run.mode, run.metric, run.pid,
          _stored_name(run.hostname)) for run in runs])
    modules = _Modules(db)
    known = {(mid, position): fid for fid, mid, position
             in db.execute("SELECT id, module_id, position FROM function")}
    next_id = max(known.values(), default=0) + 1
    functions, paths, edges, contexts, stats, closed, stopped = [], [], [], [], [], [], []
    vectors: list[tuple[int, int, int, int]] = []
    for fn, record, position in placed:
        mid, position = modules.place(fn, record, position)
        fid = known.get((mid, position))
        if fid is None:
            fid = known[(mid, position)] = next_id
            next_id += 1
            qualname, line, possible, blocks, nedges = fn.outline
            functions.append((fid, mid, position, qualname, line, str(possible), blocks,
                              nedges))
        if fn.counts:  # (most functions of a big program never run)
            times = fn.times
            paths += [(fid, "path", key, count, times.get(key))
                      for key, count in fn.counts.items()]
        if fn.cuts:
            paths += [(fid, "cut", key, count, None) for key, count in fn.cuts.items()]
        if fn.edges:
            edges += [(fid, edge, count) for edge, count in fn.edges.items()]
        if fn.vectors:
            vectors += [(fid, d, k, count) for (d, k), count in fn.vectors.items()]
        if fn.contexts:
            contexts += [(fid, *_split_key(key), _stored_name(name))
                         for key, names in fn.contexts.items() for name in sorted(names)]
        if fn.raised or fn.unattributed:
            stats.append((fid, fn.raised, fn.unattributed))
        if fn.closed:
            closed.append((fid, fn.closed))
        if fn.stopped:
            stopped.append((fid,))
    db.executemany("INSERT INTO module VALUES (?, ?, ?, ?, ?)", modules.new)
    held = {digest for (digest,) in db.execute("SELECT source_hash FROM source")}
    db.executemany("INSERT INTO source VALUES (?, ?, ?)", _source_rows(sources, held))
    db.executemany("INSERT INTO function VALUES (?, ?, ?, ?, ?, ?, ?, ?)", functions)
    _add(db, _ADD_PATH, paths, "path's count or time", (3, 4))
    _add(db, _ADD_EDGE, edges, "edge's count", (2,))
    if vectors:
        db.execute(_VECTOR_TABLE)
        _add(db, _ADD_VECTOR, vectors, "vector's count", (3,))
    db.executemany("INSERT OR IGNORE INTO context VALUES (?, ?, ?, ?)", contexts)
    _add(db, _ADD_STATS, stats, "count of calls that raised", (1, 2))
    _add(db, _ADD_CLOSED, closed, "count of generators closed", (1,))
    db.executemany("INSERT OR IGNORE INTO stopped_counting VALUES (?)", stopped)


#: ``meta``'s key of what the runs measured, where they named it: a JSON list of
#: :meth:`Selection.to_json`.
_SELECTIONS = "selections"
#: The most selections a file keeps (each run adds one only if it is new).
_MOST_SELECTIONS = 1000


def _selections(db: sqlite3.Connection) -> list[Selection]:
    """The selections ``meta`` holds (:class:`_Damaged` if they are not what pathprof
    wrote)."""
    row = db.execute("SELECT value FROM meta WHERE key = ?", (_SELECTIONS,)).fetchone()
    if row is None:
        return []
    try:
        value = json.loads(row[0]) if isinstance(row[0], str) and len(row[0]) < 1 << 24 \
            else None
        if not isinstance(value, list) or len(value) > _MOST_SELECTIONS:
            raise ValueError("not a list of selections")
        return [Selection.from_json(entry) for entry in value]
    except (ValueError, RecursionError) as err:
        raise _Damaged(f"meta row {_SELECTIONS!r} is not what pathprof writes "
                       f"({err})") from None


def _add_selections(db: sqlite3.Connection, added: Sequence[Selection]) -> None:
    held = _selections(db)
    new = [s for s in dict.fromkeys(added) if s not in held]
    if not new:
        return
    kept = [*held, *new][-_MOST_SELECTIONS:]
    db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)",
               (_SELECTIONS, json.dumps([s.to_json() for s in kept], separators=(",", ":"))))


def _split_key(key: str) -> tuple[str, str]:
    """("path", number) or ("cut", "<block>:<value>") for a path key of FunctionProfile."""
    return ("cut", key[4:]) if key.startswith("cut:") else ("path", key)


def write(path: str, run: RunInfo | list[RunInfo], functions: Iterable[FunctionProfile],
          sources: Mapping[tuple[str, str], str], *, append: bool = False,
          selections: Sequence[Selection] = ()) -> None:
    """Save one run. Without ``append`` the file is replaced atomically (but never
    when it exists and is not a pathprof data file, or is one whose rows are damaged:
    :class:`DataError`, as :func:`read` reports it); with ``append`` the run is added
    to the existing file in one transaction (created if missing). ``sources`` maps
    ``(file, source hash)`` to the source text (a :class:`~pathprof.data.modules.Sources`
    read from a data file is copied as it is, compressed); ``selections``, what the run
    measured where it named it (``meta``'s ``selections``: those the file holds are kept,
    these added)."""
    with _no_collection():
        _write(path, run, list(functions), sources, append, selections=selections)


def _write(path: str, run: RunInfo | list[RunInfo], functions: list[FunctionProfile],
           sources: Mapping[tuple[str, str], str], append: bool, marker: str | None = None,
           selections: Sequence[Selection] = ()) -> None:
    """:func:`write`; with ``append``, a ``marker`` is a key added to ``meta`` in the
    same transaction (:func:`combine`'s record that it added a file)."""
    placed = _contracts(functions)
    packed = sources if isinstance(sources, Sources) else Sources(sources)
    runs = run if isinstance(run, list) else [run]
    # Every save, adding or replacing, removes what killed saves left here.
    _remove_stale_temps(os.path.dirname(os.path.abspath(path)))
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
                if not append:  # what the run replaces: damaged, it stays
                    _check_before_replacing(db, path, placed, packed)
            if append:
                try:
                    db.execute("BEGIN IMMEDIATE")
                    _check_modes(db, path, runs)
                    _insert(db, runs, placed, packed, selections)
                    if marker is not None:
                        db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)",
                                   (marker, str(time.time())))
                    db.execute("COMMIT")
                except BaseException as err:
                    if db.in_transaction:
                        db.execute("ROLLBACK")
                    if isinstance(err, _TooBig):
                        raise DataError(f"cannot add to {path}: {err} would pass "
                                        f"{MAX_COUNT:,}, the largest count a data file "
                                        "keeps; nothing was added, and it was left as it "
                                        "was") from None
                    if isinstance(err, sqlite3.Error):
                        raise DataError(f"cannot add to {path}: {err}") from err
                    if isinstance(err, _Damaged):
                        raise DataError(f"cannot add to {path}: it is damaged ({err}); "
                                        "nothing was added, and it was left as it was"
                                        ) from None
                    raise
                return
        finally:
            db.close()
    try:
        _build_and_rename(path, lambda db: _insert(db, runs, placed, packed, selections))
    except _TooBig as err:
        raise DataError(f"cannot write {path}: {err} would pass {MAX_COUNT:,}, the largest "
                        "count a data file keeps; nothing was written") from None


@contextlib.contextmanager
def _no_collection() -> Iterator[None]:
    """No cyclic garbage collection meanwhile: reading and writing a data file make
    tuples by the thousand and no cycles, and in a program with a large heap each
    collection they would set off walks all of it (0.2 s of a 0.4 s write, measured
    after ``import networkx``)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _check_before_replacing(db: sqlite3.Connection, path: str, placed: list[_Placed],
                            sources: Sources) -> None:
    """Raise :class:`DataError` if the file ``path`` (open as ``db``, of this schema)
    is damaged: every row checked as :func:`read` checks it, every compressed
    contract and source against its CRC-32. A contract of the same file and source
    as one of the run's, and the same checksum, is the run's own: it is not decoded
    (its function rows are checked against the run's), and the run takes its
    compressed bytes, as it takes those of the sources the file holds: what the file
    holds already is not compressed again. Every other contract is decoded and
    checked, as a report would."""
    ours: dict[tuple[str, str], list[ModuleContract]] = {}
    for _, record, _ in placed:
        held = ours.setdefault((record.file, record.source_hash), [])
        if not any(record is other for other in held):
            held.append(record)

    def check() -> None:
        known: dict[int, ModuleContract] = {}
        for mid, stored, digest, blob, crc in db.execute(
                "SELECT id, file, source_hash, contract, crc FROM module"):
            file = _name(stored) or repr(stored)  # (a damaged name: _read names it)
            old = _intact(blob, crc, f"module row {mid} ({file}): its contract")
            for record in ours.get((file, digest), ()):
                if record.packed.same(old):
                    known[mid] = record
                    break
        for digest, blob, crc in db.execute("SELECT source_hash, text, crc FROM source"):
            old = _intact(blob, crc, f"source row {digest!r}: its text")
            mine = sources.packed(digest)
            if mine is not None and mine.unread:
                mine.adopt(old)  # the same source hash: the same text, never read
            elif mine is not None:
                mine.same(old)
        _read(db, lambda mid, file: mid not in known, known)

    _checked(db, path, check)


def _intact(blob: object, crc: object, what: str) -> Packed:
    """``blob`` as a :class:`Packed` text, its CRC-32 checked (not decompressed):
    :class:`_Damaged` if it is not what pathprof wrote."""
    if not isinstance(blob, bytes) or len(blob) < 4:
        raise _Damaged(f"{what} is {type(blob).__name__}, not compressed text")
    packed = Packed(data=blob)
    if packed.crc != crc:
        raise _Damaged(f"{what} does not match its CRC-32 ({crc!r})")
    return packed


def _unpacked(blob: object, crc: object, what: str) -> Packed:
    """``blob`` as a :class:`Packed` text, checked and decompressed."""
    packed = _intact(blob, crc, what)
    try:
        packed.text  # noqa: B018 - decompressing is the check
    except PackedError as err:
        raise _Damaged(f"{what} does not decompress ({err})") from None
    return packed


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
    temp = _new_temp(directory)
    try:
        db = sqlite3.connect(temp, isolation_level=None)
        try:
            # One transaction from the first table on, and no rollback journal: a
            # file nobody reads until it is renamed, removed if building it fails.
            db.execute("PRAGMA journal_mode = OFF")
            db.execute(_PAGE_SIZE)
            db.executescript("BEGIN;" + _SCHEMA)
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
            db.execute(_PAGE_SIZE)
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


def read(path: str, files: Callable[[str], bool] | None = None) -> Measurement:
    """Read a data file; functions measured in several runs come merged. With
    ``files``, only the functions (and sources) of the files it accepts: the
    contracts of the others are not decoded (their rows are checked all the same)."""
    return _read_file(path, path, files)


def _read_file(path: str, shown: str, files: Callable[[str], bool] | None = None
               ) -> Measurement:
    """:func:`read` of ``path``, named ``shown`` in what it reports (a file claimed to
    be combined is named by the name it had)."""
    if not os.path.exists(path):
        raise NoDataError(f"no data file {shown}: run `pathprof run` first")
    db = _connect(path, shown)
    try:
        _check(db, shown)
        wanted = None if files is None else (lambda mid, file: files(file))
        with _no_collection():
            return _checked(db, shown, lambda: _read(db, wanted))
    finally:
        db.close()


_T = TypeVar("_T")


def _checked(db: sqlite3.Connection, path: str, reading: Callable[[], _T]) -> _T:
    """``reading()`` of the data file ``path`` (open as ``db``, of this schema), every
    row it meets checked: :class:`DataError` naming the file and the row if one is
    damaged."""
    try:
        return reading()
    except _Damaged as err:
        raise DataError(f"{path} is damaged: {err}; it was left untouched") from None
    except sqlite3.OperationalError as err:
        if "locked" in str(err):
            raise DataError(f"{path} is locked by another process (still writing it after "
                            f"{LOCK_TIMEOUT:g} s); it was left untouched") from err
        raise DataError(f"{path} is damaged ({err}); it was left untouched") from err
    except RecursionError:  # (contract JSON nested thousands deep: not pathprof's)
        raise DataError(f"{path} is damaged (a value nested too deeply to read); it was "
                        "left untouched") from None
    except (sqlite3.DatabaseError, ValueError, KeyError, TypeError, IndexError,
            OverflowError) as err:
        raise DataError(f"{path} is damaged ({err}); it was left untouched") from err


class _Damaged(Exception):
    """A row of the data file that pathprof did not write: which, and what is wrong."""


#: What a function row bounds: (qualname, code line, paths possible, blocks, edges).
_Outline = tuple[str, int, int, int, int]
_OUTLINE = "(qualname, first line, paths, blocks, edges)"


def _outline(fid: object, row: tuple[Any, ...]) -> _Outline:
    """The outline a function row states, checked for its types."""
    qualname, line, paths, blocks, edges = row
    if not (isinstance(qualname, str) and _is_whole(line) and isinstance(paths, str)
            and paths.isdigit() and int(paths) > 0 and _is_whole(blocks)
            and _is_whole(edges)):
        raise _Damaged(f"function row {fid}: {_OUTLINE} {row!r} are not a function's")
    return qualname, line, int(paths), blocks, edges


def _shown(value: object, most: int = 120) -> str:
    """``repr(value)``, cut to ``most`` characters: a crafted value may be megabytes."""
    text = repr(value)
    return text if len(text) <= most else f"{text[:most]}... ({len(text):,} characters)"


def _is_whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _module(db: sqlite3.Connection, mid: int, file: str, digest: str) -> ModuleContract:
    """Module row ``mid``'s contract, its CRC-32 checked (decoded when first used)."""
    blob, crc = db.execute("SELECT contract, crc FROM module WHERE id = ?", (mid,)).fetchone()
    return ModuleContract(file, digest, _intact(blob, crc, f"module row {mid} ({file}): "
                                                            "its contract"))


def _function(fid: int, mid: int, module: ModuleContract, position: object,
              outline: _Outline) -> FunctionProfile:
    """The profile of function row ``fid``: its metadata decoded from its module's
    contract and checked against what the row says of it."""
    try:
        module.info()
    except PackedError as err:
        raise _Damaged(f"module row {mid} ({module.file}): its contract does not "
                       f"decompress ({err})") from None
    except ContractError as err:
        raise _Damaged(f"module row {mid} ({module.file}): its contract is not a "
                       f"module's metadata ({err})") from None
    try:
        meta = module.function(position)  # type: ignore[arg-type]
    except ContractError as err:
        raise _Damaged(f"function row {fid} ({module.file}): its contract is not a "
                       f"function's metadata ({err})") from None
    if meta.outline != outline:
        raise _Damaged(f"function row {fid} ({module.file}): {_OUTLINE} {outline!r} "
                       f"differ from its contract's {meta.outline!r}")
    return FunctionProfile(module.file, outline[0], outline[1], module.source_hash, meta,
                           module=module, position=position)  # type: ignore[arg-type]


def _same_outline(fid: int, mid: int, module: ModuleContract, position: object,
                  outline: _Outline) -> None:
    """Check function row ``fid`` against ``module``, a contract known to be what
    module row ``mid`` holds."""
    info = module.info()
    if not (isinstance(position, int) and 0 <= position < len(info.functions)):
        raise _Damaged(f"function row {fid} ({module.file}): no function at position "
                       f"{position!r} of module row {mid}")
    try:
        held = info.outline(position)
    except ContractError as err:
        raise _Damaged(f"function row {fid} ({module.file}): its contract is not a "
                       f"function's metadata ({err})") from None
    if held != outline:
        raise _Damaged(f"function row {fid} ({module.file}): {_OUTLINE} {outline!r} "
                       f"differ from its contract's {held!r}")


def _whole(value: object, what: str) -> int:
    if not _is_whole(value):
        raise _Damaged(f"{what} is {value!r}, not a count")
    return value  # type: ignore[return-value]


def _path_key(outline: _Outline, kind: str, key: object, where: str) -> str:
    """``key`` checked against the function: a path number below its number of paths,
    or ``<block>:<prefix value>`` for a cut path."""
    qualname, _, possible, blocks, _ = outline
    if kind == "path":
        if isinstance(key, str) and key.isdigit() and int(key) < possible:
            return key
        raise _Damaged(f"{where}: {_shown(key)} is not a path of {qualname} "
                       f"(0 to {possible - 1})")
    parts = key.split(":") if isinstance(key, str) else []
    if (len(parts) == 2 and all(p.isdigit() for p in parts)
            and int(parts[0]) < blocks and int(parts[1]) < possible):
        return key  # type: ignore[return-value]
    raise _Damaged(f"{where}: {_shown(key)} is not a cut path of {qualname}")


class _Owners:
    """The function rows of a file: each one's outline, and its profile if read."""

    def __init__(self) -> None:
        self.outlines: dict[int, _Outline] = {}
        self.profiles: dict[int, FunctionProfile] = {}

    def of(self, fid: object, where: str) -> tuple[_Outline, FunctionProfile | None]:
        if fid not in self.outlines:
            raise _Damaged(f"{where}: no function row {fid!r}")
        return self.outlines[fid], self.profiles.get(fid)


def _read(db: sqlite3.Connection, wanted: Callable[[int, str], bool] | None = None,
          known: Mapping[int, ModuleContract] | None = None) -> Measurement:
    """Everything in the file (of the module rows ``wanted`` accepts, given their id
    and file), each row checked: a row pathprof did not write (edited by hand,
    damaged) raises :class:`_Damaged` naming it, before any report sees it. The
    function rows of a module row in ``known`` are checked against that contract,
    which the caller knows the row to hold, without decoding the row's."""
    known = known or {}
    result = Measurement()
    for row in db.execute("SELECT id, started, argv, python, mode, metric, pid, hostname "
                          "FROM run ORDER BY id"):
        result.runs.append(_run(row))
    files_of: dict[int, tuple[str, str]] = {}
    for mid, stored, digest in db.execute("SELECT id, file, source_hash FROM module"):
        file = _name(stored)
        if not (file is not None and isinstance(digest, str)):
            raise _Damaged(f"module row {mid}: {_shown(stored)} and {_shown(digest)} are "
                           "not a file and its source hash")
        files_of[mid] = (file, digest)
    owners = _Owners()
    used: dict[int, ModuleContract] = {}
    for fid, mid, position, *outline_row in db.execute(
            "SELECT id, module_id, position, qualname, first_line, paths, blocks, edges "
            "FROM function ORDER BY id"):
        if mid not in files_of:
            raise _Damaged(f"function row {fid}: no module row {mid!r}")
        outline = owners.outlines[fid] = _outline(fid, tuple(outline_row))
        if mid in known:
            _same_outline(fid, mid, known[mid], position, outline)
        elif wanted is None or wanted(mid, files_of[mid][0]):
            module = used.get(mid)
            if module is None:
                module = used[mid] = _module(db, mid, *files_of[mid])
            owners.profiles[fid] = _function(fid, mid, module, position, outline)
    for rowid, fid, kind, key, count, time_ns in db.execute(
            "SELECT rowid, function_id, kind, path, count, time_ns FROM path"):
        where = f"path row {rowid}"
        outline, fn = owners.of(fid, where)
        key = _path_key(outline, kind, key, where)
        count = _whole(count, f"{where}: its count")
        if time_ns is not None:
            time_ns = _whole(time_ns, f"{where}: its time")
        if fn is None:
            continue
        if kind == "path":
            fn.counts[key] = count
            if time_ns is not None:
                fn.times[key] = time_ns
        else:
            fn.cuts[key] = count
    for rowid, fid, edge, count in db.execute("SELECT rowid, function_id, edge, count "
                                              "FROM edge"):
        where = f"edge row {rowid}"
        outline, fn = owners.of(fid, where)
        if not isinstance(edge, int) or not 0 <= edge < outline[4]:
            raise _Damaged(f"{where}: {edge!r} is not an edge of {outline[0]}")
        count = _whole(count, f"{where}: its count")
        if fn is not None:
            fn.edges[edge] = count
    for fid, raised, unattributed in db.execute("SELECT * FROM call_stats"):
        outline, fn = owners.of(fid, "call_stats row")
        raised = _whole(raised, f"call_stats of {outline[0]}: raised")
        unattributed = _whole(unattributed, f"call_stats of {outline[0]}: unattributed")
        if fn is not None:
            fn.raised, fn.unattributed = raised, unattributed
    if db.execute("SELECT 1 FROM sqlite_master WHERE name = 'closed_calls'").fetchone():
        for fid, closed in db.execute("SELECT function_id, closed FROM closed_calls"):
            outline, fn = owners.of(fid, "closed_calls row")
            closed = _whole(closed, f"closed_calls of {outline[0]}")
            if fn is not None:
                fn.closed = closed
    if db.execute("SELECT 1 FROM sqlite_master WHERE name = 'stopped_counting'").fetchone():
        for (fid,) in db.execute("SELECT function_id FROM stopped_counting"):
            _, fn = owners.of(fid, "stopped_counting row")
            if fn is not None:
                fn.stopped = True
    if db.execute("SELECT 1 FROM sqlite_master WHERE name = 'vector'").fetchone():
        for rowid, fid, d, k, count in db.execute(
                "SELECT rowid, function_id, decision, vector, count FROM vector"):
            where = f"vector row {rowid}"
            _, fn = owners.of(fid, where)
            count = _whole(count, f"{where}: its count")
            if fn is None:
                continue
            decisions = fn.meta.decisions
            if not (isinstance(d, int) and 0 <= d < len(decisions) and isinstance(k, int)
                    and (0 <= k < decisions[d].vectors
                         or -len(decisions[d].conditions) <= k < 0)):
                raise _Damaged(f"{where}: ({d!r}, {k!r}) is not a vector of "
                               f"{fn.qualname}")
            fn.vectors[(d, k)] = count
    for rowid, fid, kind, key, stored in db.execute(
            "SELECT rowid, function_id, kind, path, context FROM context"):
        where = f"context row {rowid}"
        outline, fn = owners.of(fid, where)
        key = _path_key(outline, kind, key, where)
        name = _name(stored)
        if name is None:
            raise _Damaged(f"{where}: {_shown(stored)} is not the name of a context")
        if fn is not None:
            full = key if kind == "path" else f"cut:{key}"
            fn.contexts.setdefault(full, set()).add(name)
    texts: dict[str, Packed] = {}
    for digest in {module.source_hash for module in used.values()}:
        found = db.execute("SELECT text, crc FROM source WHERE source_hash = ?",
                           (digest,)).fetchone()
        if found is not None:
            packed = _unpacked(found[0], found[1], f"source row {digest!r}: its text")
            if _is_source_of(packed.text, digest):  # else not used: read from its file
                texts[digest] = packed
    for module in used.values():
        if module.source_hash in texts:
            result.sources.add(module.file, module.source_hash, texts[module.source_hash])
    result.functions = merge(owners.profiles.values())
    result.selections = _selections(db)
    return result


def _run(row: tuple[Any, ...]) -> RunInfo:
    """The run a run row states, checked for its types."""
    rid, started, argv, python, mode, metric, pid, hostname = row
    try:
        args = json.loads(argv) if isinstance(argv, str) else None
    except (ValueError, RecursionError):
        args = None
    host = _name(hostname)
    if not (isinstance(started, (int, float)) and not isinstance(started, bool)
            and math.isfinite(started) and isinstance(args, list)
            and all(isinstance(arg, str) for arg in args) and isinstance(python, str)
            and isinstance(mode, str) and (metric is None or isinstance(metric, str))
            and _is_whole(pid) and host is not None):
        raise _Damaged(f"run row {rid}: {_shown(row[1:])} are not a run's")
    return RunInfo(float(started), args, python, mode, metric, pid, host)


#: A coding declaration (PEP 263), in a source's first two lines.
_CODING = re.compile(r"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)", re.ASCII | re.MULTILINE)


def _is_source_of(text: str, digest: str) -> bool:
    """Whether ``text`` is the source whose file's bytes hash to ``digest``: the text
    a run keeps is its file decoded as Python decodes it (its coding, less a
    byte-order mark, ``\\r\\n`` and ``\\r`` made ``\\n``), so those are undone to
    compare (a file of mixed line endings cannot be, and is read from its file)."""
    if source_hash(text) == digest:
        return True
    declared = _CODING.search("\n".join(text.split("\n", 2)[:2]))
    encodings = ["utf-8"]
    if declared is not None:
        with contextlib.suppress(LookupError):
            encodings.append(codecs.lookup(declared[1]).name)
    for encoding in dict.fromkeys(encodings):
        for ending in ("\n", "\r\n", "\r"):
            try:
                data = text.replace("\n", ending).encode(encoding)
            except UnicodeEncodeError:
                continue
            if source_hash(data) == digest:
                return True
            if encoding == "utf-8" and source_hash(codecs.BOM_UTF8 + data) == digest:
                return True
    return False


def erase(path: str) -> list[str]:
    """Remove the data file ``path`` and the data files other processes left beside
    it (:func:`~pathprof.data.files.combinable_files`: xdist workers', children's
    that outlived their parent, saves set aside, and files a combine that ended
    had claimed), as ``coverage erase`` does; returns what was removed. A file there
    that is not a pathprof data file (of any schema) is left untouched: DataError
    for ``path`` itself, skipped among the others; so is a directory named ``path``,
    and a file claimed by a combine still running. A file that cannot be removed (a
    read-only directory) is DataError, once the others are removed."""
    import urllib.parse  # (here: the store is imported in the measured program)

    if os.path.isdir(path):
        raise DataError(f"{path} is a directory, not a data file; it was left untouched")
    removed = []
    failed: list[tuple[str, OSError]] = []
    prefix = os.path.basename(path) + "."
    ended = [claim.path for claim in beside.claims(os.path.dirname(path))
             if os.path.basename(claim.original).startswith(prefix)
             and beside.running(claim.host, claim.pid) is False]
    for candidate in [path, *beside.combinable_files(path), *ended]:
        if not os.path.isfile(candidate):
            continue
        try:  # (read only: a file a combine claimed meanwhile is not made again, empty)
            db = sqlite3.connect(f"file:{urllib.parse.quote(os.fsencode(candidate))}?mode=ro",
                                 uri=True, timeout=LOCK_TIMEOUT, isolation_level=None)
        except sqlite3.Error:
            if not os.path.exists(candidate):
                continue  # gone meanwhile (a combine took it)
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
        try:
            os.unlink(candidate)
        except FileNotFoundError:  # removed meanwhile (another erase, a combine)
            continue
        except OSError as err:
            failed.append((candidate, err))
            continue
        removed.append(candidate)
    if failed:
        first, why = failed[0]
        others = len(failed) - 1
        raise DataError(f"cannot remove {first}"
                        + (f" and {others} other file{'s' * (others > 1)} beside it"
                           if others else "")
                        + f" ({why.strerror or why}); "
                        + ("they were" if others else "it was") + " left as "
                        + ("they were" if others else "it was"))
    return removed


def combine(target: str, paths: Iterable[str],
            progress: Callable[[int, int], None] | None = None,
            note: Callable[[str], None] | None = None, *, listed: bool = False
            ) -> list[str]:
    """Add the data files ``paths`` into ``target`` (created if missing) and delete
    them; returns the files combined (by the names they had).

    Each file is claimed before it is read: renamed
    (:func:`~pathprof.data.files.claim_name`), a step only one process can take, so
    two combines at once never add one file twice, and each adds what it claimed.
    A file gone before it could be claimed was taken by another process: with
    ``listed`` (the files were found beside ``target``) ``note`` says how many;
    else it is :class:`NoDataError`, as a file that never was. Claims a combine into
    ``target`` left when it was killed (its process gone) are finished: a file it
    did not add is added, one it added (the transaction that added it marked it in
    ``target``'s ``meta``, :data:`_MARKER`) is removed, and ``note`` names each.

    Nothing is written or deleted, and every file keeps its name, if a file cannot
    be read, or ``target`` is not a sound data file of this schema
    (:class:`DataError`); a write that fails part way (a lock held too long) leaves
    the files not yet added as they were, and says how many were. Functions measured
    from different versions of their source stay apart (see
    :func:`source_conflicts`). ``progress(done, total)`` is called after each step,
    two per file: read, then added."""
    tell = note or (lambda message: None)
    real = os.path.realpath(target)
    given = list(dict.fromkeys(p for p in paths if os.path.realpath(p) != real))
    orphans, busy = _orphans(target, given, tell)
    if not given and not orphans:
        _say_busy(busy, target, tell)
        return []
    claimed: list[tuple[str, str]] = []  # (the name a file had, its claim)
    recovered: dict[str, beside.Claim] = {}  # claim -> the orphan it took over
    marked: set[str] = set()
    taken = 0
    try:
        for path in given:
            if os.path.isdir(path):
                raise DataError(f"{path} is a directory, not a data file")
            claim = beside.claim_name(path, target)
            try:
                os.rename(path, claim)
            except FileNotFoundError:
                if not (listed or _claimed(path)):
                    raise NoDataError(f"no data file {path}: run `pathprof run` "
                                      "first") from None
                taken += 1
                continue
            except OSError as err:
                raise DataError(f"cannot claim {path} to combine it (renaming it: "
                                f"{err.strerror or err})") from None
            claimed.append((path, claim))
        for orphan in orphans:
            claim = beside.claim_name(orphan.original, target)
            try:
                os.rename(orphan.path, claim)
            except FileNotFoundError:  # another combine is finishing it
                continue
            except OSError as err:
                raise DataError(f"cannot claim {orphan.path} to combine it (renaming "
                                f"it: {err.strerror or err})") from None
            claimed.append((orphan.original, claim))
            recovered[claim] = orphan
        steps = 2 * len(claimed)
        measurements = []
        for done, (name, claim) in enumerate(claimed, 1):
            measurements.append(_read_file(claim, name))
            if progress is not None:
                progress(done, steps)
        held = None
        if os.path.exists(target):  # every row checked, as a report checks it
            held = _read_file(target, target)
            marked = _markers(target) if recovered else set()
    except PathprofError as err:
        kept = _unclaim(claimed, recovered)
        raise type(err)(f"{err}; nothing was combined{kept}") from None
    except BaseException:
        _unclaim(claimed, recovered)
        raise
    done_markers = []  # removed once every file is added (or the work stops)
    #: (pid of a combine that ended, what this one did) -> the files it did it to
    finished: dict[tuple[int, str], list[str]] = {}
    if held is not None and recovered:  # what a killed combine had added already
        for index in reversed(range(len(claimed))):
            name, claim = claimed[index]
            ended = recovered.get(claim)
            if ended is not None and _marker(ended.path) in marked:
                with contextlib.suppress(OSError):
                    os.unlink(claim)
                done_markers.append(_marker(ended.path))
                finished.setdefault((ended.pid, "removed"), []).insert(0, name)
                del claimed[index], measurements[index]
                steps -= 2
    modes = {run.mode for m in measurements for run in m.runs}
    if held is not None:
        modes |= {run.mode for run in held.runs}
    if len(modes) > 1:
        kept = _unclaim(claimed, recovered)
        raise DataError(f"cannot combine path-mode and edge-mode data "
                        f"({', '.join(name for name, _ in claimed)} into {target}); "
                        f"nothing was combined{kept}")
    combined: list[str] = []
    for index, ((name, claim), measurement) in enumerate(zip(claimed, measurements,
                                                             strict=True)):
        try:
            with _no_collection():  # the addition and its marker, in one transaction
                _write(target, measurement.runs, measurement.functions,
                       measurement.sources, True, _marker(claim),
                       selections=measurement.selections)
        except BaseException as err:
            kept = _unclaim(claimed[index:], recovered)
            _unmark(target, done_markers)
            if not isinstance(err, PathprofError):
                raise
            raise DataError(f"{err}; {len(combined)} of the {len(claimed)} files were "
                            f"combined before, the others were left as they were{kept}"
                            ) from None
        with contextlib.suppress(FileNotFoundError):
            os.unlink(claim)
        done_markers.append(_marker(claim))
        combined.append(name)
        ended = recovered.get(claim)
        if ended is not None:
            finished.setdefault((ended.pid, "added"), []).append(name)
        if progress is not None:
            progress(len(claimed) + index + 1, steps)
    _unmark(target, done_markers)
    for (pid, did), names in sorted(finished.items()):
        shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3
                                        else "")
        them, they = ("them", "they were") if len(names) > 1 else ("it", "it was")
        if did == "added":
            tell(f"a combine that ended (process {pid}) had claimed {shown} and not "
                 f"added {them}; {they} added now")
        else:
            tell(f"a combine that ended (process {pid}) had added {shown} into {target} "
                 f"and not removed {them}; {they} removed now")
    if taken:
        tell(f"{taken} of the files to combine {'were' if taken > 1 else 'was'} taken "
             "meanwhile by another process (a combine at the same time adds "
             f"{'them' if taken > 1 else 'it'})")
    elif not combined:
        _say_busy(busy, target, tell)
    return combined


#: ``meta`` keys of files :func:`combine` added: ``combined <the claim's name>``,
#: written in the transaction that adds the file. A combine killed after that
#: transaction and before it removed the claim left the key: the next combine into
#: the file finds it, and removes the claim instead of adding it again. Keys of
#: files whose claim is gone are removed as the combine ends; one a killed combine
#: left is removed by the combine that finishes its claim. (Readers read only the
#: schema version from ``meta``.)
_MARKER = "combined "


def _marker(claim: str) -> str:
    return _MARKER + os.path.basename(claim)


def _markers(target: str) -> set[str]:
    """The markers of files added into ``target``."""
    db = _connect(target)
    try:
        return {key for (key,) in db.execute(
            "SELECT key FROM meta WHERE substr(key, 1, ?) = ?", (len(_MARKER), _MARKER))}
    finally:
        db.close()


def _unmark(target: str, markers: list[str]) -> None:
    """Remove ``markers`` from ``target`` (their claims are gone): one transaction,
    and nothing lost if it fails (a marker left names a claim that no longer is)."""
    if not markers:
        return
    with contextlib.suppress(sqlite3.Error, DataError, OSError):
        db = _connect(target)
        try:
            db.execute("BEGIN IMMEDIATE")
            db.executemany("DELETE FROM meta WHERE key = ?", [(m,) for m in markers])
            db.execute("COMMIT")
        finally:
            db.close()


def _claimed(path: str) -> bool:
    """Whether some combine holds ``path`` claimed."""
    return any(claim.original == path
               for claim in beside.claims(os.path.dirname(path)))


def _orphans(target: str, given: list[str], tell: Callable[[str], None]
             ) -> tuple[list[beside.Claim], list[beside.Claim]]:
    """The claims a combine into ``target`` left beside it or beside ``given`` when it
    was killed (of this host, by a process that no longer runs), and those of
    combines into it still running here. Those of another host cannot be told from
    a combine still running there: ``tell`` names them."""
    tag = beside.target_tag(target)
    found, busy, elsewhere = [], [], []
    directories = dict.fromkeys(os.path.dirname(p) for p in [target, *given])
    for directory in directories:
        for claim in beside.claims(directory):
            if claim.target != tag:
                continue
            state = beside.running(claim.host, claim.pid)
            if state is False:
                found.append(claim)
            elif state is None:
                elsewhere.append(claim)
            else:
                busy.append(claim)
    if elsewhere:
        hosts = ", ".join(sorted({claim.host for claim in elsewhere}))
        many = len(elsewhere) > 1
        tell(f"{len(elsewhere)} file{'s' * many} claimed by a combine into {target} on "
             f"another host ({hosts}) {'were' if many else 'was'} left to it (if it was "
             "killed, give each its name back: the name less its last five parts)")
    return found, busy


def _say_busy(busy: list[beside.Claim], target: str, tell: Callable[[str], None]) -> None:
    """Say that other combines (``busy``: their claims) are adding files into ``target``."""
    if busy:
        many = len(busy) > 1
        pids = ", ".join(str(pid) for pid in sorted({claim.pid for claim in busy}))
        tell(f"{len(busy)} file{'s' * many} {'are' if many else 'is'} being combined into "
             f"{target} by another combine at the same time (process {pids})")


def _unclaim(claimed: list[tuple[str, str]], recovered: Mapping[str, beside.Claim]) -> str:
    """Give each claimed file its name back (one a killed combine had claimed, its
    claim's: a later combine tells whether it was added); what could not be, as the
    end of a message."""
    stuck = []
    for name, claim in claimed:
        ended = recovered.get(claim)
        back = ended.path if ended is not None else name
        try:
            if os.path.lexists(back):
                raise FileExistsError(back)
            os.rename(claim, back)
        except FileNotFoundError:
            continue
        except OSError:
            stuck.append(claim)
    if not stuck:
        return ""
    many = len(stuck) > 1
    return (f"; {len(stuck)} claimed file{'s' * many} kept {'their' if many else 'its'} "
            f"claimed name ({stuck[0]}{', ...' * many}): the next combine takes "
            f"{'them' if many else 'it'}")
