"""Data files added together and removed: ``pathprof combine`` and ``pathprof erase``
(as coverage.py's ``combine`` and ``erase``), and the claims that let two processes
combine into one file at once, each adding what it claimed and nothing twice.

A combine claims each file before it reads it by renaming it
(:func:`~pathprof.data.files.claim_name`), a step only one process can take; the
addition of a claimed file and the marker naming its claim are one transaction, so a
combine killed at any point is finished by the next without adding a file twice.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Callable, Iterable, Mapping

from pathprof.data import files as beside
from pathprof.data import schema, store
from pathprof.exceptions import DataError, NoDataError, PathprofError

__all__ = ["combine", "erase"]


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
                                 uri=True, timeout=schema.LOCK_TIMEOUT, isolation_level=None)
        except sqlite3.Error:
            if not os.path.exists(candidate):
                continue  # gone meanwhile (a combine took it)
            db = schema.connect(candidate)
        try:
            try:
                schema.check(db, candidate)
            except schema.OtherSchemaError:
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
            measurements.append(store.read(claim, shown=name))
            if progress is not None:
                progress(done, steps)
        held = None
        if os.path.exists(target):  # every row checked, as a report checks it
            held = store.read(target, shown=target)
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
            # the addition and its marker, in one transaction
            store.write(target, measurement.runs, measurement.functions,
                        measurement.sources, append=True, marker=_marker(claim),
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
    db = schema.connect(target)
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
        db = schema.connect(target)
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
