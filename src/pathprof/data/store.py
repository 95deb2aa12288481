"""The data file: an SQLite database of runs, functions and their path counts.

Like coverage.py's ``.coverage``, one file per measurement (``.pathprof`` by
default).

The schema (:mod:`pathprof.data.schema`) is written once, as SQL whose comments
document each table and column.

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
import os
import re
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

from pathprof.contract import ContractError, FunctionInfo
from pathprof.data import building, schema
from pathprof.data.measurement import Measurement, RunInfo, Selection, source_conflicts
from pathprof.data.modules import ModuleContract, Packed, PackedError, Sources
from pathprof.data.profile import FunctionProfile, merge
from pathprof.exceptions import DataError, NoDataError
from pathprof.hashing import source_hash
from pathprof.types import Cut, PathOrCut

__all__ = ["Measurement", "RunInfo", "read", "source_conflicts", "write"]

#: A function's profile, the contract of its module and its position there.
_Placed = tuple[FunctionProfile, ModuleContract, int]


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
            held = (schema.name_read(file) or "", digest)
            self._rows.setdefault(held, []).append(_ModuleRow(mid))
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
        self.new.append((mid, schema.stored_name(record.file), record.source_hash,
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
          schema.stored_name(run.hostname)) for run in runs])
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
            paths += [(fid, "path", str(number), count, times.get(number))
                      for number, count in fn.counts.items()]
        if fn.cuts:
            paths += [(fid, "cut", _cut_text(cut), count, None)
                      for cut, count in fn.cuts.items()]
        if fn.edges:
            edges += [(fid, edge, count) for edge, count in fn.edges.items()]
        if fn.vectors:
            vectors += [(fid, d, k, count) for (d, k), count in fn.vectors.items()]
        if fn.contexts:
            contexts += [(fid, *_stored_path(path), schema.stored_name(name))
                         for path, names in fn.contexts.items() for name in sorted(names)]
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
    schema.add_rows(db, schema.ADD_PATH, paths, "path's count or time", (3, 4))
    schema.add_rows(db, schema.ADD_EDGE, edges, "edge's count", (2,))
    if vectors:
        db.execute(schema.VECTOR_TABLE)
        schema.add_rows(db, schema.ADD_VECTOR, vectors, "vector's count", (3,))
    db.executemany("INSERT OR IGNORE INTO context VALUES (?, ?, ?, ?)", contexts)
    schema.add_rows(db, schema.ADD_STATS, stats, "count of calls that raised", (1, 2))
    schema.add_rows(db, schema.ADD_CLOSED, closed, "count of generators closed", (1,))
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


def _cut_text(cut: Cut) -> str:
    """A cut path as the ``path`` column holds it: ``"<block>:<prefix value>"``."""
    return f"{cut[0]}:{cut[1]}"


def _stored_path(path: PathOrCut) -> tuple[str, str]:
    """The ``kind`` and ``path`` columns of a path: ``("path", "<number>")`` or
    ``("cut", "<block>:<prefix value>")``."""
    return ("path", str(path)) if isinstance(path, int) else ("cut", _cut_text(path))


def write(path: str, run: RunInfo | list[RunInfo], functions: Iterable[FunctionProfile],
          sources: Mapping[tuple[str, str], str], *, append: bool = False,
          selections: Sequence[Selection] = (), marker: str | None = None) -> None:
    """Save one run. Without ``append`` the file is replaced atomically (but never
    when it exists and is not a pathprof data file, or is one whose rows are damaged:
    :class:`DataError`, as :func:`read` reports it); with ``append`` the run is added
    to the existing file in one transaction (created if missing). ``sources`` maps
    ``(file, source hash)`` to the source text (a :class:`~pathprof.data.modules.Sources`
    read from a data file is copied as it is, compressed); ``selections``, what the run
    measured where it named it (``meta``'s ``selections``: those the file holds are kept,
    these added); with ``append``, a ``marker`` is a key added to ``meta`` in the same
    transaction (:func:`~pathprof.data.combining.combine`'s record that it added a
    file)."""
    with _no_collection():
        _write(path, run, list(functions), sources, append, marker, selections=selections)


def _write(path: str, run: RunInfo | list[RunInfo], functions: list[FunctionProfile],
           sources: Mapping[tuple[str, str], str], append: bool, marker: str | None = None,
           selections: Sequence[Selection] = ()) -> None:
    """:func:`write`."""
    placed = _contracts(functions)
    packed = sources if isinstance(sources, Sources) else Sources(sources)
    runs = run if isinstance(run, list) else [run]
    # Every save, adding or replacing, removes what killed saves left here.
    building.remove_stale_temps(os.path.dirname(os.path.abspath(path)))
    if append and not os.path.exists(path):
        building.create_empty(path)
    if os.path.exists(path):
        db = schema.connect(path)
        try:
            try:
                schema.check(db, path)
            except schema.OtherSchemaError:
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
                    if isinstance(err, schema.TooBig):
                        raise DataError(f"cannot add to {path}: {err} would pass "
                                        f"{schema.MAX_COUNT:,}, the largest count a data file "
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
        building.build_and_rename(path, lambda db: _insert(db, runs, placed, packed, selections))
    except schema.TooBig as err:
        raise DataError(f"cannot write {path}: {err} would pass {schema.MAX_COUNT:,}, the largest "
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
            file = schema.name_read(stored) or repr(stored)  # (a damaged name: _read names it)
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


def read(path: str, files: Callable[[str], bool] | None = None, *, shown: str | None = None
         ) -> Measurement:
    """Read a data file; functions measured in several runs come merged. With
    ``files``, only the functions (and sources) of the files it accepts: the
    contracts of the others are not decoded (their rows are checked all the same).
    What it reports names the file ``shown`` if given (a file claimed to be combined
    is named by the name it had)."""
    return _read_file(path, shown or path, files)


def _read_file(path: str, shown: str, files: Callable[[str], bool] | None = None
               ) -> Measurement:
    """:func:`read` of ``path``, named ``shown`` in what it reports (a file claimed to
    be combined is named by the name it had)."""
    if not os.path.exists(path):
        raise NoDataError(f"no data file {shown}: run `pathprof run` first")
    db = schema.connect(path, shown)
    try:
        schema.check(db, shown)
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
                            f"{schema.LOCK_TIMEOUT:g} s); it was left untouched") from err
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


def _path_read(outline: _Outline, kind: object, key: object, where: str) -> PathOrCut:
    """The path a row's ``kind`` and ``path`` columns name, checked against the
    function: a path number below its number of paths, or a cut path's
    ``<block>:<prefix value>`` with a block of the function and a value below its
    number of paths."""
    qualname, _, possible, blocks, _ = outline
    if kind == "path":
        if isinstance(key, str) and key.isdigit() and int(key) < possible:
            return int(key)
        raise _Damaged(f"{where}: {_shown(key)} is not a path of {qualname} "
                       f"(0 to {possible - 1})")
    parts = key.split(":") if kind == "cut" and isinstance(key, str) else []
    if (len(parts) == 2 and all(p.isdigit() for p in parts)
            and int(parts[0]) < blocks and int(parts[1]) < possible):
        return (int(parts[0]), int(parts[1]))
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
        file = schema.name_read(stored)
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
        path = _path_read(outline, kind, key, where)
        count = _whole(count, f"{where}: its count")
        if time_ns is not None:
            time_ns = _whole(time_ns, f"{where}: its time")
        if fn is None:
            continue
        if isinstance(path, int):
            fn.counts[path] = count
            if time_ns is not None:
                fn.times[path] = time_ns
        else:
            fn.cuts[path] = count
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
        path = _path_read(outline, kind, key, where)
        name = schema.name_read(stored)
        if name is None:
            raise _Damaged(f"{where}: {_shown(stored)} is not the name of a context")
        if fn is not None:
            fn.contexts.setdefault(path, set()).add(name)
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
    host = schema.name_read(hostname)
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

