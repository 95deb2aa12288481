""":mod:`pathprof.data.files`, the names of the files pathprof's processes write
beside a data file ``D`` and the finding of them: :func:`parallel_name` names a
writer's file ``D.<writer>.<host>.<pid>.<random>`` (its random part drawn once per
process, anew for ``saved`` or ``fresh``) and :func:`parse` reads every part back;
:func:`combinable_files` finds every regular ``D.*`` but :data:`NOT_DATA`, never
``D`` itself nor another data file's; :func:`files_of` only one writer's, directly
beside ``D``; claims (:func:`claim_name`, :func:`claims`, :func:`target_tag`,
:func:`running`) and marks (:func:`mark_name`, :func:`marks`, :func:`mark_alive`)
are named and found as the module docstring says. Expected names are written out by
hand from the scheme."""

from __future__ import annotations

import hashlib
import os
import re
import socket
import string
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pathprof.data import files
from pathprof.data.files import Claim, Mark, Part

PID = os.getpid()
RANDOM = r"[0-9a-f]{8}"


@pytest.fixture(autouse=True)
def _own_random_part(monkeypatch: pytest.MonkeyPatch) -> None:
    """This process's random part is put back as it was after each test."""
    monkeypatch.setattr(files, "_drawn", files._drawn)


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


def _touch(directory: Path, *names: str) -> None:
    for name in names:
        (directory / name).write_bytes(b"")


# -- the constants -----------------------------------------------------------------------

def test_marks_and_claims_end_in_what_is_never_data() -> None:
    assert files.KINDS == ("child", "xdist", "copy", "saved")
    assert files.MARKS == ("forking", "running", "saving", "pending")
    assert all(f".{state}" in files.NOT_DATA for state in files.MARKS)
    assert files.CLAIM == ".claim"
    assert files.CLAIM in files.NOT_DATA
    assert {"-journal", "-wal", "-shm", ".tmp", ".lock"} <= set(files.NOT_DATA)


# -- host --------------------------------------------------------------------------------

@pytest.mark.parametrize(("name", "shown"), [
    ("vm", "vm"), ("my.host.example", "my_host_example"), ("build-07", "build-07"),
    ("héte", "h_te"), ("a b", "a_b"), ("", "host"),
])
def test_the_host_keeps_letters_digits_underscores_and_dashes(
        monkeypatch: pytest.MonkeyPatch, name: str, shown: str) -> None:
    monkeypatch.setattr(socket, "gethostname", lambda: name)
    assert files.host() == shown


# -- parallel_name and parse -------------------------------------------------------------

def test_each_kind_is_named_by_the_scheme() -> None:
    host = re.escape(files.host())
    names = {
        "child": files.parallel_name("/d/D", "child", run="r1"),
        "xdist": files.parallel_name("/d/D", "xdist", run="r1", worker="gw3"),
        "copy": files.parallel_name("/d/D", "copy", copy=(2, 5)),
        "saved": files.parallel_name("/d/D", "saved"),
    }
    writers = {"child": "child-r1", "xdist": "xdist-r1-gw3", "copy": "copy-2of5",
               "saved": "saved"}
    for kind, name in names.items():
        assert re.fullmatch(rf"/d/D\.{writers[kind]}\.{host}\.{PID}\.{RANDOM}", name), kind


def test_a_writers_name_is_the_same_at_every_save_of_the_process() -> None:
    first = files.parallel_name("D", "child", run="r")
    assert files.parallel_name("D", "child", run="r") == first
    # and the random part is one per process, whatever the kind
    copy = files.parallel_name("D", "copy", copy=(1, 2))
    assert copy.rsplit(".", 1)[1] == first.rsplit(".", 1)[1]


def test_saved_and_fresh_names_draw_their_random_part_anew() -> None:
    saved = {files.parallel_name("D", "saved") for _ in range(5)}
    fresh = {files.parallel_name("D", "child", run="r", fresh=True) for _ in range(5)}
    assert len(saved) == 5
    assert len(fresh) == 5


def test_a_process_whose_pid_changed_draws_its_random_part_again(
        monkeypatch: pytest.MonkeyPatch) -> None:
    before = files.parallel_name("D", "child", run="r")
    monkeypatch.setattr(os, "getpid", lambda: PID + 1)  # as in a forked child
    after = files.parallel_name("D", "child", run="r")
    assert after.split(".")[3] == str(PID + 1)
    assert after.rsplit(".", 1)[1] != before.rsplit(".", 1)[1]


@pytest.mark.parametrize(("given", "word"), [
    ("a-b.c", "a_b_c"), ("session 1", "session_1"), ("ünï", "_n_"), ("ok_9", "ok_9"),
])
def test_a_run_or_worker_is_made_one_word(given: str, word: str) -> None:
    name = files.parallel_name("D", "xdist", run=given, worker=given)
    assert name.startswith(f"D.xdist-{word}-{word}.")


@pytest.mark.parametrize(("kind", "options", "message"), [
    ("thread", {}, "unknown kind of parallel data file 'thread'"),
    ("child", {}, "the name of a child file needs run"),
    ("xdist", {}, "the name of a xdist file needs run and worker"),
    ("xdist", {"run": "r"}, "the name of a xdist file needs worker"),
    ("copy", {"run": "r"}, "the name of a copy file needs copy"),
    ("child", {"run": ""}, "run must not be empty"),
    ("xdist", {"run": "r", "worker": ""}, "worker must not be empty"),
])
def test_a_kind_without_what_it_needs_is_a_value_error(
        kind: str, options: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        files.parallel_name("D", kind, **options)  # type: ignore[arg-type]


@pytest.mark.parametrize(("name", "parts"), [
    ("D.child-r1.vm.12.0123abcd", [Part("child", "vm", 12, "0123abcd", run="r1")]),
    ("D.xdist-r_1-gw0.h-2.3.deadbeef",
     [Part("xdist", "h-2", 3, "deadbeef", run="r_1", worker="gw0")]),
    ("D.copy-3of4.vm.9.00000000", [Part("copy", "vm", 9, "00000000", copy=(3, 4))]),
    ("D.saved.vm.1.ffffffff", [Part("saved", "vm", 1, "ffffffff")]),
    ("D.xdist-s-gw1.vm.5.0123abcd.child-t.vm.6.89abcdef",  # a worker's child: outermost first
     [Part("xdist", "vm", 5, "0123abcd", run="s", worker="gw1"),
      Part("child", "vm", 6, "89abcdef", run="t")]),
])
def test_parse_reads_every_part_of_a_name(name: str, parts: list[Part]) -> None:
    assert files.parse(name, "/d/D") == parts


@pytest.mark.parametrize("name", [
    "D", "D.", "D2.child-r.vm.1.0123abcd", "D-old", "D.one", "D.child-r.vm.1.0123abc",
    "D.child-r.vm.1.0123ABCD", "D.child-r.vm.x.0123abcd", "D.child-r.vm.1.0123abcdX",
    "D.child-r.vm.1.0123abcd.", "D.child-r.vm.1.0123abcd.extra",
    "D.copy-1of.vm.1.0123abcd", "D.child-r.my.host.1.0123abcd",  # a host with dots
    "D.0123456789ab.vm.42",  # pathprof 0.1.0's child
])
def test_parse_gives_none_for_a_name_not_of_the_scheme(name: str) -> None:
    assert files.parse(name, "D") is None


_WORDS = st.text(min_size=1, max_size=12)


def _as_word(text: str) -> str:
    allowed = set(string.ascii_letters + string.digits + "_")
    return "".join(ch if ch in allowed else "_" for ch in text)


@settings(max_examples=50, deadline=None)
@given(run=_WORDS, worker=_WORDS, copy=st.tuples(st.integers(0, 999), st.integers(1, 999)),
       kind=st.sampled_from(files.KINDS), base=st.sampled_from(["D", ".pathprof",
                                                               "dir/x.data"]))
def test_parse_reads_back_what_parallel_name_wrote(
        run: str, worker: str, copy: tuple[int, int], kind: str, base: str) -> None:
    name = files.parallel_name(base, kind, run=run, worker=worker, copy=copy)
    (part,) = files.parse(name, base) or [None]
    assert part is not None
    assert (part.kind, part.host, part.pid) == (kind, files.host(), PID)
    assert re.fullmatch(RANDOM, part.random)
    assert part.run == (_as_word(run) if kind in ("child", "xdist") else None)
    assert part.worker == (_as_word(worker) if kind == "xdist" else None)
    assert part.copy == (copy if kind == "copy" else None)


# -- combinable_files and files_of -------------------------------------------------------

def test_combinable_files_are_every_regular_file_named_after_the_data_file(
        tmp_path: Path) -> None:
    child = files.parallel_name("D", "child", run="r")
    _touch(tmp_path, "D", "D.a", "D.xdist.0123456789ab.gw0", child, f"{child}.child-s.h.1.0123abcd",
           "D.", "D2", "D2.a", "D-old", "Dx.a", "other",
           "D.a-journal", "D.a-wal", "D.a-shm", "D.b.tmp", "D.lock",
           "D.x.0123abcd.vm.1.0123abcd.claim", "D.child-r.vm.1.running",
           "D.child-r.vm.1.0123abcd.forking", "D.child-r.vm.1.saving",
           "D.child-r.vm.1.pending")
    (tmp_path / "D.dir").mkdir()
    (tmp_path / "D.dangling").symlink_to(tmp_path / "nowhere")
    (tmp_path / "D.link").symlink_to(tmp_path / "other")
    found = files.combinable_files(str(tmp_path / "D"))
    assert found == sorted(str(tmp_path / name) for name in [
        "D.a", "D.xdist.0123456789ab.gw0", child, f"{child}.child-s.h.1.0123abcd", "D.link"])


def test_found_paths_are_given_as_the_data_file_is(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "sub").mkdir()
    _touch(tmp_path / "sub", "D.b", "D.a")
    _touch(tmp_path, "D.here")
    monkeypatch.chdir(tmp_path)
    assert files.combinable_files(os.path.join("sub", "D")) == [
        os.path.join("sub", "D.a"), os.path.join("sub", "D.b")]
    assert files.combinable_files("D") == ["D.here"]


def test_nothing_is_found_beside_a_directory_that_cannot_be_read(tmp_path: Path) -> None:
    assert files.combinable_files(str(tmp_path / "missing" / "D")) == []
    assert files.files_of(str(tmp_path / "missing" / "D"), "child") == []
    assert files.marks(str(tmp_path / "missing" / "D")) == []


def test_files_of_a_kind_are_those_its_writers_wrote_directly_beside(
        tmp_path: Path) -> None:
    d = str(tmp_path / "D")
    names = ["D.child-r1.vm.1.0123abcd", "D.child-r2.vm.2.0123abcd",
             "D.xdist-r1-gw0.vm.3.0123abcd", "D.copy-1of2.vm.4.0123abcd",
             "D.saved.vm.5.0123abcd",
             "D.xdist-r1-gw0.vm.3.0123abcd.child-r1.vm.6.0123abcd",  # not directly
             "D.0123456789ab.vm.7",  # the old naming
             "D.child-r1.vm.8.0123abcd.tmp",  # being written
             "D2.child-r1.vm.9.0123abcd"]  # another data file's
    _touch(tmp_path, *names)
    beside = [str(tmp_path / name) for name in names]
    assert files.files_of(d, "child") == beside[0:2]
    assert files.files_of(d, "child", run="r1") == beside[0:1]
    assert files.files_of(d, "child", run="r-2") == []  # made "r_2"
    assert files.files_of(d, "xdist", run="r1") == beside[2:3]
    assert files.files_of(d, "copy") == beside[3:4]
    assert files.files_of(d, "saved") == beside[4:5]


def test_files_of_an_unknown_kind_is_a_value_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown kind of parallel data file 'thread'"):
        files.files_of(str(tmp_path / "D"), "thread")


# -- claims ------------------------------------------------------------------------------

def test_a_target_is_tagged_by_the_sha256_of_its_real_path(tmp_path: Path) -> None:
    real = tmp_path / "D"
    real.write_bytes(b"")
    (tmp_path / "link").symlink_to(real)
    expected = hashlib.sha256(os.fsencode(os.path.realpath(real))).hexdigest()[:8]
    assert files.target_tag(str(real)) == expected
    assert files.target_tag(str(tmp_path / "link")) == expected
    assert files.target_tag(str(tmp_path / "E")) != expected


def test_a_claim_names_the_file_its_target_host_and_process() -> None:
    name = files.claim_name("/x/D.a", "/x/D")
    tag = re.escape(files.target_tag("/x/D"))
    assert re.fullmatch(rf"/x/D\.a\.{tag}\.{re.escape(files.host())}\.{PID}\.{RANDOM}"
                        r"\.claim", name)
    assert files.claim_name("/x/D.a", "/x/D") != name  # a random part of its own


def test_claims_are_found_with_what_their_names_say(tmp_path: Path) -> None:
    first = files.claim_name(str(tmp_path / "D.b"), str(tmp_path / "D"))
    _touch(tmp_path, os.path.basename(first), "D.a.0123abcd.far-host.77.89abcdef.claim",
           "D.a.claim", "D.a.0123abcd.h.1.0123abcd.claimed", "D.a.nothex00.h.1.0123abcd.claim")
    (tmp_path / "D.c.0123abcd.h.1.0123abcd.claim").mkdir()  # not a regular file
    found = files.claims(str(tmp_path))
    assert found == [
        Claim(str(tmp_path / "D.a.0123abcd.far-host.77.89abcdef.claim"),
              str(tmp_path / "D.a"), "0123abcd", "far-host", 77),
        Claim(first, str(tmp_path / "D.b"), files.target_tag(str(tmp_path / "D")),
              files.host(), PID)]
    assert files.claims(str(tmp_path / "missing")) == []


def test_claims_of_the_current_directory_are_relative(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch
                                                      ) -> None:
    monkeypatch.chdir(tmp_path)
    _touch(tmp_path, "D.a.0123abcd.h.5.0123abcd.claim")
    assert files.claims("") == [Claim("D.a.0123abcd.h.5.0123abcd.claim", "D.a",
                                      "0123abcd", "h", 5)]


def test_whether_a_process_runs_is_asked_of_this_host_only() -> None:
    assert files.running("another-host", PID) is None
    assert files.running(files.host(), PID) is True
    assert files.running(files.host(), _dead_pid()) is False
    assert files.running(files.host(), 1) is True  # init runs (and may be another user's)


# -- marks -------------------------------------------------------------------------------

@pytest.mark.parametrize("state", ["running", "saving", "pending"])
def test_a_mark_is_named_by_its_run_host_pid_and_state(state: str) -> None:
    assert files.mark_name("/d/D", "r-1", state, pid=42) == (
        f"/d/D.child-r_1.{files.host()}.42.{state}")
    assert files.mark_name("D", "r", state) == f"D.child-r.{files.host()}.{PID}.{state}"


def test_a_forking_mark_draws_a_random_part_for_every_name() -> None:
    first = files.mark_name("D", "r", "forking", pid=3)
    assert re.fullmatch(rf"D\.child-r\.{re.escape(files.host())}\.3\.{RANDOM}\.forking",
                        first)
    assert files.mark_name("D", "r", "forking", pid=3) != first


def test_a_mark_of_an_unknown_state_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="unknown state of a mark 'done'"):
        files.mark_name("D", "r", "done")


def test_marks_are_found_directly_beside_the_data_file(tmp_path: Path) -> None:
    _touch(tmp_path, "D.child-r1.vm.5.running", "D.child-r1.vm.6.saving",
           "D.child-r2.vm.7.0123abcd.forking", "D.child-r2.vm.8.pending",
           "D.child-r1.vm.9.forking",  # forking needs its random part
           "D.child-r1.vm.9.0123abcd.running",  # and no other state has one
           "D.child-r1.vm.9.done", "D.child-r1.vm.x.running", "D2.child-r1.vm.5.running",
           "D.child-r1.vm.5.0123abcd")  # a child's data file, not a mark
    found = files.marks(str(tmp_path / "D"))
    assert found == [
        Mark(str(tmp_path / "D.child-r1.vm.5.running"), "r1", "vm", 5, "running"),
        Mark(str(tmp_path / "D.child-r1.vm.6.saving"), "r1", "vm", 6, "saving"),
        Mark(str(tmp_path / "D.child-r2.vm.7.0123abcd.forking"), "r2", "vm", 7, "forking"),
        Mark(str(tmp_path / "D.child-r2.vm.8.pending"), "r2", "vm", 8, "pending")]
    assert [m.pid for m in files.marks(str(tmp_path / "D"), run="r2")] == [7, 8]
    assert files.marks(str(tmp_path / "D"), run="r3") == []


def test_marks_of_a_run_given_as_any_text_are_found_by_its_word(tmp_path: Path) -> None:
    name = files.mark_name(str(tmp_path / "D"), "x.y", "running")
    _touch(tmp_path, os.path.basename(name))
    assert [m.run for m in files.marks(str(tmp_path / "D"), run="x.y")] == ["x_y"]


def test_a_mark_is_alive_while_its_process_runs(tmp_path: Path) -> None:
    here = files.host()
    assert files.mark_alive(Mark("m", "r", here, PID, "running"))
    assert not files.mark_alive(Mark("m", "r", here, _dead_pid(), "running"))
    # another host's cannot be asked: taken to run
    assert files.mark_alive(Mark("m", "r", "elsewhere", _dead_pid(), "running"))


@pytest.mark.parametrize("pid", [0, 2**31, 10**30])
def test_a_pid_no_process_can_have_does_not_run(pid: int) -> None:
    # (0 would signal the caller's process group: it "ran" before; past pid_t's range
    # os.kill raised OverflowError)
    assert files.running(files.host(), pid) is False
    assert files.pid_runs(pid) is False


def test_the_largest_pid_there_can_be_is_asked_about() -> None:
    # (os.kill takes it; Linux's pid_max is at most 2**22, so no process has it)
    assert files.pid_runs(2**31 - 1) is False


def test_a_mark_of_a_pid_no_process_can_have_is_not_alive(tmp_path: Path) -> None:
    _touch(tmp_path, f"D.child-r.{files.host()}.{2**31}.running")
    (mark,) = files.marks(str(tmp_path / "D"))
    assert mark.pid == 2**31
    assert files.mark_alive(mark) is False
