""":mod:`pathprof.data.combining`, ``pathprof combine`` and ``pathprof erase``:
:func:`combine` claims each file (renaming it) before it reads it, adds it into the
target in the transaction that marks its claim, removes it, and returns the names
added; it finishes the claims a killed combine into the same target left (adding a
file not yet added, removing one already added) and names each; it leaves other
combines' claims alone; on a file it cannot read, a target that is not a sound data
file, or runs of two modes it changes nothing and every file keeps its name; a write
that fails part way leaves the files not yet added. :func:`erase` removes a data file
and the data files beside it, but no file that is not a data file, and says what it
could not remove. Data files are written with :func:`pathprof.data.store.write` from a
one-function profile whose counts are read back to check what was added."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from pathprof.data import combining, files, store
from pathprof.data.measurement import RunInfo, Selection
from pathprof.data.profile import FunctionProfile
from pathprof.exceptions import DataError, NoDataError
from pathprof.python.instrument import instrument_source

SOURCE = "def g(a):\n    if a:\n        return 1\n    return 2\n"
FILE = "/nowhere/m.py"
PID = os.getpid()


def _write(path: Path, counts: dict[int, int], mode: str = "path", pid: int = 1,
           selections: tuple[Selection, ...] = ()) -> Path:
    """A data file of one run (of process ``pid``) of g, its paths (or, in edge mode,
    its edges) counted ``counts``."""
    info = instrument_source(SOURCE, FILE, module_key="m", mode=mode).metadata
    fn = FunctionProfile.of(FILE, info.source_hash, info.functions[0])
    if mode == "path":
        fn.counts = dict(counts)
    else:
        fn.edges = dict(counts)
    store.write(str(path), RunInfo(0.0, ["prog"], "3.11", mode, None, pid, "h"), [fn],
                {(FILE, info.source_hash): SOURCE}, selections=selections)
    return path


def _counts(path: Path) -> dict[int, int]:
    (fn,) = store.read(str(path)).functions
    return fn.counts


def _pids(path: Path) -> list[int]:
    return sorted(run.pid for run in store.read(str(path)).runs)


def _sql(path: Path, query: str, *args: object) -> list[tuple[object, ...]]:
    db = sqlite3.connect(path)
    try:
        with db:
            return db.execute(query, args).fetchall()
    finally:
        db.close()


def _listing(directory: Path) -> list[str]:
    return sorted(os.listdir(directory))


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


def _claim(path: Path, target: Path, pid: int, host: str | None = None) -> Path:
    """``path`` renamed as a combine of process ``pid`` (of ``host``) into ``target``
    claims it."""
    claimed = path.with_name(f"{path.name}.{files.target_tag(str(target))}."
                             f"{host or files.host()}.{pid}.0123abcd{files.CLAIM}")
    path.rename(claimed)
    return claimed


# -- combine -----------------------------------------------------------------------------

def test_files_are_added_into_a_new_target_and_removed(tmp_path: Path) -> None:
    a = _write(tmp_path / "a", {0: 2}, pid=11)
    b = _write(tmp_path / "b", {0: 3, 1: 4}, pid=12)
    target = tmp_path / "T"
    assert combining.combine(str(target), [str(a), str(b)]) == [str(a), str(b)]
    assert _counts(target) == {0: 5, 1: 4}
    assert _pids(target) == [11, 12]
    assert _listing(tmp_path) == ["T"]  # no claim, no temporary file left
    assert _sql(target, "SELECT key FROM meta WHERE key LIKE 'combined %'") == []


def test_files_are_added_to_what_the_target_holds(tmp_path: Path) -> None:
    target = _write(tmp_path / "T", {1: 1}, pid=10)
    a = _write(tmp_path / "a", {0: 2, 1: 2}, pid=11)
    assert combining.combine(str(target), [str(a)]) == [str(a)]
    assert _counts(target) == {0: 2, 1: 3}
    assert _pids(target) == [10, 11]


def test_selections_of_the_files_are_kept(tmp_path: Path) -> None:
    chosen = Selection(("src",), omit=("*/tests/*",))
    a = _write(tmp_path / "a", {0: 1}, selections=(chosen,))
    combining.combine(str(tmp_path / "T"), [str(a)])
    assert store.read(str(tmp_path / "T")).selections == [chosen]


def test_progress_is_two_steps_a_file_read_then_added(tmp_path: Path) -> None:
    paths = [str(_write(tmp_path / name, {0: 1})) for name in ("a", "b")]
    steps: list[tuple[int, int]] = []
    combining.combine(str(tmp_path / "T"), paths,
                      progress=lambda done, total: steps.append((done, total)))
    assert steps == [(1, 4), (2, 4), (3, 4), (4, 4)]


def test_the_target_itself_and_a_file_given_twice_are_added_once(tmp_path: Path) -> None:
    target = _write(tmp_path / "T", {0: 1})
    a = _write(tmp_path / "a", {0: 10})
    same_target = os.path.join(str(tmp_path), ".", "T")
    assert combining.combine(str(target), [str(a), same_target, str(a)]) == [str(a)]
    assert _counts(target) == {0: 11}


def test_nothing_to_combine_writes_nothing(tmp_path: Path) -> None:
    notes: list[str] = []
    assert combining.combine(str(tmp_path / "T"), [], note=notes.append) == []
    assert _listing(tmp_path) == []
    assert notes == []


def test_a_file_that_never_was_is_no_data_and_nothing_is_combined(tmp_path: Path) -> None:
    a = _write(tmp_path / "a", {0: 1})
    missing = str(tmp_path / "missing")
    with pytest.raises(NoDataError) as raised:
        combining.combine(str(tmp_path / "T"), [str(a), missing])
    assert str(raised.value) == (f"no data file {missing}: run `pathprof run` first; "
                                 "nothing was combined")
    assert _listing(tmp_path) == ["a"]  # its claim given back
    assert _counts(a) == {0: 1}


def test_a_listed_file_gone_before_it_was_claimed_is_said_to_be_taken(
        tmp_path: Path) -> None:
    a = _write(tmp_path / "a", {0: 1})
    notes: list[str] = []
    combined = combining.combine(str(tmp_path / "T"), [str(tmp_path / "gone"), str(a)],
                                 note=notes.append, listed=True)
    assert combined == [str(a)]
    assert notes == ["1 of the files to combine was taken meanwhile by another process "
                     "(a combine at the same time adds it)"]


def test_a_directory_is_refused_and_every_file_keeps_its_name(tmp_path: Path) -> None:
    a = _write(tmp_path / "a", {0: 1})
    (tmp_path / "dir").mkdir()
    with pytest.raises(DataError) as raised:
        combining.combine(str(tmp_path / "T"), [str(a), str(tmp_path / "dir")])
    assert str(raised.value) == (f"{tmp_path / 'dir'} is a directory, not a data file; "
                                 "nothing was combined")
    assert _listing(tmp_path) == ["a", "dir"]


@pytest.mark.parametrize("damage", ["not-a-database", "a-count-of-text", "schema-4"])
def test_a_file_that_cannot_be_read_changes_nothing(tmp_path: Path, damage: str) -> None:
    a = _write(tmp_path / "a", {0: 1})
    bad = tmp_path / "bad"
    if damage == "not-a-database":
        bad.write_bytes(b"no SQLite here " * 100)
    else:
        _write(bad, {0: 1})
        if damage == "a-count-of-text":
            _sql(bad, "UPDATE path SET count = 'many'")
        else:
            _sql(bad, "UPDATE meta SET value = '4' WHERE key = 'schema_version'")
    before = bad.read_bytes()
    with pytest.raises(DataError) as raised:
        combining.combine(str(tmp_path / "T"), [str(a), str(bad)])
    message = str(raised.value)
    assert message.startswith(str(bad))  # named by its name, not its claim's
    assert message.endswith("; nothing was combined")
    assert _listing(tmp_path) == ["a", "bad"]
    assert bad.read_bytes() == before
    assert _counts(a) == {0: 1}


@pytest.mark.parametrize("damage", ["not-a-database", "schema-4"])
def test_a_target_that_is_not_a_sound_data_file_is_not_combined_into(
        tmp_path: Path, damage: str) -> None:
    target = tmp_path / "T"
    if damage == "not-a-database":
        target.write_bytes(b"no SQLite here " * 100)
    else:
        _write(target, {0: 1})
        _sql(target, "UPDATE meta SET value = '4' WHERE key = 'schema_version'")
    before = target.read_bytes()
    a = _write(tmp_path / "a", {0: 1})
    with pytest.raises(DataError) as raised:
        combining.combine(str(target), [str(a)])
    assert str(raised.value).startswith(str(target))
    assert str(raised.value).endswith("it was left untouched; nothing was combined")
    assert target.read_bytes() == before
    assert _listing(tmp_path) == ["T", "a"]


def test_path_and_edge_mode_data_are_not_combined(tmp_path: Path) -> None:
    target = _write(tmp_path / "T", {0: 1})
    edges = _write(tmp_path / "e", {0: 1}, mode="edge")
    with pytest.raises(DataError) as raised:
        combining.combine(str(target), [str(edges)])
    assert str(raised.value) == (f"cannot combine path-mode and edge-mode data ({edges} "
                                 f"into {target}); nothing was combined")
    assert _listing(tmp_path) == ["T", "e"]
    assert _counts(target) == {0: 1}


def test_edge_mode_files_combine_among_themselves(tmp_path: Path) -> None:
    a = _write(tmp_path / "a", {0: 2, 1: 1}, mode="edge")
    b = _write(tmp_path / "b", {0: 1, 3: 1}, mode="edge")
    combining.combine(str(tmp_path / "T"), [str(a), str(b)])
    (fn,) = store.read(str(tmp_path / "T")).functions
    assert fn.edges == {0: 3, 1: 1, 3: 1}


def test_a_write_that_fails_part_way_leaves_the_files_not_yet_added(tmp_path: Path) -> None:
    target = _write(tmp_path / "T", {0: 1})
    near = _write(tmp_path / "a", {0: 2**63 - 3})  # T then holds 2**63 - 2
    past = _write(tmp_path / "b", {0: 5})  # which 5 more would pass
    with pytest.raises(DataError) as raised:
        combining.combine(str(target), [str(near), str(past)])
    assert str(raised.value).endswith("; 1 of the 2 files were combined before, the others "
                                      "were left as they were")
    assert _listing(tmp_path) == ["T", "b"]
    assert _counts(target) == {0: 2**63 - 2}
    assert _counts(past) == {0: 5}


# -- claims other combines left ----------------------------------------------------------

def test_a_claim_a_killed_combine_did_not_add_is_added_and_said(tmp_path: Path) -> None:
    target = _write(tmp_path / "T", {0: 1})
    dead = _dead_pid()
    claim = _claim(_write(tmp_path / "T.part", {1: 7}), target, dead)
    notes: list[str] = []
    combined = combining.combine(str(target), [], note=notes.append)
    assert combined == [str(tmp_path / "T.part")]
    assert notes == [f"a combine that ended (process {dead}) had claimed "
                     f"{tmp_path / 'T.part'} and not added it; it was added now"]
    assert _counts(target) == {0: 1, 1: 7}
    assert not claim.exists()
    assert _listing(tmp_path) == ["T"]


def test_a_claim_a_killed_combine_added_is_removed_not_added_again(tmp_path: Path) -> None:
    target = _write(tmp_path / "T", {0: 1})
    dead = _dead_pid()
    claim = _claim(_write(tmp_path / "T.part", {1: 7}), target, dead)
    # what the killed combine's transaction wrote as it added the file
    _sql(target, "INSERT INTO meta VALUES (?, '0')", f"combined {claim.name}")
    notes: list[str] = []
    assert combining.combine(str(target), [], note=notes.append) == []
    assert notes == [f"a combine that ended (process {dead}) had added "
                     f"{tmp_path / 'T.part'} into {target} and not removed it; it was "
                     "removed now"]
    assert _counts(target) == {0: 1}
    assert _listing(tmp_path) == ["T"]
    assert _sql(target, "SELECT key FROM meta WHERE key LIKE 'combined %'") == []


def test_claims_of_several_files_are_named_together(tmp_path: Path) -> None:
    target = _write(tmp_path / "T", {0: 1})
    dead = _dead_pid()
    for name in ("T.a", "T.b"):
        _claim(_write(tmp_path / name, {1: 1}), target, dead)
    notes: list[str] = []
    combining.combine(str(target), [], note=notes.append)
    assert notes == [f"a combine that ended (process {dead}) had claimed "
                     f"{tmp_path / 'T.a'}, {tmp_path / 'T.b'} and not added them; they "
                     "were added now"]
    assert _counts(target) == {0: 1, 1: 2}


def test_a_claim_of_a_combine_still_running_is_left_to_it(tmp_path: Path) -> None:
    target = _write(tmp_path / "T", {0: 1})
    claim = _claim(_write(tmp_path / "T.part", {1: 7}), target, PID)
    notes: list[str] = []
    assert combining.combine(str(target), [], note=notes.append) == []
    assert notes == [f"1 file is being combined into {target} by another combine at the "
                     f"same time (process {PID})"]
    assert claim.exists()
    assert _counts(target) == {0: 1}


def test_a_claim_of_another_host_is_left_and_said(tmp_path: Path) -> None:
    target = _write(tmp_path / "T", {0: 1})
    claim = _claim(_write(tmp_path / "T.part", {1: 7}), target, 5, host="far-away")
    a = _write(tmp_path / "a", {0: 1})
    notes: list[str] = []
    assert combining.combine(str(target), [str(a)], note=notes.append) == [str(a)]
    assert notes == [f"1 file claimed by a combine into {target} on another host "
                     "(far-away) was left to it (if it was killed, give each its name "
                     "back: the name less its last five parts)"]
    assert claim.exists()
    assert _counts(target) == {0: 2}


def test_a_claim_of_a_combine_into_another_target_is_not_touched(tmp_path: Path) -> None:
    target = _write(tmp_path / "T", {0: 1})
    claim = _claim(_write(tmp_path / "T.part", {1: 7}), tmp_path / "Other", _dead_pid())
    notes: list[str] = []
    assert combining.combine(str(target), [], note=notes.append) == []
    assert notes == []
    assert claim.exists()


def test_a_killed_combines_claim_whose_file_cannot_be_read_gets_its_claim_back(
        tmp_path: Path) -> None:
    target = _write(tmp_path / "T", {0: 1})
    bad = tmp_path / "T.bad"
    bad.write_bytes(b"no SQLite here " * 100)
    claim = _claim(bad, target, _dead_pid())
    with pytest.raises(DataError, match="nothing was combined"):
        combining.combine(str(target), [])
    # its claimed name again, so that a later combine tells whether it was added
    assert claim.exists()
    assert _counts(target) == {0: 1}


# -- erase -------------------------------------------------------------------------------

def test_erase_removes_the_data_file_and_those_beside_it(tmp_path: Path) -> None:
    target = _write(tmp_path / "D", {0: 1})
    beside = [_write(tmp_path / name, {0: 1}) for name in
              ("D.saved.vm.1.0123abcd", "D.xdist-r-gw0.vm.2.0123abcd", "D.old")]
    kept = _write(tmp_path / "D2", {0: 1})  # another data file
    assert combining.erase(str(target)) == [str(target), *sorted(map(str, beside))]
    assert _listing(tmp_path) == [kept.name]


def test_erase_leaves_a_file_beside_that_is_not_a_data_file(tmp_path: Path) -> None:
    target = _write(tmp_path / "D", {0: 1})
    (tmp_path / "D.notes").write_text("my notes")
    (tmp_path / "D.empty").write_bytes(b"")
    assert combining.erase(str(target)) == [str(target)]
    assert _listing(tmp_path) == ["D.empty", "D.notes"]
    assert (tmp_path / "D.notes").read_text() == "my notes"


def test_erase_removes_data_files_of_another_schema(tmp_path: Path) -> None:
    target = _write(tmp_path / "D", {0: 1})
    _sql(target, "UPDATE meta SET value = '4' WHERE key = 'schema_version'")
    assert combining.erase(str(target)) == [str(target)]
    assert _listing(tmp_path) == []


def test_erasing_a_file_that_is_not_a_data_file_is_a_data_error(tmp_path: Path) -> None:
    target = tmp_path / "D"
    target.write_text("a file of mine")
    other = _write(tmp_path / "D.saved.vm.1.0123abcd", {0: 1})
    with pytest.raises(DataError, match="is not a pathprof data file"):
        combining.erase(str(target))
    assert target.read_text() == "a file of mine"
    assert other.exists()


def test_erasing_a_directory_is_a_data_error(tmp_path: Path) -> None:
    (tmp_path / "D").mkdir()
    with pytest.raises(DataError) as raised:
        combining.erase(str(tmp_path / "D"))
    assert str(raised.value) == (f"{tmp_path / 'D'} is a directory, not a data file; it "
                                 "was left untouched")
    assert (tmp_path / "D").is_dir()


def test_erasing_a_file_that_is_not_there_removes_what_is_beside_it(tmp_path: Path) -> None:
    left = _write(tmp_path / "D.saved.vm.1.0123abcd", {0: 1})
    assert combining.erase(str(tmp_path / "D")) == [str(left)]
    assert combining.erase(str(tmp_path / "D")) == []


def test_erase_removes_claims_of_ended_combines_and_leaves_running_ones(
        tmp_path: Path) -> None:
    target = _write(tmp_path / "D", {0: 1})
    ended = _claim(_write(tmp_path / "D.a", {0: 1}), target, _dead_pid())
    running = _claim(_write(tmp_path / "D.b", {0: 1}), target, PID)
    far = _claim(_write(tmp_path / "D.c", {0: 1}), target, 5, host="far-away")
    others = _claim(_write(tmp_path / "E.a", {0: 1}), tmp_path / "E", _dead_pid())
    assert combining.erase(str(target)) == [str(target), str(ended)]
    assert _listing(tmp_path) == sorted([running.name, far.name, others.name])


def test_a_file_that_cannot_be_removed_is_a_data_error_once_the_others_are(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = _write(tmp_path / "D", {0: 1})
    stuck = [str(target), str(_write(tmp_path / "D.a", {0: 1}))]
    free = _write(tmp_path / "D.b", {0: 1})
    unlink = os.unlink

    def refusing(path: str, *args: object, **kwargs: object) -> None:
        if str(path) in stuck:
            raise PermissionError(13, "Permission denied", str(path))
        unlink(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "unlink", refusing)
    with pytest.raises(DataError) as raised:
        combining.erase(str(target))
    assert str(raised.value) == (f"cannot remove {target} and 1 other file beside it "
                                 "(Permission denied); they were left as they were")
    assert not free.exists()
    assert target.exists()


def test_one_file_that_cannot_be_removed_is_named_alone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = _write(tmp_path / "D", {0: 1})

    def refusing(path: str, *args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(os, "unlink", refusing)
    with pytest.raises(DataError) as raised:
        combining.erase(str(target))
    assert str(raised.value) == (f"cannot remove {target} (Permission denied); it was "
                                 "left as it was")


def test_a_claim_named_with_a_pid_no_process_can_have_does_not_stop_a_combine(
        tmp_path: Path) -> None:
    target = _write(tmp_path / "T", {0: 1})
    _claim(_write(tmp_path / "T.part", {1: 7}), target, 2**31)
    a = _write(tmp_path / "a", {0: 1})
    combined = combining.combine(str(target), [str(a)])
    assert str(a) in combined
    assert _counts(target)[0] == 2


def test_a_claim_named_with_a_pid_no_process_can_have_does_not_stop_an_erase(
        tmp_path: Path) -> None:
    target = _write(tmp_path / "D", {0: 1})
    _claim(_write(tmp_path / "D.a", {0: 1}), target, 2**31)
    assert combining.erase(str(target))[0] == str(target)
    assert not target.exists()
