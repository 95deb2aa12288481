"""The names of the files written beside a data file, and the finder of them
(:mod:`pathprof.data.files`)."""

from __future__ import annotations

import os
import re
import socket
from pathlib import Path

import pytest

from pathprof.data import files
from pathprof.data.files import Part, combinable_files, files_of, parallel_name, parse

RUN = "0123456789ab"


def _touch(directory: Path, *names: str) -> None:
    for name in names:
        (directory / name).write_bytes(b"")


def test_each_writer_has_its_part_then_host_pid_and_random(monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    monkeypatch.setattr(socket, "gethostname", lambda: "build-7.ci.example.com")
    data = "/some/dir/.pathprof"
    shape = rf"\.build-7_ci_example_com\.{os.getpid()}\.[0-9a-f]{{8}}"
    names = {"child": parallel_name(data, "child", run=RUN),
             "xdist": parallel_name(data, "xdist", run=RUN, worker="gw3"),
             "copy": parallel_name(data, "copy", copy=(2, 4)),
             "saved": parallel_name(data, "saved")}
    assert re.fullmatch(re.escape(f"{data}.child-{RUN}") + shape, names["child"])
    assert re.fullmatch(re.escape(f"{data}.xdist-{RUN}-gw3") + shape, names["xdist"])
    assert re.fullmatch(re.escape(f"{data}.copy-2of4") + shape, names["copy"])
    assert re.fullmatch(re.escape(f"{data}.saved") + shape, names["saved"])
    # What the name says reads back.
    random = names["child"].rsplit(".", 1)[1]
    common = {"host": "build-7_ci_example_com", "pid": os.getpid()}
    assert parse(names["child"], data) == [Part("child", random=random, run=RUN, **common)]
    assert parse(names["xdist"], data) == [Part("xdist", random=random, run=RUN, worker="gw3",
                                                **common)]
    assert parse(names["copy"], data) == [Part("copy", random=random, copy=(2, 4), **common)]
    (saved,) = parse(names["saved"], data) or []
    assert (saved.kind, saved.host, saved.pid) == ("saved", common["host"], os.getpid())


def test_words_that_would_break_the_name_are_made_underscores() -> None:
    name = parallel_name("d", "xdist", run="a-b.c", worker="g w/0")
    assert name.startswith("d.xdist-a_b_c-g_w_0.")
    (part,) = parse(name, "d") or []
    assert (part.run, part.worker) == ("a_b_c", "g_w_0")


def test_a_writer_keeps_its_name_within_a_process_and_saved_never_does() -> None:
    assert parallel_name("d", "child", run=RUN) == parallel_name("d", "child", run=RUN)
    assert parallel_name("d", "copy", copy=(1, 3)) == parallel_name("d", "copy", copy=(1, 3))
    assert parallel_name("d", "child", run=RUN) != parallel_name("d", "child", run=RUN,
                                                                 fresh=True)
    saved = {parallel_name("d", "saved") for _ in range(50)}
    assert len(saved) == 50


def test_a_process_with_a_reused_pid_draws_a_new_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "getpid", lambda: 4242)
    monkeypatch.setattr(files, "_drawn", None)  # a new interpreter
    first = parallel_name("d", "child", run=RUN)
    monkeypatch.setattr(files, "_drawn", None)  # another, given the same pid
    second = parallel_name("d", "child", run=RUN)
    assert first.startswith("d.child-0123456789ab.")
    assert second.startswith("d.child-0123456789ab.")
    assert first.split(".")[3] == second.split(".")[3] == "4242"
    assert first != second


def test_names_of_two_hosts_differ_even_with_pid_and_random_alike(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(files, "_drawn", (os.getpid(), "00000000"))
    monkeypatch.setattr(socket, "gethostname", lambda: "node1.cluster")
    one = parallel_name("d", "child", run=RUN)
    monkeypatch.setattr(socket, "gethostname", lambda: "node2.cluster")
    two = parallel_name("d", "child", run=RUN)
    assert (one, two) == (f"d.child-{RUN}.node1_cluster.{os.getpid()}.00000000",
                          f"d.child-{RUN}.node2_cluster.{os.getpid()}.00000000")


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork")
def test_names_never_collide_across_forked_processes_and_kinds() -> None:
    """Eight forked children name a file of every kind: 40 names (with the parent's),
    all different; a forked child draws its own random part (its parent's was drawn
    first)."""
    def names() -> list[str]:
        return [parallel_name("d", "child", run=RUN),
                parallel_name("d", "xdist", run=RUN, worker="gw0"),
                parallel_name("d", "copy", copy=(0, 2)), parallel_name("d", "copy", copy=(1, 2)),
                parallel_name("d", "saved")]

    parent = names()
    seen = [parent]
    for _ in range(8):
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            os.close(read)
            os.write(write, "\n".join(names()).encode())
            os._exit(0)
        os.close(write)
        with os.fdopen(read) as f:
            seen.append(f.read().split("\n"))
        os.waitpid(pid, 0)
    every = [name for group in seen for name in group]
    assert len(every) == 45
    assert len(set(every)) == 45
    randoms = {name.rsplit(".", 1)[1] for group in seen for name in group[:4]}
    assert len(randoms) == 9  # one per process


def test_a_kind_without_what_it_needs_is_refused() -> None:
    with pytest.raises(ValueError, match=r"needs run$"):
        parallel_name("d", "child")
    with pytest.raises(ValueError, match=r"needs worker$"):
        parallel_name("d", "xdist", run=RUN)
    with pytest.raises(ValueError, match=r"needs copy$"):
        parallel_name("d", "copy")
    with pytest.raises(ValueError, match="unknown kind"):
        parallel_name("d", "worker")
    with pytest.raises(ValueError, match="run must not be empty"):
        parallel_name("d", "child", run="")


@pytest.mark.parametrize("name", [
    ".pathprof",                                    # the data file itself
    ".pathprof.child-x.host.1.0123abcd.tmp",        # trailing words
    ".pathprof.child-x.host.1.0123ABCD",            # random in capitals
    ".pathprof.child-x.host.1.0123abc",             # random too short
    ".pathprof.child-x.host.pid.0123abcd",          # no pid
    ".pathprof.child-x.host.with.dots.1.0123abcd",  # host with dots: not this scheme's
    ".pathprof.worker-x.host.1.0123abcd",           # no such writer
    ".pathprof.0123456789ab.host.example.com.42",   # a child's before the scheme
    ".pathprof2.child-x.host.1.0123abcd",           # another data file's
    "x.pathprof.child-x.host.1.0123abcd",
])
def test_names_not_of_the_scheme_parse_to_none(name: str) -> None:
    assert parse(name, ".pathprof") is None


def test_a_file_beside_a_file_beside_the_data_file_parses_to_both_parts() -> None:
    worker = parallel_name("/d/.pathprof", "xdist", run=RUN, worker="gw1")
    child = parallel_name(worker, "child", run="fedcba987654")
    parts = parse(child, "/d/.pathprof") or []
    assert [(p.kind, p.run, p.worker) for p in parts] == [("xdist", RUN, "gw1"),
                                                          ("child", "fedcba987654", None)]


#: Names pathprof 0.1.0 wrote beside ``.pathprof`` (before the scheme): combine finds them.
OLD_NAMES = [
    ".pathprof.0123456789ab.build-7.ci.example.com.4242",  # a child's: run.host.pid
    ".pathprof.xdist.0123456789ab.gw0",                    # an xdist worker's
    ".pathprof.saved-4242-deadbeef",                       # saved aside
]


def test_the_finder_takes_what_belongs_to_the_data_file_and_nothing_else(tmp_path: Path
                                                                        ) -> None:
    data = tmp_path / ".pathprof"
    worker = os.path.basename(parallel_name(str(data), "xdist", run=RUN, worker="gw0"))
    belongs = [
        os.path.basename(parallel_name(str(data), "child", run=RUN)),
        worker,
        f"{worker}.child-fedcba987654.h.7.0123abcd",  # a child the worker left
        os.path.basename(parallel_name(str(data), "saved")),
        ".pathprof.one",                              # named by the user, as .coverage.one
        *OLD_NAMES,
    ]
    others = [
        ".pathprof",                                  # the data file itself
        ".pathprof2", ".pathprof-other", ".pathprofx.saved.h.1.0123abcd",
        ".pathprof2.child-0123456789ab.h.1.0123abcd",  # another data file's child
        "x.pathprof.child-0123456789ab.h.1.0123abcd",
        f"{worker}-journal",                           # SQLite's journal of a file being written
        ".pathprof.one-wal", ".pathprof.one-shm",      # SQLite's write-ahead log and index
        ".pathprof.saved.h.1.0123abcd.tmp",            # being written
        ".pathprof.lock",                              # a lock file
        "app.py", ".pathprof-1234-host-0123abcd.tmp",  # a data file being built
    ]
    _touch(tmp_path, *belongs, *others)
    (tmp_path / ".pathprof.dir").mkdir()               # not a regular file
    (tmp_path / ".pathprof.gone").symlink_to(tmp_path / "nowhere")
    assert combinable_files(str(data)) == sorted(str(tmp_path / name) for name in belongs)


def test_the_finder_gives_paths_as_the_data_file_is_named(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    _touch(tmp_path, "prof.db", "prof.db.one", "prof.db.two")
    (tmp_path / "sub").mkdir()
    _touch(tmp_path / "sub", "prof.db.three")
    monkeypatch.chdir(tmp_path)
    assert combinable_files("prof.db") == ["prof.db.one", "prof.db.two"]
    assert combinable_files(os.path.join("sub", "prof.db")) == [os.path.join("sub",
                                                                             "prof.db.three")]
    assert combinable_files(os.path.join("missing", "prof.db")) == []


def test_a_data_file_named_with_glob_characters_finds_its_files_only(tmp_path: Path) -> None:
    data = str(tmp_path / "run[1]*.pathprof")
    mine = parallel_name(data, "child", run=RUN)
    _touch(tmp_path, os.path.basename(mine), "run1x.pathprof.one", "run[1]*.pathprofx")
    assert combinable_files(data) == [mine]
    assert files_of(data, "child", run=RUN) == [mine]


def test_a_run_finds_what_its_own_writers_wrote_directly_beside(tmp_path: Path) -> None:
    data = str(tmp_path / ".pathprof")
    other = "fedcba987654"
    child = parallel_name(data, "child", run=RUN)
    worker0 = parallel_name(data, "xdist", run=RUN, worker="gw0")
    worker1 = parallel_name(data, "xdist", run=RUN, worker="gw1", fresh=True)
    names = [child, worker0, worker1,
             parallel_name(data, "child", run=other),       # another run's child
             parallel_name(data, "xdist", run=other, worker="gw0"),  # another session's
             parallel_name(worker0, "child", run=RUN),      # a worker's child: its own
             parallel_name(data, "saved"),
             parallel_name(data + "2", "child", run=RUN),   # another data file's
             f"{data}.{RUN}.host.42",                       # the old name of a child
             f"{data}.xdist.{RUN}.gw2",                     # the old name of a worker
             child + ".tmp", worker0 + "-journal"]
    _touch(tmp_path, *(os.path.basename(name) for name in names))
    assert files_of(data, "child", run=RUN) == [child]
    assert files_of(data, "xdist", run=RUN) == sorted([worker0, worker1])
    assert files_of(data, "child") == sorted([child, names[3]])
    assert files_of(data, "copy") == []
    assert files_of(worker0, "child", run=RUN) == [names[5]]
    with pytest.raises(ValueError, match="unknown kind"):
        files_of(data, "children")


def test_copies_calls_files_are_found_beside_the_calls_file(tmp_path: Path) -> None:
    calls = str(tmp_path / "calls.json")
    mine = parallel_name(calls, "copy", copy=(1, 3))
    _touch(tmp_path, "calls.json", os.path.basename(mine), os.path.basename(mine) + ".tmp",
           "calls.jsonl.copy-1of3.h.1.0123abcd")
    assert files_of(calls, "copy") == [mine]
