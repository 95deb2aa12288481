""":mod:`pathprof.data.building`, a data file made in one step: built beside its target
under a temporary name of its own (``.pathprof-<pid>-<host>-<token>.tmp``, created as
any file the user creates) and renamed over it, or with ``exclusive`` linked there
only if nothing is; nothing of a build that fails is left; :func:`remove_stale_temps`
removes what writers of this host that no longer run left (and files of the old
naming over an hour old) and nothing else; :func:`create_empty` makes an empty data
file at most once, in place where the file system has no hard links; and
:func:`create_in_place` refuses a file that is not a database with one DataError."""

from __future__ import annotations

import os
import re
import socket
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from pathprof.data import building, schema
from pathprof.exceptions import DataError
from pathprof.version import __version__


def _meta(path: Path) -> dict[str, str]:
    db = sqlite3.connect(path)
    try:
        return dict(db.execute("SELECT key, value FROM meta"))
    finally:
        db.close()


def _tables(path: Path) -> set[str]:
    db = sqlite3.connect(path)
    try:
        return {name for (name,) in db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")}
    finally:
        db.close()


def _runs(path: Path) -> list[tuple[object, ...]]:
    db = sqlite3.connect(path)
    try:
        return db.execute("SELECT pid, hostname FROM run").fetchall()
    finally:
        db.close()


def _fill(pid: int) -> Callable[[sqlite3.Connection], None]:
    def fill(db: sqlite3.Connection) -> None:
        db.execute("INSERT INTO run VALUES (NULL, 0, '[]', '3', 'path', NULL, ?, 'h')",
                   (pid,))
    return fill


def _dead_pid() -> int:
    """A pid no process of this host has (from the top of the range down)."""
    try:
        highest = int(Path("/proc/sys/kernel/pid_max").read_text())
    except (OSError, ValueError):
        highest = 32768
    for pid in range(highest - 1, 1, -1):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return pid
        except OSError:
            continue
    pytest.skip("every pid is taken")


# -- build_and_rename --------------------------------------------------------------------

def test_a_built_file_has_the_schema_the_versions_and_what_fill_wrote(tmp_path: Path
                                                                     ) -> None:
    target = tmp_path / "data.pathprof"
    building.build_and_rename(str(target), _fill(41))
    assert _tables(target) >= {"meta", "run", "function", "path"}
    assert _meta(target) == {"schema_version": str(schema.SCHEMA_VERSION),
                             "pathprof_version": __version__}
    assert _runs(target) == [(41, "h")]
    assert os.listdir(tmp_path) == ["data.pathprof"]  # no temporary file left


def test_building_replaces_what_is_there(tmp_path: Path) -> None:
    target = tmp_path / "data.pathprof"
    target.write_bytes(b"an older file")
    building.build_and_rename(str(target), _fill(1))
    assert _runs(target) == [(1, "h")]
    building.build_and_rename(str(target), _fill(2))
    assert _runs(target) == [(2, "h")]
    assert os.listdir(tmp_path) == ["data.pathprof"]


def test_an_exclusive_build_never_replaces_a_file_already_there(tmp_path: Path) -> None:
    target = tmp_path / "data.pathprof"
    building.build_and_rename(str(target), _fill(1), exclusive=True)
    assert _runs(target) == [(1, "h")]
    building.build_and_rename(str(target), _fill(2), exclusive=True)
    assert _runs(target) == [(1, "h")]
    target.write_bytes(b"not even a database")
    building.build_and_rename(str(target), _fill(3), exclusive=True)
    assert target.read_bytes() == b"not even a database"
    assert os.listdir(tmp_path) == ["data.pathprof"]


@pytest.mark.parametrize("exclusive", [False, True])
def test_a_build_that_fails_leaves_nothing_and_the_target_as_it_was(
        tmp_path: Path, exclusive: bool) -> None:
    target = tmp_path / "data.pathprof"
    target.write_bytes(b"kept")

    def fail(db: sqlite3.Connection) -> None:
        db.execute("INSERT INTO run VALUES (NULL, 0, '[]', '3', 'path', NULL, 1, 'h')")
        raise KeyboardInterrupt  # (any exception, even one that is not an Exception)

    with pytest.raises(KeyboardInterrupt):
        building.build_and_rename(str(target), fail, exclusive=exclusive)
    assert target.read_bytes() == b"kept"
    assert os.listdir(tmp_path) == ["data.pathprof"]


def test_a_failed_sql_statement_leaves_nothing(tmp_path: Path) -> None:
    target = tmp_path / "new.pathprof"
    with pytest.raises(sqlite3.OperationalError):
        building.build_and_rename(str(target), lambda db: db.execute("SELECT * FROM nope"))
    assert os.listdir(tmp_path) == []


def test_the_file_is_built_in_a_temporary_file_of_this_process_beside_the_target(
        tmp_path: Path) -> None:
    seen: list[str] = []

    def fill(db: sqlite3.Connection) -> None:
        seen.extend(os.listdir(tmp_path))

    building.build_and_rename(str(tmp_path / "data.pathprof"), fill)
    (temp,) = seen
    match = building.TEMP.fullmatch(temp)
    assert match is not None
    assert (int(match[1]), match[2]) == (os.getpid(), building.HOST)
    assert re.fullmatch(rf"\.pathprof-{os.getpid()}-{re.escape(building.HOST)}-"
                        r"[0-9a-f]{8}\.tmp", temp)


def test_a_relative_target_is_built_in_its_own_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path)
    building.build_and_rename(os.path.join("sub", "data.pathprof"), _fill(5))
    assert _runs(tmp_path / "sub" / "data.pathprof") == [(5, "h")]
    assert os.listdir(tmp_path) == ["sub"]


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_a_data_file_is_created_as_any_file_the_user_creates(
        tmp_path: Path, umask: int, mode: int) -> None:
    target = tmp_path / "data.pathprof"
    before = os.umask(umask)
    try:
        building.build_and_rename(str(target), _fill(1))
    finally:
        os.umask(before)
    assert target.stat().st_mode & 0o777 == mode


def test_the_host_in_names_is_this_hosts_with_only_letters_digits_and_dots() -> None:
    expected = "".join(ch if (ch.isascii() and ch.isalnum()) or ch == "." else "_"
                       for ch in socket.gethostname()) or "host"
    host = building.HOST
    assert host == expected
    assert re.fullmatch(r"[A-Za-z0-9._]+", host)


@pytest.mark.parametrize(("name", "matches"), [
    (".pathprof-12-myhost-0123abcd.tmp", True),
    (".pathprof-12-my.host.example-0123abcd.tmp", True),
    (".pathprof-12-myhost-0123abcd.tmp-journal", True),
    (".pathprof-12-myhost-0123ABCD.tmp", False),  # a token is lowercase hex
    (".pathprof-12-myhost-0123abc.tmp", False),  # of eight digits
    (".pathprof-x-myhost-0123abcd.tmp", False),
    ("pathprof-12-myhost-0123abcd.tmp", False),
    (".pathprof-12-myhost-0123abcd.tmp.x", False),
])
def test_the_names_of_files_being_built(name: str, matches: bool) -> None:
    assert (building.TEMP.fullmatch(name) is not None) is matches


# -- remove_stale_temps ------------------------------------------------------------------

def test_files_being_built_by_writers_that_ended_are_removed_and_no_others(
        tmp_path: Path) -> None:
    dead, host = _dead_pid(), building.HOST
    stale = [f".pathprof-{dead}-{host}-0badc0de.tmp",
             f".pathprof-{dead}-{host}-0badc0de.tmp-journal"]
    kept = [f".pathprof-{os.getpid()}-{host}-0cafe0ff.tmp",  # this process: building
            f".pathprof-{dead}-another_host-0badc0de.tmp",  # cannot be asked
            f".pathprof-{dead}-{host}-0badc0de.tmpx",  # not of the naming
            "data.pathprof", ".pathprof", "notes.tmp"]
    for name in stale + kept:
        (tmp_path / name).write_bytes(b"x")
    building.remove_stale_temps(str(tmp_path))
    assert sorted(os.listdir(tmp_path)) == sorted(kept)


def test_files_of_the_old_naming_go_once_over_an_hour_old(tmp_path: Path) -> None:
    assert building.OLD_TEMP_AGE == 3600.0
    now = time.time()
    ages = {".pathprof-abcd_123.tmp": 3601, ".pathprof-zz99zz99.tmp-journal": 7200,
            ".pathprof-young123.tmp": 3500, ".pathprof-newer_12.tmp": 0}
    for name, age in ages.items():
        path = tmp_path / name
        path.write_bytes(b"x")
        os.utime(path, (now - age, now - age))
    (tmp_path / ".pathprof-TOOLONG12.tmp").write_bytes(b"x")  # uppercase: not the naming
    os.utime(tmp_path / ".pathprof-TOOLONG12.tmp", (now - 9999, now - 9999))
    building.remove_stale_temps(str(tmp_path))
    assert sorted(os.listdir(tmp_path)) == sorted([".pathprof-young123.tmp",
                                                   ".pathprof-newer_12.tmp",
                                                   ".pathprof-TOOLONG12.tmp"])


def test_a_directory_that_cannot_be_read_is_left_alone(tmp_path: Path) -> None:
    building.remove_stale_temps(str(tmp_path / "missing"))  # raises nothing
    (tmp_path / "file").write_bytes(b"x")
    building.remove_stale_temps(str(tmp_path / "file"))  # not a directory
    assert os.listdir(tmp_path) == ["file"]


# -- create_empty and create_in_place ----------------------------------------------------

def test_an_empty_data_file_holds_the_schema_and_no_runs(tmp_path: Path) -> None:
    target = tmp_path / "data.pathprof"
    building.create_empty(str(target))
    assert _tables(target) >= {"meta", "run", "module", "function", "path"}
    assert _meta(target)["schema_version"] == str(schema.SCHEMA_VERSION)
    assert _runs(target) == []


def test_an_empty_data_file_is_made_only_where_there_is_none(tmp_path: Path) -> None:
    target = tmp_path / "data.pathprof"
    building.build_and_rename(str(target), _fill(9))
    building.create_empty(str(target))
    assert _runs(target) == [(9, "h")]
    target.write_bytes(b"something else")
    building.create_empty(str(target))
    assert target.read_bytes() == b"something else"
    assert os.listdir(tmp_path) == ["data.pathprof"]


def test_without_hard_links_the_empty_file_is_made_in_place(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_links(source: object, destination: object) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_links)
    target = tmp_path / "data.pathprof"
    building.create_empty(str(target))
    assert _meta(target) == {"schema_version": str(schema.SCHEMA_VERSION),
                             "pathprof_version": __version__}
    assert _runs(target) == []
    assert os.listdir(tmp_path) == ["data.pathprof"]


def test_a_file_made_in_place_has_every_table_a_built_one_has(tmp_path: Path) -> None:
    built, in_place = tmp_path / "built", tmp_path / "in_place"
    building.build_and_rename(str(built), lambda db: None)
    building.create_in_place(str(in_place))
    assert _tables(in_place) == _tables(built)
    assert _meta(in_place) == _meta(built)


def test_making_in_place_leaves_a_data_file_already_there(tmp_path: Path) -> None:
    target = tmp_path / "data.pathprof"
    building.build_and_rename(str(target), _fill(3))
    building.create_in_place(str(target))
    assert _runs(target) == [(3, "h")]


def test_making_in_place_over_a_file_that_is_not_a_database_is_a_data_error(
        tmp_path: Path) -> None:
    target = tmp_path / "data.pathprof"
    target.write_bytes(b"this is not an SQLite database, only text" * 50)
    with pytest.raises(DataError, match=f"cannot create {re.escape(str(target))}: "):
        building.create_in_place(str(target))
    assert target.read_bytes() == b"this is not an SQLite database, only text" * 50


def test_a_name_with_a_pid_no_process_can_have_does_not_stop_the_cleaning(
        tmp_path: Path) -> None:
    stale = f".pathprof-{_dead_pid()}-{building.HOST}-0badc0de.tmp"
    impossible = f".pathprof-{2**31}-{building.HOST}-0cafe0ff.tmp"  # past pid_t
    (tmp_path / stale).write_bytes(b"x")
    (tmp_path / impossible).write_bytes(b"x")
    building.remove_stale_temps(str(tmp_path))
    assert stale not in os.listdir(tmp_path)
